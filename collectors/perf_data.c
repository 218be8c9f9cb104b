// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * perf_data.c - a bounded perf.data reader for hisi_ptt recordings (file
 * mode, pipe mode) and raw AUX dumps. See perf_data.h for the contract and
 * ../shared/reference/kernel-facts.md §3.4 for the layout.
 *
 * Every read goes through take_*() helpers that check the offset against
 * the end of the input first, so no field is read past what was given.
 * Sizes are u64 in the file; sums are done only after checking each term
 * against what is left, so none of them can wrap.
 */
#define _GNU_SOURCE
#include "perf_data.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* "PERFILE2" read as a little-endian u64, and the same bytes reversed. */
#define PERF_MAGIC2         0x32454c4946524550ULL
#define PERF_MAGIC2_SWAPPED 0x50455246494c4532ULL
/* "PERFFILE": the version-1 format perf stopped writing in 2009. */
#define PERF_MAGIC1 0x454c494646524550ULL

#define FILE_HEADER_SIZE     104 /* struct perf_file_header */
#define FILE_HEADER_OLD_SIZE 72  /* the same without adds_features[] */
#define PIPE_HEADER_SIZE     16  /* magic + size */
#define FEATURE_BITS         256

#define ATTR_SIZE_VER0 64 /* perf_event_attr as first published */
/* The largest attr any perf writes today (VER8); larger ones are refused
 * like perf refuses an attr bigger than its own struct. */
#define ATTR_SIZE_MAX 136

#define RECORD_HEADER_SIZE 8
#define AUXTRACE_SIZE      48 /* header + size, offset, reference, idx, tid, cpu, reserved */
#define AUXTRACE_INFO_MIN  16 /* header + type + reserved */
#define PTT_INFO_SIZE      24 /* ... + priv[0], HISI_PTT_AUXTRACE_PRIV_SIZE = 8 */
#define AUX_RECORD_MIN     32 /* header + aux_offset + aux_size + flags */

/* Kernel record types (include/uapi/linux/perf_event.h). */
#define RECORD_LOST         2
#define RECORD_AUX          11
#define RECORD_LOST_SAMPLES 13
#define RECORD_COMPRESSED2  83 /* newer perf: zstd with a data size field */

/* PERF_RECORD_AUX flags. */
#define AUX_FLAG_TRUNCATED 0x01
#define AUX_FLAG_OVERWRITE 0x02
#define AUX_FLAG_PARTIAL   0x04
#define AUX_FLAG_COLLISION 0x08

struct walker {
        const unsigned char *p;
        size_t len;
        perf_data_buffer_fn fn;
        void *ctx;
        struct perf_data_info *info;
        struct perf_data_error *err;
};

