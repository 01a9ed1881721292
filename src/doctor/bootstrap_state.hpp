#pragma once
// The bootstrap progress file, $CUDAENV_ROOT/bootstrap/state.json (docs/bootstrap.md):
//   {"schema_version": 1, "completed": ["apt-update", ...],
//    "reboot": null | {"after": "driver", "boot_id": "<boot id when it was asked for>"}}

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace cudaenv::doctor {

struct PendingReboot {
  std::string after;    // the step that asked for it
  std::string boot_id;  // /proc/sys/kernel/random/boot_id then; another id means it happened
};

struct BootstrapState {
  std::vector<std::string> completed;
  std::optional<PendingReboot> reboot;
  bool is_completed(const std::string& id) const;
};

// A missing file is an empty state; a damaged one is an error naming it.
Result<BootstrapState> load_state(const std::filesystem::path& file);
// Written to a temporary file and renamed, so a killed run never leaves half a file.
Status save_state(const std::filesystem::path& file, const BootstrapState& state);

}  // namespace cudaenv::doctor
