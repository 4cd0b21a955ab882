#!/usr/bin/env python3
"""Zeroes, in place, the payloads of a shared library's fatbin entries compiled for GPUs other than one (sizes and
offsets unchanged, so the library loads as before and the CUDA runtime still finds the kept GPU's code; the zeros
compress to nothing). validation/device/te_bundle.sh uses it to carry Transformer Engine's core library to a lease.

  python3 validation/device/te_prune_fatbin.py LIB.so SM   (e.g. 90: keep sm_90 and sm_90a entries)

The fatbin layout (a container header: magic 0xBA55ED50, u16 version, u16 header size, u64 payload size; then
entries: u16 kind, u16 version, u32 header size, u32 padded payload size, ..., the u32 SM version at offset 28) is
the one cuobjdump reads; a container whose magic is wrong stops the program before anything is written.
"""
import os
import struct
import subprocess
import sys

MAGIC = 0xBA55ED50


def fatbin_section(path):
    out = subprocess.check_output(["readelf", "-S", "-W", path], text=True)
    for line in out.splitlines():
        if ".nv_fatbin" in line:
            fields = line.split("]", 1)[1].split()
            return int(fields[3], 16), int(fields[4], 16)
    sys.exit(f"te_prune_fatbin.py: {path}: no .nv_fatbin section")


def main():
    if len(sys.argv) != 3 or not sys.argv[2].isdigit():
        sys.exit("usage: te_prune_fatbin.py LIB.so SM")
    path, keep = sys.argv[1], int(sys.argv[2])
    data = bytearray(open(path, "rb").read())
    off, size = fatbin_section(path)
    pos, end, kept, zeroed = off, off + size, 0, 0
    while pos < end:
        magic, _, hsize, fsize = struct.unpack_from("<IHHQ", data, pos)
        if magic != MAGIC:  # containers are 8-byte aligned; padding between them is zero
            if any(data[pos:pos + 8]):
                sys.exit(f"te_prune_fatbin.py: {path}: no fatbin container at offset {pos:#x}; nothing written")
            pos += 8
            continue
        e, cend = pos + hsize, pos + hsize + fsize
        while e < cend:
            _, _, ehsize, padded = struct.unpack_from("<HHII", data, e)
            sm = struct.unpack_from("<I", data, e + 28)[0]
            if sm == keep:
                kept += padded
            else:
                data[e + ehsize:e + ehsize + padded] = bytes(padded)
                zeroed += padded
            e += ehsize + padded
        pos = cend
    if kept == 0:
        sys.exit(f"te_prune_fatbin.py: {path}: no sm_{keep} entry; nothing written")
    with open(path + ".tmp", "wb") as f:
        f.write(data)
    os.replace(path + ".tmp", path)
    print(f"{path}: kept {kept / 1e6:.1f} MB of sm_{keep} code, zeroed {zeroed / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
