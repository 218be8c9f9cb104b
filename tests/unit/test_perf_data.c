// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_perf_data.c - the perf.data reader on files built here byte by byte
 * from the documented layout (kernel-facts.md §3.4): file mode with and
 * without the auxtrace index, pipe mode, raw AUX dumps; every malformed
 * input the reader must name (bad magic, truncated header, record size 0,
 * a record or payload past the end, another trace type, no AUXTRACE_INFO,
 * compressed records, bad sections); every truncation and random byte
 * flips of a valid file (no crash, no overread under ASan); the file
 * mapping helper.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perf_data.h"

#define PMU_TYPE  48
#define ATTR_SIZE 128
#define NBUF_MAX  8
#define CONFIG    (0x80001ULL | 2ULL << 20 | 7ULL << 24)

/* ---- building perf.data images ---- */

struct img {
        unsigned char *p;
        size_t len, cap;
        /* where the builder put things */
        size_t info_at, aux_at[NBUF_MAX], auxtrace_at[NBUF_MAX], payload_at[NBUF_MAX];
        size_t data_at, data_end, index_entry_at;
        size_t nbuf;
};

static void put(struct img *m, const void *src, size_t n)
{
        if (m->len + n > m->cap) {
                m->cap = (m->len + n) * 2 + 256;
                m->p = realloc(m->p, m->cap);
                assert_non_null(m->p);
        }
        memcpy(m->p + m->len, src, n);
        m->len += n;
}

static void put_u32(struct img *m, uint32_t v)
{
        unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                              (unsigned char)(v >> 24)};

        put(m, b, 4);
}

static void put_u64(struct img *m, uint64_t v)
{
        put_u32(m, (uint32_t)v);
        put_u32(m, (uint32_t)(v >> 32));
}

static void set_u16(struct img *m, size_t at, uint16_t v)
{
        m->p[at] = (unsigned char)v;
        m->p[at + 1] = (unsigned char)(v >> 8);
}

static void set_u32(struct img *m, size_t at, uint32_t v)
{
        for (int i = 0; i < 4; i++)
                m->p[at + i] = (unsigned char)(v >> (8 * i));
}

static void set_u64(struct img *m, size_t at, uint64_t v)
{
        set_u32(m, at, (uint32_t)v);
        set_u32(m, at + 4, (uint32_t)(v >> 32));
}

static void put_header(struct img *m, uint32_t type, uint16_t size)
{
        put_u32(m, type);
        put_u32(m, (uint32_t)size << 16); /* misc 0, size */
}

static void put_attr(struct img *m, uint32_t type, uint64_t config)
{
        unsigned char a[ATTR_SIZE];

        memset(a, 0, sizeof(a));
        for (int i = 0; i < 4; i++) {
                a[i] = (unsigned char)(type >> (8 * i));
                a[4 + i] = (unsigned char)(ATTR_SIZE >> (8 * i));
        }
        for (int i = 0; i < 8; i++)
                a[8 + i] = (unsigned char)(config >> (8 * i));
        put(m, a, sizeof(a));
}

/* Payload byte k of buffer i: recognisable, differs between buffers. */
static unsigned char pattern(size_t i, size_t k)
{
        return (unsigned char)(i * 31 + k * 7 + 1);
}

static size_t payload_size(size_t i)
{
        return 32 * (i + 1);
}

/* AUXTRACE_INFO, then per buffer a PERF_RECORD_AUX (flags @aux_flags[i]),
 * the AUXTRACE record and its payload; a COMM and a LOST record to skip or
 * count; FINISHED_ROUND. */
