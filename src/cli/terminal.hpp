#pragma once
// Terminal decisions and styling for human-readable output.

#include <string>
#include <string_view>

#include "core/environment.hpp"

namespace cudaenv::cli {

// Colour only on a terminal, and never when NO_COLOR is set (https://no-color.org).
bool colour_wanted(int fd, const Environment& env);

enum class Tone { plain, heading, good, warn, bad, dim };
std::string styled(std::string_view text, Tone tone, bool colour);

// 85899345920 -> "80.0 GiB".
std::string human_bytes(unsigned long long bytes);

}  // namespace cudaenv::cli
