// `cudaenv resolve`: the best compatible (driver, toolkit, cuDNN, framework) set, and why.

#include <algorithm>
#include <future>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/terminal.hpp"
#include "core/paths.hpp"
#include "core/text.hpp"
#include "core/untrusted.hpp"
#include "manifest/db_index.hpp"
#include "manifest/load.hpp"
#include "probe/compilers.hpp"
#include "probe/driver.hpp"
#include "probe/kernel_module.hpp"
#include "probe/remembered_gpus.hpp"
#include "probe/wsl.hpp"
#include "project/project_file.hpp"
#include "resolve/pinned_request.hpp"
#include "resolve/pip_lines.hpp"
#include "resolve/resolver.hpp"
#include "resolve/toolkit_identity.hpp"

namespace cudaenv::cli {

namespace {

using json = nlohmann::ordered_json;

// The machine resolved for, and where each fact came from.
struct TargetReport {
  resolve::Target target;
  std::string driver_source = "none";  // "detected", "--driver" or "none"
  std::string gpu_source = "none";
  std::vector<std::string> notes;
};

Result<std::optional<VersionSpec>> parse_spec(const std::string& flag, const std::string& value) {
  if (value.empty()) return std::optional<VersionSpec>{};
  auto spec = VersionSpec::parse(value);
  if (!spec)
    return make_error(ErrorKind::usage, flag + ": " + spec.error().message, spec.error().hint);
  return std::optional<VersionSpec>{*spec};
}

Result<resolve::Request> build_request(const ResolveOptions& options) {
  resolve::Request request;
  const std::pair<const std::string*, std::optional<VersionSpec> resolve::Request::*> flags[] = {
      {&options.cuda, &resolve::Request::cuda},
      {&options.cudnn, &resolve::Request::cudnn},
      {&options.torch, &resolve::Request::torch},
      {&options.tensorflow, &resolve::Request::tensorflow},
      {&options.jax, &resolve::Request::jax}};
  const char* names[] = {"--cuda", "--cudnn", "--torch", "--tensorflow", "--jax"};
  for (size_t i = 0; i < std::size(flags); ++i) {
    auto spec = parse_spec(names[i], *flags[i].first);
    if (!spec) return spec.error();
    request.*flags[i].second = *spec;
  }
  request.include_unchecked = options.include_unchecked;
  return request;
}

// The driver and the GPUs' architectures, read as cheaply as they can be: the kernel module's
// version file answers the driver, and the architectures come from --arch or from the last full
// probe of this boot (probe/remembered_gpus.hpp); only when neither has them is NVML (or the CUDA
// driver API) started, which costs tens of milliseconds.
struct DetectedDriver {
  std::optional<std::string> version;
  std::vector<Version> archs;
};

DetectedDriver detect_driver(Context& context, bool archs_given) {
  DetectedDriver detected;
  detected.version = probe::kernel_module_driver_version(context.sysroot);
  if (detected.version && !archs_given)
    detected.archs = probe::remembered_gpu_archs(context.sysroot, paths::data_root(context.env),
                                                 *detected.version);
  if (detected.version && (archs_given || !detected.archs.empty())) return detected;
  auto reading = probe::probe_driver(context.sysroot, context.loader);
  detected.version.reset();
  if (reading.driver) detected.version = reading.driver->version;
  detected.archs = probe::distinct_architectures(reading.gpus);
  // The next resolve (and the prompt hook) of this boot reads them from the record instead.
  (void)probe::remember_gpu_archs(context.sysroot, paths::data_root(context.env), detected.archs);
  return detected;
}

void detect(TargetReport& report, Context& context, bool archs_given) {
  // Jetson boards carry this file (L4T); their driver is JetPack's, out of the database's scope.
  report.target.tegra_machine = context.sysroot.exists("/etc/nv_tegra_release");
  report.target.windows_driver = probe::probe_wsl(context.sysroot).wsl2;
  const auto driver = detect_driver(context, archs_given);
  if (driver.version) {
    report.target.driver = Version::parse(*driver.version);
    report.driver_source = "detected";
    if (report.target.windows_driver)
      report.notes.emplace_back("WSL2: driver " + *driver.version +
                                " is the Windows one; a newer driver is installed on Windows, "
                                "never inside WSL");
  } else {
    report.notes.emplace_back(
        "no NVIDIA driver detected: resolving without a driver constraint (--driver targets one)");
  }
  report.target.gpus = driver.archs;
  // Their names say whether they are data-center GPUs (forward compatibility): the kernel's
  // /proc files, as cheap as the module's version.
  if (!archs_given) report.target.gpu_names = probe::kernel_gpu_models(context.sysroot);
  if (!driver.archs.empty()) {
    report.gpu_source = "detected";
  } else {
    report.notes.emplace_back(
        "no GPU detected: resolving without an architecture constraint (--arch targets one)");
  }
  report.target.gcc = probe::default_gcc_version(context.sysroot, context.runner, context.env);
}

Result<TargetReport> build_target(const ResolveOptions& options, Context& context) {
  TargetReport report;
  if (!options.no_detect) detect(report, context, !options.arch.empty());
  if (!options.driver.empty()) {
    auto driver = Version::parse(options.driver);
    if (!driver) {
      return make_error(ErrorKind::usage,
                        "--driver: \"" + options.driver + "\" is not a driver version",
                        "write it as nvidia-smi prints it, e.g. --driver 535.104.05");
    }
    report.target.driver = driver;
    report.driver_source = "--driver";
    std::erase_if(report.notes, [](const std::string& n) { return text::contains(n, "--driver"); });
  }
  if (!options.arch.empty()) {
    report.target.gpus.clear();
    for (const auto& arch : options.arch) {
      auto cc = resolve::parse_compute_capability(arch);
      if (!cc) {
        return make_error(ErrorKind::usage, "--arch: \"" + arch + "\" is not a compute capability",
                          "write it as 8.9 or sm_89");
      }
      if (std::find(report.target.gpus.begin(), report.target.gpus.end(), *cc) ==
          report.target.gpus.end())
        report.target.gpus.push_back(*cc);
    }
    report.gpu_source = "--arch";
    std::erase_if(report.notes, [](const std::string& n) { return text::contains(n, "--arch"); });
  }
  if (!options.arch.empty() || !options.gpu.empty()) report.target.gpu_names.clear();
  if (!options.gcc.empty()) {
    report.target.gcc = Version::parse(options.gcc);
    if (!report.target.gcc) {
      return make_error(ErrorKind::usage, "--gcc: \"" + options.gcc + "\" is not a version",
                        "e.g. --gcc 12.3");
    }
  }
  return report;
}

// --gpu H100: the model's compute capability joins the target, and its name says it is a
// data-center GPU. Read once the database is loaded.
Status add_named_gpus(const std::vector<std::string>& names, const manifest::Database& db,
                      TargetReport& report) {
  if (names.empty()) return Ok{};
  if (report.gpu_source != "--arch") report.target.gpus.clear();
  for (const auto& name : names) {
    if (auto ok = untrusted::check(untrusted::Field::gpu_model, name, "--gpu", ErrorKind::usage);
        !ok)
      return ok.error();
    const auto* model = db.model_of_device(name);
    if (model == nullptr)
      return make_error(ErrorKind::usage,
                        "--gpu: the database knows no GPU \"" + text::printable(name) + "\"",
                        "write its compute capability instead (--arch 9.0; nvidia-smi "
                        "--query-gpu=name,compute_cap prints it)");
    report.target.gpu_names.push_back(model->name);
    auto& gpus = report.target.gpus;
    if (std::find(gpus.begin(), gpus.end(), model->compute_capability) == gpus.end())
      gpus.push_back(model->compute_capability);
  }
  report.gpu_source = report.gpu_source == "--arch" ? "--arch, --gpu" : "--gpu";
  std::erase_if(report.notes, [](const std::string& n) { return text::contains(n, "--arch"); });
  return Ok{};
}

json version_or_null(const std::optional<Version>& v) { return v ? json(v->str()) : json(nullptr); }

json forward_compat_json(const resolve::DriverCheck& check) {
  if (check.forward_compat == nullptr) return nullptr;
  const auto& package = *check.forward_compat;
  return {{"package", package.package},
          {"library", package.driver.str()},
          {"install", "cudaenv compat install " + package.cuda.str()}};
}

json to_json(const resolve::Resolution& resolution, const TargetReport& report) {
  json out;
  out["ok"] = resolution.ok();
  json gpus = json::array();
  for (const auto& gpu : report.target.gpus) gpus.push_back(gpu.str());
  out["target"] = {{"driver", version_or_null(report.target.driver)},
                   {"driver_source", report.driver_source},
                   {"gpus", gpus},
                   {"gpu_source", report.gpu_source},
                   {"gcc", version_or_null(report.target.gcc)}};
  out["cuda"] = nullptr;
  out["cudnn"] = nullptr;
  out["driver"] = {{"detected", version_or_null(report.target.driver)},
                   {"required", nullptr},
                   {"minor_compat_floor", nullptr},
                   {"forward_compat", nullptr}};
  out["frameworks"] = json::array();
  out["warnings"] = json::array();
  out["unconfirmed"] = json::array();
  if (resolution.ok()) {
    const auto& best = resolution.best();
    out["cuda"] = {{"version", best.cuda->version.str()},
                   {"driver_mode", resolve::to_string(best.driver.mode)},
                   {"checked", !best.unchecked}};
    if (best.cudnn)
      out["cudnn"] = {{"version", best.cudnn->version.str()},
                      {"full_version", best.cudnn->full_version.str()}};
    out["driver"]["required"] = version_or_null(best.driver.full_minimum);
    out["driver"]["minor_compat_floor"] = version_or_null(best.driver.compat_floor);
    out["driver"]["forward_compat"] = forward_compat_json(best.driver);
    for (const auto& f : best.frameworks) {
      out["frameworks"].push_back(
          {{"name", f.name},
           {"version", f.version},
           {"variant", f.variant},
           {"install", f.install},
           {"uv_install", resolve::pip_command(f.pip_args, resolve::PipTool::uv)},
           {"pip_args", f.pip_args}});
    }
    out["warnings"] = best.warnings;
    for (const auto& fact : best.unconfirmed) {
      out["unconfirmed"].push_back(
          {{"fact", fact.fact}, {"confidence", fact.confidence}, {"basis", fact.basis}});
    }
  }
  json rejected = json::array();
  for (const auto& r : resolution.rejected)
    rejected.push_back({{"candidate", r.candidate}, {"reason", r.reason}});
  out["rejected"] = rejected;
  out["suggestions"] = resolution.suggestions;
  out["unchecked_skipped"] = resolution.unchecked_skipped;
  out["notes"] = report.notes;
  return out;
}

// What a row shows comes from the database (which `db update` fetches), a .cudaenv, the
// machine: escaped and cut before it reaches a terminal.
std::string shown(const std::string& text) { return text::printable(text, text::message_limit); }

class ResolvePrinter {
 public:
  ResolvePrinter(std::ostream& out, bool colour, bool verbose)
      : out_(out), colour_(colour), verbose_(verbose) {}

