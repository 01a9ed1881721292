#include "modules/write.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "core/files.hpp"
#include "core/safe_write.hpp"
#include "core/text.hpp"

namespace cudaenv::modules {

namespace fs = std::filesystem;

namespace {

// Whether `path` is a modulefile cudaenv wrote: the marker is on its first lines.
bool written_by_us(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::string head(256, '\0');
  file.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(file.gcount()));
  return head.find(generated_marker) != std::string::npos;
}

// Through the one safe writer: a link planted in the modules directory under the file's name or
// any temporary name is replaced, never followed (root writes here on clusters).
Status replace_file(const fs::path& target, const std::string& content) {
  auto written = write_file_atomically(target, content);
  if (!written)
    return make_error(ErrorKind::failure, written.error().message,
                      "choose a modules directory you can write to");
  return Ok{};
}

// Files an earlier run wrote in DIR/cuda and DIR/cudnn that this run does not write.
std::vector<std::string> stale_files(const fs::path& dir, const std::vector<ModuleFile>& files) {
  std::vector<std::string> stale;
  for (const char* family : {"cuda", "cudnn"}) {
    std::error_code ec;
    for (fs::directory_iterator it(dir / family, ec), end; !ec && it != end; it.increment(ec)) {
      const auto relative = std::string(family) + "/" + it->path().filename().string();
      const bool kept = std::any_of(files.begin(), files.end(),
                                    [&](const ModuleFile& f) { return f.relative == relative; });
      if (!kept && it->is_regular_file() && written_by_us(it->path())) stale.push_back(relative);
    }
  }
  std::sort(stale.begin(), stale.end());
  return stale;
}

}  // namespace

Result<WriteReport> write_modulefiles(const fs::path& dir, const std::vector<ModuleFile>& files) {
  for (const auto& file : files) {
    std::error_code ec;
    const auto target = dir / file.relative;
    if (fs::exists(fs::symlink_status(target, ec)) &&
        (!fs::is_regular_file(fs::symlink_status(target, ec)) || !written_by_us(target))) {
      return make_error(ErrorKind::usage,
                        text::printable(target.string(), text::message_limit) +
                            " exists and was not written by cudaenv; it was left as it is",
                        "move it aside, or write the modulefiles into another directory");
    }
  }
  WriteReport report;
  for (const auto& relative : stale_files(dir, files)) {
    std::error_code ec;
    fs::remove(dir / relative, ec);
    report.removed.push_back(relative);
  }
  for (const auto& file : files) {
    if (auto done = replace_file(dir / file.relative, file.text); !done) return done.error();
    report.written.push_back(file.relative);
  }
  return report;
}

}  // namespace cudaenv::modules
