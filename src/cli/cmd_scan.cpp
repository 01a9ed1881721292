// `cudaenv scan [PATH…] [--python PY] [--arch CC] [--json]`: the GPU code each installed binary
// carries, against the GPUs here (or those --arch describes).

#include <algorithm>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "activate/here.hpp"
#include "cli/commands.hpp"
#include "cli/terminal.hpp"
#include "core/paths.hpp"
#include "core/text.hpp"
#include "here/here.hpp"
#include "manifest/load.hpp"
#include "probe/driver.hpp"
#include "scan/binaries.hpp"
#include "scan/fixes.hpp"
#include "scan/python_sites.hpp"
#include "scan/triton.hpp"

namespace cudaenv::cli {

namespace {

namespace fs = std::filesystem;

// One architecture to judge for: the GPUs here that have it (named once each), or an --arch.
struct Gpu {
  int arch = 0;
  std::vector<std::string> names;
  std::string name() const { return text::join(names, ", "); }
};

// Adds `name` under `arch`: an architecture already listed is judged once (two H100s: sm_90).
void add_gpu(std::vector<Gpu>& gpus, int arch, const std::string& name) {
  const auto same =
      std::find_if(gpus.begin(), gpus.end(), [&](const Gpu& gpu) { return gpu.arch == arch; });
  if (same == gpus.end()) {
    gpus.push_back({arch, {name}});
  } else if (std::find(same->names.begin(), same->names.end(), name) == same->names.end()) {
    same->names.push_back(name);
  }
}

struct Targets {
  std::vector<fs::path> roots;
  std::vector<std::string> site_packages;
  std::vector<std::string> notes;
  std::string toolkit_home;  // the toolkit that applies here: the project's, hook or no hook
};

// Paths read from the machine and its files: escaped and cut before they reach a terminal.
std::string shown(const std::string& text) { return text::printable(text, text::message_limit); }

Result<std::vector<Gpu>> gpus_from_flags(const std::vector<std::string>& flags) {
  std::vector<Gpu> gpus;
  for (const auto& flag : flags) {
    const auto arch = scan::parse_arch(flag);
    if (!arch)
      return make_error(ErrorKind::usage, "--arch " + shown(flag) + ": not a compute capability",
                        "give one as 8.9, 89 or sm_89");
    add_gpu(gpus, *arch, "--arch " + flag);
  }
  return gpus;
}

// The toolkit that applies here, hook or no hook: the selection's, else the system's the builds
// get (here/'s one order); "" for none.
std::string toolkit_home(const here::Here& here) {
  return here.toolkit && !here.missing ? here.toolkit->installed.path.string() : here.system_prefix;
}

std::optional<fs::path> toolkit_library_directory(const fs::path& home) {
  if (home.empty()) return std::nullopt;
  std::error_code error;
  if (fs::is_directory(home / "lib64", error)) return home / "lib64";
  if (fs::is_directory(home / "lib", error)) return home / "lib";
  return std::nullopt;
}

// The cuDNN that applies here (the project's), then any other on LD_LIBRARY_PATH.
std::vector<fs::path> cudnn_directories(const activate::Applied& applied) {
  std::vector<fs::path> found;
  std::error_code error;
  if (applied.here.cudnn && !applied.here.missing) {
    for (const char* lib : {"lib", "lib64"})
      if (const auto dir = applied.here.cudnn->path / lib; fs::is_directory(dir, error)) {
        found.push_back(dir);
        break;
      }
  }
  for (const auto& entry :
       text::split(applied.environment.get("LD_LIBRARY_PATH").value_or(""), ':')) {
    if (entry.empty() || !fs::exists(fs::path(entry) / "libcudnn.so.9", error)) continue;
    if (std::find(found.begin(), found.end(), fs::path(entry)) == found.end())
      found.emplace_back(entry);
  }
  return found;
}

Result<Targets> default_targets(const ScanOptions& options, const activate::Applied& applied,
                                Context& context) {
  Targets targets;
  // A project's toolkit that is not installed is the same error here as in every command; the
  // paths given on the command line are still scanned without it.
  if (applied.here.missing && options.paths.empty()) return *applied.here.missing;
  targets.toolkit_home = toolkit_home(applied.here);
  const auto python = options.python.empty()
                          ? scan::python_on_path(context.env.get("PATH").value_or(""))
                          : options.python;
  if (python.empty()) {
    targets.notes.emplace_back(
        "no python3 on PATH: no site-packages scanned (--python PATH names one)");
  } else {
    auto sites = scan::python_site_packages(context.runner, python, context.env.variables());
    if (!sites) return sites.error();
    targets.site_packages = *sites;
    for (const auto& site : *sites) targets.roots.emplace_back(site);
  }
  if (options.paths.empty() && options.python.empty()) {
    if (auto lib = toolkit_library_directory(targets.toolkit_home)) targets.roots.push_back(*lib);
    for (auto& directory : cudnn_directories(applied)) targets.roots.push_back(directory);
  }
  return targets;
}

struct Machine {
  std::vector<Gpu> gpus;
  std::optional<scan::PtxIsa> ptx_limit;
  scan::FixFacts fix_facts;  // the database and this machine's driver, for the wheel advice
  std::optional<manifest::Database> db;
};

Result<Machine> machine_to_judge(const ScanOptions& options, Context& context) {
  Machine machine;
  const auto reading = probe::probe_driver(context.sysroot, context.loader);
  if (reading.driver)
    machine.fix_facts.driver = {Version::parse(reading.driver->version),
                                reading.driver->cuda_version};
  if (auto db = manifest::load_default_database(paths::data_root(context.env)))
    machine.db = std::move(*db);
  if (!options.arch.empty()) {
    auto gpus = gpus_from_flags(options.arch);
    if (!gpus) return gpus.error();
    machine.gpus = *gpus;
    return machine;  // a described machine: the PTX limit of the driver here is not checked
  }
  for (const auto& gpu : reading.gpus) {
    const auto& cc = gpu.compute_capability;
    add_gpu(machine.gpus, cc.major() * 10 + cc.minor(), gpu.name);
  }
  if (reading.driver && reading.driver->cuda_version)
    machine.ptx_limit = scan::ptx_isa_for_driver_cuda(*reading.driver->cuda_version);
  return machine;
}

struct Summary {
  int native = 0, jit = 0, none = 0, no_kernels = 0;
};

// The JSON spelling of a coverage: "no kernels" reads as "no_kernels" there.
std::string coverage_key(scan::Coverage coverage) {
  return coverage == scan::Coverage::no_kernels ? "no_kernels" : scan::to_string(coverage);
}

nlohmann::json codes_json(const scan::BinaryScan& binary) {
  nlohmann::json sass = nlohmann::json::array(), ptx = nlohmann::json::array();
  nlohmann::json empty = nlohmann::json::array();
  for (const auto& code : binary.codes) {
    if (code.kind == scan::CodeKind::sass) {
      sass.push_back(scan::sm_name(code.arch));
      if (code.no_kernels) empty.push_back(scan::sm_name(code.arch));
    } else
      ptx.push_back(
          {{"arch", "compute_" + std::to_string(code.arch)},
           {"version", std::to_string(code.ptx_major) + "." + std::to_string(code.ptx_minor)}});
  }
  return {{"sass", sass}, {"ptx", ptx}, {"sass_without_kernels", empty}};
}

class ScanPrinter {
 public:
  ScanPrinter(const Machine& machine, Context& context) : machine_(machine), context_(context) {}

