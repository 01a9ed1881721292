#include "resolve/resolver.hpp"

#include <algorithm>

#include "core/reversed.hpp"
#include "resolve/builds.hpp"
#include "resolve/confidence.hpp"
#include "resolve/rules.hpp"
#include "resolve/suggestions.hpp"

namespace cudaenv::resolve {

namespace {

std::string describe(const manifest::CudaRelease& release,
                     const std::vector<const FrameworkBuild*>& combo) {
  std::string text = "CUDA " + release.version.str();
  for (const auto* build : combo) {
    text += " + " + build->choice.name + " " + build->choice.version;
    if (!build->choice.variant.empty()) text += " " + build->choice.variant;
  }
  return text;
}

std::string driver_problem(const DriverCheck& check, const Version& driver) {
  std::string text = "needs driver >= " + (check.full_minimum ? check.full_minimum->str() : "?");
  if (check.compat_floor) text += " (minor-compat >= " + check.compat_floor->str() + ")";
  return text + "; this driver is " + driver.str();
}

// Why a build cannot go with this toolkit release or these GPUs; nullopt if it can.
std::optional<std::string> build_problem(const FrameworkBuild& build,
                                         const manifest::CudaRelease& release,
                                         const Target& target) {
  const auto& name = build.choice.name;
  if (build.cuda_major_minor && release.version.major_minor() != *build.cuda_major_minor) {
    return name + " " + build.choice.version + " " + build.choice.variant + " is built for CUDA " +
           build.cuda_major_minor->str();
  }
  if (build.cuda_range && !build.cuda_range->matches(release.version)) {
    return name + " " + build.choice.variant + " needs CUDA " + build.cuda_range->str();
  }
  if (build.min_driver_branch > 0 && target.driver &&
      target.driver->major() < build.min_driver_branch) {
    return name + " " + build.choice.variant +
           " needs driver branch >= " + std::to_string(build.min_driver_branch);
  }
  for (const auto& gpu : target.gpus) {
    if (build.min_compute_capability && gpu < *build.min_compute_capability) {
      return name + " " + build.choice.variant +
             " needs compute capability >= " + build.min_compute_capability->str() +
             "; this GPU is " + sm_name(gpu);
    }
    if (build.torch_variant && pytorch_coverage(*build.torch_variant, gpu) == Coverage::none) {
      return "torch " + build.choice.version + " " + build.choice.variant + " has no kernels for " +
             sm_name(gpu) + " (the GPU fails with \"no kernel image is available\")";
    }
  }
  return std::nullopt;
}

bool cudnn_supports(const manifest::Database& db, const manifest::CudnnRelease& cudnn,
                    const Version& toolkit) {
  bool matrix_row = false;
  for (const auto& row : db.cudnn_support) {
    if (row.cudnn != cudnn.version || row.cuda_major != toolkit.major()) continue;
    matrix_row = true;
    const auto minor = toolkit.major_minor();
    if (minor >= row.cuda_min && minor <= row.cuda_max) return true;
  }
  if (matrix_row) return false;
  return std::find(cudnn.cuda_majors.begin(), cudnn.cuda_majors.end(), toolkit.major()) !=
         cudnn.cuda_majors.end();
}

bool cudnn_fits(const manifest::Database& db, const manifest::CudnnRelease& cudnn,
                const manifest::CudaRelease& release, const Request& request,
                const std::vector<const FrameworkBuild*>& combo) {
  if (request.cudnn && !request.cudnn->matches(cudnn.version) &&
      !request.cudnn->matches(cudnn.full_version)) {
    return false;
  }
  bool bundled = false;
  for (const auto* build : combo) {
    if (build->cudnn_exact) {
      if (cudnn.full_version != *build->cudnn_exact) return false;
      bundled = true;  // a wheel's own cuDNN build is made for its CUDA
    }
    if (build->cudnn_series && !cudnn.version.has_prefix(*build->cudnn_series)) return false;
    if (build->cudnn_range && !build->cudnn_range->matches(cudnn.version)) return false;
  }
  return bundled || cudnn_supports(db, cudnn, release.version);
}

bool needs_cudnn(const Request& request, const std::vector<const FrameworkBuild*>& combo) {
  return request.cudnn || std::any_of(combo.begin(), combo.end(), [](const FrameworkBuild* b) {
           return b->cudnn_exact || b->cudnn_series || b->cudnn_range;
         });
}

std::vector<std::string> set_warnings(const manifest::Database& db, const Solution& solution,
                                      const Target& target,
                                      const std::vector<const FrameworkBuild*>& combo) {
  std::vector<std::string> warnings;
  const auto& version = solution.cuda->version;
  if (solution.driver.mode == DriverMode::minor_compat) {
    warnings.push_back(
        "driver " + target.driver->str() + " runs CUDA " + version.str() +
        " only in minor-version-compatibility mode: PTX newer than the driver "
        "cannot be JIT-compiled and some APIs return cudaErrorCallRequiresNewerDriver; " +
        (solution.driver.full_minimum
             ? "driver >= " + solution.driver.full_minimum->str() + " gives full support"
             : std::string("the database does not know the driver for full support")));
  }
  if (solution.driver.mode == DriverMode::forward_compat) {
    const auto& package = *solution.driver.forward_compat;
    warnings.push_back(
        "driver " + target.driver->str() + " is older than CUDA " + version.str() +
        " needs (>= " + (solution.driver.full_minimum ? solution.driver.full_minimum->str() : "?") +
        "): on these data-center GPUs NVIDIA's forward-compatibility package " + package.package +
        " (libcuda " + package.driver.str() +
        ") runs it without a driver upgrade: cudaenv compat "
        "install " +
        package.cuda.str() +
        "; the hook puts it first only while the loaded module is older "
        "(docs/forward-compat.md)" +
        (solution.driver.compat_floor && *target.driver >= *solution.driver.compat_floor
             ? "; without it, minor-version compatibility runs it with limits (no PTX newer "
               "than the driver)"
             : std::string()));
  }
  if (solution.unchecked) {
    warnings.push_back("CUDA " + version.str() +
                       " is unchecked: no source gives its driver floor, so this driver may be "
                       "too old for it");
  }
  if (target.gcc) {
    if (const auto gcc_max = gcc_too_new(db, version, *target.gcc)) {
      const auto max = std::to_string(*gcc_max);
      warnings.push_back("host gcc " + target.gcc->str() + " is newer than CUDA " +
                         version.major_minor().str() + " supports (gcc <= " + max +
                         "): install g++-" + max +
                         " (cudaenv then hands it to nvcc and CMake), or pass "
                         "-allow-unsupported-compiler at your own risk");
    }
  }
  for (const auto* build : combo) {
    if (build->experimental) {
      warnings.push_back(build->choice.name + " " + build->choice.version + " " +
                         build->choice.variant + " is an experimental build");
    }
    if (!build->torch_variant) continue;
    for (const auto& gpu : target.gpus) {
      const auto coverage = pytorch_coverage(*build->torch_variant, gpu);
      if (coverage == Coverage::ptx_jit) {
        warnings.push_back("torch " + build->choice.variant + " has only PTX for " + sm_name(gpu) +
                           ": kernels are JIT-compiled at first use (slow start)");
      } else if (coverage == Coverage::unknown) {
        warnings.push_back("the GPU architectures compiled into torch " + build->choice.version +
                           " " + build->choice.variant + " are not in the database; " +
                           sm_name(gpu) + " is unchecked");
      }
    }
  }
  return warnings;
}

// What the driver asks of the user: nothing, living with minor-version compatibility's limits,
// or installing the forward-compatibility package.
int driver_cost(DriverMode mode) {
  switch (mode) {
    case DriverMode::minor_compat: return 1;
    case DriverMode::forward_compat: return 2;
    default: return 0;
  }
}

// Preference: full driver support over minor-compat over forward-compat, then newer frameworks
// (in request order), then stable builds over experimental ones, then PyPI's default build, then
// the newer toolkit, then the newer cuDNN.
bool preferred(const Solution& a, const Solution& b) {
  const int a_cost = driver_cost(a.driver.mode);
  const int b_cost = driver_cost(b.driver.mode);
  if (a_cost != b_cost) return a_cost < b_cost;
  for (size_t i = 0; i < a.frameworks.size() && i < b.frameworks.size(); ++i) {
    if (a.frameworks[i].rank != b.frameworks[i].rank)
      return a.frameworks[i].rank > b.frameworks[i].rank;
  }
  // Of builds of the same versions: the stable ones, then the one `pip install` gets from PyPI.
  for (size_t i = 0; i < a.frameworks.size() && i < b.frameworks.size(); ++i) {
    if (a.frameworks[i].stable != b.frameworks[i].stable) return a.frameworks[i].stable;
  }
  for (size_t i = 0; i < a.frameworks.size() && i < b.frameworks.size(); ++i) {
    if (a.frameworks[i].pypi_default != b.frameworks[i].pypi_default)
      return a.frameworks[i].pypi_default;
  }
  if (a.cuda->version != b.cuda->version) return a.cuda->version > b.cuda->version;
  if (a.cudnn && b.cudnn) return a.cudnn->full_version > b.cudnn->full_version;
  return false;
}

class Solver {
 public:
  Solver(const manifest::Database& db, const Target& target, const Request& request)
      : db_(db), target_(target), request_(request), builds_(requested_builds(db, request)) {}

