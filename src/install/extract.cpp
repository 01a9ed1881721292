#include "install/extract.hpp"

#include <archive.h>
#include <archive_entry.h>

#include <memory>
#include <optional>

#include "core/text.hpp"

namespace cudaenv::install {

namespace fs = std::filesystem;

namespace {

struct ReadContext {
  const ChunkSource* source;
  std::optional<Error> source_error;
};

la_ssize_t read_callback(struct archive* a, void* user, const void** buffer) {
  auto* context = static_cast<ReadContext*>(user);
  auto chunk = (*context->source)();
  if (!chunk) {
    context->source_error = chunk.error();
    archive_set_error(a, EIO, "%s", chunk.error().message.c_str());
    return -1;
  }
  *buffer = chunk->data();
  return static_cast<la_ssize_t>(chunk->size());
}

using ArchivePtr = std::unique_ptr<struct archive, int (*)(struct archive*)>;

// "a/b/../c" has a ".." component; "/x" is absolute.
std::vector<std::string> components_of(std::string_view path) {
  std::vector<std::string> parts;
  for (auto& part : text::split(path, '/')) {
    if (!part.empty() && part != ".") parts.push_back(std::move(part));
  }
  return parts;
}

// The entry path below the stripped top directory; empty for the top directory itself.
std::string strip_top(std::string_view path) {
  auto parts = components_of(path);
  if (parts.size() <= 1) return {};
  parts.erase(parts.begin());
  return text::join(parts, "/");
}

const char* special_type(mode_t type) {
  switch (type) {
    case AE_IFCHR: return "character device";
    case AE_IFBLK: return "block device";
    case AE_IFIFO: return "FIFO";
    case AE_IFSOCK: return "socket";
    default: return nullptr;
  }
}

Error unsafe(const ExtractOptions& options, std::string_view entry, const std::string& why) {
  return make_error(
      ErrorKind::integrity,
      "unsafe entry in " + options.archive_name + ": " + std::string(entry) + " (" + why + ")",
      "the archive is corrupt or hostile; nothing was installed");
}

// Checks one entry and rewrites its paths below the destination. nullopt: skip the entry.
Result<std::optional<std::string>> place_entry(struct archive_entry* entry,
                                               const ExtractOptions& options) {
  const std::string original = archive_entry_pathname(entry) ? archive_entry_pathname(entry) : "";
  if (auto why = unsafe_path_reason(original); !why.empty()) return unsafe(options, original, why);
  if (const char* kind = special_type(archive_entry_filetype(entry)))
    return unsafe(options, original, kind);
  std::string relative = strip_top(original);
  if (relative.empty()) return std::optional<std::string>{};
  if (relative.find('/') == std::string::npos && archive_entry_filetype(entry) == AE_IFREG) {
    relative = options.licenses_dir + "/" + options.component + "/" + relative;
  }
  if (const char* target = archive_entry_symlink(entry)) {
    if (auto why = unsafe_link_reason(relative, target); !why.empty())
      return unsafe(options, original, why);
  }
  if (const char* hardlink = archive_entry_hardlink(entry)) {
    if (auto why = unsafe_path_reason(hardlink); !why.empty())
      return unsafe(options, original, "hard link: " + why);
    const auto inside = strip_top(hardlink);
    if (inside.empty()) return unsafe(options, original, "hard link to the top directory");
    archive_entry_copy_hardlink(entry, (options.destination / inside).c_str());
  }
  const auto full = (options.destination / relative).string();
  archive_entry_copy_pathname(entry, full.c_str());
  return std::optional<std::string>{relative};
}

Status copy_data(struct archive* in, struct archive* out, const std::string& path,
                 ExtractStats& stats) {
  const void* block = nullptr;
  size_t size = 0;
  la_int64_t offset = 0;
  while (true) {
    const int rc = archive_read_data_block(in, &block, &size, &offset);
    if (rc == ARCHIVE_EOF) return Ok{};
    if (rc < ARCHIVE_WARN) {
      return make_error(ErrorKind::integrity,
                        "corrupt archive data at " + path + ": " + archive_error_string(in));
    }
    if (archive_write_data_block(out, block, size, offset) < ARCHIVE_WARN) {
      return make_error(ErrorKind::failure,
                        "cannot write " + path + ": " + archive_error_string(out),
                        "free space in the cudaenv data root, then run the command again");
    }
    stats.bytes += size;
  }
}

Error read_error(struct archive* in, const ReadContext& context, const ExtractOptions& options) {
  if (context.source_error) return *context.source_error;
  const char* message = archive_error_string(in);
  return make_error(ErrorKind::integrity,
                    options.archive_name + ": not a readable archive (" +
                        (message ? message : "unknown error") + ")",
                    "the download is corrupt; run the command again to fetch it anew");
}

}  // namespace

std::string unsafe_path_reason(std::string_view path) {
  if (path.empty()) return "empty path";
  if (path.front() == '/') return "absolute path";
  for (const auto& part : components_of(path)) {
    if (part == "..") return "path contains ..";
  }
  return {};
}

std::string unsafe_link_reason(std::string_view entry_path, std::string_view target) {
  if (target.empty()) return "empty link target";
  if (target.front() == '/') return "link to an absolute path";
  // Walk the target from the link's directory; it may never climb above the destination. A ".."
  // after a name climbs from wherever that name leads, and the name may be another link
  // ("a/b" -> "..", then "a/b/../.." leaves the destination): ".." may only lead the target.
  auto depth = static_cast<long>(components_of(entry_path).size()) - 1;
  bool descended = false;
  for (const auto& part : components_of(target)) {
    if (part == ".." && descended) return "link target has .. after a name";
    descended = descended || part != "..";
    depth += part == ".." ? -1 : 1;
    if (depth < 0) return "link points outside the install directory";
  }
  return {};
}

Result<ExtractStats> extract(const ChunkSource& source, const ExtractOptions& options) {
  // The link check walks every component of the (absolute) target paths: resolve links in the
  // destination itself first, or a data root under a linked home would be refused.
  ExtractOptions target = options;
  std::error_code ec;
  fs::create_directories(target.destination, ec);
  target.destination = fs::canonical(target.destination, ec);
  if (ec) {
    return make_error(ErrorKind::failure,
                      "cannot create " + options.destination.string() + ": " + ec.message());
  }
  ArchivePtr in(archive_read_new(), archive_read_free);
  archive_read_support_filter_all(in.get());
  archive_read_support_format_tar(in.get());
  archive_read_support_format_zip(in.get());
  ArchivePtr out(archive_write_disk_new(), archive_write_free);
  // Defence in depth behind our own checks: libarchive refuses ".." and writing through a link
  // again. (Entry paths are rewritten to absolute ones below the destination, so its
  // no-absolute-paths option cannot be used; our own check covers that.)
  archive_write_disk_set_options(out.get(), ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_PERM |
                                                ARCHIVE_EXTRACT_SECURE_NODOTDOT |
                                                ARCHIVE_EXTRACT_SECURE_SYMLINKS);
  ReadContext context{&source, std::nullopt};
  if (archive_read_open(in.get(), &context, nullptr, read_callback, nullptr) != ARCHIVE_OK) {
    return read_error(in.get(), context, target);
  }
  ExtractStats stats;
  struct archive_entry* entry = nullptr;
  while (true) {
    const int rc = archive_read_next_header(in.get(), &entry);
    if (rc == ARCHIVE_EOF) break;
    if (rc < ARCHIVE_WARN) return read_error(in.get(), context, target);
    auto placed = place_entry(entry, target);
    if (!placed) return placed.error();
    if (!*placed) continue;
    if (archive_write_header(out.get(), entry) < ARCHIVE_WARN) {
      return make_error(ErrorKind::failure,
                        "cannot create " + **placed + ": " + archive_error_string(out.get()));
    }
    if (archive_entry_size(entry) > 0) {
      if (auto copied = copy_data(in.get(), out.get(), **placed, stats); !copied) {
        return context.source_error ? *context.source_error : copied.error();
      }
    }
    if (archive_write_finish_entry(out.get()) < ARCHIVE_WARN) {
      return make_error(ErrorKind::failure,
                        "cannot finish " + **placed + ": " + archive_error_string(out.get()));
    }
    ++stats.entries;
  }
  return stats;
}

}  // namespace cudaenv::install
