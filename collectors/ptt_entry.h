/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ptt_entry.h - pure decoding of HiSilicon PTT trace entries (layer (a) of
 * the PTT decoder; see docs/ptt.md and kernel-facts §2.8, §3.3).
 *
 * Bytes in, struct out: no I/O, no allocation, no global state. The AUX data
 * is a sequence of fixed-size entries of little-endian dwords:
 *
 * 8DW (32 bytes)  DW0  0xfffff800 marker ([31:11] all ones, [10:0] 0x7ff)
 *                 DW1  TLP prefix (0 when the TLP had none)
 *                 DW2..DW5  TLP header DW0..DW3, unchanged
 *                 DW6  reserved (0)
 *                 DW7  time
 * 4DW (16 bytes)  DW0  [31:30] Fmt[1:0] [29:25] Type 24 T9 23 T8 22 TH
 *                      21 SO [20:11] Length [10:0] Time
 *                 DW1..DW3  TLP header DW1..DW3, unchanged
 *
 * The format is chosen once per buffer, exactly as perf does: the first u32
 * of the buffer decides (8DW marker, else 4DW; under 4 bytes is 4DW).
 */
#ifndef PCIESCOPE_PTT_ENTRY_H
#define PCIESCOPE_PTT_ENTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tlp.h"

/* Values match the `format` field of the trace config (attr.config:32-35). */
enum ptt_format {
        PTT_FORMAT_4DW = 0,
        PTT_FORMAT_8DW = 1,
};

#define PTT_ENTRY_4DW_BYTES 16
#define PTT_ENTRY_8DW_BYTES 32
#define PTT_ENTRY_MAX_DW    8
#define PTT_8DW_MARKER      0xfffff800u /* mask and value of the 8DW DW0 */
#define PTT_4DW_TIME_BITS   11
#define PTT_8DW_TIME_BITS   32

struct ptt_entry {
        enum ptt_format format;
        uint32_t raw[PTT_ENTRY_MAX_DW]; /* the entry's dwords (raw[0..3] for 4DW) */

        /* The TLP as it went by: header DW0..DW3 and the prefix. For 4DW
         * hdr[0] is rebuilt from the remapped fields (Fmt[2] = 0, Type, T9,
         * T8, TH, Length; TC, Attr, LN, TD, EP, AT read as 0: not recorded). */
        uint32_t hdr[4];
        uint32_t prefix; /* 8DW DW1; always 0 for 4DW */

        uint32_t time;          /* the Time field as recorded */
        unsigned int time_bits; /* its width: 11 (4DW) or 32 (8DW) */

        /* 4DW DW0 fields as recorded (0 for 8DW). SO's meaning is not
         * documented; it is kept here and not folded into the header. */
        uint8_t fmt2; /* Fmt[1:0] */
        uint8_t type;
        bool t9, t8, th, so;
        uint16_t length; /* the raw 10-bit Length field */
};

/* Entry size in bytes for @fmt: 16 or 32 (16 for an unknown value). */
size_t ptt_format_entry_size(enum ptt_format fmt);

/* "4DW" / "8DW". */
const char *ptt_format_name(enum ptt_format fmt);

/*
 * ptt_format_detect - the format of a whole AUX buffer, as perf decides it:
 * 8DW when the first little-endian u32 has (v & 0xfffff800) == 0xfffff800,
 * 4DW otherwise, including buffers shorter than 4 bytes.
 */
enum ptt_format ptt_format_detect(const uint8_t *buf, size_t len);

/*
 * ptt_entry_decode - decode the entry at @buf in format @fmt.
 *
 * Returns the bytes consumed (16 or 32) on success, or:
 *   -ENODATA  @len is shorter than one entry (need more bytes);
 *   -ENOMSG   the entry is all zero (the driver zeroes its buffers, a real
 *             TLP header is never all zero): padding, skip it;
 *   -EBADMSG  an 8DW entry without the DW0 marker (lost sync or corrupt).
 *   -EINVAL   @fmt is not a known format.
 * On -ENOMSG and -EBADMSG the caller skips one entry
 * (ptt_format_entry_size(@fmt)) and counts it. @out is zeroed first and holds
 * the raw dwords on -ENOMSG/-EBADMSG.
 * The TLP inside is not checked here: see ptt_entry_tlp().
 */
int ptt_entry_decode(const uint8_t *buf, size_t len, enum ptt_format fmt, struct ptt_entry *out);

/*
 * ptt_entry_tlp - decode the TLP header (and for 8DW a non-zero prefix) of a
 * decoded entry with tlp_decode(). Marks 4DW headers dw0_partial.
 * Returns tlp_decode()'s result (dwords used, or -EBADMSG/-ENODATA).
 */
int ptt_entry_tlp(const struct ptt_entry *e, struct tlp *out);

/*
 * ptt_dword_label - a fixed name for dword @index of an entry: 4DW
 * "Fields" (the remapped DW0), "Header DW1".."Header DW3"; 8DW "Marker",
 * "Prefix", "Header DW0".."Header DW3", "Reserved", "Time". NULL when
 * @index is outside the entry.
 */
const char *ptt_dword_label(enum ptt_format fmt, unsigned int index);

/*
 * ptt_dword_shown_by_perf - whether `perf report -D` prints dword @index:
 * all four for 4DW; for 8DW all but DW0 (marker) and DW6 (reserved).
 */
bool ptt_dword_shown_by_perf(enum ptt_format fmt, unsigned int index);

/*
 * ptt_dword_perf_label - the label `perf report -D` (current perf, kernel-
 * facts §3.3) prints after dword @index of @e, into @buf: for 4DW DW0
 * "Format %x Type %x T9 %x T8 %x TH %x SO %x Length %x Time %x" with the
 * field values, else the fixed label. Returns as snprintf; -EINVAL when
 * @index is outside the entry (buf set to "").
 */
int ptt_dword_perf_label(const struct ptt_entry *e, unsigned int index, char *buf, size_t len);

/*
 * ptt_entry_desc - one line: format, time, and the decoded TLP (tlp_desc),
 * or the raw dwords when the TLP does not decode. Returns as snprintf.
 */
int ptt_entry_desc(const struct ptt_entry *e, char *buf, size_t len);

/* Text for the negative codes these decoders return ("need more data", ...). */
const char *ptt_strerror(int err);

#endif /* PCIESCOPE_PTT_ENTRY_H */