  Resolution run() {
    for (const auto& release : reversed(db_.cuda_releases)) {
      if (request_.cuda && !request_.cuda->matches(release.version)) continue;
      if (release.unchecked() && !request_.include_unchecked) {
        skip_unchecked(release);
        continue;
      }
      consider(release);
    }
    std::stable_sort(result_.solutions.begin(), result_.solutions.end(), preferred);
    return std::move(result_);
  }

 private:
  // A release with no known driver floor is never recommended unless asked for.
  void skip_unchecked(const manifest::CudaRelease& release) {
    result_.unchecked_skipped.push_back(release.version.str());
    if (request_.cuda) {
      reject(describe(release, {}),
             "its driver floor is unknown (an unchecked release; --include-unchecked considers "
             "it)");
    }
  }

  void consider(const manifest::CudaRelease& release) {
    auto check = check_driver(db_, release, target_.driver);
    // Below full support, NVIDIA's forward-compatibility package gives full support without a
    // driver upgrade where it runs: the answer for a too-old driver, and a better one than
    // minor-version compatibility's limits on a data-center GPU.
    if (check.mode == DriverMode::too_old || check.mode == DriverMode::minor_compat) {
      const auto fit =
          forward_compat_fit(db_, release, *target_.driver, target_.gpus, target_.gpu_names);
      if (fit.package != nullptr) {
        check.mode = DriverMode::forward_compat;
        check.forward_compat = fit.package;
      } else if (check.mode == DriverMode::too_old) {
        auto reason = driver_problem(check, *target_.driver);
        if (!fit.problem.empty()) reason += "; forward compatibility: " + fit.problem;
        return reject(describe(release, {}), reason);
      }
    }
    family_notes_.clear();
    for (const auto& gpu : target_.gpus) {
      const auto fit = toolkit_arch_fit(db_, release, gpu);
      if (fit.kind == ArchFit::Kind::none) return reject(describe(release, {}), fit.problem);
      if (fit.kind == ArchFit::Kind::family)
        family_notes_.push_back(family_note(release, gpu, fit));
      if (auto problem = gpu_driver_problem(db_, gpu, target_.driver))
        return reject(describe(release, {}), *problem);
    }
    std::vector<const FrameworkBuild*> combo;
    combine(release, check, combo);
  }

