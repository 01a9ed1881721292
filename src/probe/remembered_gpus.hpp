#pragma once
// The live GPUs' compute capabilities for the prompt hook and `current`, which must not load a
// driver library: the full probe (`info`, `verify`) lists them through NVML or the CUDA driver
// API and leaves them in a small file in the data root, keyed by the boot id and the loaded
// kernel module's version. A reboot or a driver change makes the record stale, and a stale
// record is never used: it is better to say nothing than to name the wrong GPUs.

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/sysroot.hpp"
#include "core/version.hpp"

namespace cudaenv::probe {

// $CUDAENV_ROOT/cache/gpu-archs
std::filesystem::path remembered_gpus_file(const std::filesystem::path& data_root);

// The record's text: "boot_id <id>\ndriver <version>\narch 9.0\n…", archs sorted and unique.
std::string render_remembered_gpus(const std::string& boot_id, const std::string& driver,
                                   const std::vector<Version>& archs);
// The archs of `text` when its boot id and driver are these; empty otherwise or when malformed.
std::vector<Version> parse_remembered_gpus(std::string_view text, std::string_view boot_id,
                                           std::string_view driver);

// Writes the record for this boot (/proc/sys/kernel/random/boot_id) and the loaded kernel
// module's version when both `archs` and that version are known, the data root exists and the
// record differs from what is there. Failing to write it only means the hook says less later.
Status remember_gpu_archs(const Sysroot& sysroot, const std::filesystem::path& data_root,
                          const std::vector<Version>& archs);

// The archs the last full probe of this boot saw with this kernel module version (`driver`, as
// kernel_module_driver_version reads it), read without loading a library; empty when there is no
// such record.
std::vector<Version> remembered_gpu_archs(const Sysroot& sysroot,
                                          const std::filesystem::path& data_root,
                                          const std::string& driver);

}  // namespace cudaenv::probe