static void put_records(struct img *m, size_t nbuf, const uint64_t *aux_flags)
{
        uint64_t aux_pos = 0;

        m->nbuf = nbuf;
        m->data_at = m->len;
        m->info_at = m->len;
        put_header(m, PERF_DATA_RECORD_AUXTRACE_INFO, 24);
        put_u32(m, PERF_AUXTRACE_HISI_PTT);
        put_u32(m, 0);
        put_u64(m, PMU_TYPE);
        put_header(m, 3, 24); /* PERF_RECORD_COMM: pid, tid, "perf\0\0\0\0" */
        put_u64(m, 1);
        put(m, "perf\0\0\0\0", 8);
        for (size_t i = 0; i < nbuf; i++) {
                m->aux_at[i] = m->len;
                put_header(m, 11, 32); /* PERF_RECORD_AUX */
                put_u64(m, aux_pos);
                put_u64(m, payload_size(i));
                put_u64(m, aux_flags ? aux_flags[i] : 0);
                m->auxtrace_at[i] = m->len;
                put_header(m, PERF_DATA_RECORD_AUXTRACE, 48);
                put_u64(m, payload_size(i));
                put_u64(m, aux_pos);
                put_u64(m, 0x1000 + i);
                put_u32(m, 0);
                put_u32(m, UINT32_MAX);
                put_u32(m, (uint32_t)i);
                put_u32(m, 0);
                m->payload_at[i] = m->len;
                for (size_t k = 0; k < payload_size(i); k++)
                        put(m, (unsigned char[]){pattern(i, k)}, 1);
                aux_pos += payload_size(i);
        }
        put_header(m, 2, 24); /* PERF_RECORD_LOST: id, lost = 5 */
        put_u64(m, 9);
        put_u64(m, 5);
        put_header(m, PERF_DATA_RECORD_FINISHED_ROUND, 8);
        m->data_end = m->len;
}

static void build_file(struct img *m, size_t nbuf, bool index, const uint64_t *aux_flags)
{
        memset(m, 0, sizeof(*m));
        put(m, "PERFILE2", 8);
        put_u64(m, 104);
        put_u64(m, ATTR_SIZE + 16);
        put_u64(m, 104);
        put_u64(m, 2 * (ATTR_SIZE + 16)); /* the ptt event and a dummy */
        put_u64(m, 0);                    /* data, set below */
        put_u64(m, 0);
        put_u64(m, 0);
        put_u64(m, 0);
        put_u64(m, index ? 1ULL << PERF_DATA_FEAT_AUXTRACE : 0);
        put_u64(m, 0);
        put_u64(m, 0);
        put_u64(m, 0);
        put_attr(m, PMU_TYPE, CONFIG);
        put_u64(m, 0);
        put_u64(m, 0);
        put_attr(m, 1, 9); /* software dummy */
        put_u64(m, 0);
        put_u64(m, 0);
        set_u64(m, 40, m->len);
        put_records(m, nbuf, aux_flags);
        set_u64(m, 48, m->data_end - m->data_at);
        if (index) {
                size_t table = m->len;

                put_u64(m, table + 16);
                put_u64(m, 8 + 16 * nbuf);
                put_u64(m, nbuf);
                m->index_entry_at = m->len;
                for (size_t i = 0; i < nbuf; i++) {
                        put_u64(m, m->auxtrace_at[i]);
                        put_u64(m, 48 + payload_size(i));
                }
        }
}

static void build_pipe(struct img *m, size_t nbuf)
{
        memset(m, 0, sizeof(*m));
        put(m, "PERFILE2", 8);
        put_u64(m, 16);
        put_header(m, PERF_DATA_RECORD_HEADER_ATTR, 8 + ATTR_SIZE + 8);
        put_attr(m, PMU_TYPE, CONFIG | 1ULL << 32);
        put_u64(m, 77); /* one id */
        put_records(m, nbuf, NULL);
}

/* ---- collecting what the walk hands out ---- */

struct seen {
        size_t n;
        struct perf_data_buffer b[4 * NBUF_MAX]; /* room for flipped record types */
        int stop_after;                          /* return 7 after this many; 0 = never */
};

static int collect(void *ctx, const struct perf_data_buffer *b)
{
        struct seen *s = ctx;

        assert_true(s->n < 4 * NBUF_MAX);
        s->b[s->n++] = *b;
        return s->stop_after && (int)s->n == s->stop_after ? 7 : 0;
}

