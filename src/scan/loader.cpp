#include "scan/loader.hpp"

#include <filesystem>
#include <optional>
#include <string_view>

#include <sys/utsname.h>

#include "core/text.hpp"
#include "scan/mapped_file.hpp"

namespace cudaenv::scan {

namespace fs = std::filesystem;

namespace {

#if defined(__aarch64__)
constexpr const char* multiarch = "aarch64-linux-gnu";
#else
constexpr const char* multiarch = "x86_64-linux-gnu";
#endif

// ld.so skips a file it cannot load (missing, another ELF class) and goes on searching.
bool loadable(const std::string& path) {
  auto file = MappedFile::open(path);
  if (!file) return false;
  const auto bytes = file->bytes();
  return is_elf(bytes) && bytes.size() > 5 && bytes[4] == 2;
}

void replace_all(std::string& text, std::string_view token, const std::string& value) {
  for (size_t at = text.find(token); at != std::string::npos;
       at = text.find(token, at + value.size()))
    text.replace(at, token.size(), value);
}

class Search {
 public:
  explicit Search(const LoaderInput& input) : input_(input) {}

  // Tries each directory of a colon-separated list; true once the library is found.
  bool try_list(std::string_view list, const std::string& source, const std::string& origin) {
    for (const auto& entry : text::split(list, ':')) {
      if (entry.empty()) continue;  // the current directory: not simulated
      const auto directory = expand_dynamic_tokens(entry, origin, input_.lib, input_.platform);
      if (try_file(fs::path(directory) / input_.library, source)) return true;
    }
    return false;
  }

  bool try_cache() {
    for (const auto& entry : input_.cache) {
      if (entry.soname == input_.library && try_file(entry.path, "ld.so cache")) return true;
    }
    return false;
  }

  bool try_file(const fs::path& path, const std::string& source) {
    SearchStep step{source, path.lexically_normal().string(), loadable(path.string())};
    answer_.steps.push_back(step);
    if (step.found) answer_.winner = step;
    return step.found;
  }

  LoaderAnswer& answer() { return answer_; }

 private:
  const LoaderInput& input_;
  LoaderAnswer answer_;
};

}  // namespace

std::string expand_dynamic_tokens(std::string_view path, const std::string& origin,
                                  const std::string& lib, const std::string& platform) {
  std::string expanded(path);
  replace_all(expanded, "${ORIGIN}", origin);
  replace_all(expanded, "$ORIGIN", origin);
  replace_all(expanded, "${LIB}", lib);
  replace_all(expanded, "$LIB", lib);
  replace_all(expanded, "${PLATFORM}", platform);
  replace_all(expanded, "$PLATFORM", platform);
  return expanded;
}

std::vector<std::string> default_library_directories() {
  const std::string arch = multiarch;
  return {"/lib/" + arch, "/usr/lib/" + arch, "/lib64", "/usr/lib64", "/lib", "/usr/lib"};
}

std::string default_lib_token() { return std::string("lib/") + multiarch; }

std::string default_platform_token() {
  struct utsname name {};
  if (::uname(&name) != 0) return "";
  return name.machine;
}

Result<LoaderAnswer> simulate_loader(const LoaderInput& input) {
  std::optional<MappedFile> file;  // the requester's names are views into it
  ElfInfo requester;
  std::string origin, label;
  if (input.requester) {
    auto opened = MappedFile::open(*input.requester);
    if (!opened) return opened.error();
    file = std::move(*opened);
    auto elf = parse_elf(file->bytes());
    if (!elf) return elf.error().with_context(*input.requester);
    requester = std::move(*elf);
    const auto absolute = fs::absolute(*input.requester).lexically_normal();
    origin = text::without_trailing_slashes(absolute.parent_path().string());
    label = absolute.filename().string();
  }
  Search search(input);
  auto& answer = search.answer();
  if (!requester.rpath.empty() && requester.has_runpath)
    answer.notes.push_back(label + " has DT_RUNPATH, so its DT_RPATH (" +
                           std::string(requester.rpath) + ") is ignored");
  if (input.library.find('/') != std::string::npos) {
    search.try_file(input.library, "the path itself");  // a name with a slash is not searched
    return std::move(answer);
  }
  if (!requester.has_runpath && search.try_list(requester.rpath, "DT_RPATH of " + label, origin))
    return std::move(answer);
  if (search.try_list(input.ld_library_path, "LD_LIBRARY_PATH", origin)) return std::move(answer);
  if (search.try_list(requester.runpath, "DT_RUNPATH of " + label, origin))
    return std::move(answer);
  if (search.try_cache()) return std::move(answer);
  for (const auto& directory : input.default_directories) {
    if (search.try_file(fs::path(directory) / input.library, "default path")) break;
  }
  return std::move(answer);
}

}  // namespace cudaenv::scan
