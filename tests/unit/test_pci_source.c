// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_pci_source.c - BDF text, and configuration space through libpci's
 * dump and sysfs methods under the guard that turns libpci's fatal errors
 * into -EIO.
 *
 * The dump tests compare every byte the source hands out with an
 * independent reading of the same `lspci -xxxx` text done here. Broken
 * dumps and sysfs trees are written into a mkdtemp() directory.
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
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pci/pci.h>

#include "pci_dump_ref.h"
#include "pci_ids_ref.h"
#include "pci_source.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#ifndef TOP_SRCDIR
#define TOP_SRCDIR "."
#endif
#define PCIDUMP     TOP_SRCDIR "/tests/fixtures/pcidump/"
#define HASWELL     PCIDUMP "pciutils-haswell-e-rootport-and-connectx3.lspci-vvxxxx.txt"
#define X58_MACHINE PCIDUMP "pciutils-whole-machine-x58-asus-p6t6.lspci-xxxx.txt"
#undef PCI_IDS /* libpci's pci.h defines it too */
#define PCI_IDS "/usr/share/misc/pci.ids"

/* ---- pci_addr ---- */

static const struct {
        const char *text;
        int ret;
        struct pci_addr addr;
        const char *canonical;
} parse_rows[] = {
    {"0000:3b:00.0", 0, {0x0000, 0x3b, 0x00, 0}, "0000:3b:00.0"},
    {"3b:00.0", 0, {0x0000, 0x3b, 0x00, 0}, "0000:3b:00.0"},
    {"3B:1F.7", 0, {0x0000, 0x3b, 0x1f, 7}, "0000:3b:1f.7"},
    {"0002:01:00.0", 0, {0x0002, 0x01, 0x00, 0}, "0002:01:00.0"},
    {"10000:e1:00.1", 0, {0x10000, 0xe1, 0x00, 1}, "10000:e1:00.1"},
    {"ffffffff:ff:1f.7", 0, {0xffffffffu, 0xff, 0x1f, 7}, "ffffffff:ff:1f.7"},
    {"0:0:0.0", 0, {0, 0, 0, 0}, "0000:00:00.0"},
    {"", -EINVAL, {0}, NULL},
    {"3b", -EINVAL, {0}, NULL},
    {"3b:00", -EINVAL, {0}, NULL},
    {"3b:00.", -EINVAL, {0}, NULL},
    {"3b:00.8", -EINVAL, {0}, NULL},
    {"3b:20.0", -EINVAL, {0}, NULL},
    {"100:00.0", -EINVAL, {0}, NULL},
    {"0000:100:00.0", -EINVAL, {0}, NULL},
    {"0000:3b:20.0", -EINVAL, {0}, NULL},
    {"0000:3b:00.8", -EINVAL, {0}, NULL},
    {"0000:3b:00.0x", -EINVAL, {0}, NULL},
    {"0000:3b:00.0 ", -EINVAL, {0}, NULL},
    {"3b:00.0\n", -EINVAL, {0}, NULL},
    {" 3b:00.0", -EINVAL, {0}, NULL},
    {"x:00.0", -EINVAL, {0}, NULL},
    {"-1:00.0", -EINVAL, {0}, NULL},
    {"+3b:00.0", -EINVAL, {0}, NULL},
    {"3b:+1.0", -EINVAL, {0}, NULL},
    {"3b::00.0", -EINVAL, {0}, NULL},
    {"0000:3b:00:00.0", -EINVAL, {0}, NULL},
    {"3b:00:0", -EINVAL, {0}, NULL},
    {"3b.00.0", -EINVAL, {0}, NULL},
    {"000000001:00:00.0", -EINVAL, {0}, NULL}, /* 9 digits */
    {"100000000:00:00.0", -EINVAL, {0}, NULL},
    {"*:00.0", -EINVAL, {0}, NULL},
};

static void test_addr_parse_format(void **state)
{
        int bad = 0;

        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(parse_rows); i++) {
                struct pci_addr addr;
                char text[PCI_BDF_LEN];
                int ret;

                memset(&addr, 0xff, sizeof(addr));
                ret = pci_addr_parse(parse_rows[i].text, &addr);
                if (ret != parse_rows[i].ret) {
                        print_message("# '%s': returned %d, expected %d\n", parse_rows[i].text, ret,
                                      parse_rows[i].ret);
                        bad++;
                        continue;
                }
                if (ret)
                        continue;
                if (pci_addr_compare(&addr, &parse_rows[i].addr) ||
                    addr.domain != parse_rows[i].addr.domain) {
                        print_message("# '%s': parsed %x:%x:%x.%x\n", parse_rows[i].text,
                                      addr.domain, addr.bus, addr.dev, addr.func);
                        bad++;
                }
                memset(text, 0xff, sizeof(text));
                pci_addr_format(&addr, text);
                if (!memchr(text, '\0', sizeof(text)) || strcmp(text, parse_rows[i].canonical)) {
                        print_message("# '%s': formatted '%.*s', expected '%s'\n",
                                      parse_rows[i].text, (int)sizeof(text), text,
                                      parse_rows[i].canonical);
                        bad++;
                }
        }
        assert_int_equal(bad, 0);
}

