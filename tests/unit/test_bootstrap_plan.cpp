// Bootstrap plans for described machines: which steps, in which order, with which commands, for
// each supported OS and situation. The plan is a pure function of facts, so the machines here are
// facts written out, not fixture trees (tests/cli/test_bootstrap.py runs plans on fixtures).

#include <doctest/doctest.h>

#include "core/text.hpp"
#include "doctor/bootstrap_plan.hpp"
#include "manifest/load.hpp"

using namespace cudaenv;
using namespace cudaenv::doctor;

namespace {

const manifest::Database& database() {
  static const auto db = manifest::load_database(manifest::embedded_manifests());
  REQUIRE(db.ok());
  return *db;
}

DoctorFacts machine(const std::string& id, const std::string& version, const std::string& pretty) {
  DoctorFacts facts;
  facts.machine.os = {id, "debian", version, "", pretty, "6.8.0-45-generic", "x86_64"};
  facts.machine.modules.modules_readable = true;
  return facts;
}

DoctorFacts fresh_ubuntu_2204_with_nouveau() {
  auto facts = machine("ubuntu", "22.04", "Ubuntu 22.04.4 LTS");
  facts.machine.os.kernel = "5.15.0-105-generic";
  facts.machine.modules.nouveau = true;
  facts.host.has_ubuntu_drivers = true;
  return facts;
}

DoctorFacts ubuntu_2404_driver_fine() {
  auto facts = machine("ubuntu", "24.04", "Ubuntu 24.04.1 LTS");
  probe::DriverFacts driver;
  driver.version = "580.95.05";
  driver.cuda_version = Version::parse("13.0");
  facts.machine.driver = driver;
  facts.machine.modules.nvidia = true;
  facts.machine.gpus.push_back({0, "NVIDIA H100 80GB HBM3", *Version::parse("9.0"), 0});
  facts.host.modprobe.nouveau_blacklist.push_back({"/etc/modprobe.d/x.conf", "blacklist nouveau"});
  facts.host.has_ubuntu_drivers = true;
  return facts;
}

BootstrapRequest request(std::vector<std::string> cuda, bool as_root = false) {
  BootstrapRequest r;
  r.cuda = std::move(cuda);
  r.as_root = as_root;
  r.shell = "/bin/bash";
  r.home = "/home/ada";
  return r;
}

std::string ids(const Plan& plan) {
  std::vector<std::string> list;
  for (const auto& step : plan.steps) list.push_back(step.id);
  return text::join(list, " ");
}

const Step& step(const Plan& plan, const std::string& id) {
  for (const auto& s : plan.steps) {
    if (s.id == id) return s;
  }
  FAIL("no step " << id);
  throw std::logic_error("unreachable");
}

std::vector<std::string> command_lines(const Step& s, bool as_root) {
  std::vector<std::string> lines;
  for (const auto& c : s.commands) lines.push_back(text::shell_join(effective_argv(c, as_root)));
  return lines;
}

}  // namespace

