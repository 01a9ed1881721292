#include "verify/verify.hpp"

#include <algorithm>

#include "activate/toolkit_env.hpp"
#include "core/text.hpp"
#include "install/store.hpp"
#include "resolve/toolkit_identity.hpp"
#include "verify/embedded.hpp"

namespace cudaenv::verify {

namespace {

std::vector<Version> gpu_architectures(const probe::MachineFacts& facts) {
  return probe::distinct_architectures(facts.gpus);
}

Environment run_environment(const VerifyInputs& inputs, const SelectedToolkit& toolkit,
                            const std::optional<CudnnSelection>& cudnn) {
  auto env = activate::toolkit_environment(
      inputs.env, {toolkit.host_path, toolkit.facts.version ? toolkit.facts.version->str() : ""});
  if (cudnn) {
    env.set("LD_LIBRARY_PATH",
            activate::prepend_entry(env.get("LD_LIBRARY_PATH").value_or(""), cudnn->directory));
  }
  return env;
}

// A program that cannot even be started (wrong format, no permission) is reported like one that
// failed: the classifier sees the reason in its error output.
ProcessResult run_program(const Verification& verification, const Environment& env,
                          ProcessRunner& runner) {
  std::vector<std::string> argv{verification.build.binary.string()};
  if (verification.cudnn) argv.insert(argv.end(), {"--cudnn", verification.cudnn->library});
  auto run = runner.run({argv, env.variables(), std::chrono::minutes(3)});
  if (run) return *run;
  ProcessResult failed;
  failed.exit_code = 127;
  failed.err = run.error().message + "\n";
  return failed;
}

// The program inherits the user's LD_LIBRARY_PATH below the toolkit's directories: a
// forward-compatibility library there is what its libcuda comes from.
std::optional<forward::CompatLibrary> first_compat_library(const Environment& env) {
  for (const auto& dir : text::split(env.get("LD_LIBRARY_PATH").value_or(""), ':')) {
    if (dir.empty()) continue;
    if (auto library = forward::find_compat_library(dir); library && library->note) return library;
  }
  return std::nullopt;
}

ClassifyContext classify_context(const Verification& verification, const VerifyInputs& inputs) {
  ClassifyContext context{inputs.db,
                          inputs.facts.driver,
                          inputs.facts.gpus,
                          inputs.facts.compilers,
                          verification.toolkit.facts.version.value_or(Version{}),
                          verification.toolkit.facts.path,
                          verification.archs,
                          inputs.env.get("CUDA_VISIBLE_DEVICES"),
                          std::nullopt,
                          std::nullopt,
                          first_compat_library(inputs.env)};
  if (verification.cudnn) {
    context.cudnn_library = verification.cudnn->library;
    context.cudnn_expected = verification.cudnn->expected;
  }
  return context;
}

// The architectures the frameworks must cover, each once: those of the GPUs the program saw,
// else those probe saw.
std::vector<Version> gpus_to_cover(const Verification& verification, const VerifyInputs& inputs) {
  std::vector<Version> gpus;
  for (const auto& gpu : verification.program.gpus) {
    if (std::find(gpus.begin(), gpus.end(), gpu.compute_capability) == gpus.end())
      gpus.push_back(gpu.compute_capability);
  }
  return gpus.empty() ? gpu_architectures(inputs.facts) : gpus;
}

// A prefix installed from a package index without nvcc (NVIDIA's CUDA 11/12 wheels carry none)
// cannot compile the device query: said as such, not reported as a failed compile.
Status compiler_present(const std::string& prefix, const std::string& version) {
  std::error_code ec;
  if (std::filesystem::exists(std::filesystem::path(prefix) / "bin" / "nvcc", ec)) return Ok{};
  const auto receipt = install::read_receipt(prefix);
  if (!receipt || receipt->source != "pypi") return Ok{};
  return make_error(
      ErrorKind::verification_failed,
      "CUDA " + version + " in " + prefix +
          " is runtime-only (installed from a package index, no nvcc): there is "
          "nothing to compile the device query with",
      "install a toolkit that compiles: cudaenv install " + version + " --source redist --force");
}

}  // namespace

std::filesystem::path cache_root(const std::filesystem::path& data_root) {
  return data_root / "cache" / "verify";
}

Result<Verification> verify_toolkit(const VerifyRequest& request, const VerifyInputs& inputs) {
  Verification verification;
  auto toolkits = inputs.facts.toolkits;
  resolve::name_toolkits(inputs.db, toolkits);  // a spec may name the release or the nvcc
  auto selection = request.selection;
  selection.db = &inputs.db;
  auto toolkit = select_toolkit(selection, toolkits, inputs.sysroot);
  if (!toolkit) return toolkit.error();
  verification.toolkit = std::move(*toolkit);
  if (request.cudnn) {
    // A path that exists is a cuDNN directory or library; otherwise a version spec over the
    // cuDNN builds cudaenv installed for this toolkit's CUDA major.
    std::error_code ec;
    const auto spec = VersionSpec::parse(*request.cudnn);
    const bool by_spec = !std::filesystem::exists(*request.cudnn, ec) && spec.ok();
    auto cudnn = by_spec ? locate_installed_cudnn(
                               *spec, inputs.store,
                               verification.toolkit.facts.version.value_or(Version{}).major())
                         : locate_cudnn(*request.cudnn);
    if (!cudnn) return cudnn.error();
    verification.cudnn = std::move(*cudnn);
  }
  const auto version = verification.toolkit.facts.version.value_or(Version{});
  const auto env = run_environment(inputs, verification.toolkit, verification.cudnn);
  verification.archs =
      plan_architectures(inputs.db, version, gpu_architectures(inputs.facts), request.archs);

  if (auto compiler = compiler_present(verification.toolkit.host_path, version.str()); !compiler)
    return compiler.error();
  auto build = build_program({verification.toolkit.host_path, version.str(), verification.archs,
                              embedded_file("device_query.cu"), env.variables()},
                             inputs.cache_root, inputs.runner);
  if (!build) return build.error();
  verification.build = std::move(*build);

  verification.build_only = request.build_only;
  if (request.build_only && verification.build.ok()) return verification;  // nothing ran: no cause
  Evidence evidence{verification.build.compile, std::nullopt, {}};
  if (verification.build.ok()) {
    evidence.run = run_program(verification, env, inputs.runner);
    evidence.program = parse_program_output(evidence.run->out);
  }
  verification.run = evidence.run;
  verification.program = evidence.program;
  const auto context = classify_context(verification, inputs);
  verification.cause = classify(evidence, context);

  for (const auto& name : request.frameworks) {
    auto report = check_framework(name, embedded_file("frameworks.py"), env.variables(),
                                  inputs.runner, gpus_to_cover(verification, inputs), context);
    if (!verification.cause && report.cause) verification.cause = report.cause;
    verification.frameworks.push_back(std::move(report));
  }
  return verification;
}

}  // namespace cudaenv::verify
