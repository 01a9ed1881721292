// `cudaenv arch [--target NAME] [--format FORMAT]`: what conda, pixi, Spack, Nix, CMake, PyTorch
// and variant-aware installers need for this machine's GPUs or a declared target's
// (arch/formats.hpp decides; this file parses and prints).

#include <iomanip>
#include <sstream>

#include <nlohmann/json.hpp>

#include "arch/formats.hpp"
#include "arch/subject.hpp"
#include "cli/commands.hpp"
#include "cli/terminal.hpp"
#include "core/paths.hpp"
#include "core/text.hpp"
#include "manifest/load.hpp"
#include "probe/driver.hpp"
#include "project/project_file.hpp"
#include "project/targets.hpp"

namespace cudaenv::cli {

namespace {

struct ArchOptions {
  std::string target;
  std::string format = "text";
  bool json = false;
};

Result<arch::GpuSubject> declared_subject(const std::string& name, const manifest::Database& db,
                                          Context& context) {
  const auto file = project::find_project_file(paths::working_directory(context.env));
  if (!file)
    return make_error(ErrorKind::usage, "--target: no .cudaenv here or in any parent directory",
                      "declare one: [targets.a100] with driver = \"535.104.05\" and arch = "
                      "[\"8.0\"]");
  auto project = project::read_project_file(*file);
  if (!project) return project.error();
  const auto shown = text::printable(file->string(), text::message_limit);
  auto found = project::require_target(project->targets, name, shown);
  if (!found) return found.error();
  const auto* target = *found;
  // A target naming GPU models (gpu = "H100") has its architectures from the database's rows.
  std::vector<project::DeclaredTarget> chosen = {*target};
  if (auto named = project::name_gpu_archs(chosen, db.gpu_model_archs(), shown); !named)
    return named.error();
  return arch::target_subject(chosen.front(), file->string(), db);
}

Result<arch::GpuSubject> subject_for(const ArchOptions& options, Context& context) {
  auto database = manifest::load_selected_database(paths::data_root(context.env));
  if (!database) return database.error();
  if (!options.target.empty()) return declared_subject(options.target, database->db, context);
  return arch::machine_subject(probe::probe_driver(context.sysroot, context.loader), database->db);
}

std::string cuda_source(arch::CudaSource source) {
  switch (source) {
    case arch::CudaSource::driver: return "the driver says";
    case arch::CudaSource::database: return "the database's driver branches";
    case arch::CudaSource::none: break;
  }
  return "";
}

std::string describe(const arch::GpuSubject& subject) {
  std::string out = subject.declared ? "target " + subject.name + " (" +
                                           text::printable(subject.file, text::message_limit) + ")"
                                     : subject.name;
  out +=
      subject.driver.empty() ? ": no NVIDIA driver" : ": driver " + text::printable(subject.driver);
  if (subject.driver_cuda)
    out +=
        ", CUDA <= " + subject.driver_cuda->str() + " (" + cuda_source(subject.cuda_source) + ")";
  out += subject.archs.empty() ? "; no GPU" : "; GPUs " + arch::sm_names(subject.archs);
  return out;
}

class SummaryPrinter {
 public:
  SummaryPrinter(std::ostream& out, bool colour) : out_(out), colour_(colour) {}

  void print(const arch::GpuSubject& subject) {
    block("For", describe(subject));
    for (const auto format : {arch::Format::conda, arch::Format::pixi, arch::Format::spack,
                              arch::Format::nix, arch::Format::cmake, arch::Format::torch}) {
      shown(std::string(arch::format_name(format)), arch::render(format, subject));
    }
    // The properties run to a hundred lines: the two facts that decide them stand here.
    auto variant = arch::render(arch::Format::variant_env, subject);
    if (variant) *variant += "(the two facts its properties follow: --format variant lists them)";
    shown("variant", variant);
    for (const auto& note : arch::notes(arch::Format::text, subject))
      block("Note", styled(note, Tone::dim, colour_));
  }

 private:
  void block(std::string_view label, const std::string& text) {
    bool first = true;
    for (const auto& line : text::split(text, '\n')) {
      if (line.empty()) continue;
      std::ostringstream padded;
      padded << std::left << std::setw(11) << (first ? label : "");
      out_ << styled(padded.str(), Tone::heading, colour_) << line << '\n';
      first = false;
    }
  }
  void shown(const std::string& label, const Result<std::string>& text) {
    block(label,
          text ? *text
               : styled("unknown: " + text::printable(text.error().message, text::message_limit),
                        Tone::dim, colour_));
  }

