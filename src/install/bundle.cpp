#include "install/bundle.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <vector>

#include <sys/stat.h>

#include "core/safe_write.hpp"
#include "core/text.hpp"
#include "install/bundle_switch.hpp"
#include "install/extract.hpp"

namespace cudaenv::install {

namespace fs = std::filesystem;

namespace {

const std::regex& bundle_name_pattern() {
  static const std::regex pattern(R"(cudaenv-([0-9]+(\.[0-9]+){1,3})-linux-x86_64\.tar\.gz)");
  return pattern;
}

std::string shown(const std::string& text) { return text::printable(text, text::message_limit); }

// True when the tarball holds <top>/bin/cudaenv: the bundle layout, not any archive so named.
Result<bool> holds_front_program(const fs::path& tarball) {
  std::unique_ptr<archive, int (*)(archive*)> reader(archive_read_new(), archive_read_free);
  archive_read_support_filter_gzip(reader.get());
  archive_read_support_format_tar(reader.get());
  if (archive_read_open_filename(reader.get(), tarball.c_str(), 1 << 16) != ARCHIVE_OK)
    return make_error(ErrorKind::usage,
                      "--with-cudaenv: cannot read " + shown(tarball.string()) + ": " +
                          text::printable(archive_error_string(reader.get()), 200),
                      "name a bundle scripts/package wrote");
  const std::regex front(R"([^/]+/bin/cudaenv)");
  archive_entry* entry = nullptr;
  int status = ARCHIVE_OK;
  while ((status = archive_read_next_header(reader.get(), &entry)) == ARCHIVE_OK) {
    const char* name = archive_entry_pathname(entry);
    if (name != nullptr && std::regex_match(name, front)) return true;
  }
  if (status != ARCHIVE_EOF)
    return make_error(ErrorKind::usage,
                      "--with-cudaenv: " + shown(tarball.string()) + " is not a readable .tar.gz",
                      "name a bundle scripts/package wrote");
  return false;
}

Status write_file(const fs::path& path, std::string_view text) {
  if (auto written = write_file_atomically(path, text); !written)
    return make_error(ErrorKind::failure, shown(written.error().message));
  return Ok{};
}

// Reads a local file as the chunks extract() consumes.
ChunkSource file_chunks(std::ifstream& in, std::vector<char>& buffer) {
  return [&]() -> Result<std::string_view> {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    if (in.bad()) return make_error(ErrorKind::failure, "cannot read the downloaded bundle");
    return std::string_view(buffer.data(), static_cast<size_t>(in.gcount()));
  };
}

Status download_checked(const std::string& url, const fs::path& file, const BundleRelease& release,
                        const fetch::FetchOptions& options) {
  fetch::ResumableStream stream(url, file, 0, options);
  if (auto drained = stream.drain(); !drained) return drained.error();
  if (stream.sha256_hex() != release.sha256)
    return make_error(ErrorKind::integrity,
                      "sha256 mismatch for " + shown(url) + ": expected " + release.sha256 +
                          ", got " + stream.sha256_hex(),
                      "nothing was replaced; the mirror's bundle or its cudaenv/latest-"
                      "linux-x86_64 is damaged: make the mirror again");
  return Ok{};
}

Status unpack(const fs::path& tarball, const fs::path& into, const std::string& name) {
  std::ifstream in(tarball, std::ios::binary);
  std::vector<char> buffer(std::size_t{1} << 16);
  std::error_code ec;
  const auto size = fs::file_size(tarball, ec);
  auto extracted = extract(file_chunks(in, buffer),
                           {into, name, "cudaenv", "share/licenses", default_unpacked_cap(size)});
  if (!extracted) return extracted.error();
  for (const char* required : {"bin/cudaenv", "libexec/cudaenv/cudaenv-full"}) {
    if (!fs::is_regular_file(into / required, ec))
      return make_error(ErrorKind::integrity, name + " holds no " + required,
                        "nothing was replaced; the mirror serves something else as the bundle");
  }
  return Ok{};
}

// The programs a bundle may hold, each asked its version before the switch, and what it must
// answer for release `version`. The front program also runs its full program for --version.
struct ProgramCheck {
  const char* path;  // inside the tree
  const char* name;  // what --version prints before the version
  bool required;
};
constexpr ProgramCheck staged_programs[] = {
    {"bin/cudaenv", "cudaenv", true},
    {"libexec/cudaenv/cudaenv-full", "cudaenv", true},
    {"libexec/cudaenv/cudaenv-shim", "cudaenv-shim", false},
};
// Sanitized builds under load start slowly; a hung program must still not hold the update.
constexpr std::chrono::seconds version_timeout{30};

Error unusable_bundle(const std::string& file_name, const std::string& problem) {
  return make_error(ErrorKind::integrity, file_name + ": " + problem,
                    "nothing was replaced; the mirror's bundle does not match its announcement: "
                    "make the mirror again with cudaenv mirror create --with-cudaenv BUNDLE");
}

// Runs `program --version` from the unpacked tree: it must run here and name the release the
// mirror announced, or the switch would install something that does not start, or another
// version than the one the mirror's sha256 line (and the user) were told.
Status check_program(const fs::path& tree, const ProgramCheck& program,
                     const BundleRelease& release, const ProgramEnvironment& environment,
                     ProcessRunner& runner) {
  const auto path = tree / program.path;
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    if (!program.required) return Ok{};
    return unusable_bundle(release.file_name, std::string("holds no ") + program.path);
  }
  const auto expected = std::string(program.name) + " " + release.version.str();
  auto ran = runner.run({{path.string(), "--version"}, environment, version_timeout});
  if (!ran)
    return unusable_bundle(release.file_name, std::string("its ") + program.path +
                                                  " does not run: " + ran.error().message);
  const auto answer = std::string(text::trim(ran->out));
  if (!ran->succeeded()) {
    const auto why = ran->timed_out
                         ? "did not answer within " + std::to_string(version_timeout.count()) + " s"
                         : "exited " + std::to_string(ran->exit_code);
    return unusable_bundle(release.file_name, std::string("its ") + program.path + " --version " +
                                                  why + ": " +
                                                  text::printable(text::trim(ran->err), 200));
  }
  if (answer != expected)
    return unusable_bundle(release.file_name,
                           std::string("its ") + program.path + " --version printed \"" +
                               text::printable(answer, 200) + "\", not \"" + expected + "\"");
  return Ok{};
}

Status check_programs(const fs::path& tree, const BundleRelease& release,
                      const ProgramEnvironment& environment, ProcessRunner& runner) {
  for (const auto& program : staged_programs) {
    if (auto checked = check_program(tree, program, release, environment, runner); !checked)
      return checked;
  }
  return Ok{};
}

// A fresh staging directory no other process can have named beforehand: created exclusively,
// 0700, its name ending in random digits (the pid first, for remove_abandoned_updates).
Result<fs::path> make_staging(const fs::path& prefix) {
  const auto bundles = bundle_directory(prefix);
  std::error_code ec;
  fs::create_directories(bundles, ec);
  const auto staging =
      bundles / (".incoming-" + std::to_string(::getpid()) + temporary_name_for("").substr(1));
  if (::mkdir(staging.c_str(), 0700) != 0)
    return make_error(ErrorKind::failure,
                      "cannot create " + shown(staging.string()) + ": " + std::strerror(errno),
                      "make " + shown(prefix.string()) + " writable and run self-update again");
  return staging;
}

// The get script with the mirror's URL in place of its empty `baked_mirror=''` line.
Result<std::string> with_baked_url(std::string_view script, const std::string& url) {
  constexpr std::string_view marker = "\nbaked_mirror=''\n";
  const auto at = script.find(marker);
  if (at == std::string_view::npos)
    return make_error(ErrorKind::failure, "the embedded get-cudaenv has no baked_mirror line",
                      "rebuild cudaenv from an unmodified scripts/get-cudaenv");
  return std::string(script.substr(0, at)) + "\nbaked_mirror='" + url + "'\n" +
         std::string(script.substr(at + marker.size()));
}

}  // namespace

