// PyTorch's CUDA build against the driver and the GPUs: torch brings its own CUDA runtime, so the
// toolkit on the machine does not matter, but the driver and the architectures compiled in do.

#include <algorithm>

#include "core/text.hpp"
#include "doctor/checks.hpp"
#include "resolve/rules.hpp"

namespace cudaenv::doctor {

namespace {

// torch's arch list ("sm_80", "compute_90") as the variant record the coverage rule reads.
manifest::PytorchVariant variant_of(const probe::PythonFrameworkFacts& python) {
  manifest::PytorchVariant variant;
  std::vector<Version> sass;
  for (const auto& arch : python.torch_arch_list) {
    const auto underscore = arch.find('_');
    if (underscore == std::string::npos || arch.size() < underscore + 3) continue;
    const auto digits = arch.substr(underscore + 1);
    const auto cc = Version::parse(digits.substr(0, digits.size() - 1) + "." + digits.back());
    if (!cc) continue;
    (text::starts_with(arch, "compute_") ? variant.ptx : sass).push_back(*cc);
  }
  if (!python.torch_arch_list.empty()) variant.sass = sass;
  return variant;
}

void check_driver_for_torch(const CheckInput& in, const Version& cuda, Finding& f,
                            std::vector<std::string>& failures,
                            std::vector<std::string>& warnings) {
  const auto& driver = in.facts.machine.driver;
  const auto* release = release_for(in.db, cuda);
  if (!driver || !release) return;
  const auto check = resolve::check_driver(in.db, *release, Version::parse(driver->version));
  f.evidence.push_back("driver " + driver->version);
  const auto minimum = check.full_minimum ? check.full_minimum->str() : std::string("?");
  if (check.mode == resolve::DriverMode::too_old) {
    failures.push_back("driver " + driver->version + " is too old for torch's CUDA " + cuda.str() +
                       " (needs >= " + minimum + ")");
  } else if (check.mode == resolve::DriverMode::minor_compat) {
    warnings.push_back("driver " + driver->version + " runs torch's CUDA " + cuda.str() +
                       " only in minor-version compatibility mode (full support >= " + minimum +
                       ")");
  }
}

void check_arch_for_torch(const CheckInput& in, Finding& f, std::vector<std::string>& failures,
                          std::vector<std::string>& warnings) {
  const auto& python = in.facts.host.python;
  const auto variant = variant_of(python);
  f.evidence.push_back("torch arch list: " +
                       (python.torch_arch_list.empty() ? std::string("not reported")
                                                       : text::join(python.torch_arch_list, " ")) +
                       (python.torch_arch_source.empty()
                            ? std::string()
                            : " (the code in " + python.torch_arch_source + ")"));
  for (const auto& gpu : in.facts.machine.gpus) {
    const auto sm = resolve::sm_name(gpu.compute_capability);
    switch (resolve::pytorch_coverage(variant, gpu.compute_capability)) {
      case resolve::Coverage::none:
        failures.push_back("torch has no kernels for GPU " + std::to_string(gpu.index) + " (" + sm +
                           "): \"no kernel image is available for execution on the device\"");
        break;
      case resolve::Coverage::ptx_jit: {
        auto warning = "torch has only PTX for " + sm + ": kernels are JIT-compiled at start";
        // Said once for two GPUs of one architecture.
        if (std::find(warnings.begin(), warnings.end(), warning) == warnings.end())
          warnings.push_back(std::move(warning));
        break;
      }
      default: break;
    }
  }
}

}  // namespace

Finding check_framework(const CheckInput& in) {
  Finding f{"framework", "PyTorch built for this driver and these GPUs", CheckStatus::skip, {}, {},
            {}};
  const auto& python = in.facts.host.python;
  if (!python.python_found) {
    conclude(f, CheckStatus::skip, "no python3 on PATH");
    return f;
  }
  f.evidence.push_back(python.python + (python.python_version.empty()
                                            ? std::string()
                                            : " (Python " + python.python_version + ")"));
  if (!python.error.empty()) {
    f.evidence.push_back(python.error);
    conclude(f, CheckStatus::warn, "the framework probe could not report: " + python.error);
    return f;
  }
  if (!python.torch_found) {
    conclude(f, CheckStatus::skip, "torch is not installed for " + python.python);
    return f;
  }
  f.evidence.push_back("torch " + python.torch_version + ", torch.version.cuda " +
                       (python.torch_cuda ? python.torch_cuda->str() : std::string("None")));
  const auto series = Version::parse(text::split(python.torch_version, '+').front());
  const auto resolve_fix = "cudaenv resolve --torch " +
                           (series ? series->major_minor().str() : std::string("latest")) +
                           "   # prints the pip line of the build that fits";
  if (!python.torch_cuda) {
    conclude(f, in.facts.machine.gpus.empty() ? CheckStatus::ok : CheckStatus::warn,
             "torch " + python.torch_version + " is a CPU-only build");
    if (f.status == CheckStatus::warn) f.fix = {resolve_fix};
    return f;
  }
  std::vector<std::string> failures;
  std::vector<std::string> warnings;
  check_driver_for_torch(in, *python.torch_cuda, f, failures, warnings);
  check_arch_for_torch(in, f, failures, warnings);
  if (!failures.empty()) {
    conclude(f, CheckStatus::fail, text::join(failures, "; "));
  } else if (!warnings.empty()) {
    conclude(f, CheckStatus::warn, text::join(warnings, "; "));
  } else {
    conclude(f, CheckStatus::ok,
             "torch " + python.torch_version + " (CUDA " + python.torch_cuda->str() +
                 ") fits the driver and the GPUs");
    return f;
  }
  f.fix = {resolve_fix};
  return f;
}

}  // namespace cudaenv::doctor
