"""Hostile binaries for the scan tests and the fuzz seeds: ELF surgery on a real library (its
string tables pointed by the thousand at one long string), nested fatbinary containers, and
fatbinary entries with absurd sizes."""

import struct
import subprocess
from pathlib import Path

SHT_PROGBITS, SHT_DYNAMIC, SHT_DYNSYM = 1, 6, 11


class Elf:
    """A 64-bit little-endian ELF whose section headers can be rewritten and added to; new data
    goes at the end of the file, the section header table after it."""

    def __init__(self, path):
        self.data = bytearray(Path(path).read_bytes())
        shoff, = struct.unpack_from("<Q", self.data, 0x28)
        count, self.names_index = struct.unpack_from("<HH", self.data, 0x3C)
        self.headers = [bytearray(self.data[shoff + 64 * i:shoff + 64 * (i + 1)]) for i in range(count)]

    def field(self, index, offset, fmt, value=None):
        if value is not None:
            struct.pack_into(fmt, self.headers[index], offset, value)
        return struct.unpack_from(fmt, self.headers[index], offset)[0]

    def bytes_of(self, index):
        offset, size = self.field(index, 0x18, "<Q"), self.field(index, 0x20, "<Q")
        return bytes(self.data[offset:offset + size])

    def index_of_type(self, section_type):
        return next(i for i in range(len(self.headers)) if self.field(i, 4, "<I") == section_type)

    def append(self, blob):
        self.data += b"\0" * (-len(self.data) % 8)
        offset = len(self.data)
        self.data += blob
        return offset

    def replace(self, index, blob):
        """Section `index` now holds `blob`, at the end of the file."""
        self.field(index, 0x18, "<Q", self.append(blob))
        self.field(index, 0x20, "<Q", len(blob))

    def add_section(self, name_offset, section_type, blob=b""):
        header = bytearray(64)
        struct.pack_into("<IIQQQQIIQQ", header, 0, name_offset, section_type, 0, 0,
                         self.append(blob), len(blob), 0, 0, 8, 0)
        self.headers.append(header)
        return len(self.headers) - 1

    def grow_string_table(self, index, tail):
        """Appends `tail` to string table `index` (its old strings keep their offsets); returns
        where `tail` starts in it."""
        old = self.bytes_of(index)
        self.replace(index, old + tail)
        return len(old)

    def save(self, path):
        shoff = self.append(b"".join(self.headers))
        struct.pack_into("<Q", self.data, 0x28, shoff)
        struct.pack_into("<HH", self.data, 0x3C, len(self.headers), self.names_index)
        Path(path).write_bytes(self.data)
        return Path(path)


def real_library(tmp, name="libbase.so", source="int answer(void) { return 42; }\n", soname=None):
    """A real shared library built here with cc (it needs libm: one DT_NEEDED beyond libc)."""
    (tmp / "src.c").write_text(source)
    args = ["cc", "-shared", "-fPIC", str(tmp / "src.c"), "-lm", "-Wl,--no-as-needed", "-o", str(tmp / name)]
    if soname:
        args.insert(-2, f"-Wl,-soname,{soname}")
    subprocess.run(args, check=True)
    return tmp / name


LONG = b"A" * (1 << 20) + b"\0"  # one string a megabyte long


def section_name_bomb(base, out, count=14000, name=LONG):
    """14 000 extra sections all named by one 1 MiB string: 1.9 MB of file, 14 GB of names."""
    elf = Elf(base)
    at = elf.grow_string_table(elf.names_index, name)
    for _ in range(count):
        elf.add_section(at, SHT_PROGBITS)
    return elf.save(out)


def needed_bomb(base, out, count=60000, name=LONG):
    """60 000 DT_NEEDED entries naming one 1 MiB string of .dynstr: 2 MB of file, 60 GB of names."""
    elf = Elf(base)
    dynamic = elf.index_of_type(SHT_DYNAMIC)
    at = elf.grow_string_table(elf.field(dynamic, 0x28, "<I"), name)
    elf.replace(dynamic, struct.pack("<qQ", 1, at) * count + elf.bytes_of(dynamic))
    return elf.save(out)


def dynsym_bomb(base, out, count=40000, name=LONG):
    """40 000 dynamic symbols named by one 1 MiB string: 2 MB of file, 40 GB of names."""
    elf = Elf(base)
    dynsym = elf.index_of_type(SHT_DYNSYM)
    at = elf.grow_string_table(elf.field(dynsym, 0x28, "<I"), name)
    elf.replace(dynsym, elf.bytes_of(dynsym) + struct.pack("<IBBHQQ", at, 0x11, 0, 1, 0, 4) * count)
    return elf.save(out)


MAGIC = 0xBA55ED50


def ptx_entry(arch=80):
    """A fatbinary entry header: PTX (kind 1) for compute_`arch`, ISA 8.0, no payload."""
    entry = bytearray(64)
    struct.pack_into("<HHIQ", entry, 0, 1, 0x101, 64, 0)
    struct.pack_into("<HHI", entry, 24, 0, 8, arch)
    return bytes(entry)


def container(body):
    return struct.pack("<IHHQ", MAGIC, 1, 16, len(body)) + body


def nested_containers(count):
    """`count` entries of an unknown kind, each hiding at its byte 16 the header of a container
    spanning every entry after it; the last entry is broken, so every one of those containers
    fails at its end and the search for containers among data steps 8 bytes and tries the next:
    count²/2 entries read, unless the work is bounded."""
    entries = []
    for k in range(count):
        entry = bytearray(64)
        struct.pack_into("<HHIQ", entry, 0, 3, 0x101, 64, 0)
        struct.pack_into("<IHHQ", entry, 16, MAGIC, 1, 48, 64 * (count - k - 1) + 8)
        entries.append(bytes(entry))
    body = b"".join(entries) + b"\0" * 8  # too short for an entry header: the chain fails here
    return struct.pack("<IHHQ", MAGIC, 1, 16, len(body)) + body


def with_fatbin(base, out, ldata=None):
    """The library with a `.nv_fatbin` holding one PTX entry, and optionally an `.ldata`."""
    elf = Elf(base)
    names = b".nv_fatbin\0.ldata\0"
    at = elf.grow_string_table(elf.names_index, names)
    elf.add_section(at, SHT_PROGBITS, container(ptx_entry()))
    if ldata is not None:
        elf.add_section(at + names.index(b".ldata"), SHT_PROGBITS, ldata)
    return elf.save(out)


def ld_cache_bomb(count=40000, name=LONG, flags=0x0303):
    """An ld.so cache ("glibc-ld.so.cache1.1") whose `count` entries all name one string as both
    soname and path (0x0303: libc6, x86-64)."""
    strings_at = 48 + 24 * count
    header = b"glibc-ld.so.cache1.1" + struct.pack("<IIIIIII", count, len(name), 0, 0, 0, 0, 0)
    entries = struct.pack("<iIIIQ", flags, strings_at, strings_at, 0, 0) * count
    return header + entries + name


def compressed_entry(arch=80, claimed=1 << 62):
    """A compressed (zstd flag) SASS entry whose header claims an absurd decompressed size."""
    entry = bytearray(64)
    struct.pack_into("<HHIQ", entry, 0, 2, 0x101, 64, 8)
    struct.pack_into("<I", entry, 28, arch)
    struct.pack_into("<Q", entry, 40, 0x8000)
    struct.pack_into("<Q", entry, 56, claimed)
    return bytes(entry) + b"\x28\xb5\x2f\xfd" + b"\0" * 4
