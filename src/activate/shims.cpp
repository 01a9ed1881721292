#include "activate/shims.hpp"

#include <set>

#include "activate/activation.hpp"
#include "activate/here.hpp"
#include "core/files.hpp"
#include "core/paths.hpp"
#include "core/process.hpp"

namespace cudaenv::activate {

namespace fs = std::filesystem;

namespace {

std::set<std::string> installed_tools(const install::Store& store) {
  std::set<std::string> tools;
  std::error_code ec;
  for (const auto& toolkit : install::installed_toolkits(store, install::Receipts::skip)) {
    for (fs::directory_iterator it(toolkit.path / "bin", ec), end; !ec && it != end;
         it.increment(ec)) {
      if (is_executable_file(it->path())) tools.insert(it->path().filename().string());
    }
  }
  return tools;
}

// Replaces (or creates) `link` atomically: a shim that stays is never missing, even briefly.
Status place_link(const fs::path& link, const fs::path& target) {
  const auto temporary = link.parent_path() / (".new-" + link.filename().string());
  std::error_code ec;
  fs::remove(temporary, ec);
  fs::create_symlink(target, temporary, ec);
  if (!ec) fs::rename(temporary, link, ec);
  if (ec)
    return make_error(ErrorKind::failure,
                      "cannot create shim " + link.string() + ": " + ec.message());
  return Ok{};
}

}  // namespace

Result<ToolTarget> resolve_tool(const Environment& current, const fs::path& cwd,
                                const std::string& tool) {
  if (tool.empty() || tool.find('/') != std::string::npos || tool == "." || tool == "..")
    return make_error(ErrorKind::usage, "\"" + tool + "\" is not a tool name",
                      "name a program such as nvcc");
  auto activated = activate_here(current, cwd);
  if (!activated) return activated.error();
  Environment environment = activated->environment;
  environment.unset(activation_variable);
  if (activated->toolkit) {
    const auto path = activated->toolkit->path / "bin" / tool;
    if (!is_executable_file(path))
      return make_error(ErrorKind::not_found,
                        tool + " is not part of CUDA " + activated->toolkit->version.str() +
                            " as installed (" + path.parent_path().string() + ")",
                        "install the component that provides it: cudaenv install " +
                            activated->toolkit->version.str() + " --force --components …");
    return ToolTarget{path.string(), std::move(environment)};
  }
  const auto shims = shims_directory(install::Store{paths::data_root(current)}).string();
  auto found = find_in_path(tool, environment.get("PATH").value_or(""), {shims});
  if (!found)
    return make_error(ErrorKind::not_found,
                      tool + ": no CUDA version is selected here and there is none on PATH",
                      "select one: cudaenv use <version> (or set CUDAENV_VERSION)");
  return ToolTarget{*found, std::move(environment)};
}

Result<std::vector<std::string>> rehash(const install::Store& store, const fs::path& shim_program) {
  if (!is_executable_file(shim_program))
    return make_error(ErrorKind::failure,
                      "the shim program " + shim_program.string() + " is missing",
                      "reinstall cudaenv (scripts/setup)");
  const auto dir = shims_directory(store);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    return make_error(ErrorKind::failure, "cannot create " + dir.string() + ": " + ec.message());
  const auto tools = installed_tools(store);
  for (const auto& tool : tools) {
    if (auto placed = place_link(dir / tool, shim_program); !placed) return placed.error();
  }
  std::vector<fs::path> stale;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (!tools.contains(it->path().filename().string())) stale.push_back(it->path());
  }
  for (const auto& path : stale) fs::remove(path, ec);
  return std::vector<std::string>(tools.begin(), tools.end());
}

}  // namespace cudaenv::activate