static void check_buffers(const struct img *m, const struct seen *s)
{
        assert_int_equal(s->n, m->nbuf);
        for (size_t i = 0; i < s->n; i++) {
                const struct perf_data_buffer *b = &s->b[i];

                assert_int_equal(b->number, i);
                assert_int_equal(b->record_offset, m->auxtrace_at[i]);
                assert_int_equal(b->data_offset, m->payload_at[i]);
                assert_int_equal(b->size, payload_size(i));
                assert_int_equal(b->reference, 0x1000 + i);
                assert_int_equal(b->cpu, i);
                assert_int_equal(b->tid, UINT32_MAX);
                assert_int_equal(b->idx, 0);
                assert_ptr_equal(b->bytes, m->p + m->payload_at[i]);
                for (size_t k = 0; k < b->size; k++)
                        assert_int_equal(b->bytes[k], pattern(i, k));
        }
}

/* Walks @m expecting @code at @offset with @text in the message. */
static void expect_error(const struct img *m, size_t len, enum perf_data_kind kind, int code,
                         uint64_t offset, const char *text)
{
        struct perf_data_error err;
        struct perf_data_info info;
        struct seen s = {0};
        int r = perf_data_walk(m->p, len, kind, collect, &s, &info, &err);

        if (r != code || err.offset != offset || !strstr(err.msg, text))
                fail_msg("expected %d at %llu with \"%s\", got %d at %llu: %s", code,
                         (unsigned long long)offset, text, r, (unsigned long long)err.offset,
                         err.msg);
}

/* ---- good inputs ---- */

static void file_mode(void **state)
{
        uint64_t flags[] = {0x1, 0x4, 0x1 | 0x8, 0x2};
        struct perf_data_info info;
        struct perf_data_error err;
        struct seen s = {0};
        struct img m;
        const struct perf_data_attr *a;

        (void)state;
        build_file(&m, 4, false, flags);
        assert_int_equal(perf_data_walk(m.p, m.len, PERF_DATA_AUTO, collect, &s, &info, &err), 0);
        check_buffers(&m, &s);
        assert_int_equal(info.kind, PERF_DATA_FILE);
        assert_int_equal(info.input_size, m.len);
        assert_int_equal(info.data_offset, m.data_at);
        assert_int_equal(info.data_size, m.data_end - m.data_at);
        assert_int_equal(info.attr_count, 2);
        assert_true(info.auxtrace_info);
        assert_int_equal(info.auxtrace_type, PERF_AUXTRACE_HISI_PTT);
        assert_int_equal(info.ptt_pmu_type, PMU_TYPE);
        assert_int_equal(info.buffers, 4);
        assert_int_equal(info.buffer_bytes, 32 + 64 + 96 + 128);
        /* info, comm, 4 x (aux, auxtrace), lost, finished round */
        assert_int_equal(info.records, 12);
        assert_int_equal(info.skipped, 2); /* comm and finished round */
        assert_int_equal(info.aux_records, 4);
        assert_int_equal(info.aux_bytes, 32 + 64 + 96 + 128);
        assert_int_equal(info.aux_truncated, 2);
        assert_int_equal(info.aux_partial, 1);
        assert_int_equal(info.aux_collision, 1);
        assert_int_equal(info.aux_overwrite, 1);
        assert_int_equal(info.lost_records, 1);
        assert_int_equal(info.lost_events, 5);
        assert_int_equal(info.index_entries, 0);
        a = perf_data_ptt_attr(&info);
        assert_non_null(a);
        assert_int_equal(a->type, PMU_TYPE);
        assert_int_equal(a->size, ATTR_SIZE);
        assert_int_equal(a->config, CONFIG);
        /* Asking for file mode explicitly reads the same. */
        s.n = 0;
        assert_int_equal(perf_data_walk(m.p, m.len, PERF_DATA_FILE, collect, &s, NULL, NULL), 0);
        check_buffers(&m, &s);
        free(m.p);
}