/* format(parse(format(a))) for addresses across the whole range. */
static void test_addr_round_trip(void **state)
{
        static const uint32_t domains[] = {0, 1, 0xffff, 0x10000, 0x12345678, 0xffffffffu};
        int bad = 0;

        (void)state;
        for (size_t d = 0; d < ARRAY_SIZE(domains); d++) {
                for (unsigned int bus = 0; bus < 256; bus += 17) {
                        for (unsigned int dev = 0; dev < 32; dev += 7) {
                                for (unsigned int func = 0; func < 8; func += 3) {
                                        struct pci_addr a = {domains[d], (uint8_t)bus, (uint8_t)dev,
                                                             (uint8_t)func};
                                        struct pci_addr b;
                                        char text[PCI_BDF_LEN];

                                        pci_addr_format(&a, text);
                                        memset(&b, 0xff, sizeof(b));
                                        if (pci_addr_parse(text, &b) || pci_addr_compare(&a, &b)) {
                                                print_message("# round trip of '%s' failed\n",
                                                              text);
                                                bad++;
                                        }
                                }
                        }
                }
        }
        assert_int_equal(bad, 0);
}

static int compare_for_qsort(const void *a, const void *b)
{
        return pci_addr_compare(a, b);
}

static void test_addr_compare(void **state)
{
        /* In the expected order. */
        static const struct pci_addr sorted[] = {
            {0, 0x00, 0x00, 0},      {0, 0x00, 0x00, 1}, {0, 0x00, 0x00, 7},     {0, 0x00, 0x01, 0},
            {0, 0x00, 0x1f, 7},      {0, 0x01, 0x00, 0}, {0, 0xff, 0x1f, 7},     {1, 0x00, 0x00, 0},
            {0xffff, 0xff, 0x1f, 7}, {0x10000, 0, 0, 0}, {0xffffffffu, 0, 0, 0},
        };
        struct pci_addr shuffled[ARRAY_SIZE(sorted)];
        size_t n = ARRAY_SIZE(sorted);

        (void)state;
        for (size_t i = 0; i < n; i++) {
                for (size_t j = 0; j < n; j++) {
                        int c = pci_addr_compare(&sorted[i], &sorted[j]);
                        int want = i < j ? -1 : i > j ? 1 : 0;

                        if ((c < 0 ? -1 : c > 0 ? 1 : 0) != want)
                                print_message("# compare(%zu, %zu) = %d, expected sign %d\n", i, j,
                                              c, want);
                        assert_int_equal(c < 0 ? -1 : c > 0 ? 1 : 0, want);
                }
        }
        /* Reverse, then sort back. */
        for (size_t i = 0; i < n; i++)
                shuffled[i] = sorted[n - 1 - i];
        qsort(shuffled, n, sizeof(shuffled[0]), compare_for_qsort);
        for (size_t i = 0; i < n; i++)
                assert_int_equal(pci_addr_compare(&shuffled[i], &sorted[i]), 0);
}

/* ---- an independent reader of lspci -x text, for comparison ---- */

struct ref_dev {
        struct pci_addr addr;
        size_t len;
        uint8_t cfg[4096];
};

struct ref_dump {
        size_t count;
        struct ref_dev devs[64];
};

/* Device headers "bb:dd.f " or "dddd:bb:dd.f ", then "<hex offset>: xx xx ..." lines.
 * Good enough for the well-formed pciutils dumps this test reads. */
static int ref_load(const char *path, struct ref_dump *ref)
{
        FILE *f = fopen(path, "r");
        char line[512];
        struct ref_dev *cur = NULL;

        if (!f)
                return -errno;
        memset(ref, 0, sizeof(*ref));
        while (fgets(line, sizeof(line), f)) {
                char bdf[32];
                unsigned int off;
                int n;

                if (sscanf(line, "%31s", bdf) == 1 && strchr(bdf, '.') && strchr(bdf, ':') &&
                    line[strlen(bdf)] == ' ' && ref->count < ARRAY_SIZE(ref->devs)) {
                        struct pci_addr addr;

                        if (pci_addr_parse(bdf, &addr) == 0) {
                                cur = &ref->devs[ref->count++];
                                cur->addr = addr;
                                continue;
                        }
                }
                if (line[0] == '\n' || line[0] == '\t' || line[0] == ' ') {
                        if (line[0] == '\n')
                                cur = NULL;
                        continue;
                }
                if (cur && sscanf(line, "%x: %n", &off, &n) == 1 && off < 4096) {
                        const char *p = line + n;
                        unsigned int byte;
                        int used;

                        while (off < 4096 && sscanf(p, "%2x%n", &byte, &used) == 1) {
                                cur->cfg[off++] = (uint8_t)byte;
                                p += used;
                        }
                        if (off > cur->len)
                                cur->len = off;
                }
        }
        fclose(f);
        return 0;
}

static const struct ref_dev *ref_find(const struct ref_dump *ref, const struct pci_addr *addr)
{
        for (size_t i = 0; i < ref->count; i++)
                if (!pci_addr_compare(&ref->devs[i].addr, addr))
                        return &ref->devs[i];
        return NULL;
}

/* ---- visitors ---- */

struct seen {
        struct pci_addr addr;
        size_t len;
        uint8_t head[8];
};

struct collect {
        size_t calls;
        int stop_at; /* 1-based call that returns stop_ret; 0: never */
        int stop_ret;
        const struct ref_dump *ref; /* compare every byte when set */
        int mismatches;
        struct seen seen[64];
};

