#include "install/plan.hpp"

#include <algorithm>

#include "core/text.hpp"
#include "install/remote.hpp"
#include "manifest/load.hpp"

namespace cudaenv::install {

namespace {

// The database's revision when it lists no such CUDA release; nullopt when it does, or when it
// cannot be read (the install does not depend on it).
std::optional<std::string> unknown_to_database(const Version& version, const Store& store) {
  auto db = manifest::load_default_database(store.root);
  if (!db) return std::nullopt;
  const bool known = std::any_of(db->cuda_releases.begin(), db->cuda_releases.end(),
                                 [&](const auto& r) { return r.version == version; });
  if (known) return std::nullopt;
  return db->revision;
}

}  // namespace

Result<VersionSpec> parse_spec_flag(const std::string& text, const std::string& flag) {
  auto spec = VersionSpec::parse(text);
  if (!spec)
    return make_error(ErrorKind::usage, flag + ": " + spec.error().message, spec.error().hint);
  return spec;
}

Result<Version> choose_release(const ReleaseSource& source, const std::string& product,
                               const VersionSpec& spec) {
  auto offered = list_remote_versions(source.mirror, product, source.fetch);
  if (!offered) {
    // No index (some mirrors serve files only): an exact release can still be fetched by name.
    if (spec.is_exact_beyond(2)) {
      if (auto exact = Version::parse(spec.str())) return *exact;
    }
    return offered.error();
  }
  if (auto best = spec.best_match(*offered)) return *best;
  std::vector<std::string> newest;
  for (size_t i = 0; i < offered->size() && i < 6; ++i) newest.push_back((*offered)[i].str());
  return make_error(
      ErrorKind::not_found,
      "no " + product + " release matching \"" + spec.str() + "\" on " + source.mirror,
      "newest offered: " + text::join(newest, ", ") + " ('cudaenv list-remote' lists all)");
}

Result<ToolkitPlan> plan_toolkit(const ToolkitRequest& request, const ReleaseSource& source,
                                 const std::string& platform) {
  auto spec = parse_spec_flag(request.spec, "SPEC");
  if (!spec) return spec.error();
  auto version = choose_release(source, "cuda", *spec);
  if (!version) return version.error();
  auto manifest = fetch_manifest(source.mirror, "cuda", *version, source.store, source.fetch);
  if (!manifest) return manifest.error();
  auto archives = select_cuda_components(*manifest, request.components, platform);
  if (!archives) return archives.error();
  InstallPlan plan{"cuda",
                   version->str(),
                   platform,
                   "",
                   source.mirror,
                   source.store.toolkits() / version->str(),
                   std::move(*archives)};
  return ToolkitPlan{std::move(plan), unknown_to_database(*version, source.store)};
}

Result<InstallPlan> plan_cudnn(const std::string& spec_text, int cuda_major,
                               const ReleaseSource& source, const std::string& platform) {
  auto spec = parse_spec_flag(spec_text, "--cudnn");
  if (!spec) return spec.error();
  auto offered = list_remote_versions(source.mirror, "cudnn", source.fetch);
  if (!offered) return offered.error();
  const auto variant = "cuda" + std::to_string(cuda_major);
  for (const auto& version : *offered) {
    if (!spec->matches(version)) continue;
    auto manifest = fetch_manifest(source.mirror, "cudnn", version, source.store, source.fetch);
    if (!manifest) return manifest.error();
    auto archives = select_cudnn_components(*manifest, platform, variant);
    if (!archives) continue;
    return InstallPlan{"cudnn",
                       version.str(),
                       platform,
                       variant,
                       source.mirror,
                       source.store.cudnn() / (version.str() + "-" + variant),
                       std::move(*archives)};
  }
  std::vector<std::string> newest;
  for (size_t i = 0; i < offered->size() && i < 6; ++i) newest.push_back((*offered)[i].str());
  return make_error(ErrorKind::not_found,
                    "no cuDNN release matching \"" + spec->str() + "\" with a " + variant +
                        " build on " + source.mirror,
                    "cuDNN releases there: " + text::join(newest, ", ") +
                        " ('cudaenv list-remote --cudnn'); add another with 'cudaenv mirror "
                        "create DIR --cuda VERSION --cudnn VERSION'");
}

}  // namespace cudaenv::install
