#include "core/paths.hpp"

#include "core/accounts.hpp"
#include "core/text.hpp"

namespace cudaenv::paths {

namespace {

bool is_absolute_value(const std::optional<std::string>& value) {
  return value && !value->empty() && value->front() == '/';
}

Status relative_root(const std::string& variable, const std::string& value) {
  return make_error(ErrorKind::usage,
                    variable + " names a relative path (" + text::printable(value) +
                        "): the store would be whatever directory cudaenv runs in",
                    "set " + variable + " to an absolute path, or unset it");
}

std::filesystem::path xdg_dir(const Environment& env, const char* variable,
                              const char* default_below_home) {
  // The XDG specification ignores a relative value, and so do we: it would name a directory
  // below whatever the current directory happens to be.
  if (auto value = env.get_nonempty(variable); is_absolute_value(value)) return *value;
  return home_directory(env) / default_below_home;
}

}  // namespace

std::filesystem::path home_directory(const Environment& env) {
  if (auto home = env.get_nonempty("HOME"); is_absolute_value(home)) return *home;
  // HOME unset, empty or relative (cron, `env -i`, some containers): the lookup (the passwd
  // entry), never a path relative to the current directory. With no answer either, a path that
  // does not exist, so writes fail naming it instead of landing in the current directory.
  const std::string looked_up = accounts::home();
  if (!looked_up.empty() && looked_up.front() == '/') return looked_up;
  return "/nonexistent";
}

bool needs_home_lookup(const Environment& env) {
  if (is_absolute_value(env.get("HOME"))) return false;
  const bool root_settled =
      env.get_nonempty("CUDAENV_ROOT") || is_absolute_value(env.get("XDG_DATA_HOME"));
  return !root_settled || !is_absolute_value(env.get("XDG_CONFIG_HOME"));
}

Status check_root_variables(const Environment& env) {
  if (auto root = env.get_nonempty("CUDAENV_ROOT"); root && !is_absolute_value(root))
    return relative_root("CUDAENV_ROOT", *root);
  if (auto listed = env.get_nonempty("CUDAENV_SYSTEM_ROOTS")) {
    for (const auto& entry : text::split(*listed, ':')) {
      if (!entry.empty() && entry.front() != '/')
        return relative_root("CUDAENV_SYSTEM_ROOTS", entry);
    }
  }
  return Ok{};
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
