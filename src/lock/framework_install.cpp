#include "lock/framework_install.hpp"

#include <algorithm>

#include "core/text.hpp"
#include "core/untrusted.hpp"
#include "fetch/simple_index.hpp"
#include "install/wheels.hpp"

namespace cudaenv::lock {

namespace {

bool has(const std::vector<std::string>& tags, const std::string& tag) {
  return std::find(tags.begin(), tags.end(), tag) != tags.end();
}

// How well a wheel's tags suit CPython `python` on Linux x86-64: 3 its own build, 2 the stable
// ABI of an older or equal CPython, 1 pure Python, 0 not at all.
int fit(const install::WheelName& wheel, const PythonVersion& python) {
  if (!installs_on_linux_x86_64(wheel.platforms)) return 0;
  const auto major = std::to_string(python.major);
  const auto own = "cp" + major + std::to_string(python.minor);
  if (has(wheel.pythons, own) && has(wheel.abis, own)) return 3;
  const auto older_or_same = [&](const std::string& tag, const std::string& prefix) {
    if (!text::starts_with(tag, prefix + major)) return false;
    const auto minor = tag.substr(prefix.size() + major.size());
    if (minor.empty()) return true;
    const auto number = text::parse_integer(minor);
    return number && *number <= python.minor;
  };
  if (has(wheel.abis, "abi3") &&
      std::any_of(wheel.pythons.begin(), wheel.pythons.end(),
                  [&](const std::string& tag) { return older_or_same(tag, "cp"); }))
    return 2;
  if (has(wheel.abis, "none") &&
      std::any_of(wheel.pythons.begin(), wheel.pythons.end(),
                  [&](const std::string& tag) { return older_or_same(tag, "py"); }))
    return 1;
  return 0;
}

FrameworkRequirement lookup_of(const std::string& name, const LockedFramework& framework) {
  FrameworkRequirement requirement;
  requirement.name = name;
  requirement.project = locked_project(framework);
  requirement.index_url = framework.index_url;
  return requirement;
}

// How to point sync at another copy of the index, as for lock.
std::string mirror_hint(const LockedFramework& framework) {
  if (framework.index_url == fetch::pypi_index_url)
    return "point PIP_INDEX_URL (or index_url in the config) at a PyPI mirror that serves it";
  const auto base = framework.index_url.substr(0, framework.index_url.rfind('/'));
  return "point CUDAENV_FRAMEWORK_INDEX (or framework_index in the config) at a mirror of " + base +
         " that serves it";
}

}  // namespace

std::optional<PythonVersion> parse_python_version(std::string_view text) {
  const auto version = Version::parse(text);
  if (!version || version->size() != 2) return std::nullopt;
  return PythonVersion{version->major(), version->minor()};
}

std::optional<LockedWheel> wheel_for_python(const LockedFramework& framework,
                                            const PythonVersion& python) {
  const LockedWheel* best = nullptr;
  int best_fit = 0;
  for (const auto& wheel : framework.wheels) {
    const auto name = install::parse_wheel_name(wheel.filename);
    const int score = name ? fit(*name, python) : 0;
    if (score > best_fit) {
      best = &wheel;
      best_fit = score;
    }
  }
  if (best == nullptr) return std::nullopt;
  return *best;
}

std::string locked_requirement(const LockedFramework& framework) {
  // parse_pip_line left exactly one argument with "==": the requirement.
  for (const auto& arg : framework.pip_args) {
    if (arg.find("==") != std::string::npos && !text::starts_with(arg, "-")) return arg;
  }
  return "";
}

std::string locked_project(const LockedFramework& framework) {
  const auto requirement = locked_requirement(framework);
  return requirement.substr(0, requirement.find_first_of("[="));
}

std::string install_index_url(const std::string& name, const LockedFramework& framework,
                              const FrameworkIndexes& indexes) {
  return lookup_url(lookup_of(name, framework), indexes);
}

Result<std::string> wheel_url(const std::string& name, const LockedFramework& framework,
                              const std::string& filename, const FrameworkIndexes& indexes) {
  const auto project = locked_project(framework);
  const auto index = install_index_url(name, framework, indexes);
  const auto shown = text::printable(index, text::message_limit);
  auto files = fetch::fetch_project_files(index, project, indexes.fetch);
  if (!files && files.error().kind == ErrorKind::not_found)
    return make_error(ErrorKind::not_found,
                      name + ": the index " + shown + " has no project " + project,
                      mirror_hint(framework) + ", then run cudaenv sync again");
  if (!files)
    return make_error(files.error().kind,
                      name + ": cannot read the index " + shown + ": " + files.error().message,
                      mirror_hint(framework) + ", then run cudaenv sync again");
  const auto file = std::find_if(files->begin(), files->end(),
                                 [&](const auto& listed) { return listed.filename == filename; });
  if (file == files->end())
    return make_error(ErrorKind::not_found,
                      name + ": the index " + shown + " no longer lists " +
                          text::printable(filename, text::message_limit) +
                          ", the wheel the lock pins",
                      mirror_hint(framework) + ", or run cudaenv lock to pin what it has now");
  if (auto ok = untrusted::check(untrusted::Field::url, file->url, index + ": " + filename); !ok)
    return ok.error();
  return file->url;
}

std::string hashed_requirement(const std::string& project, const std::string& url,
                               const std::string& sha256) {
  return project + " @ " + url + " --hash=sha256:" + sha256 + "\n";
}

const char* to_string(Installer installer) { return installer == Installer::uv ? "uv" : "pip"; }

std::vector<std::string> hashed_install_argv(Installer installer, const std::string& uv,
                                             const std::string& python,
                                             const std::string& requirements) {
  // --no-index: the one URL the file names is all that is read.
  if (installer == Installer::uv)
    return {uv,          "pip",        "install",     "--python", python,      "--require-hashes",
            "--no-deps", "--no-index", "--reinstall", "-r",       requirements};
  return {python,
          "-m",
          "pip",
          "install",
          "--no-input",
          "--disable-pip-version-check",
          "--require-hashes",
          "--no-deps",
          "--no-index",
          "--force-reinstall",
          "-r",
          requirements};
}

std::vector<std::string> dependencies_argv(Installer installer, const std::string& uv,
                                           const std::string& python,
                                           const std::string& requirement,
                                           const std::string& index_url) {
  if (installer == Installer::uv)
    return {uv, "pip", "install", "--python", python, "--index-url", index_url, requirement};
  return {python,        "-m",         "pip",
          "install",     "--no-input", "--disable-pip-version-check",
          "--index-url", index_url,    requirement};
}

BuildExpectation expected_build(const manifest::Database& db, const std::string& name,
                                const LockedFramework& framework) {
  const auto version = parse_wheel_version(framework.version);
  if (!version) return {};
  if (name == "torch") {
    for (const auto& release : db.pytorch) {
      if (!version->release.has_prefix(release.version)) continue;
      const auto tag = version->local_tag.empty() ? release.pypi_default : version->local_tag;
      for (const auto& variant : release.variants) {
        if (variant.tag == tag) return {variant.cuda, variant.cudnn};
      }
    }
  } else if (name == "tensorflow") {
    for (const auto& release : db.tensorflow) {
      if (version->release.has_prefix(release.version)) return {release.cuda, release.cudnn};
    }
  } else if (name == "jax") {
    // JAX's CUDA is its plugin's, named by the extra: jax[cuda12].
    const auto requirement = locked_requirement(framework);
    const auto at = requirement.find("[cuda");
    if (at != std::string::npos) {
      const auto digits = requirement.substr(at + 5, requirement.find(']', at) - at - 5);
      if (auto major = Version::parse(digits)) return {*major, std::nullopt};
    }
  }
  return {};
}

bool agrees(std::string_view reported, const Version& expected) {
  const auto version = Version::parse(reported);
  if (!version) return false;
  const auto parts = std::min(version->size(), expected.size());
  for (std::size_t i = 0; i < parts; ++i) {
    if (version->component(i) != expected.component(i)) return false;
  }
  return parts > 0;
}

std::string companion_module(const std::string& name) {
  auto module = fetch::normalize_project_name(name);
  std::replace(module.begin(), module.end(), '-', '_');
  return module;
}

const char* companion_check_program() {
  return R"(import importlib, sys
from importlib import metadata
def line(text):
    return " ".join(str(text).split())
print("python version=%d.%d" % sys.version_info[:2])
distribution, module = sys.argv[1], sys.argv[2]
try:
    version = metadata.version(distribution)
except metadata.PackageNotFoundError:
    print("framework framework=%s status=missing" % distribution)
    sys.exit(0)
try:
    importlib.import_module(module)
except BaseException as error:
    print("framework framework=%s status=error version=%s message=%s: %s"
          % (distribution, version, type(error).__name__, line(error)))
else:
    print("framework framework=%s status=imported version=%s" % (distribution, version))
)";
}

}  // namespace cudaenv::lock