static int collect_visit(void *ctx, const struct pci_addr *addr, const uint8_t *cfg, size_t cfg_len)
{
        struct collect *c = ctx;

        if (c->calls < ARRAY_SIZE(c->seen)) {
                struct seen *s = &c->seen[c->calls];

                s->addr = *addr;
                s->len = cfg_len;
                memcpy(s->head, cfg, sizeof(s->head));
        }
        if (c->ref) {
                const struct ref_dev *r = ref_find(c->ref, addr);
                char bdf[PCI_BDF_LEN];

                pci_addr_format(addr, bdf);
                if (!r) {
                        print_message("# %s: not in the dump\n", bdf);
                        c->mismatches++;
                } else if (r->len != cfg_len) {
                        print_message("# %s: %zu bytes, the dump has %zu\n", bdf, cfg_len, r->len);
                        c->mismatches++;
                } else if (memcmp(r->cfg, cfg, cfg_len)) {
                        for (size_t i = 0; i < cfg_len; i++) {
                                if (r->cfg[i] != cfg[i]) {
                                        print_message("# %s: byte %#zx = %02x, the dump has "
                                                      "%02x\n",
                                                      bdf, i, cfg[i], r->cfg[i]);
                                        break;
                                }
                        }
                        c->mismatches++;
                }
        }
        c->calls++;
        if (c->stop_at && (int)c->calls == c->stop_at)
                return c->stop_ret;
        return 0;
}

static const struct seen *find_seen(const struct collect *c, const char *bdf)
{
        struct pci_addr addr;

        if (pci_addr_parse(bdf, &addr))
                return NULL;
        for (size_t i = 0; i < c->calls && i < ARRAY_SIZE(c->seen); i++)
                if (!pci_addr_compare(&c->seen[i].addr, &addr))
                        return &c->seen[i];
        return NULL;
}

static struct collect col;
static struct ref_dump ref;

/* ---- dump access ---- */

static void test_dump_haswell(void **state)
{
        struct pci_source *src = NULL;
        const struct seen *rp, *nic;

        (void)state;
        assert_int_equal(ref_load(HASWELL, &ref), 0);
        assert_int_equal(ref.count, 2);
        assert_int_equal(pci_source_open_dump(HASWELL, &src), 0);
        assert_non_null(src);
        assert_string_equal(pci_source_method(src), "dump");
        memset(&col, 0, sizeof(col));
        col.ref = &ref;
        assert_int_equal(pci_source_scan(src, collect_visit, &col), 0);
        assert_string_equal(pci_source_error(src), "");
        assert_int_equal(col.calls, 2);
        assert_int_equal(col.mismatches, 0);

        rp = find_seen(&col, "0000:00:02.0");
        nic = find_seen(&col, "0000:03:00.0");
        assert_non_null(rp);
        assert_non_null(nic);
        assert_int_equal(rp->len, 4096);
        assert_int_equal(nic->len, 4096);
        assert_memory_equal(rp->head, "\x86\x80\x04\x2f", 4);  /* 8086:2f04 */
        assert_memory_equal(nic->head, "\xb3\x15\x07\x10", 4); /* 15b3:1007 */

        /* A second scan of the same source gives the same answer. */
        memset(&col, 0, sizeof(col));
        col.ref = &ref;
        assert_int_equal(pci_source_scan(src, collect_visit, &col), 0);
        assert_int_equal(col.calls, 2);
        assert_int_equal(col.mismatches, 0);
        pci_source_close(src);
}

static void test_dump_whole_machine(void **state)
{
        struct pci_source *src = NULL;
        size_t n256 = 0, n4096 = 0;
        const struct seen *smbus;

        (void)state;
        assert_int_equal(ref_load(X58_MACHINE, &ref), 0);
        assert_int_equal(ref.count, 53);
        assert_int_equal(pci_source_open_dump(X58_MACHINE, &src), 0);
        memset(&col, 0, sizeof(col));
        col.ref = &ref;
        assert_int_equal(pci_source_scan(src, collect_visit, &col), 0);
        assert_int_equal(col.calls, 53);
        assert_int_equal(col.mismatches, 0);
        for (size_t i = 0; i < col.calls; i++) {
                n256 += col.seen[i].len == 256;
                n4096 += col.seen[i].len == 4096;
        }
        /* 34 conventional-space functions, 19 with extended space. */
        assert_int_equal(n256, 34);
        assert_int_equal(n4096, 19);
        /* The ICH10 SMBus controller: 256 bytes only. */
        smbus = find_seen(&col, "00:1f.3");
        assert_non_null(smbus);
        assert_int_equal(smbus->len, 256);
        assert_memory_equal(smbus->head, "\x86\x80\x30\x3a", 4);
        pci_source_close(src);
}

static void test_dump_visitor_stops(void **state)
{
        struct pci_source *src = NULL;

        (void)state;
        assert_int_equal(pci_source_open_dump(X58_MACHINE, &src), 0);
        memset(&col, 0, sizeof(col));
        col.stop_at = 1;
        col.stop_ret = 42;
        assert_int_equal(pci_source_scan(src, collect_visit, &col), 42);
        assert_int_equal(col.calls, 1);

        memset(&col, 0, sizeof(col));
        col.stop_at = 5;
        col.stop_ret = -EINTR;
        assert_int_equal(pci_source_scan(src, collect_visit, &col), -EINTR);
        assert_int_equal(col.calls, 5);
        assert_string_equal(pci_source_error(src), "");
        pci_source_close(src);
}

/* ---- a temporary directory ---- */

struct tmp {
        char dir[64];
        char path[256];
};

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void)st;
        (void)flag;
        (void)ftw;
        return remove(path);
}

