#include "install/store.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <fstream>
#include <system_error>
#include <tuple>

#include <nlohmann/json.hpp>

#include "core/files.hpp"
#include "core/safe_write.hpp"
#include "core/text.hpp"
#include "core/untrusted.hpp"

namespace cudaenv::install {

namespace {

using json = nlohmann::ordered_json;

// Receipts are a few kilobytes; a bigger one is not ours.
constexpr std::size_t max_receipt_size = 1 << 20;

json to_json(const Receipt& receipt) {
  json components = json::array();
  for (const auto& c : receipt.components) {
    components.push_back({{"name", c.name},
                          {"version", c.version},
                          {"sha256", c.sha256},
                          {"url", c.url},
                          {"size", c.size}});
  }
  return {{"product", receipt.product},
          {"version", receipt.version},
          {"platform", receipt.platform},
          {"variant", receipt.variant},
          {"mirror", receipt.mirror},
          {"installed_at", receipt.installed_at},
          {"source", receipt.source.empty() ? "redist" : receipt.source},
          {"components", components}};
}

// A receipt is cudaenv's own file: a wrong one is a usage error naming the file and the field.
constexpr const char* receipt_hint =
    "reinstall with 'cudaenv install --force' or remove that directory";

Error receipt_error(const std::string& origin, const std::string& problem) {
  return make_error(ErrorKind::usage, origin + ": " + problem, receipt_hint);
}

// Reads optional string and size fields of one JSON object of a receipt.
struct ReceiptReader {
  const nlohmann::json& object;
  std::string where;

  Status text(const char* key, std::string& out) const {
    const auto it = object.find(key);
    if (it == object.end()) return Ok{};
    if (!it->is_string()) return receipt_error(where, std::string(key) + " must be a string");
    out = it->get<std::string>();
    return Ok{};
  }

  Status size(const char* key, std::uint64_t& out) const {
    const auto it = object.find(key);
    if (it == object.end()) return Ok{};
    if (!it->is_number_unsigned())
      return receipt_error(where, std::string(key) + " must be a whole number");
    out = it->get<std::uint64_t>();
    return Ok{};
  }
};

constexpr std::pair<const char*, std::string Receipt::*> receipt_text_fields[] = {
    {"product", &Receipt::product},   {"version", &Receipt::version},
    {"platform", &Receipt::platform}, {"variant", &Receipt::variant},
    {"mirror", &Receipt::mirror},     {"installed_at", &Receipt::installed_at},
    {"source", &Receipt::source}};

Result<ReceiptComponent> read_receipt_component(const nlohmann::json& value,
                                                const std::string& origin, std::size_t index) {
  const auto where = origin + ": components[" + std::to_string(index) + "]";
  if (!value.is_object()) return receipt_error(where, "must be an object");
  ReceiptComponent component;
  const ReceiptReader reader{value, where};
  for (const auto& [key, field] :
       {std::pair{"name", &ReceiptComponent::name},
        std::pair{"version", &ReceiptComponent::version},
        std::pair{"sha256", &ReceiptComponent::sha256}, std::pair{"url", &ReceiptComponent::url}}) {
    if (auto status = reader.text(key, component.*field); !status) return status.error();
  }
  if (auto status = reader.size("size", component.size); !status) return status.error();
  return component;
}

std::vector<Installed> list_store_dir(
    const fs::path& dir,
    const std::function<std::optional<Version>(const std::string&)>& version_of,
    Receipts receipts) {
  std::vector<Installed> found;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const auto name = it->path().filename().string();
    if (text::starts_with(name, ".") || !it->is_directory()) continue;
    auto version = version_of(name);
    if (!version) continue;
    Installed item{*version, it->path(), std::nullopt, std::nullopt};
    if (receipts == Receipts::read) {
      if (auto read = read_receipt(it->path()))
        item.receipt = std::move(*read);
      else if (read.error().kind != ErrorKind::not_found)
        item.receipt_problem = read.error();
    }
    found.push_back(std::move(item));
  }
  std::sort(found.begin(), found.end(),
            [](const auto& a, const auto& b) { return a.version > b.version; });
  return found;
}

}  // namespace

