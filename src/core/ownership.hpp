#pragma once
// Whether a directory or file cudaenv would execute from (or take settings from) can be trusted:
// owned by the user running cudaenv (or by root), and writable by nobody else. The same rule as
// git's safe.directory and ssh's StrictModes: a toolkit planted in a store another user controls
// would otherwise run as whoever selects it.

#include <filesystem>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace cudaenv::ownership {

// What a checked path is, for the error: "data root", what its owner could do with it, and the
// other way out besides fixing it ("set CUDAENV_ROOT to a directory you own").
struct Subject {
  std::string what;
  std::string consequence;
  std::string alternative;
};

// Ok when `path` does not exist, or is owned by the effective user or by root and is neither
// group- nor world-writable; a directory writable by others is accepted only with the sticky
// bit set and the effective user as its owner (others may then add entries but not replace
// ours). Else an ErrorKind::failure naming the subject and `path`, the owner or mode, what that
// allows, and the fix (the chown or chmod to run, or the subject's alternative).
Status check_path(const std::filesystem::path& path, const Subject& subject);

// The data root and the directories cudaenv executes from below it (toolkits/, cudnn/, shims/),
// each checked with check_path when it exists. A relative root is refused too: it would be
// whatever directory cudaenv happens to run in. A few stat calls: cheap enough for the prompt hook.
Status check_data_root(const std::filesystem::path& root);

// A toolkit or cuDNN prefix in a store, before anything of it is run or put on PATH or
// LD_LIBRARY_PATH: every level a program is executed (or a library loaded) from must pass
// check_path — the prefix, each of `program_directories` (bin/, nvvm/bin/) and every entry in
// them, each of `library_directories` (lib64/, lib/) — because whoever can write any of them can
// plant the program that runs. Missing directories pass. About 2 + the number of programs stat
// calls, through one directory descriptor each.
struct PrefixLayout {
  std::vector<std::string> program_directories;
  std::vector<std::string> library_directories;
};
// `kind` names the prefix in the error ("toolkit", "cuDNN").
Status check_prefix(const std::filesystem::path& prefix, const PrefixLayout& layout,
                    const std::string& kind);

// The layouts of the prefixes cudaenv installs: a toolkit (bin/, nvvm/bin/ that nvcc runs cicc
// from, lib64/), and a cuDNN build (lib/, lib64/).
const PrefixLayout& toolkit_layout();
const PrefixLayout& cudnn_layout();

// The configuration file and the directory holding it (whoever can write the directory can
// replace the file).
Status check_config_file(const std::filesystem::path& file);

}  // namespace cudaenv::ownership