static int tmp_setup(void **state)
{
        struct tmp *t = calloc(1, sizeof(*t));

        if (!t)
                return -1;
        snprintf(t->dir, sizeof(t->dir), "/tmp/test_pci_source.XXXXXX");
        if (!mkdtemp(t->dir)) {
                free(t);
                return -1;
        }
        *state = t;
        return 0;
}

static int tmp_teardown(void **state)
{
        struct tmp *t = *state;

        nftw(t->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        free(t);
        return 0;
}

/* Writes @len bytes at @rel, creating parent directories; returns the path. */
static const char *tmp_file(struct tmp *t, const char *rel, const void *data, size_t len)
{
        char dir[256];
        int fd;

        snprintf(t->path, sizeof(t->path), "%s/%s", t->dir, rel);
        snprintf(dir, sizeof(dir), "%s", t->path);
        for (char *p = dir + strlen(t->dir) + 1; *p; p++) {
                if (*p == '/') {
                        *p = '\0';
                        mkdir(dir, 0755);
                        *p = '/';
                }
        }
        fd = open(t->path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, data, len), (ssize_t)len);
        close(fd);
        return t->path;
}

static const char *tmp_text(struct tmp *t, const char *rel, const char *text)
{
        return tmp_file(t, rel, text, strlen(text));
}

/* A valid 64-byte device, for the start of bad dumps. */
#define GOOD_DEV                                                                                   \
        "01:00.0 Ethernet controller: Synthetic 5a5a:0f01\n"                                       \
        "00: 5a 5a 01 0f 06 04 10 00 01 00 00 02 10 00 00 00\n"                                    \
        "10: 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00\n"                                    \
        "20: 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00\n"                                    \
        "30: 00 00 00 00 40 00 00 00 00 00 00 00 00 00 00 00\n"

static void test_dump_bad_files(void **state)
{
        struct tmp *t = *state;
        char long_line[1024];
        size_t used;
        static const struct {
                const char *name;
                const char *text; /* NULL: the long line */
        } rows[] = {
            {"line longer than 255 characters", NULL},
            {"non-hex byte", GOOD_DEV "\n02:00.0 x\n00: zz 00 00 00 00 00 00 00\n"},
            {"text after the bytes", GOOD_DEV "\n02:00.0 x\n00: 00 00 00 00 junk\n"},
            {"offset 4096", GOOD_DEV "1000: 00 00 00 00\n"},
            {"no final newline", GOOD_DEV "40: 00 00 00 00"},
        };
        int failed = 0;

        used = (size_t)snprintf(long_line, sizeof(long_line), GOOD_DEV "40:");
        for (int i = 0; i < 100; i++)
                used += (size_t)snprintf(long_line + used, sizeof(long_line) - used, " 00");
        snprintf(long_line + used, sizeof(long_line) - used, "\n");

        for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
                struct pci_source *src = NULL;
                char rel[32];
                const char *path;
                int ret;

                snprintf(rel, sizeof(rel), "bad%zu.txt", i);
                path = tmp_text(t, rel, rows[i].text ? rows[i].text : long_line);
                assert_int_equal(pci_source_open_dump(path, &src), 0);
                memset(&col, 0, sizeof(col));
                ret = pci_source_scan(src, collect_visit, &col);
                if (ret != -EIO || !pci_source_error(src)[0]) {
                        print_message("# dump '%s': returned %d, error '%s', %zu visits\n",
                                      rows[i].name, ret, pci_source_error(src), col.calls);
                        failed++;
                } else {
                        print_message("# dump '%s': %s\n", rows[i].name, pci_source_error(src));
                }
                pci_source_close(src);
        }
        assert_int_equal(failed, 0);
}

static void test_dump_missing_and_empty(void **state)
{
        struct tmp *t = *state;
        struct pci_source *src = NULL;
        char missing[300];
        const char *path;

        snprintf(missing, sizeof(missing), "%s/no-such-dump.txt", t->dir);
        assert_int_equal(pci_source_open_dump(missing, &src), 0);
        memset(&col, 0, sizeof(col));
        assert_int_equal(pci_source_scan(src, collect_visit, &col), -EIO);
        assert_true(pci_source_error(src)[0] != '\0');
        assert_int_equal(col.calls, 0);
        /* The process is still here, and so is the source: scan again. */
        assert_int_equal(pci_source_scan(src, collect_visit, &col), -EIO);
        pci_source_close(src);

        path = tmp_text(t, "empty.txt", "");
        assert_int_equal(pci_source_open_dump(path, &src), 0);
        memset(&col, 0, sizeof(col));
        assert_int_equal(pci_source_scan(src, collect_visit, &col), 0);
        assert_int_equal(col.calls, 0);
        assert_string_equal(pci_source_error(src), "");
        pci_source_close(src);

        /* A file that is broken at one scan and fixed by the next. */
        path = tmp_text(t, "flaky.txt", GOOD_DEV "40: zz\n");
        assert_int_equal(pci_source_open_dump(path, &src), 0);
        assert_int_equal(pci_source_scan(src, collect_visit, &col), -EIO);
        tmp_text(t, "flaky.txt", GOOD_DEV);
        memset(&col, 0, sizeof(col));
        assert_int_equal(pci_source_scan(src, collect_visit, &col), 0);
        assert_int_equal(col.calls, 1);
        assert_int_equal(col.seen[0].len, 64);
        assert_memory_equal(col.seen[0].head, "\x5a\x5a\x01\x0f", 4);
        pci_source_close(src);
        pci_source_close(NULL);
}

