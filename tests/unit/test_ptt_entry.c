// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_ptt_entry.c - PTT entry decoding: format detection per buffer, the
 * 4DW remapped DW0 and its rebuilt TLP DW0, 8DW entries with and without a
 * prefix, the dword labels `perf report -D` prints, and rejected slots.
 *
 * Every entry is built here byte by byte (SYNTHETIC: no captured data).
 * Expected header dwords are written out by hand from the PCIe layout.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <errno.h>

#include "ptt_entry.h"
#include "tlp.h"

static void put32(uint8_t *p, uint32_t v)
{
        p[0] = (uint8_t)v;
        p[1] = (uint8_t)(v >> 8);
        p[2] = (uint8_t)(v >> 16);
        p[3] = (uint8_t)(v >> 24);
}

/* 4DW DW0 from the fields, in the order of the kernel doc's drawing. */
static uint32_t dw0_4dw(unsigned int fmt2, unsigned int type, unsigned int t9, unsigned int t8,
                        unsigned int th, unsigned int so, unsigned int len, unsigned int time)
{
        return (uint32_t)fmt2 << 30 | (uint32_t)type << 25 | (uint32_t)t9 << 24 |
               (uint32_t)t8 << 23 | (uint32_t)th << 22 | (uint32_t)so << 21 | (uint32_t)len << 11 |
               (uint32_t)time;
}

static size_t put_dwords(uint8_t *buf, const uint32_t *dw, size_t n)
{
        for (size_t i = 0; i < n; i++)
                put32(buf + 4 * i, dw[i]);
        return 4 * n;
}

struct row_4dw {
        const char *name;
        uint32_t dw[4];
        /* expected */
        uint8_t fmt2, type;
        bool t9, t8, th, so;
        uint16_t length;
        uint32_t time;
        uint32_t hdr0; /* the rebuilt TLP DW0 */
        enum tlp_kind kind;
        uint16_t tag;
};

static const struct row_4dw rows_4dw[] = {
    /* The doc's 8DW example header (MWr 4DW, len 1) as a 4DW entry:
     * DW0 = 11 00000 0 0 0 0 0000000001 11111111111. */
    {"MWr 4DW",
     {0xc0000fff, 0x01001e0f, 0x00000004, 0x02810040},
     3,
     0x00,
     0,
     0,
     0,
     0,
     1,
     0x7ff,
     0x60000001,
     TLP_MWR,
     0x1e},
    /* CplD with every flag: 10 01010 1 1 1 1 0000010000 00000000101. */
    {"CplD all flags",
     {0x95e08005, 0x00100100, 0x03007f40, 0},
     2,
     0x0a,
     1,
     1,
     1,
     1,
     16,
     5,
     0x4a890010,
     TLP_CPLD,
     0x37f},
    /* MRd 3DW, len 0 (1024 DW), time 0. */
    {"MRd 3DW len 0",
     {0x00000000, 0x020001ff, 0x80000000, 0xdeadbeef},
     0,
     0,
     0,
     0,
     0,
     0,
     0,
     0,
     0x00000000,
     TLP_MRD,
     0x01},
    /* Msg to RC from the Type field: 01 10000 ..., len 0. */
    {"Msg", {0x60000003, 0x01000030, 0, 0}, 1, 0x10, 0, 0, 0, 0, 0, 3, 0x30000000, TLP_MSG, 0},
};

