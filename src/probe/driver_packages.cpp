#include "probe/driver_packages.hpp"

#include <regex>

#include "core/text.hpp"
#include "probe/toolkits.hpp"

namespace cudaenv::probe {

bool is_driver_package(const std::string& name) {
  static const std::regex driver(
      R"((nvidia-driver|libnvidia-compute|nvidia-dkms|cuda-drivers)(-[0-9]+(-open|-server|-server-open)?)?)");
  return std::regex_match(name, driver);
}

std::string upstream_version(const std::string& debian_version) {
  auto version = debian_version;
  if (const auto colon = version.find(':'); colon != std::string::npos) version.erase(0, colon + 1);
  return version.substr(0, version.find('-'));
}

DriverPackageFacts probe_driver_packages(const Sysroot& sysroot) {
  DriverPackageFacts facts;
  const auto status = sysroot.read_file("/var/lib/dpkg/status");
  facts.dpkg_readable = status.has_value();
  for (const auto& [name, version] : parse_dpkg_status(status.value_or(""))) {
    if (is_driver_package(name)) facts.packages.push_back({name, version});
  }
  if (sysroot.exists("/usr/bin/nvidia-uninstall"))
    facts.runfile_leftovers.emplace_back("/usr/bin/nvidia-uninstall");
  for (const auto& name : sysroot.list_directory("/usr/local")) {
    const auto uninstaller = "/usr/local/" + name + "/bin/cuda-uninstaller";
    if (text::starts_with(name, "cuda") && !sysroot.is_symlink("/usr/local/" + name) &&
        sysroot.exists(uninstaller)) {
      facts.runfile_leftovers.push_back(uninstaller);
    }
  }
  return facts;
}

}  // namespace cudaenv::probe