  // Walks the cross product of the requested frameworks' builds, one list at a time.
  void combine(const manifest::CudaRelease& release, const DriverCheck& check,
               std::vector<const FrameworkBuild*>& combo) {
    if (combo.size() == builds_.size()) return finish(release, check, combo);
    const auto& list = builds_[combo.size()];
    bool any_for_toolkit = false;
    const auto toolkit = release.version.major_minor();
    for (const auto& build : list) {
      // Builds for another toolkit minor are not candidates here at all: no reason to record.
      if (build.cuda_major_minor && toolkit != *build.cuda_major_minor) continue;
      any_for_toolkit = true;
      if (auto problem = build_problem(build, release, target_)) {
        reject(describe(release, {&build}), *problem);
        continue;
      }
      combo.push_back(&build);
      combine(release, check, combo);
      combo.pop_back();
    }
    if (!any_for_toolkit && !list.empty()) {
      reject(describe(release, {}), "no " + list.front().choice.name +
                                        " build matching the request is made for CUDA " +
                                        release.version.major_minor().str());
    }
  }

  void finish(const manifest::CudaRelease& release, const DriverCheck& check,
              const std::vector<const FrameworkBuild*>& combo) {
    Solution solution{&release, check, nullptr, {}, {}, {}, false};
    if (needs_cudnn(request_, combo)) {
      for (const auto& cudnn : reversed(db_.cudnn_releases)) {
        if (cudnn_fits(db_, cudnn, release, request_, combo)) {
          solution.cudnn = &cudnn;
          break;
        }
      }
      if (!solution.cudnn)
        return reject(describe(release, combo),
                      "no cuDNN release satisfies " + cudnn_wishes(combo));
    }
    for (const auto* build : combo) solution.frameworks.push_back(build->choice);
    solution.unchecked = release.unchecked();
    solution.unconfirmed = unconfirmed_facts(db_, solution, combo);
    solution.warnings = set_warnings(db_, solution, target_, combo);
    for (const auto& note : family_notes_) solution.warnings.push_back(note);
    result_.solutions.push_back(std::move(solution));
  }

  std::string cudnn_wishes(const std::vector<const FrameworkBuild*>& combo) const {
    std::vector<std::string> wishes;
    if (request_.cudnn) wishes.push_back("--cudnn " + request_.cudnn->str());
    for (const auto* build : combo) {
      const auto who = build->choice.name + " " + build->choice.version;
      if (build->cudnn_exact)
        wishes.push_back(who + " (bundles " + build->cudnn_exact->str() + ")");
      if (build->cudnn_series)
        wishes.push_back(who + " (tested with " + build->cudnn_series->str() + ")");
      if (build->cudnn_range) wishes.push_back(who + " (needs " + build->cudnn_range->str() + ")");
    }
    std::string text;
    for (const auto& wish : wishes) text += (text.empty() ? "" : " and ") + wish;
    return text + " for this toolkit";
  }

