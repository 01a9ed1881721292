#include "install/compat_install.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <unistd.h>

#include <memory>

#include "core/safe_write.hpp"
#include "core/text.hpp"
#include "core/untrusted.hpp"
#include "forward/compat_library.hpp"
#include "install/extract.hpp"
#include "install/interrupt.hpp"
#include "install/lock.hpp"

namespace cudaenv::install {

namespace {

// The largest package the index may announce: NVIDIA's compat packages are 30-60 MB.
constexpr std::uint64_t max_package_bytes = std::uint64_t{1} << 30;
constexpr std::size_t max_data_entries = 4096;

using ArchivePtr = std::unique_ptr<struct archive, int (*)(struct archive*)>;

// "570.124.06-0ubuntu1" against another: the upstream part as a version, then the rest as text.
bool newer_debian_version(const std::string& a, const std::string& b) {
  const auto split = [](const std::string& v) {
    const auto dash = v.find('-');
    return std::pair{Version::parse(v.substr(0, dash)),
                     dash == std::string::npos ? std::string() : v.substr(dash + 1)};
  };
  const auto [a_up, a_rest] = split(a);
  const auto [b_up, b_rest] = split(b);
  if (a_up && b_up && *a_up != *b_up) return *a_up > *b_up;
  return a_rest > b_rest;
}

Status check_field(untrusted::Field field, const std::string& value, const std::string& origin,
                   const std::string& key) {
  return untrusted::check(field, value, origin + ": " + key);
}

Result<AptPackage> checked(AptPackage package, const std::string& origin) {
  auto filename = package.filename;
  if (text::starts_with(filename, "./")) filename = filename.substr(2);
  if (auto ok = check_field(untrusted::Field::relative_path, filename, origin, "Filename"); !ok)
    return ok.error();
  if (auto ok = check_field(untrusted::Field::sha256, package.sha256, origin, "SHA256"); !ok)
    return ok.error();
  if (auto ok =
          check_field(untrusted::Field::component_version, package.version, origin, "Version");
      !ok)
    return ok.error();
  if (package.size == 0 || package.size > max_package_bytes)
    return make_error(ErrorKind::integrity,
                      origin + ": " + package.name + ": Size " + std::to_string(package.size) +
                          " is not a package's size",
                      "the repository is corrupt or hostile: use NVIDIA's or a mirror you trust");
  package.filename = filename;
  return package;
}

// Each stanza's fields; a new one starts after an empty line.
std::vector<AptPackage> stanzas_of(std::string_view packages, const std::string& name) {
  std::vector<AptPackage> found;
  AptPackage current;
  const auto flush = [&] {
    if (current.name == name) found.push_back(current);
    current = {};
  };
  for (const auto& line : text::lines(packages)) {
    if (text::trim(line).empty()) {
      flush();
      continue;
    }
    const auto colon = line.find(':');
    if (colon == std::string::npos || line.front() == ' ') continue;
    const auto key = line.substr(0, colon);
    const auto value = std::string(text::trim(line.substr(colon + 1)));
    if (key == "Package")
      current.name = value;
    else if (key == "Version")
      current.version = value;
    else if (key == "Filename")
      current.filename = value;
    else if (key == "SHA256")
      current.sha256 = value;
    else if (key == "Size")
      current.size = std::strtoull(value.c_str(), nullptr, 10);
  }
  flush();
  return found;
}

// The data.tar.* member of a .deb (an ar archive), as the extractor's chunk source.
class DebData {
 public:
  Status open(const std::filesystem::path& deb) {
    archive_read_support_format_ar(ar_.get());
    if (archive_read_open_filename(ar_.get(), deb.c_str(), 1 << 16) != ARCHIVE_OK)
      return damaged(deb, archive_error_string(ar_.get()));
    struct archive_entry* entry = nullptr;
    for (std::size_t seen = 0; seen < 16; ++seen) {
      const int status = archive_read_next_header(ar_.get(), &entry);
      if (status == ARCHIVE_EOF) break;
      if (status < ARCHIVE_WARN) return damaged(deb, archive_error_string(ar_.get()));
      const std::string member = archive_entry_pathname(entry);
      if (text::starts_with(member, "data.tar")) return Ok{};
    }
    return damaged(deb, "no data.tar member");
  }

