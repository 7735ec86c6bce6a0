#!/usr/bin/env python3
"""Read a kernel module's symbol versions without external tools.

  kosyms.py exports KO    "<symbol> 0x<crc>" for every symbol the module exports
                          (its __crc_<symbol> entries in __kcrctab*)
  kosyms.py imports KO    "<symbol> 0x<crc>" for every symbol the module imports with a
                          version (its __versions table: struct modversion_info)
  kosyms.py undefined KO  "<symbol>" for every symbol the module leaves undefined (its
                          .symtab's SHN_UNDEF entries, as `nm -u`): what it imports whether or
                          not the kernel versions symbols (Debian's 7.2 has no
                          CONFIG_MODVERSIONS, so no __versions table)

  kosyms.py verify NEW STOCK [--extra-export SYMBOL]... [DEPENDENT...]
                          NEW exports the same symbols with the same CRCs as STOCK (plus
                          exactly the --extra-export ones, which a patch adds), and every
                          versioned import of a DEPENDENT module that STOCK satisfies is
                          satisfied by NEW with the same CRC (so the DEPENDENT modules load
                          against NEW). Prints a summary; exit 1 on any difference.

  kosyms.py caller NEW STOCK PROVIDER OLD NEWSYM
                          NEW (a patched caller) imports what STOCK imports, with the same
                          CRCs, except that it no longer imports OLD and imports NEWSYM with
                          the CRC PROVIDER exports it with (so NEW loads against PROVIDER and
                          the running kernel, and against nothing older). Exit 1 otherwise.

On a kernel without symbol versions (CONFIG_MODVERSIONS unset, as Debian's 7.2) the tables hold
names only, each with CRC 0 (as that kernel's Module.symvers): exports are the module's
__ksymtab_strings, imports its undefined symbols.

Only little-endian ELF64 relocatable objects (x86-64 .ko files) are handled, plain or
compressed with xz or gzip (.ko.xz, .ko.gz).
"""
import gzip
import lzma
import struct
import sys

SHT_SYMTAB = 2
SHN_ABS = 0xFFF1
MODVERSION_INFO = 64  # sizeof(struct modversion_info) on 64-bit: unsigned long crc + name[56]


