#include "core/paths.hpp"

namespace cudaenv::paths {

namespace {

std::filesystem::path home(const Environment& env) {
  // Without HOME (cron, some containers) fall back to the current directory rather than "/".
  return env.get_nonempty("HOME").value_or(".");
}

std::filesystem::path xdg_dir(const Environment& env, const char* variable,
                              const char* default_below_home) {
  if (auto value = env.get_nonempty(variable)) return *value;
  return home(env) / default_below_home;
}

}  // namespace

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
  auto installed = dir.parent_path() / "libexec" / "cudaenv" / name;
  std::error_code ec;
  if (std::filesystem::exists(installed, ec)) return installed;
  return dir / name;
}

std::filesystem::path sysroot(const Environment& env) {
  return env.get_nonempty("CUDAENV_SYSROOT").value_or("/");
}

}  // namespace cudaenv::paths
