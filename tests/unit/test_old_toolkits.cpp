// Old toolkits on new systems: the host compiler activation chooses (and how it is undone), the
// glibc headers' version, Debian's packaged toolkit, the database's glibc limits and nvcc's real
// glibc 2.41 error.

#include <filesystem>
#include <fstream>

#include <doctest/doctest.h>

#include "activate/activation.hpp"
#include "activate/host_compiler.hpp"
#include "activate/toolkit_env.hpp"
#include "core/text.hpp"
#include "probe/glibc.hpp"
#include "probe/toolkits.hpp"
#include "project/project_file.hpp"
#include "test_util.hpp"
#include "verify/classify.hpp"

using namespace cudaenv;
namespace fs = std::filesystem;

namespace {

// CUDA 11.8's host_config.h check (GCC <= 11), c++ leading to g++-12, and the g++ programs named.
struct Machine {
  test::TempDir dir;
  fs::path prefix = dir.path() / "toolkit";
  fs::path bin = dir.path() / "bin";
  explicit Machine(std::initializer_list<const char*> compilers) {
    test::write_file(prefix / "include" / "crt" / "host_config.h",
                     "#if defined(__GNUC__)\n#if __GNUC__ > 11\n#error -- unsupported GNU "
                     "version!\n#endif\n#endif\n");
    fs::create_directories(bin);
    for (const char* name : compilers) {
      test::write_file(bin / name, "#!/bin/sh\n");
      fs::permissions(bin / name, fs::perms::owner_all);
    }
    fs::create_symlink(bin / "g++-12", bin / "c++");
  }
  Environment env(std::map<std::string, std::string> extra = {}) const {
    extra["PATH"] = bin.string() + ":/nonexistent";
    return Environment(std::move(extra));
  }
  std::string gxx(const char* name) const { return (bin / name).string(); }
};

constexpr const char* glibc_241_clash =  // nvcc 11.8.89 with Debian 13's libc6-dev 2.41
    "/tmp/glibc-2.41-root/usr/include/x86_64-linux-gnu/bits/mathcalls.h(79): error: exception "
    "specification is incompatible with that of previous function \"cospi\"\n"
    "/tmp/p/bin/../include/crt/math_functions.h(5551): here\n";

}  // namespace

TEST_CASE("nvcc gets g++-11 through NVCC_PREPEND_FLAGS and CMake through CUDAHOSTCXX") {
  Machine machine({"g++-11", "g++-12"});
  const auto env = activate::toolkit_environment(machine.env(), {machine.prefix, "11.8.0"});
  CHECK(env.get("CUDAHOSTCXX") == machine.gxx("g++-11"));
  CHECK(env.get("NVCC_PREPEND_FLAGS") == "-ccbin " + machine.gxx("g++-11"));
  const auto choice = activate::choose_host_compiler(machine.env(), machine.prefix);
  CHECK(text::contains(choice.reason, "c++ is g++-12, newer than this toolkit accepts (gcc <= 11"));
  CHECK(choice.missing_package.empty());
}

