#pragma once
// PEP 508 environment markers, the part after ";" in a Requires-Dist line
// ("sys_platform == 'linux' and platform_machine == 'aarch64' and extra == 'all'"), evaluated
// for a cudaenv platform. NVIDIA's cuda-toolkit metapackage says through them which component
// wheels a platform gets (nvidia-cudla is for aarch64 only since 13.2.1), so a pin counts only
// where its marker holds, as pip and uv decide.
//
// A prefix serves every Python, so comparisons of the Python variables (python_version,
// implementation_name, …) hold; the platform variables are those of Linux on the platform.

#include <optional>
#include <string>
#include <string_view>

namespace cudaenv::install {

struct MarkerEnvironment {
  std::string sys_platform = "linux";
  std::string platform_system = "Linux";
  std::string os_name = "posix";
  std::string platform_machine;  // "x86_64", "aarch64"
  std::string extra;             // the extra being installed ("all"); empty for none
};

// The environment of a cudaenv platform ("linux-x86_64", "linux-sbsa") installing `extra`.
MarkerEnvironment marker_environment(const std::string& platform, std::string extra);

// Whether `marker` holds in `environment`; nullopt when it is not a marker this grammar reads
// (then the requirement must be refused, never guessed). An empty marker holds.
std::optional<bool> marker_holds(std::string_view marker, const MarkerEnvironment& environment);

}  // namespace cudaenv::install
