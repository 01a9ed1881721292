#include "scan/triton.hpp"

#include <algorithm>
#include <filesystem>
#include <string_view>

#include "core/files.hpp"
#include "scan/mapped_file.hpp"

namespace cudaenv::scan {

namespace fs = std::filesystem;

namespace {

// A wrapper is a few lines; anything longer is not read as one.
constexpr size_t max_wrapper_bytes = 4096;

std::string_view text_of(const MappedFile& file) {
  return {reinterpret_cast<const char*>(file.bytes().data()), file.bytes().size()};
}

}  // namespace

std::optional<TritonPtxas> find_triton_ptxas(const std::vector<std::string>& site_packages,
                                             const std::optional<std::string>& ptxas_variable,
                                             const HostPath& host_path) {
  const auto found = [&](const std::string& path, const char* chosen_by) {
    auto file = read_ptxas(path, host_path);
    return TritonPtxas{path, chosen_by, file.release, std::move(file.runs)};
  };
  for (const auto& site : site_packages) {
    std::error_code error;
    if (!fs::is_directory(fs::path(site) / "triton", error)) continue;
    if (ptxas_variable && !ptxas_variable->empty())
      return found(*ptxas_variable, "TRITON_PTXAS_PATH");
    for (const char* relative :
         {"triton/backends/nvidia/bin/ptxas", "triton/third_party/cuda/bin/ptxas"}) {
      const auto path = (fs::path(site) / relative).string();
      if (fs::is_regular_file(path, error)) return found(path, "bundled with triton");
    }
    return TritonPtxas{(fs::path(site) / "triton").string(), "bundled with triton", std::nullopt,
                       ""};
  }
  return std::nullopt;
}

PtxasFile read_ptxas(const std::string& path, const HostPath& host_path) {
  auto file = MappedFile::open(path);
  if (!file) return {};
  if (auto release = ptxas_release_in(text_of(*file))) return {release, ""};
  // One hop only: a wrapper of a wrapper is not followed, so no chain can loop.
  const auto target = wrapped_ptxas(text_of(*file));
  if (!target) return {};
  const auto target_on_host = host_path ? host_path(*target) : *target;
  if (target_on_host == path) return {};
  auto wrapped = MappedFile::open(target_on_host);
  return {wrapped ? ptxas_release_in(text_of(*wrapped)) : std::nullopt, *target};
}

std::optional<std::string> wrapped_ptxas(std::string_view script) {
  if (!script.starts_with("#!") || script.size() > max_wrapper_bytes) return std::nullopt;
  constexpr std::string_view separators = " \t\r\n\"'`;|&()<>=";
  for (size_t at = script.find_first_not_of(separators); at != std::string_view::npos;) {
    const auto end = std::min(script.find_first_of(separators, at), script.size());
    const auto word = script.substr(at, end - at);
    if (word.starts_with('/') && word.ends_with("/ptxas") &&
        word.find('$') == std::string_view::npos)
      return std::string(word);
    at = script.find_first_not_of(separators, end);
  }
  return std::nullopt;
}

// Builds differ in where their printf format ("release %d.%d,") sits relative to the filled-in
// banner, so the first banner that parses as a version wins.
std::optional<Version> ptxas_release_in(std::string_view bytes) {
  constexpr std::string_view banner = "Cuda compilation tools, release ";
  for (auto at = bytes.find(banner); at != std::string_view::npos;
       at = bytes.find(banner, at + 1)) {
    const auto start = at + banner.size();
    const auto end = bytes.find(',', start);
    if (end == std::string_view::npos || end - start > 16) continue;
    if (auto release = Version::parse(bytes.substr(start, end - start))) return release;
  }
  return std::nullopt;
}

std::optional<std::string> ptxas_arch_problem(const manifest::Database& db, const Version& release,
                                              int arch) {
  const auto capability =
      Version::parse(std::to_string(arch / 10) + "." + std::to_string(arch % 10));
  const auto* known = capability ? db.arch(*capability) : nullptr;
  if (!known) return std::nullopt;
  if (release.major_minor() < known->first_cuda.major_minor())
    return "ptxas " + release.str() + " predates " + known->sm + ", which needs CUDA " +
           known->first_cuda.str() + " or newer";
  if (known->last_cuda && release.major_minor() > known->last_cuda->major_minor())
    return "ptxas " + release.str() + " no longer compiles for " + known->sm + " (last: CUDA " +
           known->last_cuda->str() + ")";
  return std::nullopt;
}

}  // namespace cudaenv::scan