/* ---- live access on a fake sysfs tree ---- */

static uint8_t config_4k[4096];

static void test_live_tree(void **state)
{
        struct tmp *t = *state;
        struct pci_source *src = NULL;
        const struct seen *full, *header, *none;
        uint8_t header64[64];

        for (size_t i = 0; i < sizeof(config_4k); i++)
                config_4k[i] = (uint8_t)(i * 7 + 3);
        memcpy(config_4k, "\x86\x80\x04\x2f", 4);
        memset(header64, 0, sizeof(header64));
        memcpy(header64, "\x86\x80\xc9\x10", 4);
        tmp_file(t, "bus/pci/devices/0000:00:01.0/config", config_4k, sizeof(config_4k));
        tmp_file(t, "bus/pci/devices/0000:00:02.0/config", header64, sizeof(header64));
        tmp_text(t, "bus/pci/devices/0000:00:03.0/vendor", "0x8086\n");

        assert_int_equal(pci_source_open_live(t->dir, &src), 0);
        assert_string_equal(pci_source_method(src), "live");
        memset(&col, 0, sizeof(col));
        assert_int_equal(pci_source_scan(src, collect_visit, &col), 0);
        assert_int_equal(col.calls, 3);
        full = find_seen(&col, "0000:00:01.0");
        header = find_seen(&col, "0000:00:02.0");
        none = find_seen(&col, "0000:00:03.0");
        assert_non_null(full);
        assert_non_null(header);
        assert_non_null(none);
        assert_int_equal(full->len, 4096);
        assert_memory_equal(full->head, config_4k, sizeof(full->head));
        assert_int_equal(header->len, 64);
        assert_memory_equal(header->head, header64, sizeof(header->head));
        assert_int_equal(none->len, 0);
        pci_source_close(src);
}

static int check_full_config(void *ctx, const struct pci_addr *addr, const uint8_t *cfg,
                             size_t cfg_len)
{
        (void)addr;
        if (cfg_len != sizeof(config_4k) || memcmp(cfg, config_4k, cfg_len))
                return -EBADMSG;
        ++*(int *)ctx;
        return 0;
}

/* All 4096 bytes come through, not just the head. */
static void test_live_full_bytes(void **state)
{
        struct tmp *t = *state;
        struct pci_source *src = NULL;
        int calls = 0;

        for (size_t i = 0; i < sizeof(config_4k); i++)
                config_4k[i] = (uint8_t)(i ^ (i >> 8));
        config_4k[0] = 0x86;
        config_4k[1] = 0x80;
        tmp_file(t, "bus/pci/devices/0001:40:00.0/config", config_4k, sizeof(config_4k));
        assert_int_equal(pci_source_open_live(t->dir, &src), 0);
        assert_int_equal(pci_source_scan(src, check_full_config, &calls), 0);
        assert_int_equal(calls, 1);
        pci_source_close(src);
}

static void test_live_errors(void **state)
{
        struct tmp *t = *state;
        struct pci_source *src = NULL;
        char root[2048];

        /* No bus/pci/devices: libpci's fatal error becomes -EIO. */
        assert_int_equal(pci_source_open_live(t->dir, &src), 0);
        memset(&col, 0, sizeof(col));
        assert_int_equal(pci_source_scan(src, collect_visit, &col), -EIO);
        assert_true(pci_source_error(src)[0] != '\0');
        print_message("# empty sysfs: %s\n", pci_source_error(src));
        pci_source_close(src);

        /* A root too long for the path buffer. */
        memset(root, 'r', sizeof(root) - 1);
        root[0] = '/';
        root[sizeof(root) - 1] = '\0';
        src = NULL;
        assert_int_equal(pci_source_open_live(root, &src), -ENAMETOOLONG);
        assert_null(src);
}

/* ---- names ---- */

static void test_names(void **state)
{
        struct pci_source *src = NULL;
        char vendor[128], device[128];
        struct stat st;

        (void)state;
        assert_int_equal(pci_source_open_dump(HASWELL, &src), 0);

        /* Unknown ids: "" rather than made-up "Device 5a5a" text. */
        memset(vendor, 0xff, sizeof(vendor));
        memset(device, 0xff, sizeof(device));
        pci_source_names(src, 0x5a5a, 0x0f01, vendor, sizeof(vendor), device, sizeof(device));
        assert_string_equal(vendor, "");
        assert_string_equal(device, "");

        if (stat(PCI_IDS, &st)) {
                pci_source_close(src);
                print_message("# %s not installed: no names to look up\n", PCI_IDS);
                skip();
        }
        memset(vendor, 0xff, sizeof(vendor));
        memset(device, 0xff, sizeof(device));
        pci_source_names(src, 0x8086, 0x10c9, vendor, sizeof(vendor), device, sizeof(device));
        assert_string_equal(vendor, "Intel Corporation");
        assert_string_equal(device, "82576 Gigabit Network Connection");

        /* Known vendor, unknown device. */
        pci_source_names(src, 0x8086, 0xfffe, vendor, sizeof(vendor), device, sizeof(device));
        assert_string_equal(vendor, "Intel Corporation");
        assert_string_equal(device, "");

        /* Again after an unknown id: the database stays loaded. */
        pci_source_names(src, 0x15b3, 0x1007, vendor, sizeof(vendor), device, sizeof(device));
        assert_string_equal(vendor, "Mellanox Technologies");
        assert_true(strstr(device, "ConnectX-3") != NULL);

        /* Small buffers are never overrun and stay terminated. */
        memset(vendor, 0xff, sizeof(vendor));
        memset(device, 0xff, sizeof(device));
        pci_source_names(src, 0x8086, 0x10c9, vendor, 8, device, 12);
        assert_non_null(memchr(vendor, '\0', 8));
        assert_non_null(memchr(device, '\0', 12));
        assert_int_equal((unsigned char)vendor[8], 0xff);
        assert_int_equal((unsigned char)device[12], 0xff);
        pci_source_close(src);
}