static void test_decode_4dw(void **state)
{
        int bad = 0;

        (void)state;
        for (size_t r = 0; r < sizeof(rows_4dw) / sizeof(rows_4dw[0]); r++) {
                const struct row_4dw *w = &rows_4dw[r];
                uint8_t buf[PTT_ENTRY_4DW_BYTES + 5];
                struct ptt_entry e;
                struct tlp t;
                int ret, tret;

                memset(buf, 0xa5, sizeof(buf)); /* bytes past the entry must not matter */
                put_dwords(buf, w->dw, 4);
                memset(&e, 0xff, sizeof(e));
                ret = ptt_entry_decode(buf, sizeof(buf), PTT_FORMAT_4DW, &e);
                tret = ptt_entry_tlp(&e, &t);
                if (ret != 16 || e.format != PTT_FORMAT_4DW || e.fmt2 != w->fmt2 ||
                    e.type != w->type || e.t9 != w->t9 || e.t8 != w->t8 || e.th != w->th ||
                    e.so != w->so || e.length != w->length || e.time != w->time ||
                    e.time_bits != 11 || e.hdr[0] != w->hdr0 || e.hdr[1] != w->dw[1] ||
                    e.hdr[2] != w->dw[2] || e.hdr[3] != w->dw[3] || e.prefix != 0 ||
                    memcmp(e.raw, w->dw, sizeof(w->dw)) != 0 || e.raw[4] != 0) {
                        print_message("# %s: ret %d fmt2 %u type %#x t9 %d t8 %d th %d so %d "
                                      "len %u time %#x hdr0 %#x\n",
                                      w->name, ret, e.fmt2, e.type, e.t9, e.t8, e.th, e.so,
                                      e.length, e.time, e.hdr[0]);
                        bad++;
                        continue;
                }
                if (tret <= 0 || t.kind != w->kind || t.tag != w->tag || !t.dw0_partial) {
                        print_message("# %s: tlp ret %d kind %s tag %#x partial %d\n", w->name,
                                      tret, tlp_kind_name(t.kind), t.tag, t.dw0_partial);
                        bad++;
                }
        }
        assert_int_equal(bad, 0);
}

/* The 8DW entry of the kernel doc's example, with the first time value. */
static const uint32_t doc_8dw[8] = {0xffffffff, 0x00000000, 0x60000001, 0x01001e0f,
                                    0x00000004, 0x02810040, 0x00000000, 0x0004c033};

static void test_decode_8dw(void **state)
{
        uint8_t buf[64];
        struct ptt_entry e;
        struct tlp t;

        (void)state;
        put_dwords(buf, doc_8dw, 8);
        /* The doc prints the header DW0 bytes as 01 00 00 60. */
        assert_int_equal(buf[8], 0x01);
        assert_int_equal(buf[11], 0x60);
        memset(&e, 0xff, sizeof(e));
        assert_int_equal(ptt_entry_decode(buf, 32, PTT_FORMAT_8DW, &e), 32);
        assert_int_equal(e.format, PTT_FORMAT_8DW);
        assert_int_equal(e.prefix, 0);
        assert_int_equal(e.hdr[0], 0x60000001);
        assert_int_equal(e.hdr[1], 0x01001e0f);
        assert_int_equal(e.hdr[2], 0x00000004);
        assert_int_equal(e.hdr[3], 0x02810040);
        assert_int_equal(e.time, 0x4c033);
        assert_int_equal(e.time_bits, 32);
        assert_int_equal(e.fmt2, 0);
        assert_int_equal(e.length, 0);
        assert_false(e.so);
        assert_int_equal(ptt_entry_tlp(&e, &t), 4);
        assert_int_equal(t.kind, TLP_MWR);
        assert_int_equal(t.nprefix, 0);
        assert_false(t.dw0_partial);
        assert_int_equal(t.addr, 0x402810040ull);
        assert_int_equal(t.requester_id, 0x0100);

        /* The same TLP with a PASID prefix; DW0 with reserved bits 0 still
         * carries the marker in [31:11]. */
        {
                uint32_t dw[8];

                memcpy(dw, doc_8dw, sizeof(dw));
                dw[0] = 0xfffff800;
                dw[1] = 0x91c00042;
                put_dwords(buf, dw, 8);
                assert_int_equal(ptt_entry_decode(buf, 40, PTT_FORMAT_8DW, &e), 32);
                assert_int_equal(e.prefix, 0x91c00042);
                assert_int_equal(ptt_entry_tlp(&e, &t), 5);
                assert_true(t.has_pasid);
                assert_int_equal(t.pasid, 0x42);
                assert_true(t.pasid_exec);
                assert_true(t.pasid_priv);
                assert_int_equal(t.kind, TLP_MWR);
        }
}

