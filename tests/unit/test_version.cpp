#include <doctest/doctest.h>

#include "core/version.hpp"

using cudaenv::Version;
using cudaenv::VersionSpec;

namespace {
Version v(const char* text) { return *Version::parse(text); }
bool spec_matches(const char* spec, const char* version) {
  return VersionSpec::parse(spec)->matches(v(version));
}
}  // namespace

TEST_CASE("versions parse CUDA, driver and cuDNN forms") {
  CHECK(v("12.4.1").components() == std::vector<int>{12, 4, 1});
  CHECK(v("535.104.05").str() == "535.104.05");  // leading zero kept for display
  CHECK(v("535.104.05").patch() == 5);
  CHECK(v("9.1.0.70").size() == 4);
  CHECK(v("V13.0.88") == v("13.0.88"));
  CHECK(v(" 12 ").major() == 12);
  // cuda-toolkit 13.5.0 pins nvidia-cuda-cccl 13.3.5.0.6: five parts.
  CHECK(v("13.3.5.0.6") > v("13.3.5"));
}

TEST_CASE("malformed versions are rejected") {
  for (const char* bad :
       {"", "12.", ".4", "12..4", "12.4a", "twelve", "1.2.3.4.5.6.7", "-1", "12.4 1"}) {
    CAPTURE(bad);
    CHECK_FALSE(Version::parse(bad).has_value());
  }
}

TEST_CASE("versions order numerically, missing parts count as zero") {
  CHECK(v("12.10") > v("12.9"));
  CHECK(v("535.104.05") < v("535.129.03"));
  CHECK(v("12.4") == v("12.4.0"));
  CHECK(v("11.8") < v("12.0"));
  CHECK(v("580.95.05") > v("580.82.07"));
}

TEST_CASE("CUDA's integer encoding decodes to major.minor") {
  CHECK(Version::from_cuda_int(12040).str() == "12.4");
  CHECK(Version::from_cuda_int(13000).str() == "13.0");
  CHECK(Version::from_cuda_int(11080).str() == "11.8");
}

TEST_CASE("major_minor and prefixes") {
  CHECK(v("12.4.131").major_minor().str() == "12.4");
  CHECK(v("12.4.1").has_prefix(v("12.4")));
  CHECK_FALSE(v("12.40").has_prefix(v("12.4")));
  CHECK_FALSE(v("12").has_prefix(v("12.4")));
}

TEST_CASE("version specs: prefixes, ranges and latest") {
  CHECK(spec_matches("12", "12.9.1"));
  CHECK_FALSE(spec_matches("12", "13.0.0"));
  CHECK(spec_matches("12.1", "12.1.1"));
  CHECK_FALSE(spec_matches("12.1", "12.10.0"));
  CHECK(spec_matches("12.1.1", "12.1.1"));
  CHECK(spec_matches(">=12.1,<12.5", "12.4.1"));
  CHECK_FALSE(spec_matches(">=12.1,<12.5", "12.5.0"));
  CHECK_FALSE(spec_matches(">=12.1,<12.5", "12.0.1"));
  CHECK(spec_matches(">12.4", "12.4.1"));
  CHECK(spec_matches("<=12.4", "12.4.0"));
  CHECK_FALSE(spec_matches("<=12.4", "12.4.1"));
  CHECK(spec_matches("!=12.4.0", "12.4.1"));
  CHECK(spec_matches("==12.4", "12.4.0"));
  CHECK(spec_matches("latest", "11.0.2"));
  CHECK(VersionSpec::parse("latest")->is_latest());
}

TEST_CASE("best_match picks the highest matching candidate") {
  const std::vector<Version> installed{v("11.8.0"), v("12.1.1"), v("12.4.1"), v("12.4.0"),
                                       v("13.0.2")};
  CHECK(VersionSpec::parse("12")->best_match(installed)->str() == "12.4.1");
  CHECK(VersionSpec::parse("12.1")->best_match(installed)->str() == "12.1.1");
  CHECK(VersionSpec::parse("latest")->best_match(installed)->str() == "13.0.2");
  CHECK_FALSE(VersionSpec::parse("12.2")->best_match(installed).has_value());
}

TEST_CASE("invalid specs are usage errors naming the spec") {
  for (const char* bad : {"", ">=", "12.x", ">=12,<", "abc"}) {
    CAPTURE(bad);
    auto spec = VersionSpec::parse(bad);
    REQUIRE_FALSE(spec.ok());
    CHECK(spec.error().kind == cudaenv::ErrorKind::usage);
  }
  CHECK(VersionSpec::parse("12.x").error().message.find("12.x") != std::string::npos);
}