static uint32_t rng_state = 12345;

static uint32_t rnd(void)
{
        rng_state = rng_state * 1103515245u + 12345u;
        return rng_state >> 8;
}

/* How the mutation tests change a text: 1-4 times a character from
 * @alphabet put in, a stretch of up to @drop_max dropped, a stretch of up
 * to @repeat_max repeated (a long line, a doubled block), or, when
 * @may_cut, the text cut short. @buf holds @n bytes and has room for @cap;
 * returns the new length. */
static size_t mutate(char *buf, size_t n, size_t cap, const char *alphabet, size_t alphabet_len,
                     size_t drop_max, size_t repeat_max, bool may_cut)
{
        for (unsigned int m = 0, count = 1 + rnd() % 4; m < count && n; m++) {
                size_t at = rnd() % n, k;

                switch (rnd() % (may_cut ? 5 : 4)) {
                case 0:
                case 1:
                        buf[at] = alphabet[rnd() % alphabet_len];
                        break;
                case 2:
                        k = rnd() % drop_max;
                        if (at + k <= n) {
                                memmove(buf + at, buf + at + k, n - at - k);
                                n -= k;
                        }
                        break;
                case 3:
                        k = rnd() % repeat_max;
                        if (at + k <= n && n + k <= cap) {
                                memmove(buf + at + k, buf + at, n - at);
                                n += k;
                        }
                        break;
                default:
                        if (rnd() % 4 == 0)
                                n = at;
                        break;
                }
        }
        return n;
}

/* ---- names from a part of pci.ids (pci_source_names_for) ----
 *
 * The reference is libpci's load of the whole file (pci_ids_ref.c): the
 * same vendor and device names for every function asked for. */

static void compare_ids_file(const char *path, const uint32_t *ids, size_t n, size_t want_part)
{
        char why[512];
        size_t part = 0;
        enum ids_verdict v = ids_names_compare(path, ids, n, &part, why, sizeof(why));

        if (v != IDS_SAME)
                fail_msg("%s: %s", path, why);
        if (want_part != (size_t)-1)
                assert_int_equal(part, want_part);
}

static void test_names_part_real_list(void **state)
{
        uint32_t *ids = calloc(50000, sizeof(*ids)), *some = calloc(5000, sizeof(*some));
        size_t n, k = 0;
        char *text = malloc(8u << 20), v1[128], d1[128];
        struct pci_source *src = NULL;
        FILE *f = fopen(PCI_IDS, "r");
        size_t len;

        (void)state;
        assert_non_null(ids);
        assert_non_null(some);
        assert_non_null(text);
        if (!f) {
                free(ids);
                free(some);
                free(text);
                print_message("# %s not installed: no names to look up\n", PCI_IDS);
                skip();
        }
        len = fread(text, 1, (8u << 20) - 1, f);
        fclose(f);
        n = ids_from_text(text, len, ids, 50000);
        print_message("# %s: %zu vendor and device ids\n", PCI_IDS, n);
        assert_true(n > 15000);
        /* Every 13th id of the list (vendors alone, devices of big and
         * small vendors), ids it lacks, and repeats. */
        for (size_t i = 0; i < n && k < 4990; i += 13)
                some[k++] = ids[i];
        some[k++] = 0x8086fffeu; /* known vendor, unknown device */
        some[k++] = 0x5a5a0f01u; /* unknown vendor */
        some[k++] = 0x8086100eu;
        some[k++] = 0x8086100eu;
        compare_ids_file(PCI_IDS, some, k, k - 1); /* one repeat */

        /* Through the default list too (no file set), and a look-up
         * outside the part: the whole list then, the same names. */
        assert_int_equal(pci_source_open_dump(HASWELL, &src), 0);
        assert_int_equal(pci_source_names_for(src, (const uint32_t[]){0x8086100eu}, 1), 0);
        assert_int_equal(pci_source_names_part(src), 1);
        pci_source_names(src, 0x8086, 0x100e, v1, sizeof(v1), d1, sizeof(d1));
        assert_string_equal(v1, "Intel Corporation");
        assert_string_equal(d1, "82540EM Gigabit Ethernet Controller");
        assert_int_equal(pci_source_names_part(src), 1);
        pci_source_names(src, 0x15b3, 0x1007, v1, sizeof(v1), d1, sizeof(d1));
        assert_int_equal(pci_source_names_part(src), 0);
        assert_string_equal(v1, "Mellanox Technologies");
        assert_true(strstr(d1, "ConnectX-3") != NULL);
        /* Asked for again after the whole list: it stays. */
        assert_int_equal(pci_source_names_for(src, (const uint32_t[]){0x8086100eu}, 1), 0);
        assert_int_equal(pci_source_names_part(src), 0);
        pci_source_close(src);
        free(ids);
        free(some);
        free(text);
}