/* The 8DW entry has one prefix place and one header place: a DW1 that is
 * not a prefix, or a header DW0 that is one, makes the TLP malformed. */
static void test_8dw_prefix_places(void **state)
{
        uint32_t dw[8];
        uint8_t buf[32];
        struct ptt_entry e;
        struct tlp t;

        (void)state;
        memcpy(dw, doc_8dw, sizeof(dw));
        dw[1] = 0x40000001; /* Fmt 010: a header, not a prefix */
        put_dwords(buf, dw, 8);
        assert_int_equal(ptt_entry_decode(buf, 32, PTT_FORMAT_8DW, &e), 32);
        assert_int_equal(ptt_entry_tlp(&e, &t), -EBADMSG);
        assert_int_equal(t.kind, TLP_UNKNOWN);

        memcpy(dw, doc_8dw, sizeof(dw));
        dw[2] = 0x91000001; /* a PASID prefix where header DW0 belongs */
        put_dwords(buf, dw, 8);
        assert_int_equal(ptt_entry_decode(buf, 32, PTT_FORMAT_8DW, &e), 32);
        assert_int_equal(ptt_entry_tlp(&e, &t), -EBADMSG);

        dw[1] = 0x91000002; /* ... even after a real prefix */
        put_dwords(buf, dw, 8);
        assert_int_equal(ptt_entry_decode(buf, 32, PTT_FORMAT_8DW, &e), 32);
        assert_int_equal(ptt_entry_tlp(&e, &t), -EBADMSG);
}

static void test_detect(void **state)
{
        static const struct {
                uint32_t first;
                size_t len;
                enum ptt_format fmt;
        } rows[] = {
            {0xffffffff, 32, PTT_FORMAT_8DW}, {0xfffff800, 32, PTT_FORMAT_8DW},
            {0xfffffabc, 4, PTT_FORMAT_8DW},  {0xfffff7ff, 32, PTT_FORMAT_4DW},
            {0x7ffff800, 32, PTT_FORMAT_4DW}, {0xc0000fff, 16, PTT_FORMAT_4DW},
            {0x00000000, 16, PTT_FORMAT_4DW}, {0xffffffff, 3, PTT_FORMAT_4DW},
            {0xffffffff, 0, PTT_FORMAT_4DW},
        };
        uint8_t buf[32];

        (void)state;
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                memset(buf, 0, sizeof(buf));
                put32(buf, rows[i].first);
                if (ptt_format_detect(buf, rows[i].len) != rows[i].fmt)
                        fail_msg("row %zu: %#x len %zu detected as %s", i, rows[i].first,
                                 rows[i].len, ptt_format_name(ptt_format_detect(buf, rows[i].len)));
        }
        assert_int_equal(ptt_format_detect(NULL, 32), PTT_FORMAT_4DW);
        assert_int_equal(ptt_format_entry_size(PTT_FORMAT_4DW), 16);
        assert_int_equal(ptt_format_entry_size(PTT_FORMAT_8DW), 32);
        assert_string_equal(ptt_format_name(PTT_FORMAT_8DW), "8DW");
        assert_string_equal(ptt_format_name(PTT_FORMAT_4DW), "4DW");
}

