#include "probe/wsl.hpp"

#include <algorithm>
#include <cctype>

#include "core/text.hpp"
#include "probe/library_loader.hpp"

namespace cudaenv::probe {

namespace {

std::string lowered(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// A kernel release is under 65 bytes and /proc/version's line about 200: a longer one (a sysroot's
// file, say) is cut, so the evidence stays one readable line.
std::string bounded(std::string_view line) {
  constexpr size_t longest = 256;
  return std::string(line.substr(0, longest));
}

// The Linux driver's libcuda.so.1 in the ordinary library directories: inside WSL it can only
// come from a Linux driver package, and the dynamic linker may pick it over the Windows one.
std::vector<std::string> linux_driver_libraries(const Sysroot& sysroot) {
  std::vector<std::string> found;
  for (const auto& directory : driver_library_directories()) {
    if (directory == wsl_driver_directory) continue;
    const auto library = directory + "/libcuda.so.1";
    if (!sysroot.exists(library)) continue;
    const auto real = sysroot.canonical(library).value_or(library);
    if (std::find(found.begin(), found.end(), real) == found.end()) found.push_back(real);
  }
  return found;
}

}  // namespace

// Microsoft builds every WSL2 kernel with the local version "-microsoft-standard-WSL2"
// ("6.6.87.2-microsoft-standard-WSL2"); WSL1's reads "4.4.0-19041-Microsoft" and has no GPU.
bool is_wsl2_kernel(std::string_view release) {
  return text::contains(lowered(release), "microsoft-standard-wsl2");
}

WslFacts probe_wsl(const Sysroot& sysroot) {
  WslFacts facts;
  const auto release =
      bounded(text::trim(sysroot.read_file("/proc/sys/kernel/osrelease").value_or("")));
  const auto version = text::lines(sysroot.read_file("/proc/version").value_or(""));
  const auto first_line = version.empty() ? std::string() : bounded(text::trim(version.front()));
  facts.driver_store = sysroot.is_directory(wsl_driver_directory);
  if (is_wsl2_kernel(release)) {
    facts.wsl2 = true;
    facts.evidence = "/proc/sys/kernel/osrelease: " + release;
  } else if (is_wsl2_kernel(first_line) ||
             (facts.driver_store && text::contains(lowered(first_line), "microsoft"))) {
    // A custom WSL2 kernel (.wslconfig) may carry another name; /usr/lib/wsl still says WSL.
    facts.wsl2 = true;
    facts.evidence = "/proc/version: " + first_line;
  }
  if (!facts.wsl2) return facts;
  facts.dxg_device = sysroot.exists("/dev/dxg");
  facts.linux_driver_libraries = linux_driver_libraries(sysroot);
  return facts;
}

}  // namespace cudaenv::probe
