#include "doctor/doctor.hpp"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <iterator>

#include "activate/activation.hpp"
#include "activate/here.hpp"
#include "core/parallel.hpp"
#include "core/paths.hpp"
#include "here/here.hpp"
#include "probe/host.hpp"
#include "probe/kernel_module.hpp"
#include "probe/nvidia_smi.hpp"
#include "probe/python_frameworks.hpp"

namespace cudaenv::doctor {

namespace {

using Check = Finding (*)(const CheckInput&);

// Ordered along the failure chain, from the kernel up to the frameworks: an earlier failure is
// usually the cause of the later ones.
// One row per group of checks, kept as written so that adding checks only adds lines.
// clang-format off
constexpr Check check_table[] = {
    check_kernel_module,   check_nouveau,      check_secure_boot,  check_dkms,
    check_driver_packages, check_device_nodes, check_nvidia_smi,   check_driver_toolkit,
    check_forward_compat,
    check_gpu_arch,        check_cuda_link,    check_library_path, check_host_compiler,
    check_glibc_headers,   check_framework,
    // What the active Python's binaries carry and load (checks_binaries.cpp).
    check_framework_binaries, check_cudnn_copies, check_triton_ptxas,
    // Which store each toolkit comes from (checks_stores.cpp).
    check_stores,
    // Whether this shell has what applies here (checks_shell.cpp).
    check_shell_hook,
};
// clang-format on

}  // namespace

bool Report::has_failure() const { return count(CheckStatus::fail) > 0; }

size_t Report::count(CheckStatus status) const {
  return static_cast<size_t>(std::count_if(findings.begin(), findings.end(),
                                           [&](const Finding& f) { return f.status == status; }));
}

namespace {

// What applies here, decided once: the shell check and the host-compiler check read the same
// decision and activation as the other checks.
void decide_here(const probe::ProbeContext& context, DoctorFacts& facts) {
  auto here =
      here::find_here(activate::without_activation(context.env),
                      paths::working_directory(context.env), std::nullopt, &context.sysroot);
  if (!here) {
    facts.selection_problem =
        here.error().message + (here.error().hint.empty() ? "" : "; " + here.error().hint);
    facts.shell = gather_shell_facts(context.env, nullptr);
    return;
  }
  for (const auto& warning : here->selection.warnings)  // keys nobody reads
    facts.selection_problem += (facts.selection_problem.empty() ? "" : " | ") + warning.message;
  auto applied = activate::apply(std::move(*here), context.env);
  facts.shell = gather_shell_facts(context.env, &applied);
  if (applied.host) {
    facts.activation_compiler = applied.host->compiler;
    facts.activation_compiler_reason = applied.host->reason;
  }
  facts.here = std::move(applied.here);
}

// The interpreter asked once, then its packages' binaries read in the sites it named.
void read_python(const probe::ProbeContext& context, probe::PythonFrameworkFacts& python,
                 BinaryFacts& binaries) {
  python = probe::probe_python_frameworks(context.sysroot, context.runner, context.env);
  binaries = gather_binary_facts(context.sysroot, context.env, python);
  read_torch_archs_from_binaries(binaries, python);
}

}  // namespace

Result<DoctorFacts> gather_facts(const probe::ProbeContext& context) {
  DoctorFacts facts;
  // Independent probes, each on its own thread and filling its own part: the driver and the
  // machine's files, nvidia-smi and the Python interpreter each wait on a program that may take a
  // second, and the checks only start once all are in, so the report is the same as one after
  // another would give.
  probe::NvidiaSmiFacts smi;
  probe::PythonFrameworkFacts python;
  const std::function<void()> probes[] = {
      [&] {
        facts.machine = probe::probe_machine(context);
        facts.host = probe::probe_host(context, facts.machine);
      },
      [&] { smi = probe::probe_nvidia_smi(context.sysroot, context.runner, context.env); },
      [&] { read_python(context, python, facts.binaries); },
      [&] { facts.stored = stored_toolkits(context.env); },
      [&] { decide_here(context, facts); },
  };
  const auto count = std::size(probes);
  auto status = for_each_in_parallel(count, static_cast<int>(count), "probing the machine",
                                     [&](size_t index, const FirstError&) -> Status {
                                       probes[index]();
                                       return Ok{};
                                     });
  if (!status) return status.error();
  facts.host.nvidia_smi = std::move(smi);
  facts.host.python = std::move(python);
  // A few small files, read after what applies here named the stores.
  facts.kernel_module = probe::kernel_module_driver_version(context.sysroot);
  facts.kernel_gpus = probe::kernel_gpu_models(context.sysroot);
  facts.compat_libraries = gather_compat_libraries(context.sysroot, facts.here.store);
  return facts;
}

Report run_doctor(const DoctorFacts& facts, const manifest::Database& db) {
  Report report;
  report.active = here::active_toolkit(facts.here, facts.machine.toolkits);
  if (!facts.selection_problem.empty()) report.active.notes.push_back(facts.selection_problem);
  const CheckInput input{facts, db, report.active};
  for (const auto check : check_table) report.findings.push_back(check(input));
  return report;
}

const char* to_string(CheckStatus status) {
  switch (status) {
    case CheckStatus::ok: return "ok";
    case CheckStatus::warn: return "warn";
    case CheckStatus::fail: return "fail";
    case CheckStatus::skip: return "skip";
  }
  return "unknown";
}

}  // namespace cudaenv::doctor
