#pragma once
// `cudaenv export dockerfile|apptainer`: a container recipe for a project, from its `.cudaenv`
// (and `.cudaenv.lock` when there is one). The recipe installs the cudaenv release bundle and the
// project's toolkit from a mirror given at build time, sets the environment the shell hook
// would set, NVIDIA_REQUIRE_CUDA from the toolkit's driver floor, the declared targets' build
// architectures, and `cudaenv verify` as the health check (Docker) or %test (Apptainer).

#include <filesystem>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "manifest/database.hpp"

namespace cudaenv::recipes {

// Where the recipe puts things inside the image.
inline constexpr const char* image_prefix = "/opt/cudaenv";          // the bundle
inline constexpr const char* image_data_root = "/opt/cudaenv/data";  // CUDAENV_ROOT
inline constexpr const char* image_project_dir = "/project";         // .cudaenv (and lock)
inline constexpr const char* image_venv = "/opt/venv";  // the locked frameworks' environment

struct RecipePlan {
  std::string cudaenv_version;  // the running cudaenv: the recipe says what wrote it
  std::filesystem::path project_file;
  bool locked = false;             // .cudaenv.lock beside it: `sync --frozen` installs
  std::string toolkit;             // the exact release the image holds: "12.4.1"
  std::string cudnn;               // the exact cuDNN release the image holds: "9.1.0"; "" none
  std::string cudnn_variant;       // its build for the toolkit's major: "cuda12"
  std::string host_compiler;       // the g++ the image installs for nvcc ("g++-12"); "" none
  std::string require_cuda;        // NVIDIA_REQUIRE_CUDA: "cuda>=12.0"
  std::string require_reason;      // why that floor, for the recipe's comment
  std::vector<std::string> archs;  // declared targets' compute capabilities: "8.0", "9.0"
  // The Python environment `sync --frozen` installs the lock's frameworks into: the project's
  // `venv` below image_project_dir, else image_venv; "" when the lock pins no framework.
  std::string venv = {};
  bool torch = false;  // the lock pins torch: the health check runs `verify --torch`
  std::string base_image = "ubuntu:24.04";
};

// The plan for the project whose .cudaenv is `project_file`. The toolkit and cuDNN are the
// lock's when a lock is there, else the newest releases the database knows that the pins match
// (an exact cuDNN, so that the image's environment can name its directory). The host compiler
// is the project's host_compiler pin, else the lock's CUDAHOSTCXX, else the newest g++ the
// toolkit accepts when it refuses Ubuntu 24.04's g++ 13. A lock that pins frameworks gets a
// virtualenv they are installed (and proved by import) in at build time. Errors: a .cudaenv or lock
// that does not read (naming file and line), no `cuda` pin (usage), a pin no known release matches
// (not found).
Result<RecipePlan> plan_recipe(const std::filesystem::path& project_file,
                               const manifest::Database& db, const std::string& cudaenv_version);

// NAME=value pairs the image's environment holds: what activate::toolkit_variables (the code
// behind `cudaenv env` and the hook) gives for the image's toolkit, cuDNN and host compiler,
// then CUDAENV_ROOT, NVIDIA_REQUIRE_CUDA and the targets' architectures. `$PATH` and
// `${LD_LIBRARY_PATH:+:${LD_LIBRARY_PATH}}` stand for the base image's own values.
std::vector<std::pair<std::string, std::string>> image_environment(const RecipePlan& plan);

std::string render_dockerfile(const RecipePlan& plan);
std::string render_apptainer(const RecipePlan& plan);

}  // namespace cudaenv::recipes
