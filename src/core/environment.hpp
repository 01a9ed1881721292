#pragma once
// The process environment, read once at start-up and passed down, so that domain code never calls
// getenv and tests can describe any environment as a value.

#include <map>
#include <optional>
#include <string>

namespace cudaenv {

class Environment {
 public:
  Environment() = default;
  explicit Environment(std::map<std::string, std::string> variables);
  static Environment from_process();

  std::optional<std::string> get(const std::string& name) const;
  // The value, or nullopt when the variable is unset or empty.
  std::optional<std::string> get_nonempty(const std::string& name) const;
  void set(const std::string& name, std::string value);
  void unset(const std::string& name);
  const std::map<std::string, std::string>& variables() const { return variables_; }

 private:
  std::map<std::string, std::string> variables_;
};

}  // namespace cudaenv