Result<std::string> checked_public_url(const std::string& url) {
  static const std::regex allowed(R"(https?://[A-Za-z0-9._~:/?#\[\]@!$&()*+,;=%-]+)");
  std::string trimmed = url;
  while (!trimmed.empty() && trimmed.back() == '/') trimmed.pop_back();
  if (trimmed.size() < 2048 && std::regex_match(trimmed, allowed)) return trimmed;
  return make_error(ErrorKind::usage, "--url: " + shown(url) + " is not an http:// or https:// URL",
                    "give the URL the mirror is served at, e.g. --url http://mirror.lan/cuda");
}

Result<Version> bundle_version(std::string_view file_name, std::string_view flag) {
  std::match_results<std::string_view::const_iterator> match;
  if (!std::regex_match(file_name.begin(), file_name.end(), match, bundle_name_pattern()))
    return make_error(ErrorKind::usage,
                      std::string(flag) + ": " + shown(std::string(file_name)) +
                          " is not named as a release bundle",
                      "name the cudaenv-<version>-linux-x86_64.tar.gz scripts/package wrote");
  return *Version::parse(match[1].str());
}

Result<BundleRelease> parse_latest_bundle(std::string_view text, const std::string& url) {
  static const std::regex line(R"(([0-9a-f]{64}) [ *](\S+)\n?)");
  std::match_results<std::string_view::const_iterator> match;
  if (text.size() < 512 && std::regex_match(text.begin(), text.end(), match, line)) {
    if (auto version = bundle_version(match[2].str(), url))
      return BundleRelease{*version, match[2].str(), match[1].str()};
  }
  return make_error(ErrorKind::integrity,
                    shown(url) + " is not a sha256 line naming a cudaenv bundle",
                    "make the mirror again with cudaenv mirror create --with-cudaenv BUNDLE");
}

