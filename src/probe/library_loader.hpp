#pragma once
// Loading the NVIDIA driver's user-space libraries (libcuda.so.1, libnvidia-ml.so.1) at run time,
// so one cudaenv binary works on machines with and without a GPU. Tests replace the loader or
// point it at a fixture machine whose library directories hold stand-in libraries.

#include <memory>
#include <string>
#include <vector>

#include "core/sysroot.hpp"

namespace cudaenv::probe {

class SharedLibrary {
 public:
  virtual ~SharedLibrary() = default;
  // The address of an exported symbol, or nullptr.
  virtual void* symbol(const char* name) const = 0;
  // The file it was loaded from, for the report.
  virtual std::string path() const = 0;
};

class LibraryLoader {
 public:
  virtual ~LibraryLoader() = default;
  // A soname ("libcuda.so.1"), or a machine path ("/usr/lib/wsl/lib/libcuda.so.1") for that
  // very file. nullptr when the library is not on this machine.
  virtual std::unique_ptr<SharedLibrary> open(const std::string& soname) = 0;
};

// dlopen. On the host root it asks the dynamic linker by soname (honouring ld.so.cache and
// LD_LIBRARY_PATH, as the CUDA runtime itself does); under another sysroot it only looks in that
// root's library directories, never falling back to the host's libraries.
class DlLibraryLoader final : public LibraryLoader {
 public:
  explicit DlLibraryLoader(const Sysroot& sysroot);
  std::unique_ptr<SharedLibrary> open(const std::string& soname) override;

 private:
  const Sysroot& sysroot_;
};

// The directories searched for driver libraries under a sysroot: Debian/Ubuntu multiarch, RHEL,
// the NVIDIA container toolkit's mount point, and WSL's driver store.
const std::vector<std::string>& driver_library_directories();

}  // namespace cudaenv::probe
