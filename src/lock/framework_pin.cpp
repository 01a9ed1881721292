#include "lock/framework_pin.hpp"

#include <algorithm>
#include <cctype>
#include <map>

#include "core/text.hpp"
#include "install/wheels.hpp"
#include "resolve/pip_lines.hpp"

namespace cudaenv::lock {

namespace {

// Frameworks whose build rank is their own release series: JAX's is the CUDA major of its
// plugin, and its .cudaenv pin names that major too, not a JAX version.
bool ranked_by_release(const std::string& name) { return name == "torch" || name == "tensorflow"; }

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// PyTorch's index for a build (https://download.pytorch.org/whl/cu124), from the database.
std::string torch_index(const resolve::FrameworkChoice& choice, const manifest::Database& db) {
  for (const auto& release : db.pytorch) {
    if (release.version != choice.rank) continue;
    auto index = release.index_url;
    if (const auto at = index.find("{tag}"); at != std::string::npos)
      index.replace(at, 5, choice.variant);
    return index;
  }
  return "";
}

// The position of the requirement among pip's arguments: the first that is neither a flag nor
// a flag's value.
std::size_t requirement_position(const std::vector<std::string>& args) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--index-url" || args[i] == "--extra-index-url") {
      ++i;
      continue;
    }
    if (!text::starts_with(args[i], "-")) return i;
  }
  return args.size();
}

// The version text of a wheel of `project` that installs on Linux x86-64, if `file` is one.
std::optional<std::string> linux_wheel_version(const fetch::IndexFile& file,
                                               const std::string& project) {
  const auto wheel = install::parse_wheel_name(file.filename);
  if (!wheel || file.yanked || wheel->project != fetch::normalize_project_name(project) ||
      !installs_on_linux_x86_64(wheel->platforms))
    return std::nullopt;
  return wheel->version;
}

}  // namespace

FrameworkRequirement requirement_for(const resolve::FrameworkChoice& choice,
                                     const manifest::Database& db,
                                     const std::optional<VersionSpec>& asked) {
  FrameworkRequirement out;
  out.name = choice.name;
  out.pip_args = choice.pip_args;
  out.requirement_at = requirement_position(out.pip_args);
  if (out.requirement_at == out.pip_args.size()) out.pip_args.push_back(choice.name);
  const auto& requirement = out.pip_args[out.requirement_at];
  out.requirement_head = requirement.substr(0, requirement.find("=="));
  out.project = out.requirement_head.substr(0, out.requirement_head.find('['));
  if (ranked_by_release(choice.name)) {
    out.series = choice.rank;
    out.spec = asked;
  }
  out.index_url = fetch::pypi_index_url;
  const auto flag = std::find(out.pip_args.begin(), out.pip_args.end(), "--index-url");
  if (flag != out.pip_args.end() && flag + 1 != out.pip_args.end()) {
    out.index_url = *(flag + 1);
  } else if (choice.name == "torch") {
    // The build PyPI serves by default carries no local tag there; its own index names it, so
    // the lock pins the build itself, not whichever one PyPI serves.
    if (auto index = torch_index(choice, db); !index.empty()) {
      out.pip_args.insert(out.pip_args.end(), {"--index-url", index});
      out.index_url = index;
    }
  }
  // A build's own index tags its wheels with the build ("+cu124"); PyPI allows no local tags.
  if (out.index_url != fetch::pypi_index_url) out.local_tag = lower(choice.variant);
  return out;
}

std::optional<WheelVersion> parse_wheel_version(std::string_view text) {
  const auto plus = text.find('+');
  const auto release = Version::parse(text.substr(0, plus));
  if (!release || text.empty() || !std::isdigit(static_cast<unsigned char>(text.front())))
    return std::nullopt;
  WheelVersion out{*release, ""};
  if (plus == std::string_view::npos) return out;
  out.local_tag = lower(text.substr(plus + 1));
  const bool label_ok =
      !out.local_tag.empty() && std::all_of(out.local_tag.begin(), out.local_tag.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.';
      });
  if (!label_ok) return std::nullopt;
  return out;
}

bool satisfies(const FrameworkRequirement& requirement, std::string_view version) {
  const auto parsed = parse_wheel_version(version);
  if (!parsed || parsed->local_tag != requirement.local_tag) return false;
  if (requirement.series && !parsed->release.has_prefix(*requirement.series)) return false;
  return !requirement.spec || requirement.spec->matches(parsed->release);
}

