// Where `verify` meets the lock: the note for a machine that matches no declared target, and
// `verify --record`'s receipt.

#include <chrono>

#include "cli/cmd_lock.hpp"
#include "core/paths.hpp"
#include "core/text.hpp"
#include "manifest/db_index.hpp"
#include "probe/facts.hpp"
#include "probe/remembered_gpus.hpp"

namespace cudaenv::cli {

namespace {

std::optional<Version> driver_of(const probe::MachineFacts& facts) {
  return facts.driver ? Version::parse(facts.driver->version) : std::nullopt;
}

std::vector<Version> archs_of(const probe::MachineFacts& facts) {
  return probe::distinct_architectures(facts.gpus);
}

std::string mismatch_text(const project::TargetMatch& match, const std::filesystem::path& file) {
  return "this machine matches none of the targets " +
         text::printable(file.string(), text::message_limit) + " declares; the closest is " +
         text::printable(match.closest->name) + ": " +
         text::printable(match.why, text::message_limit);
}

}  // namespace

void remember_live_gpus(const probe::MachineFacts& facts, Context& context) {
  // Only a cache for the hook: a data root that cannot be written loses nothing.
  (void)probe::remember_gpu_archs(context.sysroot, paths::data_root(context.env), archs_of(facts));
}

void note_target_mismatch(const probe::MachineFacts& facts, Context& context) {
  remember_live_gpus(facts, context);
  const auto file = project::find_project_file(paths::working_directory(context.env));
  if (!file) return;
  auto pins = project::read_project_file(*file);
  if (!pins) return;  // verify reports a broken .cudaenv through the selection
  if (!name_target_gpus(pins->targets, *file, context)) return;  // `lock` says what is wrong
  const auto driver = driver_of(facts);
  if (!driver || facts.gpus.empty()) return;
  const auto shown = text::printable(file->string(), text::message_limit);
  if (auto note = project::target_mismatch_note(pins->targets, *driver, archs_of(facts), shown);
      !note.empty())
    context.err << "cudaenv: note: " << note << '\n';
}

Status record_receipt(const probe::MachineFacts& facts, const std::string& toolkit,
                      const std::string& report_sha256, Context& context) {
  auto project = find_lock_project(context);
  if (!project) return project.error();
  const auto path = project->lock_path();
  auto stored = lock::read_lock_file(path);
  if (!stored) return stored.error().with_context("verify --record");
  // No [targets]: the lock's implicit target (this-machine) is the one to match.
  const auto targets =
      project->pins.targets.empty() ? recorded_targets(*stored) : project->pins.targets;
  const auto match = project::match_target(targets, driver_of(facts), archs_of(facts));
  if (match.match == nullptr)
    return make_error(ErrorKind::failure,
                      "verify --record: " + (match.closest != nullptr
                                                 ? mismatch_text(match, project->file)
                                                 : std::string("no declared target to record for")),
                      "declare this machine's class in .cudaenv, then cudaenv lock");
  auto target = stored->targets.find(match.match->name);
  if (target == stored->targets.end() || toolkit != stored->toolkit.version)
    return make_error(ErrorKind::failure,
                      "verify --record: the verified toolkit (CUDA " + text::printable(toolkit) +
                          ") is not what " + text::printable(path.string()) + " locks for target " +
                          match.match->name + " (CUDA " + stored->toolkit.version + ")",
                      "run cudaenv lock and cudaenv sync, then verify --record again");
  const auto& gpu = facts.gpus.front();
  target->second.verified.push_back({manifest::utc_timestamp(std::chrono::system_clock::now()),
                                     gpu.name, gpu.compute_capability.str(), facts.driver->version,
                                     toolkit, report_sha256, lock::set_digest(*stored)});
  if (auto written = lock::write_lock_file(path, *stored); !written) return written.error();
  context.out << "recorded a receipt for target " << text::printable(match.match->name) << " ("
              << text::printable(gpu.name) << ", driver " << text::printable(facts.driver->version)
              << ") in " << text::printable(path.string(), text::message_limit) << '\n';
  return Ok{};
}

}  // namespace cudaenv::cli
