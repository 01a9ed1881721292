// Checks of the active toolkit against the GPUs, the /usr/local/cuda link, the dynamic linker's
// search path and the host compiler.

#include <algorithm>
#include <map>

#include "activate/host_compiler.hpp"
#include "core/text.hpp"
#include "doctor/checks.hpp"
#include "resolve/rules.hpp"

namespace cudaenv::doctor {

namespace {

std::string describe(const ActiveToolkit& active) {
  return "CUDA " + (active.toolkit->version ? active.toolkit->version->str() : std::string("?")) +
         " at " + active.toolkit->path + " (" + active.selected_by + ")";
}

bool inside(const std::string& path, const std::string& prefix) {
  return path == prefix || text::starts_with(path, prefix + "/");
}

// The toolkit a directory belongs to, when it is inside one.
const probe::ToolkitFacts* toolkit_of(const DoctorFacts& facts, const std::string& real_path) {
  for (const auto& toolkit : facts.machine.toolkits) {
    if (inside(real_path, toolkit.path)) return &toolkit;
  }
  return nullptr;
}

bool same_release(const probe::ToolkitFacts& a, const probe::ToolkitFacts& b) {
  return a.path == b.path ||
         (a.version && b.version && a.version->major_minor() == b.version->major_minor());
}

// Entries the check looks at: the user's own LD_LIBRARY_PATH, and ld.so.conf.d entries that name
// CUDA or lead into a toolkit (a distribution's own multiarch entries are none of our business,
// even when their directory does not exist).
bool concerns_cuda(const DoctorFacts& facts, const probe::LibrarySearchEntry& entry) {
  return entry.source == "LD_LIBRARY_PATH" || text::contains(entry.directory, "cuda") ||
         text::contains(entry.source, "cuda") || toolkit_of(facts, entry.real_directory) != nullptr;
}

// A search entry is wrong when it is missing, or brings another toolkit's libraries. Entries from
// ld.so.conf.d for another CUDA major are fine: their libraries have other sonames.
std::optional<std::string> entry_problem(const DoctorFacts& facts, const ActiveToolkit& active,
                                         const probe::LibrarySearchEntry& entry) {
  if (!concerns_cuda(facts, entry)) return std::nullopt;
  if (!entry.exists) return entry.directory + " does not exist";
  const auto* owner = toolkit_of(facts, entry.real_directory);
  if (owner == nullptr || !active.toolkit || same_release(*owner, *active.toolkit))
    return std::nullopt;
  const bool from_variable = entry.source == "LD_LIBRARY_PATH";
  const bool same_major = owner->version && active.toolkit->version &&
                          owner->version->major() == active.toolkit->version->major();
  if (!from_variable && !same_major) return std::nullopt;
  return entry.directory + " holds CUDA " + (owner->version ? owner->version->str() : "?") +
         "'s libraries, not the active toolkit's";
}

void duplicate_cudart(const DoctorFacts& facts, std::vector<std::string>& problems) {
  std::map<std::string, std::vector<const probe::CudartCopy*>> by_soname;
  for (const auto& copy : facts.host.linker.cudart) by_soname[copy.soname].push_back(&copy);
  for (const auto& [soname, copies] : by_soname) {
    std::vector<std::string> reals;
    for (const auto* copy : copies) {
      if (std::find(reals.begin(), reals.end(), copy->real_path) == reals.end())
        reals.push_back(copy->real_path);
    }
    if (reals.size() > 1) {
      problems.push_back(std::to_string(reals.size()) + " different " + soname +
                         " are reachable; the first found wins: " + text::join(reals, ", "));
    }
  }
}

}  // namespace

std::string ld_library_path_without(const DoctorFacts& facts, const std::vector<std::string>& bad) {
  std::vector<std::string> kept;
  for (const auto& entry : facts.host.linker.entries) {
    if (entry.source == "LD_LIBRARY_PATH" &&
        std::find(bad.begin(), bad.end(), entry.directory) == bad.end())
      kept.push_back(entry.directory);
  }
  return kept.empty() ? "unset LD_LIBRARY_PATH"
                      : "export LD_LIBRARY_PATH=" + text::shell_quote(text::join(kept, ":"));
}

Finding check_gpu_arch(const CheckInput& in) {
  auto f = finding("gpu-arch", "GPUs supported by the active toolkit and driver");
  const auto& gpus = in.facts.machine.gpus;
  if (gpus.empty()) {
    conclude(f, CheckStatus::skip, "no GPU visible");
    return f;
  }
  const auto driver =
      in.facts.machine.driver ? Version::parse(in.facts.machine.driver->version) : std::nullopt;
  const manifest::CudaRelease* release = nullptr;
  if (in.active.toolkit && in.active.toolkit->version) {
    f.evidence.push_back("active toolkit: " + describe(in.active));
    release = release_for(in.db, *in.active.toolkit->version);
  }
  std::vector<std::string> problems;
  std::vector<Version> judged;  // two GPUs of one architecture: one problem, one fix
  for (const auto& gpu : gpus) {
    const auto sm = resolve::sm_name(gpu.compute_capability);
    f.evidence.push_back("GPU " + std::to_string(gpu.index) + ": " + gpu.name + " (" + sm + ")");
    if (std::find(judged.begin(), judged.end(), gpu.compute_capability) != judged.end()) continue;
    judged.push_back(gpu.compute_capability);
    if (auto problem = resolve::gpu_driver_problem(in.db, gpu.compute_capability, driver))
      problems.push_back(*problem);
    if (!release) continue;
    if (auto problem = resolve::arch_problem(in.db, *release, gpu.compute_capability)) {
      problems.push_back("CUDA " + release->version.str() + " cannot build for " + *problem);
      const auto* arch = in.db.arch(gpu.compute_capability);
      if (arch != nullptr) {
        f.fix.push_back("cudaenv install " +
                        (arch->last_cuda && release->version.major_minor() > *arch->last_cuda
                             ? arch->last_cuda->str()
                             : arch->first_cuda.str()));
      }
    }
  }
  if (!problems.empty()) {
    conclude(f, CheckStatus::fail, text::join(problems, "; "));
  } else if (!release) {
    conclude(f, CheckStatus::skip,
             "no active toolkit known to the database to check the GPUs against");
  } else {
    conclude(f, CheckStatus::ok, "CUDA " + release->version.str() + " builds for every GPU here");
  }
  return f;
}

Finding check_cuda_link(const CheckInput& in) {
  auto f = finding("cuda-link", "/usr/local/cuda points at the active toolkit");
  const auto& link = in.facts.machine.default_link;
  if (!link) {
    conclude(f, CheckStatus::skip, "no /usr/local/cuda");
    return f;
  }
  f.evidence.push_back(text::join(link->chain, " -> "));
  const bool alternatives =
      std::any_of(link->chain.begin(), link->chain.end(),
                  [](const auto& hop) { return text::starts_with(hop, "/etc/alternatives/"); });
  const auto relink = [&](const std::string& target) {
    return alternatives ? "sudo update-alternatives --set cuda " + target
                        : "sudo ln -sfn " + target + " /usr/local/cuda";
  };
  if (link->dangling) {
    conclude(f, CheckStatus::fail,
             "/usr/local/cuda points at " + link->target + ", which does not exist");
    if (in.active.toolkit && text::starts_with(in.active.toolkit->path, "/usr/local/cuda-"))
      f.fix = {relink(in.active.toolkit->path)};
    else
      f.fix = {"sudo rm /usr/local/cuda"};
    return f;
  }
  if (!in.active.toolkit) {
    conclude(f, CheckStatus::skip, "no active toolkit to compare with");
    return f;
  }
  f.evidence.push_back("active toolkit: " + describe(in.active));
  const auto* target = toolkit_of(in.facts, link->target);
  if (target != nullptr && same_release(*target, *in.active.toolkit)) {
    conclude(f, CheckStatus::ok, "/usr/local/cuda leads to the active toolkit");
    return f;
  }
  conclude(f, CheckStatus::warn,
           "/usr/local/cuda leads to " +
               (target && target->version ? "CUDA " + target->version->str() + " at " : "") +
               link->target +
               ", not the active toolkit: builds that look there (CMake without "
               "CUDA_HOME, many setup.py files) get another CUDA");
  f.fix = {text::starts_with(in.active.toolkit->path, "/usr/local/cuda-")
               ? relink(in.active.toolkit->path)
               : "export CUDA_HOME=" + text::shell_quote(in.active.toolkit->path)};
  return f;
}

Finding check_library_path(const CheckInput& in) {
  auto f = finding("library-path", "dynamic linker finds the active toolkit's libraries");
  std::vector<std::string> problems;
  std::vector<std::string> bad_variable_entries;
  std::vector<std::string> bad_files;
  for (const auto& entry : in.facts.host.linker.entries) {
    if (!concerns_cuda(in.facts, entry)) continue;
    f.evidence.push_back(entry.source + ": " + entry.directory +
                         (entry.exists ? "" : " (missing)"));
    auto problem = entry_problem(in.facts, in.active, entry);
    if (!problem) continue;
    problems.push_back(entry.source + ": " + *problem);
    if (entry.source == "LD_LIBRARY_PATH") {
      bad_variable_entries.push_back(entry.directory);
    } else if (std::find(bad_files.begin(), bad_files.end(), entry.source) == bad_files.end()) {
      bad_files.push_back(entry.source);
    }
  }
  for (const auto& copy : in.facts.host.linker.cudart)
    f.evidence.push_back(copy.soname + ": " + copy.directory + " -> " + copy.real_path);
  duplicate_cudart(in.facts, problems);
  if (problems.empty()) {
    conclude(f, CheckStatus::ok,
             in.facts.host.linker.cudart.empty()
                 ? "no stray CUDA library directories"
                 : "every reachable libcudart soname leads to one file");
    return f;
  }
  conclude(f, CheckStatus::warn, text::join(problems, "; "));
  if (!bad_variable_entries.empty())
    f.fix.push_back(ld_library_path_without(in.facts, bad_variable_entries));
  for (const auto& file : bad_files) f.fix.push_back("sudo rm " + file);
  if (!bad_files.empty()) f.fix.emplace_back("sudo ldconfig");
  if (f.fix.empty())
    f.fix.emplace_back(
        "# remove the directories holding the copies you do not want from the "
        "places listed above, then run: sudo ldconfig");
  return f;
}

namespace {

// The compiler nvcc runs: -ccbin from NVCC_PREPEND_FLAGS, else $NVCC_CCBIN when it is set and
// this nvcc reads it (CUDA 12.5 on), else the first gcc on PATH. An NVCC_CCBIN it ignores is
// said in `evidence`.
std::string compiler_nvcc_runs(const CheckInput& in, std::vector<std::string>& evidence) {
  // A selected toolkit gets the compiler activation chooses for it (the same rules, so doctor
  // and `cudaenv which --host-compiler` agree), hook or no hook.
  if (in.active.selected && in.facts.activation_compiler) {
    evidence.push_back("activation hands nvcc " + *in.facts.activation_compiler + ": " +
                       in.facts.activation_compiler_reason);
    return *in.facts.activation_compiler;
  }
  const auto release = in.active.toolkit->version->str();
  std::string wanted = "gcc";
  for (const auto& v : in.facts.machine.env.variables) {
    if (v.name != "NVCC_CCBIN" || v.value.empty()) continue;
    if (activate::honours_nvcc_ccbin(release))
      wanted = v.value;
    else
      evidence.push_back("NVCC_CCBIN=" + v.value + " is ignored by nvcc " + release +
                         " (read from CUDA 12.5 on)");
  }
  for (const auto& v : in.facts.machine.env.variables) {
    const auto words = text::split_whitespace(v.value);
    const auto ccbin = std::find(words.begin(), words.end(), "-ccbin");
    if (v.name == "NVCC_PREPEND_FLAGS" && ccbin != words.end() && ccbin + 1 != words.end())
      wanted = *(ccbin + 1);
  }
  return wanted;
}

}  // namespace

Finding check_host_compiler(const CheckInput& in) {
  auto f = finding("host-compiler", "host gcc supported by the active nvcc");
  if (!in.active.toolkit || !in.active.toolkit->version) {
    conclude(f, CheckStatus::skip, "no active CUDA toolkit");
    return f;
  }
  const auto wanted = compiler_nvcc_runs(in, f.evidence);
  const probe::CompilerFacts* gcc = nullptr;
  for (const auto& compiler : in.facts.machine.compilers) {
    if ((compiler.name == wanted || compiler.path == wanted) && compiler.version) {
      gcc = &compiler;
      break;
    }
  }
  if (gcc == nullptr) {
    conclude(f, CheckStatus::skip, wanted + " not found on PATH");
    return f;
  }
  f.evidence.push_back("active toolkit: " + describe(in.active));
  f.evidence.push_back(gcc->path + ": gcc " + gcc->version->str());
  const auto max = resolve::gcc_too_new(in.db, *in.active.toolkit->version, *gcc->version);
  if (!max) {
    conclude(f, CheckStatus::ok,
             "gcc " + gcc->version->str() + " is accepted by CUDA " +
                 in.active.toolkit->version->major_minor().str());
    return f;
  }
  const auto m = std::to_string(*max);
  conclude(f, CheckStatus::fail,
           "gcc " + gcc->version->str() + " is newer than CUDA " +
               in.active.toolkit->version->major_minor().str() + " accepts (gcc <= " + m +
               "): nvcc stops with \"unsupported GNU version\"");
  const bool have_older =
      std::any_of(in.facts.machine.compilers.begin(), in.facts.machine.compilers.end(),
                  [&](const auto& c) { return c.family == "gcc" && c.name == "gcc-" + m; });
  if (!have_older) f.fix.push_back("sudo apt install g++-" + m);
  // NVCC_CCBIN is ignored by nvcc 11.8 (measured); a prepended -ccbin works on every release.
  f.fix.push_back("export NVCC_PREPEND_FLAGS='-ccbin g++-" + m + "' CUDAHOSTCXX=g++-" + m);
  return f;
}

}  // namespace cudaenv::doctor
