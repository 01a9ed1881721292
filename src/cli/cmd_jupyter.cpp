// `cudaenv jupyter install [--name N]`, `jupyter list`, `jupyter uninstall NAME`: kernelspecs
// whose env is the project's toolkit (docs/jupyter.md); and their refresh after use and rehash.
#include "cli/cmd_lock.hpp"
#include "cli/commands.hpp"
#include "cli/sync_frameworks.hpp"
#include "core/paths.hpp"
#include "core/process.hpp"
#include "core/text.hpp"
#include "jupyter/kernelspec.hpp"
#include "project/project_file.hpp"

namespace cudaenv::cli {

namespace fs = std::filesystem;

namespace {

// Importing ipykernel on a cold cache (a network home directory) takes a few seconds.
constexpr auto python_timeout = std::chrono::seconds(60);

std::string shown(const fs::path& path) {
  return text::printable(path.string(), text::message_limit);
}

struct JupyterOptions {
  std::string name;
};

Result<LockProject> find_project(Context& context) {
  const auto here = paths::working_directory(context.env);
  const auto file = project::find_project_file(here);
  if (!file)
    return make_error(
        ErrorKind::usage,
        "no .cudaenv in " + shown(here) + " or above: a kernel takes its toolkit from a project",
        "pin a version first (cudaenv use 12.4), then cudaenv jupyter install");
  auto pins = project::read_project_file(*file);
  if (!pins) return pins.error();
  return LockProject{*file, std::move(*pins)};
}

// The project's Python (sync's choice: .cudaenv's venv, else $VIRTUAL_ENV), else python3 on PATH.
Result<fs::path> chosen_python(const LockProject& project, Context& context) {
  auto environment = python_environment(project, context);
  if (!environment) return environment.error();
  if (*environment) return (*environment)->python;
  const auto path = context.env.get("PATH").value_or("");
  if (auto found = find_in_path("python3", path)) return fs::path(*found);
  return make_error(ErrorKind::not_found, "no Python for the kernel: no python3 on PATH",
                    "name the project's environment in .cudaenv (venv = \".venv\") or activate it");
}

// The interpreter's own path (sys.executable: a pyenv or conda shim resolves to the real one),
// once it has shown it imports ipykernel.
Result<fs::path> kernel_python(const fs::path& python, Context& context) {
  const char* probe = "import sys, ipykernel; print(sys.executable)";
  auto run =
      context.runner.run({{python.string(), "-c", probe}, context.env.variables(), python_timeout});
  if (!run)
    return make_error(ErrorKind::failure,
                      "cannot run " + shown(python) + ": " + run.error().message,
                      "check that it runs: " + shown(python) + " -c 'print(1)'");
  if (!run->succeeded())
    return make_error(ErrorKind::not_found,
                      shown(python) + " cannot import ipykernel" +
                          (run->timed_out ? " (it did not answer in time)" : ""),
                      "install it there: " + shown(python) + " -m pip install ipykernel");
  const std::string answer(text::trim(run->out));
  const fs::path executable(answer);
  if (answer.empty() || answer.find('\n') != std::string::npos || !executable.is_absolute() ||
      text::printable(answer, text::message_limit) != answer)
    return make_error(ErrorKind::failure,
                      shown(python) + " named no absolute interpreter (sys.executable is \"" +
                          text::printable(answer) + "\")",
                      "check the environment: " + shown(python) +
                          " -c 'import sys; "
                          "print(sys.executable)'");
  return executable;
}

Status run_jupyter_install(const JupyterOptions& options, Context& context) {
  if (!options.name.empty()) {
    if (auto valid = jupyter::check_kernel_name(options.name); !valid) return valid;
  }
  auto project = find_project(context);
  if (!project) return project.error();
  const auto project_dir = project->file.parent_path();
  auto kernels = jupyter::kernels_directory(context.env);
  if (!kernels) return kernels.error();
  auto variables = jupyter::project_environment(context.env, project_dir);
  if (!variables) return variables.error();
  auto python = chosen_python(*project, context);
  if (!python) return python.error();
  auto executable = kernel_python(*python, context);
  if (!executable) return executable.error();
  jupyter::KernelSpec spec;
  spec.name = options.name.empty() ? jupyter::default_kernel_name(project_dir)
                                   : jupyter::kernel_name(options.name);
  spec.python = *executable;
  spec.display_name = project_dir.filename().string() + " (cudaenv)";
  spec.project = project_dir;
  spec.env = variables->variables;
  if (auto installed = jupyter::install_kernelspec(*kernels, spec, paths::data_root(context.env));
      !installed)
    return installed;
  context.out << "installed Jupyter kernel " << text::printable(spec.name) << " ("
              << (variables->cuda.empty() ? std::string("the system's CUDA")
                                          : "CUDA " + variables->cuda)
              << ", " << shown(spec.python) << ") in " << shown(*kernels / spec.name) << '\n';
  return Ok{};
}

Status run_jupyter_list(Context& context) {
  auto installed = jupyter::installed_kernelspecs(paths::data_root(context.env));
  if (!installed) return installed.error();
  for (const auto& kernel : *installed) {
    context.out << text::printable(kernel.directory.filename().string()) << "  "
                << (kernel.cuda.empty() ? std::string("system CUDA")
                                        : "CUDA " + text::printable(kernel.cuda))
                << "  " << text::printable(kernel.project, text::message_limit) << "  "
                << shown(kernel.directory) << '\n';
  }
  return Ok{};
}

Status run_jupyter_uninstall(const JupyterOptions& options, Context& context) {
  if (auto valid = jupyter::check_kernel_name(options.name); !valid) return valid;
  auto kernels = jupyter::kernels_directory(context.env);
  if (!kernels) return kernels.error();
  const auto name = jupyter::kernel_name(options.name);
  if (auto removed = jupyter::uninstall_kernelspec(*kernels, name, paths::data_root(context.env));
      !removed)
    return removed;
  context.out << "removed Jupyter kernel " << text::printable(name) << '\n';
  return Ok{};
}

}  // namespace

void refresh_jupyter_kernels(Context& context) {
  auto refreshed = jupyter::refresh_kernelspecs(context.env, paths::data_root(context.env));
  if (!refreshed) {
    context.err << "warning: Jupyter kernels not refreshed: "
                << text::printable(refreshed.error().message, text::message_limit) << '\n';
    return;
  }
  for (const auto& kernel : *refreshed) {
    const auto name = text::printable(kernel.directory.filename().string());
    if (!kernel.problem.empty()) {
      context.err << "warning: Jupyter kernel " << name
                  << " not refreshed: " << text::printable(kernel.problem, text::message_limit)
                  << '\n';
    } else if (kernel.changed) {
      context.out << "Jupyter kernel " << name << " now uses "
                  << (kernel.cuda.empty() ? std::string("the system's CUDA")
                                          : "CUDA " + kernel.cuda)
                  << '\n';
    }
  }
}

void add_jupyter_command(CLI::App& app, Context& context, Outcome& outcome) {
  auto* jupyter = app.add_subcommand("jupyter", "Jupyter kernels that use the project's toolkit");
  jupyter->require_subcommand(1);
  auto options = std::make_shared<JupyterOptions>();
  auto* install = jupyter->add_subcommand(
      "install", "Write a kernelspec for the project's Python whose env selects its toolkit");
  install->add_option(
      "--name", options->name,
      "Kernel name (letters, digits, '.', '_', '-'); default cudaenv-<project dir>");
  install->callback(
      [options, &context, &outcome] { outcome.status = run_jupyter_install(*options, context); });
  auto* list = jupyter->add_subcommand("list", "The kernelspecs cudaenv installed");
  list->callback([&context, &outcome] { outcome.status = run_jupyter_list(context); });
  auto* uninstall = jupyter->add_subcommand("uninstall", "Remove a kernelspec cudaenv installed");
  uninstall->add_option("NAME", options->name, "The kernel's name (as jupyter list shows it)")
      ->required();
  uninstall->callback(
      [options, &context, &outcome] { outcome.status = run_jupyter_uninstall(*options, context); });
}

}  // namespace cudaenv::cli