  void binary(const scan::BinaryScan& binary, nlohmann::json* json) {
    auto& out = context_.out;
    const bool colour = context_.colour;
    if (!json) out << styled(shown(binary.path), Tone::heading, colour) << '\n';
    nlohmann::json entry = codes_json(binary);
    entry["path"] = binary.path;
    entry["needs"] = binary.cuda_needed;
    if (binary.unreadable) entry["unreadable"] = true;
    if (!binary.error.empty()) {
      entry["error"] = binary.error;
      if (!json)
        out << "  " << styled("unreadable: " + shown(binary.error), Tone::bad, colour) << '\n';
    }
    if (!json) print_codes(binary);
    entry["verdicts"] = nlohmann::json::array();
    for (const auto& gpu : machine_.gpus) {
      if (binary.codes.empty()) break;  // only needs CUDA libraries: nothing to judge
      const auto verdict = scan::verdict_for(binary.codes, gpu.arch, machine_.ptx_limit);
      count(verdict.coverage);
      auto facts = machine_.fix_facts;
      facts.db = machine_.db ? &*machine_.db : nullptr;
      const auto fix = scan::fix_for(binary.path, gpu.arch, verdict, facts);
      entry["verdicts"].push_back({{"arch", scan::sm_name(gpu.arch)},
                                   {"coverage", coverage_key(verdict.coverage)},
                                   {"via", verdict.via},
                                   {"reason", verdict.reason},
                                   {"fix", fix}});
      if (!json) print_verdict(gpu, verdict, fix);
    }
    if (json) json->push_back(std::move(entry));
  }

