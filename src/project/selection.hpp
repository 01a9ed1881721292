#pragma once
// Which CUDA applies here, and why (docs/design.md §3): CUDAENV_VERSION, then the nearest .cudaenv
// from the current directory upward, then the global config's `cuda`, then the system's.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/environment.hpp"
#include "core/error.hpp"
#include "core/version.hpp"
#include "install/store.hpp"

namespace cudaenv::project {

enum class SelectionSource { command_line, environment, project_file, global_config, system };

struct Selection {
  std::optional<VersionSpec> cuda;  // nullopt: the system's toolkit, environment left as it is
  std::optional<VersionSpec> cudnn;
  std::string host_compiler;  // the .cudaenv's host_compiler pin; "" none
  SelectionSource source = SelectionSource::system;
  std::filesystem::path file;   // the .cudaenv or config.toml that set it
  std::vector<Error> warnings;  // keys of the file read that nobody reads (file:line, suggestion)
};

// Errors: a malformed CUDAENV_VERSION, .cudaenv or config file, naming it.
Result<Selection> select(const Environment& env, const std::filesystem::path& cwd);

// Whether `spec` names a toolkit known by `releases` (its release, or the releases it may be) and
// by its nvcc version: "13.0", "13.0.2" and "13.0.88" all name CUDA 13.0.2 (nvcc 13.0.88). nvcc's
// version counts only written out exactly (ranges and prefixes speak of releases), except for a
// toolkit whose release is unknown, which only its nvcc version can name.
bool spec_names_toolkit(const VersionSpec& spec, const std::vector<Version>& releases,
                        const std::optional<Version>& nvcc);

// The newest installed toolkit matching the selection, if any: by release, else (a spec such as
// "13.0.88") by the nvcc version its receipt records.
std::optional<install::Installed> installed_match(
    const Selection& selection, const install::Store& store,
    install::Receipts receipts = install::Receipts::read);

// The newest installed cuDNN matching `spec` built for CUDA `cuda_major`, if any.
std::optional<install::Installed> installed_cudnn_match(
    const VersionSpec& spec, int cuda_major, const install::Store& store,
    install::Receipts receipts = install::Receipts::read);

// Where the selection came from: "/repo/.cudaenv", "CUDAENV_VERSION", "--cuda", "system".
std::string describe_source(const Selection& selection);

}  // namespace cudaenv::project
