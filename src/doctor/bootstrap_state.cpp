#include "doctor/bootstrap_state.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/files.hpp"
#include "core/safe_write.hpp"

namespace cudaenv::doctor {

namespace fs = std::filesystem;

bool BootstrapState::is_completed(const std::string& id) const {
  return std::find(completed.begin(), completed.end(), id) != completed.end();
}

Result<BootstrapState> load_state(const fs::path& file) {
  BootstrapState state;
  std::ifstream in(file);
  if (!in) return state;
  std::ostringstream text;
  text << in.rdbuf();
  const auto document = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  const auto broken =
      make_error(ErrorKind::failure, file.string() + " is not a bootstrap progress file",
                 "remove it to start over");
  if (!document.is_object()) return broken;
  const auto completed = document.find("completed");
  if (completed == document.end() || !completed->is_array()) return broken;
  for (const auto& id : *completed) {
    if (id.is_string()) state.completed.push_back(id.get<std::string>());
  }
  const auto reboot = document.find("reboot");
  if (reboot != document.end() && reboot->is_object()) {
    state.reboot = PendingReboot{reboot->value("after", ""), reboot->value("boot_id", "")};
  }
  return state;
}

Status save_state(const fs::path& file, const BootstrapState& state) {
  nlohmann::ordered_json document;
  document["schema_version"] = 1;
  document["completed"] = state.completed;
  document["reboot"] = state.reboot ? nlohmann::ordered_json{{"after", state.reboot->after},
                                                             {"boot_id", state.reboot->boot_id}}
                                    : nlohmann::ordered_json(nullptr);
  return write_file_atomically(file, document.dump(2) + "\n");
}

}  // namespace cudaenv::doctor
