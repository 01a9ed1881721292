#include "install/uninstall.hpp"

#include <unistd.h>

#include <algorithm>
#include <system_error>

#include "core/text.hpp"
#include "install/writable.hpp"

namespace cudaenv::install {

namespace {

std::string product_name(Product product) { return product == Product::cuda ? "CUDA" : "cuDNN"; }

// A cuDNN build's name ("9.1.0-cuda12") splits into its version spec and CUDA major.
struct SpecText {
  std::string spec;
  std::optional<int> cuda_major;
};

SpecText split_build_name(const RemovalRequest& request) {
  SpecText parts{request.spec, request.cuda_major};
  const auto dash = request.spec.rfind("-cuda");
  if (request.product != Product::cudnn || dash == std::string::npos) return parts;
  const auto major = text::parse_integer(request.spec.substr(dash + 5));
  if (!major || *major < 1 || *major > 1000) return parts;
  parts.spec = request.spec.substr(0, dash);
  parts.cuda_major = static_cast<int>(*major);
  return parts;
}

std::string names_of(const std::vector<Installed>& items) {
  std::vector<std::string> names;
  for (const auto& item : items) names.push_back(item.path.filename().string());
  return text::join(names, ", ");
}

}  // namespace

fs::path install_lock_file(const fs::path& target) {
  return target.parent_path() / (".lock-" + target.filename().string());
}

Status uninstall(const Store& store, const Version& version, const std::function<void()>& on_wait) {
  auto lock = InstallLock::acquire(install_lock_file(store.toolkits() / version.str()), on_wait);
  if (!lock) return lock.error();
  return uninstall_toolkit(store, version);
}

Result<Installed> choose_installed(const Store& store, const RemovalRequest& request) {
  const auto parts = split_build_name(request);
  auto spec = VersionSpec::parse(parts.spec);
  if (!spec)
    return make_error(ErrorKind::usage, request.flag + ": " + spec.error().message,
                      spec.error().hint);
  const bool cuda = request.product == Product::cuda;
  auto installed =
      cuda ? installed_toolkits(store, Receipts::skip) : installed_cudnn(store, Receipts::skip);
  const auto suffix = parts.cuda_major ? "-cuda" + std::to_string(*parts.cuda_major) : "";
  std::erase_if(installed, [&](const Installed& item) {
    return !spec->matches(item.version) || !item.path.filename().string().ends_with(suffix);
  });
  // Newest first, and one order for equal versions (cuDNN builds for several CUDA majors).
  std::sort(installed.begin(), installed.end(), [](const Installed& a, const Installed& b) {
    if (a.version != b.version) return a.version > b.version;
    return a.path.filename() > b.path.filename();
  });
  const auto what = product_name(request.product);
  if (installed.empty()) {
    return make_error(ErrorKind::not_found, what + " " + request.spec + " is not installed",
                      "'cudaenv list' shows what is installed");
  }
  if (installed.size() > 1) {
    return make_error(
        ErrorKind::usage,
        request.flag + ": \"" + request.spec + "\" matches " + std::to_string(installed.size()) +
            (cuda ? " installed toolkits: " : " installed cuDNN builds: ") + names_of(installed),
        "name one of them exactly, e.g. 'cudaenv uninstall " + std::string(cuda ? "" : "--cudnn ") +
            installed.front().path.filename().string() + "'");
  }
  return installed.front();
}

Status check_not_pinned(const Installed& target, const std::optional<PinnedDefault>& pin,
                        bool force) {
  std::error_code ec;
  if (force || !pin || !fs::equivalent(pin->selects, target.path, ec)) return Ok{};
  return make_error(ErrorKind::failure,
                    "CUDA " + target.version.str() + " is the global default (cuda = \"" +
                        pin->spec + "\" in " + pin->config_file.string() + ")",
                    "unpin it first with 'cudaenv use --global system' (or pin another version), "
                    "or pass --force to remove it anyway");
}

Status remove_installed(const fs::path& prefix, const std::string& what,
                        const std::function<void()>& on_wait) {
  auto lock = InstallLock::acquire(install_lock_file(prefix), on_wait);
  if (!lock) return lock.error();
  std::error_code ec;
  if (!fs::is_directory(prefix, ec))
    return make_error(ErrorKind::not_found, what + " is not installed",
                      "'cudaenv list' shows what is installed");
  // Rename first: a half-removed prefix must never be visible under its name.
  const auto doomed = prefix.parent_path() /
                      (".old-" + prefix.filename().string() + "-" + std::to_string(::getpid()));
  fs::rename(prefix, doomed, ec);
  if (ec) return unremovable_error(prefix, ec.value());
  fs::remove_all(doomed, ec);
  return Ok{};
}

}  // namespace cudaenv::install