bool installs_on_linux_x86_64(const std::vector<std::string>& platform_tags) {
  return std::any_of(platform_tags.begin(), platform_tags.end(), [](const std::string& tag) {
    return tag == "any" || tag == "linux_x86_64" ||
           (text::starts_with(tag, "manylinux") && text::ends_with(tag, "_x86_64"));
  });
}

std::optional<FrameworkPick> newest_fit(const FrameworkRequirement& requirement,
                                        const std::vector<fetch::IndexFile>& files) {
  std::optional<WheelVersion> best;
  std::string best_text;
  for (const auto& file : files) {
    const auto version = linux_wheel_version(file, requirement.project);
    if (!version || !satisfies(requirement, *version)) continue;
    const auto parsed = parse_wheel_version(*version);
    if (!best || parsed->release > best->release) {
      best = parsed;
      best_text = *version;
    }
  }
  if (!best) return std::nullopt;
  FrameworkPick pick{best_text, {}};
  for (const auto& file : files) {
    const auto version = linux_wheel_version(file, requirement.project);
    if (version && *version == best_text) pick.wheels.push_back({file.filename, file.sha256});
  }
  std::sort(pick.wheels.begin(), pick.wheels.end(),
            [](const auto& a, const auto& b) { return a.filename < b.filename; });
  return pick;
}

std::vector<std::string> offered_versions(const FrameworkRequirement& requirement,
                                          const std::vector<fetch::IndexFile>& files,
                                          std::size_t most) {
  std::vector<std::pair<Version, std::string>> found;
  for (const auto& file : files) {
    const auto version = linux_wheel_version(file, requirement.project);
    const auto parsed = version ? parse_wheel_version(*version) : std::nullopt;
    if (!parsed) continue;
    if (std::none_of(found.begin(), found.end(),
                     [&](const auto& f) { return f.second == *version; }))
      found.emplace_back(parsed->release, *version);
  }
  std::stable_sort(found.begin(), found.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::string> out;
  for (const auto& [release, shown] : found) {
    if (out.size() == most) break;
    out.push_back(text::printable(shown));
  }
  return out;
}

std::string describe(const FrameworkRequirement& requirement) {
  std::string out = requirement.series ? requirement.series->str() + ".*" : "any release";
  if (requirement.spec && !requirement.spec->is_latest() &&
      (!requirement.series || requirement.spec->str() != requirement.series->str()))
    out += " (" + requirement.spec->str() + ")";
  if (!requirement.local_tag.empty()) out += " with local tag +" + requirement.local_tag;
  return out;
}

namespace {

std::vector<std::string> pip_args_for(const FrameworkRequirement& requirement,
                                      const std::string& version) {
  auto args = requirement.pip_args;
  args[requirement.requirement_at] = requirement.requirement_head + "==" + version;
  return args;
}

}  // namespace

std::string pip_line_for(const FrameworkRequirement& requirement, const std::string& version) {
  return resolve::pip_command(pip_args_for(requirement, version), resolve::PipTool::pip);
}

LockedFramework pinned(const FrameworkRequirement& requirement, const FrameworkPick& pick) {
  return {pick.version, requirement.index_url, pip_line_for(requirement, pick.version), pick.wheels,
          pip_args_for(requirement, pick.version)};
}

FrameworkCheck check_frameworks(const std::map<std::string, LockedFramework>& locked,
                                const std::vector<FrameworkRequirement>& wanted) {
  FrameworkCheck out;
  for (const auto& requirement : wanted) {
    const auto at = "frameworks." + requirement.name;
    const auto it = locked.find(requirement.name);
    if (it == locked.end()) {
      out.problems.push_back(at + ": wanted now, not in the lock");
      continue;
    }
    const auto& entry = it->second;
    out.current.emplace(requirement.name, entry);
    const auto shown = "\"" + text::printable(entry.version) + "\"";
    if (!satisfies(requirement, entry.version)) {
      out.problems.push_back(at + ".version: the lock has " + shown + ", now an exact release of " +
                             describe(requirement));
      continue;
    }
    if (entry.index_url != requirement.index_url)
      out.problems.push_back(at + ".index_url: the lock has \"" + text::printable(entry.index_url) +
                             "\", now \"" + requirement.index_url + "\"");
    const auto pip = pip_line_for(requirement, entry.version);
    if (entry.pip != pip)
      out.problems.push_back(at + ".pip: the lock has \"" +
                             text::printable(entry.pip, text::message_limit) + "\", now \"" + pip +
                             "\"");
  }
  return out;
}

}  // namespace cudaenv::lock