static void test_rejects(void **state)
{
        uint8_t buf[64];
        struct ptt_entry e;

        (void)state;
        memset(buf, 0, sizeof(buf));
        /* Short buffers: need more. */
        assert_int_equal(ptt_entry_decode(buf, 15, PTT_FORMAT_4DW, &e), -ENODATA);
        assert_int_equal(ptt_entry_decode(buf, 31, PTT_FORMAT_8DW, &e), -ENODATA);
        assert_int_equal(ptt_entry_decode(buf, 0, PTT_FORMAT_4DW, &e), -ENODATA);
        assert_int_equal(ptt_entry_decode(NULL, 16, PTT_FORMAT_4DW, &e), -ENODATA);
        /* All-zero slots: padding. */
        assert_int_equal(ptt_entry_decode(buf, 16, PTT_FORMAT_4DW, &e), -ENOMSG);
        assert_int_equal(ptt_entry_decode(buf, 32, PTT_FORMAT_8DW, &e), -ENOMSG);
        /* A single set bit anywhere makes a 4DW slot an entry. */
        buf[13] = 0x10;
        assert_int_equal(ptt_entry_decode(buf, 16, PTT_FORMAT_4DW, &e), 16);
        assert_int_equal(e.hdr[3], 0x00001000);
        /* 8DW without the marker: lost sync; the raw dwords are kept. */
        put_dwords(buf, doc_8dw, 8);
        put32(buf, 0x7fffffff);
        assert_int_equal(ptt_entry_decode(buf, 32, PTT_FORMAT_8DW, &e), -EBADMSG);
        assert_int_equal(e.raw[0], 0x7fffffff);
        assert_int_equal(e.raw[2], 0x60000001);
        put32(buf, 0xfffff7ff);
        assert_int_equal(ptt_entry_decode(buf, 32, PTT_FORMAT_8DW, &e), -EBADMSG);
        /* Unknown format value. */
        assert_int_equal(ptt_entry_decode(buf, 32, (enum ptt_format)7, &e), -EINVAL);
        assert_string_equal(ptt_strerror(-ENODATA), "need more data");
        assert_string_equal(ptt_strerror(-EBADMSG), "malformed entry or TLP header");
        assert_non_null(strstr(ptt_strerror(-ENOMSG), "zero"));
}

/* A 4DW entry whose TLP header is reserved decodes as an entry, but its
 * TLP does not: the summariser counts it, the dump still prints it. */
static void test_bad_tlp_in_good_entry(void **state)
{
        uint32_t dw[4] = {dw0_4dw(1, 0x02, 0, 0, 0, 0, 1, 9), 0x01000001, 0, 0}; /* 4DW IORd */
        uint8_t buf[16];
        struct ptt_entry e;
        struct tlp t;
        char text[200];

        (void)state;
        put_dwords(buf, dw, 4);
        assert_int_equal(ptt_entry_decode(buf, 16, PTT_FORMAT_4DW, &e), 16);
        assert_int_equal(ptt_entry_tlp(&e, &t), -EBADMSG);
        assert_int_equal(t.kind, TLP_UNKNOWN);
        assert_true(ptt_entry_desc(&e, text, sizeof(text)) > 0);
        assert_non_null(strstr(text, "bad"));
}

static void test_walk_buffer(void **state)
{
        /* Three 4DW entries, an all-zero slot, one more, and 7 stray bytes. */
        uint32_t dws[5][4] = {
            {dw0_4dw(0, 0x00, 0, 0, 0, 0, 4, 1), 0x01000aff, 0x1000, 0},
            {dw0_4dw(2, 0x0a, 0, 0, 0, 0, 4, 2), 0x00000010, 0x01000a00, 0},
            {dw0_4dw(3, 0x00, 1, 0, 0, 0, 8, 3), 0x02000b0f, 0x1, 0x2000},
            {0, 0, 0, 0},
            {dw0_4dw(1, 0x10, 0, 0, 0, 0, 0, 5), 0x03000020, 0, 0},
        };
        static const enum tlp_kind kinds[5] = {TLP_MRD, TLP_CPLD, TLP_MWR, TLP_UNKNOWN, TLP_MSG};
        uint8_t buf[5 * 16 + 7];
        size_t off = 0, n = 0, empty = 0;

        (void)state;
        memset(buf, 0x11, sizeof(buf));
        for (int i = 0; i < 5; i++)
                put_dwords(buf + 16 * i, dws[i], 4);
        while (off < sizeof(buf)) {
                struct ptt_entry e;
                struct tlp t;
                int ret = ptt_entry_decode(buf + off, sizeof(buf) - off,
                                           ptt_format_detect(buf, sizeof(buf)), &e);

                if (ret == -ENODATA)
                        break;
                if (ret == -ENOMSG) {
                        assert_int_equal(kinds[n], TLP_UNKNOWN);
                        empty++;
                } else {
                        assert_int_equal(ret, 16);
                        assert_true(ptt_entry_tlp(&e, &t) > 0);
                        assert_int_equal(t.kind, kinds[n]);
                        assert_int_equal(e.time, n + 1);
                }
                n++;
                off += 16;
        }
        assert_int_equal(n, 5);
        assert_int_equal(empty, 1);
        assert_int_equal(sizeof(buf) - off, 7);
}

