#include "probe/linker.hpp"

#include <regex>
#include <set>

#include "core/text.hpp"

namespace cudaenv::probe {

namespace {

const std::vector<std::string> default_directories = {"/lib/x86_64-linux-gnu",
                                                      "/usr/lib/x86_64-linux-gnu",
                                                      "/lib/aarch64-linux-gnu",
                                                      "/usr/lib/aarch64-linux-gnu",
                                                      "/lib64",
                                                      "/usr/lib64",
                                                      "/lib",
                                                      "/usr/lib"};

// The soname a program asks for: libcudart.so.12 (CUDA 12+), libcudart.so.11.0, libcudart.so.10.2.
// The real file carries three components (libcudart.so.12.4.127).
bool is_cudart_soname(const std::string& name) {
  static const std::regex soname(R"(libcudart\.so\.[0-9]+(\.[0-9]+)?)");
  return std::regex_match(name, soname);
}

void add_cudart_copies(const Sysroot& sysroot, const std::string& directory,
                       const std::string& source, std::set<std::string>& seen,
                       std::vector<CudartCopy>& copies) {
  const auto real_directory = sysroot.canonical(directory).value_or(directory);
  if (!seen.insert(real_directory).second) return;  // /lib -> usr/lib: one directory, read once
  for (const auto& name : sysroot.list_directory(directory)) {
    if (!is_cudart_soname(name)) continue;
    const auto path = directory + "/" + name;
    if (auto real = sysroot.canonical(path)) copies.push_back({name, directory, *real, source});
  }
}

}  // namespace

std::vector<std::string> parse_ld_so_conf(std::string_view conf) {
  std::vector<std::string> directories;
  for (const auto& raw : text::lines(conf)) {
    auto line = std::string(text::trim(raw.substr(0, raw.find('#'))));
    if (line.empty() || text::starts_with(line, "include")) continue;
    directories.push_back(line);
  }
  return directories;
}

LinkerFacts probe_linker(const Sysroot& sysroot, const Environment& env) {
  LinkerFacts facts;
  const auto entry_for = [&](const std::string& directory, const std::string& source) {
    const bool exists = sysroot.is_directory(directory);
    return LibrarySearchEntry{directory, source, exists,
                              exists ? sysroot.canonical(directory).value_or(directory) : ""};
  };
  for (const auto& entry : text::split(env.get("LD_LIBRARY_PATH").value_or(""), ':')) {
    if (!entry.empty()) facts.entries.push_back(entry_for(entry, "LD_LIBRARY_PATH"));
  }
  for (const auto& name : sysroot.list_directory("/etc/ld.so.conf.d")) {
    if (!text::ends_with(name, ".conf")) continue;
    const auto file = "/etc/ld.so.conf.d/" + name;
    for (const auto& directory : parse_ld_so_conf(sysroot.read_file(file).value_or(""))) {
      facts.entries.push_back(entry_for(directory, file));
    }
  }
  std::set<std::string> seen;
  for (const auto& entry : facts.entries) {
    if (entry.exists) add_cudart_copies(sysroot, entry.directory, entry.source, seen, facts.cudart);
  }
  for (const auto& directory : default_directories) {
    add_cudart_copies(sysroot, directory, "default directory", seen, facts.cudart);
  }
  return facts;
}

}  // namespace cudaenv::probe
