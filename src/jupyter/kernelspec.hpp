#pragma once
// Jupyter kernels that see a project's toolkit (docs/jupyter.md). A kernel is started by the
// Jupyter server, never by a shell, so the prompt hook never runs for it: the kernelspec's `env`
// carries the variables the hook would set in the project, and `use` and `rehash` rewrite them
// when the project's toolkit changes. Which kernelspecs to rewrite is kept in the data root
// (registry_file); each kernelspec names its project in its metadata.

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/environment.hpp"
#include "core/error.hpp"

namespace cudaenv::jupyter {

// The longest kernel name accepted: Jupyter sets none, a directory name has NAME_MAX.
constexpr std::size_t kernel_name_limit = 64;

// Jupyter's kernel name grammar, [a-zA-Z0-9._-]+ (and not "." or ".."): a usage error naming
// --name otherwise.
Status check_kernel_name(std::string_view name);

// A valid name as Jupyter files it: lowercased (Jupyter lowercases the names it looks up).
std::string kernel_name(std::string_view name);

// "cudaenv-<the project directory's name>", lowercased, each character outside the grammar made
// '-', cut to kernel_name_limit.
std::string default_kernel_name(const std::filesystem::path& project_dir);

// Where Jupyter looks for the user's kernelspecs, as jupyter_core decides on Linux:
// $JUPYTER_DATA_DIR, else ${XDG_DATA_HOME:-$HOME/.local/share}/jupyter; then kernels/. A relative
// JUPYTER_DATA_DIR is a usage error (it would name a directory of wherever cudaenv runs).
Result<std::filesystem::path> kernels_directory(const Environment& env);

// The variables the prompt hook would set in `project_dir` for `current` (activate::activate_here
// and what it changes from the environment without cudaenv's activation): empty when the
// project selects the system's toolkit. Errors: as activate_here's (a toolkit not installed).
struct ProjectEnvironment {
  std::map<std::string, std::string> variables;
  std::string cuda;  // the toolkit's version ("12.4.1"); empty: the system's
};
Result<ProjectEnvironment> project_environment(const Environment& current,
                                               const std::filesystem::path& project_dir);

struct KernelSpec {
  std::string name;               // the directory's name under kernels/
  std::filesystem::path python;   // an absolute interpreter with ipykernel
  std::string display_name;       // what the notebook's kernel menu shows
  std::filesystem::path project;  // the directory whose .cudaenv selects the toolkit
  std::map<std::string, std::string> env;
};

// kernel.json's text: argv [python, -m, ipykernel_launcher, -f, {connection_file}], display_name,
// language, env, and metadata.cudaenv.project.
std::string kernel_json(const KernelSpec& spec);

// Writes kernels/<name>/kernel.json through the safe writer and records the directory in the
// registry under `data_root`.
Status install_kernelspec(const std::filesystem::path& kernels, const KernelSpec& spec,
                          const std::filesystem::path& data_root);

// The registry of installed kernelspec directories: <data root>/jupyter/kernelspecs.json.
std::filesystem::path registry_file(const std::filesystem::path& data_root);
// The directories it lists; a missing file is none. A file that does not parse, or an entry that
// is not an absolute path, is an error naming the file.
Result<std::vector<std::filesystem::path>> registered_kernelspecs(
    const std::filesystem::path& data_root);

// What refresh_kernelspecs did to one registered kernelspec.
struct Refresh {
  std::filesystem::path directory;
  std::string cuda;      // the project's toolkit now; empty: the system's
  bool changed = false;  // its env was rewritten
  std::string problem;   // why it was left as it is (its project's toolkit is not installed,
                         // its kernel.json is unreadable); empty when none
};

// Rewrites the env of every registered kernelspec whose variables differ from its project's
// (project_environment against `current`): only the variables activation manages are replaced,
// anything else in env, and the rest of kernel.json, is kept. A kernelspec directory that is gone
// (`jupyter kernelspec remove`) leaves the registry.
Result<std::vector<Refresh>> refresh_kernelspecs(const Environment& current,
                                                 const std::filesystem::path& data_root);

// One registered kernelspec, as `jupyter list` shows it.
struct Installed {
  std::filesystem::path directory;
  std::string project;  // from its metadata; empty when its kernel.json does not say
  std::string cuda;     // its env's CUDAENV_ACTIVE; empty: none
};
Result<std::vector<Installed>> installed_kernelspecs(const std::filesystem::path& data_root);

// Removes kernels/<name> (its kernel.json and the directory) and its registry entry: not_found
// when no such kernelspec is there.
Status uninstall_kernelspec(const std::filesystem::path& kernels, const std::string& name,
                            const std::filesystem::path& data_root);

}  // namespace cudaenv::jupyter
