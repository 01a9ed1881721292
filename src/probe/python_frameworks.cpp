#include "probe/python_frameworks.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "core/reversed.hpp"
#include "core/text.hpp"
#include "probe/executables.hpp"

namespace cudaenv::probe {

namespace {

const std::string& framework_script() {
  static const std::string empty;
  for (const auto& script : embedded_scripts()) {
    if (script.name == "framework_probe.py") return script.text;
  }
  return empty;
}

std::string string_field(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

void read_torch(const nlohmann::json& torch, PythonFrameworkFacts& facts) {
  facts.torch_found = true;
  facts.torch_version = string_field(torch, "version");
  facts.torch_cuda = Version::parse(string_field(torch, "cuda"));
  if (const auto it = torch.find("arch_list"); it != torch.end() && it->is_array()) {
    for (const auto& arch : *it) {
      if (arch.is_string()) facts.torch_arch_list.push_back(arch.get<std::string>());
    }
  }
}

void read_sites(const nlohmann::json& sites, PythonFrameworkFacts& facts) {
  if (!sites.is_array()) return;
  facts.sites_reported = true;
  for (const auto& site : sites) {
    if (!site.is_string()) continue;
    auto path = site.get<std::string>();
    if (std::find(facts.site_packages.begin(), facts.site_packages.end(), path) ==
        facts.site_packages.end())
      facts.site_packages.push_back(std::move(path));
  }
}

}  // namespace

bool parse_framework_report(std::string_view output, PythonFrameworkFacts& facts) {
  // Frameworks print warnings of their own while importing: the report is the last JSON line.
  const auto lines = text::lines(output);
  for (const auto& line : reversed(lines)) {
    const auto document = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!document.is_object()) continue;
    facts.python_version = string_field(document, "python");
    if (const auto error = string_field(document, "torch_error"); !error.empty()) {
      facts.error = "import torch failed: " + error;
    }
    if (const auto it = document.find("torch"); it != document.end() && it->is_object()) {
      read_torch(*it, facts);
    }
    if (const auto it = document.find("sites"); it != document.end()) read_sites(*it, facts);
    return true;
  }
  return false;
}

PythonFrameworkFacts probe_python_frameworks(const Sysroot& sysroot, ProcessRunner& runner,
                                             const Environment& env) {
  PythonFrameworkFacts facts;
  const auto python = find_tool(sysroot, env, "python3");
  if (!python) return facts;
  facts.python_found = true;
  facts.python = *python;
  // Run as found on the host: a virtual environment's python3 is a link to the base
  // interpreter, and run through its resolved path it would see the base's packages, not the
  // venv's (so torch installed in the venv read as "not installed"). Under a sysroot the
  // resolved path keeps a link from leaving the root.
  const auto program = sysroot.is_host_root() ? *python : runnable(sysroot, *python);
  // The script reads torch's version file and imports nothing heavy; the bound is for a Python
  // whose start or fallback import hangs (a network file system, a broken package).
  auto result =
      runner.run(Command{{program, "-c", framework_script()}, std::nullopt, python_probe_timeout});
  if (!result) {
    facts.error = result.error().message;
  } else if (result->timed_out) {
    facts.error = *python + " did not answer in " +
                  std::to_string(python_probe_timeout.count() / 1000) + " s";
  } else if (!parse_framework_report(result->out, facts)) {
    const auto lines = text::lines(result->err);
    facts.error = *python + " exited " + std::to_string(result->exit_code) +
                  (lines.empty() ? std::string() : ": " + lines.back());
  }
  return facts;
}

}  // namespace cudaenv::probe