  const Summary& summary() const { return summary_; }

 private:
  void print_codes(const scan::BinaryScan& binary) {
    std::vector<std::string> sass, ptx;
    for (const auto& code : binary.codes)
      (code.kind == scan::CodeKind::sass ? sass : ptx).push_back(scan::describe(code));
    if (!sass.empty()) context_.out << "  SASS   " << text::join(sass, " ") << '\n';
    if (!ptx.empty()) context_.out << "  PTX    " << text::join(ptx, ", ") << '\n';
    if (!binary.cuda_needed.empty())
      context_.out << "  needs  " << shown(text::join(binary.cuda_needed, " ")) << '\n';
  }

  void print_verdict(const Gpu& gpu, const scan::Verdict& verdict, const std::string& fix) {
    const auto tone = verdict.coverage == scan::Coverage::none  ? Tone::bad
                      : verdict.coverage == scan::Coverage::jit ? Tone::warn
                                                                : Tone::good;
    std::string line = "  " + scan::sm_name(gpu.arch) + ": " +
                       styled(scan::to_string(verdict.coverage), tone, context_.colour);
    line += verdict.via.empty() ? " (" + shown(verdict.reason) + ")" : " via " + shown(verdict.via);
    context_.out << line << '\n';
    if (!fix.empty()) context_.out << "    fix: " << shown(fix) << '\n';
  }

  void count(scan::Coverage coverage) {
    if (coverage == scan::Coverage::native) ++summary_.native;
    if (coverage == scan::Coverage::jit) ++summary_.jit;
    if (coverage == scan::Coverage::none) ++summary_.none;
    if (coverage == scan::Coverage::no_kernels) ++summary_.no_kernels;
  }

