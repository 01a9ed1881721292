#pragma once
// Which toolkit the user's builds get now: the one doctor checks the driver, the GPUs, the host
// compiler and the library path against. The decision is here/'s, shared with list and verify.

#include "here/active_toolkit.hpp"

namespace cudaenv::doctor {

using ActiveToolkit = here::ActiveToolkit;

}  // namespace cudaenv::doctor