static void file_mode_with_index(void **state)
{
        struct perf_data_info info;
        struct seen s = {0};
        struct img m;

        (void)state;
        build_file(&m, 3, true, NULL);
        assert_int_equal(perf_data_walk(m.p, m.len, PERF_DATA_AUTO, collect, &s, &info, NULL), 0);
        check_buffers(&m, &s);
        assert_int_equal(info.index_entries, 3);
        /* An entry that points into a payload is refused, naming the entry. */
        set_u64(&m, m.index_entry_at + 16, m.payload_at[1]);
        expect_error(&m, m.len, PERF_DATA_AUTO, -EBADMSG, m.index_entry_at + 16,
                     "auxtrace index entry 1");
        /* The right record with the wrong size too. */
        set_u64(&m, m.index_entry_at + 16, m.auxtrace_at[1]);
        set_u64(&m, m.index_entry_at + 24, 48 + payload_size(1) + 8);
        expect_error(&m, m.len, PERF_DATA_AUTO, -EBADMSG, m.index_entry_at + 16,
                     "not an AUXTRACE record of that size");
        /* More entries than the section holds. */
        set_u64(&m, m.index_entry_at - 8, 1000);
        expect_error(&m, m.len, PERF_DATA_AUTO, -EBADMSG, m.index_entry_at - 8, "1000 entries");
        free(m.p);
}

static void pipe_mode(void **state)
{
        struct perf_data_info info;
        struct seen s = {0};
        struct img m;
        const struct perf_data_attr *a;

        (void)state;
        build_pipe(&m, 3);
        assert_int_equal(perf_data_walk(m.p, m.len, PERF_DATA_AUTO, collect, &s, &info, NULL), 0);
        check_buffers(&m, &s);
        assert_int_equal(info.kind, PERF_DATA_PIPE);
        assert_int_equal(info.attr_count, 1);
        a = perf_data_ptt_attr(&info);
        assert_non_null(a);
        assert_int_equal(a->config, CONFIG | 1ULL << 32);
        assert_int_equal(info.buffers, 3);
        s.n = 0;
        assert_int_equal(perf_data_walk(m.p, m.len, PERF_DATA_PIPE, collect, &s, NULL, NULL), 0);
        assert_int_equal(s.n, 3);
        /* The wrong mode asked for is an error at the header size. */
        expect_error(&m, m.len, PERF_DATA_FILE, -EBADMSG, 8, "pipe-mode header");
        free(m.p);
        build_file(&m, 1, false, NULL);
        expect_error(&m, m.len, PERF_DATA_PIPE, -EBADMSG, 8, "header size 104");
        free(m.p);
}

static void raw_aux_dump(void **state)
{
        unsigned char raw[100];
        struct perf_data_info info;
        struct seen s = {0};

        (void)state;
        for (size_t i = 0; i < sizeof(raw); i++)
                raw[i] = (unsigned char)i;
        /* A raw dump is taken as it is, even if it looked like a perf.data. */
        memcpy(raw, "PERFILE2", 8);
        assert_int_equal(
            perf_data_walk(raw, sizeof(raw), PERF_DATA_RAW_AUX, collect, &s, &info, NULL), 0);
        assert_int_equal(s.n, 1);
        assert_ptr_equal(s.b[0].bytes, raw);
        assert_int_equal(s.b[0].size, sizeof(raw));
        assert_int_equal(info.kind, PERF_DATA_RAW_AUX);
        assert_int_equal(info.buffers, 1);
        s.n = 0;
        assert_int_equal(perf_data_walk(raw, 0, PERF_DATA_RAW_AUX, collect, &s, &info, NULL), 0);
        assert_int_equal(s.n, 0);
        assert_int_equal(info.buffers, 0);
}

static void callback_stops_the_walk(void **state)
{
        struct seen s = {.stop_after = 2};
        struct img m;

        (void)state;
        build_file(&m, 4, false, NULL);
        assert_int_equal(perf_data_walk(m.p, m.len, PERF_DATA_AUTO, collect, &s, NULL, NULL), 7);
        assert_int_equal(s.n, 2);
        free(m.p);
}

static void no_ptt_attr(void **state)
{
        struct perf_data_info info;
        struct img m;

        (void)state;
        build_file(&m, 1, false, NULL);
        set_u64(&m, m.info_at + 16, PMU_TYPE + 1); /* no attr has this type */
        assert_int_equal(perf_data_walk(m.p, m.len, PERF_DATA_AUTO, NULL, NULL, &info, NULL), 0);
        assert_null(perf_data_ptt_attr(&info));
        assert_null(perf_data_ptt_attr(NULL));
        free(m.p);
}

