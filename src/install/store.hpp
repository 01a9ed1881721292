#pragma once
// cudaenv's own store under the data root (docs/design.md §3): toolkits/<version>/,
// cudnn/<version>-cuda<major>/, cache/downloads/, cache/manifests/, each install with a receipt.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/version.hpp"
#include "install/lock.hpp"

namespace cudaenv::install {

namespace fs = std::filesystem;

struct Store {
  fs::path root;
  // Read-only stores an admin filled (CUDAENV_SYSTEM_ROOTS, system_roots): their toolkits and
  // cuDNN builds are listed after the root's, which wins on equal versions. Nothing is ever
  // written below them: every path below (caches, shims, locks) is the root's.
  std::vector<fs::path> shared_roots = {};
  fs::path toolkits() const { return root / "toolkits"; }
  fs::path cudnn() const { return root / "cudnn"; }
  fs::path downloads() const { return root / "cache" / "downloads"; }
  fs::path manifests() const { return root / "cache" / "manifests"; }
  // verify's build cache (verify::cache_root names the same directory).
  fs::path verify_builds() const { return root / "cache" / "verify"; }
  // Each archive unpacked once, as <sha256>.<component>/, its files hard-linked into every
  // prefix that installs it (install/installer.hpp).
  fs::path unpacked() const { return root / "cache" / "unpacked"; }
};

// The lock beside a cached download (<file>.lock), held while the file is written or deleted.
inline fs::path download_lock_file(const fs::path& cached) { return cached.string() + ".lock"; }

struct ReceiptComponent {
  std::string name;
  std::string version;
  std::string sha256;
  std::string url;
  std::uint64_t size = 0;
};

// What was installed, from where, when: <prefix>/cudaenv-receipt.json.
struct Receipt {
  std::string product;  // "cuda" or "cudnn"
  std::string version;
  std::string platform;
  std::string variant;  // cuDNN: "cuda12"
  std::string mirror;
  std::string installed_at;  // ISO 8601, UTC
  std::vector<ReceiptComponent> components;
  // "redist" or "pypi" (then `mirror` is the package index); empty in receipts written before
  // installs could come from an index, which were all redist installs.
  std::string source = {};
};

constexpr const char* receipt_file_name = "cudaenv-receipt.json";

// Writes the receipt into a staging prefix, through write_new_file.
Status write_receipt(const fs::path& prefix, const Receipt& receipt);

// Writes `name` in `dir` as a regular file (0644) through the one safe writer
// (core/safe_write.hpp): whatever an archive left under that name (a link, a file) is replaced,
// never followed. A directory there is refused (ErrorKind::integrity); a failed write names the
// path and the system's reason.
Status write_new_file(const fs::path& dir, const std::string& name, std::string_view content);

// ErrorKind::not_found when there is none; a receipt that is not valid JSON, too large, or has a
// field of the wrong type is ErrorKind::usage naming the file and the field.
Result<Receipt> read_receipt(const fs::path& prefix);
// The same for a receipt's text; `origin` names it in errors.
Result<Receipt> parse_receipt(std::string_view text, const std::string& origin);

struct Installed {
  Version version;
  fs::path path;
  std::optional<Receipt> receipt;
  std::optional<Error> receipt_problem;  // a receipt that is there but cannot be read
};

// Whether listing the store parses each receipt; the prompt hook and shims only need versions.
enum class Receipts { read, skip };

// Installed toolkits (newest first), the root's and then the shared roots' (a version the root has
// hides the shared ones'). Staging and lock entries (names starting with '.') are not listed.
std::vector<Installed> installed_toolkits(const Store& store, Receipts receipts = Receipts::read);
// The first receipt among `items` that is there but cannot be read, as an error naming its file
// and field; Ok when every receipt read (or there was none).
Status receipts_readable(const std::vector<Installed>& items);
// Installed cuDNN builds, named <version>-cuda<major> (newest first).
std::vector<Installed> installed_cudnn(const Store& store, Receipts receipts = Receipts::read);

// Removes leftovers of killed installs of `name` (".staging-<name>-*", ".old-<name>-*",
// ".replaced-<name>-*") in `dir`, and puts a replaced prefix back when none is in place.
// Call only while holding that name's lock.
void remove_stale_staging(const fs::path& dir, const std::string& name);

// Removes an installed toolkit; ErrorKind::not_found when it is not installed.
Status uninstall_toolkit(const Store& store, const Version& version);

std::string utc_timestamp();

}  // namespace cudaenv::install
