#include "lock/framework_companion.hpp"

#include <algorithm>
#include <cctype>
#include <vector>

#include "core/text.hpp"
#include "install/wheels.hpp"

namespace cudaenv::lock {

namespace {

// A companion's METADATA read from the index: PEP 658's file is small; a wheel fetched whole
// for want of one must be small too (a large one is judged by its tags alone).
constexpr std::uint64_t max_metadata_bytes = std::uint64_t{1} << 20;
constexpr std::uint64_t max_whole_wheel_bytes = std::uint64_t{32} << 20;
// Versions whose METADATA is read per companion and index, newest first: a bound on the
// requests one lock makes however long the index's history.
constexpr std::size_t max_metadata_reads = 16;

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// The digits (and dots, with `dots`) right after `word` in `text`, first occurrence; "" none.
std::string number_after(std::string_view text, std::string_view word, bool dots) {
  for (auto at = text.find(word); at != std::string_view::npos; at = text.find(word, at + 1)) {
    auto end = at + word.size();
    while (end < text.size() && (is_digit(text[end]) || (dots && text[end] == '.'))) ++end;
    auto found = std::string(text.substr(at + word.size(), end - at - word.size()));
    while (!found.empty() && found.back() == '.') found.pop_back();
    if (!found.empty() && is_digit(found.front())) return found;
  }
  return "";
}

bool newer(const CompanionVersion& a, const CompanionVersion& b) {
  if (a.release != b.release) return a.release > b.release;
  return a.post > b.post;
}

std::string normalized_name(std::string_view name) { return fetch::normalize_project_name(name); }

// The index a companion's pip line names: torch's per-build one, or none (PyPI's).
FrameworkRequirement companion_requirement(const std::string& name, const std::string& index_url,
                                           const std::optional<VersionSpec>& spec) {
  FrameworkRequirement out;
  out.name = name;
  out.project = name;
  out.spec = spec;
  out.index_url = index_url;
  out.pip_args = {name};
  if (index_url != fetch::pypi_index_url)
    out.pip_args.insert(out.pip_args.end(), {"--index-url", index_url});
  out.requirement_head = name;
  return out;
}

// A specifier of Requires-Dist as VersionSpec reads it: "(>=2.5, <2.6)" -> ">=2.5,<2.6", local
// labels dropped ("==2.5.1+cu124" -> "==2.5.1"), "==2.5.*" -> the prefix "2.5".
std::optional<VersionSpec> specifier(std::string_view text) {
  std::string compact;
  for (const char c : text)
    if (c != ' ' && c != '(' && c != ')') compact += c;
  std::vector<std::string> clauses;
  for (auto clause : text::split(compact, ',')) {
    clause = clause.substr(0, clause.find('+'));
    if (text::starts_with(clause, "==") && text::ends_with(clause, ".*"))
      clause = clause.substr(2, clause.size() - 4);
    if (text::starts_with(clause, "~=") || text::starts_with(clause, "===")) return std::nullopt;
    clauses.push_back(clause);
  }
  auto spec = VersionSpec::parse(text::join(clauses, ","));
  if (!spec) return std::nullopt;
  return *spec;
}

struct Candidate {
  CompanionVersion parsed;
  std::string version;                  // as the index names it
  std::vector<fetch::IndexFile> files;  // its Linux x86-64 wheels, by file name
};

// The index's versions of `project` with a Linux x86-64 wheel, newest first. Grouped through a
// map: a page may list up to fetch::max_index_files files, each its own version.
std::vector<Candidate> candidates(const std::vector<fetch::IndexFile>& files,
                                  const std::string& project) {
  std::map<std::string, Candidate> by_version;
  for (const auto& file : files) {
    const auto wheel = install::parse_wheel_name(file.filename);
    // An empty url: the index linked the file through a scheme it may not use (file://).
    if (!wheel || file.yanked || file.url.empty() || wheel->project != normalized_name(project) ||
        !installs_on_linux_x86_64(wheel->platforms))
      continue;
    const auto parsed = parse_companion_version(wheel->version);
    if (!parsed) continue;
    auto same = by_version.try_emplace(wheel->version, Candidate{*parsed, wheel->version, {}});
    same.first->second.files.push_back(file);
  }
  std::vector<Candidate> out;
  out.reserve(by_version.size());
  for (auto& [version, candidate] : by_version) {
    std::sort(candidate.files.begin(), candidate.files.end(),
              [](const auto& a, const auto& b) { return a.filename < b.filename; });
    out.push_back(std::move(candidate));
  }
  std::stable_sort(out.begin(), out.end(), [](const Candidate& a, const Candidate& b) {
    return newer(a.parsed, b.parsed);
  });
  return out;
}

// The wheel's METADATA: PEP 658's "<url>.metadata", else the wheel itself when it is small
// (checked against the digest the index lists); nullopt when neither can be had.
Result<std::optional<std::string>> metadata_of(const fetch::IndexFile& file,
                                               const fetch::FetchOptions& fetch) {
  auto options = fetch;
  options.max_document_bytes = max_metadata_bytes;
  options.accept.clear();
  long status = 0;
  auto metadata = fetch::fetch_text(file.url + ".metadata", options, &status);
  if (metadata) return std::optional<std::string>(std::move(*metadata));
  if (status != 404) return metadata.error();
  if (file.size == 0 || file.size > max_whole_wheel_bytes) return std::optional<std::string>();
  options.max_document_bytes = max_whole_wheel_bytes;
  auto wheel = fetch::fetch_text(file.url, options);
  if (!wheel) return wheel.error();
  if (!file.sha256.empty() && fetch::sha256_of(*wheel) != file.sha256)
    return make_error(ErrorKind::integrity,
                      text::printable(file.filename) +
                          ": the index's digest does not match the "
                          "wheel it serves",
                      "ask the index's owner; nothing was locked");
  auto text = install::wheel_metadata(*wheel, file.filename);
  if (!text) return text.error();
  return std::optional<std::string>(std::move(*text));
}

std::string torch_shown(const TorchBuild& torch) {
  return "torch " + torch.release.str() + (torch.cuda_tag.empty() ? "" : "+" + torch.cuda_tag);
}

// What one index offers a companion: the newest fitting build its spec matches, else the newest
// fitting build at all, and the newest versions there.
struct IndexAnswer {
  std::optional<Candidate> pick;
  std::optional<Candidate> nearest;
  std::vector<std::string> offered;
};

// A METADATA that could not be had stops the lock, naming the companion and the build it judged;
// an unreachable index is told to point at a mirror, as for its project page.
Error metadata_failure(const std::string& name, const Candidate& candidate, const Error& error) {
  auto out = error.with_context(name + ": the METADATA of " + name + " " +
                                text::printable(candidate.version));
  if (error.kind == ErrorKind::network)
    out.hint =
        "point the index at a mirror this machine reaches (docs/lockfile.md, Mirrors), then run "
        "cudaenv lock again";
  return out;
}

Result<IndexAnswer> ask_index(const std::string& name, const VersionSpec& spec,
                              const std::vector<fetch::IndexFile>& files, const TorchBuild& torch,
                              bool from_build_index, const fetch::FetchOptions& fetch) {
  IndexAnswer out;
  std::size_t reads = 0;
  for (const auto& candidate : candidates(files, name)) {
    if (out.offered.size() < 6) out.offered.push_back(text::printable(candidate.version));
    const bool wanted = spec.matches(candidate.parsed.release);
    if (out.pick || (!wanted && out.nearest)) continue;
    const auto tags = tag_fit(candidate.parsed.local_tag, torch);
    if ((tags.names_cuda && !tags.cuda_agrees) || (tags.names_torch && !tags.torch_agrees) ||
        (!tags.names_cuda && !from_build_index) || reads == max_metadata_reads)
      continue;
    ++reads;
    auto metadata = metadata_of(candidate.files.front(), fetch);
    if (!metadata) return metadata_failure(name, candidate, metadata.error());
    const auto requirement = *metadata ? torch_requirement(**metadata) : TorchRequirement{};
    if (!fits_torch(tags, requirement, torch, from_build_index)) continue;
    if (wanted) out.pick = candidate;
    if (!out.nearest) out.nearest = candidate;
  }
  return out;
}

Error nothing_fits(const std::string& name, const VersionSpec& spec, const TorchBuild& torch,
                   const std::string& where, const IndexAnswer& answer) {
  const auto what = name + ": no build of " + name + " " +
                    (spec.is_latest() ? std::string("(any version)") : spec.str()) + " for " +
                    torch_shown(torch) + " on " + where;
  if (answer.nearest) {
    const auto& release = answer.nearest->parsed.release;
    const auto series = release.size() >= 2 ? std::to_string(release.major()) + "." +
                                                  std::to_string(release.minor())
                                            : release.str();
    return make_error(
        ErrorKind::not_found,
        what + "; the nearest that fits is " + text::printable(answer.nearest->version),
        "write " + name + " = \"" + series +
            "\" under [frameworks] in .cudaenv, then run cudaenv lock again");
  }
  return make_error(
      ErrorKind::not_found,
      what + (answer.offered.empty() ? ": it has no Linux x86-64 wheel of " + name
                                     : "; newest there: " + text::join(answer.offered, ", ") +
                                           " (built for another torch or CUDA)"),
      "pin torch under [frameworks] to a release " + name + " is built for, or remove " + name +
          " from [frameworks]");
}

std::string index_shown(const std::string& url, const std::string& origin) {
  return "the index " + text::printable(url, text::message_limit) +
         (origin.empty() ? "" : " (" + origin + ")");
}

Result<LockedFramework> lock_one(const std::string& name, const VersionSpec& spec,
                                 const TorchBuild& torch, const FrameworkIndexes& indexes) {
  std::vector<std::string> tried;
  std::optional<Error> failure;
  // Torch's own per-build index first (it holds xformers for cu124), then PyPI.
  std::vector<std::string> order;
  if (torch.index_url != fetch::pypi_index_url) order.push_back(torch.index_url);
  order.emplace_back(fetch::pypi_index_url);
  for (const auto& index : order) {
    const auto requirement = companion_requirement(name, index, spec);
    const auto url = lookup_url(requirement, indexes);
    const bool pypi = index == fetch::pypi_index_url;
    const auto where = index_shown(
        url, pypi ? indexes.pypi_origin
                  : (indexes.build_index_base.empty() ? "" : indexes.build_index_origin));
    tried.push_back(where);
    auto files = fetch::fetch_project_files(url, name, indexes.fetch);
    if (!files && files.error().kind == ErrorKind::not_found) continue;
    if (!files)
      return make_error(files.error().kind,
                        name + ": cannot read " + where + ": " + files.error().message,
                        "point the index at a mirror this machine reaches (docs/lockfile.md, "
                        "Mirrors), then run cudaenv lock again");
    auto answer = ask_index(name, spec, *files, torch, !pypi, indexes.fetch);
    if (!answer) return answer.error();
    if (answer->pick) {
      FrameworkPick pick{answer->pick->version, {}};
      for (const auto& file : answer->pick->files)
        pick.wheels.push_back({file.filename, file.sha256});
      auto entry = pinned(requirement, pick);
      entry.companion_of = companion_framework;
      return entry;
    }
    if (!failure || answer->nearest) failure = nothing_fits(name, spec, torch, where, *answer);
  }
  if (failure) return *failure;
  return make_error(
      ErrorKind::not_found,
      name + ": no index has the project " + name + " (asked " + text::join(tried, " and ") + ")",
      "check the name as PyPI spells it, or remove " + name + " from [frameworks]");
}

}  // namespace

std::optional<CompanionVersion> parse_companion_version(std::string_view text) {
  const auto plus = text.find('+');
  auto head = text.substr(0, plus);
  CompanionVersion out{};
  if (const auto post = head.find(".post"); post != std::string_view::npos) {
    const auto digits = head.substr(post + 5);
    if (digits.empty() || digits.size() > 6 || !std::all_of(digits.begin(), digits.end(), is_digit))
      return std::nullopt;
    out.post = std::stoi(std::string(digits));
    head = head.substr(0, post);
  }
  const auto release = Version::parse(head);
  if (!release || head.empty() || !is_digit(head.front())) return std::nullopt;
  out.release = *release;
  if (plus == std::string_view::npos) return out;
  out.local_tag = lower(text.substr(plus + 1));
  const bool label_ok =
      !out.local_tag.empty() && std::all_of(out.local_tag.begin(), out.local_tag.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.';
      });
  if (!label_ok) return std::nullopt;
  return out;
}

