#include "resolve/rules.hpp"

#include <algorithm>

#include "core/text.hpp"

namespace cudaenv::resolve {

DriverCheck check_driver(const manifest::Database& db, const manifest::CudaRelease& release,
                         const std::optional<Version>& driver) {
  DriverCheck check;
  check.full_minimum = release.min_driver;
  if (const auto* family = db.family(release.version.major())) {
    check.compat_floor = family->minor_compat_floor;
  }
  if (!driver) {
    check.mode = DriverMode::unchecked;
  } else if (check.full_minimum && *driver >= *check.full_minimum) {
    check.mode = DriverMode::full;
  } else if (check.compat_floor && *driver >= *check.compat_floor) {
    check.mode = DriverMode::minor_compat;
  } else {
    check.mode = DriverMode::too_old;
  }
  return check;
}

namespace {

const manifest::ForwardCompatPackage* forward_compat_package(const manifest::Database& db,
                                                             const Version& cuda) {
  for (const auto& row : db.forward_compat) {
    if (row.cuda == cuda.major_minor()) return &row;
  }
  return nullptr;
}

std::string branch_list(const std::vector<int>& branches) {
  std::vector<std::string> names;
  for (const int branch : branches) names.push_back(std::to_string(branch));
  return text::join(names, ", ");
}

// Why these GPUs cannot take forward compatibility; empty when every one is a data-center GPU.
std::string datacenter_problem(const manifest::Database& db, const std::vector<Version>& gpus,
                               const std::vector<std::string>& gpu_names) {
  for (const auto& name : gpu_names) {
    const auto* model = db.model_of_device(name);
    if (model == nullptr)
      return "GPU " + text::printable(name) +
             " is not in the database's models, and it runs only on data-center GPUs";
    if (!model->datacenter)
      return model->name + " is not a data-center GPU (elsewhere it fails with error 804)";
  }
  if (!gpu_names.empty()) return {};
  if (gpus.empty())
    return "it runs only on data-center GPUs: name the GPU (--gpu H100) to have it considered";
  for (const auto& cc : gpus) {
    bool any = false;
    for (const auto& model : db.gpu_models) {
      if (model.compute_capability != cc) continue;
      any = true;
      if (!model.datacenter)
        return sm_name(cc) + " GPUs include the " + model.name +
               ", not a data-center GPU: name the GPU (--gpu) to have it considered";
    }
    if (!any)
      return "the database knows no data-center GPU of " + sm_name(cc) + " (it runs only on those)";
  }
  return {};
}

}  // namespace

ForwardCompatFit forward_compat_fit(const manifest::Database& db,
                                    const manifest::CudaRelease& release, const Version& driver,
                                    const std::vector<Version>& gpus,
                                    const std::vector<std::string>& gpu_names) {
  const auto* package = forward_compat_package(db, release.version);
  if (package == nullptr) return {};
  const auto& branches = package->host_branches;
  if (std::find(branches.begin(), branches.end(), driver.major()) == branches.end())
    return {nullptr, package->package + " supports driver branches " + branch_list(branches) +
                         ", not " + std::to_string(driver.major())};
  if (release.min_driver && package->driver < *release.min_driver)
    return {nullptr, "the " + package->package + " the database knows carries libcuda " +
                         package->driver.str() + ", older than CUDA " + release.version.str() +
                         " needs"};
  if (auto problem = datacenter_problem(db, gpus, gpu_names); !problem.empty())
    return {nullptr, std::move(problem)};
  for (const auto& gpu : gpus) {  // a newer driver does not bring back a dropped architecture
    if (auto fit = toolkit_arch_fit(db, release, gpu); fit.kind == ArchFit::Kind::none)
      return {nullptr, std::move(fit.problem)};
  }
  return {package, {}};
}

namespace {

std::optional<std::string> toolkit_arch_problem(const manifest::Database& db, const Version& cuda,
                                                const Version& compute_capability) {
  const auto* arch = db.arch(compute_capability);
  const auto sm = sm_name(compute_capability);
  if (arch == nullptr) {
    return sm + ": compute capability " + compute_capability.str() + " is not in the database";
  }
  const auto toolkit = cuda.major_minor();
  if (toolkit < arch->first_cuda) {
    return sm + " (" + arch->name + ") needs CUDA >= " + arch->first_cuda.str();
  }
  if (arch->last_cuda && toolkit > *arch->last_cuda) {
    return sm + " (" + arch->name + ") needs CUDA <= " + arch->last_cuda->str();
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> arch_problem(const manifest::Database& db,
                                        const manifest::CudaRelease& release,
                                        const Version& compute_capability) {
  return toolkit_arch_problem(db, release.version, compute_capability);
}

ArchFit toolkit_arch_fit(const manifest::Database& db, const Version& cuda,
                         const Version& compute_capability) {
  ArchFit fit;
  auto problem = toolkit_arch_problem(db, cuda, compute_capability);
  if (!problem) {
    fit.kind = ArchFit::Kind::native;
    return fit;
  }
  fit.problem = std::move(*problem);
  // The newest older member of the family the toolkit compiles for; one still current first
  // (10.1 was Thor's number until CUDA 13 renamed it 11.0: a B300 is served through sm_100).
  for (const bool current_only : {true, false}) {
    for (const auto& member : db.gpu_archs) {
      const auto& cc = member.compute_capability;
      if (cc.major() != compute_capability.major() || cc.minor() >= compute_capability.minor())
        continue;
      if ((current_only && member.last_cuda) || toolkit_arch_problem(db, cuda, cc)) continue;
      if (!fit.through || cc > *fit.through) fit.through = cc;
    }
    if (fit.through) break;
  }
  if (fit.through) fit.kind = ArchFit::Kind::family;
  return fit;
}

ArchFit toolkit_arch_fit(const manifest::Database& db, const manifest::CudaRelease& release,
                         const Version& compute_capability) {
  return toolkit_arch_fit(db, release.version, compute_capability);
}

std::string family_note(const manifest::CudaRelease& release, const Version& compute_capability,
                        const ArchFit& fit) {
  return "CUDA " + release.version.str() + " has no " + sm_name(compute_capability) +
         " target: its " + sm_name(*fit.through) + " code runs on this GPU (binary compatibility " +
         "within compute capability " + std::to_string(compute_capability.major()) +
         ".x); to compile for " + sm_name(compute_capability) + " itself: " + fit.problem;
}

std::optional<std::string> gpu_driver_problem(const manifest::Database& db,
                                              const Version& compute_capability,
                                              const std::optional<Version>& driver) {
  const auto* arch = db.arch(compute_capability);
  if (!driver || arch == nullptr || !arch->min_driver || *driver >= *arch->min_driver)
    return std::nullopt;
  return sm_name(compute_capability) + " (" + arch->name +
         ") needs driver >= " + arch->min_driver->str() + "; this driver is " + driver->str();
}

std::optional<int> gcc_too_new(const manifest::Database& db, const Version& cuda,
                               const Version& gcc) {
  const auto* limit = db.host_compiler(cuda);
  if (limit == nullptr || gcc.major() <= limit->gcc_max) return std::nullopt;
  return limit->gcc_max;
}

Coverage pytorch_coverage(const manifest::PytorchVariant& variant,
                          const Version& compute_capability) {
  if (!variant.sass) return Coverage::unknown;
  const auto native =
      std::any_of(variant.sass->begin(), variant.sass->end(), [&](const Version& v) {
        return v.major() == compute_capability.major() && v.minor() <= compute_capability.minor();
      });
  if (native) return Coverage::native;
  const auto jit = std::any_of(variant.ptx.begin(), variant.ptx.end(),
                               [&](const Version& v) { return v <= compute_capability; });
  return jit ? Coverage::ptx_jit : Coverage::none;
}

std::string sm_name(const Version& compute_capability) {
  return "sm_" + std::to_string(compute_capability.major()) +
         std::to_string(compute_capability.minor());
}

std::optional<Version> parse_compute_capability(std::string text) {
  if (text.starts_with("sm_") && text.size() >= 5) {
    text = text.substr(3, text.size() - 4) + "." + text.back();
  }
  auto version = Version::parse(text);
  if (!version || version->size() != 2) return std::nullopt;
  return version;
}

const char* to_string(DriverMode mode) {
  switch (mode) {
    case DriverMode::full: return "full";
    case DriverMode::minor_compat: return "minor-compat";
    case DriverMode::unchecked: return "unchecked";
    case DriverMode::too_old: return "too-old";
    case DriverMode::forward_compat: return "forward-compat";
  }
  return "unknown";
}

}  // namespace cudaenv::resolve
