#pragma once
// The NVIDIA driver as the package manager sees it: driver packages in /var/lib/dpkg/status (one
// machine can end up with two branches half-installed), and what NVIDIA's .run installers leave
// behind, which apt knows nothing about.

#include "core/sysroot.hpp"
#include "probe/host_facts.hpp"

namespace cudaenv::probe {

DriverPackageFacts probe_driver_packages(const Sysroot& sysroot);

// Whether a package is part of an NVIDIA driver: nvidia-driver-<branch>[-open|-server…],
// Debian's nvidia-driver, libnvidia-compute-<branch>, nvidia-dkms-<branch>,
// cuda-drivers[-<branch>].
bool is_driver_package(const std::string& name);

// "535.183.01-0ubuntu0.22.04.1" -> "535.183.01"; "1:550.54.15-1" -> "550.54.15".
std::string upstream_version(const std::string& debian_version);

}  // namespace cudaenv::probe
