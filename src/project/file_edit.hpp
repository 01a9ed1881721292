#pragma once
// Editing .cudaenv and config.toml as text, so that `cudaenv use` keeps the comments, the order
// and the keys it does not know (toml++ would drop the comments when writing a table back).

#include <optional>
#include <string>
#include <string_view>

namespace cudaenv::project {

// `text` with `key = "value"` set in `table` ("" for the top level): the key's line is replaced
// where it exists, else the line is added at the end of that table (for the top level, before
// the first table header), and a missing table is added at the end of the file.
std::string set_string_key(std::string_view text, std::string_view table, std::string_view key,
                           std::string_view value);

// A .cudaenv holding only a version ("12.1", besides comments) rewritten as `cuda = "12.1"`,
// comments kept, the one on the version's line too (`13.0  # A100 nodes` →
// `cuda = "13.0"  # A100 nodes`); any other text is returned unchanged.
std::string bare_version_as_toml(std::string_view text);

// `text` without the line that sets `key` in `table` ("" for the top level), its trailing
// comment going with it; nullopt when no line sets it.
std::optional<std::string> remove_key(std::string_view text, std::string_view table,
                                      std::string_view key);

// Whether `text` sets anything: a line other than blanks and comments.
bool has_settings(std::string_view text);

}  // namespace cudaenv::project
