#!/usr/bin/python3
"""The CUDA kernels were built for exactly the configured architectures.

cuda_architectures_test.py --cuda ON|OFF --cuobjdump PATH --sass 75,80,... --ptx 120 FILE...

Lists the SASS (cubin) and PTX images of every FILE (the kernel objects and the collbench binary)
and checks that each holds SASS for exactly the --sass architectures and PTX for exactly the --ptx
ones. The lists come from cuobjdump --list-elf/--list-ptx of the CUDA toolkit that built the
kernels. Some CUDA installations (the pip wheels) ship nvcc without cuobjdump; the images are then
read from the fatbin headers in each file's .nv_fatbin section, and where cuobjdump exists both
readings must agree, which keeps the header reader honest. Empty --sass and --ptx
(CMAKE_CUDA_ARCHITECTURES=OFF: nvcc's own default) check only that every file holds some SASS.
Exit 0 when every file matches, 1 otherwise, 77 (CTest's skip) when CUDA was not built.
"""
import argparse
import os
import re
import struct
import subprocess
import sys

SKIP = 77
FATBIN_MAGIC = 0xBA55ED50
KIND_PTX = 1
KIND_ELF = 2


def elf_sections(data, path):
    """{name: bytes} of a 64-bit little-endian ELF file's sections."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError(f"{path}: not a 64-bit little-endian ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names_offset, names_size = headers[shstrndx][4], headers[shstrndx][5]
    names = data[names_offset:names_offset + names_size]
    sections = {}
    for name, kind, _flags, _addr, offset, size in headers:
        label = names[name:names.index(b"\0", name)].decode()
        # SHT_NOBITS (8) occupies no bytes in the file.
        sections[label] = b"" if kind == 8 else data[offset:offset + size]
    return sections


def fatbin_images(path):
    """(SASS, PTX) architectures in the fatbins of an object or executable, from their headers.

    A .nv_fatbin section holds one container per CUDA translation unit (the linker concatenates
    them, 8-byte aligned): a 16-byte header (magic, version, header size, size of the entries),
    then entries of a header (kind at 0: 1 PTX, 2 ELF; header size at 4; payload size at 8;
    architecture at 28) followed by the payload.
    """
    with open(path, "rb") as f:
        data = elf_sections(f.read(), path).get(".nv_fatbin", b"")
    sass, ptx = [], []
    offset = 0
    while offset + 16 <= len(data):
        magic, _version, header_size, entries_size = struct.unpack_from("<IHHQ", data, offset)
        if magic != FATBIN_MAGIC:
            if magic != 0:
                raise ValueError(f"{path}: .nv_fatbin offset {offset}: magic {magic:#x}, "
                                 f"expected {FATBIN_MAGIC:#x}")
            offset += 8  # padding between containers
            continue
        entry, end = offset + header_size, offset + header_size + entries_size
        while entry < end:
            kind, _, entry_header, payload = struct.unpack_from("<HHIQ", data, entry)
            arch, = struct.unpack_from("<I", data, entry + 28)
            if kind == KIND_ELF:
                sass.append(str(arch))
            elif kind == KIND_PTX:
                ptx.append(str(arch))
            else:
                raise ValueError(f"{path}: fatbin entry of unknown kind {kind} (sm_{arch})")
            entry += entry_header + payload
        offset = (end + 7) // 8 * 8
    return sass, ptx


def cuobjdump_images(cuobjdump, path):
    """(SASS, PTX) architectures that cuobjdump lists, e.g. 'ELF file 1: x.1.sm_90.cubin'."""
    found = []
    for option in ("--list-elf", "--list-ptx"):
        run = subprocess.run([cuobjdump, option, path], capture_output=True, text=True, timeout=120)
        # cuobjdump fails on a file without device code; the comparison then reports it empty.
        lines = run.stdout.splitlines() if run.returncode == 0 else []
        found.append([m.group(1) for line in lines
                      if (m := re.search(r"sm_(\d+[af]?)\.(?:cubin|ptx)\s*$", line))])
    return found[0], found[1]


def numbers(archs):
    """Architectures without their a/f feature suffix: the fatbin headers carry only the number."""
    return sorted({re.sub(r"[af]$", "", a) for a in archs}, key=int)


def arch_list(archs):
    return sorted(set(archs), key=lambda a: (int(re.sub(r"[af]$", "", a)), a))


def check_file(path, cuobjdump, want_sass, want_ptx):
    """Problems found in one file; prints what the file holds."""
    problems = []
    header_sass, header_ptx = fatbin_images(path)
    if cuobjdump:
        sass, ptx = cuobjdump_images(cuobjdump, path)
        if (numbers(sass), numbers(ptx)) != (numbers(header_sass), numbers(header_ptx)):
            problems.append(f"cuobjdump lists SASS {arch_list(sass)} PTX {arch_list(ptx)} but the "
                            f"fatbin headers say SASS {numbers(header_sass)} PTX {numbers(header_ptx)}")
    else:
        sass, ptx = header_sass, header_ptx
        want_sass, want_ptx = numbers(want_sass), numbers(want_ptx)
    print(f"{os.path.basename(path)}: SASS {' '.join('sm_' + a for a in arch_list(sass)) or 'none'}; "
          f"PTX {' '.join('compute_' + a for a in arch_list(ptx)) or 'none'}")
    if not want_sass and not want_ptx:
        if not sass:
            problems.append("no SASS at all")
        return problems
    if arch_list(sass) != arch_list(want_sass):
        problems.append(f"SASS {arch_list(sass)}, configured {arch_list(want_sass)}")
    if arch_list(ptx) != arch_list(want_ptx):
        problems.append(f"PTX {arch_list(ptx)}, configured {arch_list(want_ptx)}")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cuda", required=True, help="ON when collbench was built with CUDA")
    parser.add_argument("--cuobjdump", default="", help="the toolkit's cuobjdump, empty if it has none")
    parser.add_argument("--sass", default="", help="architectures that must have SASS, separated by , or ;")
    parser.add_argument("--ptx", default="", help="architectures that must have PTX, separated by , or ;")
    parser.add_argument("files", nargs="*")
    args = parser.parse_args()
    if args.cuda.upper() not in ("ON", "1", "TRUE", "YES"):
        print("SKIPPED: collbench was configured without CUDA; there are no kernels to inspect")
        return SKIP
    # CTest passes a generator expression's list (the kernel objects) as one ;-separated argument.
    args.files = [f for argument in args.files for f in argument.split(";") if f]
    if not args.files:
        print("FAILED: CUDA is built but no kernel object or binary was named")
        return 1
    want_sass = [a for a in re.split(r"[;,]", args.sass) if a]
    want_ptx = [a for a in re.split(r"[;,]", args.ptx) if a]
    cuobjdump = args.cuobjdump if args.cuobjdump and os.access(args.cuobjdump, os.X_OK) else ""
    print(f"configured: SASS {' '.join(want_sass) or '(nvcc default)'}; "
          f"PTX {' '.join(want_ptx) or '(nvcc default)'}")
    if cuobjdump:
        print(f"read with {cuobjdump} --list-elf/--list-ptx, checked against the fatbin headers")
    else:
        print("read from the fatbin headers: this CUDA installation has no cuobjdump")
    failed = 0
    for path in args.files:
        try:
            problems = check_file(path, cuobjdump, want_sass, want_ptx)
        except (OSError, ValueError, struct.error, subprocess.SubprocessError) as error:
            problems = [str(error)]
        for problem in problems:
            print(f"FAILED: {path}: {problem}")
        failed += bool(problems)
    print(f"{len(args.files) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
