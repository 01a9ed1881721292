#include "project/targets.hpp"

#include <algorithm>
#include <cctype>

#include "core/text.hpp"
#include "core/untrusted.hpp"
#include "project/project_file.hpp"
#include "project/schema.hpp"

namespace cudaenv::project {

namespace {

Error target_error(const std::string& path, std::size_t line, const std::string& problem,
                   const std::string& hint) {
  return make_error(ErrorKind::usage, path + ":" + std::to_string(line) + ": " + problem, hint);
}

bool is_target_name(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_';
  });
}

// clang-format off
const char* const example_target =
    "[targets.a100] with driver = \"535.104.05\" and arch = [\"8.0\"] (or gpu = \"A100\")";
// clang-format on

Result<Version> target_driver(const toml::table& table, const std::string& where, std::size_t line,
                              const std::string& path) {
  const auto* node = table.get("driver");
  if (node == nullptr)
    return target_error(path, line, where + " has no driver",
                        "add driver = \"535.104.05\" (the oldest driver on those machines)");
  // A version ("535.104.05"), or a branch ("580", also unquoted): that branch's drivers, which
  // `lock` reads as the branch's lowest release the database knows.
  auto value = node->value<std::string>();
  if (!value) {
    if (const auto branch = node->value<std::int64_t>(); branch && *branch > 0 && *branch < 10000)
      value = std::to_string(*branch);
  }
  const auto driver = value ? Version::parse(*value) : std::nullopt;
  if (!driver || driver->size() > 3 || driver->major() < 100)
    return target_error(path, node->source().begin.line,
                        where +
                            ".driver must be a driver version such as \"535.104.05\" or a "
                            "branch such as \"580\"",
                        "write driver = \"535.104.05\" (nvidia-smi prints it) or the branch, "
                        "driver = \"580\"");
  return *driver;
}

// A compute capability as "8.0": a major and a minor, nothing else.
std::optional<Version> arch_value(const toml::node& node) {
  const auto value = node.value<std::string>();
  if (!value) return std::nullopt;
  auto arch = Version::parse(*value);
  if (!arch || arch->size() != 2 || text::starts_with(*value, "v") ||
      text::starts_with(*value, "V"))
    return std::nullopt;
  return arch;
}

const char* const arch_hint =
    "write arch = [\"8.0\"] (the compute capabilities of those GPUs) or gpu = \"A100\" (their "
    "model)";

// `arch`: one compute capability or a list of them; absent: none (the target names its GPUs).
Result<std::vector<Version>> target_archs(const toml::table& table, const std::string& where,
                                          const std::string& path) {
  const auto* node = table.get("arch");
  if (node == nullptr) return std::vector<Version>{};
  const auto at = node->source().begin.line;
  if (node->is_string()) {  // one architecture: arch = "9.0"
    if (auto arch = arch_value(*node)) return std::vector<Version>{*arch};
    return target_error(path, at, where + ".arch must be a compute capability such as \"8.0\"",
                        arch_hint);
  }
  const auto* list = node->as_array();
  if (list == nullptr || list->empty())
    return target_error(path, at, where + ".arch must be a list of compute capabilities",
                        arch_hint);
  std::vector<Version> archs;
  for (const auto& item : *list) {
    auto arch = arch_value(item);
    if (!arch)
      return target_error(path, at,
                          where +
                              ".arch: each entry must be a quoted compute capability such as "
                              "\"8.0\"",
                          arch_hint);
    if (std::find(archs.begin(), archs.end(), *arch) == archs.end()) archs.push_back(*arch);
  }
  std::sort(archs.begin(), archs.end());
  return archs;
}

// `gpu`: one GPU model or a list of them, as names (the database maps them to architectures).
Result<std::vector<std::string>> target_gpus(const toml::table& table, const std::string& where,
                                             const std::string& path) {
  std::vector<std::string> gpus;
  const auto* node = table.get("gpu");
  if (node == nullptr) return gpus;
  const auto at = node->source().begin.line;
  const auto problem = where + ".gpu must be a GPU model such as \"H100\" or a list of them";
  const auto take = [&](const toml::node& item) {
    const auto name = item.value<std::string>();
    if (!name || !untrusted::is_valid(untrusted::Field::gpu_model, *name)) return false;
    if (std::find(gpus.begin(), gpus.end(), *name) == gpus.end()) gpus.push_back(*name);
    return true;
  };
  if (node->is_string()) {
    if (!take(*node)) return target_error(path, at, problem, arch_hint);
    return gpus;
  }
  const auto* list = node->as_array();
  if (list == nullptr || list->empty()) return target_error(path, at, problem, arch_hint);
  for (const auto& item : *list) {
    if (!take(item)) return target_error(path, at, problem, arch_hint);
  }
  return gpus;
}

