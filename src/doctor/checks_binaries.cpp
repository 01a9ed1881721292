// Checks on what the active Python's binaries carry and load (read by scan/): a framework
// package without this GPU's code, two cuDNN versions within reach, Triton's ptxas too old.

#include <filesystem>
#include <set>

#include "core/text.hpp"
#include "doctor/checks.hpp"
#include "scan/fixes.hpp"
#include "scan/verdict.hpp"

namespace cudaenv::doctor {

namespace {

constexpr size_t max_listed = 5;

// nullopt when the binaries could not be read: the finding is then concluded as skipped.
bool binaries_read(const CheckInput& in, Finding& f) {
  if (in.facts.binaries.scanned) {
    for (const auto& warning : in.facts.binaries.scan_warnings)
      f.evidence.push_back("partial scan: " + text::printable(warning, text::message_limit));
    return true;
  }
  conclude(f, CheckStatus::skip,
           "the active Python's packages were not read: " + in.facts.binaries.not_read);
  return false;
}

int arch_of(const probe::GpuFacts& gpu) {
  return gpu.compute_capability.major() * 10 + gpu.compute_capability.minor();
}

std::optional<scan::PtxIsa> driver_ptx_limit(const CheckInput& in) {
  const auto& driver = in.facts.machine.driver;
  if (!driver || !driver->cuda_version) return std::nullopt;
  return scan::ptx_isa_for_driver_cuda(*driver->cuda_version);
}

// The database and this machine's driver: the wheel a fix names must run here.
scan::FixFacts fix_facts(const CheckInput& in) {
  scan::FixFacts facts;
  facts.db = &in.db;
  if (const auto& driver = in.facts.machine.driver)
    facts.driver = {Version::parse(driver->version), driver->cuda_version};
  return facts;
}

}  // namespace

Finding check_framework_binaries(const CheckInput& in) {
  auto f = finding("framework-binaries", "Framework packages carry code for these GPUs");
  if (!binaries_read(in, f)) return f;
  const auto& gpus = in.facts.machine.gpus;
  if (gpus.empty()) {
    conclude(f, CheckStatus::skip, "no GPU visible to judge the packages' code for");
    return f;
  }
  std::vector<std::string> missing;
  for (const auto& binary : in.facts.binaries.framework_binaries) {
    if (binary.codes.empty()) continue;
    for (const auto& gpu : gpus) {  // a binary counts once, for the first GPU it lacks
      const auto verdict = scan::verdict_for(binary.codes, arch_of(gpu), driver_ptx_limit(in));
      if (verdict.coverage != scan::Coverage::none) continue;
      if (missing.size() < max_listed) f.evidence.push_back(binary.path + ": " + verdict.reason);
      if (f.fix.empty())
        f.fix.push_back("# " + scan::fix_for(binary.path, arch_of(gpu), verdict, fix_facts(in)));
      missing.push_back(binary.path);
      break;
    }
  }
  f.evidence.push_back(std::to_string(in.facts.binaries.framework_binaries.size()) +
                       " CUDA binaries in framework packages read");
  if (missing.empty()) {
    conclude(f, CheckStatus::ok, "every framework binary has SASS or PTX each GPU can run");
  } else {
    conclude(
        f, CheckStatus::fail,
        std::to_string(missing.size()) + " framework binaries have no code a GPU here can run");
    f.fix.emplace_back("cudaenv scan   # every binary, its code and the fix");
  }
  return f;
}

Finding check_cudnn_copies(const CheckInput& in) {
  auto f = finding("cudnn-copies", "One cuDNN version within reach of the active Python");
  if (!binaries_read(in, f)) return f;
  std::set<std::string> versions;
  for (const auto& copy : in.facts.binaries.cudnn_copies) {
    f.evidence.push_back(copy.path + ": " +
                         (copy.version.empty() ? "version unknown" : copy.version) + " (" +
                         copy.origin + ")");
    if (!copy.version.empty()) versions.insert(copy.version);
  }
  if (in.facts.binaries.cudnn_copies.empty()) {
    conclude(f, CheckStatus::skip, "no libcudnn.so.9 within reach");
  } else if (versions.size() <= 1) {
    conclude(f, CheckStatus::ok,
             "libcudnn.so.9 " +
                 (versions.empty() ? std::string("(version unknown)") : *versions.begin()));
  } else {
    conclude(f, CheckStatus::warn,
             "libcudnn.so.9 in " + std::to_string(versions.size()) + " versions (" +
                 text::join({versions.begin(), versions.end()}, ", ") +
                 "): which one loads depends on the environment");
    f.fix = {
        "cudaenv why libcudnn.so.9 --for <the library that needs it>   # which copy loads, and why",
        "# then scope LD_LIBRARY_PATH, or pip uninstall the stray nvidia-cudnn wheel"};
  }
  return f;
}

Finding check_triton_ptxas(const CheckInput& in) {
  auto f = finding("triton-ptxas", "Triton's ptxas knows these GPUs");
  if (!binaries_read(in, f)) return f;
  const auto& triton = in.facts.binaries.triton;
  if (!triton) {
    conclude(f, CheckStatus::skip, "triton is not installed");
    return f;
  }
  f.evidence.push_back(
      triton->path + " (" + triton->chosen_by +
      (triton->runs.empty() ? std::string() : ", a script running " + triton->runs) + ", release " +
      (triton->release ? triton->release->str() : std::string("unknown")) + ")");
  if (!triton->release) {
    conclude(f, CheckStatus::warn, "the release of Triton's ptxas could not be read");
    f.fix = {
        "cudaenv scan   # names the ptxas Triton uses; point TRITON_PTXAS_PATH at a "
        "toolkit's bin/ptxas"};
    return f;
  }
  for (const auto& gpu : in.facts.machine.gpus) {
    if (const auto problem = scan::ptxas_arch_problem(in.db, *triton->release, arch_of(gpu))) {
      conclude(f, CheckStatus::fail, *problem);
      f.fix = {"cudaenv scan   # names a ptxas that knows the GPU, for TRITON_PTXAS_PATH"};
      return f;
    }
  }
  conclude(f, CheckStatus::ok, "ptxas " + triton->release->str() + " compiles for every GPU here");
  return f;
}

}  // namespace cudaenv::doctor
