/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * perf_data.h - a bounded reader for the parts of a perf.data file that a
 * hisi_ptt recording holds, and for raw AUX dumps.
 *
 * Three kinds of input:
 *  - file mode: the 104-byte (or old 72-byte) header with magic PERFILE2,
 *    the attrs section, the data section of records, and the feature
 *    sections after it (of which the auxtrace index, feature bit 18, is
 *    checked against the records it points at);
 *  - pipe mode: a 16-byte header (magic, size 16) followed by records to the
 *    end of the input; attrs arrive as PERF_RECORD_HEADER_ATTR;
 *  - a raw AUX dump: a plain file of PTT buffer bytes, read as one buffer.
 *
 * The parser works on bytes in memory and is pure (no I/O, no allocation),
 * so it can be fuzzed; perf_data_map() is the one helper that touches a
 * file. Every length and offset is checked against the input size before it
 * is used; each record advances by at least 8 bytes, so a walk ends after at
 * most len / 8 steps. Errors carry the byte offset they were found at.
 *
 * Only host-endian (little-endian on every PTT machine) files are read; a
 * byte-swapped magic is refused with its own message.
 */
#ifndef PCIESCOPE_PERF_DATA_H
#define PCIESCOPE_PERF_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* tools/perf/util/auxtrace.h: enum auxtrace_type. */
#define PERF_AUXTRACE_HISI_PTT 6

/* Record types perf writes itself (tools/lib/perf/include/perf/event.h). */
#define PERF_DATA_RECORD_HEADER_ATTR    64
#define PERF_DATA_RECORD_FINISHED_ROUND 68
#define PERF_DATA_RECORD_AUXTRACE_INFO  70
#define PERF_DATA_RECORD_AUXTRACE       71
#define PERF_DATA_RECORD_AUXTRACE_ERROR 72
#define PERF_DATA_RECORD_COMPRESSED     81

/* The feature bit of the auxtrace index (HEADER_AUXTRACE). */
#define PERF_DATA_FEAT_AUXTRACE 18

#define PERF_DATA_MAX_ATTRS 64 /* attrs kept in the summary; more are counted */

enum perf_data_kind {
        PERF_DATA_AUTO = 0, /* perf.data (file or pipe mode) by its magic */
        PERF_DATA_FILE,     /* perf.data, file mode */
        PERF_DATA_PIPE,     /* perf.data, pipe mode */
        PERF_DATA_RAW_AUX,  /* a raw dump of AUX (PTT buffer) bytes */
};

/* One AUXTRACE buffer: the record's fields and the payload after it. */
struct perf_data_buffer {
        uint64_t record_offset;     /* byte offset of the AUXTRACE record in the input */
        uint64_t data_offset;       /* byte offset of the payload */
        uint64_t size;              /* payload bytes */
        uint64_t aux_offset;        /* position in the AUX stream */
        uint64_t reference;         /* perf's unique id of the buffer */
        uint32_t idx;               /* mmap index */
        uint32_t tid;               /* thread (-1 as u32 for a per-CPU event) */
        uint32_t cpu;               /* CPU of the event */
        unsigned int number;        /* 0, 1, ... in input order */
        const unsigned char *bytes; /* @size bytes inside the caller's input */
};

/* One perf_event_attr, as far as an off-line reader cares. */
struct perf_data_attr {
        uint32_t type;
        uint32_t size;
        uint64_t config;
        uint64_t sample_type;
};

