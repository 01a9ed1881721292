#pragma once
// NVIDIA's CUDA forward-compatibility libraries (the cuda-compat-X-Y packages): a directory with a
// newer user-mode driver, libcuda.so.<version>, for an older kernel module. The library says
// itself which kernel-module branches it runs on, in an ELF note (.note.cuda.fwd_compatibility,
// owner "NVIDIA Corporation", a JSON description); that note, not a table, decides. Reading it
// costs a handful of bounded preads, so the prompt hook can afford it where a library is
// installed.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/version.hpp"

namespace cudaenv::forward {

// The note's description: {"format":1,"CUDA version":"13.0","driver":[535,...],"device":[...]}.
struct CompatNote {
  int format = 0;
  Version cuda;                      // the CUDA the library serves
  std::vector<int> driver_branches;  // the kernel-module branches it runs on
  std::vector<int> device_classes;   // undocumented device classes, kept for display
};

// Parses the description's JSON (at most 4 KiB; a NUL ends it). Errors name what is wrong.
Result<CompatNote> parse_compat_note(std::string_view json);

// Reads the note of the ELF file at `library`: its section header table, the section names and the
// note, each bounded; ErrorKind::not_found when the file has no such note.
Result<CompatNote> read_compat_note(const std::filesystem::path& library);

struct CompatLibrary {
  std::filesystem::path directory;  // where libcuda.so.<version> lies
  std::string version;              // "580.95.05", from the file's name
  std::optional<CompatNote> note;   // nullopt: unreadable (note_problem says why)
  std::string note_problem;
};

// The forward-compatibility library in `directory` (its one regular libcuda.so.<version>, the
// newest when there are several); nullopt when there is none.
std::optional<CompatLibrary> find_compat_library(const std::filesystem::path& directory);

}  // namespace cudaenv::forward