Status write_receipt(const fs::path& prefix, const Receipt& receipt) {
  return write_new_file(prefix, receipt_file_name, to_json(receipt).dump(2) + "\n");
}

Status write_new_file(const fs::path& dir, const std::string& name, std::string_view content) {
  const auto path = dir / name;
  // An archive may hold a directory under cudaenv's own file name: that is the archive's fault.
  std::error_code ec;
  if (fs::is_directory(fs::symlink_status(path, ec)))
    return make_error(ErrorKind::integrity,
                      "cannot write " + path.string() + ": a directory is in the way",
                      "an archive holds an entry of that name; nothing was installed");
  auto written = write_file_atomically(path, content, WriteOptions{0644, CreateParents::no});
  if (!written)
    return make_error(ErrorKind::failure, written.error().message,
                      "free space (or quota) where the cudaenv data root is, then run the "
                      "command again");
  return Ok{};
}

Result<Receipt> read_receipt(const fs::path& prefix) {
  const auto path = prefix / receipt_file_name;
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(path, ec)))
    return make_error(ErrorKind::not_found, "no receipt in " + prefix.string());
  // read_small_file refuses what is not a small regular file (a FIFO, a device, a huge file).
  const auto text = read_small_file(path);
  if (!text) return receipt_error(path.string(), "cannot be read");
  if (text->size() > max_receipt_size)
    return receipt_error(path.string(),
                         "is larger than " + std::to_string(max_receipt_size) + " bytes");
  return parse_receipt(*text, path.string());
}

// The fields other code reads as versions, names, digests and URLs, through the one validator
// (core/untrusted.hpp); `mirror` and `installed_at` are only ever shown, escaped. An empty value
// is a field older receipts did not write.
Status check_receipt(const Receipt& receipt, const std::string& origin) {
  const auto valid = [&](untrusted::Field field, const std::string& value,
                         const std::string& key) -> Status {
    if (value.empty()) return Ok{};
    if (auto ok = untrusted::check(field, value, origin + ": " + key, ErrorKind::usage); !ok)
      return make_error(ErrorKind::usage, ok.error().message, receipt_hint);
    return Ok{};
  };
  if (!receipt.product.empty() && receipt.product != "cuda" && receipt.product != "cudnn")
    return receipt_error(origin, "product must be \"cuda\" or \"cudnn\"");
  if (!receipt.source.empty() && receipt.source != "redist" && receipt.source != "pypi")
    return receipt_error(origin, "source must be \"redist\" or \"pypi\"");
  for (const auto& [field, value, key] :
       {std::tuple{untrusted::Field::release_version, &receipt.version, "version"},
        std::tuple{untrusted::Field::component_name, &receipt.platform, "platform"},
        std::tuple{untrusted::Field::component_name, &receipt.variant, "variant"}}) {
    if (auto ok = valid(field, *value, key); !ok) return ok;
  }
  for (std::size_t i = 0; i < receipt.components.size(); ++i) {
    const auto& component = receipt.components[i];
    const auto at = "components[" + std::to_string(i) + "].";
    for (const auto& [field, value, key] :
         {std::tuple{untrusted::Field::component_name, &component.name, "name"},
          std::tuple{untrusted::Field::component_version, &component.version, "version"},
          std::tuple{untrusted::Field::sha256, &component.sha256, "sha256"},
          std::tuple{untrusted::Field::url, &component.url, "url"}}) {
      if (auto ok = valid(field, *value, at + key); !ok) return ok;
    }
  }
  return Ok{};
}

