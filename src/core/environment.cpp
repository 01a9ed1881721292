#include "core/environment.hpp"

#include <cstring>

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX, not in any header

namespace cudaenv {

Environment::Environment(std::map<std::string, std::string> variables)
    : variables_(std::move(variables)) {}

Environment Environment::from_process() {
  std::map<std::string, std::string> variables;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const char* equals = std::strchr(*entry, '=');
    if (equals == nullptr) continue;
    variables.emplace(std::string(*entry, static_cast<size_t>(equals - *entry)),
                      std::string(equals + 1));
  }
  return Environment(std::move(variables));
}

std::optional<std::string> Environment::get(const std::string& name) const {
  const auto it = variables_.find(name);
  if (it == variables_.end()) return std::nullopt;
  return it->second;
}

std::optional<std::string> Environment::get_nonempty(const std::string& name) const {
  auto value = get(name);
  if (value && value->empty()) return std::nullopt;
  return value;
}

void Environment::set(const std::string& name, std::string value) {
  variables_[name] = std::move(value);
}

void Environment::unset(const std::string& name) { variables_.erase(name); }

}  // namespace cudaenv
