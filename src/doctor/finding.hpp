#pragma once
// What one doctor check concludes: a status, the evidence it read (with paths) and the exact
// commands that fix it.

#include <string>
#include <vector>

namespace cudaenv::doctor {

enum class CheckStatus { ok, warn, fail, skip };

struct Finding {
  std::string id;     // stable: "kernel-module", "nouveau", ... (docs/doctor.md)
  std::string title;  // what is checked: "NVIDIA kernel module loaded"
  CheckStatus status = CheckStatus::skip;
  std::string summary;                // one line: what was found
  std::vector<std::string> evidence;  // what was read: "/proc/modules: nvidia absent"
  std::vector<std::string> fix;       // shell command lines, in order; "# ..." lines explain
};

const char* to_string(CheckStatus status);

}  // namespace cudaenv::doctor
