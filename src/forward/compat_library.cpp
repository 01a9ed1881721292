#include "forward/compat_library.hpp"

#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include <nlohmann/json.hpp>

#include "core/fd.hpp"
#include "core/text.hpp"

namespace cudaenv::forward {

namespace fs = std::filesystem;

namespace {

constexpr const char* note_section = ".note.cuda.fwd_compatibility";
constexpr const char* note_owner = "NVIDIA Corporation";
constexpr std::size_t note_limit = 4096;
constexpr std::size_t max_sections = 4096;
constexpr std::size_t names_limit = 1 << 16;

Error note_error(const fs::path& library, const std::string& problem,
                 ErrorKind kind = ErrorKind::integrity) {
  return make_error(kind, text::printable(library.string(), text::message_limit) + ": " + problem,
                    "reinstall the forward-compatibility package (cudaenv compat install)");
}

bool read_at(int fd, void* into, std::size_t size, std::uint64_t offset) {
  auto* bytes = static_cast<char*>(into);
  while (size > 0) {
    const auto got = ::pread(fd, bytes, size, static_cast<off_t>(offset));
    if (got <= 0) return false;
    bytes += got;
    size -= static_cast<std::size_t>(got);
    offset += static_cast<std::uint64_t>(got);
  }
  return true;
}

std::size_t aligned4(std::size_t size) { return (size + 3) & ~std::size_t{3}; }

// The note's description bytes from the section's contents; nullopt when the owner is not NVIDIA.
std::optional<std::string> note_description(const std::string& section) {
  if (section.size() < 12) return std::nullopt;
  std::uint32_t name_size = 0, desc_size = 0;
  std::memcpy(&name_size, section.data(), 4);
  std::memcpy(&desc_size, section.data() + 4, 4);
  const auto desc_at = 12 + aligned4(name_size);
  if (name_size == 0 || name_size > 64 || desc_size > note_limit ||
      desc_at + desc_size > section.size())
    return std::nullopt;
  const std::string owner(section.data() + 12, name_size);
  if (std::string_view(owner.c_str()) != note_owner) return std::nullopt;
  return section.substr(desc_at, desc_size);
}

std::optional<std::vector<int>> integers(const nlohmann::json& value) {
  if (!value.is_array() || value.size() > 256) return std::nullopt;
  std::vector<int> out;
  for (const auto& item : value) {
    if (!item.is_number_integer() || item.get<long long>() < 0 || item.get<long long>() > 100000)
      return std::nullopt;
    out.push_back(static_cast<int>(item.get<long long>()));
  }
  return out;
}

}  // namespace

Result<CompatNote> parse_compat_note(std::string_view json) {
  if (json.size() > note_limit) return make_error(ErrorKind::integrity, "the note is over 4 KiB");
  if (const auto nul = json.find('\0'); nul != std::string_view::npos) json = json.substr(0, nul);
  const auto doc = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) return make_error(ErrorKind::integrity, "the note is not a JSON object");
  CompatNote note;
  const auto format = doc.find("format");
  const auto cuda = doc.find("CUDA version");
  const auto drivers = doc.find("driver");
  if (format == doc.end() || !format->is_number_integer() || cuda == doc.end() ||
      !cuda->is_string() || drivers == doc.end())
    return make_error(ErrorKind::integrity,
                      "the note lacks \"format\", \"CUDA version\" or \"driver\"");
  note.format = format->get<int>();
  const auto parsed = Version::parse(cuda->get<std::string>());
  if (!parsed) return make_error(ErrorKind::integrity, "the note's \"CUDA version\" is no version");
  note.cuda = *parsed;
  auto branches = integers(*drivers);
  if (!branches)
    return make_error(ErrorKind::integrity, "the note's \"driver\" is not a list of branches");
  note.driver_branches = std::move(*branches);
  if (const auto devices = doc.find("device"); devices != doc.end()) {
    if (auto classes = integers(*devices)) note.device_classes = std::move(*classes);
  }
  return note;
}

Result<CompatNote> read_compat_note(const fs::path& library) {
  UniqueFd fd(::open(library.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (!fd)
    return note_error(library, std::string("cannot open: ") + std::strerror(errno),
                      ErrorKind::not_found);
  Elf64_Ehdr header{};
  if (!read_at(fd.get(), &header, sizeof header, 0) ||
      std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64 ||
      header.e_ident[EI_DATA] != ELFDATA2LSB)
    return note_error(library, "not a 64-bit little-endian ELF file");
  if (header.e_shentsize != sizeof(Elf64_Shdr) || header.e_shnum == 0 ||
      header.e_shnum > max_sections || header.e_shstrndx >= header.e_shnum)
    return note_error(library, "its section headers are malformed");
  std::vector<Elf64_Shdr> sections(header.e_shnum);
  if (!read_at(fd.get(), sections.data(), sections.size() * sizeof(Elf64_Shdr), header.e_shoff))
    return note_error(library, "its section headers cannot be read");
  const auto& names = sections[header.e_shstrndx];
  if (names.sh_size == 0 || names.sh_size > names_limit)
    return note_error(library, "its section names are malformed");
  std::string name_table(names.sh_size, '\0');
  if (!read_at(fd.get(), name_table.data(), name_table.size(), names.sh_offset))
    return note_error(library, "its section names cannot be read");
  for (const auto& section : sections) {
    if (section.sh_type != SHT_NOTE || section.sh_name >= name_table.size()) continue;
    if (std::string_view(name_table.c_str() + section.sh_name) != note_section) continue;
    if (section.sh_size > note_limit + 128)
      return note_error(library, std::string(note_section) + " is over 4 KiB");
    std::string contents(section.sh_size, '\0');
    if (!read_at(fd.get(), contents.data(), contents.size(), section.sh_offset))
      return note_error(library, std::string(note_section) + " cannot be read");
    const auto description = note_description(contents);
    if (!description)
      return note_error(library, std::string(note_section) + " is not NVIDIA's note");
    auto note = parse_compat_note(*description);
    if (!note) return note_error(library, note.error().message);
    return note;
  }
  return note_error(library, std::string("has no ") + note_section + " note", ErrorKind::not_found);
}

std::optional<CompatLibrary> find_compat_library(const fs::path& directory) {
  std::optional<CompatLibrary> found;
  std::optional<Version> newest;
  std::error_code ec;
  std::size_t seen = 0;
  for (fs::directory_iterator it(directory, ec), end; !ec && it != end && seen < 256;
       it.increment(ec), ++seen) {
    const auto name = it->path().filename().string();
    constexpr std::string_view prefix = "libcuda.so.";
    if (!text::starts_with(name, prefix)) continue;
    const auto version_text = name.substr(prefix.size());
    const auto version = Version::parse(version_text);
    // libcuda.so.1 is the soname link; the library's own name carries the full driver version.
    if (!version || version_text.find('.') == std::string::npos) continue;
    std::error_code type_ec;
    if (!it->is_regular_file(type_ec) || it->is_symlink(type_ec)) continue;
    if (newest && *version <= *newest) continue;
    newest = version;
    found = CompatLibrary{directory, version_text, std::nullopt, ""};
  }
  if (!found) return std::nullopt;
  if (auto note = read_compat_note(found->directory / ("libcuda.so." + found->version)))
    found->note = std::move(*note);
  else
    found->note_problem = note.error().message;
  return found;
}

}  // namespace cudaenv::forward