  void print(const resolve::Resolution& resolution, const TargetReport& report) {
    print_target(report);
    if (resolution.ok()) {
      print_solution(resolution.best());
    } else {
      row("Result", styled("no compatible set", Tone::bad, colour_));
    }
    for (const auto& note : report.notes) row("Note", styled(shown(note), Tone::dim, colour_));
    if (!resolution.unchecked_skipped.empty()) {
      row("Note", styled("left out, driver floor unknown: CUDA " +
                             text::join(resolution.unchecked_skipped, ", ") +
                             " (--include-unchecked considers them)",
                         Tone::dim, colour_));
    }
    print_rejections(resolution);
    for (const auto& suggestion : resolution.suggestions) row("Suggest", shown(suggestion));
    if (verbose_ && resolution.solutions.size() > 1) {
      out_ << styled("Other sets that fit, in order of preference:", Tone::heading, colour_)
           << '\n';
      for (size_t i = 1; i < resolution.solutions.size(); ++i)
        out_ << "  " << shown(summary(resolution.solutions[i])) << '\n';
    }
  }

 private:
  void row(std::string_view label, const std::string& value) {
    std::string padded(label);
    padded.resize(std::max<size_t>(padded.size(), 11), ' ');
    out_ << styled(padded, Tone::heading, colour_) << value << '\n';
  }

