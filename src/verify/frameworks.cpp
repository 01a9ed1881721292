#include "verify/frameworks.hpp"

#include <unistd.h>

#include <filesystem>

#include "core/text.hpp"
#include "resolve/rules.hpp"
#include "scan/binaries.hpp"
#include "scan/python_sites.hpp"
#include "scan/verdict.hpp"

namespace cudaenv::verify {

namespace {

struct Target {
  Version compute_capability;
  bool ptx = false;
  bool specific = false;  // sm_90a: runs only on 9.0
};

// "sm_86" -> 8.6, "compute_90" -> 9.0 (ptx), "sm_90a" -> 9.0 (specific), "sm_100" -> 10.0.
std::optional<Target> parse_target(std::string name) {
  Target target;
  if (text::starts_with(name, "compute_")) {
    target.ptx = true;
    name = name.substr(8);
  } else if (text::starts_with(name, "sm_")) {
    name = name.substr(3);
  } else {
    return std::nullopt;
  }
  if (!name.empty() && (name.back() == 'a' || name.back() == 'f')) {
    target.specific = true;
    name.pop_back();
  }
  if (name.size() < 2 || !text::parse_integer(name)) return std::nullopt;
  auto cc = Version::parse(name.substr(0, name.size() - 1) + "." + name.back());
  if (!cc) return std::nullopt;
  target.compute_capability = *cc;
  return target;
}

std::string tail(const std::string& text) {
  const auto lines = text::lines(text);
  return lines.empty() ? std::string() : lines.back();
}

std::optional<Cause> classify_framework(const FrameworkReport& report,
                                        const ClassifyContext& context) {
  const auto resolve_hint = "'cudaenv resolve --" + report.name +
                            " latest' prints the pip line "
                            "that fits this machine";
  if (!report.installed) {
    return Cause{CauseId::framework_not_installed,
                 report.name + " is not importable in this Python: " + report.message,
                 "install it into the Python on PATH: " + resolve_hint};
  }
  const std::optional<Version> gpu =
      report.coverage.empty() ? std::nullopt : std::optional<Version>(report.coverage[0].first);
  if (report.check_failed) {
    const auto id = cause_named_in(report.message).value_or(CauseId::runtime_error);
    return cause_from_text(id, report.name + ": " + report.message, context, gpu);
  }
  // JAX's CUDA version comes from a private module, so only a JAX that also sees no GPU counts
  // as a CPU-only install (no CUDA plugin).
  if (!report.cuda && (report.name != "jax" || report.gpus == 0)) {
    return Cause{CauseId::framework_cpu_only,
                 report.name + " " + report.version + " was built without CUDA",
                 "replace it with a CUDA build: " + resolve_hint};
  }
  for (const auto& [uncovered, coverage] : report.coverage) {
    if (coverage != Coverage::none) continue;
    const auto sm = resolve::sm_name(uncovered);
    return Cause{CauseId::no_kernel_image,
                 report.name + " " + report.version + " has no kernels for " + sm +
                     " (it was built for " + text::join(report.archs, " ") + ")",
                 "install a build whose architecture list covers " + sm + ": " + resolve_hint};
  }
  const auto evidence = report.message.empty() ? report.stderr_tail : report.message;
  if (report.op_ok == false) {
    if (report.message.empty()) {
      return Cause{CauseId::wrong_result,
                   report.name + " computed a wrong sum on the GPU (" + report.stderr_tail + ")",
                   "a framework operation gave a wrong answer: suspect the GPU or the driver "
                   "(sudo dmesg | grep -i xid; nvidia-smi -q -d ECC)"};
    }
    const auto id = cause_named_in(report.message).value_or(CauseId::runtime_error);
    return cause_from_text(id, report.name + ": " + report.message, context, gpu);
  }
  if (report.gpus == 0) {
    const auto id = cause_named_in(evidence).value_or(CauseId::no_driver);
    return cause_from_text(
        id, report.name + " sees no GPU" + (evidence.empty() ? std::string() : ": " + evidence),
        context, gpu);
  }
  return std::nullopt;
}

}  // namespace

const char* to_string(Coverage coverage) {
  switch (coverage) {
    case Coverage::native: return "native";
    case Coverage::ptx_jit: return "ptx";
    case Coverage::jit: return "jit";
    case Coverage::none: return "none";
    case Coverage::unknown: return "unknown";
  }
  return "unknown";
}

Coverage coverage_for(const std::vector<std::string>& archs, const Version& compute_capability) {
  if (archs.empty()) return Coverage::unknown;
  if (archs.size() == 1 && archs[0] == "jit") return Coverage::jit;
  bool ptx = false;
  for (const auto& name : archs) {
    const auto target = parse_target(name);
    if (!target) continue;
    const auto& cc = target->compute_capability;
    if (target->specific) {
      if (cc == compute_capability && !target->ptx) return Coverage::native;
      continue;
    }
    if (target->ptx) {
      ptx = ptx || cc <= compute_capability;
    } else if (cc.major() == compute_capability.major() &&
               cc.minor() <= compute_capability.minor()) {
      return Coverage::native;
    }
  }
  return ptx ? Coverage::ptx_jit : Coverage::none;
}

std::string find_python(const std::map<std::string, std::string>& environment) {
  const auto path = environment.find("PATH");
  if (path == environment.end()) return {};
  for (const auto& directory : text::split(path->second, ':')) {
    if (directory.empty()) continue;
    auto candidate = directory + "/python3";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

FrameworkReport parse_framework_output(const std::string& name, std::string_view output) {
  FrameworkReport report;
  report.name = name;
  for (const auto& line : text::lines(output)) {
    const auto space = line.find(' ');
    if (space == std::string::npos) continue;
    const auto kind = line.substr(0, space);
    auto fields = parse_fields(std::string_view(line).substr(space + 1));
    const auto value = [&](const char* key) {
      const auto it = fields.find(key);
      return it == fields.end() || it->second == "-" ? std::string() : it->second;
    };
    if (kind == "python") {
      report.python = value("version");
    } else if (kind == "framework") {
      report.installed = value("status") == "imported" || value("status") == "error";
      report.check_failed = value("status") == "error";
      report.version = value("version");
      if (!value("cuda").empty()) report.cuda = value("cuda");
      if (!value("cudnn").empty()) report.cudnn = value("cudnn");
      report.gpus = static_cast<int>(text::parse_integer(value("gpus")).value_or(0));
      if (!value("archs").empty()) report.archs = text::split(value("archs"), ',');
      report.message = value("message");
    } else if (kind == "op") {
      report.op_ok = value("status") == "ok";
      report.message = value("message");
      if (value("status") == "wrong") {
        report.stderr_tail = "got " + value("value") + ", expected " + value("expected");
      }
    }
  }
  return report;
}

namespace {

std::string library_verdicts(const scan::WalkResult& walk, int arch) {
  int counts[3] = {0, 0, 0};
  std::vector<std::string> none;
  for (const auto& binary : walk.binaries) {
    if (binary.codes.empty()) continue;
    const auto verdict = scan::verdict_for(binary.codes, arch, std::nullopt);
    ++counts[static_cast<int>(verdict.coverage)];
    if (verdict.coverage == scan::Coverage::none)
      none.push_back(std::filesystem::path(binary.path).filename().string());
  }
  return scan::sm_name(arch) + ": " + std::to_string(counts[0]) + " native, " +
         std::to_string(counts[1]) + " jit, " + std::to_string(counts[2]) + " none" +
         (none.empty() ? "" : " (" + text::join(none, ", ") + ")");
}

// torch/lib of the first site-packages that has one, read by scan: the libraries themselves,
// beyond the arch list torch reports.
std::vector<std::string> scan_torch_libraries(const Result<std::vector<std::string>>& sites,
                                              const std::vector<Version>& gpus) {
  if (!sites) return {"not scanned: " + sites.error().message};
  for (const auto& site : *sites) {
    const auto lib = std::filesystem::path(site) / "torch" / "lib";
    std::error_code error;
    if (!std::filesystem::is_directory(lib, error)) continue;
    const auto walk = scan::scan_paths({lib});
    if (walk.failure) return {"not scanned: " + walk.failure->message};
    std::vector<std::string> lines;
    for (const auto& warning : walk.warnings)
      lines.push_back("partial scan: " + text::printable(warning, text::message_limit));
    for (const auto& gpu : gpus)
      lines.push_back(library_verdicts(walk, gpu.major() * 10 + gpu.minor()));
    if (gpus.empty())
      lines.push_back(std::to_string(walk.binaries.size()) + " CUDA libraries, no GPU to judge");
    return lines;
  }
  return {};
}

}  // namespace

FrameworkReport check_framework(const std::string& name, const std::string& script,
                                const std::map<std::string, std::string>& environment,
                                ProcessRunner& runner, const std::vector<Version>& gpus,
                                const ClassifyContext& context) {
  FrameworkReport report;
  const auto python = find_python(environment);
  std::optional<Result<std::vector<std::string>>> sites;
  if (python.empty()) {
    report.name = name;
    report.message = "no python3 on PATH";
  } else {
    // Asked before the import: where torch's libraries are, to read them once it imports.
    if (name == "torch") sites = scan::python_site_packages(runner, python, environment);
    // Importing a framework and starting CUDA can take a while on a cold cache.
    auto run = runner.run({{python, "-c", script, name}, environment, std::chrono::minutes(3)});
    if (run) {
      report = parse_framework_output(name, run->out);
      if (report.stderr_tail.empty()) report.stderr_tail = tail(run->err);
      if (!report.installed && report.message.empty()) {
        report.message = run->timed_out ? "python3 did not finish in time" : tail(run->err);
      }
    } else {
      report.name = name;
      report.message = run.error().message;
    }
  }
  if (report.installed) {
    for (const auto& gpu : gpus) report.coverage.emplace_back(gpu, coverage_for(report.archs, gpu));
    if (sites) report.library_scan = scan_torch_libraries(*sites, gpus);
  }
  report.cause = classify_framework(report, context);
  return report;
}

}  // namespace cudaenv::verify
