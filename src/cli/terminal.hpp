#pragma once
// Terminal decisions and styling for human-readable output.

#include <string>
#include <string_view>

#include "cli/context.hpp"
#include "core/environment.hpp"

namespace cudaenv::cli {

// Colour only on a terminal, and never when NO_COLOR is set (https://no-color.org).
bool colour_wanted(int fd, const Environment& env);

// Live progress on stderr: only on a terminal (TERM not "dumb"), or when CUDAENV_PROGRESS=1
// forces it (tests, logs that want it); CUDAENV_PROGRESS=0 turns it off.
bool progress_wanted(const Environment& env);
// The same, and never under --quiet.
bool progress_wanted(const Context& context);

// Where a note goes (what helps but is not the result: "serve it with..."): stderr, or nowhere
// under --quiet.
std::ostream& notes(Context& context);

enum class Tone { plain, heading, good, warn, bad, dim };
std::string styled(std::string_view text, Tone tone, bool colour);

// 85899345920 -> "80.0 GiB".
std::string human_bytes(unsigned long long bytes);

}  // namespace cudaenv::cli