  void print_target(const TargetReport& report) {
    const auto& t = report.target;
    std::vector<std::string> parts;
    parts.push_back(t.driver ? "driver " + t.driver->str() + " (" + report.driver_source + ")"
                             : "any driver");
    std::vector<std::string> sms;
    for (const auto& gpu : t.gpus) sms.push_back(resolve::sm_name(gpu));
    parts.push_back(sms.empty() ? "any GPU"
                                : text::join(sms, " ") + " (" + report.gpu_source + ")");
    if (t.gcc) parts.push_back("gcc " + t.gcc->str());
    row("Target", shown(text::join(parts, ", ")));
  }

  static std::string summary(const resolve::Solution& s) {
    std::string text =
        "CUDA " + s.cuda->version.str() + " [" + resolve::to_string(s.driver.mode) + "]";
    if (s.cudnn) text += ", cuDNN " + s.cudnn->full_version.str();
    for (const auto& f : s.frameworks)
      text += ", " + f.name + " " + f.version + (f.variant.empty() ? "" : " " + f.variant);
    return text;
  }

  void print_solution(const resolve::Solution& best) {
    std::string cuda = best.cuda->version.str();
    if (best.driver.full_minimum) cuda += "  driver >= " + best.driver.full_minimum->str();
    cuda += "  [" + std::string(resolve::to_string(best.driver.mode)) + "]";
    if (best.unchecked) cuda += "  (unchecked release)";
    row("CUDA", styled(cuda, Tone::good, colour_));
    if (best.cudnn)
      row("cuDNN", shown(best.cudnn->version.str() + " (" + best.cudnn->full_version.str() + ")"));
    for (const auto& f : best.frameworks) {
      row(shown(f.name), shown(f.version + (f.variant.empty() ? "" : " " + f.variant)) + "  " +
                             styled(shown(f.install), Tone::dim, colour_));
      row("", styled(shown(resolve::pip_command(f.pip_args, resolve::PipTool::uv)), Tone::dim,
                     colour_));
    }
    for (const auto& warning : best.warnings)
      row("Warning", styled(shown(warning), Tone::warn, colour_));
    for (const auto& fact : best.unconfirmed) {
      row("Unverified", styled(shown(fact.fact + " is " + fact.confidence + ": " + fact.basis),
                               Tone::warn, colour_));
    }
  }