static void test_labels(void **state)
{
        static const char *const want_4dw[] = {"Fields", "Header DW1", "Header DW2", "Header DW3"};
        static const char *const want_8dw[] = {"Marker",     "Prefix",     "Header DW0",
                                               "Header DW1", "Header DW2", "Header DW3",
                                               "Reserved",   "Time"};
        static const bool shown_8dw[] = {false, true, true, true, true, true, false, true};

        (void)state;
        for (unsigned int i = 0; i < 4; i++) {
                assert_string_equal(ptt_dword_label(PTT_FORMAT_4DW, i), want_4dw[i]);
                assert_true(ptt_dword_shown_by_perf(PTT_FORMAT_4DW, i));
        }
        assert_null(ptt_dword_label(PTT_FORMAT_4DW, 4));
        assert_false(ptt_dword_shown_by_perf(PTT_FORMAT_4DW, 4));
        for (unsigned int i = 0; i < 8; i++) {
                assert_string_equal(ptt_dword_label(PTT_FORMAT_8DW, i), want_8dw[i]);
                assert_int_equal(ptt_dword_shown_by_perf(PTT_FORMAT_8DW, i), shown_8dw[i]);
        }
        assert_null(ptt_dword_label(PTT_FORMAT_8DW, 8));
        assert_null(ptt_dword_label((enum ptt_format)3, 0));
}

static void test_perf_labels(void **state)
{
        uint8_t buf[32];
        struct ptt_entry e;
        char text[128];

        (void)state;
        put_dwords(buf, rows_4dw[1].dw, 4);
        assert_int_equal(ptt_entry_decode(buf, 16, PTT_FORMAT_4DW, &e), 16);
        assert_true(ptt_dword_perf_label(&e, 0, text, sizeof(text)) > 0);
        assert_string_equal(text, "Format 2 Type a T9 1 T8 1 TH 1 SO 1 Length 10 Time 5");
        ptt_dword_perf_label(&e, 3, text, sizeof(text));
        assert_string_equal(text, "Header DW3");
        assert_int_equal(ptt_dword_perf_label(&e, 4, text, sizeof(text)), -EINVAL);
        assert_string_equal(text, "");

        put_dwords(buf, doc_8dw, 8);
        assert_int_equal(ptt_entry_decode(buf, 32, PTT_FORMAT_8DW, &e), 32);
        ptt_dword_perf_label(&e, 1, text, sizeof(text));
        assert_string_equal(text, "Prefix");
        ptt_dword_perf_label(&e, 7, text, sizeof(text));
        assert_string_equal(text, "Time");
}

static void test_desc(void **state)
{
        uint8_t buf[32];
        struct ptt_entry e;
        char text[256], small[10];
        int n;

        (void)state;
        put_dwords(buf, doc_8dw, 8);
        assert_int_equal(ptt_entry_decode(buf, 32, PTT_FORMAT_8DW, &e), 32);
        n = ptt_entry_desc(&e, text, sizeof(text));
        assert_true(n > 0 && (size_t)n < sizeof(text));
        assert_non_null(strstr(text, "8DW"));
        assert_non_null(strstr(text, "MWr"));
        assert_non_null(strstr(text, "0x4c033"));
        assert_int_equal(ptt_entry_desc(&e, small, sizeof(small)), n);
        assert_int_equal(strlen(small), sizeof(small) - 1);
}

