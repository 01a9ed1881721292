#include "install/extract.hpp"

#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <cerrno>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <system_error>
#include <unordered_map>

#include <sys/stat.h>

#include "core/text.hpp"
#include "core/umask_lock.hpp"

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

// The entry path below `subtree`; empty (skipped) for one outside it or the subtree itself.
std::string below_subtree(std::string_view path, const std::string& subtree) {
  const auto parts = components_of(path);
  const auto top = components_of(subtree);
  if (parts.size() <= top.size() || !std::equal(top.begin(), top.end(), parts.begin())) return {};
  return text::join(std::vector<std::string>(
                        parts.begin() + static_cast<std::ptrdiff_t>(top.size()), parts.end()),
                    "/");
}

std::string relative_of(std::string_view path, const ExtractOptions& options) {
  if (!options.subtree.empty()) return below_subtree(path, options.subtree);
  return options.wheel_layout ? wheel_entry_path(path, options.component, options.licenses_dir)
                              : strip_top(path);
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

// How much of an entry's name a message shows: two of them and the reason stay within one
// message (text::message_limit).
constexpr std::size_t shown_entry_bytes = 400;

constexpr const char* hostile_hint =
    "nothing was installed; use another mirror (--mirror) or package index (--index-url)";

// Every refusal of what an archive holds: "corrupt or hostile archive: <archive>: <entry>: <why>".
Error hostile(const ExtractOptions& options, std::string_view entry, const std::string& why) {
  return make_error(ErrorKind::integrity,
                    "corrupt or hostile archive: " + text::printable(options.archive_name) + ": " +
                        text::printable(entry, shown_entry_bytes) + ": " + why,
                    hostile_hint);
}

// The entries of one archive as a tree of names, built as they are read. An entry's place is
// checked against the entries before it (a file below a file or a link; a file and a directory
// of one name) in time linear in its path; memory grows by one node per new name, however deep.
class EntryTree {
 public:
  enum class Kind : std::uint8_t { implied_directory, directory, file, hard_link, link };

  EntryTree(std::size_t max_nodes, std::size_t max_depth)
      : max_nodes_(max_nodes), max_depth_(max_depth) {
    nodes_.push_back({0, Kind::directory, 0755, std::string()});  // the prefix itself
  }

  // Places `relative` (names and single slashes); why it cannot go there, else empty.
  std::string place(std::string_view relative, Kind kind, mode_t mode) {
    const auto depth = static_cast<std::size_t>(std::count(relative.begin(), relative.end(), '/'));
    if (depth + 1 > max_depth_)
      return std::to_string(depth + 1) + " names deep, more than the " +
             std::to_string(max_depth_) + " an archive may nest";
    std::uint32_t at = 0;
    for (std::size_t start = 0;;) {
      const auto slash = relative.find('/', start);
      const auto name =
          relative.substr(start, slash == std::string_view::npos ? slash : slash - start);
      const auto child = find(at, name);
      if (slash == std::string_view::npos)
        return child ? replace(*child, kind, mode) : add(at, name, kind, mode);
      if (child && !is_directory(nodes_[*child].kind))
        return std::string(nodes_[*child].kind == Kind::link ? "below the symbolic link "
                                                             : "below the regular file ") +
               path_of(*child) + " of the same archive";
      if (!child) {
        if (auto why = add(at, name, Kind::implied_directory, 0755); !why.empty()) return why;
      }
      at = child ? *child : static_cast<std::uint32_t>(nodes_.size() - 1);
      start = slash + 1;
    }
  }

  // Whether `relative` is a regular file placed earlier: what a hard link may point to.
  bool holds_file(std::string_view relative) const {
    std::uint32_t at = 0;
    for (const auto& name : text::split(relative, '/')) {
      const auto child = find(at, name);
      if (!child) return false;
      at = *child;
    }
    return nodes_[at].kind == Kind::file;
  }

  // Calls visit(relative path, mode) -> Status for each directory and file the archive listed,
  // up to the first failure.
  template <typename Visit>
  Status for_each_listed(Visit&& visit) const {
    for (std::uint32_t id = 1; id < nodes_.size(); ++id) {
      if (nodes_[id].kind != Kind::directory && nodes_[id].kind != Kind::file) continue;
      if (auto status = visit(path_of(id), nodes_[id].mode); !status) return status;
    }
    return Ok{};
  }

 private:
  struct Node {
    std::uint32_t parent;
    Kind kind;
    mode_t mode;
    std::string name;
  };
  struct Key {
    std::uint32_t parent;
    std::string_view name;  // the child's own name, in nodes_
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& key) const noexcept {
      return std::hash<std::string_view>{}(key.name) ^
             (std::size_t{key.parent} * 0x9e3779b97f4a7c15ULL);
    }
  };

  static bool is_directory(Kind kind) {
    return kind == Kind::directory || kind == Kind::implied_directory;
  }

  std::optional<std::uint32_t> find(std::uint32_t parent, std::string_view name) const {
    const auto it = children_.find(Key{parent, name});
    if (it == children_.end()) return std::nullopt;
    return it->second;
  }

  std::string add(std::uint32_t parent, std::string_view name, Kind kind, mode_t mode) {
    if (nodes_.size() > max_nodes_)
      return "more than " + std::to_string(max_nodes_) +
             " files, links and directories, the most an archive may hold";
    nodes_.push_back({parent, kind, mode, std::string(name)});
    const auto id = static_cast<std::uint32_t>(nodes_.size() - 1);
    children_.emplace(Key{parent, nodes_.back().name}, id);
    return {};
  }

  // An entry for a name placed before: a directory again, or one file (or link) for another.
  std::string replace(std::uint32_t id, Kind kind, mode_t mode) {
    auto& node = nodes_[id];
    if (is_directory(node.kind) && kind != Kind::directory)
      return "a file or link where the archive has a directory of the same name";
    if (!is_directory(node.kind) && kind == Kind::directory)
      return "a directory where the archive has a file or link of the same name";
    node.kind = kind;
    node.mode = mode;
    return {};
  }

  std::string path_of(std::uint32_t id) const {
    std::vector<std::string_view> names;
    for (; id != 0; id = nodes_[id].parent) names.push_back(nodes_[id].name);
    std::reverse(names.begin(), names.end());  // collected leaf first
    std::string path;
    for (const auto name : names) {
      if (!path.empty()) path += '/';
      path += name;
    }
    return path;
  }

  std::size_t max_nodes_;
  std::size_t max_depth_;
  std::deque<Node> nodes_;  // a deque: each node, and the name children_ points into, stays put
  std::unordered_map<Key, std::uint32_t, KeyHash> children_;
};

