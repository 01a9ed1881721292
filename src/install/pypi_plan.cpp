#include "install/pypi_plan.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "core/parallel.hpp"
#include "core/text.hpp"
#include "fetch/simple_index.hpp"
#include "install/wheels.hpp"
#include "manifest/load.hpp"

namespace cudaenv::install {

namespace {

constexpr const char* metapackage = "cuda-toolkit";

// The "minimal" preset, as for redist installs (install/components.cpp): compiler, runtime,
// headers, and crt/nvvm, which ship as wheels of their own.
const std::set<std::string> minimal_components = {"cuda_nvcc", "cuda_cudart", "cuda_cccl",
                                                  "cuda_crt",  "libnvvm",     "cuda_culibos"};

// The newest version of `project` on the index matching `spec`; not_found naming the newest.
Result<Version> newest_matching(const std::vector<fetch::IndexFile>& files,
                                const std::string& project, const VersionSpec& spec,
                                const std::string& platform, const std::string& index) {
  const auto offered = wheel_versions(files, project, platform);
  if (auto best = spec.best_match(offered)) return *best;
  std::vector<std::string> newest;
  for (size_t i = 0; i < offered.size() && i < 6; ++i) newest.push_back(offered[i].str());
  return make_error(
      ErrorKind::not_found,
      "no " + project + " release matching \"" + spec.str() + "\" on the index " + index,
      newest.empty() ? "the index has no " + project + " wheels: check --index-url"
                     : "newest there: " + text::join(newest, ", "));
}

Status require_sha256(const fetch::IndexFile& file, const std::string& index) {
  if (!file.sha256.empty()) return Ok{};
  return make_error(ErrorKind::integrity,
                    "the index " + index + " gives no sha256 for " + file.filename,
                    "use an index that publishes sha256 digests (PyPI, devpi, Artifactory and "
                    "Nexus all do): nothing unverified is installed");
}

// The component pins of cuda-toolkit==<version>: its wheel is a few KiB, fetched whole and
// checked against the index's sha256 before its METADATA is read.
Result<std::vector<WheelPin>> metapackage_pins(const fetch::IndexFile& file,
                                               const IndexSource& source,
                                               const std::string& platform) {
  if (auto sha = require_sha256(file, source.index); !sha) return sha.error();
  auto body = fetch::fetch_text(file.url, source.fetch);
  if (!body) return body.error();
  if (const auto got = fetch::sha256_of(*body); got != file.sha256) {
    return make_error(
        ErrorKind::integrity,
        "sha256 mismatch for " + file.url + ": expected " + file.sha256 + ", got " + got,
        "the index serves a different file than it lists: try again, or use "
        "another index");
  }
  auto metadata = wheel_metadata(*body, file.filename);
  if (!metadata) return metadata.error();
  auto pins = toolkit_pins(*metadata, platform, file.filename);
  if (!pins) return pins.error();
  if (pins->empty()) {
    return make_error(ErrorKind::integrity, file.filename + ": its METADATA pins no components",
                      "the index serves another cuda-toolkit than NVIDIA's: check --index-url");
  }
  return pins;
}

std::string known_components(const std::vector<WheelPin>& pins) {
  std::vector<std::string> names;
  for (const auto& pin : pins) names.push_back(component_of_wheel(pin.project));
  return text::join(names, ", ");
}

// The pins a preset asks for; a listed component may be named as in redist manifests
// ("cuda_nvcc") or by its wheel ("nvidia-cuda-nvcc").
Result<std::vector<WheelPin>> select_pins(const std::vector<WheelPin>& pins,
                                          const std::string& preset) {
  if (preset == "full") return pins;
  std::vector<WheelPin> chosen;
  if (preset == "minimal") {
    std::copy_if(pins.begin(), pins.end(), std::back_inserter(chosen), [](const WheelPin& pin) {
      return minimal_components.count(component_of_wheel(pin.project)) > 0;
    });
    return chosen;
  }
  for (const auto& raw : text::split(preset, ',')) {
    const auto name = std::string(text::trim(raw));
    const auto it = std::find_if(pins.begin(), pins.end(), [&](const WheelPin& pin) {
      return component_of_wheel(pin.project) == name ||
             pin.project == fetch::normalize_project_name(name);
    });
    if (it == pins.end()) {
      return make_error(ErrorKind::usage,
                        "--components: \"" + text::printable(name) +
                            "\" has no wheel in this release on the index",
                        "components: " + known_components(pins));
    }
    chosen.push_back(*it);
  }
  return chosen;
}

// The version a pin takes: its exact version; for a range, the release's own lower bound when
// the index has it (what the redist release carries), else the newest in the range.
Result<std::string> version_of_pin(const std::vector<fetch::IndexFile>& files, const WheelPin& pin,
                                   const std::string& platform, const std::string& index) {
  if (pin.range.empty()) return pin.version;
  const auto spec = VersionSpec::parse(pin.range).value();
  const auto offered = wheel_versions(files, pin.project, platform);
  if (const auto own = Version::parse(pin.version)) {
    if (std::find(offered.begin(), offered.end(), *own) != offered.end()) return pin.version;
  }
  if (auto best = spec.best_match(offered)) return best->str();
  return make_error(
      ErrorKind::not_found,
      "no " + platform + " wheel of " + pin.project + " " + pin.range + " on " + index,
      "check --index-url: the release's metapackage requires it");
}

// Whether the index has wheels of the pinned project, but for other platforms only: NVIDIA's
// nvidia-cudla is for aarch64 alone, though cuda-toolkit 13.2.0's marker names all of Linux.
bool only_for_other_platforms(const std::vector<fetch::IndexFile>& files, const WheelPin& pin,
                              const std::string& platform) {
  const auto wanted = fetch::normalize_project_name(pin.project);
  bool any = false;
  for (const auto& file : files) {
    const auto wheel = parse_wheel_name(file.filename);
    if (!wheel || wheel->project != wanted) continue;
    if (wheel_fits(*wheel, platform)) return false;
    any = true;
  }
  return any;
}

struct PinArchive {
  std::optional<SelectedArchive> archive;  // nullopt: the project has no wheel for the platform
};

Result<PinArchive> archive_from(const std::vector<fetch::IndexFile>& files, const WheelPin& pin,
                                const IndexSource& source, const std::string& platform,
                                bool skip_other_platforms) {
  const auto& project = pin.project;
  const auto component = component_of_wheel(project);
  if (skip_other_platforms && only_for_other_platforms(files, pin, platform)) return PinArchive{};
  auto version = version_of_pin(files, pin, platform, source.index);
  if (!version) return version.error();
  auto wheel = pick_wheel(files, project, *version, platform, source.index);
  if (!wheel) return wheel.error();
  if (auto sha = require_sha256(*wheel, source.index); !sha) return sha.error();
  const auto name = parse_wheel_name(wheel->filename);
  return PinArchive{SelectedArchive{component,
                                    name ? name->version : *version,
                                    {wheel->filename, wheel->sha256, wheel->size},
                                    wheel->url}};
}

using ProjectPage = Result<std::vector<fetch::IndexFile>>;

// At most this many index pages are asked for at once.
constexpr int page_requests_at_once = 8;

// Every pin's index page, asked for at once: the pages do not depend on each other and each is
// a round trip to the index. Returned in the pins' order, so the pin reported for a failure is
// the first that fails, as when they were read one by one.
Result<std::vector<ProjectPage>> project_pages(const std::vector<WheelPin>& pins,
                                               const IndexSource& source) {
  std::vector<std::optional<ProjectPage>> pages(pins.size());
  auto read = for_each_in_parallel(pins.size(), page_requests_at_once, "reading the package index",
                                   [&](size_t index, const FirstError&) -> Status {
                                     pages[index].emplace(fetch::fetch_project_files(
                                         source.index, pins[index].project, source.fetch));
                                     return Ok{};
                                   });
  if (!read) return read.error();
  std::vector<ProjectPage> out;
  out.reserve(pages.size());
  for (auto& page : pages) out.push_back(std::move(*page));
  return out;
}

// The release a metapackage version names: NVIDIA published some as "13.0.3.0".
std::string release_name(const Version& version) {
  if (version.size() == 4 && version.component(3) == 0) {
    return std::to_string(version.major()) + "." + std::to_string(version.minor()) + "." +
           std::to_string(version.patch());
  }
  return version.str();
}

Error needs_runtime_only(const Version& version) {
  return make_error(
      ErrorKind::usage,
      "CUDA " + version.str() + " from a package index has no nvcc: NVIDIA's cu" +
          std::to_string(version.major()) +
          " wheels carry ptxas but not the compiler driver, so the prefix could not compile",
      "add --runtime-only for a runtime-only prefix (enough for frameworks), or install it with "
      "--source redist");
}

// The releases whose component versions the database's redist rows give.
Result<std::vector<manifest::CudaRelease>> releases_with_components(const Store& store) {
  auto db = manifest::load_default_database(store.root);
  if (!db) return db.error();
  std::vector<manifest::CudaRelease> found;
  std::copy_if(db->cuda_releases.begin(), db->cuda_releases.end(), std::back_inserter(found),
               [](const auto& release) { return !release.components.empty(); });
  return found;
}

// The pins of `release` as its redist row gives them, for the components published as wheels.
std::vector<WheelPin> pins_of_row(const manifest::CudaRelease& release) {
  std::vector<WheelPin> pins;
  for (const auto& [component, version] : release.components) {
    const auto project = wheel_of_component(component, release.version.major());
    if (!project.empty()) pins.push_back({project, version, ""});
  }
  return pins;
}

Result<manifest::CudaRelease> database_release(const VersionSpec& spec, const Error& missing,
                                               const Store& store) {
  auto releases = releases_with_components(store);
  if (!releases) return releases.error();
  std::vector<Version> known;
  for (const auto& release : *releases) known.push_back(release.version);
  const auto best = spec.best_match(known);
  if (!best) {
    std::sort(known.begin(), known.end(), [](const auto& a, const auto& b) { return a > b; });
    std::vector<std::string> newest;
    for (size_t i = 0; i < known.size() && i < 6; ++i) newest.push_back(known[i].str());
    return make_error(ErrorKind::not_found,
                      missing.message +
                          ", and the database's redist rows give the component "
                          "versions of no CUDA release matching \"" +
                          spec.str() + "\"",
                      newest.empty() ? missing.hint
                                     : "releases they give: " + text::join(newest, ", ") +
                                           "; or use an index that carries cuda-toolkit");
  }
  return *std::find_if(releases->begin(), releases->end(),
                       [&](const auto& release) { return release.version == *best; });
}

// An index without cuda-toolkit: the release's wheels by the versions its redist row gives. A
// "full" install leaves out (and names) the projects the index does not carry; a preset leaves
// out those whose wheels are for other platforms, as with the metapackage.
Result<PypiToolkitPlan> plan_from_database(const PypiToolkitRequest& request,
                                           const VersionSpec& spec, const Error& missing,
                                           const IndexSource& source, const std::string& platform) {
  auto release = database_release(spec, missing, source.store);
  if (!release) return release.error();
  const bool runtime_only = release->version.major() < 13;
  if (runtime_only && !request.runtime_only) return needs_runtime_only(release->version);
  const auto pins = pins_of_row(*release);
  auto chosen = select_pins(pins, request.components);
  if (!chosen) return chosen.error();
  const auto name = release->version.str();
  PypiToolkitPlan out{
      {"cuda", name, platform, "", source.index, source.store.toolkits() / name, {}, "pypi"},
      {},
      {},
      runtime_only,
      true,
      {}};
  const bool full = request.components == "full";
  const bool preset = full || request.components == "minimal";
  auto pages = project_pages(*chosen, source);
  if (!pages) return pages.error();
  for (size_t i = 0; i < chosen->size(); ++i) {
    const auto& pin = (*chosen)[i];
    auto& files = (*pages)[i];
    if (!files && full && files.error().kind == ErrorKind::not_found) {
      out.not_on_index.push_back(component_of_wheel(pin.project));
      continue;
    }
    if (!files) return files.error();
    auto archive = archive_from(*files, pin, source, platform, preset);
    if (!archive) return archive.error();
    if (!archive->archive) {
      out.other_platforms_only.push_back(component_of_wheel(pin.project));
      continue;
    }
    out.install.archives.push_back(std::move(*archive->archive));
  }
  if (out.install.archives.empty()) {
    return make_error(ErrorKind::not_found,
                      missing.message + ", nor any wheel of CUDA " + name + "'s components",
                      missing.hint);
  }
  if (full) out.without_wheels = components_without_wheels(pins);
  return out;
}

}  // namespace

Result<PypiToolkitPlan> plan_pypi_toolkit(const PypiToolkitRequest& request,
                                          const IndexSource& source, const std::string& platform) {
  auto spec = VersionSpec::parse(request.spec);
  if (!spec) return make_error(ErrorKind::usage, "SPEC: " + spec.error().message);
  auto files = fetch::fetch_project_files(source.index, metapackage, source.fetch);
  if (!files && files.error().kind == ErrorKind::not_found)
    return plan_from_database(request, *spec, files.error(), source, platform);
  if (!files) return files.error();
  auto version = newest_matching(*files, metapackage, *spec, platform, source.index);
  if (!version) return version.error();
  const bool runtime_only = version->major() < 13;
  if (runtime_only && !request.runtime_only)
    return needs_runtime_only(Version::parse(release_name(*version)).value());
  auto file = pick_wheel(*files, metapackage, version->str(), platform, source.index);
  if (!file) return file.error();
  const auto release = release_name(*version);
  auto pins = metapackage_pins(*file, source, platform);
  if (!pins) return pins.error();
  auto chosen = select_pins(*pins, request.components);
  if (!chosen) return chosen.error();
  InstallPlan plan{"cuda", release, platform, "", source.index, source.store.toolkits() / release,
                   {},     "pypi"};
  // A preset leaves out a wheel published for other platforms only; a named component does not.
  const bool preset = request.components == "full" || request.components == "minimal";
  std::vector<std::string> other_platforms;
  auto pages = project_pages(*chosen, source);
  if (!pages) return pages.error();
  for (size_t i = 0; i < chosen->size(); ++i) {
    const auto& pin = (*chosen)[i];
    if (!(*pages)[i]) return (*pages)[i].error();
    auto archive = archive_from(*(*pages)[i], pin, source, platform, preset);
    if (!archive) return archive.error();
    if (!archive->archive) {
      other_platforms.push_back(component_of_wheel(pin.project));
      continue;
    }
    plan.archives.push_back(std::move(*archive->archive));
  }
  auto skipped =
      request.components == "full" ? components_without_wheels(*pins) : std::vector<std::string>{};
  return PypiToolkitPlan{std::move(plan), std::move(skipped), std::move(other_platforms),
                         runtime_only};
}

namespace {

void sort_newest_first(std::vector<Version>& versions) {
  std::sort(versions.begin(), versions.end(), [](const auto& a, const auto& b) { return a > b; });
  versions.erase(std::unique(versions.begin(), versions.end()), versions.end());
}

// An index without cuda-toolkit: the releases the database's redist rows give whose cudart wheel
// (nvidia-cuda-runtime[-cuNN]) the index lists at the row's version; one page per CUDA major.
Result<std::vector<Version>> releases_by_cudart(const IndexSource& source,
                                                const std::string& platform, const Error& missing) {
  auto releases = releases_with_components(source.store);
  if (!releases) return releases.error();
  std::map<std::string, std::vector<Version>> listed;  // by cudart wheel project
  std::vector<Version> found;
  for (const auto& release : *releases) {
    const auto cudart = std::find_if(release.components.begin(), release.components.end(),
                                     [](const auto& row) { return row.first == "cuda_cudart"; });
    const auto project = wheel_of_component("cuda_cudart", release.version.major());
    if (cudart == release.components.end() || project.empty()) continue;
    if (listed.count(project) == 0) {
      auto files = fetch::fetch_project_files(source.index, project, source.fetch);
      if (!files && files.error().kind != ErrorKind::not_found) return files.error();
      listed[project] = files ? wheel_versions(*files, project, platform) : std::vector<Version>{};
    }
    const auto wanted = Version::parse(cudart->second);
    const auto& offered = listed[project];
    if (wanted && std::find(offered.begin(), offered.end(), *wanted) != offered.end())
      found.push_back(release.version);
  }
  sort_newest_first(found);
  if (found.empty())
    return make_error(ErrorKind::not_found,
                      missing.message + ", nor the cudart wheel of any release the database knows",
                      missing.hint);
  return found;
}

Version three_components(const Version& version) {
  return Version::parse(std::to_string(version.major()) + "." + std::to_string(version.minor()) +
                        "." + std::to_string(version.patch()))
      .value();
}

}  // namespace

Result<std::vector<Version>> list_index_versions(const IndexSource& source,
                                                 const std::string& product,
                                                 const std::string& platform, bool* from_database) {
  std::vector<Version> versions;
  if (product == "cuda") {
    auto files = fetch::fetch_project_files(source.index, metapackage, source.fetch);
    if (!files && files.error().kind == ErrorKind::not_found) {
      auto found = releases_by_cudart(source, platform, files.error());
      if (found && from_database != nullptr) *from_database = true;
      return found;
    }
    if (!files) return files.error();
    for (const auto& version : wheel_versions(*files, metapackage, platform))
      versions.push_back(Version::parse(release_name(version)).value());
  } else {
    std::optional<Error> missing;
    for (const char* project : {"nvidia-cudnn-cu11", "nvidia-cudnn-cu12", "nvidia-cudnn-cu13"}) {
      auto files = fetch::fetch_project_files(source.index, project, source.fetch);
      if (!files) {
        if (files.error().kind != ErrorKind::not_found) return files.error();
        missing = files.error();
        continue;
      }
      for (const auto& version : wheel_versions(*files, project, platform))
        versions.push_back(three_components(version));
    }
    if (versions.empty() && missing) return *missing;
  }
  sort_newest_first(versions);
  if (versions.empty()) {
    return make_error(ErrorKind::not_found,
                      "the index " + source.index + " has no " + platform + " wheels of " +
                          (product == "cuda" ? std::string(metapackage) : "nvidia-cudnn-cu*"),
                      "check --index-url");
  }
  return versions;
}

Result<InstallPlan> plan_pypi_cudnn(const std::string& spec_text, int cuda_major,
                                    const IndexSource& source, const std::string& platform) {
  auto spec = VersionSpec::parse(spec_text);
  if (!spec) return make_error(ErrorKind::usage, "--cudnn: " + spec.error().message);
  const auto project = "nvidia-cudnn-cu" + std::to_string(cuda_major);
  auto files = fetch::fetch_project_files(source.index, project, source.fetch);
  if (!files) return files.error();
  auto version = newest_matching(*files, project, *spec, platform, source.index);
  if (!version) return version.error();
  // The store names cuDNN by three components, as NVIDIA's redist releases are (9.13.0).
  const auto release = three_components(*version);
  const auto variant = "cuda" + std::to_string(cuda_major);
  auto archive = archive_from(*files, {project, version->str(), ""}, source, platform, false);
  if (!archive) return archive.error();
  return InstallPlan{"cudnn",
                     release.str(),
                     platform,
                     variant,
                     source.index,
                     source.store.cudnn() / (release.str() + "-" + variant),
                     {std::move(*archive->archive)},
                     "pypi"};
}

}  // namespace cudaenv::install
