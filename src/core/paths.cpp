#include "core/paths.hpp"

#include <pwd.h>
#include <unistd.h>

#include <vector>

namespace cudaenv::paths {

namespace {

// The home directory the passwd database gives the effective user; empty when it has none.
std::string passwd_home() {
  const long suggested = ::sysconf(_SC_GETPW_R_SIZE_MAX);
  std::vector<char> buffer(suggested > 0 ? static_cast<size_t>(suggested) : 4096);
  struct passwd entry {};
  struct passwd* found = nullptr;
  while (::getpwuid_r(::geteuid(), &entry, buffer.data(), buffer.size(), &found) == ERANGE &&
         buffer.size() < (1U << 20))
    buffer.resize(buffer.size() * 2);
  if (found == nullptr || found->pw_dir == nullptr) return "";
  return found->pw_dir;
}

std::filesystem::path xdg_dir(const Environment& env, const char* variable,
                              const char* default_below_home) {
  // The XDG specification ignores a relative value, and so do we: it would name a directory
  // below whatever the current directory happens to be.
  if (auto value = env.get_nonempty(variable); value && value->front() == '/') return *value;
  return home_directory(env) / default_below_home;
}

}  // namespace

std::filesystem::path home_directory(const Environment& env) {
  if (auto home = env.get_nonempty("HOME"); home && home->front() == '/') return *home;
  // HOME unset, empty or relative (cron, `env -i`, some containers): the passwd entry, never a
  // path relative to the current directory. With no entry either, a path that does not exist,
  // so writes fail naming it instead of landing in the current directory.
  auto from_passwd = passwd_home();
  if (!from_passwd.empty() && from_passwd.front() == '/') return from_passwd;
  return "/nonexistent";
}

std::filesystem::path data_root(const Environment& env) {
  if (auto root = env.get_nonempty("CUDAENV_ROOT")) return *root;
  return xdg_dir(env, "XDG_DATA_HOME", ".local/share") / "cudaenv";
}

std::filesystem::path config_file(const Environment& env) {
  return xdg_dir(env, "XDG_CONFIG_HOME", ".config") / "cudaenv" / "config.toml";
}

std::filesystem::path working_directory(const Environment& env) {
  std::error_code ec;
  auto physical = std::filesystem::current_path(ec);
  if (auto pwd = env.get_nonempty("PWD"); pwd && pwd->front() == '/') {
    if (std::filesystem::equivalent(*pwd, physical, ec)) return *pwd;
  }
  return physical;
}

std::filesystem::path running_executable() {
  std::error_code ec;
  return std::filesystem::read_symlink("/proc/self/exe", ec);
}

std::filesystem::path companion_program(const std::string& name) {
  const auto dir = running_executable().parent_path();
  // Installed: the GNUInstallDirs libexec directory, relative to bin/ (CMakeLists.txt).
  auto installed = (dir / CUDAENV_COMPANION_FROM_BIN / name).lexically_normal();
  std::error_code ec;
  if (std::filesystem::exists(installed, ec)) return installed;
  return dir / name;
}

std::filesystem::path sysroot(const Environment& env) {
  return env.get_nonempty("CUDAENV_SYSROOT").value_or("/");
}

}  // namespace cudaenv::paths
