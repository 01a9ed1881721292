// `cudaenv why LIBRARY [--for FILE] [--json]`: which copy of a library the dynamic loader picks
// here, in which order it looked, and every other copy that another environment would pick.

#include <filesystem>

#include <nlohmann/json.hpp>

#include "activate/here.hpp"
#include "cli/commands.hpp"
#include "cli/terminal.hpp"
#include "core/paths.hpp"
#include "core/text.hpp"
#include "core/untrusted.hpp"
#include "project/selection.hpp"
#include "scan/copies.hpp"
#include "scan/loader.hpp"
#include "scan/package_library.hpp"
#include "scan/python_sites.hpp"

namespace cudaenv::cli {

namespace {

namespace fs = std::filesystem;

std::string shown(const std::string& text) { return text::printable(text, text::message_limit); }

// This machine's ld.so cache; a missing or damaged one is a note, and the search goes on as
// ld.so's does without it.
std::vector<scan::LdCacheEntry> read_cache(const Sysroot& sysroot,
                                           std::vector<std::string>& notes) {
  std::string problem;
  auto entries = scan::read_ld_cache_file(sysroot.host_path("/etc/ld.so.cache").string(), problem);
  if (!problem.empty()) notes.push_back("ld.so cache not read: " + problem);
  return entries;
}

void add_glob(const fs::path& parent, const std::string& prefix, const std::string& sub,
              std::vector<std::string>& directories) {
  std::error_code error;
  size_t listed = 0;
  for (fs::directory_iterator it(parent, error), end;
       !error && it != end && ++listed <= scan::max_listed_entries; it.increment(error)) {
    if (text::starts_with(it->path().filename().string(), prefix))
      directories.push_back((it->path() / sub).string());
  }
}

// Every place a copy may live: where the loader looked, the pip wheels of the active Python,
// the toolkit that applies here, the toolkits on disk and in the store.
std::vector<std::string> copy_directories(const scan::LoaderInput& input,
                                          const scan::LoaderAnswer& answer,
                                          const activate::Applied& applied,
                                          const std::vector<std::string>& sites, Context& context) {
  std::vector<std::string> directories;
  for (const auto& step : answer.steps)
    directories.push_back(fs::path(step.candidate).parent_path().string());
  for (const auto& entry : text::split(input.ld_library_path, ':'))
    if (!entry.empty()) directories.push_back(entry);
  for (const auto& site : sites)
    for (auto& directory : scan::wheel_library_directories(site)) directories.push_back(directory);
  if (const auto home = applied.environment.get_nonempty("CUDA_HOME"))
    directories.push_back(*home + "/lib64");
  if (!applied.here.system_prefix.empty())
    directories.push_back(applied.here.system_prefix + "/lib64");
  add_glob("/usr/local", "cuda", "lib64", directories);
  const auto root = paths::data_root(context.env);
  add_glob(root / "toolkits", "", "lib64", directories);
  add_glob(root / "cudnn", "", "lib", directories);
  for (const auto& entry : input.cache)
    if (entry.soname == input.library)
      directories.push_back(fs::path(entry.path).parent_path().string());
  for (const auto& directory : input.default_directories) directories.push_back(directory);
  return directories;
}

// NVIDIA's cuDNN archives ship lib/; some repackagings use lib64/.
std::string library_directory_of(const fs::path& prefix) {
  std::error_code error;
  return fs::is_directory(prefix / "lib", error) ? (prefix / "lib").string()
                                                 : (prefix / "lib64").string();
}

// Where the library should come from here, first match deciding: the project's pinned cuDNN (for
// cuDNN's libraries) and toolkit, then the toolkit of $CUDA_HOME.
std::vector<scan::PinnedDirectory> pinned_directories(const std::string& library,
                                                      const activate::Applied& applied) {
  std::vector<scan::PinnedDirectory> pins;
  const auto& here = applied.here;
  if (here.toolkit && !here.missing) {
    const auto source = project::describe_source(here.selection);
    const auto use = "cudaenv use " + here.selection.cuda->str();
    if (here.cudnn && here.selection.cudnn && text::starts_with(library, "libcudnn"))
      pins.push_back({"the pinned cuDNN " + here.selection.cudnn->str() + " (from " + source + ")",
                      library_directory_of(here.cudnn->path), use + " --cudnn"});
    pins.push_back(
        {"the pinned toolkit " + here.toolkit->installed.version.str() + " (from " + source + ")",
         (here.toolkit->installed.path / "lib64").string(), "cudaenv use"});
  }
  if (const auto home = applied.environment.get_nonempty("CUDA_HOME")) {
    for (const char* lib : {"/lib64", "/lib"})
      pins.push_back({"the active toolkit ($CUDA_HOME)", *home + lib, "cudaenv use"});
  }
  return pins;
}

// clang-tidy 14 flags the implicit members of a struct holding nlohmann::json; the report lives
// in run_why, passed by reference, never copied.
// NOLINTNEXTLINE(bugprone-exception-escape)
struct WhyReport {
  nlohmann::json applies;  // what applies here: the toolkit, cuDNN and source every command names
  scan::LoaderAnswer answer;
  std::vector<scan::LibraryCopy> copies;
  std::optional<scan::LibraryCopy> winner;
  std::string mismatch, fix;
  std::vector<std::string> notes;
};

void print_report(const WhyOptions& options, const WhyReport& report, Context& context) {
  auto& out = context.out;
  const auto& applies = report.applies;
  out << "Applies    "
      << (applies["missing"].is_string()
              ? shown(applies["missing"].get<std::string>())
              : (applies["toolkit"].is_string() ? shown(applies["toolkit"].get<std::string>())
                                                : std::string("no toolkit")) +
                    (applies["cudnn"].is_string()
                         ? ", cuDNN " + shown(applies["cudnn"].get<std::string>())
                         : std::string()) +
                    " (from " + shown(applies["source"].get<std::string>()) + ")")
      << '\n';
  out << "Search order for " << shown(options.library)
      << (options.for_file.empty() ? "" : " needed by " + shown(options.for_file)) << ":\n";
  for (size_t i = 0; i < report.answer.steps.size(); ++i) {
    const auto& step = report.answer.steps[i];
    out << "  " << i + 1 << ". " << shown(step.candidate) << "  [" << shown(step.source) << "]"
        << (step.found ? "  " + styled("found", Tone::good, context.colour) : "") << '\n';
  }
  if (report.winner)
    out << "Loads      " << shown(report.winner->path) << "  version "
        << (report.winner->version.empty() ? "unknown" : shown(report.winner->version))
        << (report.winner->version_source.empty()
                ? ""
                : " (from " + shown(report.winner->version_source) + ")")
        << '\n';
  else
    out << "Loads      " << styled("nothing: no copy on the search path", Tone::bad, context.colour)
        << '\n';
  for (const auto& copy : report.copies) {
    if (report.winner && copy.path == report.winner->path) continue;
    out << "Also       " << shown(copy.path) << "  version "
        << (copy.version.empty() ? "unknown" : shown(copy.version)) << "  (" << shown(copy.origin)
        << ")\n";
  }
  if (!report.mismatch.empty()) {
    out << styled("Mismatch   ", Tone::bad, context.colour) << shown(report.mismatch) << '\n';
    out << "    fix: " << shown(report.fix) << '\n';
  }
  for (const auto& note : report.notes) context.err << "note: " << shown(note) << '\n';
}

nlohmann::json report_json(const WhyReport& report) {
  const auto copy_json = [](const scan::LibraryCopy& copy) {
    return nlohmann::json{{"path", copy.path},
                          {"version", copy.version},
                          {"version_source", copy.version_source},
                          {"origin", copy.origin}};
  };
  nlohmann::json steps = nlohmann::json::array(), copies = nlohmann::json::array();
  for (const auto& step : report.answer.steps)
    steps.push_back({{"path", step.candidate}, {"source", step.source}, {"found", step.found}});
  for (const auto& copy : report.copies) copies.push_back(copy_json(copy));
  return {{"applies", report.applies},
          {"search", steps},
          {"loads", report.winner ? copy_json(*report.winner) : nlohmann::json(nullptr)},
          {"copies", copies},
          {"mismatch", report.mismatch},
          {"fix", report.fix},
          {"notes", report.notes}};
}

// The active Python's site-packages (none without a python3 on PATH; a note when it cannot say).
std::vector<std::string> active_site_packages(Context& context, std::vector<std::string>& notes) {
  const auto python = scan::python_on_path(context.env.get("PATH").value_or(""));
  if (python.empty()) return {};
  auto sites = scan::python_site_packages(context.runner, python, context.env.variables());
  if (!sites) {
    notes.push_back("pip wheels not searched: " + sites.error().message);
    return {};
  }
  return *sites;
}

// --for takes a file, or an installed Python package ("torch"): its library that needs LIBRARY.
Result<std::string> requester_for(const std::string& value, const std::string& library,
                                  const std::vector<std::string>& sites) {
  std::error_code ec;
  if (value.find('/') != std::string::npos || std::filesystem::exists(value, ec)) return value;
  if (!untrusted::is_valid(untrusted::Field::python_package, value))
    return make_error(ErrorKind::usage, "--for " + shown(value) + ": not a file nor a package name",
                      "give the binary that needs it, or an installed package such as torch");
  if (auto found = scan::package_library_needing(sites, value, library)) return *found;
  return make_error(ErrorKind::not_found,
                    "--for " + shown(value) + ": no library of that package needs " +
                        shown(library) + " in the active Python's site-packages" +
                        (sites.empty() ? " (no python3 on PATH)" : ""),
                    "check the package is installed for the python3 on PATH, or give --for FILE");
}

// Without --for: frameworks load their copy through their own RUNPATH (torch's names its nvidia
// wheels), so say when one of them gets another copy than the plain process.
void note_framework_copies(const scan::LoaderInput& plain, WhyReport& report,
                           const std::vector<std::string>& sites) {
  for (const char* package : {"torch", "jaxlib", "cupy", "tensorflow"}) {
    const auto requester = scan::package_library_needing(sites, package, plain.library);
    if (!requester) continue;
    auto input = plain;
    input.requester = *requester;
    const auto answer = scan::simulate_loader(input);
    if (!answer || !answer->winner) continue;
    const auto plain_copy = report.answer.winner ? report.answer.winner->candidate : "nothing";
    if (answer->winner->candidate == plain_copy) continue;
    report.notes.push_back(std::string(package) + " loads " + answer->winner->candidate + " (" +
                           answer->winner->source + "), not " + plain_copy + ": 'cudaenv why " +
                           plain.library + " --for " + package + "' answers for it");
  }
}

}  // namespace

namespace {

// What applies here, as current, list and the hook name it.
nlohmann::json applies_json(const activate::Applied& applied) {
  const auto& here = applied.here;
  const bool served = here.toolkit && !here.missing;
  const auto toolkit = served ? here.toolkit->installed.path.string() : here.system_prefix;
  return {
      {"toolkit", toolkit.empty() ? nlohmann::json(nullptr) : nlohmann::json(toolkit)},
      {"cudnn",
       served && here.cudnn ? nlohmann::json(here.cudnn->path.string()) : nlohmann::json(nullptr)},
      {"source", here.selection.cuda
                     ? project::describe_source(here.selection)
                     : "system (" +
                           (here.system_origin.empty() ? std::string("none") : here.system_origin) +
                           ")"},
      {"missing", here.missing ? nlohmann::json(here.missing->message) : nlohmann::json(nullptr)}};
}

// The loader's answer for a process started from this very shell, when the shell does not carry
// what applies here (no hook, a stale one): a note when it would load another copy.
void note_this_shell(const scan::LoaderInput& here_input, const activate::Applied& applied,
                     Context& context, WhyReport& report) {
  const auto shell_path = context.env.get("LD_LIBRARY_PATH").value_or("");
  if (shell_path == here_input.ld_library_path &&
      applied.environment.get("CUDA_HOME") == context.env.get("CUDA_HOME"))
    return;
  auto input = here_input;
  input.ld_library_path = shell_path;
  const auto answer = scan::simulate_loader(input);
  const auto here_copy = report.answer.winner ? report.answer.winner->candidate : "nothing";
  const auto shell_copy = answer && answer->winner ? answer->winner->candidate : "nothing";
  if (shell_copy != here_copy)
    report.notes.push_back(
        "this shell does not carry what applies here (is the hook installed? "
        "see 'cudaenv init'): a process started from it now loads " +
        shell_copy + " instead; 'cudaenv exec -- PROGRAM' runs one as here");
  else if (applied.environment.get("CUDA_HOME") != context.env.get("CUDA_HOME"))
    report.notes.emplace_back(
        "this shell's CUDA_HOME is not what applies here (is the hook installed? see 'cudaenv "
        "init'): builds started from it get another toolkit");
}

}  // namespace

Status run_why(const WhyOptions& options, Context& context, Outcome& outcome) {
  if (options.library.empty() || options.library.find('/') != std::string::npos)
    return make_error(
        ErrorKind::usage, "LIBRARY " + shown(options.library) + ": not a library name",
        "give a soname such as libcudnn.so.9 (a file that needs it goes in --for FILE)");
  WhyReport report;
  // The loader is simulated for a process started here once what applies here is applied (the
  // hook's environment, with any override a later rc line made when the hook already ran): the
  // project's toolkit and cuDNN, hook or no hook. This shell's own answer is a note when it
  // differs.
  auto applied = activate::environment_here(context.env, paths::working_directory(context.env));
  if (!applied) return applied.error();
  report.applies = applies_json(*applied);
  if (applied->here.missing)
    report.notes.push_back(applied->here.missing->message + " (" + applied->here.missing->hint +
                           "): until it is, the system's environment applies here");
  scan::LoaderInput input{options.library,
                          std::nullopt,
                          applied->environment.get("LD_LIBRARY_PATH").value_or(""),
                          read_cache(context.sysroot, report.notes),
                          scan::default_library_directories(),
                          scan::default_platform_token(),
                          scan::default_lib_token()};
  const auto sites = active_site_packages(context, report.notes);
  if (!options.for_file.empty()) {
    auto requester = requester_for(options.for_file, options.library, sites);
    if (!requester) return requester.error();
    input.requester = *requester;
  }
  auto answer = scan::simulate_loader(input);
  if (!answer) return answer.error().with_context("--for");
  report.answer = std::move(*answer);
  for (const auto& note : report.answer.notes) report.notes.push_back(note);
  note_this_shell(input, *applied, context, report);
  if (options.for_file.empty()) note_framework_copies(input, report, sites);
  report.copies = scan::find_copies(
      options.library, copy_directories(input, report.answer, *applied, sites, context));
  if (report.answer.winner) report.winner = scan::describe_copy(report.answer.winner->candidate);
  if (report.winner) {
    const auto& step = *report.answer.winner;
    const auto mismatch = scan::pinned_mismatch(
        options.library, *report.winner, fs::path(step.candidate).parent_path().string(),
        step.source, pinned_directories(options.library, *applied));
    if (mismatch) {
      report.mismatch = mismatch->message;
      report.fix = mismatch->fix;
    }
  }
  if (options.json)
    context.out << report_json(report).dump(2, ' ', true, nlohmann::json::error_handler_t::replace)
                << '\n';
  else
    print_report(options, report, context);
  outcome.exit_code = !report.winner ? 3 : report.mismatch.empty() ? 0 : 1;
  return Ok{};
}

void add_why_command(CLI::App& app, Context& context, Outcome& outcome) {
  auto options = std::make_shared<WhyOptions>();
  auto* command =
      app.add_subcommand("why", "Show which copy of a library the dynamic loader picks, and why");
  command->add_option("library", options->library, "The library's soname, e.g. libcudnn.so.9")
      ->required();
  command->add_option("--for", options->for_file,
                      "The binary that needs it (its RPATH/RUNPATH count), or an installed "
                      "Python package (torch): its library that needs it");
  command->add_flag("--json", options->json, "Print the report as JSON");
  command->callback(
      [options, &context, &outcome] { outcome.status = run_why(*options, context, outcome); });
}

}  // namespace cudaenv::cli
