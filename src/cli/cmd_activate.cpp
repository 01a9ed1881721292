#include <unistd.h>

#include <nlohmann/json.hpp>

#include "activate/activation.hpp"
#include "activate/here.hpp"
#include "activate/hook.hpp"
#include "activate/host_compiler.hpp"
#include "activate/shell.hpp"
#include "activate/shims.hpp"
#include "cli/activation_commands.hpp"
#include "core/files.hpp"
#include "core/paths.hpp"
#include "core/process.hpp"
#include "core/text.hpp"
#include "here/here.hpp"
#include "lock/target_env.hpp"
#include "probe/driver.hpp"
#include "probe/kernel_module.hpp"
#include "probe/remembered_gpus.hpp"
#include "project/project_file.hpp"

namespace cudaenv::cli {

namespace {

using json = nlohmann::ordered_json;

std::filesystem::path here(const Context& context) { return paths::working_directory(context.env); }

Result<activate::Shell> shell_named(const std::string& name, const char* flag) {
  if (auto shell = activate::parse_shell(name)) return *shell;
  return make_error(ErrorKind::usage, std::string(flag) + ": unknown shell \"" + name + "\"",
                    "use bash, zsh or fish");
}

// The program the hook runs at a change: the small shim program answers hook-env exactly as
// cudaenv does, and starts faster (no command-line parser, no C++ streams); cudaenv itself when
// the shim program is missing.
std::filesystem::path hook_program() {
  auto shim = paths::companion_program(activate::shim_program_name);
  return is_executable_file(shim) ? shim : paths::running_executable();
}

json selection_json(const activate::Activated& activated) {
  const auto& selection = activated.selection;
  json out;
  out["version"] = activated.toolkit ? json(activated.toolkit->version.str()) : json(nullptr);
  out["spec"] = selection.cuda ? json(selection.cuda->str()) : json(nullptr);
  static const char* sources[] = {"command_line", "environment", "project_file", "global_config",
                                  "system"};
  out["source"] = sources[static_cast<int>(selection.source)];
  out["file"] = selection.file.empty() ? json(nullptr) : json(selection.file.string());
  // Nothing selected: the system's toolkit the builds here get, as list, doctor and verify name it.
  const auto& system = activated.here.system_prefix;
  out["prefix"] = activated.toolkit ? json(activated.toolkit->path.string())
                  : system.empty()  ? json(nullptr)
                                    : json(system);
  out["system_origin"] =
      activated.toolkit || system.empty() ? json(nullptr) : json(activated.here.system_origin);
  out["cudnn"] = activated.cudnn ? json(activated.cudnn->version.str()) : json(nullptr);
  out["cudnn_prefix"] = activated.cudnn ? json(activated.cudnn->path.string()) : json(nullptr);
  out["place"] = here::describe_place(activated.here);
  out["trace"] = activated.here.trace;
  return out;
}

// A note when the project declares targets and this machine belongs to none: its GPUs as the
// probe lists them (the full program) or as the last full probe of this boot saw them (the front
// loads no driver library), else its driver against every target's floor.
void note_target_mismatch_here(const project::Selection& selection, Context& context) {
  if (selection.source != project::SelectionSource::project_file) return;
  auto pins = project::read_project_file(selection.file);
  if (!pins || pins->targets.empty()) return;
  const auto reading = probe::probe_driver(context.sysroot, context.loader);
  const auto driver = reading.driver ? Version::parse(reading.driver->version) : std::nullopt;
  if (!driver) return;
  auto gpus = probe::distinct_architectures(reading.gpus);
  if (gpus.empty())
    gpus = probe::remembered_gpu_archs(context.sysroot, paths::data_root(context.env),
                                       reading.driver->version);
  const auto file = text::printable(selection.file.string(), text::message_limit);
  if (auto note = project::target_mismatch_note(pins->targets, *driver, gpus, file); !note.empty())
    context.err << "cudaenv: note: " << note << '\n';
}

}  // namespace

// `current --explain`: the rules that decided, before the answer (or the error). A selection
// nothing serves has no activation: its trace is the decision's alone.
void print_explanation(const Result<activate::Activated>& activated, Context& context) {
  std::vector<std::string> trace;
  if (activated) {
    trace = activated->here.trace;
  } else if (auto found =
                 here::find_here(activate::without_activation(context.env), here(context))) {
    trace = found->trace;
  }
  if (trace.empty()) return;
  context.out << "why:\n";
  for (const auto& line : trace)
    context.out << "  " << text::printable(line, text::message_limit) << '\n';
}

Status run_current(const CurrentOptions& options, Context& context) {
  auto activated = activate::activate_here(context.env, here(context));
  if (options.explain && !options.json) print_explanation(activated, context);
  if (!activated) return activated.error();
  context.err << activate::warning_lines(activated->selection);
  if (options.json) {
    context.out << selection_json(*activated).dump(2, ' ', true, json::error_handler_t::replace)
                << '\n';
    return Ok{};
  }
  if (!activated->toolkit) {
    context.out << "system\n";
    return Ok{};
  }
  context.out << activated->toolkit->version.str() << " (from "
              << text::printable(project::describe_source(activated->selection),
                                 text::message_limit)
              << ")\n";
  note_target_mismatch_here(activated->selection, context);
  return Ok{};
}

namespace {

// `env --target NAME`: the target's build settings, as shell code or JSON.
Status print_target_env(const EnvOptions& options, std::optional<activate::Shell> shell,
                        Context& context) {
  const auto file = project::find_project_file(here(context));
  if (!file)
    return make_error(
        ErrorKind::usage, "--target: no .cudaenv here or above declares targets",
        "declare one: [targets.a100] with driver = \"535.104.05\" and arch = [\"8.0\"]");
  auto settings = lock::target_settings(*file, options.target);
  if (!settings) return settings.error();
  if (shell) {
    activate::Changes variables;
    for (const auto& [name, value] : settings->variables) variables[name] = value;
    context.out << activate::render_changes(*shell, variables);
    return Ok{};
  }
  json out{{"target", settings->name},
           {"driver", settings->driver},
           {"mode", settings->mode.empty() ? json(nullptr) : json(settings->mode)},
           {"source", settings->source}};
  out["variables"] = json::object();
  for (const auto& [name, value] : settings->variables) out["variables"][name] = value;
  context.out << out.dump(2, ' ', true, json::error_handler_t::replace) << '\n';
  return Ok{};
}

}  // namespace

Status run_env(const EnvOptions& options, Context& context) {
  std::optional<activate::Shell> shell;
  if (options.shell != "json") {
    auto parsed = shell_named(options.shell, "--shell");
    if (!parsed) return parsed.error();
    shell = *parsed;
  }
  if (!options.target.empty()) return print_target_env(options, shell, context);
  auto activated = activate::activate_here(context.env, here(context));
  if (!activated) return activated.error();
  context.err << activate::warning_lines(activated->selection);
  activate::Changes variables;
  for (const auto& name : activate::managed_variables())
    variables[name] = activated->environment.get(name);
  if (!shell) {
    json out = json::object();
    for (const auto& [name, value] : variables) out[name] = value ? json(*value) : json(nullptr);
    context.out << out.dump(2, ' ', true, json::error_handler_t::replace) << '\n';
  } else {
    context.out << activate::render_changes(*shell, variables);
  }
  return Ok{};
}

Status run_exec(const ExecOptions& options, Context& context) {
  std::optional<VersionSpec> forced;
  if (!options.cuda.empty()) {
    auto spec = VersionSpec::parse(options.cuda);
    if (!spec)
      return make_error(ErrorKind::usage, "--cuda: " + spec.error().message, spec.error().hint);
    forced = *spec;
  }
  auto activated = activate::activate_here(context.env, here(context), forced);
  if (!activated) return activated.error();
  context.err << activate::warning_lines(activated->selection);
  // `exec -- nvcc` with a runtime-only toolkit would find another CUDA's nvcc down PATH.
  if (activated->toolkit && !options.command.empty() &&
      options.command.front().find('/') == std::string::npos) {
    if (auto refusal = activate::runtime_only_refusal(
            activated->toolkit->path, activated->toolkit->version.str(), options.command.front()))
      return *refusal;
  }
  auto environment = activated->environment;
  // The child starts from this environment as its own: a hook in it must not undo it.
  environment.unset(activate::activation_variable);
  context.out.flush();
  context.err.flush();
  return replace_process(options.command, environment.variables());
}

// `which --host-compiler`: the compiler on the first line, why on the second.
Status run_which_host_compiler(Context& context) {
  auto activated = activate::activate_here(context.env, here(context));
  if (!activated) return activated.error();
  if (!activated->toolkit) {
    context.out << "c++\nwhy: no CUDA toolkit is active here: nvcc's default host compiler\n";
    return Ok{};
  }
  const auto& choice = *activated->host;  // the choice activation made, not a second one
  const auto why = text::printable(choice.reason, text::message_limit);
  if (!choice.missing_package.empty())
    return make_error(ErrorKind::failure,
                      "no host compiler CUDA " + activated->toolkit->version.str() +
                          " accepts is installed: " + why,
                      "sudo apt install " + choice.missing_package);
  context.out << text::printable(choice.compiler.value_or("c++"), text::message_limit) << "\n"
              << "why: " << why << '\n';
  return Ok{};
}

Status run_which(const WhichOptions& options, Context& context) {
  if (options.host_compiler) return run_which_host_compiler(context);
  if (options.tool.empty())
    return make_error(ErrorKind::usage, "which: name a tool such as nvcc, or --host-compiler",
                      "cudaenv which nvcc");
  auto target = activate::resolve_tool(context.env, here(context), options.tool);
  if (!target) return target.error();
  context.out << text::printable(target->path, text::message_limit) << '\n';
  return Ok{};
}

Status run_init(const InitOptions& options, Context& context) {
  auto shell = shell_named(options.shell, "init");
  if (!shell) return shell.error();
  // Run by hand in a terminal (not inside eval "$(...)"): say how to install it.
  if (::isatty(STDOUT_FILENO) != 0) {
    const auto install = activate::hook_install(*shell);
    context.err << "# to install the hook, add this line at the end of " << install.rc_file
                << ":\n#   " << install.line << '\n';
  }
  context.out << activate::hook_script(*shell, hook_program().string());
  return Ok{};
}

Status run_hook_env(const HookEnvOptions& options, Context& context) {
  auto shell = shell_named(options.shell, "--shell");
  if (!shell) return shell.error();
  // The kernel module's driver version and the GPUs the last full probe saw: no driver library
  // is loaded at the prompt.
  const auto module = probe::kernel_module_driver_version(context.sysroot);
  activate::LiveMachine machine;
  if (module) {
    machine.driver = Version::parse(*module);
    machine.gpus =
        probe::remembered_gpu_archs(context.sysroot, paths::data_root(context.env), *module);
  }
  const auto outcome = activate::hook_env(context.env, here(context), machine);
  context.err << activate::hook_problem_line(outcome);  // escaped there, for the shim too
  context.out << activate::hook_statements(*shell, outcome);
  return Ok{};
}

void add_activation_commands(CLI::App& app, Context& context, Outcome& outcome) {
  auto current = std::make_shared<CurrentOptions>();
  auto* command = app.add_subcommand("current", "The CUDA version active here and what set it");
  command->add_flag("--json", current->json, "Print it as JSON (with the trace that decided)");
  command->add_flag(
      "--explain", current->explain,
      "Say which files, stores and rules decided (CUDAENV_DEBUG=1 traces any command)");
  command->callback(
      [current, &context, &outcome] { outcome.status = run_current(*current, context); });

  auto env = std::make_shared<EnvOptions>();
  command = app.add_subcommand("env", "The environment for this directory, as shell code or JSON");
  command->add_option("--shell", env->shell, "bash, zsh, fish or json")->capture_default_str();
  command->add_option("--target", env->target,
                      "A target .cudaenv declares: its build settings (CI without its GPUs)");
  command->callback([env, &context, &outcome] { outcome.status = run_env(*env, context); });

  auto exec = std::make_shared<ExecOptions>();
  command = app.add_subcommand("exec", "Run one command in the environment for this directory");
  command->add_option("--cuda", exec->cuda, "Use this version instead of the one selected here");
  command->add_option("command", exec->command, "The command and its arguments, after --")
      ->required();
  command->callback([exec, &context, &outcome] { outcome.status = run_exec(*exec, context); });

  auto which = std::make_shared<WhichOptions>();
  command = app.add_subcommand("which", "The real program a shim would run here");
  command->add_option("tool", which->tool, "A tool such as nvcc");
  command->add_flag("--host-compiler", which->host_compiler,
                    "The host compiler nvcc and CMake get here, and why");
  command->callback([which, &context, &outcome] { outcome.status = run_which(*which, context); });

  auto init = std::make_shared<InitOptions>();
  command = app.add_subcommand("init", "Print the shell hook: eval \"$(cudaenv init bash)\"");
  command->add_option("shell", init->shell, "bash, zsh or fish")->required();
  command->callback([init, &context, &outcome] { outcome.status = run_init(*init, context); });

  auto hook = std::make_shared<HookEnvOptions>();
  command = app.add_subcommand("hook-env", "What the shell hook runs when something changed");
  command->add_option("--shell", hook->shell, "bash, zsh or fish")->required();
  command->callback([hook, &context, &outcome] { outcome.status = run_hook_env(*hook, context); });
}

bool is_activation_command(int argc, const char* const* argv) {
  if (argc < 2) return false;
  const std::string name = argv[1];
  return name == "current" || name == "env" || name == "exec" || name == "which" ||
         name == "init" || name == "hook-env";
}

}  // namespace cudaenv::cli