  Result<std::string_view> next() {
    const auto got = archive_read_data(ar_.get(), buffer_.data(), buffer_.size());
    if (got < 0)
      return make_error(ErrorKind::integrity, std::string("the package's data cannot be read: ") +
                                                  archive_error_string(ar_.get()));
    return std::string_view(buffer_.data(), static_cast<std::size_t>(got));
  }

 private:
  static Error damaged(const std::filesystem::path& deb, const char* why) {
    return make_error(ErrorKind::integrity,
                      "corrupt or hostile archive: " + deb.filename().string() + ": " +
                          text::printable(why != nullptr ? why : "unreadable"),
                      "the repository is corrupt or hostile: use NVIDIA's or a mirror you trust");
  }
  ArchivePtr ar_{archive_read_new(), archive_read_free};
  std::string buffer_ = std::string(std::size_t{1} << 16, '\0');
};

Result<std::filesystem::path> download_package(const Store& store, const CompatInstall& request,
                                               const AptPackage& package) {
  const auto cached = store.downloads() / (package.sha256 + ".deb");
  std::error_code ec;
  std::filesystem::create_directories(cached.parent_path(), ec);
  auto cache_lock = InstallLock::acquire(download_lock_file(cached), {});
  if (!cache_lock) return cache_lock.error();
  auto options = request.fetch;
  options.lock_cache_file = false;
  options.should_stop = [] { return InterruptGuard::caught() != 0; };
  const auto url = request.repository + package.filename;
  fetch::ResumableStream stream(url, cached, package.size, options);
  if (auto drained = stream.drain(); !drained) return drained.error();
  if (stream.sha256_hex() != package.sha256) {
    std::filesystem::remove(cached, ec);
    return make_error(ErrorKind::integrity,
                      "checksum mismatch: " + text::printable(url, text::message_limit) +
                          " has sha256 " + stream.sha256_hex() + ", its Packages index says " +
                          package.sha256,
                      "nothing was installed; the repository is corrupt or hostile");
  }
  return cached;
}

Status unpack_library(const std::filesystem::path& deb, const Version& cuda,
                      const std::filesystem::path& lib) {
  DebData data;
  if (auto opened = data.open(deb); !opened) return opened.error();
  ExtractOptions options{lib, deb.filename().string(), compat_package_name(cuda)};
  options.max_unpacked_bytes = default_unpacked_cap(max_package_bytes);
  options.max_entries = max_data_entries;
  options.subtree = "usr/local/cuda-" + cuda.major_minor().str() + "/compat";
  const ChunkSource source = [&]() -> Result<std::string_view> {
    if (const int signal = InterruptGuard::caught())
      return interrupted_error(signal, "unpacking " + deb.filename().string(),
                               "nothing was installed");
    return data.next();
  };
  auto extracted = extract(source, options);
  if (!extracted) return extracted.error();
  return Ok{};
}

// The staged library must be what its package says: a libcuda.so.<version> whose note names X.Y.
Result<std::string> check_library(const std::filesystem::path& lib, const Version& cuda,
                                  const std::string& package) {
  const auto library = forward::find_compat_library(lib);
  const auto hint =
      "the package is not NVIDIA's forward-compatibility package; nothing was installed";
  if (!library)
    return make_error(ErrorKind::integrity,
                      package + " holds no libcuda.so.<version> below " + "usr/local/cuda-" +
                          cuda.major_minor().str() + "/compat",
                      hint);
  if (!library->note) return make_error(ErrorKind::integrity, library->note_problem, hint);
  if (library->note->cuda.major_minor() != cuda.major_minor())
    return make_error(ErrorKind::integrity,
                      package + ": its library's note names CUDA " + library->note->cuda.str() +
                          ", not " + cuda.major_minor().str(),
                      hint);
  return library->version;
}

// Moves the staged prefix over `prefix` (an earlier install is removed only once the new one is
// in place).
Status publish(const std::filesystem::path& staged, const std::filesystem::path& prefix) {
  std::error_code ec;
  const auto old = prefix.parent_path() /
                   (".old-" + prefix.filename().string() + "-" + std::to_string(::getpid()));
  const bool had = std::filesystem::exists(prefix, ec);
  if (had) std::filesystem::rename(prefix, old, ec);
  if (ec)
    return make_error(ErrorKind::failure,
                      "cannot replace " + prefix.string() + ": " + ec.message());
  std::filesystem::rename(staged, prefix, ec);
  if (ec) {
    if (had) std::filesystem::rename(old, prefix, ec);
    return make_error(ErrorKind::failure,
                      "cannot install " + prefix.string() + ": " + ec.message());
  }
  if (had) std::filesystem::remove_all(old, ec);
  return Ok{};
}

}  // namespace

std::string compat_package_name(const Version& cuda) {
  return "cuda-compat-" + std::to_string(cuda.major()) + "-" + std::to_string(cuda.minor());
}

std::string default_compat_repository(const std::string& os_id, const std::string& os_version,
                                      const std::string& machine) {
  std::string version;
  for (const char c : os_version)
    if (c != '.') version += c;
  const auto arch = machine == "aarch64" ? std::string("sbsa") : machine;
  return "https://developer.download.nvidia.com/compute/cuda/repos/" + os_id + version + "/" +
         arch + "/";
}

std::filesystem::path compat_prefix(const Store& store, const Version& cuda) {
  return store.root / "compat" / cuda.major_minor().str();
}

Result<AptPackage> find_apt_package(std::string_view packages, const std::string& name,
                                    const std::string& origin) {
  const auto found = stanzas_of(packages, name);
  if (found.empty())
    return make_error(ErrorKind::not_found, origin + " has no package " + name,
                      "NVIDIA publishes cuda-compat-X-Y for each toolkit minor; check the "
                      "repository (--repo) and the version");
  const AptPackage* newest = &found.front();
  for (const auto& package : found)
    if (newer_debian_version(package.version, newest->version)) newest = &package;
  return checked(*newest, origin);
}

Result<InstalledCompat> install_compat(const Store& store, const CompatInstall& request) {
  const auto name = compat_package_name(request.cuda);
  const auto index_url = request.repository + "Packages";
  auto index = fetch::fetch_text(index_url, request.fetch);
  if (!index) return index.error();
  auto package = find_apt_package(*index, name, text::printable(index_url, text::message_limit));
  if (!package) return package.error();
  auto deb = download_package(store, request, *package);
  if (!deb) return deb.error();

  const auto prefix = compat_prefix(store, request.cuda);
  std::error_code ec;
  std::filesystem::create_directories(prefix.parent_path(), ec);
  auto lock =
      InstallLock::acquire(prefix.parent_path() / ("." + prefix.filename().string() + ".lock"), {});
  if (!lock) return lock.error();
  const auto staged = prefix.parent_path() /
                      (".staging-" + prefix.filename().string() + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(staged, ec);
  const auto fail = [&](Error error) -> Result<InstalledCompat> {
    std::error_code ignored;
    std::filesystem::remove_all(staged, ignored);
    return error;
  };
  if (auto unpacked = unpack_library(*deb, request.cuda, staged / "lib"); !unpacked)
    return fail(unpacked.error());
  auto library = check_library(staged / "lib", request.cuda, name);
  if (!library) return fail(library.error());
  std::string gpus;
  for (const auto& gpu : request.gpus) gpus += gpu + "\n";
  if (auto written = write_new_file(staged, "gpus", gpus); !written) return fail(written.error());
  Receipt receipt{"cuda-compat",
                  request.cuda.major_minor().str(),
                  "",
                  "",
                  request.repository,
                  utc_timestamp(),
                  {{name, package->version, package->sha256, request.repository + package->filename,
                    package->size}},
                  "apt"};
  if (auto written = write_receipt(staged, receipt); !written) return fail(written.error());
  if (auto published = publish(staged, prefix); !published) return fail(published.error());
  return InstalledCompat{prefix, *package, *library};
}

}  // namespace cudaenv::install
