#pragma once
// NVIDIA's CUDA wheels on a PyPI-compatible index: which file of a project is the wheel for a
// version and platform, which redist component each wheel project is, and the component pins
// of NVIDIA's `cuda-toolkit` metapackage (its METADATA's Requires-Dist lines), which map a CUDA
// release to the exact wheel versions of its components. The wheel versions equal the redist
// component versions (cuda-toolkit 13.0.2 pins nvidia-cuda-nvcc 13.0.88 and nvidia-cuda-runtime
// 13.0.96, as redistrib_13.0.2.json lists cuda_nvcc 13.0.88 and cuda_cudart 13.0.96).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/version.hpp"
#include "fetch/simple_index.hpp"

namespace cudaenv::install {

struct WheelName {
  std::string project;                    // normalized: "nvidia-cuda-nvcc"
  std::string version;                    // "13.0.88"
  std::vector<std::string> platforms;     // "manylinux2014_x86_64", "manylinux_2_17_x86_64"
  std::vector<std::string> pythons = {};  // "cp312", "py3"
  std::vector<std::string> abis = {};     // "cp312", "abi3", "none"
};

// PEP 427 "<name>-<version>[-<build>]-<python>-<abi>-<platform>.whl"; nullopt for anything else.
std::optional<WheelName> parse_wheel_name(std::string_view filename);

// Whether a wheel's platform tags install on `platform` ("linux-x86_64": a manylinux x86_64 tag;
// "linux-sbsa": manylinux aarch64); a pure-Python ("any") wheel installs everywhere.
bool wheel_fits(const WheelName& wheel, const std::string& platform);

// The wheel of `project` at `version` (or "13.0.88" matching "13.0.88.x") for `platform`, not
// yanked when another fits; not_found naming what the index has.
Result<fetch::IndexFile> pick_wheel(const std::vector<fetch::IndexFile>& files,
                                    const std::string& project, const std::string& version,
                                    const std::string& platform, const std::string& index);

// The versions of `project` the index offers as wheels for `platform`, newest first.
std::vector<Version> wheel_versions(const std::vector<fetch::IndexFile>& files,
                                    const std::string& project, const std::string& platform);

// The redist component a wheel project carries ("nvidia-cuda-nvcc-cu12" -> "cuda_nvcc"); the
// project name itself for one the table does not know.
std::string component_of_wheel(const std::string& project);

// The wheel project NVIDIA publishes a redist component as, for a CUDA major ("cuda_nvcc", 12 ->
// "nvidia-cuda-nvcc-cu12"; 13 and later carry no suffix); empty for a component without wheels.
std::string wheel_of_component(const std::string& component, int cuda_major);

struct WheelPin {
  std::string project;  // "nvidia-cuda-nvcc"
  std::string version;  // "13.0.88": the exact pin, or a range's lower bound (the release's own)
  // A range instead of an exact pin ("<14,>=13.5.37", as cuda-toolkit 13.5.0 pins nvjitlink);
  // empty for an exact pin.
  std::string range;
};

// The pins of the metapackage's "all" extra whose PEP 508 markers hold on `platform`, from its
// METADATA text; integrity error naming `name` for a requirement or marker it cannot read.
Result<std::vector<WheelPin>> toolkit_pins(std::string_view metadata, const std::string& platform,
                                           const std::string& name);

// The METADATA of a wheel held in memory; integrity error when it is not a wheel that has one.
Result<std::string> wheel_metadata(std::string_view wheel, const std::string& name);

// Redist toolkit components that are not among `pins` (debuggers, profilers, documentation…):
// what a "full" install from an index cannot bring, to be named, never skipped silently.
std::vector<std::string> components_without_wheels(const std::vector<WheelPin>& pins);

}  // namespace cudaenv::install