TEST_CASE("a user's own NVCC_PREPEND_FLAGS is kept in front, and a -ccbin in it stands") {
  Machine machine({"g++-11", "g++-12"});
  auto env = activate::toolkit_environment(machine.env({{"NVCC_PREPEND_FLAGS", "-lineinfo"}}),
                                           {machine.prefix, "11.8.0"});
  CHECK(env.get("NVCC_PREPEND_FLAGS") == "-lineinfo -ccbin " + machine.gxx("g++-11"));
  for (const char* own : {"-ccbin /opt/gcc/bin/g++", "--compiler-bindir=/opt/gcc/bin"}) {
    env = activate::toolkit_environment(machine.env({{"NVCC_PREPEND_FLAGS", own}}),
                                        {machine.prefix, "11.8.0"});
    CHECK(env.get("NVCC_PREPEND_FLAGS") == own);
    CHECK_FALSE(env.get("CUDAHOSTCXX"));
  }
  // nvcc reads NVCC_CCBIN from 12.5 on: there it stands; 11.8 ignores it, so -ccbin is added.
  env = activate::toolkit_environment(machine.env({{"NVCC_CCBIN", "g++-10"}}),
                                      {machine.prefix, "12.5.0"});
  CHECK_FALSE(env.get("NVCC_PREPEND_FLAGS"));
  env = activate::toolkit_environment(machine.env({{"NVCC_CCBIN", "g++-10"}}),
                                      {machine.prefix, "11.8.0"});
  CHECK(env.get("NVCC_PREPEND_FLAGS") == "-ccbin " + machine.gxx("g++-11"));
  const auto choice = activate::choose_host_compiler(machine.env({{"NVCC_CCBIN", "g++-10"}}),
                                                     machine.prefix, "", "11.8.0");
  CHECK_FALSE(choice.user_choice);
  CHECK(text::contains(choice.reason, "NVCC_CCBIN (g++-10) is ignored by nvcc 11.8.0"));
  CHECK(activate::honours_nvcc_ccbin("12.5.0"));
  CHECK_FALSE(activate::honours_nvcc_ccbin("12.4.1"));
}

TEST_CASE("with no accepted g++ installed the package to install is named, and nothing is set") {
  Machine machine({"g++-12"});
  const auto choice = activate::choose_host_compiler(machine.env(), machine.prefix);
  CHECK_FALSE(choice.compiler);
  CHECK(choice.missing_package == "g++-11");
  CHECK(text::contains(choice.reason, "sudo apt install g++-11"));
  CHECK(activate::host_compiler_variables(machine.env(), choice).empty());
}

TEST_CASE("a project's host_compiler pin is looked up on PATH, never taken as a path") {
  Machine machine({"g++-10", "g++-11", "g++-12"});
  auto choice = activate::choose_host_compiler(machine.env(), machine.prefix, "g++-10");
  CHECK(choice.compiler == machine.gxx("g++-10"));
  choice = activate::choose_host_compiler(machine.env(), machine.prefix, "g++-9");
  CHECK(choice.missing_package == "g++-9");
  auto parsed =
      project::parse_project_file("cuda = \"11.8\"\nhost_compiler = \"g++-11\"\n", "/p/.cudaenv");
  REQUIRE(parsed);
  CHECK(parsed->host_compiler == "g++-11");
  parsed = project::parse_project_file("cuda = \"11.8\"\nhost_compiler = \"/tmp/evil\"\n",
                                       "/p/.cudaenv");
  REQUIRE_FALSE(parsed);
  CHECK(
      text::contains(parsed.error().message, "/p/.cudaenv:2: host_compiler must name a compiler"));
}

TEST_CASE("leaving restores the user's NVCC_PREPEND_FLAGS, and a forged record cannot set flags") {
  Machine machine({"g++-11", "g++-12"});
  const auto base = machine.env({{"NVCC_PREPEND_FLAGS", "-lineinfo"}});
  const auto target = activate::toolkit_environment(base, {machine.prefix, "11.8.0"});
  auto active = target;
  active.set(activate::activation_variable,
             activate::encode(activate::record_activation(base, target)));
  CHECK(activate::without_activation(active).get("NVCC_PREPEND_FLAGS") == "-lineinfo");
  CHECK(activate::is_prepended_ccbin(std::nullopt, "-ccbin /usr/bin/g++-11"));
  CHECK(activate::is_prepended_ccbin(std::string("-G"), "-G -ccbin /usr/bin/g++-11"));
  CHECK_FALSE(activate::is_prepended_ccbin(std::string("-Xcompiler=-B/tmp/evil"), "-ccbin g++-11"));
  CHECK_FALSE(activate::is_prepended_ccbin(std::nullopt, "-ccbin g++-11 -Xcompiler=-B/tmp"));
}

