// The NVIDIA wheel-variant provider's view of a GpuSubject (wheelnext/nvidia-variant-provider,
// docs/arch.md): what it reports is a function of two facts alone, the driver's CUDA version
// (its "UMD version", major.minor) and the newest GPU's compute capability, so the properties
// and the two override variables that reproduce them are computed here from those.

#include "arch/formats.hpp"
#include "core/text.hpp"

namespace cudaenv::arch {

namespace {

// The provider's range: drivers whose CUDA lies outside it get no NVIDIA properties at all.
constexpr int lowest_major = 11;
constexpr int highest_major = 15;
constexpr int highest_minor = 20;
// Below this compute capability the provider reports no sm_arch.
constexpr int lowest_sm_major = 5;

std::string property(const std::string& feature, const std::string& value) {
  return "nvidia :: " + feature + " :: " + value;
}

std::string umd(int major, int minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

// Versions the driver is at least: its own down to 11.0, each major also bare ("13").
void lower_bounds(const Version& cuda, std::vector<std::string>& out) {
  for (int major = cuda.major(); major >= lowest_major; --major) {
    const int top = major == cuda.major() ? cuda.minor() : highest_minor;
    for (int minor = top; minor >= 0; --minor)
      out.push_back(property("cuda_version_lower_bound", umd(major, minor)));
    out.push_back(property("cuda_version_lower_bound", std::to_string(major)));
  }
}

// Versions the driver is below, from 15.20 down to just above its own; its own major is not
// one (a driver of 13.0 is not below 13).
void upper_bounds(const Version& cuda, std::vector<std::string>& out) {
  for (int major = highest_major; major >= cuda.major(); --major) {
    const bool own = major == cuda.major();
    for (int minor = highest_minor; minor > (own ? cuda.minor() : -1); --minor)
      out.push_back(property("cuda_version_upper_bound", umd(major, minor)));
    if (!own) out.push_back(property("cuda_version_upper_bound", std::to_string(major)));
  }
}

// The newest GPU's SASS of its major down to minor 0, then its major's PTX (CMake's
// "90_real"/"90_virtual" spelling).
void sm_arch(const Version& newest, std::vector<std::string>& out) {
  if (newest.major() < lowest_sm_major) return;
  const auto major = std::to_string(newest.major());
  for (int minor = newest.minor(); minor >= 0; --minor)
    out.push_back(property("sm_arch", major + std::to_string(minor) + "_real"));
  out.push_back(property("sm_arch", major + "0_virtual"));
}

Result<Version> provider_cuda(const GpuSubject& subject) {
  if (!subject.driver_cuda)
    return make_error(ErrorKind::not_found,
                      (subject.driver.empty() ? "no NVIDIA driver"
                                              : "no known CUDA version for driver " +
                                                    text::printable(subject.driver)) +
                          std::string(": the NVIDIA variant provider reports nothing without one"),
                      subject.declared ? "fix the target in " + subject.file
                                       : "name a declared target: cudaenv arch --target NAME");
  const auto& cuda = *subject.driver_cuda;
  if (cuda.major() < lowest_major || cuda.major() > highest_major || cuda.minor() > highest_minor)
    return make_error(ErrorKind::not_found,
                      "the driver's CUDA " + cuda.str() +
                          " lies outside the range the NVIDIA variant provider accepts (11.0 to "
                          "15.20): it reports no NVIDIA properties",
                      "variant wheels fall back to their default here");
  return cuda;
}

}  // namespace

Result<std::vector<std::string>> variant_properties(const GpuSubject& subject) {
  auto cuda = provider_cuda(subject);
  if (!cuda) return cuda.error();
  std::vector<std::string> out;
  lower_bounds(*cuda, out);
  upper_bounds(*cuda, out);
  if (!subject.archs.empty()) sm_arch(subject.archs.back(), out);
  return out;
}

Result<Variables> variant_environment(const GpuSubject& subject) {
  auto cuda = provider_cuda(subject);
  if (!cuda) return cuda.error();
  Variables out = {{"NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION", cuda->str()}};
  if (!subject.archs.empty())
    out.emplace_back("NV_VARIANT_PROVIDER_FORCE_SM_ARCH", subject.archs.back().str());
  return out;
}

}  // namespace cudaenv::arch
