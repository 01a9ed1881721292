// `cudaenv export dockerfile|apptainer [--base IMAGE] [-o FILE]`: a container recipe for the
// project of the current directory (export/recipe.hpp).

#include "cli/commands.hpp"
#include "core/paths.hpp"
#include "core/safe_write.hpp"
#include "core/text.hpp"
#include "export/recipe.hpp"
#include "manifest/load.hpp"
#include "project/project_file.hpp"

#ifndef CUDAENV_VERSION_STRING
#define CUDAENV_VERSION_STRING "unknown"
#endif

namespace cudaenv::cli {

namespace {

struct ExportOptions {
  std::string base_image;
  std::string output;
};

Status write_recipe(const std::string& text, const ExportOptions& options, Context& context) {
  if (options.output.empty() || options.output == "-") {
    context.out << text;
    return Ok{};
  }
  if (!write_file_atomically(options.output, text, WriteOptions{0644, CreateParents::no}))
    return make_error(ErrorKind::failure,
                      "-o: cannot write " + text::printable(options.output, text::message_limit),
                      "name a file in a writable directory");
  return Ok{};
}

Status run_export(bool apptainer, const ExportOptions& options, Context& context) {
  const auto project_file = project::find_project_file(paths::working_directory(context.env));
  if (!project_file)
    return make_error(ErrorKind::usage, "export: no .cudaenv here or in any parent directory",
                      "run it in a project, or pin a toolkit first with cudaenv use VERSION");
  auto db = manifest::load_default_database(paths::data_root(context.env));
  if (!db) return db.error();
  auto plan = recipes::plan_recipe(*project_file, *db, CUDAENV_VERSION_STRING);
  if (!plan) return plan.error();
  if (!options.base_image.empty()) plan->base_image = options.base_image;
  return write_recipe(
      apptainer ? recipes::render_apptainer(*plan) : recipes::render_dockerfile(*plan), options,
      context);
}

// Image names: registry/path:tag@digest characters only, so a flag cannot add recipe lines.
bool is_image_name(const std::string& name) {
  return !name.empty() && name.size() < 256 &&
         name.find_first_not_of(
             "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
             "._-/:@") == std::string::npos;
}

}  // namespace

void add_export_command(CLI::App& app, Context& context, Outcome& outcome) {
  auto options = std::make_shared<ExportOptions>();
  auto* command = app.add_subcommand(
      "export", "Write a container recipe that installs this project's CUDA stack");
  command->require_subcommand(1);
  for (const bool apptainer : {false, true}) {
    auto* kind = command->add_subcommand(
        apptainer ? "apptainer" : "dockerfile",
        apptainer ? "Apptainer definition file (%post installs, %test runs cudaenv verify)"
                  : "Dockerfile (RUN installs, HEALTHCHECK runs cudaenv verify)");
    kind->add_option("--base", options->base_image, "Base image (default ubuntu:24.04)")
        ->check(CLI::Validator(
            [](std::string& value) {
              return is_image_name(value) ? std::string()
                                          : "--base: not an image name (letters, digits, ._-/:@)";
            },
            "IMAGE"));
    kind->add_option("-o,--output", options->output, "Write to FILE instead of standard output");
    kind->callback([apptainer, options, &context, &outcome] {
      outcome.status = run_export(apptainer, *options, context);
    });
  }
}

}  // namespace cudaenv::cli