  void print_rejections(const resolve::Resolution& resolution) {
    const size_t limit =
        verbose_ || !resolution.ok() ? (verbose_ ? resolution.rejected.size() : 8) : 0;
    for (size_t i = 0; i < resolution.rejected.size() && i < limit; ++i) {
      const auto& r = resolution.rejected[i];
      row(i == 0 ? "Rejected" : "", shown(r.candidate + ": " + r.reason));
    }
    if (resolution.rejected.size() > limit && limit > 0) {
      row("", "... " + std::to_string(resolution.rejected.size() - limit) +
                  " more (--verbose lists them)");
    }
  }

  std::ostream& out_;
  bool colour_;
  bool verbose_;
};

struct Resolved {
  ResolveAnswer answer;
  TargetReport target;
  std::optional<std::string> stale_note;  // the database is older than 90 days
};

struct ProjectPins {
  ResolveOptions options;
  std::optional<std::filesystem::path> file;  // the .cudaenv they came from; nullopt: the flags
};

bool names_versions(const ResolveOptions& options) {
  return !options.cuda.empty() || !options.cudnn.empty() || !options.torch.empty() ||
         !options.tensorflow.empty() || !options.jax.empty();
}

// Without version flags, the nearest .cudaenv's pins are the request (and a pinned framework
// with no build for the pinned CUDA is an error naming both).
Result<ProjectPins> project_pins(const ResolveOptions& options, Context& context) {
  ProjectPins pins{options, std::nullopt};
  if (names_versions(options)) return pins;
  const auto file = project::find_project_file(paths::working_directory(context.env));
  if (!file) return pins;
  auto parsed = project::read_project_file(*file);
  if (!parsed) return parsed.error();
  pins.file = *file;
  const auto spec_text = [](const std::optional<VersionSpec>& spec) {
    return spec ? spec->str() : std::string();
  };
  pins.options.cuda = spec_text(parsed->cuda);
  pins.options.cudnn = spec_text(parsed->cudnn);
  const std::pair<const char*, std::string ResolveOptions::*> frameworks[] = {
      {"torch", &ResolveOptions::torch},
      {"tensorflow", &ResolveOptions::tensorflow},
      {"jax", &ResolveOptions::jax}};
  for (const auto& [name, field] : frameworks) {
    if (const auto it = parsed->frameworks.find(name); it != parsed->frameworks.end())
      pins.options.*field = it->second.str();
  }
  return pins;
}

// The request and target from the flags, the database, the answer: what both entry points share.
Result<Resolved> resolve_options(const ResolveOptions& flags, Context& context) {
  auto pins = project_pins(flags, context);
  if (!pins) return pins.error();
  const auto& options = pins->options;
  auto request = build_request(options);
  if (!request)
    return pins->file ? request.error().with_context(pins->file->string()) : request.error();
  // The machine is probed (the driver's files, the GPU record or NVML, a gcc process) while the
  // database is parsed: neither needs the other, and each is a few milliseconds.
  auto probing = std::async(std::launch::async | std::launch::deferred,
                            [&] { return build_target(options, context); });
  auto selected = manifest::load_selected_database(paths::data_root(context.env));
  auto target = probing.get();
  if (!target) return target.error();
  if (!selected) return selected.error();
  auto* db = &selected->db;
  if (auto named = add_named_gpus(options.gpu, *db, *target); !named) return named.error();
  if (pins->file) target->notes.insert(target->notes.begin(), "pins from " + pins->file->string());
  const resolve::Pins asked{request->cuda, request->cudnn, request->torch, request->tensorflow,
                            request->jax};
  auto pinned =
      resolve::request_for_pins(*db, asked, pins->file ? pins->file->string() : std::string());
  if (!pinned) return pinned.error();
  for (auto& note : pinned->notes) target->notes.push_back(std::move(note));
  pinned->request.include_unchecked = request->include_unchecked;
  *request = pinned->request;
  auto kept = std::make_unique<manifest::Database>(std::move(*db));
  auto resolution = resolve::resolve(*kept, target->target, *request);
  return Resolved{{std::move(kept), std::move(resolution)},
                  std::move(*target),
                  manifest::stale_database_note(selected->origin.revision, selected->origin.date,
                                                std::chrono::system_clock::now())};
}

}  // namespace

Status run_resolve(const ResolveOptions& options, Context& context, Outcome& outcome) {
  auto resolved = resolve_options(options, context);
  if (!resolved) return resolved.error();
  const auto& resolution = resolved->answer.resolution;
  const auto& target = resolved->target;
  if (options.json) {
    context.out << to_json(resolution, target).dump(2, ' ', true, json::error_handler_t::replace)
                << '\n';
  } else {
    ResolvePrinter(context.out, context.colour, options.verbose).print(resolution, target);
  }
  if (resolved->stale_note) context.err << "note: " << shown(*resolved->stale_note) << '\n';
  outcome.exit_code = resolution.ok() ? 0 : static_cast<int>(ErrorKind::no_compatible_set);
  return Ok{};
}

Result<ResolveAnswer> resolve_here(const ResolveOptions& options, Context& context) {
  auto resolved = resolve_options(options, context);
  if (!resolved) return resolved.error();
  return std::move(resolved->answer);
}

void add_resolve_command(CLI::App& app, Context& context, Outcome& outcome) {
  auto options = std::make_shared<ResolveOptions>();
  auto* command =
      app.add_subcommand("resolve", "Find the best compatible driver/CUDA/cuDNN/framework set");
  command->add_option("--cuda", options->cuda,
                      "CUDA version spec: 12, 12.4, 12.4.1, \">=12.1,<12.5\", latest");
  command->add_option("--cudnn", options->cudnn, "cuDNN version spec");
  command->add_option("--torch", options->torch, "PyTorch version spec");
  command->add_option("--tensorflow", options->tensorflow, "TensorFlow version spec");
  command->add_option("--jax", options->jax, "JAX CUDA plugin: 12, 13 or latest");
  command->add_option("--driver", options->driver,
                      "Resolve for this driver version instead of the detected one");
  command->add_option("--arch", options->arch,
                      "Resolve for a GPU of this compute capability (8.9 or sm_89); repeatable");
  command->add_option("--gpu", options->gpu,
                      "Resolve for this GPU model (H100, A100, RTX 4090); repeatable");
  command->add_option("--gcc", options->gcc, "Host gcc version to check against");
  command->add_flag("--no-detect", options->no_detect, "Do not probe this machine");
  command->add_flag("--include-unchecked", options->include_unchecked,
                    "Also consider CUDA releases whose driver floor is not known");
  command->add_flag("--json", options->json, "Print the answer as JSON");
  command->add_flag("--verbose,-v", options->verbose,
                    "Show every candidate considered and why it fell");
  command->callback(
      [options, &context, &outcome] { outcome.status = run_resolve(*options, context, outcome); });
}

}  // namespace cudaenv::cli