TEST_CASE("glibc's version comes from features.h") {
  CHECK(probe::parse_glibc_features("#define\t__GLIBC__\t2\n#define\t__GLIBC_MINOR__\t41\n") ==
        Version::parse("2.41"));
  CHECK_FALSE(probe::parse_glibc_features("#define __GLIBC__ 2\n"));
}

TEST_CASE("the database: CUDA < 13.0 accepts glibc <= 2.40, fixed in 13.0") {
  const auto& db = test::embedded_database();
  const auto* old = db.glibc_limit(*Version::parse("11.8.0"));
  REQUIRE(old != nullptr);
  CHECK(old->glibc_max == *Version::parse("2.40"));
  CHECK(old->fixed_in == Version::parse("13.0"));
  CHECK(db.glibc_limit(*Version::parse("12.9.1")) == old);
  const auto* thirteen = db.glibc_limit(*Version::parse("13.0.2"));
  REQUIRE(thirteen != nullptr);
  CHECK(thirteen->glibc_max == *Version::parse("2.41"));
  CHECK(db.glibc_limit(*Version::parse("13.2.0")) == nullptr);
}

TEST_CASE("nvcc's real glibc 2.41 error is glibc_headers_clash, with the limit and the fix") {
  const auto& db = test::embedded_database();
  verify::ArchPlan archs{{*Version::parse("7.5")}, Version::parse("7.5"), "default"};
  const verify::ClassifyContext context{db,
                                        std::nullopt,
                                        {},
                                        {},
                                        *Version::parse("11.8.0"),
                                        "/r/toolkits/11.8.0",
                                        archs,
                                        std::nullopt,
                                        std::nullopt,
                                        std::nullopt,
                                        std::nullopt};
  ProcessResult compile;
  compile.exit_code = 1;
  compile.err = glibc_241_clash;
  const verify::Evidence evidence{compile, std::nullopt, {}};
  const auto cause = verify::classify(evidence, context);
  REQUIRE(cause);
  CHECK(cause->id == verify::CauseId::glibc_headers_clash);
  CHECK(text::contains(cause->message, "\"cospi\""));
  CHECK(text::contains(cause->message, "glibc <= 2.40"));
  CHECK(text::contains(cause->fix, "use CUDA 13.0 or newer"));
}

TEST_CASE("Debian's nvidia-cuda-toolkit is one toolkit at /usr, versioned by dpkg") {
  test::TempDir root;
  test::write_file(root.path() / "usr/bin/nvcc",
                   "#!/bin/sh\n\nexec /usr/lib/nvidia-cuda-toolkit/bin/nvcc \"$@\"\n");
  test::write_file(root.path() / "usr/lib/nvidia-cuda-toolkit/bin/nvcc", "#!/bin/sh\nexit 1\n");
  for (const char* file : {"usr/bin/nvcc", "usr/lib/nvidia-cuda-toolkit/bin/nvcc"})
    fs::permissions(root.path() / file, fs::perms::owner_all);
  test::write_file(root.path() / "var/lib/dpkg/status",
                   "Package: nvidia-cuda-toolkit\nStatus: install ok installed\n"
                   "Version: 11.8.89~11.8.0-5~deb12u1\n\n");
  const Sysroot sysroot(root.path());
  SystemProcessRunner runner;
  const Environment env(std::map<std::string, std::string>{{"PATH", "/usr/bin:/bin"}});
  const auto toolkits = probe::probe_toolkits({sysroot, runner, env, root.path() / "no-data-root"});
  REQUIRE(toolkits.size() == 1);
  CHECK(toolkits[0].path == "/usr");
  CHECK(toolkits[0].version == Version::parse("11.8.0"));
  CHECK(toolkits[0].nvcc_version == Version::parse("11.8.89"));
  CHECK(toolkits[0].version_source == "dpkg");
}