  std::ostream& out_;
  bool colour_;
};

nlohmann::json variables_json(const arch::Variables& variables) {
  auto out = nlohmann::json::object();
  for (const auto& [name, value] : variables) out[name] = value;
  return out;
}

template <typename Value, typename Shape>
nlohmann::json or_null(const Result<Value>& value, Shape shape) {
  return value ? shape(*value) : nlohmann::json(nullptr);
}

nlohmann::json subject_json(const arch::GpuSubject& subject) {
  auto archs = nlohmann::json::array();
  for (const auto& each : subject.archs) archs.push_back(each.str());
  const auto null_if_empty = [](const std::string& s) {
    return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s);
  };
  return {{"name", subject.name},
          {"declared", subject.declared},
          {"file", null_if_empty(subject.file)},
          {"driver", null_if_empty(subject.driver)},
          {"driver_cuda", subject.driver_cuda ? nlohmann::json(subject.driver_cuda->str())
                                              : nlohmann::json(nullptr)},
          {"driver_cuda_source",
           null_if_empty(subject.cuda_source == arch::CudaSource::driver     ? "driver"
                         : subject.cuda_source == arch::CudaSource::database ? "database"
                                                                             : "")},
          {"archs", archs}};
}

nlohmann::json arch_json(const arch::GpuSubject& subject) {
  const auto wrap = [](const char* key) {
    return [key](const std::string& value) { return nlohmann::json{{key, value}}; };
  };
  nlohmann::json variant = nullptr;
  if (auto properties = arch::variant_properties(subject)) {
    variant = {{"properties", *properties},
               {"environment", variables_json(*arch::variant_environment(subject))}};
  }
  return {
      {"subject", subject_json(subject)},
      {"conda", variables_json(arch::conda_variables(subject))},
      {"pixi", or_null(arch::pixi_cuda(subject),
                       [](const std::string& cuda) {
                         return nlohmann::json{{"system-requirements", {{"cuda", cuda}}}};
                       })},
      {"spack", or_null(arch::spack_spec(subject),
                        [](const std::string& spec) { return nlohmann::json(spec); })},
      {"nix",
       or_null(arch::nix_capabilities(subject),
               [](const std::vector<std::string>& capabilities) {
                 return nlohmann::json{{"cudaSupport", true}, {"cudaCapabilities", capabilities}};
               })},
      {"cmake", or_null(arch::cmake_architectures(subject), wrap("CMAKE_CUDA_ARCHITECTURES"))},
      {"torch", or_null(arch::torch_arch_list(subject), wrap("TORCH_CUDA_ARCH_LIST"))},
      {"variant", variant},
      {"notes", arch::notes(arch::Format::json, subject)}};
}

Result<arch::Format> chosen_format(const ArchOptions& options) {
  const auto format = arch::parse_format(options.format);
  if (!format)
    return make_error(ErrorKind::usage,
                      "--format: unknown format '" + text::printable(options.format) +
                          "'; it takes " + arch::format_names(),
                      "cudaenv arch --format cmake, for one");
  if (options.json && *format != arch::Format::json && options.format != "text")
    return make_error(ErrorKind::usage, "--json and --format " + options.format + " disagree",
                      "give one of them");
  return options.json ? arch::Format::json : *format;
}

Status run_arch(const ArchOptions& options, Context& context) {
  auto format = chosen_format(options);
  if (!format) return format.error();
  auto subject = subject_for(options, context);
  if (!subject) return subject.error();
  if (*format == arch::Format::text) {
    SummaryPrinter(context.out, context.colour).print(*subject);
    return Ok{};
  }
  if (*format == arch::Format::json) {
    context.out << arch_json(*subject).dump(2, ' ', true, nlohmann::json::error_handler_t::replace)
                << '\n';
    return Ok{};
  }
  auto text = arch::render(*format, *subject);
  if (!text) return text.error();
  context.out << *text;
  if (!context.quiet) {
    for (const auto& note : arch::notes(*format, *subject))
      context.err << "cudaenv: note: " << note << '\n';
  }
  return Ok{};
}

}  // namespace

void add_arch_command(CLI::App& app, Context& context, Outcome& outcome) {
  auto options = std::make_shared<ArchOptions>();
  auto* command = app.add_subcommand(
      "arch", "Print what conda, pixi, Spack, Nix, CMake and PyTorch need for these GPUs");
  command->add_option("--target", options->target,
                      "A target .cudaenv declares ([targets.NAME]) instead of this machine");
  command->add_option("--format", options->format, "Output: " + arch::format_names());
  command->add_flag("--json", options->json, "The same as --format json");
  command->callback(
      [options, &context, &outcome] { outcome.status = run_arch(*options, context); });
}

}  // namespace cudaenv::cli
