#include "install/uninstall.hpp"

namespace cudaenv::install {

fs::path install_lock_file(const fs::path& target) {
  return target.parent_path() / (".lock-" + target.filename().string());
}

Status uninstall(const Store& store, const Version& version, const std::function<void()>& on_wait) {
  auto lock = InstallLock::acquire(install_lock_file(store.toolkits() / version.str()), on_wait);
  if (!lock) return lock.error();
  return uninstall_toolkit(store, version);
}

}  // namespace cudaenv::install