/* ---- malformed inputs ---- */

static void bad_magic(void **state)
{
        struct img m;

        (void)state;
        build_file(&m, 1, false, NULL);
        m.p[0] = 'X';
        expect_error(&m, m.len, PERF_DATA_AUTO, -EBADMSG, 0, "bad magic");
        memcpy(m.p, "PERFFILE", 8);
        expect_error(&m, m.len, PERF_DATA_AUTO, -EBADMSG, 0, "version-1");
        memcpy(m.p, "2ELIFREP", 8);
        expect_error(&m, m.len, PERF_DATA_AUTO, -EPROTONOSUPPORT, 0, "byte-swapped");
        free(m.p);
}

static void truncated_header(void **state)
{
        struct img m;

        (void)state;
        build_file(&m, 1, false, NULL);
        expect_error(&m, 0, PERF_DATA_AUTO, -EBADMSG, 0, "truncated header");
        expect_error(&m, 7, PERF_DATA_AUTO, -EBADMSG, 7, "no magic");
        expect_error(&m, 12, PERF_DATA_AUTO, -EBADMSG, 12, "no header size");
        expect_error(&m, 50, PERF_DATA_AUTO, -EBADMSG, 50, "truncated header: 50 of 104");
        set_u64(&m, 8, 80);
        expect_error(&m, m.len, PERF_DATA_AUTO, -EBADMSG, 8, "header size 80");
        free(m.p);
}

static void bad_sections(void **state)
{
        struct img m;

        (void)state;
        build_file(&m, 1, false, NULL);
        set_u64(&m, 48, m.len); /* data runs past the file */
        expect_error(&m, m.len, PERF_DATA_AUTO, -EBADMSG, 40, "data section");
        set_u64(&m, 48, UINT64_MAX - 8); /* and would wrap */
        expect_error(&m, m.len, PERF_DATA_AUTO, -EBADMSG, 40, "data section");
        set_u64(&m, 48, m.data_end - m.data_at);
        set_u64(&m, 40, 64); /* inside the header */
        expect_error(&m, m.len, PERF_DATA_AUTO, -EBADMSG, 40, "inside the header");
        set_u64(&m, 40, m.data_at);
        set_u64(&m, 24, m.data_at - 8); /* attrs overlap the data */
        set_u64(&m, 32, ATTR_SIZE + 16);
        expect_error(&m, m.len, PERF_DATA_AUTO, -EBADMSG, 24, "overlaps");
        set_u64(&m, 24, 104);
        set_u64(&m, 32, 2 * (ATTR_SIZE + 16));
        set_u64(&m, 16, 40); /* attr_size too small for an attr */
        expect_error(&m, m.len, PERF_DATA_AUTO, -EBADMSG, 16, "attr_size 40");
        set_u64(&m, 16, ATTR_SIZE + 16);
        set_u32(&m, 104 + 4, 4000); /* attr.size larger than any perf's */
        expect_error(&m, m.len, PERF_DATA_AUTO, -EBADMSG, 104, "perf_event_attr size 4000");
        set_u32(&m, 104 + 4, ATTR_SIZE);
        set_u64(&m, 104 + ATTR_SIZE + 8, 64); /* ids past the end */
        set_u64(&m, 104 + ATTR_SIZE, m.len);
        expect_error(&m, m.len, PERF_DATA_AUTO, -EBADMSG, 104 + ATTR_SIZE, "ids of attr 0");
        set_u64(&m, 104 + ATTR_SIZE, 0);
        set_u64(&m, 104 + ATTR_SIZE + 8, 0);
        /* A feature bit with no table after the data section. */
        set_u64(&m, 72, 1ULL << 3);
        expect_error(&m, m.len, PERF_DATA_AUTO, -EBADMSG, m.data_end, "feature table");
        free(m.p);
}

