#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""gen_corpus.py - write the seed corpus for the PTT/TLP fuzz targets.

SYNTHETIC inputs built from the documented layouts (kernel-facts §2.8, the
PCIe TLP header formats): a few valid headers, 4DW and 8DW AUX buffers with
requests, split completions and 10-bit tags. Run from anywhere; it writes
tests/fuzz/corpus/<target>/<name> next to itself. Deterministic output.
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def dw0(fmt, typ, length, t9=0, t8=0, th=0):
    return fmt << 29 | typ << 24 | t9 << 23 | t8 << 19 | th << 16 | (length & 0x3FF)


def req(rid, tag, lbe=0xF, fbe=0xF):
    return rid << 16 | (tag & 0xFF) << 8 | lbe << 4 | fbe


def cpl1(cid, status, bc):
    return cid << 16 | status << 13 | (bc & 0xFFF)


def cpl2(rid, tag, la):
    return rid << 16 | (tag & 0xFF) << 8 | la


def le(*dws):
    return b"".join(struct.pack("<I", d & 0xFFFFFFFF) for d in dws)


def entry_4dw(time, h0, h1, h2, h3=0):
    fmt, typ = (h0 >> 29) & 3, (h0 >> 24) & 0x1F
    t9, t8, th, length = (h0 >> 23) & 1, (h0 >> 19) & 1, (h0 >> 16) & 1, h0 & 0x3FF
    d0 = fmt << 30 | typ << 25 | t9 << 24 | t8 << 23 | th << 22 | length << 11 | (time & 0x7FF)
    return le(d0, h1, h2, h3)


def entry_8dw(time, h0, h1, h2, h3=0, prefix=0):
    return le(0xFFFFFFFF, prefix, h0, h1, h2, h3, 0, time)


# A small conversation: reads with split completions, a 10-bit tag, a write,
# a message, a config read and its completion.
CONVERSATION = [
    (5, (dw0(0, 0x00, 16), req(0x0100, 0x05), 0x1000)),
    (9, (dw0(2, 0x0A, 8), cpl1(0, 0, 64), cpl2(0x0100, 0x05, 0))),
    (3, (dw0(2, 0x0A, 8), cpl1(0, 0, 32), cpl2(0x0100, 0x05, 0x20))),
    (1, (dw0(3, 0x00, 32), req(0x0200, 0), 0x4, 0x02810040)),
    (2, (dw0(1, 0x00, 1, t9=1), req(0x0100, 0x05), 0x1, 0x2000)),
    (4, (dw0(2, 0x0A, 1, t9=1), cpl1(0, 0, 4), cpl2(0x0100, 0x05, 0))),
    (1, (dw0(1, 0x10, 0), 0x01000030, 0, 0)),
    (2, (dw0(0, 0x04, 1), req(0x0000, 0x10, 0), 0x01130140)),
    (6, (dw0(2, 0x0A, 1), cpl1(0x0113, 0, 4), cpl2(0x0000, 0x10, 0))),
]

TLP_HEADERS = {
    "mrd3": le(dw0(0, 0x00, 4), req(0x0100, 0x1E), 0xFEE01000),
    "mwr4": le(0x60000001, 0x01001E0F, 0x4, 0x02810040),
    "cpld": le(dw0(2, 0x0A, 16, t9=1), cpl1(0x10, 0, 0x100), cpl2(0x0300, 0xFF, 0x40)),
    "msg_by_id": le(dw0(1, 0x12, 0), 0x0000037F, 0x02000000, 0),
    "cfgrd0": le(dw0(0, 0x04, 1), req(0, 0x10, 0), 0x01130140),
    "pasid_mrd": le(0x91812345, dw0(1, 0x00, 1), req(0x0700, 1, 0), 0x1, 0x40),
    "cas": le(dw0(2, 0x0E, 4), req(0x0500, 0x22), 0x10),
}


def write(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def main():
    for name, data in TLP_HEADERS.items():
        write("fuzz_tlp", name, data)
    buf4 = b"".join(entry_4dw(t, *h) for t, h in CONVERSATION)
    buf8 = b"".join(entry_8dw(t, *h) for t, h in CONVERSATION)
    pasid8 = entry_8dw(0x4C033, 0x60000001, 0x01001E0F, 0x4, 0x02810040, prefix=0x91C00042)
    write("fuzz_ptt_entry", "conversation_4dw", buf4)
    write("fuzz_ptt_entry", "conversation_8dw", buf8)
    write("fuzz_ptt_entry", "pasid_8dw", pasid8 + bytes(32) + pasid8[:20])
    # fuzz_ptt_summary: 4 configuration bytes, then the trace.
    write("fuzz_ptt_summary", "dir2_delta_4dw", bytes([3, 0, 7, 15]) + buf4)
    write("fuzz_ptt_summary", "dir3_absolute_4dw", bytes([4, 1, 1, 2]) + buf4 + buf4)
    write("fuzz_ptt_summary", "unknown_dir_8dw", bytes([0, 0x80, 3, 3]) + buf8)


if __name__ == "__main__":
    main()
