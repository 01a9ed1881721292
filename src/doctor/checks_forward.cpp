// The forward-compatibility check: the libraries NVIDIA's cuda-compat packages and `cudaenv compat
// install` put on the machine, whether each would run on the loaded kernel module, and above all a
// library the dynamic linker is told to take first where it cannot run (every CUDA program then
// fails with error 803 or 804).

#include <algorithm>

#include "core/text.hpp"
#include "doctor/checks.hpp"
#include "forward/decision.hpp"

namespace cudaenv::doctor {

namespace {

namespace fs = std::filesystem;

constexpr size_t max_libraries = 64;  // directories looked at, however many a machine holds

// `host_dir` is where to read; `shown` the path the user knows (a machine path for the system's).
void add_library(const fs::path& host_dir, const std::string& shown, std::string real,
                 const std::string& origin, std::vector<CompatLibraryFacts>& out) {
  std::error_code ec;
  if (out.size() >= max_libraries || !fs::is_directory(host_dir, ec)) return;
  auto library = forward::find_compat_library(host_dir);
  if (!library) return;
  for (const auto& known : out) {
    if (known.real_directory == real) return;
  }
  out.push_back({std::move(*library), shown, std::move(real), origin});
}

// NVIDIA's packages install into /usr/local/cuda-X.Y/compat; /usr/local/cuda, a link to one of
// them, would only name the same library again.
void system_libraries(const Sysroot& sysroot, std::vector<CompatLibraryFacts>& out) {
  for (const auto& name : sysroot.list_directory("/usr/local")) {
    if (!text::starts_with(name, "cuda") || sysroot.is_symlink("/usr/local/" + name)) continue;
    const auto dir = "/usr/local/" + name + "/compat";
    add_library(sysroot.host_path(dir), dir, sysroot.canonical(dir).value_or(dir),
                "NVIDIA's cuda-compat package", out);
  }
}

void store_libraries(const install::Store& store, std::vector<CompatLibraryFacts>& out) {
  std::vector<fs::path> roots{store.root};
  roots.insert(roots.end(), store.shared_roots.begin(), store.shared_roots.end());
  for (const auto& root : roots) {
    if (root.empty()) continue;
    std::error_code ec;
    for (fs::directory_iterator it(root / "compat", ec), end; !ec && it != end; it.increment(ec)) {
      if (it->path().filename().string().front() == '.') continue;  // staging
      const auto dir = it->path() / "lib";
      const auto real = fs::weakly_canonical(dir, ec);
      add_library(dir, dir.string(), ec ? dir.string() : real.string(), "cudaenv's store", out);
    }
  }
}

// Where the dynamic linker is told to look in this directory: the user's LD_LIBRARY_PATH or an
// ld.so.conf.d file; nullptr when nowhere.
const probe::LibrarySearchEntry* loader_entry(const DoctorFacts& facts,
                                              const CompatLibraryFacts& library) {
  for (const auto& entry : facts.host.linker.entries) {
    if (entry.exists &&
        (entry.real_directory == library.real_directory || entry.directory == library.directory))
      return &entry;
  }
  return nullptr;
}

std::string describe(const CompatLibraryFacts& library) {
  const auto& lib = library.library;
  std::string text =
      library.directory + ": libcuda " + text::printable(lib.version) + " (" + library.origin + ")";
  if (!lib.note) return text + ", no readable note: " + lib.note_problem;
  std::vector<std::string> branches;
  for (const int branch : lib.note->driver_branches) branches.push_back(std::to_string(branch));
  return text + ", CUDA " + lib.note->cuda.str() + ", kernel-module branches " +
         text::join(branches, ", ");
}

// The fix for a misplaced library: out of the variable, or out of the loader's configuration.
std::string removal(const DoctorFacts& facts, const CompatLibraryFacts& library,
                    const probe::LibrarySearchEntry& entry) {
  if (entry.source == "LD_LIBRARY_PATH") return ld_library_path_without(facts, {entry.directory});
  return "# take " + library.directory + " out of " + entry.source + ", then: sudo ldconfig";
}

struct Verdict {
  CheckStatus status = CheckStatus::ok;
  std::string summary;
};

Verdict judge(const CheckInput& in, const CompatLibraryFacts& library, Finding& f) {
  const auto decision = forward::decide(library.library, in.facts.kernel_module,
                                        in.facts.kernel_gpus, [&](const std::string& gpu) {
                                          const auto* model = in.db.model_of_device(gpu);
                                          return model != nullptr && model->datacenter;
                                        });
  f.evidence.push_back(describe(library));
  const auto* entry = loader_entry(in.facts, library);
  if (entry != nullptr && !decision.use()) {
    f.fix.push_back(removal(in.facts, library, *entry));
    return {CheckStatus::fail, library.directory + " is on the loader's path (" + entry->source +
                                   "), but " + decision.reason};
  }
  if (entry != nullptr)
    return {CheckStatus::ok,
            library.directory + " goes first (" + entry->source + "): " + decision.reason};
  if (decision.use())
    return {CheckStatus::ok, library.directory + " would serve here: " + decision.reason +
                                 "; cudaenv puts its store's copy first for toolkits it serves"};
  return {CheckStatus::ok, library.directory + " is not used, rightly: " + decision.reason};
}

int severity(CheckStatus status) {
  return status == CheckStatus::fail ? 2 : status == CheckStatus::warn ? 1 : 0;
}

}  // namespace

std::vector<CompatLibraryFacts> gather_compat_libraries(const Sysroot& sysroot,
                                                        const install::Store& store) {
  std::vector<CompatLibraryFacts> out;
  system_libraries(sysroot, out);
  store_libraries(store, out);
  return out;
}

Finding check_forward_compat(const CheckInput& in) {
  auto f = finding("forward-compat", "forward-compatibility libraries");
  const auto& libraries = in.facts.compat_libraries;
  if (libraries.empty()) {
    conclude(f, CheckStatus::skip, "no forward-compatibility library on this machine");
    return f;
  }
  f.evidence.push_back("loaded kernel module: " + (in.facts.kernel_module
                                                       ? text::printable(*in.facts.kernel_module)
                                                       : std::string("none")));
  Verdict worst;
  for (const auto& library : libraries) {
    auto verdict = judge(in, library, f);
    if (worst.summary.empty() || severity(verdict.status) > severity(worst.status))
      worst = std::move(verdict);
  }
  conclude(f, worst.status, worst.summary);
  return f;
}

}  // namespace cudaenv::doctor
