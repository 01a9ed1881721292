// `cudaenv verify [SPEC]`: build and run the device-query program with a toolkit, and say which
// link of the chain broke when it fails.

#include <cstdio>
#include <filesystem>
#include <sstream>

#include "activate/activation.hpp"
#include "cli/cmd_lock.hpp"
#include "cli/commands.hpp"
#include "cli/terminal.hpp"
#include "cli/verify_json.hpp"
#include "core/ownership.hpp"
#include "core/paths.hpp"
#include "core/text.hpp"
#include "here/here.hpp"
#include "manifest/load.hpp"
#include "probe/machine.hpp"
#include "project/selection.hpp"
#include "project/stores.hpp"
#include "resolve/rules.hpp"
#include "resolve/toolkit_identity.hpp"
#include "verify/verify.hpp"

namespace cudaenv::cli {

namespace {

std::string fixed(double value, const char* format) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

// Paths, GPU names, the compiler's, loader's and frameworks' messages: read from the machine and
// from child processes, so escaped and cut before they reach a terminal.
std::string shown(const std::string& text) { return text::printable(text, text::message_limit); }

class VerifyPrinter {
 public:
  VerifyPrinter(std::ostream& out, bool colour) : out_(out), colour_(colour) {}

  void print(const verify::Verification& v) {
    print_toolkit(v.toolkit);
    print_build(v);
    if (v.run) print_runtime(v.program);
    for (const auto& gpu : v.program.gpus) print_gpu(gpu);
    if (v.build_only)
      row("Run", dim("not run (--build-only): the GPU run is for a machine with one"));
    if (v.cudnn) print_cudnn(v);
    for (const auto& framework : v.frameworks) print_framework(framework);
    print_result(v);
  }

 private:
  void row(std::string_view label, const std::string& value) {
    std::string padded(label);
    padded.resize(std::max<size_t>(padded.size() + 1, 11), ' ');
    out_ << styled(padded, Tone::heading, colour_) << value << '\n';
  }
  std::string dim(const std::string& text) { return styled(text, Tone::dim, colour_); }

  void print_toolkit(const verify::SelectedToolkit& toolkit) {
    row("Toolkit", "CUDA " + resolve::toolkit_name(toolkit.facts) + "  " +
                       shown(toolkit.facts.path) + dim("  (" + shown(toolkit.reason) + ")"));
  }

  void print_build(const verify::Verification& v) {
    std::string targets = verify::describe(v.archs);
    if (v.archs.source == "default") targets += dim(" (no GPU visible: the toolkit's oldest)");
    if (v.archs.source == "only-arch") targets += dim(" (--only-arch)");
    std::string how = v.build.cached ? "cached"
                      : v.build.ok() ? "compiled in " + fixed(v.build.seconds, "%.1f") + " s"
                                     : styled("compile failed", Tone::bad, colour_);
    row("Build", targets + "  " + how);
    // A failed compile shows how to repeat it; a built program shows where it is.
    row("", dim(shown(v.build.ok() ? v.build.binary.string() : text::join(v.build.command, " "))));
  }

  void print_runtime(const verify::ProgramReport& program) {
    const auto version = [](const std::optional<int>& encoded) {
      return encoded && *encoded != 0 ? Version::from_cuda_int(*encoded).str() : std::string("?");
    };
    const bool no_driver = program.driver_version && *program.driver_version == 0;
    row("Runtime", "CUDA runtime " + version(program.runtime_version) + ", " +
                       (no_driver ? "no driver (cudaDriverGetVersion gives 0)"
                                  : "driver supports CUDA <= " + version(program.driver_version)));
  }

