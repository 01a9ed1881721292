#include "doctor/bootstrap_plan.hpp"

#include <algorithm>
#include <filesystem>

#include "core/text.hpp"
#include "doctor/remedies.hpp"
#include "probe/driver_packages.hpp"
#include "resolve/resolver.hpp"

namespace cudaenv::doctor {

namespace {

constexpr const char* noninteractive = "DEBIAN_FRONTEND=noninteractive";
constexpr const char* keyring_deb = "cuda-keyring_1.1-1_all.deb";
constexpr const char* debian12_repo =
    "https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/";
constexpr const char* container_gpgkey = "https://nvidia.github.io/libnvidia-container/gpgkey";
constexpr const char* container_keyring =
    "/usr/share/keyrings/nvidia-container-toolkit-keyring.gpg";
constexpr const char* container_list = "/etc/apt/sources.list.d/nvidia-container-toolkit.list";

StepCommand privileged(std::vector<std::string> argv, std::string input = {}) {
  return StepCommand{std::move(argv), std::move(input), true, {}};
}

StepCommand apt(std::vector<std::string> arguments) {
  arguments.insert(arguments.begin(), "apt-get");
  return StepCommand{std::move(arguments), {}, true, {noninteractive}};
}

StepCommand user(std::vector<std::string> argv, std::string input = {}) {
  return StepCommand{std::move(argv), std::move(input), false, {}};
}

// A machine path as a host path below the root being set up.
std::string rooted(const BootstrapRequest& request, const std::string& machine_path) {
  if (request.root.empty() || request.root == "/") return machine_path;
  return (std::filesystem::path(request.root) / machine_path.substr(1)).string();
}

Step make_step(std::string id, std::string description, std::vector<StepCommand> commands,
               DoneCheck done, std::string fix) {
  Step step{std::move(id), std::move(description), std::move(commands),
            false,         std::move(done),        false,
            false,         std::move(fix)};
  step.privileged = std::any_of(step.commands.begin(), step.commands.end(),
                                [](const StepCommand& c) { return c.privileged; });
  return step;
}

// The resolver's best set; for its own pick (no --cuda), the best one a known driver branch
// supports, since a release newer than every branch in the database cannot be bootstrapped.
const manifest::CudaRelease* pick(const manifest::Database& db,
                                  const resolve::Resolution& resolution, bool own_choice) {
  if (own_choice) {
    for (const auto& solution : resolution.solutions) {
      if (db.branch_for(solution.cuda->version) != nullptr) return solution.cuda;
    }
  }
  return resolution.best().cuda;
}

// The CUDA releases to install: each requested spec's best release the GPUs can use, or the
// resolver's pick.
Result<std::vector<const manifest::CudaRelease*>> choose_releases(const DoctorFacts& facts,
                                                                  const manifest::Database& db,
                                                                  const BootstrapRequest& request,
                                                                  Plan& plan) {
  resolve::Target target;
  target.gpus = probe::distinct_architectures(facts.machine.gpus);
  std::vector<std::string> specs = request.cuda;
  if (specs.empty()) specs.emplace_back("latest");
  std::vector<const manifest::CudaRelease*> releases;
  for (const auto& text : specs) {
    auto spec = VersionSpec::parse(text);
    if (!spec) return spec.error().with_context("--cuda");
    resolve::Request wanted;
    wanted.cuda = *spec;
    const bool known = std::any_of(db.cuda_releases.begin(), db.cuda_releases.end(),
                                   [&](const auto& r) { return spec->matches(r.version); });
    if (!known) {
      return make_error(ErrorKind::not_found,
                        "CUDA " + text + " is not in the compatibility database",
                        "cudaenv resolve lists the versions it knows");
    }
    // Keep the installed driver where it fully supports a matching release; else resolve as if
    // there were none, since the plan installs the driver the choice needs.
    auto with_driver = target;
    if (facts.machine.driver) with_driver.driver = Version::parse(facts.machine.driver->version);
    auto resolution = resolve::resolve_without_suggestions(db, with_driver, wanted);
    if (!resolution.ok() || resolution.best().driver.mode != resolve::DriverMode::full)
      resolution = resolve::resolve_without_suggestions(db, target, wanted);
    if (!resolution.ok()) {
      const auto reason = resolution.rejected.empty() ? std::string("nothing fits")
                                                      : resolution.rejected.front().reason;
      return make_error(ErrorKind::no_compatible_set,
                        "no CUDA " + text + " fits this machine: " + reason,
                        "cudaenv resolve --cuda " + text + " explains the choice");
    }
    releases.push_back(pick(db, resolution, request.cuda.empty()));
    if (request.cuda.empty())
      plan.notes.push_back("CUDA " + releases.back()->version.str() +
                           ": the newest release for the GPUs here (no --cuda given)");
  }
  return releases;
}

struct DriverDecision {
  bool install = false;
  int branch = 0;
};

// Inside WSL2 the driver is Windows' (mapped in at /usr/lib/wsl/lib), and a Linux driver
// installed inside breaks CUDA there: the plan installs toolkits only, and says what Windows needs.
void note_wsl_driver(const DoctorFacts& facts, const manifest::Database& db,
                     const BootstrapRequest& request, const manifest::CudaRelease& newest,
                     Plan& plan) {
  plan.notes.push_back("WSL2 (" + facts.machine.wsl.evidence +
                       "): the driver is the Windows one; a Linux driver inside WSL would break "
                       "it, so no driver steps");
  if (request.driver_branch)
    plan.notes.push_back("--driver " + std::to_string(*request.driver_branch) +
                         " is not used: inside WSL2 the driver is installed on Windows");
  const auto* branch = db.branch_for(newest.version);
  const auto wanted =
      branch ? "NVIDIA driver " + std::to_string(branch->branch) + " or newer" : "a newer driver";
  if (!facts.machine.driver) {
    plan.notes.push_back("no Windows NVIDIA driver answers through /usr/lib/wsl/lib: install " +
                         wanted + " on Windows for CUDA " + newest.version.str());
  } else if (resolve::check_driver(db, newest, Version::parse(facts.machine.driver->version))
                 .mode != resolve::DriverMode::full) {
    plan.notes.push_back("the Windows driver " + facts.machine.driver->version +
                         " does not fully support CUDA " + newest.version.str() + ": install " +
                         wanted + " on Windows");
  } else {
    plan.notes.push_back("the Windows driver " + facts.machine.driver->version +
                         " fully supports CUDA " + newest.version.str());
  }
  std::vector<std::string> linux_driver;
  for (const auto& package : facts.host.driver_packages.packages)
    linux_driver.push_back(package.name);
  if (!linux_driver.empty())
    plan.notes.push_back("a Linux NVIDIA driver is installed inside WSL (" +
                         text::join(linux_driver, ", ") +
                         "): remove it (`cudaenv doctor` gives the commands)");
}

Result<DriverDecision> decide_driver(const DoctorFacts& facts, const manifest::Database& db,
                                     const BootstrapRequest& request,
                                     const manifest::CudaRelease& newest, Plan& plan) {
  DriverDecision decision;
  if (on_wsl(facts)) {
    note_wsl_driver(facts, db, request, newest, plan);
    return decision;
  }
  if (!facts.machine.tegra_release.empty()) {
    plan.notes.push_back("a Jetson (Tegra) board (" + facts.machine.tegra_release +
                         "): its driver comes with NVIDIA JetPack (L4T), so no driver steps; "
                         "a desktop nvidia-driver package would break it");
    return decision;
  }
  if (request.driver_branch) {
    decision.branch = *request.driver_branch;
  } else if (const auto* branch = db.branch_for(newest.version)) {
    decision.branch = branch->branch;
  } else {
    return make_error(ErrorKind::no_compatible_set,
                      "no driver branch in the database supports CUDA " + newest.version.str(),
                      "pass --driver BRANCH");
  }
  if (facts.host.in_container) {
    plan.notes.push_back("inside a container (" + facts.host.container_evidence +
                         "): the driver is the host's, so no driver steps");
    return decision;
  }
  std::optional<Version> installed;
  if (facts.machine.driver) installed = Version::parse(facts.machine.driver->version);
  const bool right_branch =
      !request.driver_branch || (installed && installed->major() == decision.branch);
  const auto check = resolve::check_driver(db, newest, installed);
  if (installed && check.mode == resolve::DriverMode::full && right_branch) {
    plan.notes.push_back("driver " + facts.machine.driver->version +
                         " already fully supports CUDA " + newest.version.str() +
                         ": no driver step");
    return decision;
  }
  decision.install = true;
  plan.notes.push_back("driver branch " + std::to_string(decision.branch) + " for CUDA " +
                       newest.version.str() +
                       (installed ? " (installed " + installed->str() + " is not enough)" : ""));
  return decision;
}

Step driver_step(const DoctorFacts& facts, int branch) {
  const auto b = std::to_string(branch);
  StepCommand command =
      facts.machine.os.id == "debian" ? apt({"install", "-y", "cuda-drivers-" + b})
      : facts.host.has_ubuntu_drivers ? privileged({"ubuntu-drivers", "install", "nvidia:" + b})
                                      : apt({"install", "-y", "nvidia-driver-" + b});
  auto step = make_step(
      "driver", "Install the NVIDIA driver, branch " + b, {command},
      {DoneKind::any_package, {"nvidia-driver-" + b, "cuda-drivers-" + b}, {}, {}},
      "read the package manager's message above; `cudaenv doctor` names the usual causes");
  step.reboot_after = true;
  return step;
}

void add_driver_steps(const DoctorFacts& facts, const BootstrapRequest& request, int branch,
                      std::vector<std::string>& packages, std::vector<Step>& steps) {
  const auto& kernel = facts.machine.os.kernel;
  const bool debian = facts.machine.os.id == "debian";
  packages.push_back(kernel.empty() ? (debian ? "linux-headers-amd64" : "linux-headers-generic")
                                    : "linux-headers-" + kernel);
  packages.emplace_back("dkms");
  if (debian) {
    packages.insert(packages.end(), {"wget", "ca-certificates"});
    const auto deb = "/tmp/" + std::string(keyring_deb);
    steps.push_back(
        make_step("cuda-repository",
                  "Add NVIDIA's CUDA repository for Debian 12 (it carries every driver branch)",
                  {user({"wget", "-qO", deb, std::string(debian12_repo) + keyring_deb}),
                   privileged({"dpkg", "-i", deb}), apt({"update"})},
                  {DoneKind::packages_installed, {"cuda-keyring"}, {}, {}},
                  "check the network connection to developer.download.nvidia.com"));
  }
  const bool blacklisted = !facts.host.modprobe.nouveau_blacklist.empty();
  if (facts.machine.modules.nouveau || !blacklisted) {
    const auto file = rooted(request, remedy::nouveau_blacklist_file);
    auto step = make_step("nouveau-blacklist", "Keep nouveau off the GPU (blacklist, initramfs)",
                          {privileged({"tee", file}, remedy::nouveau_blacklist_text),
                           privileged({"update-initramfs", "-u"})},
                          {DoneKind::file_contains, {}, file, "blacklist nouveau"},
                          "write " + std::string(remedy::nouveau_blacklist_file) + " by hand");
    step.reboot_after = facts.machine.modules.nouveau;
    steps.push_back(std::move(step));
  }
  steps.push_back(driver_step(facts, branch));
}

Step container_step(const BootstrapRequest& request) {
  const auto key = "/tmp/nvidia-container-toolkit.gpg";
  return make_step(
      "container-toolkit", "Install the NVIDIA container toolkit and configure Docker",
      {user({"curl", "-fsSL", "-o", key, container_gpgkey}),
       privileged({"gpg", "--dearmor", "--yes", "-o", rooted(request, container_keyring), key}),
       privileged({"tee", rooted(request, container_list)},
                  "deb [signed-by=" + std::string(container_keyring) +
                      "] https://nvidia.github.io/libnvidia-container/stable/deb/$(ARCH) /\n"),
       apt({"update"}), apt({"install", "-y", "nvidia-container-toolkit"}),
       privileged({"nvidia-ctk", "runtime", "configure", "--runtime=docker"}),
       privileged({"systemctl", "restart", "docker"})},
      {DoneKind::packages_installed, {"nvidia-container-toolkit"}, {}, {}},
      "see https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/");
}

// The rc file and hook line for the user's shell; bash unless $SHELL names zsh or fish.
std::pair<std::string, std::string> hook_for(const BootstrapRequest& request) {
  const auto shell = std::filesystem::path(request.shell).filename().string();
  if (shell == "zsh") return {request.home + "/.zshrc", "eval \"$(cudaenv init zsh)\""};
  if (shell == "fish")
    return {request.home + "/.config/fish/config.fish", "cudaenv init fish | source"};
  return {request.home + "/.bashrc", "eval \"$(cudaenv init bash)\""};
}

Step hook_step(const BootstrapRequest& request) {
  const auto [rc, line] = hook_for(request);
  std::vector<StepCommand> commands;
  const auto directory = std::filesystem::path(rc).parent_path().string();
  if (directory != request.home) commands.push_back(user({"mkdir", "-p", directory}));
  commands.push_back(user({"tee", "-a", rc}, line + "\n"));
  return make_step("shell-hook", "Add the cudaenv hook to " + rc, commands,
                   {DoneKind::file_contains, {}, rc, line}, "add the line by hand: " + line);
}

}  // namespace

bool supported_os(const probe::OsFacts& os) {
  return (os.id == "ubuntu" &&
          (os.version_id == "20.04" || os.version_id == "22.04" || os.version_id == "24.04")) ||
         (os.id == "debian" && os.version_id == "12");
}

Result<Plan> plan_bootstrap(const DoctorFacts& facts, const manifest::Database& db,
                            const BootstrapRequest& request) {
  const auto& os = facts.machine.os;
  const auto name = os.pretty_name.empty()
                        ? (os.id.empty() ? "unknown" : os.id + " " + os.version_id)
                        : os.pretty_name;
  if (!supported_os(os)) {
    return make_error(
        ErrorKind::failure,
        "unsupported OS: " + name + "; supported: Ubuntu 20.04, 22.04, 24.04 and Debian 12",
        "install the NVIDIA driver with your distribution's tools, then `cudaenv "
        "install SPEC`");
  }
  Plan plan;
  plan.os = name;
  auto releases = choose_releases(facts, db, request, plan);
  if (!releases) return releases.error();
  const auto* newest = *std::max_element(releases->begin(), releases->end(),
                                         [](auto* a, auto* b) { return a->version < b->version; });
  auto driver = decide_driver(facts, db, request, *newest, plan);
  if (!driver) return driver.error();
  std::vector<std::string> packages;
  std::vector<Step> middle;
  if (driver->install) add_driver_steps(facts, request, driver->branch, packages, middle);
  if (request.container) {
    packages.insert(packages.end(), {"curl", "gnupg", "ca-certificates"});
    middle.push_back(container_step(request));
  }
  std::sort(packages.begin(), packages.end());
  packages.erase(std::unique(packages.begin(), packages.end()), packages.end());
  if (!packages.empty()) {
    plan.steps.push_back(make_step("apt-update", "Refresh the package lists", {apt({"update"})}, {},
                                   "check /etc/apt/sources.list* and the network"));
    auto install = packages;
    install.insert(install.begin(), {"install", "-y"});
    plan.steps.push_back(make_step("prerequisites", "Install " + text::join(packages, ", "),
                                   {apt(install)}, {DoneKind::packages_installed, packages, {}, {}},
                                   "apt-get could not install them; see its message above"));
  }
  for (auto& step : middle) plan.steps.push_back(std::move(step));
  if (!request.install_source.empty())
    plan.notes.push_back("toolkits from " + request.install_source);
  for (size_t i = 0; i < releases->size(); ++i) {
    const auto spec = request.cuda.empty() ? (*releases)[i]->version.str() : request.cuda[i];
    std::vector<std::string> install = {"cudaenv", "install", spec};
    install.insert(install.end(), request.install_flags.begin(), request.install_flags.end());
    plan.steps.push_back(
        make_step("toolkit-" + spec, "Install CUDA " + spec + " with cudaenv", {user(install)},
                  {DoneKind::toolkit_installed, {}, {}, spec},
                  "run `" + text::shell_join(install) + "` to see the full error"));
  }
  plan.steps.push_back(hook_step(request));
  plan.reboot_needed = std::any_of(plan.steps.begin(), plan.steps.end(),
                                   [](const Step& s) { return s.reboot_after; });
  if (driver->install || plan.reboot_needed) {
    auto verify =
        make_step("verify-driver", "Check that the driver answers", {user({"nvidia-smi"})}, {},
                  "run `cudaenv doctor`: it names what keeps the driver from loading");
    verify.after_reboot = true;
    plan.steps.push_back(std::move(verify));
  }
  return plan;
}

std::vector<std::string> effective_argv(const StepCommand& command, bool as_root) {
  if (!command.privileged || as_root) return command.argv;
  std::vector<std::string> argv = {"sudo"};
  argv.insert(argv.end(), command.environment.begin(), command.environment.end());
  argv.insert(argv.end(), command.argv.begin(), command.argv.end());
  return argv;
}

std::string describe(const DoneCheck& check) {
  switch (check.kind) {
    case DoneKind::never: return "";
    case DoneKind::packages_installed: return "installed: " + text::join(check.names, ", ");
    case DoneKind::any_package: return "installed: one of " + text::join(check.names, ", ");
    case DoneKind::file_contains: return check.path + " has the line " + check.text;
    case DoneKind::toolkit_installed: return "cudaenv has CUDA " + check.text + " installed";
  }
  return "";
}

}  // namespace cudaenv::doctor
