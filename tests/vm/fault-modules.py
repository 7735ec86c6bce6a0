#!/usr/bin/env python3
"""Deliberately broken copies of numastor's patched modules, for the module-swap fault tests.

    fault-modules.py KMOD_BUILD OUTDIR

KMOD_BUILD is tests/kmod/check-build.sh's output for one kernel ($VM_CACHE/kmod-build/<release>,
with modules/sd_mod.ko and prefix-modules/nvme.ko). Writes to OUTDIR:

  sd_mod-badcrc.ko     the patched sd_mod with the CRC of one symbol it imports from scsi_mod
                       inverted in __versions: the kernel refuses to load it ("disagrees about
                       version of symbol ..."), after the swap removed the stock modules. Its
                       vermagic and marker are intact, so it passes numastor's checks.
  sd_mod-badcrc.sym    the symbol whose CRC was changed
  sd_mod-vermagic.ko   the patched sd_mod whose vermagic names another kernel release (same
                       length: every digit of the release made 9)
  libata-badcrc.ko     the patched libata (when the build has one) with the CRC of
                       scsi_host_alloc_node inverted: built, as it were, against another
                       patched scsi_mod than the one beside it

On a kernel that versions no symbol (CONFIG_MODVERSIONS unset: Debian's 7.2) the modules have no
__versions table and no CRC can disagree: the two -badcrc copies are not made, and
no-modversions says why; in libata-badcrc's place there is

  libata-badsym.ko     the patched libata importing scsi_host_alloc_nodX (its .strtab entry
                       renamed) in place of scsi_host_alloc_node: a symbol nothing exports, as a
                       libata built against another scsi_mod would be there

Edits are in place at the same offsets, so the ELF stays valid. Python standard library only.
"""

import os
import re
import struct
import sys


def sections(data):
    """{name: (offset, size)} of an ELF64 little-endian file."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("not an ELF64 little-endian file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)

    def header(i):
        name, _type, _flags, _addr, off, size = struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize)
        return name, off, size

    _, stroff, _ = header(shstrndx)
    out = {}
    for i in range(shnum):
        name, off, size = header(i)
        end = data.index(b"\0", stroff + name)
        out[data[stroff + name:end].decode()] = (off, size)
    return out


def bad_crc(data, provider_syms):
    """Invert the CRC of the first __versions entry naming one of provider_syms."""
    off, size = sections(data)["__versions"]
    for entry in range(off, off + size, 64):  # struct modversion_info: unsigned long crc; char name[56]
        name = data[entry + 8:entry + 64].split(b"\0", 1)[0].decode()
        if name in provider_syms:
            crc, = struct.unpack_from("<Q", data, entry)
            struct.pack_into("<Q", data, entry, crc ^ 0xFFFFFFFF)
            return name
    raise ValueError("no __versions entry for a symbol of the provider")


def bad_name(data, old, new):
    """Rename an undefined symbol in .strtab (same length): the module then imports a symbol
    nothing exports, as one built against another scsi_mod would on a kernel without CRCs."""
    off, size = sections(data)[".strtab"]
    at = bytes(data[off:off + size]).find(b"\0" + old + b"\0")
    if at < 0 or len(old) != len(new):
        raise ValueError(f"no {old!r} in .strtab")
    data[off + at + 1:off + at + 1 + len(new)] = new


def exported(data):
    """Names the module exports (__ksymtab_strings)."""
    off, size = sections(data)["__ksymtab_strings"]
    return {s.decode() for s in bytes(data[off:off + size]).split(b"\0") if s}


def other_vermagic(data):
    off, size = sections(data)[".modinfo"]
    info = bytes(data[off:off + size])
    m = re.search(rb"vermagic=([^ \0]+)", info)
    if not m:
        raise ValueError("no vermagic in .modinfo")
    release = m.group(1)
    fake = re.sub(rb"[0-9]", b"9", release)
    if fake == release:
        raise ValueError(f"cannot make another release from {release!r}")
    start = off + m.start(1)
    data[start:start + len(release)] = fake
    return release.decode(), fake.decode()


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    build, out = argv[1], argv[2]
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(build, "modules", "sd_mod.ko"), "rb") as f:
        sd = bytearray(f.read())
    with open(os.path.join(build, "modules", "scsi_mod.ko"), "rb") as f:
        scsi = bytearray(f.read())

    if "__versions" not in sections(sd):
        with open(os.path.join(out, "no-modversions"), "w", encoding="utf-8") as f:
            f.write("sd_mod.ko has no __versions: the kernel versions no symbol (CONFIG_MODVERSIONS unset)\n")
        libata = os.path.join(build, "modules", "libata.ko")
        if os.path.exists(libata):
            with open(libata, "rb") as f:
                lib = bytearray(f.read())
            bad_name(lib, b"scsi_host_alloc_node", b"scsi_host_alloc_nodX")
            with open(os.path.join(out, "libata-badsym.ko"), "wb") as f:
                f.write(lib)
    else:
        write_badcrc(build, out, sd, scsi)
    other = bytearray(sd)
    other_vermagic(other)
    with open(os.path.join(out, "sd_mod-vermagic.ko"), "wb") as f:
        f.write(other)
    return 0


def write_badcrc(build, out, sd, scsi):
    broken = bytearray(sd)
    sym = bad_crc(broken, exported(scsi))
    with open(os.path.join(out, "sd_mod-badcrc.ko"), "wb") as f:
        f.write(broken)
    with open(os.path.join(out, "sd_mod-badcrc.sym"), "w", encoding="utf-8") as f:
        f.write(sym + "\n")

    libata = os.path.join(build, "modules", "libata.ko")
    if os.path.exists(libata):
        with open(libata, "rb") as f:
            lib = bytearray(f.read())
        bad_crc(lib, {"scsi_host_alloc_node"})
        with open(os.path.join(out, "libata-badcrc.ko"), "wb") as f:
            f.write(lib)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