TEST_CASE("bootstrap plan: fresh Ubuntu 22.04 with nouveau, CUDA 12.4, as a user with sudo") {
  const auto plan = plan_bootstrap(fresh_ubuntu_2204_with_nouveau(), database(), request({"12.4"}));
  REQUIRE(plan.ok());
  CHECK(ids(*plan) ==
        "apt-update prerequisites nouveau-blacklist driver toolkit-12.4 shell-hook verify-driver");
  CHECK(command_lines(step(*plan, "apt-update"), false) ==
        std::vector<std::string>{"sudo DEBIAN_FRONTEND=noninteractive apt-get update"});
  CHECK(command_lines(step(*plan, "prerequisites"), false) ==
        std::vector<std::string>{"sudo DEBIAN_FRONTEND=noninteractive apt-get install -y dkms "
                                 "linux-headers-5.15.0-105-generic"});
  const auto& blacklist = step(*plan, "nouveau-blacklist");
  CHECK(command_lines(blacklist, false) ==
        std::vector<std::string>{"sudo tee /etc/modprobe.d/blacklist-nouveau.conf",
                                 "sudo update-initramfs -u"});
  CHECK(blacklist.commands[0].input == "blacklist nouveau\noptions nouveau modeset=0\n");
  CHECK(blacklist.reboot_after);
  const auto& driver = step(*plan, "driver");
  CHECK(command_lines(driver, false) ==
        std::vector<std::string>{"sudo ubuntu-drivers install nvidia:550"});
  CHECK(driver.privileged);
  CHECK(driver.reboot_after);
  CHECK(command_lines(step(*plan, "toolkit-12.4"), false) ==
        std::vector<std::string>{"cudaenv install 12.4"});
  const auto& hook = step(*plan, "shell-hook");
  CHECK(command_lines(hook, false) == std::vector<std::string>{"tee -a /home/ada/.bashrc"});
  CHECK(hook.commands[0].input == "eval \"$(cudaenv init bash)\"\n");
  CHECK_FALSE(hook.privileged);
  CHECK(step(*plan, "verify-driver").after_reboot);
  CHECK(plan->reboot_needed);

  const auto script = render_script(*plan, false);
  CHECK(text::contains(script, "# cudaenv bootstrap plan for Ubuntu 22.04.4 LTS\n"));
  CHECK(text::contains(script,
                       "printf '%s\\n' 'blacklist nouveau' 'options nouveau modeset=0' | "
                       "sudo tee /etc/modprobe.d/blacklist-nouveau.conf > /dev/null\n"));
  CHECK(text::contains(script,
                       "printf '%s\\n' 'eval \"$(cudaenv init bash)\"' | tee -a "
                       "/home/ada/.bashrc > /dev/null\n"));
  CHECK(text::contains(script, "# Reboot now so the driver loads"));
  CHECK(text::contains(script, "\n# nvidia-smi\n"));
}

TEST_CASE("bootstrap plan: as root no command goes through sudo") {
  const auto plan =
      plan_bootstrap(fresh_ubuntu_2204_with_nouveau(), database(), request({"12.4"}, true));
  REQUIRE(plan.ok());
  CHECK(command_lines(step(*plan, "driver"), true) ==
        std::vector<std::string>{"ubuntu-drivers install nvidia:550"});
  CHECK(text::contains(render_script(*plan, true),
                       "\nDEBIAN_FRONTEND=noninteractive apt-get update\n"));
}

TEST_CASE("bootstrap plan: Ubuntu 24.04 whose driver already supports the CUDA asked for") {
  const auto plan = plan_bootstrap(ubuntu_2404_driver_fine(), database(), request({"13.0"}));
  REQUIRE(plan.ok());
  CHECK(ids(*plan) == "toolkit-13.0 shell-hook");
  CHECK_FALSE(plan->reboot_needed);
  CHECK(text::contains(text::join(plan->notes, "\n"),
                       "driver 580.95.05 already fully supports CUDA 13.0"));
}

TEST_CASE("bootstrap plan: no --cuda takes the newest CUDA the GPUs and a known branch allow") {
  auto facts = ubuntu_2404_driver_fine();
  facts.machine.driver.reset();
  facts.machine.gpus = {{0, "Tesla K80", *Version::parse("3.7"), 0}};
  const auto plan = plan_bootstrap(facts, database(), request({}));
  REQUIRE(plan.ok());
  CHECK(ids(*plan) == "apt-update prerequisites driver toolkit-11.8.0 shell-hook verify-driver");
  CHECK(command_lines(step(*plan, "driver"), false) ==
        std::vector<std::string>{"sudo ubuntu-drivers install nvidia:520"});
}

TEST_CASE("bootstrap plan: Ubuntu without ubuntu-drivers installs nvidia-driver-<branch>") {
  auto facts = fresh_ubuntu_2204_with_nouveau();
  facts.host.has_ubuntu_drivers = false;
  const auto plan = plan_bootstrap(facts, database(), request({"12.2"}));
  REQUIRE(plan.ok());
  CHECK(command_lines(step(*plan, "driver"), false) ==
        std::vector<std::string>{
            "sudo DEBIAN_FRONTEND=noninteractive apt-get install -y nvidia-driver-535"});
}