EntryTree::Kind kind_of(struct archive_entry* entry) {
  if (archive_entry_hardlink(entry) != nullptr) return EntryTree::Kind::hard_link;
  switch (archive_entry_filetype(entry)) {
    case AE_IFDIR: return EntryTree::Kind::directory;
    case AE_IFLNK: return EntryTree::Kind::link;
    default: return EntryTree::Kind::file;
  }
}

// Checks one entry against the rules and the tree so far, places it in the tree and rewrites its
// paths below the destination. nullopt: skip the entry.
Result<std::optional<std::string>> place_entry(struct archive_entry* entry,
                                               const std::string& original,
                                               const ExtractOptions& options, EntryTree& tree) {
  if (auto why = unsafe_path_reason(original); !why.empty()) return hostile(options, original, why);
  if (const char* kind = special_type(archive_entry_filetype(entry)))
    return hostile(options, original, kind);
  std::string relative = relative_of(original, options);
  if (relative.empty()) return std::optional<std::string>{};
  if (options.subtree.empty() && relative.find('/') == std::string::npos &&
      archive_entry_filetype(entry) == AE_IFREG) {
    relative = options.licenses_dir + "/" + options.component + "/" + relative;
  }
  if (const char* target = archive_entry_symlink(entry)) {
    if (auto why = unsafe_link_reason(relative, target); !why.empty())
      return hostile(options, original, why);
  }
  if (const char* hardlink = archive_entry_hardlink(entry)) {
    if (auto why = unsafe_path_reason(hardlink); !why.empty())
      return hostile(options, original, "hard link: " + why);
    const auto inside = relative_of(hardlink, options);
    if (inside.empty()) return hostile(options, original, "hard link to the top directory");
    // Tar writes a hard link after the file it names: anything else (a directory, a link, a
    // name of another archive) is not a link this archive can make.
    if (!tree.holds_file(inside))
      return hostile(options, original,
                     "hard link to " + text::printable(hardlink, shown_entry_bytes) +
                         ", which is not a file earlier in the archive");
    archive_entry_copy_hardlink(entry, (options.destination / inside).c_str());
  }
  const auto type = archive_entry_filetype(entry);
  auto mode = archive_entry_perm(entry);
  // A wheel read as a stream has no modes (they are in the zip's central directory, at its
  // end): its programs are the files under a bin/ directory, as NVIDIA's wheels lay them out.
  if (options.wheel_layout && type == AE_IFREG &&
      (relative.starts_with("bin/") || relative.find("/bin/") != std::string::npos))
    mode |= 0111;
  if (auto why = tree.place(relative, kind_of(entry), sanitized_mode(type, mode)); !why.empty())
    return hostile(options, original, why);
  const auto full = (options.destination / relative).string();
  archive_entry_copy_pathname(entry, full.c_str());
  if (type != AE_IFLNK) archive_entry_set_perm(entry, sanitized_mode(type, mode));
  return std::optional<std::string>{relative};
}