/* ---- the dump's texts against the snprintf() versions they replaced ----
 * ptt_entry_desc() and the 4DW DW0 label are formatted by hand now; the
 * references are the snprintf() calls they had before. Random entries of
 * both formats (empty, malformed and good ones), and short buffers. */
static int ref_desc(const struct ptt_entry *e, char *buf, size_t len)
{
        struct tlp t;
        char tlp_text[256];
        size_t len_or_0 = buf ? len : 0;

        if (buf && len)
                buf[0] = '\0';
        if (ptt_entry_tlp(e, &t) > 0) {
                tlp_desc(&t, tlp_text, sizeof(tlp_text));
                return snprintf(buf, len_or_0, "%s time %#x%s %s", ptt_format_name(e->format),
                                e->time, e->so ? " so" : "", tlp_text);
        }
        return ptt_entry_desc(e, buf, len); /* the unchanged "bad" texts */
}

static int ref_label(const struct ptt_entry *e, unsigned int index, char *buf, size_t len)
{
        if (buf && len)
                buf[0] = '\0';
        if (e->format == PTT_FORMAT_4DW && index == 0)
                return snprintf(buf, buf ? len : 0,
                                "Format %x Type %x T9 %x T8 %x TH %x SO %x Length %x Time %x",
                                e->fmt2, e->type, e->t9, e->t8, e->th, e->so, e->length, e->time);
        return ptt_dword_perf_label(e, index, buf, len);
}

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint32_t rnd32(void)
{
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        return (uint32_t)(rng >> 16);
}

static void test_texts_match_printf(void **state)
{
        char ours[300], ref[300];

        (void)state;
        for (int round = 0; round < 200000; round++) {
                enum ptt_format fmt = round & 1 ? PTT_FORMAT_8DW : PTT_FORMAT_4DW;
                uint8_t raw[32];
                struct ptt_entry e;
                size_t len = round % 9 == 0 ? rnd32() % 90 : sizeof(ours);

                for (size_t i = 0; i < sizeof(raw); i++)
                        raw[i] = (uint8_t)rnd32();
                if (fmt == PTT_FORMAT_8DW && round % 4)
                        memset(raw, 0xff, 4); /* the marker: mostly good 8DW entries */
                if (round % 6 == 0)
                        memset(raw + 4, 0, 4); /* no prefix; 4DW: DW1 0 */
                if (round % 10 == 0)
                        raw[0] &= 0x80; /* small or zero times */
                if (round % 50 == 0)
                        memset(raw, 0, sizeof(raw));
                ptt_entry_decode(raw, sizeof(raw), fmt, &e);
                memset(ours, 'X', sizeof(ours));
                memset(ref, 'X', sizeof(ref));
                assert_int_equal(ptt_entry_desc(&e, len ? ours : NULL, len),
                                 ref_desc(&e, len ? ref : NULL, len));
                assert_memory_equal(ours, ref, sizeof(ours));
                memset(ours, 'X', sizeof(ours));
                memset(ref, 'X', sizeof(ref));
                assert_int_equal(ptt_dword_perf_label(&e, 0, len ? ours : NULL, len),
                                 ref_label(&e, 0, len ? ref : NULL, len));
                assert_memory_equal(ours, ref, sizeof(ours));
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_decode_4dw),
            cmocka_unit_test(test_decode_8dw),
            cmocka_unit_test(test_8dw_prefix_places),
            cmocka_unit_test(test_detect),
            cmocka_unit_test(test_rejects),
            cmocka_unit_test(test_bad_tlp_in_good_entry),
            cmocka_unit_test(test_walk_buffer),
            cmocka_unit_test(test_labels),
            cmocka_unit_test(test_perf_labels),
            cmocka_unit_test(test_desc),
            cmocka_unit_test(test_texts_match_printf),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
