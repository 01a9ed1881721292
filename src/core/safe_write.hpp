#pragma once
// The one way cudaenv writes a file in place: .cudaenv, .cudaenv.lock, modulefiles, receipts,
// the config, the installed database, mirror manifests, the self-update switch, shims.
//
// Why one writer: a cloned repository, a shared modules directory or a mirror's tree may hold a
// symlink under any name a writer would use (the file itself, "NAME.tmp-PID", ...). Writing
// through such a name follows the link and overwrites whatever it points at (~/.bashrc, or as
// root any file). This writer never opens an existing name: it creates a temporary file with an
// unpredictable name, exclusively and without following links, through the target directory's
// descriptor, writes it, fsyncs it and renames it over the target. rename(2) replaces a link at
// the target name itself, never the file the link points at; an interrupted write leaves the old
// file whole and at most a hidden ".NAME.tmp-XXXX" beside it.

#include <filesystem>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "core/fd.hpp"

namespace cudaenv {

enum class CreateParents { no, yes };

struct WriteOptions {
  // Permission bits of a new file (the umask applies); a regular file being replaced keeps its
  // own permission bits, without set-id bits.
  unsigned mode = 0644;
  CreateParents parents = CreateParents::yes;
};

// Writes `text` as the whole content of `path`, atomically, as described above. Errors name the
// file: "cannot write <path>: <reason>" (ErrorKind::failure); a directory at `path` is refused.
Status write_file_atomically(const std::filesystem::path& path, std::string_view text,
                             const WriteOptions& options = {});

// The same for the entry `name` of the directory open at `dir` (a descriptor the caller opened
// without following links, so that nothing in the path is looked up again between a check and
// the write). `shown` is the path errors name.
Status write_file_atomically_at(int dir, const std::string& name, std::string_view text,
                                const std::filesystem::path& shown, unsigned mode = 0644);

// Makes `link` a symlink to `target`, replacing whatever name is there in one rename (a link
// made under an unpredictable temporary name first). Errors name the link.
Status replace_symlink_atomically(const std::filesystem::path& link,
                                  const std::filesystem::path& target);

// Opens `path` for appending (a log, a download's partial file), created 0644 when missing,
// never through a link: a symlink or anything but a regular file at `path` is refused.
Result<UniqueFd> open_for_append(const std::filesystem::path& path);

// Appends all of `text` to `path` through open_for_append.
Status append_to_file(const std::filesystem::path& path, std::string_view text);

// An unpredictable, hidden name beside `name` for a temporary file or link:
// ".NAME.tmp-<16 hex digits>" (NAME cut so the whole stays within NAME_MAX).
std::string temporary_name_for(std::string_view name);

}  // namespace cudaenv
