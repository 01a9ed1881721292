#include "resolve/suggestions.hpp"

#include <algorithm>
#include <cstdlib>

#include "core/text.hpp"
#include "resolve/rules.hpp"

namespace cudaenv::resolve {

namespace {

// Solutions without the suggestion pass (which would recurse).
std::vector<Solution> solve(const manifest::Database& db, const Target& target,
                            const Request& request) {
  auto resolution = resolve_without_suggestions(db, target, request);
  return std::move(resolution.solutions);
}

std::optional<std::string> driver_suggestion(const manifest::Database& db, const Target& target,
                                             const Request& request) {
  if (!target.driver) return std::nullopt;
  Target any_driver = target;
  any_driver.driver.reset();
  const auto solutions = solve(db, any_driver, request);
  // The smallest upgrade: the lowest full-support minimum among the sets that would fit.
  const Solution* easiest = nullptr;
  for (const auto& solution : solutions) {
    if (!solution.driver.full_minimum) continue;
    if (!easiest || *solution.driver.full_minimum < *easiest->driver.full_minimum)
      easiest = &solution;
  }
  if (!easiest) return std::nullopt;
  if (target.windows_driver) {
    // WSL2 runs the Windows driver: no Linux package is the fix, and installing one breaks it.
    return "upgrade the NVIDIA driver on Windows, never inside WSL (CUDA " +
           easiest->cuda->version.str() +
           " needs Linux driver >= " + easiest->driver.full_minimum->str() +
           "; NVIDIA's CUDA Toolkit release notes give the matching Windows driver)";
  }
  std::string text = "upgrade the NVIDIA driver to >= " + easiest->driver.full_minimum->str() +
                     " (CUDA " + easiest->cuda->version.str();
  if (const auto* branch = db.branch_for(easiest->cuda->version))
    text += "; Ubuntu: " + branch->package;
  text += ")";
  if (easiest->driver.compat_floor &&
      *easiest->driver.compat_floor < *easiest->driver.full_minimum &&
      *target.driver < *easiest->driver.compat_floor) {
    text += "; >= " + easiest->driver.compat_floor->str() + " would run it in minor-compat mode";
  }
  return text;
}

std::vector<std::string> arch_suggestions(const manifest::Database& db, const Target& target,
                                          const Request& request) {
  std::vector<std::string> out;
  for (const auto& gpu : target.gpus) {
    const auto* arch = db.arch(gpu);
    if (arch == nullptr) continue;
    const bool spec_allows =
        std::any_of(db.cuda_releases.begin(), db.cuda_releases.end(), [&](const auto& r) {
          return (!request.cuda || request.cuda->matches(r.version)) &&
                 toolkit_arch_fit(db, r, gpu).kind != ArchFit::Kind::none;
        });
    if (spec_allows) continue;
    const auto prefix = sm_name(gpu) + " (" + arch->name + ") needs CUDA ";
    out.push_back(arch->last_cuda
                      ? prefix + arch->first_cuda.str() + " to " + arch->last_cuda->str() +
                            "; use --cuda \"<=" + arch->last_cuda->str() + "\""
                      : prefix + ">= " + arch->first_cuda.str() +
                            "; use --cuda \">=" + arch->first_cuda.str() + "\"");
  }
  return out;
}

// The set whose toolkit is nearest the pinned one ("12.6" -> 12.4 rather than 12.1): the smallest
// change to the pin. The preferred set when the pin is not one version.
const Solution& nearest_toolkit(const std::vector<Solution>& solutions, const VersionSpec& pin) {
  const auto pinned = Version::parse(pin.str());
  if (!pinned) return solutions.front();
  const auto distance = [&](const Solution& s) {
    const auto& v = s.cuda->version;
    return std::abs((v.major() - pinned->major()) * 1000 + (v.minor() - pinned->minor()));
  };
  const Solution* nearest = &solutions.front();
  for (const auto& solution : solutions)
    if (distance(solution) < distance(*nearest)) nearest = &solution;
  return *nearest;
}

// The set whose framework version is nearest the pinned one ("--torch 2.6" on an sm_120 GPU ->
// 2.7, not the newest release): the smallest change to the pin. Of two as near, the newer.
const Solution& nearest_framework(const std::vector<Solution>& solutions, const std::string& name,
                                  const VersionSpec& pin) {
  const auto pinned = Version::parse(pin.str());
  if (!pinned) return solutions.front();
  const auto distance = [&](const Solution& s) -> std::optional<int> {
    for (const auto& framework : s.frameworks) {
      if (framework.name != name) continue;
      const auto& v = framework.rank;
      return std::abs((v.major() - pinned->major()) * 1000 + (v.minor() - pinned->minor()));
    }
    return std::nullopt;
  };
  const Solution* nearest = &solutions.front();
  for (const auto& solution : solutions) {
    const auto d = distance(solution), best = distance(*nearest);
    if (d && (!best || *d < *best)) nearest = &solution;
  }
  return *nearest;
}

template <typename Field>
std::optional<std::string> relax(const manifest::Database& db, const Target& target,
                                 const Request& original, Field field, const std::string& flag) {
  Request request = original;
  if (!(request.*field)) return std::nullopt;
  // A framework stays in the set with any version; a toolkit or cuDNN pin is simply dropped.
  const bool is_framework = flag != "--cuda" && flag != "--cudnn";
  request.*field =
      is_framework ? VersionSpec::parse("latest").value() : std::optional<VersionSpec>{};
  const auto solutions = solve(db, target, request);
  if (solutions.empty()) return std::nullopt;
  const auto& best = flag == "--cuda" ? nearest_toolkit(solutions, *(original.*field))
                     : is_framework
                         ? nearest_framework(solutions, flag.substr(2), *(original.*field))
                         : solutions.front();
  if (flag == "--cuda")
    return "--cuda " + best.cuda->version.major_minor().str() + " would fit (CUDA " +
           best.cuda->version.str() + ")";
  if (flag == "--cudnn") {
    return best.cudnn ? "--cudnn " + best.cudnn->version.str() + " would fit" : "drop --cudnn";
  }
  const std::string name = flag.substr(2);
  for (const auto& framework : best.frameworks) {
    if (framework.name == name) {
      // JAX is pinned by its plugin's CUDA major ("cuda12" -> --jax 12), not by a version.
      const auto value = framework.name == "jax" ? framework.variant.substr(4) : framework.version;
      return flag + " " + value + " would fit (" + framework.name + " " + framework.version +
             (framework.variant.empty() ? "" : " " + framework.variant) + " with CUDA " +
             best.cuda->version.str() + ")";
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<Rejection> framework_blocker(const manifest::Database& db, const Target& target,
                                           const Request& request) {
  if (!request.torch) return std::nullopt;
  for (const auto& gpu : target.gpus) {
    std::vector<std::string> tags;
    bool carried = false;
    for (const auto& release : db.pytorch) {
      if (!request.torch->matches(release.version) &&
          !request.torch->matches_series(release.version))
        continue;
      for (const auto& variant : release.variants) {
        // A build whose architectures are not known might carry it: no claim is made.
        if (pytorch_coverage(variant, gpu) != Coverage::none) carried = true;
        if (std::find(tags.begin(), tags.end(), variant.tag) == tags.end())
          tags.push_back(variant.tag);
      }
    }
    if (tags.empty() || carried) continue;
    return Rejection{"torch " + request.torch->str(),
                     "no build carries " + sm_name(gpu) + " code (its builds: " +
                         text::join(tags, ", ") + "), whatever the driver and toolkit"};
  }
  return std::nullopt;
}

std::vector<std::string> suggest(const manifest::Database& db, const Target& target,
                                 const Request& request) {
  std::vector<std::string> out;
  // When the framework itself is the blocker, its nearest fitting version is the fix to say first.
  if (framework_blocker(db, target, request)) {
    if (auto text = relax(db, target, request, &Request::torch, "--torch")) out.push_back(*text);
  }
  if (auto text = driver_suggestion(db, target, request)) out.push_back(*text);
  for (auto& text : arch_suggestions(db, target, request)) out.push_back(std::move(text));
  const std::pair<std::optional<VersionSpec> Request::*, const char*> relaxable[] = {
      {&Request::cuda, "--cuda"},
      {&Request::torch, "--torch"},
      {&Request::tensorflow, "--tensorflow"},
      {&Request::jax, "--jax"},
      {&Request::cudnn, "--cudnn"}};
  for (const auto& [field, flag] : relaxable) {
    auto text = relax(db, target, request, field, flag);
    if (text && std::find(out.begin(), out.end(), *text) == out.end()) out.push_back(*text);
  }
  if (out.empty()) {
    out.emplace_back(
        "no single change makes a set fit: relax more than one constraint "
        "(the rejections say what each candidate lacks), or use separate environments");
  }
  return out;
}

}  // namespace cudaenv::resolve
