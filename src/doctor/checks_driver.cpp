// Checks of the driver as installed and running: its packages, device nodes, nvidia-smi, and
// whether it supports the active toolkit.

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "core/text.hpp"
#include "doctor/checks.hpp"
#include "probe/driver_packages.hpp"
#include "resolve/rules.hpp"

namespace cudaenv::doctor {

namespace {

// The driver version to keep when two are installed: the one whose module runs, else the newest.
std::string version_to_keep(const DoctorFacts& facts, const std::map<Version, std::string>& by) {
  if (facts.machine.driver) {
    for (const auto& [version, text] : by) {
      if (text == facts.machine.driver->version) return text;
    }
  }
  return by.rbegin()->second;
}

void duplicate_drivers(const DoctorFacts& facts, const std::map<Version, std::string>& versions,
                       Finding& f) {
  const auto keep = version_to_keep(facts, versions);
  std::vector<std::string> listed;
  for (const auto& [version, text] : versions) listed.push_back(text);
  conclude(f, CheckStatus::fail,
           std::to_string(versions.size()) + " NVIDIA driver versions are installed (" +
               text::join(listed, ", ") + "): their libraries and module fight");
  std::vector<std::string> purge;
  for (const auto& package : facts.host.driver_packages.packages) {
    if (probe::upstream_version(package.version) != keep) purge.push_back(package.name);
  }
  f.fix = {"sudo apt-get purge -y " + text::join(purge, " ") + "   # keeps " + keep,
           "sudo apt-get autoremove -y", "sudo reboot"};
}

}  // namespace

const manifest::CudaRelease* release_for(const manifest::Database& db, const Version& version) {
  const manifest::CudaRelease* oldest_of_minor = nullptr;
  for (const auto& release : db.cuda_releases) {
    if (release.version == version) return &release;
    if (oldest_of_minor == nullptr && release.version.major_minor() == version.major_minor())
      oldest_of_minor = &release;
  }
  return oldest_of_minor;
}

std::string driver_install_command(const DoctorFacts& facts, int branch) {
  const auto b = std::to_string(branch);
  if (facts.host.has_ubuntu_drivers) return "sudo ubuntu-drivers install nvidia:" + b;
  if (facts.machine.os.id == "debian") return "sudo apt-get install -y cuda-drivers-" + b;
  return "sudo apt-get install -y nvidia-driver-" + b;
}

Finding check_driver_packages(const CheckInput& in) {
  auto f = finding("driver-packages", "one NVIDIA driver installed");
  if (on_wsl(in.facts)) {
    wsl_driver_packages(in, f);
    return f;
  }
  const auto& packages = in.facts.host.driver_packages;
  std::map<Version, std::string> versions;
  for (const auto& package : packages.packages) {
    const auto upstream = probe::upstream_version(package.version);
    f.evidence.push_back("/var/lib/dpkg/status: " + package.name + " " + package.version);
    if (auto version = Version::parse(upstream)) versions.emplace(*version, upstream);
  }
  for (const auto& leftover : packages.runfile_leftovers)
    f.evidence.push_back("runfile installer file: " + leftover);
  if (versions.size() > 1) {
    duplicate_drivers(in.facts, versions, f);
    return f;
  }
  const bool runfile_driver =
      std::find(packages.runfile_leftovers.begin(), packages.runfile_leftovers.end(),
                "/usr/bin/nvidia-uninstall") != packages.runfile_leftovers.end();
  if (!packages.packages.empty() && !packages.runfile_leftovers.empty()) {
    conclude(f, runfile_driver ? CheckStatus::fail : CheckStatus::warn,
             runfile_driver
                 ? "a driver from NVIDIA's .run installer sits next to the apt driver packages"
                 : "a .run toolkit install sits next to the apt driver packages (its bundled "
                   "driver, if it was installed, conflicts with them)");
    for (const auto& leftover : packages.runfile_leftovers) {
      f.fix.push_back("sudo " + leftover +
                      (text::ends_with(leftover, "nvidia-uninstall") ? " --silent" : ""));
    }
    f.fix.emplace_back("sudo apt-get install --reinstall -y " + packages.packages.front().name);
    return f;
  }
  if (packages.packages.empty()) {
    conclude(f, CheckStatus::skip,
             packages.dpkg_readable
                 ? "no NVIDIA driver packages in /var/lib/dpkg/status"
                 : "/var/lib/dpkg/status unreadable (not a Debian-family system)");
    return f;
  }
  conclude(f, CheckStatus::ok, "one driver version installed: " + versions.begin()->second);
  return f;
}

Finding check_device_nodes(const CheckInput& in) {
  auto f = finding("device-nodes", "/dev/nvidia* device nodes present");
  if (on_wsl(in.facts)) {
    wsl_device_nodes(in, f);
    return f;
  }
  const auto& nodes = in.facts.machine.modules.device_nodes;
  const auto has = [&](const std::string& node) {
    return std::find(nodes.begin(), nodes.end(), node) != nodes.end();
  };
  f.evidence.push_back(nodes.empty() ? "/dev: no nvidia* nodes"
                                     : "/dev: " + text::join(nodes, " "));
  const bool gpu_node = std::any_of(nodes.begin(), nodes.end(), [](const std::string& n) {
    return n.size() > 11 && text::starts_with(n, "/dev/nvidia") &&
           std::isdigit(static_cast<unsigned char>(n[11])) != 0;
  });
  if (!driver_installed(in.facts) && nodes.empty()) {
    conclude(f, CheckStatus::skip, "no NVIDIA driver installed");
  } else if (!has("/dev/nvidiactl") || !gpu_node) {
    conclude(f, CheckStatus::fail,
             "/dev/nvidiactl or /dev/nvidia<N> is missing: nothing can reach the GPU");
    f.fix = in.facts.host.in_container
                ? std::vector<std::string>{"# start the container with the GPUs passed in:",
                                           "docker run --gpus all ..."}
                : std::vector<std::string>{"sudo modprobe nvidia", "sudo nvidia-modprobe -c 0 -u"};
  } else if (!has("/dev/nvidia-uvm")) {
    conclude(f, CheckStatus::warn,
             "/dev/nvidia-uvm is missing: CUDA creates it on first use only as root");
    f.fix = {"sudo nvidia-modprobe -c 0 -u"};
  } else {
    conclude(f, CheckStatus::ok, "control, GPU and UVM device nodes are present");
  }
  return f;
}

Finding check_nvidia_smi(const CheckInput& in) {
  auto f = finding("nvidia-smi", "nvidia-smi talks to the driver");
  if (on_wsl(in.facts)) {
    wsl_nvidia_smi(in, f);
    return f;
  }
  const auto& smi = in.facts.host.nvidia_smi;
  if (smi.outcome == probe::SmiOutcome::not_found) {
    f.evidence.emplace_back("nvidia-smi: not on PATH or in /usr/bin");
    if (driver_installed(in.facts) && !in.facts.host.in_container) {
      conclude(f, CheckStatus::warn, "nvidia-smi is not installed");
      f.fix = {"sudo apt-get install -y nvidia-utils-" +
               text::split(in.facts.machine.driver ? in.facts.machine.driver->version : "", '.')
                   .front()};
    } else {
      conclude(f, CheckStatus::skip, "nvidia-smi is not installed");
    }
    return f;
  }
  f.evidence.push_back("$ " + smi.command + "  -> exit " + std::to_string(smi.exit_code) + ": " +
                       smi.output);
  switch (smi.outcome) {
    case probe::SmiOutcome::ok:
      conclude(f, CheckStatus::ok, "nvidia-smi answers: " + smi.output);
      break;
    case probe::SmiOutcome::no_communication:
      conclude(f, CheckStatus::fail,
               "nvidia-smi cannot communicate with the driver: the module is not "
               "running");
      f.fix = {"sudo modprobe nvidia", "# see the kernel-module finding for why it is not loaded"};
      break;
    case probe::SmiOutcome::version_mismatch:
      conclude(f, CheckStatus::fail,
               "the driver libraries and the running kernel module are different versions (a "
               "driver update without a reboot)");
      f.fix = {"sudo reboot"};
      break;
    default:
      conclude(f, CheckStatus::fail, "nvidia-smi failed: " + smi.output);
      f.fix = {"nvidia-smi   # read its message; the findings above name the usual causes"};
  }
  return f;
}

namespace {

// A driver too old for the active toolkit: served all the same where the hook put a
// forward-compatibility library first; else the driver upgrade, and on data-center GPUs whose
// branch NVIDIA's package supports, that package first (no reboot).
void too_old(const CheckInput& in, const manifest::CudaRelease& release,
             const resolve::DriverCheck& check, Finding& f, std::vector<std::string> fix) {
  const auto& driver = in.facts.machine.driver->version;
  const auto minimum = check.full_minimum ? check.full_minimum->str() : std::string("?");
  const auto& forward = in.active.forward_compat;
  if (forward && forward->decision.use()) {
    f.evidence.push_back("forward compatibility: " + forward->directory.string());
    conclude(f, CheckStatus::ok,
             "driver " + driver + " is older than CUDA " + release.version.str() + " needs (>= " +
                 minimum + "), and forward compatibility serves it: " + forward->decision.reason);
    return;
  }
  std::vector<std::string> names;
  std::vector<Version> archs;
  for (const auto& gpu : in.facts.machine.gpus) {
    names.push_back(gpu.name);
    archs.push_back(gpu.compute_capability);
  }
  std::string also;
  const auto parsed = Version::parse(driver);
  const auto fit = parsed ? resolve::forward_compat_fit(in.db, release, *parsed, archs, names)
                          : resolve::ForwardCompatFit{};
  if (fit.package != nullptr) {
    fix.insert(fix.begin(),
               {"cudaenv compat install " + fit.package->cuda.str(), "# or upgrade the driver:"});
    also = "; on these data-center GPUs NVIDIA's forward-compatibility package " +
           fit.package->package + " runs it without a driver upgrade";
  }
  if (forward)
    f.evidence.push_back("forward compatibility " + forward->directory.string() + ": " +
                         forward->decision.reason);
  conclude(f, CheckStatus::fail,
           "driver " + driver + " is too old for CUDA " + release.version.str() +
               ": it needs >= " + minimum +
               (check.compat_floor
                    ? " (minor-version compatibility >= " + check.compat_floor->str() + ")"
                    : "") +
               also);
  f.fix = std::move(fix);
}

}  // namespace

Finding check_driver_toolkit(const CheckInput& in) {
  auto f = finding("driver-toolkit", "driver supports the active toolkit");
  const auto& toolkit = in.active.toolkit;
  const auto& driver = in.facts.machine.driver;
  if (in.active.missing) {  // what applies here is not installed: nothing to judge it by yet
    f.evidence.push_back("selected: " + in.active.selected_by);
    conclude(f, CheckStatus::warn, in.active.missing->message);
    if (!in.active.missing->hint.empty()) {
      const auto& hint = in.active.missing->hint;
      f.fix = {text::starts_with(hint, "run: ") ? hint.substr(5) : hint};
    }
    return f;
  }
  if (!toolkit || !toolkit->version) {
    conclude(f, CheckStatus::skip, "no active CUDA toolkit");
    return f;
  }
  f.evidence.push_back("active toolkit: CUDA " + toolkit->version->str() + " at " + toolkit->path +
                       " (" + in.active.selected_by + ")");
  const auto* release = release_for(in.db, *toolkit->version);
  if (!driver || !release) {
    conclude(f, CheckStatus::skip,
             !driver ? "no NVIDIA driver detected"
                     : "CUDA " + toolkit->version->str() + " is not in the compatibility database");
    return f;
  }
  f.evidence.push_back(
      "driver " + driver->version + " (" + probe::to_string(driver->version_source) + ")" +
      (driver->cuda_version ? ", supports CUDA <= " + driver->cuda_version->str() : ""));
  const auto check = resolve::check_driver(in.db, *release, Version::parse(driver->version));
  const auto minimum = check.full_minimum ? check.full_minimum->str() : std::string("?");
  const auto* branch = in.db.branch_for(release->version);
  const auto fix =
      !branch ? std::vector<std::string>{}
      : on_wsl(in.facts) ? wsl_driver_update_fix(branch->branch)
      : !in.facts.machine.tegra_release.empty()
          ? std::vector<std::string>{"# a Jetson (Tegra) board: its driver comes with NVIDIA "
                                     "JetPack (L4T); update JetPack, never install a desktop "
                                     "nvidia-driver package"}
          : std::vector<std::string>{driver_install_command(in.facts, branch->branch),
                                     "sudo reboot"};
  switch (check.mode) {
    case resolve::DriverMode::full:
      conclude(f, CheckStatus::ok,
               "driver " + driver->version + " fully supports CUDA " + release->version.str() +
                   " (needs >= " + minimum + ")");
      break;
    case resolve::DriverMode::minor_compat:
      conclude(f, CheckStatus::warn,
               "driver " + driver->version + " runs CUDA " + release->version.str() +
                   " only in minor-version compatibility mode (full support needs >= " + minimum +
                   "): newer PTX cannot be JIT-compiled");
      f.fix = fix;
      break;
    default: too_old(in, *release, check, f, fix);
  }
  return f;
}

}  // namespace cudaenv::doctor