static uint16_t get_u16(const unsigned char *p)
{
        return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get_u32(const unsigned char *p)
{
        return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get_u64(const unsigned char *p)
{
        return (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
}

static int fail(struct walker *w, int code, uint64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Keeps where (@offset) and what (@fmt...) for the caller; returns @code. */
static int fail(struct walker *w, int code, uint64_t offset, const char *fmt, ...)
{
        va_list ap;

        if (w->err) {
                w->err->offset = offset;
                va_start(ap, fmt);
                vsnprintf(w->err->msg, sizeof(w->err->msg), fmt, ap);
                va_end(ap);
        }
        return code;
}

/* Is [off, off + size) inside [0, limit)? Written so nothing can wrap. */
static bool within(uint64_t off, uint64_t size, uint64_t limit)
{
        return off <= limit && size <= limit - off;
}

const char *perf_data_kind_name(enum perf_data_kind kind)
{
        switch (kind) {
        case PERF_DATA_FILE:
                return "file";
        case PERF_DATA_PIPE:
                return "pipe";
        case PERF_DATA_RAW_AUX:
                return "raw AUX dump";
        case PERF_DATA_AUTO:
                break;
        }
        return "?";
}

const char *perf_data_auxtrace_name(uint32_t type)
{
        static const char *const names[] = {
            [1] = "intel_pt",    [2] = "intel_bts", [3] = "cs_etm",  [4] = "arm_spe",
            [5] = "s390_cpumsf", [6] = "hisi_ptt",  [7] = "vpa_dtl",
        };

        return type < sizeof(names) / sizeof(names[0]) ? names[type] : NULL;
}

const struct perf_data_attr *perf_data_ptt_attr(const struct perf_data_info *info)
{
        size_t kept;

        if (!info || !info->auxtrace_info || info->auxtrace_type != PERF_AUXTRACE_HISI_PTT)
                return NULL;
        kept = info->attr_count < PERF_DATA_MAX_ATTRS ? info->attr_count : PERF_DATA_MAX_ATTRS;
        for (size_t i = 0; i < kept; i++)
                if (info->attrs[i].type == info->ptt_pmu_type)
                        return &info->attrs[i];
        return NULL;
}

/* Keeps the attr of @size bytes at @off (already checked to be inside). */
static void keep_attr(struct walker *w, uint64_t off, uint32_t size)
{
        struct perf_data_attr *a;

        if (w->info->attr_count < PERF_DATA_MAX_ATTRS) {
                a = &w->info->attrs[w->info->attr_count];
                a->type = get_u32(w->p + off);
                a->size = size;
                a->config = get_u64(w->p + off + 8);
                a->sample_type = get_u64(w->p + off + 24);
        }
        w->info->attr_count++;
}

/* The size an attr at @off says it has: 0 means the first version. */
static int attr_size_at(struct walker *w, uint64_t off, uint64_t room, uint32_t *size)
{
        uint32_t s;

        if (room < ATTR_SIZE_VER0)
                return fail(w, -EBADMSG, off, "perf_event_attr needs %d bytes, %llu there",
                            ATTR_SIZE_VER0, (unsigned long long)room);
        s = get_u32(w->p + off + 4);
        if (s == 0)
                s = ATTR_SIZE_VER0;
        if (s < ATTR_SIZE_VER0 || s > ATTR_SIZE_MAX || s > room)
                return fail(w, -EBADMSG, off,
                            "perf_event_attr size %u (expected %d..%d within %llu bytes)", s,
                            ATTR_SIZE_VER0, ATTR_SIZE_MAX, (unsigned long long)room);
        *size = s;
        return 0;
}

static int on_header_attr(struct walker *w, uint64_t pos, uint32_t size)
{
        uint32_t asize;
        int err = attr_size_at(w, pos + RECORD_HEADER_SIZE, size - RECORD_HEADER_SIZE, &asize);

        if (err)
                return err;
        keep_attr(w, pos + RECORD_HEADER_SIZE, asize);
        return 0;
}

static int on_auxtrace_info(struct walker *w, uint64_t pos, uint32_t size)
{
        uint32_t type;
        const char *name;

        if (size < AUXTRACE_INFO_MIN)
                return fail(w, -EBADMSG, pos, "AUXTRACE_INFO record of %u bytes (at least %d)",
                            size, AUXTRACE_INFO_MIN);
        type = get_u32(w->p + pos + 8);
        if (type != PERF_AUXTRACE_HISI_PTT) {
                name = perf_data_auxtrace_name(type);
                return fail(w, -EPROTONOSUPPORT, pos,
                            "AUXTRACE_INFO of type %u (%s), not hisi_ptt (%d): not a PCIe "
                            "trace recording",
                            type, name ? name : "unknown", PERF_AUXTRACE_HISI_PTT);
        }
        if (size < PTT_INFO_SIZE)
                return fail(w, -EBADMSG, pos,
                            "hisi_ptt AUXTRACE_INFO record of %u bytes (perf needs %d)", size,
                            PTT_INFO_SIZE);
        w->info->auxtrace_info = true;
        w->info->auxtrace_type = type;
        w->info->ptt_pmu_type = get_u64(w->p + pos + 16);
        return 0;
}

/* An AUXTRACE record at @pos of @size header bytes, inside [.., @end).
 * Its payload follows; *@next is set past it. */
static int on_auxtrace(struct walker *w, uint64_t pos, uint32_t size, uint64_t end, uint64_t *next)
{
        struct perf_data_buffer b;
        const unsigned char *r = w->p + pos;
        uint64_t payload = pos + size;
        int ret;

        if (size < AUXTRACE_SIZE)
                return fail(w, -EBADMSG, pos, "AUXTRACE record of %u bytes (at least %d)", size,
                            AUXTRACE_SIZE);
        if (!w->info->auxtrace_info)
                return fail(w, -EBADMSG, pos,
                            "AUXTRACE record before any AUXTRACE_INFO: the trace type is "
                            "unknown (perf refuses this too)");
        memset(&b, 0, sizeof(b));
        b.record_offset = pos;
        b.data_offset = payload;
        b.size = get_u64(r + 8);
        b.aux_offset = get_u64(r + 16);
        b.reference = get_u64(r + 24);
        b.idx = get_u32(r + 32);
        b.tid = get_u32(r + 36);
        b.cpu = get_u32(r + 40);
        if (!within(payload, b.size, end))
                return fail(w, -EBADMSG, pos,
                            "AUXTRACE payload of %llu bytes at byte %llu runs past the end of "
                            "the data (%llu bytes left)",
                            (unsigned long long)b.size, (unsigned long long)payload,
                            (unsigned long long)(end - payload));
        b.bytes = w->p + payload;
        b.number = (unsigned int)w->info->buffers;
        w->info->buffers++;
        w->info->buffer_bytes += b.size;
        *next = payload + b.size;
        if (w->fn) {
                ret = w->fn(w->ctx, &b);
                if (ret)
                        return ret;
        }
        return 0;
}

static int on_aux(struct walker *w, uint64_t pos, uint32_t size)
{
        uint64_t flags;

        if (size < AUX_RECORD_MIN)
                return fail(w, -EBADMSG, pos, "AUX record of %u bytes (at least %d)", size,
                            AUX_RECORD_MIN);
        flags = get_u64(w->p + pos + 24);
        w->info->aux_records++;
        w->info->aux_bytes += get_u64(w->p + pos + 16);
        w->info->aux_truncated += !!(flags & AUX_FLAG_TRUNCATED);
        w->info->aux_overwrite += !!(flags & AUX_FLAG_OVERWRITE);
        w->info->aux_partial += !!(flags & AUX_FLAG_PARTIAL);
        w->info->aux_collision += !!(flags & AUX_FLAG_COLLISION);
        return 0;
}

/* One record at @pos of @type and @size; *@next is where the next starts. */
static int on_record(struct walker *w, uint64_t pos, uint32_t type, uint32_t size, uint64_t end,
                     uint64_t *next)
{
        *next = pos + size;
        switch (type) {
        case PERF_DATA_RECORD_HEADER_ATTR:
                return on_header_attr(w, pos, size);
        case PERF_DATA_RECORD_AUXTRACE_INFO:
                return on_auxtrace_info(w, pos, size);
        case PERF_DATA_RECORD_AUXTRACE:
                return on_auxtrace(w, pos, size, end, next);
        case RECORD_AUX:
                return on_aux(w, pos, size);
        case RECORD_LOST:
                if (size >= 24) {
                        w->info->lost_records++;
                        w->info->lost_events += get_u64(w->p + pos + 16);
                }
                return 0;
        case RECORD_LOST_SAMPLES:
                if (size >= 16) {
                        w->info->lost_records++;
                        w->info->lost_events += get_u64(w->p + pos + 8);
                }
                return 0;
        case PERF_DATA_RECORD_AUXTRACE_ERROR:
                w->info->auxtrace_errors++;
                return 0;
        case PERF_DATA_RECORD_COMPRESSED:
        case RECORD_COMPRESSED2:
                return fail(w, -EPROTONOSUPPORT, pos,
                            "compressed records (perf record -z): decompress first with "
                            "`perf inject -i FILE -o PLAIN`");
        default:
                w->info->skipped++;
                return 0;
        }
}

/* Walks the records in [@start, @end). Each step moves at least 8 bytes. */
static int walk_records(struct walker *w, uint64_t start, uint64_t end)
{
        uint64_t pos = start, next;
        uint32_t type;
        uint16_t size;
        int err;

        while (pos < end) {
                if (end - pos < RECORD_HEADER_SIZE)
                        return fail(w, -EBADMSG, pos,
                                    "truncated record header: %llu bytes left, 8 needed",
                                    (unsigned long long)(end - pos));
                type = get_u32(w->p + pos);
                size = get_u16(w->p + pos + 6);
                if (size < RECORD_HEADER_SIZE)
                        return fail(w, -EBADMSG, pos,
                                    "record of type %u has size %u (less than its 8-byte header)",
                                    type, size);
                if (size > end - pos)
                        return fail(w, -EBADMSG, pos,
                                    "record of type %u and %u bytes runs past the end of the "
                                    "data (%llu bytes left)",
                                    type, size, (unsigned long long)(end - pos));
                w->info->records++;
                err = on_record(w, pos, type, size, end, &next);
                if (err)
                        return err;
                pos = next;
        }
        return 0;
}

static int parse_file_attrs(struct walker *w, uint64_t attr_size, uint64_t off, uint64_t size)
{
        uint64_t n;
        uint32_t asize;
        int err;

        if (attr_size < ATTR_SIZE_VER0 + 16)
                return fail(w, -EBADMSG, 16, "attr_size %llu (an attr and its ids need %d)",
                            (unsigned long long)attr_size, ATTR_SIZE_VER0 + 16);
        n = size / attr_size;
        for (uint64_t i = 0; i < n; i++) {
                uint64_t a = off + i * attr_size, ids_off, ids_size;

                err = attr_size_at(w, a, attr_size - 16, &asize);
                if (err)
                        return err;
                ids_off = get_u64(w->p + a + asize);
                ids_size = get_u64(w->p + a + asize + 8);
                if (!within(ids_off, ids_size, w->len))
                        return fail(w, -EBADMSG, a + asize,
                                    "ids of attr %llu: %llu bytes at %llu, past the end of the "
                                    "file (%zu bytes)",
                                    (unsigned long long)i, (unsigned long long)ids_size,
                                    (unsigned long long)ids_off, w->len);
                keep_attr(w, a, asize);
        }
        return 0;
}

/* Every auxtrace index entry must point at an AUXTRACE record inside the
 * data section whose record + payload is as long as the entry says: perf
 * decodes through the index in file mode, so a wrong one means perf and a
 * record walk would see different data. */
static int check_auxtrace_index(struct walker *w, uint64_t off, uint64_t size)
{
        uint64_t nr, d0 = w->info->data_offset, d1 = d0 + w->info->data_size;

        if (size < 8)
                return fail(w, -EBADMSG, off, "auxtrace index of %llu bytes has no count",
                            (unsigned long long)size);
        nr = get_u64(w->p + off);
        if (nr > (size - 8) / 16)
                return fail(w, -EBADMSG, off,
                            "auxtrace index says %llu entries, its %llu bytes hold %llu",
                            (unsigned long long)nr, (unsigned long long)size,
                            (unsigned long long)((size - 8) / 16));
        for (uint64_t i = 0; i < nr; i++) {
                uint64_t e = off + 8 + 16 * i;
                uint64_t at = get_u64(w->p + e), sz = get_u64(w->p + e + 8);
                bool ok = at >= d0 && within(at, AUXTRACE_SIZE, d1) &&
                          get_u32(w->p + at) == PERF_DATA_RECORD_AUXTRACE;
                uint64_t rec = ok ? get_u16(w->p + at + 6) : 0;

                ok = ok && rec >= AUXTRACE_SIZE && within(at, rec, d1) &&
                     get_u64(w->p + at + 8) <= UINT64_MAX - rec &&
                     rec + get_u64(w->p + at + 8) == sz;
                if (!ok)
                        return fail(w, -EBADMSG, e,
                                    "auxtrace index entry %llu (byte %llu, %llu bytes) is not "
                                    "an AUXTRACE record of that size in the data section",
                                    (unsigned long long)i, (unsigned long long)at,
                                    (unsigned long long)sz);
                w->info->index_entries++;
        }
        return 0;
}

static int parse_features(struct walker *w, const unsigned char *bitmap)
{
        uint64_t table = w->info->data_offset + w->info->data_size;
        unsigned int count = 0;
        int err;

        for (unsigned int bit = 0; bit < FEATURE_BITS; bit++)
                count += (bitmap[bit / 8] >> (bit % 8)) & 1;
        if (!count)
                return 0;
        if (!within(table, (uint64_t)count * 16, w->len))
                return fail(w, -EBADMSG, table,
                            "feature table of %u sections (%u bytes) runs past the end of the "
                            "file (%zu bytes)",
                            count, count * 16, w->len);
        for (unsigned int bit = 0, i = 0; bit < FEATURE_BITS; bit++) {
                uint64_t e, off, size;

                if (!((bitmap[bit / 8] >> (bit % 8)) & 1))
                        continue;
                e = table + 16 * i++;
                off = get_u64(w->p + e);
                size = get_u64(w->p + e + 8);
                if (!within(off, size, w->len))
                        return fail(w, -EBADMSG, e,
                                    "feature %u: %llu bytes at %llu, past the end of the file "
                                    "(%zu bytes)",
                                    bit, (unsigned long long)size, (unsigned long long)off, w->len);
                if (bit == PERF_DATA_FEAT_AUXTRACE) {
                        err = check_auxtrace_index(w, off, size);
                        if (err)
                                return err;
                }
        }
        return 0;
}

static int walk_file(struct walker *w, uint64_t hsize)
{
        static const unsigned char no_features[FEATURE_BITS / 8];
        const unsigned char *h = w->p;
        uint64_t attr_size, aoff, asize, doff, dsize;
        int err;

        if (hsize != FILE_HEADER_SIZE && hsize != FILE_HEADER_OLD_SIZE)
                return fail(w, -EBADMSG, 8,
                            "header size %llu (expected %d, %d or %d for pipe mode)",
                            (unsigned long long)hsize, FILE_HEADER_SIZE, FILE_HEADER_OLD_SIZE,
                            PIPE_HEADER_SIZE);
        if (w->len < hsize)
                return fail(w, -EBADMSG, w->len, "truncated header: %zu of %llu bytes", w->len,
                            (unsigned long long)hsize);
        attr_size = get_u64(h + 16);
        aoff = get_u64(h + 24);
        asize = get_u64(h + 32);
        doff = get_u64(h + 40);
        dsize = get_u64(h + 48);
        if (!within(aoff, asize, w->len) || (asize && aoff < hsize))
                return fail(w, -EBADMSG, 24,
                            "attrs section of %llu bytes at %llu is outside the file (%zu bytes) "
                            "or inside the header",
                            (unsigned long long)asize, (unsigned long long)aoff, w->len);
        if (!within(doff, dsize, w->len) || doff < hsize)
                return fail(w, -EBADMSG, 40,
                            "data section of %llu bytes at %llu is outside the file (%zu bytes) "
                            "or inside the header",
                            (unsigned long long)dsize, (unsigned long long)doff, w->len);
        if (asize && aoff < doff + dsize && doff < aoff + asize)
                return fail(w, -EBADMSG, 24,
                            "attrs section (%llu..%llu) overlaps the data "
                            "section (%llu..%llu)",
                            (unsigned long long)aoff, (unsigned long long)(aoff + asize),
                            (unsigned long long)doff, (unsigned long long)(doff + dsize));
        w->info->data_offset = doff;
        w->info->data_size = dsize;
        if (asize) {
                err = parse_file_attrs(w, attr_size, aoff, asize);
                if (err)
                        return err;
        }
        err = parse_features(w, hsize == FILE_HEADER_SIZE ? h + 72 : no_features);
        if (err)
                return err;
        return walk_records(w, doff, doff + dsize);
}

static int walk_raw(struct walker *w)
{
        struct perf_data_buffer b;

        if (!w->len)
                return 0;
        memset(&b, 0, sizeof(b));
        b.size = w->len;
        b.bytes = w->p;
        b.tid = UINT32_MAX;
        b.cpu = UINT32_MAX;
        w->info->buffers = 1;
        w->info->buffer_bytes = w->len;
        return w->fn ? w->fn(w->ctx, &b) : 0;
}

int perf_data_walk(const void *data, size_t len, enum perf_data_kind kind, perf_data_buffer_fn fn,
                   void *ctx, struct perf_data_info *info, struct perf_data_error *err)
{
        struct perf_data_info scratch;
        struct walker w = {.p = data, .len = len, .fn = fn, .ctx = ctx, .err = err};
        uint64_t magic, hsize;

        w.info = info ? info : &scratch;
        memset(w.info, 0, sizeof(*w.info));
        w.info->input_size = len;
        if (err)
                memset(err, 0, sizeof(*err));
        if ((!data && len) || kind > PERF_DATA_RAW_AUX)
                return fail(&w, -EINVAL, 0, "bad arguments");
        if (kind == PERF_DATA_RAW_AUX) {
                w.info->kind = kind;
                return walk_raw(&w);
        }
        if (len < 8)
                return fail(&w, -EBADMSG, len, "truncated header: %zu bytes, no magic", len);
        magic = get_u64(w.p);
        if (magic == PERF_MAGIC2_SWAPPED)
                return fail(&w, -EPROTONOSUPPORT, 0,
                            "a byte-swapped (other-endian) perf.data: not supported");
        if (magic != PERF_MAGIC2)
                return fail(&w, -EBADMSG, 0,
                            "bad magic %016llx (a perf.data starts with "
                            "PERFILE2%s)",
                            (unsigned long long)magic,
                            magic == PERF_MAGIC1 ? "; this is the version-1 format" : "");
        if (len < 16)
                return fail(&w, -EBADMSG, len, "truncated header: %zu bytes, no header size", len);
        hsize = get_u64(w.p + 8);
        if (hsize == PIPE_HEADER_SIZE) {
                if (kind == PERF_DATA_FILE)
                        return fail(&w, -EBADMSG, 8,
                                    "a pipe-mode header where file mode was "
                                    "expected");
                w.info->kind = PERF_DATA_PIPE;
                return walk_records(&w, PIPE_HEADER_SIZE, len);
        }
        if (kind == PERF_DATA_PIPE)
                return fail(&w, -EBADMSG, 8, "header size %llu where pipe mode (16) was expected",
                            (unsigned long long)hsize);
        w.info->kind = PERF_DATA_FILE;
        return walk_file(&w, hsize);
}

/* Reads all of @fd into memory, for inputs that cannot be mapped; more
 * than @max bytes is -EFBIG. */
static int read_all(int fd, uint64_t max, struct perf_data_map *m)
{
        size_t cap = 1 << 16, len = 0;
        unsigned char *buf = malloc(cap), *bigger;
        ssize_t n;

        if (!buf)
                return -ENOMEM;
        for (;;) {
                if (len == cap) {
                        if (cap > SIZE_MAX / 2) {
                                free(buf);
                                return -EFBIG;
                        }
                        bigger = realloc(buf, cap * 2);
                        if (!bigger) {
                                free(buf);
                                return -ENOMEM;
                        }
                        buf = bigger;
                        cap *= 2;
                }
                n = read(fd, buf + len, cap - len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        int e = -errno;

                        free(buf);
                        return e;
                }
                if (n == 0)
                        break;
                len += (size_t)n;
                if (len > max) {
                        free(buf);
                        return -EFBIG;
                }
        }
        m->data = buf;
        m->len = len;
        m->mapped = false;
        return 0;
}

int perf_data_map(const char *path, struct perf_data_map *m)
{
        return perf_data_map_max(path, PERF_DATA_DEFAULT_MAX_SIZE, m);
}

int perf_data_map_max(const char *path, uint64_t max_size, struct perf_data_map *m)
{
        struct stat st;
        void *p;
        int fd, err = 0;

        memset(m, 0, sizeof(*m));
        if (!strcmp(path, "-"))
                return read_all(STDIN_FILENO, max_size, m);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0) {
                err = -errno;
        } else if (S_ISDIR(st.st_mode)) {
                err = -EISDIR;
        } else if (!S_ISREG(st.st_mode)) {
                err = read_all(fd, max_size, m);
        } else if ((uint64_t)st.st_size > SIZE_MAX) {
                err = -EFBIG;
        } else if (st.st_size > 0) {
                /* Populated up front: the whole file is read once, in order,
                 * and one mapping call costs less than a page fault per
                 * fault-around window (about 1,000 for 64 MiB). */
                p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
                if (p == MAP_FAILED) {
                        err = -errno;
                } else {
                        m->data = p;
                        m->len = (size_t)st.st_size;
                        m->mapped = true;
                }
        }
        close(fd);
        if (err)
                memset(m, 0, sizeof(*m));
        return err;
}

void perf_data_unmap(struct perf_data_map *m)
{
        if (!m)
                return;
        if (m->mapped)
                munmap((void *)m->data, m->len);
        else
                free((void *)m->data);
        memset(m, 0, sizeof(*m));
}
