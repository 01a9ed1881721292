#include "doctor/doctor.hpp"

#include <algorithm>
#include <filesystem>

#include "activate/activation.hpp"
#include "activate/here.hpp"
#include "core/paths.hpp"
#include "here/here.hpp"
#include "probe/host.hpp"

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

DoctorFacts gather_facts(const probe::ProbeContext& context) {
  DoctorFacts facts;
  facts.machine = probe::probe_machine(context);
  facts.host = probe::probe_host(context, facts.machine);
  facts.binaries =
      gather_binary_facts(context.sysroot, context.runner, context.env,
                          facts.host.python.python_found ? facts.host.python.python : "");
  facts.stored = stored_toolkits(context.env);
  // What applies here, decided once: the shell check and the host-compiler check read the same
  // decision and activation as the other checks.
  auto here =
      here::find_here(activate::without_activation(context.env),
                      paths::working_directory(context.env), std::nullopt, &context.sysroot);
  if (!here) {
    facts.selection_problem =
        here.error().message + (here.error().hint.empty() ? "" : "; " + here.error().hint);
    facts.shell = gather_shell_facts(context.env, nullptr);
    return facts;
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
