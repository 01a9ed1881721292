#include "scan/fatbin.hpp"

#include <algorithm>
#include <cstring>
#include <tuple>

namespace cudaenv::scan {

namespace {

constexpr uint32_t container_magic = 0xBA55ED50;
constexpr size_t container_header_size = 16;
constexpr size_t entry_header_size = 64;  // the fields read below; real headers may be longer
constexpr uint16_t kind_ptx = 1, kind_elf = 2;
// Flags of an entry: bit 13 the older compression, bit 15 zstd (nvcc 12.8 and later).
constexpr uint64_t flags_compressed = 0x2000 | 0x8000;

template <typename T>
T read_at(Bytes bytes, size_t offset) {
  T value{};
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

Error bad(const std::string& what, size_t offset) {
  return make_error(ErrorKind::failure,
                    "not a valid fatbinary: " + what + " at offset " + std::to_string(offset));
}

Error over_budget(size_t offset) {
  return bad("its containers would be read over and over (more than " +
                 std::to_string(ParseBudget::image_multiple) +
                 " times their size): a crafted file; stopped",
             offset);
}

// The entries of one container's body; unknown kinds are skipped by their sizes. Each entry's
// header, and each cubin read for its symbols, is charged to `budget`.
Status parse_entries(Bytes body, size_t base, ParseBudget& budget, std::vector<GpuCode>& codes) {
  size_t at = 0;
  while (at < body.size()) {
    if (body.size() - at < entry_header_size) return bad("truncated entry header", base + at);
    if (!budget.charge(entry_header_size)) return over_budget(base + at);
    const auto kind = read_at<uint16_t>(body, at);
    const auto header = read_at<uint32_t>(body, at + 4);
    const auto payload = read_at<uint64_t>(body, at + 8);
    if (header < entry_header_size || header > body.size() - at ||
        payload > body.size() - at - header)
      return bad("entry runs past its container", base + at);
    if (kind == kind_ptx || kind == kind_elf) {
      GpuCode code;
      code.kind = kind == kind_ptx ? CodeKind::ptx : CodeKind::sass;
      const auto arch = read_at<uint32_t>(body, at + 28);
      if (arch < 10 || arch > 999)
        return bad("entry names architecture " + std::to_string(arch), base + at);
      code.arch = static_cast<int>(arch);
      if (code.kind == CodeKind::ptx) {
        code.ptx_minor = read_at<uint16_t>(body, at + 24);
        code.ptx_major = read_at<uint16_t>(body, at + 26);
      }
      // Only the flag is read: a compressed payload is never decompressed, so whatever size
      // its header claims once decompressed costs nothing.
      code.compressed = (read_at<uint64_t>(body, at + 40) & flags_compressed) != 0;
      if (code.kind == CodeKind::sass && !code.compressed) {
        if (!budget.charge(payload)) return over_budget(base + at);
        code.no_kernels = !cubin_has_kernels(body.subspan(at + header, payload));
      }
      codes.push_back(code);
    }
    at += header + payload;
  }
  return Ok{};
}

enum class Strictness { strict, tolerant };

// Strict: every container must parse. Tolerant (containers among other data): a value that only
// looks like the magic is skipped and the search goes on 8 bytes later, so a crafted run of
// nested "containers" could be read again and again; the budget stops that after a fixed
// multiple of the data's size.
Result<std::vector<GpuCode>> parse_containers(Bytes section, Strictness strictness) {
  std::vector<GpuCode> codes;
  ParseBudget budget(section.size());
  size_t at = 0;
  while (at + container_header_size <= section.size()) {
    if (read_at<uint32_t>(section, at) != container_magic) {
      at += 8;  // containers are 8-byte aligned; padding between them is zero
      continue;
    }
    const auto header = read_at<uint16_t>(section, at + 6);
    const auto body = read_at<uint64_t>(section, at + 8);
    const bool fits = header >= container_header_size && header <= section.size() - at &&
                      body <= section.size() - at - header;
    std::vector<GpuCode> found;
    auto status =
        fits ? parse_entries(section.subspan(at + header, body), at + header, budget, found)
             : Status(bad("container runs past the section", at));
    if (!status && (strictness == Strictness::strict || !budget.left())) return status.error();
    if (!status) {
      at += 8;  // among other data: a value that only looks like the magic
      continue;
    }
    codes.insert(codes.end(), found.begin(), found.end());
    at += header + body;
    at = (at + 7) & ~size_t{7};
  }
  return codes;
}

}  // namespace

bool cubin_has_kernels(Bytes cubin) {
  const auto elf = parse_elf(cubin);
  if (!elf) return true;
  bool found = false;
  const auto read = for_each_symbol(cubin, *elf, ".symtab", [&](const ElfSymbol& symbol) {
    found = symbol.type == symbol_type_function && symbol.section < elf->sections.size() &&
            (elf->sections[symbol.section].flags & section_flag_exec) != 0;
    return !found;
  });
  return !read || found;
}

std::string describe(const GpuCode& code) {
  if (code.kind == CodeKind::sass)
    return "sm_" + std::to_string(code.arch) + (code.no_kernels ? " (no kernels)" : "");
  return "compute_" + std::to_string(code.arch) + " (PTX " + std::to_string(code.ptx_major) + "." +
         std::to_string(code.ptx_minor) + ")";
}

Result<std::vector<GpuCode>> parse_fatbin_section(Bytes section) {
  return parse_containers(section, Strictness::strict);
}

Result<std::vector<GpuCode>> find_embedded_fatbins(Bytes data) {
  return parse_containers(data, Strictness::tolerant);
}

std::vector<GpuCode> distinct(std::vector<GpuCode> codes) {
  std::sort(codes.begin(), codes.end(), [](const GpuCode& a, const GpuCode& b) {
    // For one architecture, a cubin with kernels sorts first and is the one kept.
    return std::tie(a.kind, a.arch, a.ptx_major, a.ptx_minor, a.no_kernels) <
           std::tie(b.kind, b.arch, b.ptx_major, b.ptx_minor, b.no_kernels);
  });
  codes.erase(std::unique(codes.begin(), codes.end(),
                          [](const GpuCode& a, const GpuCode& b) {
                            return a.kind == b.kind && a.arch == b.arch &&
                                   a.ptx_major == b.ptx_major && a.ptx_minor == b.ptx_minor;
                          }),
              codes.end());
  return codes;
}

}  // namespace cudaenv::scan