static void record_size_zero(void **state)
{
        struct img m;

        (void)state;
        build_file(&m, 2, false, NULL);
        set_u16(&m, m.aux_at[1] + 6, 0);
        expect_error(&m, m.len, PERF_DATA_AUTO, -EBADMSG, m.aux_at[1], "has size 0");
        set_u16(&m, m.aux_at[1] + 6, 4);
        expect_error(&m, m.len, PERF_DATA_AUTO, -EBADMSG, m.aux_at[1], "has size 4");
        free(m.p);
        build_pipe(&m, 2);
        set_u16(&m, m.info_at + 6, 0);
        expect_error(&m, m.len, PERF_DATA_AUTO, -EBADMSG, m.info_at, "has size 0");
        free(m.p);
}

static void record_past_end(void **state)
{
        struct img m;

        (void)state;
        build_file(&m, 2, false, NULL);
        set_u16(&m, m.data_end - 8 + 6, 64); /* FINISHED_ROUND says 64 bytes */
        expect_error(&m, m.len, PERF_DATA_AUTO, -EBADMSG, m.data_end - 8, "runs past the end");
        free(m.p);
        /* Pipe mode: the stream ends inside a record header, then inside a
         * record. */
        build_pipe(&m, 2);
        expect_error(&m, m.len - 4, PERF_DATA_AUTO, -EBADMSG, m.len - 8, "truncated record header");
        expect_error(&m, m.info_at + 20, PERF_DATA_AUTO, -EBADMSG, m.info_at, "runs past the end");
        free(m.p);
}

static void payload_past_end(void **state)
{
        struct seen s = {0};
        struct img m;

        (void)state;
        build_file(&m, 3, false, NULL);
        set_u64(&m, m.auxtrace_at[2] + 8, 1ULL << 40);
        expect_error(&m, m.len, PERF_DATA_AUTO, -EBADMSG, m.auxtrace_at[2], "AUXTRACE payload");
        set_u64(&m, m.auxtrace_at[2] + 8, UINT64_MAX); /* would wrap */
        expect_error(&m, m.len, PERF_DATA_AUTO, -EBADMSG, m.auxtrace_at[2], "AUXTRACE payload");
        free(m.p);
        build_pipe(&m, 3); /* the stream ends inside the last payload */
        assert_int_equal(
            perf_data_walk(m.p, m.payload_at[2] + 10, PERF_DATA_AUTO, collect, &s, NULL, NULL),
            -EBADMSG);
        assert_int_equal(s.n, 2); /* the whole buffers before it were handed out */
        expect_error(&m, m.payload_at[2] + 10, PERF_DATA_AUTO, -EBADMSG, m.auxtrace_at[2],
                     "10 bytes left");
        free(m.p);
}

static void wrong_auxtrace_type(void **state)
{
        struct img m;

        (void)state;
        build_file(&m, 1, false, NULL);
        set_u32(&m, m.info_at + 8, 4);
        expect_error(&m, m.len, PERF_DATA_AUTO, -EPROTONOSUPPORT, m.info_at,
                     "type 4 (arm_spe), not hisi_ptt (6)");
        set_u32(&m, m.info_at + 8, 99);
        expect_error(&m, m.len, PERF_DATA_AUTO, -EPROTONOSUPPORT, m.info_at, "type 99 (unknown)");
        free(m.p);
        build_pipe(&m, 1);
        set_u32(&m, m.info_at + 8, 1);
        expect_error(&m, m.len, PERF_DATA_AUTO, -EPROTONOSUPPORT, m.info_at, "intel_pt");
        free(m.p);
}

static void short_records(void **state)
{
        struct img m;

        (void)state;
        build_file(&m, 1, false, NULL);
        /* An AUXTRACE_INFO too short for hisi_ptt's priv[0]. */
        set_u16(&m, m.info_at + 6, 16);
        expect_error(&m, m.len, PERF_DATA_AUTO, -EBADMSG, m.info_at, "perf needs 24");
        free(m.p);
        build_file(&m, 1, false, NULL);
        set_u16(&m, m.auxtrace_at[0] + 6, 40);
        expect_error(&m, m.len, PERF_DATA_AUTO, -EBADMSG, m.auxtrace_at[0],
                     "AUXTRACE record of 40");
        set_u16(&m, m.auxtrace_at[0] + 6, 48);
        set_u16(&m, m.aux_at[0] + 6, 16);
        expect_error(&m, m.len, PERF_DATA_AUTO, -EBADMSG, m.aux_at[0], "AUX record of 16");
        free(m.p);
}

