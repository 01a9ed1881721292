#include "arch/subject.hpp"

#include <algorithm>
#include <cctype>

#include "core/text.hpp"
#include "core/untrusted.hpp"

namespace cudaenv::arch {

namespace {

// Compute capabilities have a one-digit minor (sm_86 is 8.6): "8.10" would make sm_810, a name
// no toolkit knows, so it is refused before any format is written from it.
Status check_arch(const Version& arch, const std::string& where, ErrorKind kind) {
  if (arch.size() != 2 || arch.minor() > 9)
    return make_error(kind,
                      where + ": \"" + text::printable(arch.str()) +
                          "\" is not a compute capability (a major and a one-digit minor)",
                      kind == ErrorKind::usage
                          ? "write it as NVIDIA lists it, such as \"8.0\""
                          : "the driver library reported it; check the driver");
  return untrusted::check(untrusted::Field::gpu_arch, "sm_" + project::arch_digits(arch), where,
                          kind);
}

// CEP 46's limit on the build string (CEP 26's on any build string).
constexpr std::size_t model_limit = 64;

std::vector<Version> ascending(std::vector<Version> archs) {
  std::sort(archs.begin(), archs.end());
  archs.erase(std::unique(archs.begin(), archs.end()), archs.end());
  return archs;
}

}  // namespace

std::string cep46_model(std::string_view name) {
  std::string kept;
  for (const char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)) != 0 && static_cast<unsigned char>(c) < 0x80)
      kept += c;
  }
  // CEP 46 drops the vendor's name, in any case, after the other characters went.
  constexpr std::string_view vendor = "NVIDIA";
  std::string out;
  for (std::size_t i = 0; i < kept.size();) {
    std::string next = kept.substr(i, vendor.size());
    for (auto& c : next) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (next == vendor) {
      i += vendor.size();
      continue;
    }
    out += kept[i++];
  }
  return out.substr(0, model_limit);
}

std::optional<Version> cuda_for_driver(const manifest::Database& db, const Version& driver) {
  const manifest::DriverBranch* newest_below = nullptr;
  for (const auto& branch : db.driver_branches) {
    if (branch.branch > driver.major()) continue;
    if (newest_below == nullptr || branch.branch > newest_below->branch) newest_below = &branch;
  }
  if (newest_below == nullptr) return std::nullopt;
  return newest_below->max_cuda.major_minor();
}

Result<GpuSubject> machine_subject(const probe::DriverReading& reading,
                                   const manifest::Database& db) {
  GpuSubject subject;
  subject.name = "this machine";
  if (reading.driver) {
    subject.driver = reading.driver->version;
    if (reading.driver->cuda_version) {
      subject.driver_cuda = reading.driver->cuda_version->major_minor();
      subject.cuda_source = CudaSource::driver;
    } else if (const auto version = Version::parse(subject.driver)) {
      subject.driver_cuda = cuda_for_driver(db, *version);
      if (subject.driver_cuda) subject.cuda_source = CudaSource::database;
    }
  }
  for (const auto& gpu : reading.gpus) {
    const auto where = "GPU " + std::to_string(gpu.index) + " (" +
                       text::printable(gpu.name, text::printable_limit) + ")";
    if (auto valid = check_arch(gpu.compute_capability, where, ErrorKind::integrity); !valid)
      return valid.error();
    // CEP 46: the model of the (first) GPU with the lowest compute capability.
    if (subject.archs.empty() ||
        gpu.compute_capability < *std::min_element(subject.archs.begin(), subject.archs.end()))
      subject.lowest_model = cep46_model(gpu.name);
    subject.archs.push_back(gpu.compute_capability);
  }
  subject.archs = ascending(std::move(subject.archs));
  return subject;
}

Result<GpuSubject> target_subject(const project::DeclaredTarget& target, const std::string& file,
                                  const manifest::Database& db) {
  GpuSubject subject;
  subject.name = target.name;
  subject.declared = true;
  subject.file = file;
  subject.driver = target.driver.str();
  subject.driver_cuda = cuda_for_driver(db, target.driver);
  if (subject.driver_cuda) subject.cuda_source = CudaSource::database;
  const auto where =
      text::printable(file, text::message_limit) + ": targets." + target.name + ".arch";
  for (const auto& arch : target.archs) {
    if (auto valid = check_arch(arch, where, ErrorKind::usage); !valid) return valid.error();
  }
  subject.archs = ascending(target.archs);
  return subject;
}

std::string sm_names(const std::vector<Version>& archs) {
  std::vector<std::string> names;
  for (const auto& arch : archs) names.push_back("sm_" + project::arch_digits(arch));
  return text::join(names, " ");
}

}  // namespace cudaenv::arch
