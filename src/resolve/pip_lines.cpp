#include "resolve/pip_lines.hpp"

#include <algorithm>
#include <cstdlib>

#include "core/reversed.hpp"
#include "core/text.hpp"

namespace cudaenv::resolve {

namespace {

std::string requirement(const std::string& package, const VersionSpec& spec,
                        const Version& series) {
  if (spec.is_exact_beyond(series.size())) return package + "==" + spec.str();
  return package + "==" + series.str() + ".*";
}

bool needs_quotes(const std::string& arg) {
  return arg.find_first_not_of(
             "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
             "-_.,:/=@+%") != std::string::npos;
}

// The CUDA series each matching PyTorch release has a build for, oldest first, without repeats.
std::vector<Version> torch_cuda_series(const manifest::Database& db, const VersionSpec& torch) {
  std::vector<Version> series;
  for (const auto& release : db.pytorch) {
    if (!torch.matches_series(release.version)) continue;
    for (const auto& variant : release.variants) {
      if (std::find(series.begin(), series.end(), variant.cuda) == series.end())
        series.push_back(variant.cuda);
    }
  }
  std::sort(series.begin(), series.end());
  return series;
}

// Distance between two CUDA series, counting a major as a hundred minors.
int distance(const Version& a, const Version& b) {
  return std::abs((a.major() * 100 + a.minor()) - (b.major() * 100 + b.minor()));
}

// The series nearest to what `cuda` names (its lowest version where it is a plain version); on a
// tie, the newer one.
std::optional<Version> nearest_series(const std::vector<Version>& series, const VersionSpec& cuda) {
  const auto pinned = Version::parse(cuda.str());
  if (series.empty()) return std::nullopt;
  if (!pinned) return series.back();
  std::optional<Version> best;
  for (const auto& candidate : series) {
    if (!best || distance(candidate, *pinned) <= distance(*best, *pinned)) best = candidate;
  }
  return best;
}

// The newest PyTorch release with a build for the pinned CUDA.
const manifest::PytorchRelease* newest_torch_for(const manifest::Database& db,
                                                 const VersionSpec& cuda) {
  for (const auto& release : reversed(db.pytorch)) {
    for (const auto& variant : release.variants) {
      if (cuda.matches_series(variant.cuda)) return &release;
    }
  }
  return nullptr;
}

}  // namespace

std::vector<std::string> torch_pip_args(const manifest::PytorchRelease& release,
                                        const manifest::PytorchVariant& variant,
                                        const VersionSpec& spec) {
  std::vector<std::string> args{requirement("torch", spec, release.version)};
  if (variant.tag == release.pypi_default) return args;
  auto index = release.index_url;
  if (const auto at = index.find("{tag}"); at != std::string::npos)
    index.replace(at, 5, variant.tag);
  args.emplace_back("--index-url");
  args.push_back(index);
  return args;
}

std::string pip_command(const std::vector<std::string>& args, PipTool tool) {
  std::string line = tool == PipTool::uv ? "uv pip install" : "pip install";
  for (const auto& arg : args) line += needs_quotes(arg) ? " \"" + arg + "\"" : " " + arg;
  return line;
}

std::optional<Error> torch_cuda_mismatch(const manifest::Database& db, const VersionSpec& torch,
                                         const VersionSpec& cuda) {
  const auto series = torch_cuda_series(db, torch);
  if (series.empty() || std::any_of(series.begin(), series.end(),
                                    [&](const Version& s) { return cuda.matches_series(s); }))
    return std::nullopt;
  std::vector<std::string> names;
  for (const auto& s : series) names.push_back(s.str());
  std::vector<std::string> choices;
  if (const auto near = nearest_series(series, cuda))
    choices.push_back("cuda = \"" + near->str() + "\" with torch " + torch.str());
  if (const auto* other = newest_torch_for(db, cuda))
    choices.push_back("torch = \"" + other->version.str() + "\" with CUDA " + cuda.str());
  return Error{ErrorKind::no_compatible_set,
               "torch " + torch.str() + " has no build for CUDA " + cuda.str() +
                   ": its builds are for CUDA " + text::join(names, ", "),
               "nearest that fit: " + text::join(choices, ", or ")};
}

}  // namespace cudaenv::resolve
