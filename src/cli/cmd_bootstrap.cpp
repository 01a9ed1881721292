// `cudaenv bootstrap [--cuda SPEC]... [--driver BRANCH] [--container] [--source pypi]
// [--index-url URL] [--dry-run] [--yes]`:
// plan the steps from a fresh Ubuntu/Debian machine to a working stack, print them as a script
// or run them.

#include <unistd.h>

#include "cli/commands.hpp"
#include "core/paths.hpp"
#include "core/text.hpp"
#include "doctor/bootstrap_run.hpp"
#include "doctor/doctor.hpp"
#include "manifest/load.hpp"

namespace cudaenv::cli {

namespace {

doctor::BootstrapRequest build_request(const BootstrapOptions& options, const Context& context) {
  doctor::BootstrapRequest request;
  request.cuda = options.cuda;
  if (options.driver > 0) request.driver_branch = options.driver;
  request.container = options.container;
  request.as_root = ::geteuid() == 0;
  request.shell = context.env.get("SHELL").value_or("");
  request.home = paths::home_directory(context.env).string();
  request.root = context.sysroot.root().string();
  return request;
}

bool ask(Context& context, const doctor::Step& step) {
  context.err << "Run step " << text::printable(step.id) << " ("
              << text::printable(step.description, text::message_limit)
              << ") with root privileges? [y/N] " << std::flush;
  std::string answer;
  if (context.in == nullptr || !std::getline(*context.in, answer)) return false;
  const auto word = text::trim(answer);
  return word == "y" || word == "Y" || word == "yes";
}

void print_plan_summary(const doctor::Plan& plan, Context& context) {
  // The OS name comes from /etc/os-release; notes and progress lines carry commands and their
  // output: all escaped before they reach the terminal.
  context.err << "cudaenv bootstrap on " << text::printable(plan.os) << ": " << plan.steps.size()
              << " steps\n";
  for (const auto& note : plan.notes)
    context.err << "  " << text::printable(note, text::message_limit) << '\n';
}

}  // namespace

Status run_bootstrap(const BootstrapOptions& options, Context& context, Outcome& outcome) {
  const auto data_root = paths::data_root(context.env);
  auto db = manifest::load_default_database(data_root);
  if (!db) return db.error();
  const auto facts = doctor::gather_facts(
      {context.sysroot, context.loader, context.runner, context.env, data_root});
  if (!facts) return facts.error();
  auto source = download_setup(options.download, context);
  if (!source) return source.error();
  auto request = build_request(options, context);
  if (source->from_index()) {
    request.install_flags = source->install_flags();
    request.install_source = source->described();
  }
  auto plan = doctor::plan_bootstrap(*facts, *db, request);
  if (!plan) return plan.error();
  if (options.dry_run) {
    context.out << doctor::render_script(*plan, request.as_root);
    return Ok{};
  }
  print_plan_summary(*plan, context);
  const doctor::RunSetup setup{context.sysroot, context.runner,  context.env,
                               data_root,       request.as_root, options.yes};
  const doctor::RunCallbacks callbacks{
      [&](const std::string& line) {
        context.err << text::printable(line, text::message_limit) << '\n';
      },
      [&](const doctor::Step& step) { return ask(context, step); }};
  auto summary = doctor::run_plan(*plan, setup, callbacks);
  if (!summary) return summary.error();
  if (summary->end == doctor::RunEnd::waiting_for_reboot) {
    context.out << "Reboot now (sudo reboot), then run `cudaenv bootstrap` again to finish.\n";
  } else {
    context.out << "Bootstrap finished: " << summary->steps_run << " steps run, "
                << summary->steps_skipped << " already done. `cudaenv doctor` checks the result.\n";
  }
  outcome.exit_code = 0;
  return Ok{};
}

void add_bootstrap_command(CLI::App& app, Context& context, Outcome& outcome) {
  auto options = std::make_shared<BootstrapOptions>();
  auto* command = app.add_subcommand(
      "bootstrap", "Take a fresh Ubuntu/Debian machine to a working driver and CUDA stack");
  command->add_option(
      "--cuda", options->cuda,
      "CUDA version spec to install (repeatable); default: the newest the GPUs take");
  command->add_option("--driver", options->driver, "NVIDIA driver branch, e.g. 580")
      ->check(CLI::Range(300, 999));
  command->add_flag("--container", options->container, "Also install the NVIDIA container toolkit");
  command->add_flag("--dry-run", options->dry_run, "Print the plan as a shell script, run nothing");
  command->add_flag("--yes,-y", options->yes, "Do not ask before steps that need root");
  add_source_flags(*command, options->download);
  command->callback([options, &context, &outcome] {
    outcome.status = run_bootstrap(*options, context, outcome);
  });
}

}  // namespace cudaenv::cli
