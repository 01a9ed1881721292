#pragma once
// The cudaenv release bundle (scripts/package) on a mirror, and `cudaenv self-update`. A mirror
// made with `mirror create --with-cudaenv BUNDLE` serves:
//   <mirror>/cudaenv/latest-linux-x86_64            "<sha256>  cudaenv-<v>-linux-x86_64.tar.gz"
//   <mirror>/cudaenv/releases/cudaenv-<v>-linux-x86_64.tar.gz
//   <mirror>/cudaenv/get                            scripts/get-cudaenv, for `curl … | sh`

#include <filesystem>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "core/process.hpp"
#include "core/version.hpp"
#include "fetch/http.hpp"

namespace cudaenv::install {

struct BundleRelease {
  Version version;
  std::string file_name;  // cudaenv-<version>-linux-x86_64.tar.gz
  std::string sha256;     // hex
};

// The version in a bundle's file name; a usage error naming `flag` when it is not one.
Result<Version> bundle_version(std::string_view file_name, std::string_view flag);

// Reads cudaenv/latest-linux-x86_64 as fetched from `url`: one sha256sum line. Anything else
// is an integrity error naming the URL.
Result<BundleRelease> parse_latest_bundle(std::string_view text, const std::string& url);

// `mirror create --with-cudaenv BUNDLE`: checks that BUNDLE is a release bundle (its name, and a
// bin/cudaenv inside), copies it into <dir>/cudaenv/releases/, writes its sha256 line as
// cudaenv/latest-linux-x86_64 (last, so the mirror never names a bundle that is not there) and
// `get_script` as cudaenv/get, with `public_url` (when not empty) written into its
// `baked_mirror=''` line, so that `curl -fsSL URL/cudaenv/get | sh` needs no argument.
Result<BundleRelease> publish_bundle(const std::filesystem::path& dir,
                                     const std::filesystem::path& bundle,
                                     std::string_view get_script,
                                     const std::string& public_url = {});

// `mirror create --url URL`: the URL a mirror is served at, as the get script may hold it
// between single quotes: http(s):// and URL characters only (no quote, blank or control
// character), trailing slashes dropped. A usage error naming --url otherwise.
Result<std::string> checked_public_url(const std::string& url);

// The environment the unpacked bundle's programs are asked their version in.
using ProgramEnvironment = std::map<std::string, std::string>;

struct BundleChecks {
  fetch::FetchOptions fetch;
  ProgramEnvironment environment;  // PATH and the like: never the caller's CUDAENV_*
  ProcessRunner& runner;
};

// Downloads the bundle `release` names from `mirror`, checks its sha256 (a mismatch is an
// integrity error, and nothing is replaced), unpacks it inside bundle_directory(prefix), runs
// its programs (`bin/cudaenv --version`, which runs its full program, then the full program and
// the shim themselves): each must print the announced version, else an integrity error and
// nothing is replaced. Then switches the installation to it in one step
// (install/bundle_switch.hpp): a cudaenv started at any instant runs the old release's programs
// or the new one's, never a mix.
Status install_bundle(const std::string& mirror, const BundleRelease& release,
                      const std::filesystem::path& prefix, const BundleChecks& checks);

}  // namespace cudaenv::install