/* What a walk found besides the buffers. */
struct perf_data_info {
        enum perf_data_kind kind;
        uint64_t input_size;
        uint64_t data_offset, data_size; /* file mode: the data section */
        size_t attr_count;               /* all attrs seen */
        struct perf_data_attr attrs[PERF_DATA_MAX_ATTRS];
        bool auxtrace_info;       /* an AUXTRACE_INFO record was seen */
        uint32_t auxtrace_type;   /* its type (6 for hisi_ptt) */
        uint64_t ptt_pmu_type;    /* its priv[0]: the hisi_ptt PMU type at record time */
        uint64_t records;         /* records walked, of any type */
        uint64_t skipped;         /* records of types the reader does not use */
        uint64_t buffers;         /* AUXTRACE buffers */
        uint64_t buffer_bytes;    /* their payload bytes */
        uint64_t aux_records;     /* PERF_RECORD_AUX */
        uint64_t aux_bytes;       /* sum of their aux_size */
        uint64_t aux_truncated;   /* PERF_AUX_FLAG_TRUNCATED: the AUX area was full */
        uint64_t aux_overwrite;   /* PERF_AUX_FLAG_OVERWRITE: snapshot mode */
        uint64_t aux_partial;     /* PERF_AUX_FLAG_PARTIAL: a record with a gap */
        uint64_t aux_collision;   /* PERF_AUX_FLAG_COLLISION: sample collided */
        uint64_t lost_records;    /* PERF_RECORD_LOST and LOST_SAMPLES */
        uint64_t lost_events;     /* the events they say were lost */
        uint64_t auxtrace_errors; /* PERF_RECORD_AUXTRACE_ERROR */
        uint64_t index_entries;   /* auxtrace index entries checked (file mode) */
};

/* Where and why a walk stopped. */
struct perf_data_error {
        uint64_t offset; /* byte offset in the input the problem is at */
        char msg[192];   /* what is wrong there, without the file name */
};

/*
 * Called for every AUXTRACE buffer, in input order. A non-zero return stops
 * the walk and perf_data_walk() returns it.
 */
typedef int (*perf_data_buffer_fn)(void *ctx, const struct perf_data_buffer *buf);

/*
 * perf_data_walk - walk @len bytes at @data as @kind (PERF_DATA_AUTO tells
 * file from pipe mode by the header size after the magic), calling @fn (may
 * be NULL) for each AUXTRACE buffer or, for a raw AUX dump, once for the
 * whole input. @info (may be NULL) is filled as far as the walk got.
 *
 * Returns 0, the callback's non-zero value, or a negative errno with @err
 * (may be NULL) saying where:
 *  -EBADMSG      bad magic, truncated header, a section, record or payload
 *                outside the input, record size below 8, an AUXTRACE record
 *                before AUXTRACE_INFO, an auxtrace index entry that points
 *                at no AUXTRACE record;
 *  -EPROTONOSUPPORT  AUXTRACE_INFO of another trace type (Intel PT, SPE...),
 *                a byte-swapped file, or compressed records (perf record -z);
 *  -EINVAL       bad arguments (NULL data with a length, unknown kind).
 */
int perf_data_walk(const void *data, size_t len, enum perf_data_kind kind, perf_data_buffer_fn fn,
                   void *ctx, struct perf_data_info *info, struct perf_data_error *err);

/* "file", "pipe", "raw AUX dump" or "?" */
const char *perf_data_kind_name(enum perf_data_kind kind);

/* The name of an auxtrace type number ("hisi_ptt", "intel_pt", ...), or NULL. */
const char *perf_data_auxtrace_name(uint32_t type);

/* The attr of the hisi_ptt event (attr.type == the PMU type AUXTRACE_INFO
 * recorded), or NULL when the file does not say. */
const struct perf_data_attr *perf_data_ptt_attr(const struct perf_data_info *info);

/* A read-only view of a whole file: mmap()ed, or read into memory for
 * inputs that cannot be mapped (a pipe, or "-" for stdin). */
struct perf_data_map {
        const unsigned char *data;
        size_t len;
        bool mapped; /* munmap() vs free() */
};

/*
 * A pipe, a device or stdin is read into memory, up to @max_size bytes:
 * more is -EFBIG (/dev/zero would otherwise fill the memory). Regular files
 * are mapped whatever their size. Default: PERF_DATA_DEFAULT_MAX_SIZE.
 */
#define PERF_DATA_DEFAULT_MAX_SIZE (4ull << 30) /* 4 GiB */

/* Returns 0 or a negative errno (-EISDIR for a directory, -EFBIG when the
 * file does not fit in memory or a non-regular input exceeds the limit).
 * @m is zeroed on failure. perf_data_map() uses the default limit. */
int perf_data_map(const char *path, struct perf_data_map *m);
int perf_data_map_max(const char *path, uint64_t max_size, struct perf_data_map *m);
void perf_data_unmap(struct perf_data_map *m);

#endif /* PCIESCOPE_PERF_DATA_H */