TEST_CASE("bootstrap plan: Debian 12 uses NVIDIA's CUDA repository and cuda-drivers-<branch>") {
  const auto plan = plan_bootstrap(machine("debian", "12", "Debian GNU/Linux 12 (bookworm)"),
                                   database(), request({"12.4"}, true));
  REQUIRE(plan.ok());
  CHECK(ids(*plan) ==
        "apt-update prerequisites cuda-repository nouveau-blacklist driver "
        "toolkit-12.4 shell-hook verify-driver");
  CHECK(command_lines(step(*plan, "prerequisites"), true) ==
        std::vector<std::string>{"apt-get install -y ca-certificates dkms "
                                 "linux-headers-6.8.0-45-generic wget"});
  CHECK(command_lines(step(*plan, "cuda-repository"), true) ==
        std::vector<std::string>{
            "wget -qO /tmp/cuda-keyring_1.1-1_all.deb "
            "https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/"
            "cuda-keyring_1.1-1_all.deb",
            "dpkg -i /tmp/cuda-keyring_1.1-1_all.deb", "apt-get update"});
  CHECK(command_lines(step(*plan, "driver"), true) ==
        std::vector<std::string>{"apt-get install -y cuda-drivers-550"});
  // nouveau is not loaded: blacklisting takes effect at the reboot the driver needs anyway.
  CHECK_FALSE(step(*plan, "nouveau-blacklist").reboot_after);
}

TEST_CASE("bootstrap plan: an unknown OS is refused with the list of supported ones") {
  const auto plan = plan_bootstrap(machine("fedora", "40", "Fedora Linux 40 (Workstation Edition)"),
                                   database(), request({"12.4"}));
  REQUIRE_FALSE(plan.ok());
  CHECK(plan.error().message ==
        "unsupported OS: Fedora Linux 40 (Workstation Edition); supported: Ubuntu 20.04, 22.04, "
        "24.04 and Debian 12");
  CHECK(plan.error().kind == ErrorKind::failure);
  CHECK_FALSE(
      plan_bootstrap(machine("ubuntu", "18.04", "Ubuntu 18.04"), database(), request({})).ok());
}

TEST_CASE("bootstrap plan: --container adds the NVIDIA container toolkit") {
  auto r = request({"13.0"});
  r.container = true;
  const auto plan = plan_bootstrap(ubuntu_2404_driver_fine(), database(), r);
  REQUIRE(plan.ok());
  CHECK(ids(*plan) == "apt-update prerequisites container-toolkit toolkit-13.0 shell-hook");
  CHECK(command_lines(step(*plan, "prerequisites"), false) ==
        std::vector<std::string>{
            "sudo DEBIAN_FRONTEND=noninteractive apt-get install -y ca-certificates curl gnupg"});
  const auto lines = command_lines(step(*plan, "container-toolkit"), false);
  CHECK(lines.at(4) ==
        "sudo DEBIAN_FRONTEND=noninteractive apt-get install -y nvidia-container-toolkit");
  CHECK(lines.at(5) == "sudo nvidia-ctk runtime configure --runtime=docker");
}

TEST_CASE("bootstrap plan: the hook line follows $SHELL, unknown versions are errors") {
  auto r = request({"13.0"});
  r.shell = "/usr/bin/zsh";
  auto plan = plan_bootstrap(ubuntu_2404_driver_fine(), database(), r);
  REQUIRE(plan.ok());
  CHECK(step(*plan, "shell-hook").done_check.path == "/home/ada/.zshrc");
  CHECK(step(*plan, "shell-hook").commands[0].input == "eval \"$(cudaenv init zsh)\"\n");
  r.shell = "/usr/bin/fish";
  plan = plan_bootstrap(ubuntu_2404_driver_fine(), database(), r);
  REQUIRE(plan.ok());
  CHECK(command_lines(step(*plan, "shell-hook"), false) ==
        std::vector<std::string>{"mkdir -p /home/ada/.config/fish",
                                 "tee -a /home/ada/.config/fish/config.fish"});
  const auto unknown = plan_bootstrap(ubuntu_2404_driver_fine(), database(), request({"10.7"}));
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error().kind == ErrorKind::not_found);
}
