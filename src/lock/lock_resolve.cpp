#include "lock/lock_resolve.hpp"

#include <algorithm>

#include "core/text.hpp"
#include "install/components.hpp"
#include "install/pypi_plan.hpp"
#include "install/remote.hpp"
#include "project/targets.hpp"
#include "resolve/pinned_request.hpp"
#include "resolve/resolver.hpp"

namespace cudaenv::lock {

namespace {

// The GCC that Ubuntu 24.04 (the newest LTS) installs as c++: a toolkit that accepts only an
// older one gets CUDAHOSTCXX in the lock.
constexpr int default_gcc_major = 13;

// The project's pins, as the one request policy (resolve/pinned_request.hpp) reads them.
resolve::Pins pins_of(const project::ProjectFile& project) {
  return {project.cuda, project.cudnn, project::framework_pin(project, "torch"),
          project::framework_pin(project, "tensorflow"), project::framework_pin(project, "jax")};
}

// A target's driver floor: its version, or for a branch ("580") the branch's lowest release the
// database knows (a toolkit's floor, a family's minor-compatibility floor, a bundled driver).
std::optional<Version> driver_floor(const manifest::Database& db, const Version& declared) {
  if (declared.size() > 1) return declared;
  std::optional<Version> lowest;
  const auto consider = [&](const std::optional<Version>& known) {
    if (known && known->major() == declared.major() && (!lowest || *known < *lowest))
      lowest = known;
  };
  for (const auto& release : db.cuda_releases) consider(release.min_driver);
  for (const auto& family : db.cuda_families) consider(family.minor_compat_floor);
  for (const auto& arch : db.gpu_archs) consider(arch.min_driver);
  return lowest;
}

resolve::Target machine_for(const manifest::Database& db,
                            const std::vector<const project::DeclaredTarget*>& targets) {
  resolve::Target machine;
  for (const auto* target : targets) {
    const auto floor = driver_floor(db, target->driver).value_or(target->driver);
    if (!machine.driver || floor < *machine.driver) machine.driver = floor;
    for (const auto& arch : target->archs) {
      if (std::find(machine.gpus.begin(), machine.gpus.end(), arch) == machine.gpus.end())
        machine.gpus.push_back(arch);
    }
  }
  return machine;
}

std::string describe(const project::DeclaredTarget& target) {
  std::vector<std::string> archs;
  for (const auto& arch : target.archs) archs.push_back(arch.str());
  const auto gpus = target.gpus.empty() ? std::string() : text::join(target.gpus, ", ") + ": ";
  return "target \"" + target.name + "\" (driver " + target.driver.str() + ", " + gpus + "arch " +
         text::join(archs, ", ") + ")";
}

// The resolver words a pin change as its flag ("--cuda 11.8 would fit"); here the pins live in
// .cudaenv ("cuda = \"11.8\" in .cudaenv would fit").
std::string as_pin(const std::string& suggestion) {
  if (!text::starts_with(suggestion, "--")) return suggestion;
  const auto name_end = suggestion.find(' ');
  if (name_end == std::string::npos) return suggestion;
  const auto spec_end = suggestion.find(' ', name_end + 1);
  const auto spec = suggestion.substr(name_end + 1, spec_end - name_end - 1);
  return suggestion.substr(2, name_end - 2) + " = \"" + spec + "\" in .cudaenv" +
         (spec_end == std::string::npos ? "" : suggestion.substr(spec_end));
}

Error no_fit(const std::string& what, const resolve::Resolution& resolution) {
  std::vector<std::string> changes;
  for (const auto& suggestion : resolution.suggestions) changes.push_back(as_pin(suggestion));
  auto hint =
      changes.empty() ? std::string("relax a pin in .cudaenv") : text::join(changes, "; or ");
  return make_error(ErrorKind::no_compatible_set, "no compatible set for " + what,
                    hint + " (then run cudaenv lock again)");
}

// Which target breaks the fit: the first that no set runs on alone, else the first whose
// addition to those before it leaves nothing.
Error breaking_target(const manifest::Database& db, const std::vector<project::DeclaredTarget>& all,
                      const resolve::Request& request) {
  for (const auto& target : all) {
    auto alone = resolve::resolve(db, machine_for(db, {&target}), request);
    if (!alone.ok()) return no_fit(describe(target), alone);
  }
  std::vector<const project::DeclaredTarget*> so_far;
  for (const auto& target : all) {
    so_far.push_back(&target);
    auto together = resolve::resolve(db, machine_for(db, so_far), request);
    if (together.ok()) continue;
    std::vector<std::string> names;
    for (const auto* before : so_far) names.push_back(before->name);
    return no_fit(
        describe(target) + " together with " + text::join({names.begin(), names.end() - 1}, ", "),
        together);
  }
  return make_error(ErrorKind::no_compatible_set, "no compatible set for the declared targets");
}

std::vector<LockedArchive> locked(const std::vector<install::SelectedArchive>& archives) {
  std::vector<LockedArchive> out;
  for (const auto& a : archives)
    out.push_back({a.component, a.version, a.file.relative_path, a.file.sha256, a.file.size});
  return out;
}

// The CUDA releases the lock's source offers: the mirror's, or the index's cuda-toolkit versions.
Result<std::vector<Version>> offered_releases(const LockInputs& inputs) {
  if (inputs.index != nullptr)
    return install::list_index_versions(*inputs.index, "cuda", lock_platform);
  return install::list_remote_versions(inputs.source.mirror, "cuda", inputs.source.fetch);
}

// A lock pins each file's size, and a PEP 503 page lists none: such an index cannot be locked from.
Status require_sizes(const std::vector<install::SelectedArchive>& archives,
                     const std::string& index) {
  for (const auto& archive : archives) {
    if (archive.file.size > 0) continue;
    return make_error(ErrorKind::integrity,
                      "the index " + index + " lists no size for " + archive.file.relative_path +
                          ": a lock pins every file's size",
                      "lock from an index that serves the JSON simple API (PEP 691: PyPI, devpi, "
                      "Artifactory, Nexus), or lock NVIDIA's archives: --source redist");
  }
  return Ok{};
}

// The first solution (best first) whose toolkit release the mirror (or index) offers.
Result<const resolve::Solution*> offered_solution(const resolve::Resolution& resolution,
                                                  const LockInputs& inputs) {
  const auto& source = inputs.source;
  auto offered = offered_releases(inputs);
  // No listing (a mirror without a directory index, an index without cuda-toolkit): the best
  // release is fetched by name.
  if (!offered) return &resolution.best();
  for (const auto& solution : resolution.solutions) {
    if (std::find(offered->begin(), offered->end(), solution.cuda->version) != offered->end())
      return &solution;
  }
  if (inputs.index != nullptr)
    return make_error(ErrorKind::not_found,
                      "the index " + inputs.index->index +
                          " offers no CUDA release that fits (best: " +
                          resolution.best().cuda->version.str() + ")",
                      "use an index that carries it, or lock NVIDIA's archives: --source redist");
  return make_error(ErrorKind::not_found,
                    "the mirror " + source.mirror + " offers no CUDA release that fits (best: " +
                        resolution.best().cuda->version.str() + ")",
                    "add it to the mirror (cudaenv mirror create DIR --cuda " +
                        resolution.best().cuda->version.str() + "), or use another --mirror");
}

// "torch brings its own cuDNN in its wheels", "torch and jax bring their own …"; "" for none.
std::string own_cudnn(const resolve::Solution& solution) {
  std::vector<std::string> names;
  for (const auto& choice : solution.frameworks) names.push_back(choice.name);
  if (names.empty()) return "";
  return text::join(names, " and ") + (names.size() == 1
                                           ? " brings its own cuDNN in its wheels"
                                           : " bring their own cuDNN in their wheels");
}

// A cuDNN the mirror does not have. When .cudaenv does not pin one and only the frameworks want
// it, their wheels bring it (PyTorch bundles it; the TensorFlow and JAX lines install NVIDIA's
// cuDNN wheel): the lock goes without a cuDNN archive, and says so in `notes`.
Status without_cudnn(const Error& missing, const resolve::Solution& solution, bool pinned,
                     std::vector<std::string>& notes) {
  const auto frameworks = own_cudnn(solution);
  if (!pinned && !frameworks.empty()) {
    notes.push_back(missing.message + "; " + frameworks + ", so the lock holds no cuDNN archive");
    return Ok{};
  }
  return make_error(
      missing.kind, missing.message,
      "add cuDNN to the mirror (cudaenv mirror create DIR --cuda " + solution.cuda->version.str() +
          " --cudnn " + solution.cudnn->version.str() +
          "), point CUDAENV_MIRROR at one that has it" +
          (frameworks.empty() ? std::string(", or remove cudnn from .cudaenv")
                              : ", or remove cudnn from .cudaenv (" + frameworks + ")"));
}

// cuDNN `version` for CUDA `major` from the index; its patch release missing, the newest of its
// series there.
Result<install::InstallPlan> index_cudnn(const Version& version, int major,
                                         const install::IndexSource& index) {
  auto plan = install::plan_pypi_cudnn(version.str(), major, index, lock_platform);
  if (!plan && plan.error().kind == ErrorKind::not_found)
    plan = install::plan_pypi_cudnn(version.major_minor().str(), major, index, lock_platform);
  if (!plan) return plan;
  if (auto sized = require_sizes(plan->archives, index.index); !sized) return sized.error();
  return plan;
}

// What a "full" toolkit from an index leaves out, said once in the lock's notes.
void note_left_out(const install::PypiToolkitPlan& plan, std::vector<std::string>& notes) {
  if (plan.from_database)
    notes.push_back("the index has no cuda-toolkit project: the component versions of CUDA " +
                    plan.install.version + " come from the database's redist rows");
  if (!plan.without_wheels.empty())
    notes.push_back("locked without, NVIDIA publishes no wheels of them: " +
                    text::join(plan.without_wheels, ", "));
  if (!plan.other_platforms_only.empty())
    notes.push_back("locked without, their wheels are for other platforms than " +
                    std::string(lock_platform) + ": " +
                    text::join(plan.other_platforms_only, ", "));
  if (!plan.not_on_index.empty())
    notes.push_back("locked without, the index has no wheels of them: " +
                    text::join(plan.not_on_index, ", "));
}

Status lock_wheels(const resolve::Solution& solution, const install::IndexSource& index,
                   bool cudnn_pinned, LockFile& lock, std::vector<std::string>& notes) {
  const auto& version = solution.cuda->version;
  auto toolkit = index_toolkit(version.str(), index);
  if (!toolkit) return toolkit.error();
  note_left_out(*toolkit, notes);
  lock.source = pypi_source;
  lock.toolkit = {version.str(), locked(toolkit->install.archives)};
  if (solution.cudnn == nullptr) return Ok{};
  auto cudnn = index_cudnn(solution.cudnn->version, version.major(), index);
  if (!cudnn && cudnn.error().kind == ErrorKind::not_found)
    return without_cudnn(cudnn.error(), solution, cudnn_pinned, notes);
  if (!cudnn) return cudnn.error();
  lock.cudnn = LockedCudnn{cudnn->version, cudnn->variant, locked(cudnn->archives)};
  return Ok{};
}

Status lock_archives(const resolve::Solution& solution, const install::ReleaseSource& source,
                     bool cudnn_pinned, LockFile& lock, std::vector<std::string>& notes) {
  const auto& version = solution.cuda->version;
  auto manifest =
      install::fetch_manifest(source.mirror, "cuda", version, source.store, source.fetch);
  if (!manifest) return manifest.error();
  auto archives = install::select_cuda_components(*manifest, "full", lock_platform);
  if (!archives) return archives.error();
  lock.toolkit = {version.str(), locked(*archives)};
  if (solution.cudnn == nullptr) return Ok{};
  auto cudnn =
      install::plan_cudnn(solution.cudnn->version.str(), version.major(), source, lock_platform);
  if (!cudnn && cudnn.error().kind == ErrorKind::not_found) {
    // The mirror lacks that patch release: the newest of the same series it has.
    cudnn = install::plan_cudnn(solution.cudnn->version.major_minor().str(), version.major(),
                                source, lock_platform);
  }
  if (!cudnn && cudnn.error().kind == ErrorKind::not_found)
    return without_cudnn(cudnn.error(), solution, cudnn_pinned, notes);
  if (!cudnn) return cudnn.error();
  lock.cudnn = LockedCudnn{cudnn->version, cudnn->variant, locked(cudnn->archives)};
  return Ok{};
}

LockedTarget locked_target(const manifest::Database& db, const resolve::Solution& solution,
                           const project::DeclaredTarget& target) {
  LockedTarget out;
  out.driver = target.driver.str();  // as declared: a branch stays "580"
  out.gpus = target.gpus;
  const auto check = resolve::check_driver(db, *solution.cuda,
                                           driver_floor(db, target.driver).value_or(target.driver));
  // What the target's driver gives by itself; one too old for the solution is one the resolver
  // accepted only through NVIDIA's forward-compatibility package.
  out.mode = check.mode == resolve::DriverMode::minor_compat ? "minor-compat"
             : check.mode == resolve::DriverMode::too_old    ? "forward-compat"
                                                             : "full";
  std::vector<std::string> digits;
  for (const auto& arch : target.archs) {
    out.archs.push_back(arch.str());
    digits.push_back(project::arch_digits(arch));
  }
  out.torch_cuda_arch_list = text::join(out.archs, ";");
  out.cmake_cuda_architectures = text::join(digits, ";");
  const auto* limit = db.host_compiler(solution.cuda->version);
  if (limit != nullptr && limit->gcc_max > 0 && limit->gcc_max < default_gcc_major)
    out.cudahostcxx = "g++-" + std::to_string(limit->gcc_max);
  return out;
}

}  // namespace

Result<install::PypiToolkitPlan> index_toolkit(const std::string& version,
                                               const install::IndexSource& index) {
  auto plan = install::plan_pypi_toolkit({version, "full", false}, index, lock_platform);
  if (!plan && plan.error().kind == ErrorKind::usage)  // CUDA 11/12: no nvcc among its wheels
    return make_error(ErrorKind::usage, plan.error().message,
                      "lock NVIDIA's archives instead: cudaenv lock --source redist");
  if (!plan) return plan;
  if (auto sized = require_sizes(plan->install.archives, index.index); !sized) return sized.error();
  return plan;
}

std::map<std::string, std::string> request_of(const project::ProjectFile& project) {
  std::map<std::string, std::string> out;
  if (project.cuda) out["cuda"] = project.cuda->str();
  if (project.cudnn) out["cudnn"] = project.cudnn->str();
  for (const auto& [name, spec] : project.frameworks) out[name] = spec.str();
  for (const auto& [name, spec] : project.companions) out[name] = spec.str();
  return out;
}

std::string database_digest(const manifest::SelectedDatabase& database) {
  auto files = database.files;
  std::sort(files.begin(), files.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  std::string all;
  for (const auto& file : files) all += file.name + '\n' + sha256_text(file.text) + '\n';
  return sha256_text(all);
}

Result<ResolvedLock> resolve_lock(const LockInputs& inputs) {
  const auto& db = inputs.database.db;
  auto pinned = resolve::request_for_pins(db, pins_of(inputs.project), inputs.origin);
  if (!pinned) return pinned.error();
  const auto& request = pinned->request;
  std::vector<const project::DeclaredTarget*> all;
  for (const auto& target : inputs.targets) all.push_back(&target);
  const auto resolution = resolve::resolve_without_suggestions(db, machine_for(db, all), request);
  if (!resolution.ok()) return breaking_target(db, inputs.targets, request);
  auto solution = offered_solution(resolution, inputs);
  if (!solution) return solution.error();
  LockFile lock;
  lock.generated_by = inputs.generated_by;
  lock.database_revision = inputs.database.origin.revision;
  lock.database_sha256 = database_digest(inputs.database);
  lock.request = request_of(inputs.project);
  std::vector<std::string> notes;
  const bool cudnn_pinned = inputs.project.cudnn.has_value();
  if (auto status = inputs.index != nullptr
                        ? lock_wheels(**solution, *inputs.index, cudnn_pinned, lock, notes)
                        : lock_archives(**solution, inputs.source, cudnn_pinned, lock, notes);
      !status)
    return status.error();
  for (const auto& target : inputs.targets)
    lock.targets[target.name] = locked_target(db, **solution, target);
  ResolvedLock out{std::move(lock), {}, std::move(notes)};
  for (const auto& choice : (*solution)->frameworks) {
    const auto asked = inputs.project.frameworks.find(choice.name);
    out.frameworks.push_back(requirement_for(choice, db,
                                             asked == inputs.project.frameworks.end()
                                                 ? std::nullopt
                                                 : std::optional<VersionSpec>(asked->second)));
  }
  return out;
}

}  // namespace cudaenv::lock