// The system's reason for the last failure on `a` (strerror), else libarchive's message.
std::string reason(struct archive* a) {
  if (archive_errno(a) > 0)
    return std::error_code(archive_errno(a), std::generic_category()).message();
  const char* message = archive_error_string(a);
  return message != nullptr ? message : "unknown error";
}

// What the machine cannot do, as opposed to what the archive asks for: no space, no quota, an
// I/O error, a read-only or forbidding file system.
bool is_local_failure(int error) {
  switch (error) {
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
    case EIO:
    case EROFS:
    case EACCES:
    case EPERM:
    case ENOMEM:
    case EMFILE:
    case ENFILE: return true;
    default: return false;
  }
}

Error write_error(const std::string& verb, const std::string& path, struct archive* out) {
  const int error = archive_errno(out);
  const bool space = error == ENOSPC || error == EDQUOT || error == EFBIG;
  return make_error(ErrorKind::failure, "cannot " + verb + " " + path + ": " + reason(out),
                    space ? "free space (or quota) where the cudaenv data root is, then run the "
                            "command again"
                          : "check the file system of the cudaenv data root (permissions, a "
                            "read-only mount, I/O errors), then run the command again");
}

// A failed archive_write_header: the machine's fault (see is_local_failure), or the archive's,
// when the system refuses the entry's place (ENOTDIR, ENAMETOOLONG, EEXIST, ENOTEMPTY: an entry
// that does not fit what the other archives of the install put there) or libarchive refuses it
// itself (no errno: a link on the way).
Error header_error(const ExtractOptions& options, std::string_view entry, const std::string& path,
                   struct archive* out) {
  if (is_local_failure(archive_errno(out))) return write_error("create", path, out);
  return hostile(options, entry, reason(out));
}

// A failed data write: the system's reason (a local problem), or libarchive's own complaint
// without one (more data than the entry's header declared: a corrupt archive).
Error data_write_error(const ExtractOptions& options, std::string_view entry,
                       const std::string& path, struct archive* out) {
  if (archive_errno(out) > 0) return write_error("write", path, out);
  return hostile(options, entry, "data: " + reason(out));
}

Error over_cap(const ExtractOptions& options) {
  return make_error(ErrorKind::integrity,
                    options.archive_name + " unpacks to more than " +
                        std::to_string(options.max_unpacked_bytes) +
                        " bytes, the cap for its size (CUDAENV_MAX_UNPACKED_BYTES)",
                    "the archive is corrupt or hostile; nothing was installed");
}

// archive_write_disk_new() and every archive_write_header() read the umask by setting it to 0
// and back (see core/umask_lock.hpp).
ArchivePtr new_disk_writer() {
  const std::lock_guard lock(umask_lock());
  return ArchivePtr(archive_write_disk_new(), archive_write_free);
}

int write_header(struct archive* out, struct archive_entry* entry) {
  const std::lock_guard lock(umask_lock());
  return archive_write_header(out, entry);
}

