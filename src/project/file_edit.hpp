#pragma once
// Editing .cudaenv and config.toml as text, so that `cudaenv use` keeps the comments, the order
// and the keys it does not know (toml++ would drop the comments when writing a table back).

#include <string>
#include <string_view>

namespace cudaenv::project {

// `text` with `key = "value"` set in `table` ("" for the top level): the key's line is replaced
// where it exists, else the line is added at the end of that table (for the top level, before
// the first table header), and a missing table is added at the end of the file.
std::string set_string_key(std::string_view text, std::string_view table, std::string_view key,
                           std::string_view value);

// A .cudaenv holding only a version ("12.1", besides comments) rewritten as `cuda = "12.1"`,
// comments kept; any other text is returned unchanged.
std::string bare_version_as_toml(std::string_view text);

}  // namespace cudaenv::project
