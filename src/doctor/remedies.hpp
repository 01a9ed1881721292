#pragma once
// Fixes that doctor prints and bootstrap runs, kept in one place so both say the same thing.

namespace cudaenv::doctor::remedy {

inline constexpr const char* nouveau_blacklist_file = "/etc/modprobe.d/blacklist-nouveau.conf";
inline constexpr const char* nouveau_blacklist_text =
    "blacklist nouveau\noptions nouveau modeset=0\n";
// The same lines as a command a person can paste.
inline constexpr const char* nouveau_blacklist_command =
    "printf 'blacklist nouveau\\noptions nouveau modeset=0\\n' | sudo tee "
    "/etc/modprobe.d/blacklist-nouveau.conf";

}  // namespace cudaenv::doctor::remedy