/* Every kind of line libpci's parser knows, around the vendors asked for. */
static const char crafted_ids[] = "#\n# a crafted pci.ids\n#\n\n"
                                  "0001  First Vendor\n"
                                  "\t0010  Device Ten\n"
                                  "\t\t0001 0010  A subsystem of ten\n"
                                  "# a comment inside a block\n"
                                  "\t0011  Device Eleven\n"
                                  "   \n"
                                  "\t0012\tTab separated\n"
                                  "0002\tSecond Vendor, tab\r\n"
                                  "\t0020  Device with CR\r\n"
                                  "\t0021  Trailing space \n"
                                  "\t\t0002 0021  sub\n"
                                  "00ff  Lower Vendor\n"
                                  "\tabcd  lower case device\n"
                                  "C 01  Mass storage controller\n"
                                  "\t00  SCSI storage controller\n"
                                  "\t\t00  prog-if\n"
                                  "S 0001\n"
                                  "\t0042  generic forty-two\n"
                                  "X 12  An unknown lettered block\n"
                                  "\t0003  nested in X\n"
                                  "\t\t0003 0003  deeper\n"
                                  "AbCd  Mixed Case Vendor\n"
                                  "\t0001  mixed one\n"
                                  "0003  Last Vendor\n"
                                  "\t0030  no newline at the end";

static void test_names_part_crafted(void **state)
{
        struct tmp *t = *state;
        uint32_t ids[64];
        size_t n = ids_from_text(crafted_ids, sizeof(crafted_ids) - 1, ids, 60);
        char line[2100], *buf;
        size_t len;

        ids[n++] = 0x00010013u; /* a vendor's unknown device */
        ids[n++] = 0x00040000u; /* an unknown vendor */
        ids[n++] = 0x00c00000u; /* "C 0..." read as hex would be 0xc0.. */
        ids[n++] = 0x00ff0003u; /* "\t0003" of the X block after vendor 00ff */
        assert_true(n > 15);
        tmp_file(t, "pci.ids", crafted_ids, sizeof(crafted_ids) - 1);
        compare_ids_file(t->path, ids, n, n);
        /* Single ids, each alone in the part. */
        for (size_t i = 0; i < n; i++)
                compare_ids_file(t->path, &ids[i], 1, 1);

        /* A ".gz" name: libpci reads the name without it when it does not
         * open, so does the cut; when it opens (it may be compressed) the
         * whole list is loaded, by libpci. */
        tmp_file(t, "plain.ids", crafted_ids, sizeof(crafted_ids) - 1);
        snprintf(line, sizeof(line), "%s/plain.ids.gz", t->dir);
        compare_ids_file(line, ids, n, n);
        tmp_file(t, "plain.ids.gz", crafted_ids, sizeof(crafted_ids) - 1);
        compare_ids_file(line, ids, n, 0);

        /* Lines libpci would cut elsewhere: the whole list (which libpci
         * refuses: no names either way). */
        buf = malloc(sizeof(crafted_ids) + sizeof(line));
        assert_non_null(buf);
        for (size_t width = 1020; width < 1026; width++) {
                char why[256];
                size_t part = 99;
                enum ids_verdict v;

                memset(line, 'x', width);
                line[0] = '#';
                line[width] = '\n';
                len = sizeof(crafted_ids) - 1;
                memcpy(buf, crafted_ids, len);
                memcpy(buf + len, "\n", 1);
                memcpy(buf + len + 1, line, width + 1);
                tmp_file(t, "long.ids", buf, len + width + 2);
                v = ids_names_compare(t->path, ids, n, &part, why, sizeof(why));
                /* 1,022 characters and the newline fit libpci's buffer. */
                assert_int_equal(v, width <= 1022 ? IDS_SAME : IDS_WHOLE_REFUSED);
                assert_int_equal(part, width <= 1022 ? n : 0);
        }
        memcpy(buf, crafted_ids, sizeof(crafted_ids));
        buf[40] = '\0';
        tmp_file(t, "nul.ids", buf, sizeof(crafted_ids) - 1);
        {
                char why[256];
                size_t part = 99;

                (void)ids_names_compare(t->path, ids, n, &part, why, sizeof(why));
                assert_int_equal(part, 0);
        }
        free(buf);

        /* A missing file: no names, either way. */
        snprintf(line, sizeof(line), "%s/missing.ids", t->dir);
        compare_ids_file(line, ids, n, 0);
}

/* Mutations of the crafted list: wherever libpci loads the whole file, the
 * part gives the same names. */
static void test_names_part_mutated(void **state)
{
        static const char alphabet[] = "0189afAFCSX \t\n\r#";
        struct tmp *t = *state;
        size_t base_len = sizeof(crafted_ids) - 1, compared = 0;
        char *buf = malloc(4 * base_len), why[512];
        uint32_t ids[80];

        assert_non_null(buf);
        for (int round = 0; round < 600; round++) {
                size_t n, k;
                enum ids_verdict v;

                memcpy(buf, crafted_ids, base_len);
                n = mutate(buf, base_len, 4 * base_len, alphabet, sizeof(alphabet) - 1, 30, 80,
                           false);
                tmp_file(t, "mutated.ids", buf, n);
                k = ids_from_text(buf, n, ids, 70);
                ids[k++] = 0x00010010u;
                ids[k++] = 0x00020020u;
                v = ids_names_compare(t->path, ids, k, NULL, why, sizeof(why));
                if (v == IDS_DIFFER)
                        fail_msg("round %d: %s", round, why);
                compared += v == IDS_SAME;
        }
        print_message("# %zu of 600 mutated lists loaded whole by libpci and compared\n", compared);
        assert_true(compared > 150);
        free(buf);
}