  void print_gpu(const verify::GpuReport& gpu) {
    const auto& cc = gpu.compute_capability;
    row("GPU " + std::to_string(gpu.index),
        shown(gpu.name) + "  compute " + cc.str() + " (" + resolve::sm_name(cc) + ")  " +
            std::to_string(gpu.multiprocessors) + " SMs  " + human_bytes(gpu.memory_bytes));
    if (gpu.kernel) {
      const auto& k = *gpu.kernel;
      row("", k.ok ? styled("kernel ok", Tone::good, colour_) + ": " + std::to_string(k.elements) +
                         " elements match the CPU"
                   : styled("kernel WRONG", Tone::bad, colour_) + ": " +
                         std::to_string(k.mismatches) + " of " + std::to_string(k.elements) +
                         " elements differ from the CPU");
    }
    if (gpu.bandwidth_gbs) {
      row("", "device-to-device copy " + fixed(*gpu.bandwidth_gbs, "%.1f") + " GB/s" +
                  dim(" (read + write; a sanity figure)"));
    }
  }

  void print_cudnn(const verify::Verification& v) {
    const auto& loaded = v.program.cudnn;
    std::string value = shown(v.cudnn->library) + ": ";
    if (!loaded && v.build_only) {
      value += "found, not loaded (--build-only)";
      if (v.cudnn->expected)
        value += dim(", " + shown(v.cudnn->header) + " says " + std::to_string(*v.cudnn->expected));
    } else if (!loaded) {
      value += "not checked (the program did not get that far)";
    } else if (!loaded->loaded) {
      value += styled("not loadable", Tone::bad, colour_) + " (" + shown(loaded->message) + ")";
    } else {
      value += "cudnnGetVersion() = " + std::to_string(loaded->version.value_or(0));
      if (v.cudnn->expected) {
        value += dim(", " + shown(v.cudnn->header) + " says " + std::to_string(*v.cudnn->expected));
      }
    }
    row("cuDNN", value);
  }

  void print_framework(const verify::FrameworkReport& f) {
    if (!f.installed) {
      row(f.name, styled("not installed", Tone::bad, colour_) + dim(" (" + shown(f.message) + ")"));
      return;
    }
    std::string value = shown(f.version) + "  CUDA " + shown(f.cuda.value_or("none")) + "  sees " +
                        std::to_string(f.gpus) + " GPU" + (f.gpus == 1 ? "" : "s");
    for (const auto& [gpu, coverage] : f.coverage) {
      value += "  " + resolve::sm_name(gpu) + ": " + verify::to_string(coverage);
    }
    if (f.op_ok) value += *f.op_ok ? "  op ok" : "  op FAILED";
    row(f.name, value);
    if (!f.message.empty()) row("", dim(shown(f.message)));
    for (const auto& line : f.library_scan) row("", "its libraries, " + shown(line));
  }

  void print_result(const verify::Verification& v) {
    if (v.ok()) {
      row("Result", styled("ok", Tone::good, colour_) +
                        (v.build_only ? ": this toolkit builds GPU code for " +
                                            verify::describe(v.archs) + " on this machine"
                                      : ": this toolkit builds and runs GPU code on this machine"));
      return;
    }
    row("Result",
        styled("FAILED: " + std::string(verify::to_string(v.cause->id)), Tone::bad, colour_));
    row("", shown(v.cause->message));
    row("Fix", shown(v.cause->fix));
  }

