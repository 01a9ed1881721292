#include "scan/python_sites.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>

#include <nlohmann/json.hpp>

#include "core/text.hpp"

namespace cudaenv::scan {

namespace {

constexpr const char* sites_script =
    "import json, os, site, sysconfig\n"
    "paths = sysconfig.get_paths()\n"
    "found = [paths['purelib'], paths['platlib']]\n"
    "user = site.getusersitepackages() if site.ENABLE_USER_SITE else None\n"
    "if user and os.path.isdir(user): found.append(user)\n"
    "print(json.dumps(found))\n";

}  // namespace

Result<std::vector<std::string>> python_site_packages(
    ProcessRunner& runner, const std::string& python,
    const std::map<std::string, std::string>& environment) {
  auto run = runner.run({{python, "-c", sites_script}, environment, std::chrono::seconds(30)});
  if (!run) return run.error().with_context(python);
  if (!run->succeeded()) {
    const auto lines = text::lines(run->err);
    return make_error(
        ErrorKind::failure,
        python + " did not report its site-packages" +
            (lines.empty() ? std::string() : ": " + text::printable(lines.back(), 200)),
        "name a working interpreter with --python PATH");
  }
  const auto document = nlohmann::json::parse(run->out, nullptr, false);
  if (!document.is_array())
    return make_error(ErrorKind::failure,
                      python + " answered something else than its site-packages");
  std::vector<std::string> sites;
  for (const auto& entry : document) {
    if (entry.is_string() &&
        std::find(sites.begin(), sites.end(), entry.get<std::string>()) == sites.end())
      sites.push_back(entry.get<std::string>());
  }
  return sites;
}

std::string python_on_path(const std::string& path_variable) {
  for (const auto& directory : text::split(path_variable, ':')) {
    if (directory.empty() || directory.front() != '/') continue;
    auto candidate = directory + "/python3";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

}  // namespace cudaenv::scan
