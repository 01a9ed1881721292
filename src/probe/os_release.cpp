#include "probe/os_release.hpp"

#include <sys/utsname.h>

#include "core/text.hpp"

namespace cudaenv::probe {

namespace {

std::string unquote(std::string_view value) {
  value = text::trim(value);
  if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
      value.back() == value.front()) {
    value = value.substr(1, value.size() - 2);
  }
  std::string out;
  for (size_t i = 0; i < value.size(); ++i) {
    if (value[i] == '\\' && i + 1 < value.size()) ++i;  // os-release allows shell escapes
    out += value[i];
  }
  return out;
}

}  // namespace

void parse_os_release(std::string_view text, OsFacts& facts) {
  const std::pair<std::string_view, std::string OsFacts::*> keys[] = {
      {"ID", &OsFacts::id},
      {"ID_LIKE", &OsFacts::id_like},
      {"VERSION_ID", &OsFacts::version_id},
      {"VERSION_CODENAME", &OsFacts::codename},
      {"PRETTY_NAME", &OsFacts::pretty_name},
  };
  for (const auto& line : text::lines(text)) {
    const auto equals = line.find('=');
    if (equals == std::string::npos || text::starts_with(text::trim(line), "#")) continue;
    const auto key = text::trim(std::string_view(line).substr(0, equals));
    for (const auto& [name, field] : keys) {
      if (key == name) facts.*field = unquote(std::string_view(line).substr(equals + 1));
    }
  }
}

OsFacts probe_os(const Sysroot& sysroot) {
  OsFacts facts;
  auto release = sysroot.read_file("/etc/os-release");
  if (!release) release = sysroot.read_file("/usr/lib/os-release");
  if (release) parse_os_release(*release, facts);
  if (auto kernel = sysroot.read_file("/proc/sys/kernel/osrelease")) {
    facts.kernel = text::trim(*kernel);
  }
  if (auto arch = sysroot.read_file("/proc/sys/kernel/arch")) {
    facts.architecture = text::trim(*arch);
  } else if (sysroot.is_host_root()) {
    // Kernels before 6.1 have no /proc/sys/kernel/arch; uname answers the same question.
    utsname names{};
    if (::uname(&names) == 0) facts.architecture = names.machine;
  }
  return facts;
}

}  // namespace cudaenv::probe
