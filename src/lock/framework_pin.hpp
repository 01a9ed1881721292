#pragma once
// Framework builds in the lock: the resolver knows release series ("torch 2.5, cu124"); the lock
// pins the exact wheel a package index offers ("2.5.1+cu124"). This part holds what a build asks
// of a wheel and how the index's files are matched against it; framework_index.hpp asks the index.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/version.hpp"
#include "fetch/simple_index.hpp"
#include "lock/lock_file.hpp"
#include "manifest/database.hpp"
#include "resolve/resolver.hpp"

namespace cudaenv::lock {

// What one framework build the resolver chose asks of the wheel the lock pins.
struct FrameworkRequirement {
  std::string name;     // as .cudaenv names it: "torch"
  std::string project;  // the distribution on the index: "torch", "tensorflow", "jax"
  // The release series the database knows (2.5; TensorFlow's tested 2.21.0); nullopt: any.
  std::optional<Version> series;
  // What .cudaenv asks of the framework's version (">=2.5.1"); nullopt: nothing more.
  std::optional<VersionSpec> spec;
  std::string local_tag;  // the build's local version label ("cu124"); empty: none
  // The index the pip line names (PyTorch's per-build index), or PyPI's when it names none.
  std::string index_url;
  std::vector<std::string> pip_args;  // after `pip install`; the requirement at requirement_at
  std::size_t requirement_at = 0;
  std::string requirement_head;  // what precedes "==" there: "tensorflow[and-cuda]"
};

// The requirement for a build the resolver chose; `asked` is what .cudaenv pins for it.
FrameworkRequirement requirement_for(const resolve::FrameworkChoice& choice,
                                     const manifest::Database& db,
                                     const std::optional<VersionSpec>& asked);

// A wheel's version split at its local label: "2.5.1+cu124" -> 2.5.1 and "cu124" (lower case).
// nullopt for pre-releases, post- and dev-releases and anything else that is not a final
// release of 1 to 4 numbers: pip installs those only when asked by name.
struct WheelVersion {
  Version release;
  std::string local_tag;
};
std::optional<WheelVersion> parse_wheel_version(std::string_view text);

// Whether `version` (exact, as a wheel names it) is one `requirement` accepts: a final release in
// its series, matching the .cudaenv spec, with exactly its local label (none when it has none).
bool satisfies(const FrameworkRequirement& requirement, std::string_view version);

// Whether a wheel with these platform tags installs on Linux x86-64: manylinux*_x86_64,
// linux_x86_64 (PyTorch's own index tags its builds so), or a pure-Python "any".
bool installs_on_linux_x86_64(const std::vector<std::string>& platform_tags);

// The newest version among `files` that `requirement` accepts and that has a Linux x86-64 wheel
// not yanked, with those wheels (by file name); nullopt when none has.
struct FrameworkPick {
  std::string version;  // "2.5.1+cu124"
  std::vector<LockedWheel> wheels;
};
std::optional<FrameworkPick> newest_fit(const FrameworkRequirement& requirement,
                                        const std::vector<fetch::IndexFile>& files);

// The distinct versions of the requirement's project with a Linux x86-64 wheel, newest first,
// at most `most`: what the index has, for an error that found nothing to pin.
std::vector<std::string> offered_versions(const FrameworkRequirement& requirement,
                                          const std::vector<fetch::IndexFile>& files,
                                          std::size_t most);

// "2.5.* with local tag +cu124", "2.21.0.*", "any release": what the requirement accepts.
std::string describe(const FrameworkRequirement& requirement);

// The pip line that installs exactly `version`, with the index flags the build's line has.
std::string pip_line_for(const FrameworkRequirement& requirement, const std::string& version);

// The lock's entry for a pick.
LockedFramework pinned(const FrameworkRequirement& requirement, const FrameworkPick& pick);

// `lock --check` asks no index: a locked framework is current while its exact version still
// satisfies the requirement and its index and pip line are the ones that version gets (a newer
// release upstream does not make it stale). `current` holds the locked entries of the wanted
// frameworks, to compare the rest of the lock with; `problems` one line per difference.
struct FrameworkCheck {
  std::map<std::string, LockedFramework> current;
  std::vector<std::string> problems;
};
FrameworkCheck check_frameworks(const std::map<std::string, LockedFramework>& locked,
                                const std::vector<FrameworkRequirement>& wanted);

}  // namespace cudaenv::lock