std::optional<TorchBuild> torch_build(const LockedFramework& torch) {
  const auto parsed = parse_wheel_version(torch.version);
  if (!parsed) return std::nullopt;
  return TorchBuild{parsed->release, parsed->local_tag, torch.index_url};
}

TagFit tag_fit(std::string_view local_tag, const TorchBuild& torch) {
  TagFit out;
  const auto cuda = number_after(local_tag, "cu", false);
  out.names_cuda = !cuda.empty();
  const auto locked_cuda = number_after(torch.cuda_tag, "cu", false);
  // "cu124" names the build; "cu12" the CUDA major, as flash-attn's wheels do.
  out.cuda_agrees = out.names_cuda && !locked_cuda.empty() &&
                    (cuda == locked_cuda ||
                     (cuda.size() < locked_cuda.size() && text::starts_with(locked_cuda, cuda) &&
                      cuda.size() == locked_cuda.size() - 1));
  const auto named_torch = number_after(local_tag, "torch", true);
  out.names_torch = !named_torch.empty();
  const auto version = Version::parse(named_torch);
  out.torch_agrees = version && torch.release.has_prefix(*version);
  return out;
}

TorchRequirement torch_requirement(std::string_view metadata) {
  TorchRequirement out;
  for (const auto& line : text::lines(metadata)) {
    if (!text::starts_with(line, "Requires-Dist:")) continue;
    const auto requirement = text::trim(std::string_view(line).substr(14));
    const auto semicolon = requirement.find(';');
    if (semicolon != std::string_view::npos &&
        requirement.substr(semicolon).find("extra") != std::string_view::npos)
      continue;  // an optional dependency
    const auto head = requirement.substr(0, semicolon);
    std::size_t end = 0;
    while (end < head.size() && (std::isalnum(static_cast<unsigned char>(head[end])) != 0 ||
                                 head[end] == '-' || head[end] == '_' || head[end] == '.'))
      ++end;
    if (normalized_name(head.substr(0, end)) != "torch") continue;
    auto rest = text::trim(head.substr(end));
    if (!rest.empty() && rest.front() == '[') rest = text::trim(rest.substr(rest.find(']') + 1));
    out.present = true;
    if (rest.empty()) continue;
    auto spec = specifier(rest);
    if (!spec) {
      out.readable = false;
      continue;
    }
    out.spec = spec;
  }
  return out;
}