Result<DeclaredTarget> one_target(std::string_view name, const toml::node& node,
                                  const std::string& path) {
  const auto line = node.source().begin.line;
  const auto where = "targets." + text::printable(name);
  if (!is_target_name(name))
    return target_error(
        path, line,
        "target name \"" + text::printable(name) + "\" must be letters, digits, '-' or '_'",
        "rename it, e.g. [targets.a100]");
  const auto* table = node.as_table();
  if (table == nullptr)
    return target_error(path, line, where + " must be a table",
                        std::string("write ") + example_target);
  auto driver = target_driver(*table, where, line, path);
  if (!driver) return driver.error();
  auto archs = target_archs(*table, where, path);
  if (!archs) return archs.error();
  auto gpus = target_gpus(*table, where, path);
  if (!gpus) return gpus.error();
  if (archs->empty() && gpus->empty())
    return target_error(path, line, where + " has no arch and no gpu", arch_hint);
  DeclaredTarget target;
  target.name = std::string(name);
  target.driver = *driver;
  target.archs = std::move(*archs);
  target.gpus = std::move(*gpus);
  target.line = line;
  if (const auto* gpu = table->get("gpu")) target.gpu_line = gpu->source().begin.line;
  return target;
}

}  // namespace

Result<std::vector<DeclaredTarget>> targets_in(const toml::table& root, const std::string& path) {
  std::vector<DeclaredTarget> targets;
  const auto* node = root.get("targets");
  if (node == nullptr) return targets;
  const auto* table = node->as_table();
  if (table == nullptr)
    return target_error(path, node->source().begin.line, "targets must be a table",
                        std::string("write ") + example_target);
  for (const auto& [name, entry] : *table) {
    auto target = one_target(name.str(), entry, path);
    if (!target) return target.error();
    targets.push_back(std::move(*target));
  }
  std::stable_sort(targets.begin(), targets.end(),
                   [](const auto& a, const auto& b) { return a.line < b.line; });
  return targets;
}

Result<std::vector<DeclaredTarget>> parse_targets(std::string_view text, const std::string& path) {
  auto file = parse_project_file(text, path);
  if (!file) return file.error();
  return std::move(file->targets);
}

Result<std::vector<DeclaredTarget>> read_targets(const std::filesystem::path& project_file) {
  auto file = read_project_file(project_file);
  if (!file) return file.error();
  return std::move(file->targets);
}

const DeclaredTarget* find_target(const std::vector<DeclaredTarget>& targets,
                                  std::string_view name) {
  for (const auto& target : targets) {
    if (target.name == name) return &target;
  }
  return nullptr;
}

Result<const DeclaredTarget*> require_target(const std::vector<DeclaredTarget>& targets,
                                             std::string_view name, const std::string& shown) {
  if (const auto* target = find_target(targets, name)) return target;
  std::vector<std::string> names;
  for (const auto& declared : targets) names.push_back(declared.name);
  return make_error(ErrorKind::not_found,
                    "--target: " + shown + " declares no target \"" + text::printable(name) + "\"",
                    names.empty() ? "declare one: [targets.a100] with driver = \"535.104.05\" "
                                    "and arch = [\"8.0\"]"
                                  : "its targets: " + text::join(names, ", "));
}

namespace {

// What keeps this machine out of `target`, the more serious first; empty when nothing does.
std::vector<std::string> misses(const DeclaredTarget& target, const std::optional<Version>& driver,
                                const std::vector<Version>& gpus) {
  std::vector<std::string> out;
  auto archs = target.archs_known() ? gpus : std::vector<Version>{};  // unknown: driver alone
  // Eight identical GPUs miss one arch, said once.
  std::sort(archs.begin(), archs.end());
  archs.erase(std::unique(archs.begin(), archs.end()), archs.end());
  for (const auto& gpu : archs) {
    if (std::find(target.archs.begin(), target.archs.end(), gpu) == target.archs.end())
      out.push_back("its arch list has no " + gpu.str());
  }
  if (!driver || *driver < target.driver)
    out.push_back("driver " + (driver ? driver->str() : std::string("none")) +
                  " is below its floor " + target.driver.str());
  return out;
}

}  // namespace

const DeclaredTarget* lowest_floor_above(const std::vector<DeclaredTarget>& targets,
                                         const Version& driver) {
  const DeclaredTarget* lowest = nullptr;
  for (const auto& target : targets) {
    if (!(driver < target.driver)) return nullptr;  // some target's floor is met
    if (lowest == nullptr || target.driver < lowest->driver) lowest = &target;
  }
  return lowest;
}

