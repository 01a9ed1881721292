#pragma once
// `.cudaenv.lock`, written by `cudaenv lock` beside `.cudaenv`: the one set (toolkit archives,
// cuDNN archives, framework wheels) that runs on every target the project declares, each archive
// with the sha256 and size `cudaenv sync` checks it against, the database it was resolved with,
// and per target its driver, mode, build settings and verification receipts. The file comes with
// cloned repositories: it is read as data, checked field by field, and nothing in it is executed.

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace cudaenv::lock {

constexpr const char* lock_file_name = ".cudaenv.lock";
constexpr std::int64_t current_lock_version = 1;

// One archive of NVIDIA's redist layout: where it lies below the mirror's product folder
// (cuda/ or cudnn/), and what it must hash to.
struct LockedArchive {
  std::string name;     // "cuda_nvcc"
  std::string version;  // the component's own version: "12.4.131"
  std::string
      relative_path;   // "cuda_nvcc/linux-x86_64/cuda_nvcc-linux-x86_64-12.4.131-archive.tar.xz"
  std::string sha256;  // 64 lower-case hex digits
  std::uint64_t size = 0;
};

struct LockedToolkit {
  std::string version;  // the full release: "12.4.1"
  std::vector<LockedArchive> components;
};

struct LockedCudnn {
  std::string version;       // "9.1.0.70"
  std::string cuda_variant;  // "cuda12"
  std::vector<LockedArchive> components;
};

// One wheel file of a locked framework version, as the index listed it.
struct LockedWheel {
  std::string filename;  // "torch-2.5.1+cu124-cp312-cp312-linux_x86_64.whl"
  std::string sha256;    // 64 lower-case hex digits; empty when the index gave none
};

struct LockedFramework {
  std::string version;              // exact, with its local tag: "2.5.1+cu124"
  std::string index_url;            // the index the pip line names, or PyPI's when it names none
  std::string pip;                  // the whole install line, as written
  std::vector<LockedWheel> wheels;  // its Linux x86-64 wheels, by file name
  // The line's arguments after `pip install`, each checked (a requirement pinning `version`,
  // -U, --index-url and a URL): what `sync` shows, shell-quoted word by word; the line itself
  // is never shown as a command.
  std::vector<std::string> pip_args = {};
  // A companion wheel (flash-attn, xformers) names the locked framework it is built for:
  // "torch"; empty for a framework the resolver chose.
  std::string companion_of = {};
};

// The one framework companion wheels are locked for.
constexpr const char* companion_framework = "torch";

// A passing `cudaenv verify --record` on a machine of the target.
struct Receipt {
  std::string date;           // UTC, ISO 8601
  std::string gpu;            // "NVIDIA H200"
  std::string arch;           // "9.0"
  std::string driver;         // "580.95.05"
  std::string toolkit;        // "13.0.2"
  std::string report_sha256;  // digest of the verify report
  std::string locked_set;     // digest of the locked set it was recorded against (set_digest)
};

struct LockedTarget {
  std::string driver;                    // the declared floor
  std::string mode;                      // "full", "minor-compat" or "forward-compat"
  std::vector<std::string> archs;        // "8.0"
  std::string torch_cuda_arch_list;      // "8.0;9.0"
  std::string cmake_cuda_architectures;  // "80;90"
  std::string cudahostcxx;               // "" unless the toolkit needs an older host compiler
  std::vector<Receipt> verified;
  std::vector<std::string> gpus;  // the GPU models .cudaenv names for it: "H100"
};

// Where the toolkit's and cuDNN's files come from: NVIDIA's redist archives from a mirror, or
// NVIDIA's wheels from a package index (an archive's relative_path is then the wheel's file name).
// The index itself is not recorded: it is the installing user's (--index-url, PIP_INDEX_URL, the
// config), may carry credentials, and the digests pin the files whichever index serves them.
constexpr const char* redist_source = "redist";
constexpr const char* pypi_source = "pypi";

struct LockFile {
  std::int64_t lock_version = current_lock_version;
  std::string source = redist_source;
  std::string generated_by;  // "cudaenv 0.9.0"
  std::string database_revision;
  std::string database_sha256;
  std::map<std::string, std::string> request;  // what .cudaenv asked: cuda, cudnn, torch, …
  LockedToolkit toolkit;
  std::optional<LockedCudnn> cudnn;
  std::map<std::string, LockedFramework> frameworks;  // by name: torch, tensorflow, jax
  std::map<std::string, LockedTarget> targets;        // by declared name
};

// The lock file beside `project_file` (a .cudaenv).
std::filesystem::path lock_path_for(const std::filesystem::path& project_file);

// Errors name the file and line and the fix: "/repo/.cudaenv.lock:12: toolkit.components[3].sha256
// must be 64 hex digits" (hint: run `cudaenv lock` to write it again). A file that is not TOML,
// lacks a field or has one of the wrong type is ErrorKind::failure; a value that fails its
// grammar (core/untrusted.hpp: a version holding "..", a path with "%2e", a pip line that is not
// one requirement and index flags) is ErrorKind::integrity: nothing in the lock forms a path, a
// URL or a shell word before it passed.
Result<LockFile> parse_lock_file(std::string_view text, const std::string& path);
// A missing file is ErrorKind::not_found.
// `pip install ARGS` of a framework entry: ARGS, each checked. The requirement must be
// `<package>[extras]==<version>` for the entry's own name and version, and an --index-url must be
// its index_url. `where` is "<file>:<line>: frameworks.NAME.pip".
Result<std::vector<std::string>> parse_pip_line(std::string_view line, std::string_view name,
                                                const LockedFramework& framework,
                                                const std::string& where);
Result<LockFile> read_lock_file(const std::filesystem::path& path);

// The file's text: a comment saying what wrote it, then TOML that parse_lock_file reads back.
std::string render_lock_file(const LockFile& lock);
// Writes it atomically (a reader sees the old file or the new one, never half of one).
Status write_lock_file(const std::filesystem::path& path, const LockFile& lock);

// sha256 (hex) of everything the lock pins — database, toolkit, cuDNN, frameworks, and the
// targets' drivers, archs and settings — receipts, dates and generated_by left out. A receipt is
// valid while the lock's digest equals the one it was recorded against.
std::string set_digest(const LockFile& lock);

// sha256 (hex) of `data`.
std::string sha256_text(std::string_view data);

}  // namespace cudaenv::lock