Result<Receipt> parse_receipt(std::string_view text, const std::string& origin) {
  const auto document = nlohmann::json::parse(text, nullptr, false);
  if (!document.is_object()) return receipt_error(origin, "is not a JSON object");
  Receipt receipt;
  const ReceiptReader top{document, origin};
  for (const auto& [key, field] : receipt_text_fields) {
    if (auto status = top.text(key, receipt.*field); !status) return status.error();
  }
  if (const auto components = document.find("components"); components != document.end()) {
    if (!components->is_array()) return receipt_error(origin, "components must be an array");
    for (std::size_t i = 0; i < components->size(); ++i) {
      auto component = read_receipt_component((*components)[i], origin, i);
      if (!component) return component.error();
      receipt.components.push_back(std::move(*component));
    }
  }
  if (auto valid = check_receipt(receipt, origin); !valid) return valid.error();
  return receipt;
}

namespace {

// The root's entries of `below` first, then each shared root's whose name is not yet listed.
std::vector<Installed> list_stores(
    const Store& store, const char* below,
    const std::function<std::optional<Version>(const std::string&)>& version_of,
    Receipts receipts) {
  auto found = list_store_dir(store.root / below, version_of, receipts);
  for (const auto& shared : store.shared_roots) {
    for (auto& item : list_store_dir(shared / below, version_of, receipts)) {
      const auto name = item.path.filename();
      const bool hidden = std::any_of(found.begin(), found.end(), [&](const Installed& i) {
        return i.path.filename() == name;
      });
      if (!hidden) found.push_back(std::move(item));
    }
  }
  std::stable_sort(found.begin(), found.end(),
                   [](const auto& a, const auto& b) { return a.version > b.version; });
  return found;
}

}  // namespace

std::vector<Installed> installed_toolkits(const Store& store, Receipts receipts) {
  return list_stores(
      store, "toolkits", [](const std::string& name) { return Version::parse(name); }, receipts);
}

Status receipts_readable(const std::vector<Installed>& items) {
  for (const auto& item : items) {
    if (item.receipt_problem) return *item.receipt_problem;
  }
  return Ok{};
}

std::vector<Installed> installed_cudnn(const Store& store, Receipts receipts) {
  return list_stores(
      store, "cudnn",
      [](const std::string& name) -> std::optional<Version> {
        const auto dash = name.find("-cuda");
        return dash == std::string::npos ? std::nullopt : Version::parse(name.substr(0, dash));
      },
      receipts);
}

void remove_stale_staging(const fs::path& dir, const std::string& name) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const auto entry = it->path().filename().string();
    // A replacement killed between its two renames (where the filesystem cannot exchange two
    // directories in one step) left the old prefix aside and none in place: it comes back.
    std::error_code exists_ec;
    if (text::starts_with(entry, ".replaced-" + name + "-") && !fs::exists(dir / name, exists_ec)) {
      fs::rename(it->path(), dir / name, exists_ec);
      continue;
    }
    if (text::starts_with(entry, ".staging-" + name + "-") ||
        text::starts_with(entry, ".replaced-" + name + "-") ||
        text::starts_with(entry, ".old-" + name + "-")) {
      fs::remove_all(it->path(), ec);
    }
  }
}

Status uninstall_toolkit(const Store& store, const Version& version) {
  const auto target = store.toolkits() / version.str();
  std::error_code ec;
  if (!fs::is_directory(target, ec)) {
    return make_error(ErrorKind::not_found, "CUDA " + version.str() + " is not installed",
                      "'cudaenv list' shows what is installed");
  }
  // Rename first: a half-removed toolkit must never be visible under its version.
  const auto doomed =
      store.toolkits() / (".old-" + version.str() + "-" + std::to_string(::getpid()));
  fs::rename(target, doomed, ec);
  if (ec)
    return make_error(ErrorKind::failure, "cannot remove " + target.string() + ": " + ec.message());
  fs::remove_all(doomed, ec);
  return Ok{};
}

std::string utc_timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buffer;
}

}  // namespace cudaenv::install