bool fits_torch(const TagFit& tags, const TorchRequirement& requirement, const TorchBuild& torch,
                bool from_build_index) {
  if (tags.names_cuda ? !tags.cuda_agrees : !from_build_index) return false;
  if (tags.names_torch && !tags.torch_agrees) return false;
  if (!requirement.readable) return false;
  if (requirement.spec && !requirement.spec->matches(torch.release)) return false;
  return tags.names_torch || requirement.spec.has_value();
}

Result<std::map<std::string, LockedFramework>> lock_companions(
    const std::map<std::string, VersionSpec>& asked,
    const std::map<std::string, LockedFramework>& locked, const FrameworkIndexes& indexes) {
  std::map<std::string, LockedFramework> out;
  if (asked.empty()) return out;
  const auto torch = locked.find(companion_framework);
  const auto build = torch == locked.end() ? std::nullopt : torch_build(torch->second);
  if (!build)
    return make_error(ErrorKind::usage,
                      asked.begin()->first +
                          ": a companion wheel is locked for the torch it extends, and the lock "
                          "has no torch",
                      "add torch under [frameworks] in .cudaenv (torch = \"2.5\"), then run "
                      "cudaenv lock again");
  for (const auto& [name, spec] : asked) {
    auto entry = lock_one(name, spec, *build, indexes);
    if (!entry) return entry.error();
    out.emplace(name, std::move(*entry));
  }
  return out;
}