  std::ostream& out_;
  bool colour_;
};

Result<verify::VerifyRequest> build_request(const VerifyOptions& options, Context& context) {
  verify::VerifyRequest request;
  if (!options.spec.empty()) {
    auto spec = VersionSpec::parse(options.spec);
    if (!spec) return make_error(ErrorKind::usage, "SPEC: " + spec.error().message);
    request.selection.spec = *spec;
  } else {
    auto here =
        here::find_here(activate::without_activation(context.env),
                        paths::working_directory(context.env), std::nullopt, &context.sysroot);
    if (!here) return here.error();
    request.selection.here = std::move(*here);
  }
  for (const auto& arch : options.only_arch) {
    auto cc = resolve::parse_compute_capability(arch);
    if (!cc) {
      return make_error(ErrorKind::usage,
                        "--only-arch: \"" + arch + "\" is not a compute capability",
                        "write it as 8.0 or sm_80");
    }
    request.archs.only.push_back(*cc);
  }
  request.archs.no_ptx = options.no_ptx;
  request.build_only = options.build_only;
  if (options.build_only && (options.record || options.torch || options.tensorflow || options.jax))
    return make_error(ErrorKind::usage,
                      "--build-only runs nothing: it cannot be combined with --record, --torch, "
                      "--tensorflow or --jax",
                      "run cudaenv verify without --build-only on a machine with the GPU");
  if (!options.cudnn.empty()) {
    request.cudnn = options.cudnn;
  } else if (options.spec.empty()) {
    // The project's .cudaenv may select a cuDNN too; verify checks it with the toolkit.
    if (const auto& here = request.selection.here; here && here->selection.cudnn)
      request.cudnn = here->selection.cudnn->str();
  }
  const std::pair<bool, const char*> frameworks[] = {
      {options.torch, "torch"}, {options.tensorflow, "tensorflow"}, {options.jax, "jax"}};
  for (const auto& [wanted, name] : frameworks) {
    if (wanted) request.frameworks.emplace_back(name);
  }
  return request;
}

}  // namespace

Status run_verify(const VerifyOptions& options, Context& context, Outcome& outcome) {
  auto request = build_request(options, context);
  if (!request) return request.error();
  const auto data_root = paths::data_root(context.env);
  if (auto trusted = ownership::check_data_root(data_root); !trusted) return trusted;
  auto db = manifest::load_default_database(data_root);
  if (!db) return db.error();
  const auto store = project::store_for(context.env);
  const auto facts = probe::probe_machine({context.sysroot, context.loader, context.runner,
                                           context.env, data_root, store.shared_roots});
  auto verification =
      verify::verify_toolkit(*request, {facts, *db, context.env, context.sysroot, context.runner,
                                        verify::cache_root(data_root), store});
  if (!verification) return verification.error();
  const auto report = verification_to_json(*verification)
                          .dump(2, ' ', true, nlohmann::json::error_handler_t::replace);
  if (options.json) {
    context.out << report << '\n';
  } else {
    VerifyPrinter(context.out, context.colour).print(*verification);
  }
  note_target_mismatch(facts, context);
  outcome.exit_code = verification->ok() ? 0 : static_cast<int>(ErrorKind::verification_failed);
  if (!options.record || !verification->ok()) return Ok{};
  const auto& version = verification->toolkit.facts.version;
  return record_receipt(facts, version ? version->str() : "", lock::sha256_text(report), context);
}

void add_verify_command(CLI::App& app, Context& context, Outcome& outcome) {
  auto options = std::make_shared<VerifyOptions>();
  auto* command = app.add_subcommand(
      "verify", "Prove a toolkit builds and runs GPU code here; name what broke if not");
  command->add_option("SPEC", options->spec,
                      "CUDA version spec (default: the active toolkit, else the system's)");
  command->add_flag("--json", options->json, "Print the report as JSON");
  command->add_flag("--record", options->record,
                    "When it passes, store a receipt under this machine's target in .cudaenv.lock");
  command->add_option("--cudnn", options->cudnn,
                      "Also load this cuDNN (a directory with lib/ or lib64/, or the library)");
  command->add_flag("--build-only", options->build_only,
                    "Build the device query (for --only-arch, else the GPUs here) and stop: the "
                    "check a machine without a GPU can make, such as a container build");
  command->add_flag("--torch", options->torch, "Also check PyTorch in the active Python");
  command->add_flag("--tensorflow", options->tensorflow,
                    "Also check TensorFlow in the active Python");
  command->add_flag("--jax", options->jax, "Also check JAX in the active Python");
  command
      ->add_option("--only-arch", options->only_arch,
                   "Build machine code only for this compute capability (8.0 or sm_80); "
                   "repeatable")
      ->group("Diagnostics (deliberately wrong builds)");
  command->add_flag("--no-ptx", options->no_ptx, "Leave PTX out of the build")
      ->group("Diagnostics (deliberately wrong builds)");
  command->callback(
      [options, &context, &outcome] { outcome.status = run_verify(*options, context, outcome); });
}

}  // namespace cudaenv::cli
