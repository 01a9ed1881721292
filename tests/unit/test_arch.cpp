// `cudaenv arch`'s rules without the command line: CEP 46's build string of __cuda_arch, the lowest
// GPU for conda and every GPU for the build tools, and the NVIDIA variant provider's properties for
// a mixed machine (its reference case "heterogeneous": CUDA 12.7, GPUs 7.5, 8.9, 8.9 and 9.0).

#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "arch/formats.hpp"
#include "arch/subject.hpp"

using namespace cudaenv;

namespace {

arch::GpuSubject mixed_machine() {
  arch::GpuSubject subject;
  subject.name = "this machine";
  subject.driver = "565.57.01";
  subject.driver_cuda = Version::parse("12.7");
  subject.cuda_source = arch::CudaSource::driver;
  subject.archs = {*Version::parse("7.5"), *Version::parse("8.9"), *Version::parse("9.0")};
  subject.lowest_model = "GeForceRTX2080Ti";
  return subject;
}

std::vector<std::string> values_of(const std::vector<std::string>& properties,
                                   const std::string& feature) {
  std::vector<std::string> out;
  const auto prefix = "nvidia :: " + feature + " :: ";
  for (const auto& property : properties) {
    if (property.rfind(prefix, 0) == 0) out.push_back(property.substr(prefix.size()));
  }
  return out;
}

}  // namespace

TEST_CASE("CEP 46's model keeps letters and digits and drops NVIDIA in any case") {
  CHECK(arch::cep46_model("NVIDIA A100-SXM4-80GB") == "A100SXM480GB");
  CHECK(arch::cep46_model("nvidia GeForce RTX 4090") == "GeForceRTX4090");
  CHECK(arch::cep46_model("$(id) `x`; \"H100\"") == "idxH100");
  CHECK(arch::cep46_model(std::string(100, 'A')).size() == 64);
}

TEST_CASE("conda takes the lowest GPU with its model, the build tools take every GPU") {
  const auto subject = mixed_machine();
  const auto conda = arch::conda_variables(subject);
  REQUIRE(conda.size() == 2);
  CHECK(conda[0].second == "12.7");
  CHECK(conda[1].second == "7.5=GeForceRTX2080Ti");
  CHECK(*arch::cmake_architectures(subject) == "75;89;90");
  CHECK(*arch::torch_arch_list(subject) == "7.5;8.9;9.0+PTX");
  CHECK(*arch::spack_spec(subject) == "+cuda cuda_arch=75,89,90 ^cuda@:12.7");
  CHECK(*arch::render(arch::Format::torch, subject) ==
        "export TORCH_CUDA_ARCH_LIST=\"7.5;8.9;9.0+PTX\"\n");
}

TEST_CASE("the variant provider's properties follow its reference case for a mixed machine") {
  const auto properties = arch::variant_properties(mixed_machine());
  REQUIRE(properties);
  const auto lower = values_of(*properties, "cuda_version_lower_bound");
  REQUIRE(lower.size() == 31);
  CHECK(lower.front() == "12.7");
  CHECK(lower[8] == "12");
  CHECK(lower[9] == "11.20");
  CHECK(lower.back() == "11");
  const auto upper = values_of(*properties, "cuda_version_upper_bound");
  REQUIRE(upper.size() == 79);
  CHECK(upper.front() == "15.20");
  CHECK(upper[21] == "15");
  CHECK(upper.back() == "12.8");
  // The newest GPU alone decides.
  CHECK(values_of(*properties, "sm_arch") == std::vector<std::string>{"90_real", "90_virtual"});
  CHECK(arch::notes(arch::Format::variant, mixed_machine()).size() == 1);
}

TEST_CASE("no driver: conda's overrides are empty and the variant provider reports nothing") {
  arch::GpuSubject subject;
  subject.name = "this machine";
  const auto conda = arch::conda_variables(subject);
  CHECK(conda[0].second.empty());
  CHECK(conda[1].second.empty());
  CHECK_FALSE(arch::variant_properties(subject));
  CHECK(arch::cmake_architectures(subject).error().kind == ErrorKind::not_found);
}
