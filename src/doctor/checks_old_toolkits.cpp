// Checks for old toolkits on new systems: the glibc whose <math.h> the active toolkit's headers
// still compile with (glibc 2.41 declares sinpi/cospi, which CUDA < 13.0's headers clash with).

#include "doctor/checks.hpp"

namespace cudaenv::doctor {

namespace {

std::string toolkit_line(const ActiveToolkit& active) {
  return "active toolkit: CUDA " + active.toolkit->version->str() + " at " + active.toolkit->path +
         " (" + active.selected_by + ")";
}

std::vector<std::string> glibc_fix(const manifest::GlibcLimit& limit) {
  std::vector<std::string> fix;
  if (limit.fixed_in) {
    const auto newer = limit.fixed_in->major_minor().str();
    fix.push_back("# CUDA " + newer + " and newer carry headers that accept this glibc:");
    fix.push_back("cudaenv install " + newer + " && cudaenv use " + newer);
  }
  fix.push_back("# or build against glibc <= " + limit.glibc_max.str() +
                " headers: a container or sysroot of Debian 12 or Ubuntu 24.04");
  return fix;
}

}  // namespace

Finding check_glibc_headers(const CheckInput& in) {
  auto f = finding("glibc-headers", "glibc headers the active toolkit compiles with");
  if (!in.active.toolkit || !in.active.toolkit->version) {
    conclude(f, CheckStatus::skip, "no active CUDA toolkit");
    return f;
  }
  const auto& glibc = in.facts.machine.glibc_headers;
  if (!glibc) {
    conclude(f, CheckStatus::skip, "no glibc headers (/usr/include/features.h) to check");
    return f;
  }
  const auto& version = *in.active.toolkit->version;
  f.evidence.push_back(toolkit_line(in.active));
  f.evidence.push_back("/usr/include/features.h: glibc " + glibc->str());
  const auto* limit = in.db.glibc_limit(version);
  if (limit == nullptr || *glibc <= limit->glibc_max) {
    conclude(f, CheckStatus::ok,
             "glibc " + glibc->str() + " headers suit CUDA " + version.major_minor().str());
    return f;
  }
  conclude(f, CheckStatus::fail,
           "glibc " + glibc->str() + " is newer than CUDA " + version.major_minor().str() +
               "'s headers accept (glibc <= " + limit->glibc_max.str() + ": " + limit->clash +
               "): nvcc stops with \"exception specification is incompatible\"");
  f.fix = glibc_fix(*limit);
  return f;
}

}  // namespace cudaenv::doctor