static void auxtrace_before_info(void **state)
{
        struct img m;

        (void)state;
        build_file(&m, 2, false, NULL);
        set_u32(&m, m.info_at, PERF_DATA_RECORD_FINISHED_ROUND); /* the info is gone */
        expect_error(&m, m.len, PERF_DATA_AUTO, -EBADMSG, m.auxtrace_at[0], "before any");
        free(m.p);
}

static void compressed(void **state)
{
        struct img m;

        (void)state;
        build_file(&m, 1, false, NULL);
        set_u32(&m, m.aux_at[0], PERF_DATA_RECORD_COMPRESSED);
        expect_error(&m, m.len, PERF_DATA_AUTO, -EPROTONOSUPPORT, m.aux_at[0], "perf inject");
        free(m.p);
}

static void bad_arguments(void **state)
{
        struct perf_data_error err;

        (void)state;
        assert_int_equal(perf_data_walk(NULL, 8, PERF_DATA_AUTO, NULL, NULL, NULL, &err), -EINVAL);
        assert_int_equal(perf_data_walk("x", 1, (enum perf_data_kind)9, NULL, NULL, NULL, NULL),
                         -EINVAL);
        assert_int_equal(perf_data_walk(NULL, 0, PERF_DATA_RAW_AUX, NULL, NULL, NULL, NULL), 0);
        assert_string_equal(perf_data_kind_name(PERF_DATA_PIPE), "pipe");
        assert_string_equal(perf_data_auxtrace_name(6), "hisi_ptt");
        assert_null(perf_data_auxtrace_name(0));
        assert_null(perf_data_auxtrace_name(1000));
}

/* Every prefix of a valid file is either the whole file (0) or an error
 * at an offset inside what was given: never a read past it (ASan), never
 * a hang. In pipe mode the prefixes that end on a record boundary are
 * valid shorter streams. */
static void every_truncation(void **state)
{
        struct perf_data_error err;
        struct img m;

        (void)state;
        for (int pipe = 0; pipe < 2; pipe++) {
                if (pipe)
                        build_pipe(&m, 3);
                else
                        build_file(&m, 3, true, NULL);
                for (size_t len = 0; len < m.len; len++) {
                        unsigned char *copy = malloc(len ? len : 1);
                        int r;

                        assert_non_null(copy);
                        memcpy(copy, m.p, len);
                        r = perf_data_walk(copy, len, PERF_DATA_AUTO, NULL, NULL, NULL, &err);
                        if (!pipe)
                                assert_int_equal(r, -EBADMSG);
                        else if (r)
                                assert_int_equal(r, -EBADMSG);
                        if (r)
                                assert_true(err.offset <= len);
                        free(copy);
                }
                free(m.p);
        }
}

/* Random byte flips: any result, but a bounded walk that reads only what it
 * was given (the buffer is an exact-size heap copy for ASan). */
static void random_flips(void **state)
{
        uint64_t x = 0x9e3779b97f4a7c15ULL;
        struct perf_data_info info;
        struct perf_data_error err;
        struct seen s;
        struct img m;

        (void)state;
        for (int round = 0; round < 3000; round++) {
                unsigned char *copy;
                int r;

                if (round % 2)
                        build_pipe(&m, 3);
                else
                        build_file(&m, 3, round % 4 == 0, NULL);
                copy = malloc(m.len);
                assert_non_null(copy);
                memcpy(copy, m.p, m.len);
                for (int f = 0; f < 1 + round % 5; f++) {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        copy[x % m.len] ^= (unsigned char)(1u << (x >> 60 & 7));
                }
                memset(&s, 0, sizeof(s));
                r = perf_data_walk(copy, m.len, PERF_DATA_AUTO, collect, &s, &info, &err);
                assert_true(r <= 0);
                if (r)
                        assert_true(err.offset <= m.len && err.msg[0]);
                for (size_t i = 0; i < s.n; i++)
                        assert_true(s.b[i].bytes >= copy &&
                                    s.b[i].bytes + s.b[i].size <= copy + m.len);
                free(copy);
                free(m.p);
        }
}

