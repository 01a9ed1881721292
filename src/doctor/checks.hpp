#pragma once
// The doctor's checks, one function each, in the order they run (docs/doctor.md). Each reads only
// the facts probe gathered through the sysroot and process seams, and the compatibility database.

#include "activate/here.hpp"
#include "core/environment.hpp"
#include "core/sysroot.hpp"
#include "doctor/active_toolkit.hpp"
#include "doctor/binary_facts.hpp"
#include "doctor/finding.hpp"
#include "forward/compat_library.hpp"
#include "install/store.hpp"
#include "manifest/database.hpp"
#include "probe/facts.hpp"
#include "probe/host_facts.hpp"

namespace cudaenv::doctor {

// A toolkit of the user's store or of a system store (docs/cluster.md).
struct StoredToolkit {
  Version version;
  std::string path;
  std::string store;  // "user store /home/a/.local/share/cudaenv", "system store /opt/cudaenv"
};

// This shell's environment against what applies in its directory (the hook's job).
struct ShellFacts {
  bool decided = false;  // what applies here could be computed
  // What activation gives this directory, and what this shell has: CUDA_HOME, CUDAENV_ACTIVE,
  // the first nvcc on PATH ("" for none).
  std::string wanted_home, wanted_active, wanted_nvcc;
  std::string home, active, nvcc;
  bool hook_ran = false;  // the hook has changed this shell before (CUDAENV_DIFF)
  std::string shell;      // $SHELL's name when it is bash, zsh or fish; else ""
  std::string selected;   // "12.4 (from /repo/.cudaenv)", "system (from system)"
};

// A forward-compatibility library found on the machine.
struct CompatLibraryFacts {
  forward::CompatLibrary library;  // its directory as a host path
  std::string directory;           // the machine path shown, where the search found it
  std::string real_directory;      // links resolved, as the linker entries give theirs
  std::string origin;              // "NVIDIA's cuda-compat package", "cudaenv store"
};

struct DoctorFacts {
  probe::MachineFacts machine;
  probe::HostFacts host;
  // What applies in the current directory (here/here.hpp): the selection, its source, the
  // toolkit serving it. Empty (the system's toolkit) when it could not be decided.
  here::Here here;
  std::string selection_problem;      // a malformed .cudaenv or config, an untrusted prefix: a note
  std::vector<StoredToolkit> stored;  // the stores' toolkits, the user's first
  BinaryFacts binaries;
  ShellFacts shell;
  // The host compiler activation hands the selected toolkit's nvcc (activate/host_compiler.hpp),
  // so the check judges the compiler the builds here really get; nullopt: nvcc's default.
  std::optional<std::string> activation_compiler;
  std::string activation_compiler_reason;
  std::vector<CompatLibraryFacts> compat_libraries;
  std::optional<std::string> kernel_module;  // the loaded NVIDIA module's version
  std::vector<std::string> kernel_gpus;      // the models it drives, as /proc names them
};

struct CheckInput {
  const DoctorFacts& facts;
  const manifest::Database& db;
  const ActiveToolkit& active;
};

// Kernel side (checks_kernel.cpp).
Finding check_kernel_module(const CheckInput& in);
Finding check_nouveau(const CheckInput& in);
Finding check_secure_boot(const CheckInput& in);
Finding check_dkms(const CheckInput& in);
// Driver side (checks_driver.cpp).
Finding check_driver_packages(const CheckInput& in);
Finding check_device_nodes(const CheckInput& in);
Finding check_nvidia_smi(const CheckInput& in);
Finding check_driver_toolkit(const CheckInput& in);
// Toolkit side (checks_toolkit.cpp).
Finding check_gpu_arch(const CheckInput& in);
Finding check_cuda_link(const CheckInput& in);
Finding check_library_path(const CheckInput& in);
Finding check_host_compiler(const CheckInput& in);
// Old toolkits on new systems (checks_old_toolkits.cpp).
Finding check_glibc_headers(const CheckInput& in);
// Python frameworks (checks_framework.cpp).
Finding check_framework(const CheckInput& in);
// The active Python's binaries (checks_binaries.cpp).
Finding check_framework_binaries(const CheckInput& in);
Finding check_cudnn_copies(const CheckInput& in);
Finding check_triton_ptxas(const CheckInput& in);
// Forward-compatibility libraries (checks_forward.cpp): which there are, which would run here, and
// a misplaced one the loader takes first (error 803/804).
Finding check_forward_compat(const CheckInput& in);
std::vector<CompatLibraryFacts> gather_compat_libraries(const Sysroot& sysroot,
                                                        const install::Store& store);
// The shell (checks_shell.cpp): does this shell have what applies here, and if not, why.
Finding check_shell_hook(const CheckInput& in);
// `applied`: what applies in its directory, as doctor decided it once; nullptr when it could not
// be decided (the check is then skipped).
ShellFacts gather_shell_facts(const Environment& env, const activate::Applied* applied);
// The stores (checks_stores.cpp): where each toolkit comes from, whether this driver serves it.
Finding check_stores(const CheckInput& in);
std::vector<StoredToolkit> stored_toolkits(const Environment& env);

// Inside WSL2 (checks_wsl.cpp): the Windows driver serves the GPU, so the checks above answer
// for it there, without Linux kernel-module fixes.
bool on_wsl(const DoctorFacts& facts);
void skip_on_wsl(const DoctorFacts& facts, Finding& f, const std::string& why);
void wsl_kernel_module(const CheckInput& in, Finding& f);
void wsl_device_nodes(const CheckInput& in, Finding& f);
void wsl_nvidia_smi(const CheckInput& in, Finding& f);
void wsl_driver_packages(const CheckInput& in, Finding& f);
// Where the driver is too old inside WSL2: the Windows driver to install, on Windows.
std::vector<std::string> wsl_driver_update_fix(int branch);

// Shared by the checks.
bool driver_installed(const DoctorFacts& facts);
// The database's record for a toolkit version: the release itself, else the oldest release of its
// major.minor (an nvcc version such as 13.0.88 names no release).
const manifest::CudaRelease* release_for(const manifest::Database& db, const Version& version);
// The command that takes `bad` directories out of the user's LD_LIBRARY_PATH and keeps the rest.
std::string ld_library_path_without(const DoctorFacts& facts, const std::vector<std::string>& bad);
// "nvidia-driver-580" with the command that installs it on this OS.
std::string driver_install_command(const DoctorFacts& facts, int branch);

// A finding that starts as skipped; each check concludes it with a status and a summary.
inline Finding finding(const char* id, const char* title) {
  return Finding{id, title, CheckStatus::skip, {}, {}, {}};
}

inline void conclude(Finding& f, CheckStatus status, std::string summary) {
  f.status = status;
  f.summary = std::move(summary);
}

}  // namespace cudaenv::doctor