  const Machine& machine_;
  Context& context_;
  Summary summary_;
};

nlohmann::json triton_report(const Targets& targets, const Machine& machine, Context& context) {
  const auto ptxas =
      scan::find_triton_ptxas(targets.site_packages, context.env.get("TRITON_PTXAS_PATH"));
  if (!ptxas) return nullptr;
  nlohmann::json report{{"ptxas", ptxas->path},
                        {"chosen_by", ptxas->chosen_by},
                        {"release", ptxas->release ? ptxas->release->str() : ""},
                        {"runs", ptxas->runs},
                        {"problems", nlohmann::json::array()},
                        {"fix", ""}};
  const auto& db = machine.db;
  if (!db || !ptxas->release) return report;
  const auto toolkit_ptxas = fs::path(targets.toolkit_home) / "bin/ptxas";
  const auto toolkit_release = targets.toolkit_home.empty()
                                   ? std::nullopt
                                   : scan::read_ptxas(toolkit_ptxas.string()).release;
  for (const auto& gpu : machine.gpus) {
    const auto problem = scan::ptxas_arch_problem(*db, *ptxas->release, gpu.arch);
    if (!problem) continue;
    report["problems"].push_back(*problem);
    if (toolkit_release && !scan::ptxas_arch_problem(*db, *toolkit_release, gpu.arch))
      report["fix"] = "export TRITON_PTXAS_PATH=" + text::shell_quote(toolkit_ptxas.string()) +
                      " (the active toolkit's ptxas " + toolkit_release->str() + " knows " +
                      scan::sm_name(gpu.arch) + ")";
    else
      report["fix"] = "install a toolkit whose ptxas knows " + scan::sm_name(gpu.arch) +
                      " and point TRITON_PTXAS_PATH at its bin/ptxas, or upgrade triton";
  }
  return report;
}

void print_header(const Machine& machine, const Targets& targets, const scan::WalkResult& walk,
                  Context& context) {
  std::vector<std::string> gpus;
  for (const auto& gpu : machine.gpus)
    gpus.push_back(scan::sm_name(gpu.arch) + " (" + shown(gpu.name()) + ")");
  context.out << "GPUs       "
              << (gpus.empty() ? "none visible (--arch CC judges for one)"
                               : text::join(gpus, ", "));
  if (machine.ptx_limit)
    context.out << "; the driver compiles PTX up to ISA " << machine.ptx_limit->major << '.'
                << machine.ptx_limit->minor;
  context.out << '\n';
  std::vector<std::string> roots;
  for (const auto& root : targets.roots) roots.push_back(shown(root.string()));
  context.out << "Scanned    " << text::join(roots, ", ") << " (" << walk.files_seen << " files, "
              << walk.binaries.size() - walk.unreadable_files << " with GPU code or CUDA libraries"
              << (walk.unreadable_files
                      ? ", " + std::to_string(walk.unreadable_files) + " unreadable"
                      : "")
              << (walk.special_count ? ", " + std::to_string(walk.special_count) + " special file" +
                                           (walk.special_count == 1 ? "" : "s") + " skipped"
                                     : "")
              << ")\n";
  for (const auto& note : targets.notes) context.err << "note: " << shown(note) << '\n';
  for (const auto& root : walk.unreadable)
    context.err << "warning: " << shown(root) << ": not found or unreadable\n";
  for (const auto& special : walk.special)
    context.err << "note: " << shown(special) << ": not a regular file, not opened\n";
  if (walk.special_count > walk.special.size())
    context.err << "note: " << walk.special_count - walk.special.size()
                << " more special files not opened\n";
  for (const auto& warning : walk.warnings) context.err << "warning: " << shown(warning) << '\n';
  context.out << '\n';
}

void print_triton(const nlohmann::json& triton, Context& context) {
  if (triton.is_null()) return;
  const auto runs = triton["runs"].get<std::string>();
  context.out << "\nTriton     ptxas " << shown(triton["ptxas"].get<std::string>()) << " ("
              << shown(triton["chosen_by"].get<std::string>())
              << (runs.empty() ? std::string() : ", a script running " + shown(runs))
              << ", release "
              << (triton["release"].get<std::string>().empty()
                      ? "unknown"
                      : shown(triton["release"].get<std::string>()))
              << ")\n";
  for (const auto& problem : triton["problems"])
    context.out << "           "
                << styled(shown(problem.get<std::string>()), Tone::bad, context.colour) << '\n';
  if (!triton["fix"].get<std::string>().empty())
    context.out << "    fix: " << shown(triton["fix"].get<std::string>()) << '\n';
}

}  // namespace

Status run_scan(const ScanOptions& options, Context& context, Outcome& outcome) {
  auto machine = machine_to_judge(options, context);
  if (!machine) return machine.error();
  // What applies here, decided once: the default targets come from it; with paths given it only
  // names the toolkit for Triton's ptxas fix, and a problem with it does not stop the scan.
  const auto applied =
      activate::environment_here(context.env, paths::working_directory(context.env));
  Targets targets;
  if (options.paths.empty() || !options.python.empty()) {
    if (!applied) return applied.error();
    auto found = default_targets(options, *applied, context);
    if (!found) return found.error();
    targets = std::move(*found);
  }
  for (const auto& path : options.paths) targets.roots.emplace_back(path);
  if (targets.toolkit_home.empty() && applied) targets.toolkit_home = toolkit_home(applied->here);
  const auto walk = scan::scan_paths(targets.roots);
  if (walk.failure) return *walk.failure;
  if (!options.json) print_header(*machine, targets, walk, context);
  ScanPrinter printer(*machine, context);
  nlohmann::json binaries = nlohmann::json::array();
  for (const auto& binary : walk.binaries) {
    printer.binary(binary, options.json ? &binaries : nullptr);
    if (!options.json) context.out << '\n';
  }
  const auto triton = triton_report(targets, *machine, context);
  const auto& summary = printer.summary();
  const bool triton_problem = !triton.is_null() && !triton["problems"].empty();
  if (options.json) {
    nlohmann::json gpus = nlohmann::json::array();
    for (const auto& gpu : machine->gpus)
      gpus.push_back({{"arch", scan::sm_name(gpu.arch)}, {"name", gpu.name()}});
    std::vector<std::string> roots;
    for (const auto& root : targets.roots) roots.push_back(root.string());
    nlohmann::json report{{"gpus", gpus},
                          {"toolkit", targets.toolkit_home},
                          {"roots", roots},
                          {"files_seen", walk.files_seen},
                          {"truncated", walk.truncated},
                          {"warnings", walk.warnings},
                          {"unreadable", walk.unreadable},
                          {"unreadable_files", walk.unreadable_files},
                          {"special_files", walk.special},
                          {"special_count", walk.special_count},
                          {"binaries", binaries},
                          {"triton", triton},
                          {"summary",
                           {{"native", summary.native},
                            {"jit", summary.jit},
                            {"none", summary.none},
                            {"no_kernels", summary.no_kernels}}}};
    report["ptx_isa_limit"] = machine->ptx_limit
                                  ? nlohmann::json(std::to_string(machine->ptx_limit->major) + "." +
                                                   std::to_string(machine->ptx_limit->minor))
                                  : nlohmann::json(nullptr);
    context.out << report.dump(2, ' ', true, nlohmann::json::error_handler_t::replace) << '\n';
  } else {
    print_triton(triton, context);
    context.out << "Summary    " << summary.native << " native, " << summary.jit << " jit, "
                << summary.none << " none"
                << (summary.no_kernels ? ", " + std::to_string(summary.no_kernels) + " no kernels"
                                       : "")
                << '\n';
  }
  outcome.exit_code = summary.none > 0 || triton_problem ? 1 : 0;
  return Ok{};
}

void add_scan_command(CLI::App& app, Context& context, Outcome& outcome) {
  auto options = std::make_shared<ScanOptions>();
  auto* command = app.add_subcommand(
      "scan",
      "Show the GPU code each installed binary carries and whether the GPUs here can run it");
  command->add_option("path", options->paths,
                      "Files or directories to scan (default: the active "
                      "Python's site-packages, toolkit and cuDNN)");
  command->add_option("--python", options->python, "The Python interpreter whose packages to scan");
  command->add_option("--arch", options->arch,
                      "Judge for a GPU of this compute capability (e.g. 8.9); repeatable");
  command->add_flag("--json", options->json, "Print the report as JSON");
  command->callback(
      [options, &context, &outcome] { outcome.status = run_scan(*options, context, outcome); });
}

}  // namespace cudaenv::cli