/* ---- the file helper ---- */

static void map_files(void **state)
{
        char dir[] = "/tmp/test_perf_data.XXXXXX", path[64];
        struct perf_data_map map;
        struct img m;
        int fds[2], saved;
        FILE *f;

        (void)state;
        assert_non_null(mkdtemp(dir));
        build_file(&m, 2, false, NULL);
        snprintf(path, sizeof(path), "%s/p.data", dir);
        f = fopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(m.p, 1, m.len, f), m.len);
        fclose(f);
        assert_int_equal(perf_data_map(path, &map), 0);
        assert_true(map.mapped);
        assert_int_equal(map.len, m.len);
        assert_memory_equal(map.data, m.p, m.len);
        perf_data_unmap(&map);
        assert_null(map.data);
        assert_int_equal(perf_data_map(dir, &map), -EISDIR);
        assert_null(map.data);
        snprintf(path, sizeof(path), "%s/missing", dir);
        assert_int_equal(perf_data_map(path, &map), -ENOENT);
        snprintf(path, sizeof(path), "%s/empty", dir);
        f = fopen(path, "wb");
        assert_non_null(f);
        fclose(f);
        assert_int_equal(perf_data_map(path, &map), 0);
        assert_int_equal(map.len, 0);
        perf_data_unmap(&map);
        unlink(path);
        snprintf(path, sizeof(path), "%s/p.data", dir);
        unlink(path);
        rmdir(dir);

        /* "-" reads stdin into memory (a pipe cannot be mapped). */
        assert_int_equal(pipe(fds), 0);
        assert_int_equal(write(fds[1], m.p, m.len), (ssize_t)m.len);
        close(fds[1]);
        saved = dup(STDIN_FILENO);
        dup2(fds[0], STDIN_FILENO);
        close(fds[0]);
        assert_int_equal(perf_data_map("-", &map), 0);
        dup2(saved, STDIN_FILENO);
        close(saved);
        assert_false(map.mapped);
        assert_int_equal(map.len, m.len);
        assert_memory_equal(map.data, m.p, m.len);
        perf_data_unmap(&map);
        perf_data_unmap(NULL);

        /* A device is read only up to the limit (/dev/zero never ends). */
        assert_int_equal(perf_data_map_max("/dev/zero", 1 << 20, &map), -EFBIG);
        assert_null(map.data);
        /* A pipe of exactly the limit is read, one byte less is refused. */
        for (int over = 0; over < 2; over++) {
                assert_int_equal(pipe(fds), 0);
                assert_int_equal(write(fds[1], m.p, m.len), (ssize_t)m.len);
                close(fds[1]);
                saved = dup(STDIN_FILENO);
                dup2(fds[0], STDIN_FILENO);
                close(fds[0]);
                assert_int_equal(perf_data_map_max("-", m.len - (size_t)over, &map),
                                 over ? -EFBIG : 0);
                dup2(saved, STDIN_FILENO);
                close(saved);
                assert_int_equal(map.len, over ? 0 : m.len);
                perf_data_unmap(&map);
        }
        free(m.p);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(file_mode),
            cmocka_unit_test(file_mode_with_index),
            cmocka_unit_test(pipe_mode),
            cmocka_unit_test(raw_aux_dump),
            cmocka_unit_test(callback_stops_the_walk),
            cmocka_unit_test(no_ptt_attr),
            cmocka_unit_test(bad_magic),
            cmocka_unit_test(truncated_header),
            cmocka_unit_test(bad_sections),
            cmocka_unit_test(record_size_zero),
            cmocka_unit_test(record_past_end),
            cmocka_unit_test(payload_past_end),
            cmocka_unit_test(wrong_auxtrace_type),
            cmocka_unit_test(short_records),
            cmocka_unit_test(auxtrace_before_info),
            cmocka_unit_test(compressed),
            cmocka_unit_test(bad_arguments),
            cmocka_unit_test(every_truncation),
            cmocka_unit_test(random_flips),
            cmocka_unit_test(map_files),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
