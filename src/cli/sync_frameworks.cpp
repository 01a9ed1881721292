#include "cli/sync_frameworks.hpp"

#include <chrono>
#include <functional>

#include "core/paths.hpp"
#include "core/safe_write.hpp"
#include "core/text.hpp"
#include "lock/framework_install.hpp"
#include "manifest/load.hpp"
#include "verify/embedded.hpp"

namespace cudaenv::cli {

namespace fs = std::filesystem;

namespace {

// A framework wheel is large (PyTorch's: 2.5 GB with its CUDA libraries): the installer gets
// half an hour; importing a framework, a few minutes on a cold cache.
constexpr auto installer_timeout = std::chrono::minutes(30);
constexpr auto import_timeout = std::chrono::minutes(3);
// The installer's last lines shown when it fails: its own words are the evidence.
constexpr std::size_t installer_lines_shown = 12;

std::string shown(const fs::path& path) {
  return text::printable(path.string(), text::message_limit);
}

bool is_file(const fs::path& path) {
  std::error_code error;
  return fs::is_regular_file(path, error);  // follows links: bin/python is one
}

// Whether `inner` lies in `outer` (both canonical).
bool lies_in(const fs::path& inner, const fs::path& outer) {
  const auto relative = inner.lexically_relative(outer);
  return !relative.empty() && *relative.begin() != "..";
}

// venv = ".venv" in .cudaenv: its value passed the relative-path grammar when the file was read.
// The interpreter a repository could ship is never run: it must resolve to a program outside the
// project, as a virtualenv's bin/python links to the Python it was made from.
Result<PythonEnvironment> named_environment(const LockProject& project) {
  const auto directory = project.file.parent_path();
  PythonEnvironment environment{
      directory / project.pins.venv, {}, "venv in " + project.file.string()};
  environment.python = environment.root / "bin" / "python";
  const auto where =
      shown(project.file) + ": venv = \"" + text::printable(project.pins.venv) + "\"";
  if (!is_file(environment.python))
    return make_error(
        ErrorKind::not_found, where + ": " + shown(environment.python) + " does not exist",
        "create the environment (python3 -m venv " + shown(environment.root) + ", or uv venv " +
            shown(environment.root) + "), then run cudaenv sync again");
  std::error_code error;
  const auto program = fs::canonical(environment.python, error);
  const auto top = fs::canonical(directory, error);
  if (error || lies_in(program, top))
    return make_error(ErrorKind::usage,
                      where + ": its bin/python is " + shown(program) +
                          ", inside the project: sync runs no interpreter that could come with "
                          "the repository",
                      "create the environment with python3 -m venv (its python links to the "
                      "Python it was made from), then run cudaenv sync again");
  return environment;
}

// What the environment's Python says of `name`: verify's own check (verify/frameworks.py) for a
// framework, the import of its module for a companion wheel.
Result<verify::FrameworkReport> ask(const PythonEnvironment& environment, const std::string& name,
                                    const lock::LockedFramework& framework, Context& context) {
  std::vector<std::string> argv{environment.python.string(), "-c",
                                verify::embedded_file("frameworks.py"), name};
  if (!framework.companion_of.empty())
    argv = {environment.python.string(), "-c", lock::companion_check_program(), name,
            lock::companion_module(name)};
  auto run = context.runner.run({argv, context.env.variables(), import_timeout});
  if (!run)
    return make_error(ErrorKind::failure,
                      "cannot run " + shown(environment.python) + ": " + run.error().message,
                      "recreate the environment (python3 -m venv), then run cudaenv sync again");
  auto report = verify::parse_framework_output(name, run->out);
  if (report.python.empty())
    return make_error(ErrorKind::failure,
                      shown(environment.python) + " did not answer" +
                          (run->timed_out ? " in time" : ": " + text::printable(run->err, 300)),
                      "check that it runs: " + shown(environment.python) + " -c 'print(1)'");
  return report;
}

// "torch 2.5.1+cu124": the lock's values are shown escaped.
std::string named(const std::string& name, const lock::LockedFramework& framework) {
  return text::printable(name) + " " + text::printable(framework.version);
}

void print_pip_line(const std::string& name, const lock::LockedFramework& framework,
                    Context& context) {
  // The command is made of the checked arguments, each shell-quoted: never the lock's own line.
  context.out << named(name, framework) << " (install it in your Python environment): pip install "
              << text::printable(text::shell_join(framework.pip_args), text::message_limit) << '\n';
}

struct Installers {
  lock::Installer kind = lock::Installer::pip;
  std::string uv;  // its path, when kind is uv
};

Installers installers(const Context& context) {
  const auto path = context.env.get("PATH").value_or("");
  if (auto uv = find_in_path("uv", path)) return {lock::Installer::uv, *uv};
  return {};
}

std::string installer_name(const Installers& tools, const PythonEnvironment& environment) {
  return tools.kind == lock::Installer::uv ? "uv (" + text::printable(tools.uv) + ")"
                                           : shown(environment.python) + " -m pip";
}

void show_installer_output(const ProcessResult& result, Context& context) {
  auto lines = text::lines(result.err.empty() ? result.out : result.err);
  const auto first =
      lines.size() > installer_lines_shown ? lines.size() - installer_lines_shown : 0;
  for (auto i = first; i < lines.size(); ++i)
    context.err << "  " << text::printable(lines[i], text::message_limit) << '\n';
}

// pip: "THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE"; uv: "Hash mismatch".
bool refused_for_hash(const ProcessResult& result) {
  const auto said = result.out + result.err;
  return said.find("DO NOT MATCH THE HASHES") != std::string::npos ||
         said.find("Hash mismatch") != std::string::npos;
}

Status run_installer(const std::vector<std::string>& argv, const std::string& what,
                     Context& context, const std::function<Error(const ProcessResult&)>& refused) {
  auto run = context.runner.run({argv, context.env.variables(), installer_timeout});
  if (!run)
    return make_error(ErrorKind::failure, what + ": cannot start " + text::printable(argv.front()) +
                                              ": " + run.error().message);
  if (run->succeeded()) return Ok{};
  show_installer_output(*run, context);
  if (run->timed_out)
    return make_error(ErrorKind::failure, what + ": the installer did not finish within 30 minutes",
                      "check the network to the index, then run cudaenv sync again");
  return refused(*run);
}

struct Pick {
  lock::LockedWheel wheel;
  std::string url;
};

Result<Pick> pick_wheel(const std::string& name, const lock::LockedFramework& framework,
                        const verify::FrameworkReport& found,
                        const lock::FrameworkIndexes& indexes) {
  const auto python = lock::parse_python_version(found.python);
  const auto wheel = python ? lock::wheel_for_python(framework, *python) : std::nullopt;
  if (!wheel) {
    std::vector<std::string> files;
    for (const auto& each : framework.wheels) files.push_back(text::printable(each.filename));
    return make_error(ErrorKind::not_found,
                      named(name, framework) + ": the lock pins no wheel for Python " +
                          text::printable(found.python) + " on Linux x86-64 (it has " +
                          (files.empty() ? std::string("none") : text::join(files, ", ")) + ")",
                      "make the environment with a Python those wheels are built for, or run "
                      "cudaenv lock again");
  }
  if (wheel->sha256.empty())
    return make_error(ErrorKind::integrity,
                      named(name, framework) + ": the lock has no sha256 for " +
                          text::printable(wheel->filename) + ": nothing to check it against",
                      "run cudaenv lock against an index that lists digests, and commit "
                      ".cudaenv.lock");
  auto url = lock::wheel_url(name, framework, wheel->filename, indexes);
  if (!url) return url.error();
  return Pick{*wheel, *url};
}

Status install_framework(const std::string& name, const lock::LockedFramework& framework,
                         const verify::FrameworkReport& found, const PythonEnvironment& environment,
                         const lock::FrameworkIndexes& indexes, const DownloadSetup& setup,
                         Context& context) {
  auto pick = pick_wheel(name, framework, found, indexes);
  if (!pick) return pick.error();
  const auto requirements =
      setup.store.root / "cache" / "frameworks" / ("requirements-" + name + ".txt");
  const auto project = lock::locked_project(framework);
  if (auto written = write_file_atomically(
          requirements, lock::hashed_requirement(project, pick->url, pick->wheel.sha256));
      !written)
    return written.error();
  const auto tools = installers(context);
  const auto what = named(name, framework);
  if (!context.quiet)
    context.err << "installing " << what << " into " << shown(environment.root) << " with "
                << installer_name(tools, environment) << ": "
                << text::printable(pick->wheel.filename) << ", sha256 from the lock\n";
  const auto python = environment.python.string();
  auto hashed = run_installer(
      lock::hashed_install_argv(tools.kind, tools.uv, python, requirements.string()), what, context,
      [&](const ProcessResult& result) {
        if (refused_for_hash(result))
          return make_error(ErrorKind::integrity,
                            what + ": " + lock::to_string(tools.kind) + " refused " +
                                text::printable(pick->wheel.filename) + " from " +
                                text::printable(pick->url, text::message_limit) +
                                ": its sha256 is not the one .cudaenv.lock pins; nothing was "
                                "installed",
                            "the index serves another file than .cudaenv.lock pinned: ask its "
                            "owner, or if the change is intended, run cudaenv lock and commit "
                            ".cudaenv.lock");
        return make_error(ErrorKind::failure,
                          what + ": " + lock::to_string(tools.kind) + " could not install " +
                              text::printable(pick->wheel.filename) + " (exit " +
                              std::to_string(result.exit_code) + ", its last lines above)",
                          "fix what it says, then run cudaenv sync again");
      });
  if (!hashed) return hashed;
  const auto index = lock::install_index_url(name, framework, indexes);
  auto dependencies = run_installer(
      lock::dependencies_argv(tools.kind, tools.uv, python, lock::locked_requirement(framework),
                              index),
      what, context, [&](const ProcessResult& result) {
        return make_error(ErrorKind::failure,
                          what + " is installed, but " + lock::to_string(tools.kind) +
                              " could not install its dependencies from " +
                              text::printable(index, text::message_limit) + " (exit " +
                              std::to_string(result.exit_code) + ", its last lines above)",
                          "fix what it says, then run cudaenv sync again");
      });
  if (!dependencies) return dependencies;
  context.out << "installed " << what << " (" << text::printable(pick->wheel.filename)
              << ", matching the lock's sha256) in " << shown(environment.root) << " with "
              << lock::to_string(tools.kind) << '\n';
  return Ok{};
}

// The installed build against the locked one: version, then the CUDA and cuDNN it reports.
Status prove(const std::string& name, const lock::LockedFramework& framework,
             const verify::FrameworkReport& found, const lock::BuildExpectation& expected,
             const PythonEnvironment& environment, Context& context) {
  const auto what = named(name, framework);
  const auto in = " in " + shown(environment.root);
  const auto hint =
      "make sure nothing else in the environment replaces it (cudaenv sync installs "
      "the locked build), or run cudaenv lock again; then cudaenv sync";
  if (!found.installed || found.check_failed)
    return make_error(
        ErrorKind::verification_failed,
        name + " does not import" + in + ": " + text::printable(found.message, text::message_limit),
        hint);
  if (found.version != framework.version)
    return make_error(ErrorKind::verification_failed,
                      name + in + " is " + text::printable(found.version) + ", the lock pins " +
                          text::printable(framework.version),
                      hint);
  std::vector<std::string> facts;
  const auto compare = [&](const char* what_kind, const std::optional<std::string>& reported,
                           const std::optional<Version>& wanted) -> Status {
    if (!wanted) return Ok{};
    if (!reported || !lock::agrees(*reported, *wanted))
      return make_error(ErrorKind::verification_failed,
                        what + in + " reports " + what_kind + " " +
                            (reported ? text::printable(*reported) : std::string("none")) +
                            "; the locked build is for " + what_kind + " " + wanted->str(),
                        hint);
    facts.push_back(std::string(what_kind) + " " + text::printable(*reported));
    return Ok{};
  };
  if (auto ok = compare("CUDA", found.cuda, expected.cuda); !ok) return ok;
  if (auto ok = compare("cuDNN", found.cudnn, expected.cudnn); !ok) return ok;
  if (!framework.companion_of.empty())
    facts.push_back("import " + lock::companion_module(name) + " beside the locked torch");
  context.out << what << " imports" << in
              << (facts.empty() ? std::string() : ": " + text::join(facts, ", ") + ", as locked")
              << '\n';
  return Ok{};
}

// Frameworks first, then the companion wheels built against them (flash-attn sorts before torch).
std::vector<const std::pair<const std::string, lock::LockedFramework>*> install_order(
    const lock::LockFile& lock) {
  std::vector<const std::pair<const std::string, lock::LockedFramework>*> out;
  for (const bool companions : {false, true})
    for (const auto& entry : lock.frameworks)
      if (entry.second.companion_of.empty() != companions) out.push_back(&entry);
  return out;
}

}  // namespace

Result<std::optional<PythonEnvironment>> python_environment(const LockProject& project,
                                                            Context& context) {
  const auto active = context.env.get_nonempty("VIRTUAL_ENV");
  if (!project.pins.venv.empty()) {
    auto named = named_environment(project);
    if (!named) return named.error();
    std::error_code error;
    if (active && !fs::equivalent(*active, named->root, error) && !context.quiet)
      context.err << "cudaenv: note: VIRTUAL_ENV is "
                  << text::printable(*active, text::message_limit)
                  << "; sync installs into the environment .cudaenv names, " << shown(named->root)
                  << '\n';
    return std::optional<PythonEnvironment>(std::move(*named));
  }
  if (!active) return std::optional<PythonEnvironment>();
  const fs::path root(*active);
  const auto python = root / "bin" / "python";
  if (!root.is_absolute() || !is_file(python))
    return make_error(ErrorKind::not_found,
                      "VIRTUAL_ENV is " + text::printable(*active, text::message_limit) +
                          ", which has no bin/python",
                      "activate the environment again, or unset VIRTUAL_ENV (or name the "
                      "project's in .cudaenv: venv = \".venv\")");
  return std::optional<PythonEnvironment>(PythonEnvironment{root, python, "VIRTUAL_ENV"});
}

Result<FrameworkSync> survey_frameworks(const LockProject& project, const lock::LockFile& lock,
                                        bool frozen, Context& context) {
  FrameworkSync survey;
  if (lock.frameworks.empty()) return survey;
  auto environment = python_environment(project, context);
  if (!environment) return environment.error();
  survey.environment = std::move(*environment);
  if (!survey.environment) return survey;
  for (const auto& [name, framework] : lock.frameworks) {
    auto found = ask(*survey.environment, name, framework, context);
    if (!found) return found.error();
    if (frozen && found->installed && found->version != framework.version)
      return make_error(ErrorKind::failure,
                        "--frozen: " + shown(survey.environment->root) + " has " +
                            text::printable(name) + " " + text::printable(found->version) +
                            ", the lock pins " + text::printable(framework.version) +
                            "; nothing was installed",
                        "run cudaenv sync without --frozen to install the locked build, or use a "
                        "fresh environment");
    survey.found.emplace(name, std::move(*found));
  }
  return survey;
}

Status sync_frameworks(const FrameworkSync& survey, const lock::LockFile& lock,
                       const lock::FrameworkIndexes& indexes, const DownloadSetup& setup,
                       Context& context) {
  if (lock.frameworks.empty()) return Ok{};
  if (!survey.environment) {
    for (const auto* entry : install_order(lock))
      print_pip_line(entry->first, entry->second, context);
    if (!context.quiet)
      context.err << "cudaenv: note: no Python environment to install into: activate a "
                     "virtualenv, or name the project's in .cudaenv (venv = \".venv\")\n";
    return Ok{};
  }
  const auto& environment = *survey.environment;
  auto database = manifest::load_selected_database(paths::data_root(context.env));
  if (!database) return database.error();
  for (const auto* entry : install_order(lock)) {
    const auto& [name, framework] = *entry;
    const auto& before = survey.found.at(name);
    auto found = before;
    if (before.installed && before.version == framework.version) {
      context.out << named(name, framework) << " is already installed in "
                  << shown(environment.root) << '\n';
    } else {
      if (auto done =
              install_framework(name, framework, before, environment, indexes, setup, context);
          !done)
        return done;
      auto after = ask(environment, name, framework, context);
      if (!after) return after.error();
      found = std::move(*after);
    }
    // A companion reports no CUDA of its own: its import against the locked torch is the proof.
    const auto expected = framework.companion_of.empty()
                              ? lock::expected_build(database->db, name, framework)
                              : lock::BuildExpectation{};
    if (auto proved = prove(name, framework, found, expected, environment, context); !proved)
      return proved;
  }
  return Ok{};
}

}  // namespace cudaenv::cli
