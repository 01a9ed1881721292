// `cudaenv doctor [--json]`: numbered findings, each with its evidence and the commands that fix
// it. Exit 1 when any check fails.

#include <iomanip>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/terminal.hpp"
#include "core/paths.hpp"
#include "core/text.hpp"
#include "doctor/doctor.hpp"
#include "manifest/db_index.hpp"
#include "manifest/load.hpp"

namespace cudaenv::cli {

namespace {

using json = nlohmann::ordered_json;

json active_to_json(const doctor::ActiveToolkit& active) {
  if (!active.toolkit) return nullptr;
  const auto& t = *active.toolkit;
  return {{"version", t.version ? json(t.version->str()) : json(nullptr)},
          {"path", t.path},
          {"selected_by", active.selected_by}};
}

json report_to_json(const doctor::Report& report) {
  json out;
  out["schema_version"] = 1;
  out["ok"] = !report.has_failure();
  out["active_toolkit"] = active_to_json(report.active);
  // A selection nothing serves: what applies here, and the command that installs it.
  out["missing"] = report.active.missing ? json{{"selected_by", report.active.selected_by},
                                                {"message", report.active.missing->message},
                                                {"hint", report.active.missing->hint}}
                                         : json(nullptr);
  out["notes"] = report.active.notes;
  out["summary"] = {{"ok", report.count(doctor::CheckStatus::ok)},
                    {"warn", report.count(doctor::CheckStatus::warn)},
                    {"fail", report.count(doctor::CheckStatus::fail)},
                    {"skip", report.count(doctor::CheckStatus::skip)}};
  json findings = json::array();
  int number = 0;
  for (const auto& f : report.findings) {
    findings.push_back({{"number", ++number},
                        {"id", f.id},
                        {"title", f.title},
                        {"status", doctor::to_string(f.status)},
                        {"summary", f.summary},
                        {"evidence", f.evidence},
                        {"fix", f.fix}});
  }
  out["findings"] = findings;
  return out;
}

Tone tone_of(doctor::CheckStatus status) {
  switch (status) {
    case doctor::CheckStatus::ok: return Tone::good;
    case doctor::CheckStatus::warn: return Tone::warn;
    case doctor::CheckStatus::fail: return Tone::bad;
    case doctor::CheckStatus::skip: return Tone::dim;
  }
  return Tone::plain;
}

// Findings quote what was read from the machine (files, program output): escaped and cut.
std::string shown(const std::string& read) { return text::printable(read, text::message_limit); }

void print_finding(std::ostream& out, int number, const doctor::Finding& f, bool colour) {
  std::ostringstream head;
  head << std::setw(2) << number << ". ";
  std::string status = doctor::to_string(f.status);
  status.resize(6, ' ');
  const std::string indent(10, ' ');
  out << head.str() << styled(status, tone_of(f.status), colour)
      << styled(shown(f.title), Tone::heading, colour) << '\n';
  out << indent << shown(f.summary) << '\n';
  for (const auto& line : f.evidence)
    out << indent << styled("read: " + shown(line), Tone::dim, colour) << '\n';
  bool first = true;
  for (const auto& line : f.fix) {
    out << indent << (first ? "fix:  " : "      ") << shown(line) << '\n';
    first = false;
  }
}

void print_report(std::ostream& out, const doctor::Report& report, bool colour) {
  if (report.active.toolkit) {
    const auto& t = *report.active.toolkit;
    out << "Active toolkit: CUDA " << (t.version ? t.version->str() : "?") << " at "
        << shown(t.path) << " (" << shown(report.active.selected_by) << ")\n";
  } else {
    out << "Active toolkit: none\n";
  }
  for (const auto& note : report.active.notes) out << "Note: " << shown(note) << '\n';
  out << '\n';
  int number = 0;
  for (const auto& f : report.findings) print_finding(out, ++number, f, colour);
  out << '\n'
      << report.findings.size() << " checks: " << report.count(doctor::CheckStatus::ok) << " ok, "
      << report.count(doctor::CheckStatus::warn) << " warn, "
      << report.count(doctor::CheckStatus::fail) << " fail, "
      << report.count(doctor::CheckStatus::skip) << " skipped\n";
}

}  // namespace

Status run_doctor(const DoctorOptions& options, Context& context, Outcome& outcome) {
  const auto data_root = paths::data_root(context.env);
  auto selected = manifest::load_selected_database(data_root);
  if (!selected) return selected.error();
  const auto facts = doctor::gather_facts(
      {context.sysroot, context.loader, context.runner, context.env, data_root});
  if (!facts) return facts.error();
  auto report = doctor::run_doctor(*facts, selected->db);
  if (auto stale = manifest::stale_database_note(selected->origin.revision, selected->origin.date,
                                                 std::chrono::system_clock::now()))
    report.active.notes.push_back(*stale);
  if (options.json) {
    context.out << report_to_json(report).dump(2, ' ', true, json::error_handler_t::replace)
                << '\n';
  } else {
    print_report(context.out, report, context.colour);
  }
  outcome.exit_code = report.has_failure() ? static_cast<int>(ErrorKind::failure) : 0;
  return Ok{};
}

void add_doctor_command(CLI::App& app, Context& context, Outcome& outcome) {
  auto options = std::make_shared<DoctorOptions>();
  auto* command =
      app.add_subcommand("doctor", "Diagnose the driver and CUDA stack and say how to fix it");
  command->add_flag("--json", options->json, "Print the findings as JSON");
  command->callback(
      [options, &context, &outcome] { outcome.status = run_doctor(*options, context, outcome); });
}

}  // namespace cudaenv::cli
