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

struct RecipePlan {
  std::string cudaenv_version;  // the running cudaenv: the recipe says what wrote it
  std::filesystem::path project_file;
  bool locked = false;             // .cudaenv.lock beside it: `sync --frozen` installs
  std::string toolkit;             // the exact release the image holds: "12.4.1"
  std::string cudnn_spec;          // the .cudaenv's cudnn pin, "" when none
  std::string require_cuda;        // NVIDIA_REQUIRE_CUDA: "cuda>=12.0"
  std::string require_reason;      // why that floor, for the recipe's comment
  std::vector<std::string> archs;  // declared targets' compute capabilities: "8.0", "9.0"
  std::string base_image = "ubuntu:24.04";
};

// The plan for the project whose .cudaenv is `project_file`. The toolkit is the lock's when a
// lock is there, else the newest release the database knows that the `cuda` pin matches. Errors:
// a .cudaenv or lock that does not read (naming file and line), no `cuda` pin (usage), a pin no
// known release matches (not found).
Result<RecipePlan> plan_recipe(const std::filesystem::path& project_file,
                               const manifest::Database& db, const std::string& cudaenv_version);

std::string render_dockerfile(const RecipePlan& plan);
std::string render_apptainer(const RecipePlan& plan);

}  // namespace cudaenv::recipes
