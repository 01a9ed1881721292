#include "scan/triton.hpp"

#include <algorithm>
#include <filesystem>
#include <string_view>

#include "core/files.hpp"
#include "scan/mapped_file.hpp"

namespace cudaenv::scan {

namespace fs = std::filesystem;

std::optional<TritonPtxas> find_triton_ptxas(const std::vector<std::string>& site_packages,
                                             const std::optional<std::string>& ptxas_variable) {
  for (const auto& site : site_packages) {
    std::error_code error;
    if (!fs::is_directory(fs::path(site) / "triton", error)) continue;
    if (ptxas_variable && !ptxas_variable->empty())
      return TritonPtxas{*ptxas_variable, "TRITON_PTXAS_PATH", ptxas_release(*ptxas_variable)};
    for (const char* relative :
         {"triton/backends/nvidia/bin/ptxas", "triton/third_party/cuda/bin/ptxas"}) {
      const auto path = (fs::path(site) / relative).string();
      if (fs::is_regular_file(path, error))
        return TritonPtxas{path, "bundled with triton", ptxas_release(path)};
    }
    return TritonPtxas{(fs::path(site) / "triton").string(), "bundled with triton", std::nullopt};
  }
  return std::nullopt;
}

std::optional<Version> ptxas_release(const std::string& path) {
  auto file = MappedFile::open(path);
  if (!file) return std::nullopt;
  return ptxas_release_in(
      std::string_view(reinterpret_cast<const char*>(file->bytes().data()), file->bytes().size()));
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