Status copy_data(struct archive* in, struct archive* out, std::string_view entry,
                 const std::string& path, const ExtractOptions& options, ExtractStats& stats) {
  const void* block = nullptr;
  size_t size = 0;
  la_int64_t offset = 0;
  while (true) {
    const int rc = archive_read_data_block(in, &block, &size, &offset);
    if (rc == ARCHIVE_EOF) return Ok{};
    if (rc < ARCHIVE_WARN) return hostile(options, entry, "data: " + reason(in));
    stats.bytes += size;
    if (options.max_unpacked_bytes > 0 && stats.bytes > options.max_unpacked_bytes)
      return over_cap(options);
    // libarchive answers a failed write(2) (a full disk, a quota, an I/O error) with only
    // ARCHIVE_WARN, and archive_write_finish_entry() then extends the file to its size with a
    // hole: a file that looks whole. Anything short of ARCHIVE_OK is a failed write.
    if (archive_write_data_block(out, block, size, offset) < ARCHIVE_OK)
      return data_write_error(options, entry, path, out);
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
  if (path.size() > max_entry_path_bytes)
    return "path longer than " + std::to_string(max_entry_path_bytes) + " bytes";
  if (path.front() == '/') return "absolute path";
  for (const auto& part : components_of(path)) {
    if (part == "..") return "path contains ..";
    if (part.size() > max_entry_name_bytes)
      return "a name longer than " + std::to_string(max_entry_name_bytes) + " bytes";
  }
  return {};
}

std::string unsafe_link_reason(std::string_view entry_path, std::string_view target) {
  if (target.empty()) return "empty link target";
  if (target.size() > max_entry_path_bytes)
    return "link target longer than " + std::to_string(max_entry_path_bytes) + " bytes";
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

std::string wheel_entry_path(std::string_view path, const std::string& component,
                             const std::string& licenses_dir) {
  auto parts = components_of(path);
  if (parts.size() >= 3 && parts[0].ends_with(".dist-info") && parts[1] == "licenses")
    return licenses_dir + "/" + component + "/" + parts.back();
  if (parts.size() < 3 || parts[0] != "nvidia") return {};
  parts.erase(parts.begin(), parts.begin() + 2);
  const bool python_only = std::any_of(parts.begin(), parts.end(), [](const std::string& part) {
    return part == "__pycache__" || part == "__init__.py";
  });
  return python_only ? std::string() : text::join(parts, "/");
}

std::uint64_t default_unpacked_cap(std::uint64_t archive_size) {
  constexpr std::uint64_t at_least = std::uint64_t{1} << 30;
  return std::max(at_least, archive_size * 64);
}

mode_t sanitized_mode(mode_t type, mode_t archive_mode) {
  if (type == AE_IFDIR) return 0755;
  return (archive_mode & 0111) != 0 ? 0755 : 0644;
}

void restrict_process_umask() { ::umask(::umask(0) | 022); }

namespace {

// One archive being unpacked: the libarchive reader and disk writer, and what was written.
class Extraction {
 public:
  Extraction(const ChunkSource& source, ExtractOptions options)
      : options_(std::move(options)), context_{&source, std::nullopt} {}

  Result<ExtractStats> run() {
    if (auto opened = open(); !opened) return opened.error();
    struct archive_entry* entry = nullptr;
    while (true) {
      const int rc = archive_read_next_header(in_.get(), &entry);
      if (rc == ARCHIVE_EOF) break;
      if (rc < ARCHIVE_WARN) return read_error(in_.get(), context_, options_);
      const std::string original =
          archive_entry_pathname(entry) ? archive_entry_pathname(entry) : "";
      if (auto counted = count(entry, original); !counted) return counted.error();
      auto placed = place_entry(entry, original, options_, tree_);
      if (!placed) return placed.error();
      if (!*placed) continue;
      if (auto written = write_entry(entry, original); !written) return written.error();
      ++stats_.entries;
    }
    // Directories get their final modes when the writer closes.
    if (archive_write_close(out_.get()) < ARCHIVE_WARN)
      return write_error("finish", options_.destination.string(), out_.get());
    if (auto modes = check_modes(); !modes) return modes.error();
    return stats_;
  }

 private:
  // Every header counts, the skipped ones too, as do the bytes of its names: what libarchive
  // and the tree hold grows with them.
  Status count(struct archive_entry* entry, const std::string& original) {
    if (++headers_ > options_.max_entries)
      return hostile(options_, original,
                     "more than " + std::to_string(options_.max_entries) +
                         " entries, the most an archive may hold");
    path_bytes_ += original.size();
    for (const char* link : {archive_entry_symlink(entry), archive_entry_hardlink(entry)})
      if (link != nullptr) path_bytes_ += std::string_view(link).size();
    if (path_bytes_ > max_archive_path_bytes)
      return hostile(options_, original,
                     "its entries' paths add up to more than " +
                         std::to_string(max_archive_path_bytes >> 20) +
                         " MiB, the most an archive may hold");
    return Ok{};
  }

  Status open() {
    // The link check walks every component of the (absolute) target paths: resolve links in
    // the destination itself first, or a data root under a linked home would be refused.
    std::error_code ec;
    {
      const std::lock_guard lock(umask_lock());
      fs::create_directories(options_.destination, ec);
    }
    const auto given = options_.destination;
    options_.destination = fs::canonical(given, ec);
    if (ec)
      return make_error(ErrorKind::failure,
                        "cannot create " + given.string() + ": " + ec.message());
    archive_read_support_filter_all(in_.get());
    archive_read_support_format_tar(in_.get());
    archive_read_support_format_zip(in_.get());
    // Defence in depth behind our own checks: libarchive refuses ".." and writing through a
    // link again. (Entry paths are rewritten to absolute ones below the destination, so its
    // no-absolute-paths option cannot be used; our own check covers that.) With _PERM, the
    // sanitized modes are applied exactly, whatever the umask.
    archive_write_disk_set_options(out_.get(), ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_PERM |
                                                   ARCHIVE_EXTRACT_SECURE_NODOTDOT |
                                                   ARCHIVE_EXTRACT_SECURE_SYMLINKS);
    if (archive_read_open(in_.get(), &context_, nullptr, read_callback, nullptr) != ARCHIVE_OK)
      return read_error(in_.get(), context_, options_);
    return Ok{};
  }

  Status write_entry(struct archive_entry* entry, const std::string& original) {
    const std::string full = archive_entry_pathname(entry);
    if (archive_entry_size_is_set(entry) && options_.max_unpacked_bytes > 0) {
      declared_ += static_cast<std::uint64_t>(std::max<la_int64_t>(0, archive_entry_size(entry)));
      if (declared_ > options_.max_unpacked_bytes) return over_cap(options_);
    }
    if (write_header(out_.get(), entry) < ARCHIVE_WARN)
      return header_error(options_, original, full, out_.get());
    // Only a regular file has data to write (a hard link to one included); libarchive skips
    // what another kind of entry may carry.
    if (archive_entry_filetype(entry) == AE_IFREG && archive_entry_size(entry) > 0) {
      if (auto copied = copy_data(in_.get(), out_.get(), original, full, options_, stats_); !copied)
        return context_.source_error ? *context_.source_error : copied.error();
    }
    if (archive_write_finish_entry(out_.get()) < ARCHIVE_WARN)
      return write_error("finish", full, out_.get());
    return Ok{};
  }

  // Checks that each file and directory listed has exactly its sanitized mode, setting it where
  // it has not.
  Status check_modes() const {
    return tree_.for_each_listed([&](const std::string& relative, mode_t mode) -> Status {
      const auto path = options_.destination / relative;
      struct stat st {};
      if (::lstat(path.c_str(), &st) != 0 || S_ISLNK(st.st_mode)) return Ok{};
      if ((st.st_mode & 07777) == mode || ::chmod(path.c_str(), mode) == 0) return Ok{};
      return make_error(ErrorKind::failure,
                        "cannot set the mode of " + path.string() + ": " +
                            std::error_code(errno, std::generic_category()).message());
    });
  }

  ExtractOptions options_;
  ReadContext context_;
  ArchivePtr in_{archive_read_new(), archive_read_free};
  ArchivePtr out_ = new_disk_writer();
  EntryTree tree_{options_.max_entries, options_.max_depth};
  ExtractStats stats_;
  std::uint64_t declared_ = 0;
  std::uint64_t headers_ = 0;
  std::uint64_t path_bytes_ = 0;
};

}  // namespace

Result<ExtractStats> extract(const ChunkSource& source, const ExtractOptions& options) {
  return Extraction(source, options).run();
}

}  // namespace cudaenv::install