Result<BundleRelease> publish_bundle(const fs::path& dir, const fs::path& bundle,
                                     std::string_view get_script, const std::string& public_url) {
  std::string script(get_script);
  if (!public_url.empty()) {
    auto baked = with_baked_url(get_script, public_url);
    if (!baked) return baked.error();
    script = std::move(*baked);
  }
  auto version = bundle_version(bundle.filename().string(), "--with-cudaenv");
  if (!version) return version.error();
  auto front = holds_front_program(bundle);
  if (!front) return front.error();
  if (!*front)
    return make_error(ErrorKind::usage,
                      "--with-cudaenv: " + shown(bundle.string()) + " holds no <top>/bin/cudaenv",
                      "name a bundle scripts/package wrote");
  auto sha256 = fetch::sha256_file(bundle);
  if (!sha256) return sha256.error();
  const auto releases = dir / "cudaenv" / "releases";
  std::error_code ec;
  fs::create_directories(releases, ec);
  fs::copy_file(bundle, releases / bundle.filename(), fs::copy_options::overwrite_existing, ec);
  if (ec)
    return make_error(ErrorKind::failure, "cannot copy the bundle into " +
                                              shown(releases.string()) + ": " + ec.message());
  if (auto written = write_file(dir / "cudaenv" / "get", script); !written) return written.error();
  const std::string line = *sha256 + "  " + bundle.filename().string() + "\n";
  if (auto written = write_file(dir / "cudaenv" / "latest-linux-x86_64", line); !written)
    return written.error();
  return BundleRelease{*version, bundle.filename().string(), *sha256};
}

Status install_bundle(const std::string& mirror, const BundleRelease& release,
                      const fs::path& prefix, const BundleChecks& checks) {
  remove_abandoned_updates(prefix);
  // Inside the bundle directory, so the switch is a rename within one file system.
  auto staging = make_staging(prefix);
  if (!staging) return staging.error();
  const auto tree = *staging / "tree";
  const std::string url = mirror + "/cudaenv/releases/" + release.file_name;
  auto status = download_checked(url, *staging / release.file_name, release, checks.fetch);
  if (status) status = unpack(*staging / release.file_name, tree, release.file_name);
  if (status) status = check_programs(tree, release, checks.environment, checks.runner);
  if (status) status = switch_to_bundle(tree, prefix);
  std::error_code ec;
  fs::remove_all(*staging, ec);
  return status;
}

}  // namespace cudaenv::install