def sections(data):
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise SystemExit("not a little-endian ELF64 file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    out = []
    for i in range(shnum):
        name, typ, _flags, _addr, off, size, link, _info, _align, entsize = struct.unpack_from(
            "<IIQQQQIIQQ", data, shoff + i * shentsize)
        out.append({"name": name, "type": typ, "off": off, "size": size, "link": link,
                    "entsize": entsize})
    strtab = out[shstrndx]
    for s in out:
        s["name"] = cstr(data, strtab["off"] + s["name"])
    return out


def cstr(data, off):
    end = data.index(b"\0", off)
    return data[off:end].decode()


def exports(data):
    secs = sections(data)
    result = {}
    if not any(s["name"] == "__versions" for s in secs) and not has_crcs(data, secs):
        # a kernel without CONFIG_MODVERSIONS (Debian's 7.2): names only, CRC 0 as in its
        # Module.symvers; the exported names are the __ksymtab_strings
        for s in secs:
            if s["name"] == "__ksymtab_strings":
                for n in data[s["off"]:s["off"] + s["size"]].split(b"\0"):
                    if n:
                        result[n.decode()] = 0
        return result
    for symtab in (s for s in secs if s["type"] == SHT_SYMTAB):
        strs = secs[symtab["link"]]
        for i in range(symtab["size"] // 24):
            st_name, _info, _other, shndx, value, _size = struct.unpack_from(
                "<IBBHQQ", data, symtab["off"] + i * 24)
            name = cstr(data, strs["off"] + st_name)
            if not name.startswith("__crc_"):
                continue
            if shndx == SHN_ABS:
                crc = value & 0xFFFFFFFF
            else:
                crc, = struct.unpack_from("<I", data, secs[shndx]["off"] + value)
            result[name[len("__crc_"):]] = crc
    return result


def has_crcs(data, secs):
    """Does the module carry symbol CRCs (__crc_ symbols): a kernel with CONFIG_MODVERSIONS?"""
    for symtab in (s for s in secs if s["type"] == SHT_SYMTAB):
        strs = secs[symtab["link"]]
        for i in range(symtab["size"] // 24):
            st_name, = struct.unpack_from("<I", data, symtab["off"] + i * 24)
            if cstr(data, strs["off"] + st_name).startswith("__crc_"):
                return True
    return False


def undefined(data):
    secs = sections(data)
    result = set()
    for symtab in (s for s in secs if s["type"] == SHT_SYMTAB):
        strs = secs[symtab["link"]]
        for i in range(1, symtab["size"] // 24):
            st_name, _info, _other, shndx, _value, _size = struct.unpack_from(
                "<IBBHQQ", data, symtab["off"] + i * 24)
            if shndx == 0 and st_name:
                result.add(cstr(data, strs["off"] + st_name))
    return result


def imports(data):
    result = {}
    secs = sections(data)
    if not any(s["name"] == "__versions" for s in secs) and not has_crcs(data, secs):
        # no symbol versions on this kernel: every undefined symbol, CRC 0 (names only)
        return {n: 0 for n in undefined(data)}
    for s in secs:
        if s["name"] != "__versions":
            continue
        for off in range(s["off"], s["off"] + s["size"], MODVERSION_INFO):
            crc, = struct.unpack_from("<Q", data, off)
            name = data[off + 8:off + MODVERSION_INFO].split(b"\0", 1)[0].decode()
            result[name] = crc & 0xFFFFFFFF
    return result


def read(path):
    """The module's ELF image, decompressed when the file is .ko.xz or .ko.gz (as 6.12's are)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] == b"\xfd7zXZ\x00":
        data = lzma.decompress(data)
    elif data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data


def verify(new_path, stock_path, dependents, extra=()):
    new, stock = exports(read(new_path)), exports(read(stock_path))
    bad = 0
    for name in sorted(set(new) | set(stock)):
        if name in extra:
            if name in stock or name not in new:
                print(f"{name}: the patch's new export is {'also stock' if name in stock else 'missing'}")
                bad += 1
            continue
        if name not in new:
            print(f"missing export {name} (stock exports it with 0x{stock[name]:08x})")
            bad += 1
        elif name not in stock:
            print(f"extra export {name} 0x{new[name]:08x} (stock does not export it)")
            bad += 1
        elif new[name] != stock[name]:
            print(f"export {name}: 0x{new[name]:08x}, stock 0x{stock[name]:08x}")
            bad += 1
    refs = 0
    for dep in dependents:
        for name, crc in sorted(imports(read(dep)).items()):
            if name not in stock:
                continue
            refs += 1
            if new.get(name) != crc:
                got = "missing" if name not in new else f"0x{new[name]:08x}"
                print(f"{dep}: imports {name} 0x{crc:08x}, the new module has {got}")
                bad += 1
    print(f"{len(new)} exports (stock {len(stock)}); {len(dependents)} dependent modules, "
          f"{refs} versioned references to it; {bad} differences")
    return 1 if bad else 0


def caller(new_path, stock_path, provider_path, old, newsym):
    new, stock = imports(read(new_path)), imports(read(stock_path))
    provided = exports(read(provider_path))
    want = {k: v for k, v in stock.items() if k != old}
    bad = 0
    if old not in stock:
        print(f"the stock module does not import {old}")
        bad += 1
    if newsym not in provided:
        print(f"{provider_path} does not export {newsym}")
        bad += 1
    else:
        want[newsym] = provided[newsym]
    for name in sorted(set(new) | set(want)):
        if new.get(name) != want.get(name):
            got = "missing" if name not in new else f"0x{new[name]:08x}"
            exp = "not imported" if name not in want else f"0x{want[name]:08x}"
            print(f"import {name}: {got}, expected {exp}")
            bad += 1
    print(f"{len(new)} versioned imports (stock {len(stock)}); {old} -> {newsym}; {bad} differences")
    return 1 if bad else 0


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "verify":
        args, extra, deps = sys.argv[4:], [], []
        while args:
            a = args.pop(0)
            if a == "--extra-export" and args:
                extra.append(args.pop(0))
            else:
                deps.append(a)
        sys.exit(verify(sys.argv[2], sys.argv[3], deps, extra))
    if len(sys.argv) == 7 and sys.argv[1] == "caller":
        sys.exit(caller(*sys.argv[2:]))
    if len(sys.argv) == 3 and sys.argv[1] == "undefined":
        for name in sorted(undefined(read(sys.argv[2]))):
            print(name)
        return
    if len(sys.argv) != 3 or sys.argv[1] not in ("exports", "imports"):
        raise SystemExit(__doc__)
    data = read(sys.argv[2])
    table = exports(data) if sys.argv[1] == "exports" else imports(data)
    for name in sorted(table):
        print(f"{name} 0x{table[name]:08x}")


if __name__ == "__main__":
    main()
