#include "install/wheels.hpp"

#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>

#include "core/text.hpp"
#include "install/markers.hpp"

namespace cudaenv::install {

namespace {

// METADATA of NVIDIA's metapackage is a few KiB; more is not a METADATA file.
constexpr size_t max_metadata_bytes = size_t{1} << 20;

// NVIDIA's wheel projects and the redist components they carry; the cu11/cu12 projects are the
// same names with a "-cu11"/"-cu12" suffix.
const std::map<std::string, std::string, std::less<>>& wheel_components() {
  static const std::map<std::string, std::string, std::less<>> table = {
      {"nvidia-cuda-nvcc", "cuda_nvcc"},
      {"nvidia-cuda-runtime", "cuda_cudart"},
      {"nvidia-cuda-crt", "cuda_crt"},
      {"nvidia-nvvm", "libnvvm"},
      {"nvidia-cuda-cccl", "cuda_cccl"},
      {"nvidia-cuda-culibos", "cuda_culibos"},
      {"nvidia-cuda-cupti", "cuda_cupti"},
      {"nvidia-cuda-cuxxfilt", "cuda_cuxxfilt"},
      {"nvidia-cuda-nvrtc", "cuda_nvrtc"},
      {"nvidia-cuda-opencl", "cuda_opencl"},
      {"nvidia-cuda-profiler-api", "cuda_profiler_api"},
      {"nvidia-cuda-sanitizer-api", "cuda_sanitizer_api"},
      {"nvidia-cuda-cuobjdump", "cuda_cuobjdump"},
      {"nvidia-cuda-nvdisasm", "cuda_nvdisasm"},
      {"nvidia-cublas", "libcublas"},
      {"nvidia-cudla", "libcudla"},
      {"nvidia-cufft", "libcufft"},
      {"nvidia-cufile", "libcufile"},
      {"nvidia-curand", "libcurand"},
      {"nvidia-cusolver", "libcusolver"},
      {"nvidia-cusparse", "libcusparse"},
      {"nvidia-npp", "libnpp"},
      {"nvidia-nvfatbin", "libnvfatbin"},
      {"nvidia-nvjitlink", "libnvjitlink"},
      {"nvidia-nvjpeg", "libnvjpeg"},
      {"nvidia-nvml-dev", "cuda_nvml_dev"},
      {"nvidia-nvptxcompiler", "libnvptxcompiler"},
      {"nvidia-nvtx", "cuda_nvtx"},
  };
  return table;
}

// Toolkit components of NVIDIA's redist manifests (redistrib_13.0.2.json) that its cuda-toolkit
// metapackage does not pin: tools shipped only in the redist archives and installers.
const std::vector<std::string> redist_only_components = {
    "cuda_cuobjdump", "cuda_nvdisasm",  "cuda_nvprune",       "cuda_gdb",       "cuda_nsight",
    "nsight_compute", "nsight_systems", "cuda_documentation", "cuda_ctadvisor", "cuda_sandbox_dev"};

std::string without_cuda_suffix(std::string project) {
  for (const char* suffix : {"-cu11", "-cu12", "-cu13"}) {
    const std::string_view s(suffix);
    if (project.size() > s.size() && project.compare(project.size() - s.size(), s.size(), s) == 0)
      project.erase(project.size() - s.size());
  }
  return project;
}

bool version_fits(const std::string& have, const std::string& want) {
  return have == want || text::starts_with(have, want + ".");
}

// "nvidia-cublas==13.1.0.3.*" -> {nvidia-cublas, 13.1.0.3}; "nvidia-nvjitlink<14,>=13.5.37" ->
// {nvidia-nvjitlink, 13.5.37, "<14,>=13.5.37"}; nullopt for other requirement forms.
std::optional<WheelPin> pin_of(std::string_view requirement) {
  const auto start = requirement.find_first_of("=<>!~");
  if (start == std::string_view::npos) return std::nullopt;
  auto name = std::string(text::trim(requirement.substr(0, start)));
  auto constraint = std::string(text::trim(requirement.substr(start)));
  if (name.empty() || name.find_first_of(" [(") != std::string::npos) return std::nullopt;
  if (text::starts_with(constraint, "==") && constraint.find(',') == std::string::npos) {
    auto version = constraint.substr(2);
    if (text::starts_with(version, "=")) return std::nullopt;  // "===": arbitrary equality
    if (version.size() > 2 && version.compare(version.size() - 2, 2, ".*") == 0)
      version.erase(version.size() - 2);
    if (!Version::parse(version)) return std::nullopt;
    return WheelPin{fetch::normalize_project_name(name), version, ""};
  }
  if (constraint.find_first_of("~*") != std::string::npos || !VersionSpec::parse(constraint))
    return std::nullopt;
  std::string lower;
  for (const auto& clause : text::split(constraint, ',')) {
    const auto trimmed = text::trim(clause);
    if (text::starts_with(trimmed, ">=")) lower = std::string(text::trim(trimmed.substr(2)));
  }
  return WheelPin{fetch::normalize_project_name(name), lower, constraint};
}

}  // namespace

std::optional<WheelName> parse_wheel_name(std::string_view filename) {
  if (filename.size() < 5 || filename.substr(filename.size() - 4) != ".whl") return std::nullopt;
  const auto parts = text::split(filename.substr(0, filename.size() - 4), '-');
  if (parts.size() != 5 && parts.size() != 6) return std::nullopt;
  for (const auto& part : parts)
    if (part.empty()) return std::nullopt;
  const auto tags = parts.size() - 3;  // python, abi, platform: the last three parts
  return WheelName{fetch::normalize_project_name(parts[0]), parts[1],
                   text::split(parts.back(), '.'), text::split(parts[tags], '.'),
                   text::split(parts[tags + 1], '.')};
}

bool wheel_fits(const WheelName& wheel, const std::string& platform) {
  const std::string arch = platform == "linux-x86_64" ? "_x86_64" : "_aarch64";
  return std::any_of(wheel.platforms.begin(), wheel.platforms.end(), [&](const std::string& tag) {
    if (tag == "any") return true;
    return text::starts_with(tag, "manylinux") && tag.size() > arch.size() &&
           tag.compare(tag.size() - arch.size(), arch.size(), arch) == 0;
  });
}

Result<fetch::IndexFile> pick_wheel(const std::vector<fetch::IndexFile>& files,
                                    const std::string& project, const std::string& version,
                                    const std::string& platform, const std::string& index) {
  const auto wanted = fetch::normalize_project_name(project);
  const fetch::IndexFile* best = nullptr;
  for (const auto& file : files) {
    const auto wheel = parse_wheel_name(file.filename);
    if (!wheel || wheel->project != wanted || !version_fits(wheel->version, version) ||
        !wheel_fits(*wheel, platform))
      continue;
    if (best == nullptr || (best->yanked && !file.yanked)) best = &file;
  }
  if (best != nullptr) return *best;
  std::vector<std::string> offered;
  for (const auto& v : wheel_versions(files, project, platform)) {
    if (offered.size() < 6) offered.push_back(v.str());
  }
  return make_error(ErrorKind::not_found,
                    "no " + platform + " wheel of " + project + " " + version + " on " + index,
                    offered.empty() ? "the index has no " + platform + " wheel of it at all"
                                    : "versions there: " + text::join(offered, ", "));
}

std::vector<Version> wheel_versions(const std::vector<fetch::IndexFile>& files,
                                    const std::string& project, const std::string& platform) {
  const auto wanted = fetch::normalize_project_name(project);
  std::vector<Version> versions;
  for (const auto& file : files) {
    const auto wheel = parse_wheel_name(file.filename);
    if (!wheel || wheel->project != wanted || !wheel_fits(*wheel, platform) || file.yanked)
      continue;
    if (auto version = Version::parse(wheel->version)) versions.push_back(*version);
  }
  std::sort(versions.begin(), versions.end(), [](const auto& a, const auto& b) { return a > b; });
  versions.erase(std::unique(versions.begin(), versions.end()), versions.end());
  return versions;
}

std::string component_of_wheel(const std::string& project) {
  auto base = without_cuda_suffix(fetch::normalize_project_name(project));
  const auto& table = wheel_components();
  if (const auto it = table.find(base); it != table.end()) return it->second;
  return base;
}

std::string wheel_of_component(const std::string& component, int cuda_major) {
  for (const auto& [project, name] : wheel_components()) {
    if (name != component) continue;
    return cuda_major >= 13 ? project : project + "-cu" + std::to_string(cuda_major);
  }
  return {};
}

Result<std::vector<WheelPin>> toolkit_pins(std::string_view metadata, const std::string& platform,
                                           const std::string& name) {
  const auto environment = marker_environment(platform, "all");
  std::vector<WheelPin> pins;
  std::set<std::string> seen;
  for (const auto& line : text::split(metadata, '\n')) {
    if (!text::starts_with(line, "Requires-Dist:")) continue;
    const auto value = text::trim(std::string_view(line).substr(14));
    const auto semicolon = value.find(';');
    const auto marker =
        semicolon == std::string_view::npos ? std::string_view() : value.substr(semicolon + 1);
    const auto holds = marker_holds(marker, environment);
    const auto pin = pin_of(value.substr(0, semicolon));
    if (!holds || (*holds && !pin)) {
      return make_error(ErrorKind::integrity,
                        name + ": cannot read the requirement \"" + text::printable(value) + "\"",
                        "the index serves another cuda-toolkit than NVIDIA's: check --index-url");
    }
    if (*holds && seen.insert(pin->project).second) pins.push_back(*pin);
  }
  return pins;
}

Result<std::string> wheel_metadata(std::string_view wheel, const std::string& name) {
  using ArchivePtr = std::unique_ptr<struct archive, int (*)(struct archive*)>;
  ArchivePtr reader(archive_read_new(), archive_read_free);
  archive_read_support_format_zip(reader.get());
  const auto bad = [&](const std::string& why) {
    return make_error(ErrorKind::integrity, name + ": " + why,
                      "the index serves something else under this name: check --index-url");
  };
  if (archive_read_open_memory(reader.get(), wheel.data(), wheel.size()) != ARCHIVE_OK)
    return bad("not a wheel (zip) archive");
  struct archive_entry* entry = nullptr;
  while (archive_read_next_header(reader.get(), &entry) == ARCHIVE_OK) {
    const auto parts = text::split(archive_entry_pathname(entry), '/');
    if (parts.size() != 2 || parts[1] != "METADATA" ||
        parts[0].find(".dist-info") == std::string::npos)
      continue;
    std::string text;
    char buffer[16384];
    la_ssize_t got = 0;
    while ((got = archive_read_data(reader.get(), buffer, sizeof buffer)) > 0) {
      text.append(buffer, static_cast<size_t>(got));
      if (text.size() > max_metadata_bytes) return bad("METADATA larger than 1 MiB");
    }
    if (got < 0) return bad("unreadable METADATA");
    return text;
  }
  return bad("no .dist-info/METADATA in the wheel");
}

std::vector<std::string> components_without_wheels(const std::vector<WheelPin>& pins) {
  std::vector<std::string> missing;
  for (const auto& component : redist_only_components) {
    const bool pinned = std::any_of(pins.begin(), pins.end(), [&](const WheelPin& pin) {
      return component_of_wheel(pin.project) == component;
    });
    if (!pinned) missing.push_back(component);
  }
  return missing;
}

}  // namespace cudaenv::install