FrameworkCheck check_companions(const std::map<std::string, LockedFramework>& locked,
                                const std::map<std::string, VersionSpec>& asked) {
  FrameworkCheck out;
  const auto torch = locked.find(companion_framework);
  const auto build = torch == locked.end() ? std::nullopt : torch_build(torch->second);
  for (const auto& [name, spec] : asked) {
    const auto at = "frameworks." + name;
    const auto it = locked.find(name);
    if (it == locked.end() || it->second.companion_of != companion_framework) {
      out.problems.push_back(at + ": wanted now as a companion of torch, not in the lock");
      continue;
    }
    const auto& entry = it->second;
    out.current.emplace(name, entry);
    const auto shown = "\"" + text::printable(entry.version) + "\"";
    const auto parsed = parse_companion_version(entry.version);
    if (!parsed || !spec.matches(parsed->release)) {
      out.problems.push_back(at + ".version: the lock has " + shown + ", now " +
                             (spec.is_latest() ? std::string("any release") : spec.str()));
      continue;
    }
    const auto tags = build ? tag_fit(parsed->local_tag, *build) : TagFit{};
    if (!build || (tags.names_cuda && !tags.cuda_agrees) ||
        (tags.names_torch && !tags.torch_agrees)) {
      out.problems.push_back(at + ".version: the lock has " + shown + ", not a build for " +
                             (build ? torch_shown(*build) : std::string("the locked torch")));
      continue;
    }
    if (entry.index_url != fetch::pypi_index_url && entry.index_url != build->index_url)
      out.problems.push_back(at + ".index_url: the lock has \"" +
                             text::printable(entry.index_url, text::message_limit) +
                             "\", now torch's index or PyPI's");
    const auto pip =
        pip_line_for(companion_requirement(name, entry.index_url, spec), entry.version);
    if (entry.pip != pip)
      out.problems.push_back(at + ".pip: the lock has \"" +
                             text::printable(entry.pip, text::message_limit) + "\", now \"" + pip +
                             "\"");
  }
  return out;
}

}  // namespace cudaenv::lock