std::string driver_below_targets_note(const std::vector<DeclaredTarget>& targets,
                                      const Version& driver, const std::string& file) {
  const auto* lowest = lowest_floor_above(targets, driver);
  if (lowest == nullptr) return "";
  return "this machine's driver " + driver.str() + " is below the floor of every target " + file +
         " declares; the closest is " + lowest->name + " (driver >= " + lowest->driver.str() + ")";
}

std::string target_mismatch_note(const std::vector<DeclaredTarget>& targets, const Version& driver,
                                 const std::vector<Version>& gpus, const std::string& file) {
  if (gpus.empty()) return driver_below_targets_note(targets, driver, file);
  const auto match = match_target(targets, driver, gpus);
  if (match.match != nullptr || match.closest == nullptr) return "";
  // Target names and the reasons that quote them come from the .cudaenv: escaped for the terminal.
  return "this machine matches none of the targets " + file + " declares; the closest is " +
         text::printable(match.closest->name) + ": " +
         text::printable(match.why, text::message_limit);
}

TargetMatch match_target(const std::vector<DeclaredTarget>& targets,
                         const std::optional<Version>& driver, const std::vector<Version>& gpus) {
  TargetMatch result;
  if (targets.empty() || gpus.empty()) return result;
  // A GPU whose architecture a target does not list weighs more than a driver below its floor:
  // the locked builds may carry no code for that GPU at all.
  std::size_t lowest = 0;
  for (const auto& target : targets) {
    const auto missed = misses(target, driver, gpus);
    if (missed.empty()) return {&target, nullptr, ""};
    const bool driver_missed = text::contains(missed.back(), " is below its floor ");
    const auto weight = 2 * missed.size() - (driver_missed ? 1 : 0);
    if (result.closest != nullptr && weight >= lowest) continue;
    result.closest = &target;
    result.why = text::join(missed, ", ");
    lowest = weight;
  }
  return result;
}

std::string gpu_key(std::string_view name) {
  std::string key;
  for (const auto& word : text::split_whitespace(name)) {
    std::string upper;
    for (const char c : word) {
      if (std::isalnum(static_cast<unsigned char>(c)) != 0)
        upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      else if (c != '-' && c != '_' && c != '.' && c != '/')
        upper += c;
    }
    if (upper != "NVIDIA" && upper != "GEFORCE" && upper != "TESLA") key += upper;
  }
  return key;
}

namespace {

const Version* known_arch(std::string_view name, const KnownGpus& known) {
  const auto key = gpu_key(name);
  for (const auto& [model, arch] : known) {
    if (gpu_key(model) == key) return &arch;
  }
  return nullptr;
}

// The known names nearest `name` (a typo's distance or less), for "did you mean".
std::vector<std::string> nearest_gpus(std::string_view name, const KnownGpus& known) {
  const auto key = gpu_key(name);
  const std::size_t limit = std::max<std::size_t>(1, std::min<std::size_t>(2, key.size() / 3));
  std::size_t best = limit + 1;
  std::vector<std::string> found;
  for (const auto& [model, arch] : known) {
    const auto distance = edit_distance(key, gpu_key(model));
    if (distance > best) continue;
    if (distance < best) found.clear();
    best = distance;
    found.push_back("\"" + model + "\"");
  }
  return found;
}

}  // namespace

Status name_gpu_archs(std::vector<DeclaredTarget>& targets, const KnownGpus& known,
                      const std::string& path) {
  for (auto& target : targets) {
    for (const auto& name : target.gpus) {
      const auto* arch = known_arch(name, known);
      if (arch == nullptr) {
        const auto close = nearest_gpus(name, known);
        return target_error(
            path, target.gpu_line,
            "targets." + text::printable(target.name) + ".gpu: the database knows no GPU \"" +
                text::printable(name) + "\"" +
                (close.empty() ? std::string()
                               : "; did you mean " + text::join(close, " or ") + "?"),
            "write its compute capability instead, arch = [\"8.0\"] (nvidia-smi "
            "--query-gpu=name,compute_cap prints it), or update the database: cudaenv db update");
      }
      if (std::find(target.archs.begin(), target.archs.end(), *arch) == target.archs.end())
        target.archs.push_back(*arch);
    }
    std::sort(target.archs.begin(), target.archs.end());
    target.gpus_named = true;
  }
  return Ok{};
}

std::string arch_digits(const Version& arch) {
  return std::to_string(arch.major()) + std::to_string(arch.minor());
}

}  // namespace cudaenv::project
