#include "probe/library_loader.hpp"

#include <dlfcn.h>
#include <link.h>

namespace cudaenv::probe {

namespace {

class DlLibrary final : public SharedLibrary {
 public:
  DlLibrary(void* handle, std::string path) : handle_(handle), path_(std::move(path)) {}
  DlLibrary(const DlLibrary&) = delete;
  DlLibrary& operator=(const DlLibrary&) = delete;
  ~DlLibrary() override { ::dlclose(handle_); }

  void* symbol(const char* name) const override { return ::dlsym(handle_, name); }
  std::string path() const override { return path_; }

 private:
  void* handle_;
  std::string path_;
};

std::string loaded_path(void* handle, const std::string& fallback) {
  link_map* map = nullptr;
  if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr &&
      map->l_name[0] != '\0') {
    return map->l_name;
  }
  return fallback;
}

}  // namespace

const std::vector<std::string>& driver_library_directories() {
  static const std::vector<std::string> directories = {"/usr/lib/x86_64-linux-gnu",
                                                       "/usr/lib/aarch64-linux-gnu",
                                                       "/usr/lib64",
                                                       "/usr/lib",
                                                       "/lib/x86_64-linux-gnu",
                                                       "/lib64",
                                                       "/usr/local/nvidia/lib64",
                                                       "/usr/lib/wsl/lib"};
  return directories;
}

DlLibraryLoader::DlLibraryLoader(const Sysroot& sysroot) : sysroot_(sysroot) {}

std::unique_ptr<SharedLibrary> DlLibraryLoader::open(const std::string& soname) {
  if (!soname.empty() && soname.front() == '/') {  // that very file (WSL's driver store)
    const auto real = sysroot_.canonical(soname);  // its links followed inside the root
    if (!real) return nullptr;
    const auto host = sysroot_.host_path(*real);
    void* handle = ::dlopen(host.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) return nullptr;
    return std::make_unique<DlLibrary>(handle, soname);
  }
  if (sysroot_.is_host_root()) {
    void* handle = ::dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) return nullptr;
    return std::make_unique<DlLibrary>(handle, loaded_path(handle, soname));
  }
  for (const auto& directory : driver_library_directories()) {
    const auto machine_path = directory + "/" + soname;
    if (!sysroot_.exists(machine_path)) continue;
    const auto host = sysroot_.host_path(machine_path);
    void* handle = ::dlopen(host.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) return std::make_unique<DlLibrary>(handle, machine_path);
  }
  return nullptr;
}

}  // namespace cudaenv::probe