  void reject(std::string candidate, std::string reason) {
    result_.rejected.push_back({std::move(candidate), std::move(reason)});
  }

  const manifest::Database& db_;
  const Target& target_;
  const Request& request_;
  std::vector<std::vector<FrameworkBuild>> builds_;
  // The GPUs the release under consideration serves through an older member of their family.
  std::vector<std::string> family_notes_;
  Resolution result_;
};

}  // namespace

// A Jetson (Tegra) GPU takes its driver and CUDA from JetPack (L4T): no desktop or datacenter
// driver branch, and no toolkit from the database, is an answer for it. Said once, as the blocker.
std::optional<Rejection> tegra_blocker(const manifest::Database& db, const Target& target) {
  for (const auto& gpu : target.gpus) {
    const auto* arch = db.arch(gpu);
    if (arch == nullptr || !arch->tegra) continue;
    return Rejection{
        sm_name(gpu) + " (" + (arch->examples.empty() ? "Jetson" : arch->examples) + ")",
        "a Jetson (Tegra) GPU: its driver and CUDA come with NVIDIA JetPack (L4T), which cudaenv "
        "does not model; no desktop or datacenter driver or toolkit applies"};
  }
  if (target.tegra_machine) {
    return Rejection{"this machine",
                     "a Jetson (Tegra) board (/etc/nv_tegra_release): its driver and CUDA come "
                     "with NVIDIA JetPack (L4T), which cudaenv does not model"};
  }
  return std::nullopt;
}

Resolution resolve_without_suggestions(const manifest::Database& db, const Target& target,
                                       const Request& request) {
  if (auto tegra = tegra_blocker(db, target)) {
    Resolution out;
    out.rejected.push_back(std::move(*tegra));
    return out;
  }
  return Solver(db, target, request).run();
}

Resolution resolve(const manifest::Database& db, const Target& target, const Request& request) {
  auto resolution = resolve_without_suggestions(db, target, request);
  if (resolution.ok()) return resolution;
  if (tegra_blocker(db, target)) {
    resolution.suggestions.emplace_back(
        "use the CUDA your JetPack release ships (NVIDIA's JetPack archive lists it); never "
        "install "
        "a desktop nvidia-driver package on a Jetson");
    return resolution;
  }
  if (auto blocker = framework_blocker(db, target, request))
    resolution.rejected.insert(resolution.rejected.begin(), std::move(*blocker));
  resolution.suggestions = suggest(db, target, request);
  // Said only when it could work: with the unchecked releases in, some set fits.
  auto with_unchecked = request;
  with_unchecked.include_unchecked = true;
  if (request.cuda && !resolution.unchecked_skipped.empty() &&
      resolve_without_suggestions(db, target, with_unchecked).ok()) {
    resolution.suggestions.push_back("--include-unchecked also considers CUDA " +
                                     resolution.unchecked_skipped.front() +
                                     ", whose driver floor is not known");
  }
  return resolution;
}

std::vector<std::string> unknown_versions(const manifest::Database& db, const Request& request) {
  std::vector<std::string> unknown;
  const auto none_match = [](const auto& releases, const VersionSpec& spec) {
    return std::none_of(releases.begin(), releases.end(), [&](const auto& r) {
      return spec.matches(r.version) || spec.matches_series(r.version);
    });
  };
  if (request.cuda && none_match(db.cuda_releases, *request.cuda))
    unknown.push_back("CUDA " + request.cuda->str());
  if (request.torch && none_match(db.pytorch, *request.torch))
    unknown.push_back("torch " + request.torch->str());
  if (request.tensorflow && none_match(db.tensorflow, *request.tensorflow)) {
    unknown.push_back("tensorflow " + request.tensorflow->str());
  }
  if (request.cudnn &&
      std::none_of(db.cudnn_releases.begin(), db.cudnn_releases.end(), [&](const auto& c) {
        return request.cudnn->matches(c.version) || request.cudnn->matches(c.full_version);
      })) {
    unknown.push_back("cuDNN " + request.cudnn->str());
  }
  if (request.jax && std::none_of(db.jax.begin(), db.jax.end(), [&](const auto& j) {
        return request.jax->matches(*Version::parse(std::to_string(j.cuda_major)));
      })) {
    unknown.push_back("jax CUDA plugin " + request.jax->str() + " (use 12, 13 or latest)");
  }
  return unknown;
}

}  // namespace cudaenv::resolve