/* ---- the dump reader against libpci's own dump method ----
 *
 * pci_source reads dumps itself (libpci's parser was most of a large scan).
 * The reference here is libpci's dump method driven as the source used to
 * drive it: the same functions in the same order, the same bytes at the
 * same steps (64, 256, 4096), the same error message. Run over every
 * fixture and over mutated dumps. */

static void same_as_libpci(const char *path)
{
        struct dump_digest ours, theirs;

        dump_digest_libpci(path, &theirs);
        assert_int_equal(dump_digest_ours(path, &ours), 0);
        assert_false(ours.odd_length);
        if (!dump_digest_same(&ours, &theirs))
                fail_msg("%s: ours %d, %zu functions, %016llx, \"%s\"; libpci %d, %zu, %016llx, "
                         "\"%s\"",
                         path, ours.ret, ours.calls, (unsigned long long)ours.hash, ours.error,
                         theirs.ret, theirs.calls, (unsigned long long)theirs.hash, theirs.error);
}

static void fixtures_same(const char *dir)
{
        char path[1024];
        struct dirent *e;
        DIR *dp = opendir(dir);
        size_t n = 0;

        assert_non_null(dp);
        while ((e = readdir(dp))) {
                if (e->d_name[0] == '.' || strstr(e->d_name, ".md") || strstr(e->d_name, ".tsv"))
                        continue;
                snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
                same_as_libpci(path);
                n++;
        }
        closedir(dp);
        assert_true(n > 0);
}

static void test_dump_reader_matches_libpci(void **state)
{
        /* Characters that matter to the parser, and some that do not. */
        static const char alphabet[] = "0189afAF :.\n\r \t\0xg-#";
        struct tmp *t = *state;
        char *base, *buf;
        size_t len = 0, cap = 1 << 16;
        FILE *f;

        fixtures_same(TOP_SRCDIR "/tests/fixtures/pcidump");
        fixtures_same(TOP_SRCDIR "/tests/fixtures/malformed");
        fixtures_same(TOP_SRCDIR "/tests/fixtures/synthetic");
        /* Lines at fgets()'s limit: 253 characters pass, 254 do not. */
        for (size_t width = 250; width < 258; width++) {
                char line[300];

                memset(line, 'x', width);
                line[width] = '\n';
                memcpy(line + width + 1, "00:00.0 x\n00: 86 80\n", 21);
                tmp_file(t, "long.txt", line, width + 21);
                same_as_libpci(t->path);
                line[width - 1] = '\r';
                tmp_file(t, "long.txt", line, width + 21);
                same_as_libpci(t->path);
        }
        /* Mutations of the first functions of the X58 dump (with a domain
         * added to some), 3,000 of them: bytes replaced, lines cut, doubled
         * or dropped, the file cut short. */
        base = malloc(cap);
        buf = malloc(2 * cap + 64);
        assert_non_null(base);
        assert_non_null(buf);
        f = fopen(X58_MACHINE, "r");
        assert_non_null(f);
        len = fread(base, 1, 6000, f);
        fclose(f);
        for (int round = 0; round < 3000; round++) {
                size_t n = 0;
                unsigned int kind = rnd() % 6;

                if (kind == 5) {
                        /* A domain on every function line. */
                        const char *dom = rnd() & 1 ? "0001:" : "10000:";

                        for (size_t i = 0; i < len; i++) {
                                if ((i == 0 || base[i - 1] == '\n') && i + 8 < len &&
                                    base[i + 2] == ':' && base[i + 5] == '.') {
                                        memcpy(buf + n, dom, strlen(dom));
                                        n += strlen(dom);
                                }
                                buf[n++] = base[i];
                        }
                } else {
                        memcpy(buf, base, len);
                        n = len;
                }
                n = mutate(buf, n, 2 * cap, alphabet, sizeof(alphabet) - 1, 40, 300, true);
                tmp_file(t, "mutated.txt", buf, n);
                same_as_libpci(t->path);
        }
        free(base);
        free(buf);
}

int main(void)
{
        const struct CMUnitTest test_pci_source[] = {
            cmocka_unit_test(test_addr_parse_format),
            cmocka_unit_test(test_addr_round_trip),
            cmocka_unit_test(test_addr_compare),
            cmocka_unit_test(test_dump_haswell),
            cmocka_unit_test(test_dump_whole_machine),
            cmocka_unit_test(test_dump_visitor_stops),
            cmocka_unit_test_setup_teardown(test_dump_bad_files, tmp_setup, tmp_teardown),
            cmocka_unit_test_setup_teardown(test_dump_missing_and_empty, tmp_setup, tmp_teardown),
            cmocka_unit_test_setup_teardown(test_live_tree, tmp_setup, tmp_teardown),
            cmocka_unit_test_setup_teardown(test_live_full_bytes, tmp_setup, tmp_teardown),
            cmocka_unit_test_setup_teardown(test_live_errors, tmp_setup, tmp_teardown),
            cmocka_unit_test(test_names),
            cmocka_unit_test(test_names_part_real_list),
            cmocka_unit_test_setup_teardown(test_names_part_crafted, tmp_setup, tmp_teardown),
            cmocka_unit_test_setup_teardown(test_names_part_mutated, tmp_setup, tmp_teardown),
            cmocka_unit_test_setup_teardown(test_dump_reader_matches_libpci, tmp_setup,
                                            tmp_teardown),
        };

        return cmocka_run_group_tests(test_pci_source, NULL, NULL);
}
