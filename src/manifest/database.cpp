#include "manifest/database.hpp"

#include <algorithm>

#include "core/text.hpp"

namespace cudaenv::manifest {

namespace {

template <typename T, typename Predicate>
const T* find_if(const std::vector<T>& items, Predicate predicate) {
  const auto it = std::find_if(items.begin(), items.end(), predicate);
  return it == items.end() ? nullptr : &*it;
}

}  // namespace

const CudaFamily* Database::family(int major) const {
  return find_if(cuda_families, [&](const CudaFamily& f) { return f.major == major; });
}

const GpuArch* Database::arch(const Version& compute_capability) const {
  return find_if(gpu_archs,
                 [&](const GpuArch& a) { return a.compute_capability == compute_capability; });
}

std::vector<std::pair<std::string, Version>> Database::gpu_model_archs() const {
  std::vector<std::pair<std::string, Version>> out;
  out.reserve(gpu_models.size());
  for (const auto& model : gpu_models) out.emplace_back(model.name, model.compute_capability);
  return out;
}

const HostCompilerLimit* Database::host_compiler(const Version& cuda) const {
  return find_if(host_compilers, [&](const HostCompilerLimit& h) {
    return h.cuda.matches(cuda) || h.cuda.matches(cuda.major_minor());
  });
}

const GlibcLimit* Database::glibc_limit(const Version& cuda) const {
  return find_if(glibc_limits, [&](const GlibcLimit& g) {
    return g.cuda.matches(cuda) || g.cuda.matches(cuda.major_minor());
  });
}

const CudnnRelease* Database::cudnn(const Version& full_or_short) const {
  return find_if(cudnn_releases, [&](const CudnnRelease& c) {
    return c.full_version == full_or_short || c.version == full_or_short;
  });
}

const DriverBranch* Database::branch_for(const Version& cuda) const {
  return find_if(driver_branches,
                 [&](const DriverBranch& b) { return b.max_cuda >= cuda.major_minor(); });
}

const GpuModel* Database::model_of_device(const std::string& device_name) const {
  const GpuModel* best = nullptr;
  std::size_t best_length = 0;
  for (const auto& model : gpu_models) {
    const auto length = text::gpu_name_words(model.name).size();
    if (length > best_length && text::gpu_is_model(device_name, model.name)) {
      best = &model;
      best_length = length;
    }
  }
  return best;
}

bool Database::has_source(const std::string& key) const {
  return std::any_of(sources.begin(), sources.end(), [&](const Source& s) { return s.key == key; });
}

}  // namespace cudaenv::manifest
