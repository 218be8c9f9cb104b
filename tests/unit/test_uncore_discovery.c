// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_uncore_discovery.c - Intel PMON discovery: the DVSEC walk, BAR
 * decoding, the global and unit entries, whole tables (including malformed
 * ones: stride 0, huge max_units, truncated BARs, all-ones entries), CPU
 * identification, box type names, a bounded fuzz loop, and discovery through
 * the seam on the simulated spr-2s with MMIO served by the test (broken
 * tables, unreadable resources).
 *
 * Configuration images and tables are built here byte by byte (SYNTHETIC),
 * except the spr-2s tree, which the simulator writes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hw_env.h"
#include "pci_regs.h"
#include "sample.h"
#include "sim.h"
#include "uncore_discovery.h"
#include "support.h"

#define MACHINES TOP_SRCDIR "/sim/machines"

/* ---- builders ---- */

static void put32(uint8_t *b, size_t off, uint32_t v)
{
        for (int i = 0; i < 4; i++)
                b[off + (size_t)i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *b, size_t off, uint64_t v)
{
        put32(b, off, (uint32_t)v);
        put32(b, off + 4, (uint32_t)(v >> 32));
}

#define EXT_HDR(id, next) ((uint32_t)(id) | 1u << 16 | (uint32_t)(next) << 20)

/* A DVSEC at @off: vendor, id, the dword at +0xc, chained to @next. */
static void put_dvsec(uint8_t *cfg, size_t off, uint16_t vendor, uint16_t id, uint32_t word,
                      size_t next)
{
        put32(cfg, off, EXT_HDR(PCI_EXT_CAP_ID_DVSEC, next));
        put32(cfg, off + 4, vendor | 1u << 16 | 0x10u << 20);
        put32(cfg, off + 8, id);
        put32(cfg, off + 0xc, word);
}

/* A type-0 Intel function with a 64-bit BAR0 at @bar. */
static void put_header(uint8_t *cfg, uint64_t bar)
{
        memset(cfg, 0, 4096);
        put32(cfg, 0, 0x09a78086);
        put32(cfg, PCI_BASE_ADDRESS_0, (uint32_t)bar | PCI_BASE_ADDRESS_MEM_TYPE_64);
        put32(cfg, PCI_BASE_ADDRESS_0 + 4, (uint32_t)(bar >> 32));
}

static uint64_t global_t1(unsigned int stride, unsigned int max_units)
{
        return (uint64_t)stride << 8 | (uint64_t)max_units << 16 | 1ULL << 62;
}

static uint64_t unit_t1(unsigned int regs, unsigned int ctl_off, unsigned int width,
                        unsigned int ctr_off, unsigned int access)
{
        return regs | ctl_off << 8 | width << 16 | (uint64_t)ctr_off << 24 | (uint64_t)access << 62;
}

static void put_entry(uint8_t *t, size_t off, uint64_t t1, uint64_t ctl, uint64_t t3)
{
        put64(t, off, t1);
        put64(t, off + 8, ctl);
        put64(t, off + 16, t3);
}

/* ---- DVSEC and BAR ---- */

static void test_dvsec_walk(void **state)
{
        static uint8_t cfg[4096];
        struct uncore_dvsec d;
        unsigned int others = 0;

        (void)state;
        put_header(cfg, 0x20fffe000000ULL);
        /* Vendor 0 (as on Kunpeng root ports), PMT telemetry (id 2), CXL
         * (vendor 0x1e98), then the PMON one. */
        put_dvsec(cfg, 0x100, 0x0000, 1, 0, 0x110);
        put_dvsec(cfg, 0x110, 0x8086, 2, 0, 0x120);
        put_dvsec(cfg, 0x120, 0x1e98, 1, 0, 0x140);
        put_dvsec(cfg, 0x140, 0x8086, 1, 0, 0);
        assert_int_equal(uncore_find_pmon_dvsec(cfg, sizeof(cfg), &d, &others), 0);
        assert_int_equal(d.offset, 0x140);
        assert_int_equal(d.bir, 0);
        assert_int_equal(others, 3);

        /* BIR 2 is fine; bits above BIR, or BIR 6/7, are not. */
        put32(cfg, 0x140 + 0xc, 2);
        assert_int_equal(uncore_find_pmon_dvsec(cfg, sizeof(cfg), &d, NULL), 0);
        assert_int_equal(d.bir, 2);
        put32(cfg, 0x140 + 0xc, 0x1000);
        assert_int_equal(uncore_find_pmon_dvsec(cfg, sizeof(cfg), &d, NULL), -EBADMSG);
        put32(cfg, 0x140 + 0xc, 6);
        assert_int_equal(uncore_find_pmon_dvsec(cfg, sizeof(cfg), &d, NULL), -EBADMSG);

        /* Only 256 readable bytes: extended space unknown, not "absent". */
        assert_int_equal(uncore_find_pmon_dvsec(cfg, 256, &d, NULL), -ENODATA);
        /* Only other DVSECs: -ENOENT. A list that loops ends. */
        put_dvsec(cfg, 0x140, 0x8086, 5, 0, 0x100); /* DSA id 5, looping back */
        others = 0;
        assert_int_equal(uncore_find_pmon_dvsec(cfg, sizeof(cfg), &d, &others), -ENOENT);
        assert_int_equal(others, 4);
        /* A pointer past the readable bytes ends the walk too. */
        put_dvsec(cfg, 0x140, 0x8086, 1, 0, 0);
        assert_int_equal(uncore_find_pmon_dvsec(cfg, 0x140, &d, NULL), -ENOENT);
        /* The DVSEC header fits but its BIR dword does not. */
        assert_int_equal(uncore_find_pmon_dvsec(cfg, 0x140 + 12, &d, NULL), -EBADMSG);
}

static void test_bar_address(void **state)
{
        static uint8_t cfg[4096];
        uint64_t a;

        (void)state;
        put_header(cfg, 0x20fffe000000ULL);
        assert_int_equal(uncore_bar_address(cfg, 64, 0, &a), 0);
        assert_true(a == 0x20fffe000000ULL);
        /* Low bits are flags and the low 4 KiB are cleared. */
        put32(cfg, PCI_BASE_ADDRESS_0, 0xc8a00ff4);
        put32(cfg, PCI_BASE_ADDRESS_0 + 4, 0);
        assert_int_equal(uncore_bar_address(cfg, 64, 0, &a), 0);
        assert_true(a == 0xc8a00000ULL);
        /* 32-bit BAR in slot 2. */
        put32(cfg, PCI_BASE_ADDRESS_0 + 8, 0xfe000000);
        assert_int_equal(uncore_bar_address(cfg, 64, 2, &a), 0);
        assert_true(a == 0xfe000000ULL);
        /* I/O BAR, unassigned BAR, 64-bit BAR in the last slot, bad BIR. */
        put32(cfg, PCI_BASE_ADDRESS_0 + 12, 0xe001);
        assert_int_equal(uncore_bar_address(cfg, 64, 3, &a), -EINVAL);
        assert_int_equal(uncore_bar_address(cfg, 64, 4, &a), -ENXIO);
        put32(cfg, PCI_BASE_ADDRESS_0 + 20, 0xf0000004);
        assert_int_equal(uncore_bar_address(cfg, 64, 5, &a), -EINVAL);
        assert_int_equal(uncore_bar_address(cfg, 64, 6, &a), -EINVAL);
        assert_int_equal(uncore_bar_address(cfg, 32, 0, &a), -ENODATA);
        /* A bridge has no BAR2..5 to speak of: refused. */
        cfg[PCI_HEADER_TYPE] = PCI_HEADER_TYPE_BRIDGE;
        assert_int_equal(uncore_bar_address(cfg, 64, 0, &a), -EINVAL);
}

/* ---- entries and tables ---- */

static void test_global_decode(void **state)
{
        static const struct {
                const char *what;
                uint64_t t1, ctl, t3;
                int want;
        } rows[] = {
            {"valid", (uint64_t)4 << 8 | (uint64_t)122 << 16 | 1ULL << 62, 0x1234, 0x0301, 0},
            {"all ones", ~0ULL, ~0ULL, ~0ULL, -EBADMSG},
            {"all zeros", 0, 0, 0, -EBADMSG},
            {"stride 0", (uint64_t)122 << 16, 0x1234, 0, -EBADMSG},
            {"stride 2 (entries overlap)", (uint64_t)2 << 8 | (uint64_t)122 << 16, 0x1234, 0,
             -EBADMSG},
            {"no units", (uint64_t)4 << 8, 0x1234, 0, -EBADMSG},
            {"stride 3, max units 1023", (uint64_t)3 << 8 | (uint64_t)1023 << 16, 1, 0, 0},
        };
        uint8_t e[24];
        struct uncore_global g;

        (void)state;
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                put_entry(e, 0, rows[i].t1, rows[i].ctl, rows[i].t3);
                if (uncore_global_decode(e, &g) != rows[i].want)
                        fail_msg("row \"%s\": got %d, want %d", rows[i].what,
                                 uncore_global_decode(e, &g), rows[i].want);
        }
        put_entry(e, 0, rows[0].t1, rows[0].ctl, rows[0].t3);
        assert_int_equal(uncore_global_decode(e, &g), 0);
        assert_int_equal(g.stride, 4);
        assert_int_equal(g.max_units, 122);
        assert_int_equal(g.access, UNCORE_ACCESS_MMIO);
        assert_int_equal(g.status_offset, 1);
        assert_int_equal(g.num_status, 3);
        assert_int_equal(uncore_table_bytes(&g), 123 * 32);
}

static void test_unit_decode(void **state)
{
        static const struct {
                const char *what;
                uint64_t t1, ctl, t3;
                enum uncore_unit_verdict want;
        } rows[] = {
            /* The seed's first IMC box. */
            {"IMC box 0", 4 | 64 << 8 | 48 << 16 | 8ULL << 24 | 1ULL << 62, 0xc8aa2800, 6,
             UNCORE_UNIT_OK},
            {"table1 zero", 0, 0xc8aa2800, 6, UNCORE_UNIT_INVALID},
            {"table1 all ones", ~0ULL, 0xc8aa2800, 6, UNCORE_UNIT_INVALID},
            {"ctl zero", 4 | 64 << 8 | 48 << 16 | 8ULL << 24, 0, 6, UNCORE_UNIT_INVALID},
            {"ctl all ones", 4 | 64 << 8 | 48 << 16 | 8ULL << 24, ~0ULL, 6, UNCORE_UNIT_INVALID},
            {"table3 all ones", 4 | 64 << 8 | 48 << 16 | 8ULL << 24, 0x2000, ~0ULL,
             UNCORE_UNIT_INVALID},
            {"ctl_offset 0", 4 | 48 << 16 | 8ULL << 24, 0x2000, 0, UNCORE_UNIT_SKIPPED},
            {"ctr_offset 0", 4 | 2 << 8 | 48 << 16, 0x2000, 0, UNCORE_UNIT_SKIPPED},
        };
        struct uncore_unit u;
        uint8_t e[24];

        (void)state;
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                put_entry(e, 0, rows[i].t1, rows[i].ctl, rows[i].t3);
                if (uncore_unit_decode(e, &u) != rows[i].want)
                        fail_msg("row \"%s\": verdict %d, want %d", rows[i].what,
                                 uncore_unit_decode(e, &u), rows[i].want);
        }
        put_entry(e, 0, rows[0].t1, rows[0].ctl, 6 | 7u << 16);
        assert_int_equal(uncore_unit_decode(e, &u), UNCORE_UNIT_OK);
        assert_int_equal(u.type, 6);
        assert_int_equal(u.box_id, 7);
        assert_int_equal(u.num_regs, 4);
        assert_int_equal(u.width, 48);
        assert_int_equal(u.ctl_offset, 64);
        assert_int_equal(u.ctr_offset, 8);
        assert_int_equal(u.access, UNCORE_ACCESS_MMIO);
        assert_true(u.ctl == 0xc8aa2800);

        /* A PCI-access unit encodes its config space location. */
        {
                struct pci_addr a;
                unsigned int off;

                u.access = UNCORE_ACCESS_PCI;
                u.ctl = 2ULL << 28 | 0x7eULL << 20 | (0x0cULL << 3 | 1) << 12 | 0x438;
                uncore_unit_pci_location(&u, &a, &off);
                assert_int_equal(a.domain, 2);
                assert_int_equal(a.bus, 0x7e);
                assert_int_equal(a.dev, 0x0c);
                assert_int_equal(a.func, 1);
                assert_int_equal(off, 0x438);
        }
}

static void test_table_parse(void **state)
{
        static uint8_t t[64 * 32];
        struct uncore_table tab;

        (void)state;
        memset(t, 0, sizeof(t));
        put_entry(t, 0, global_t1(4, 5), 0x1000, 0);
        put_entry(t, 32, unit_t1(4, 2, 48, 8, 0), 0x2000, 0 | 0u << 16);
        put_entry(t, 64, unit_t1(4, 2, 48, 8, 0), 0x2010, 0 | 1u << 16);
        put_entry(t, 96, ~0ULL, ~0ULL, ~0ULL);                 /* invalid */
        put_entry(t, 128, unit_t1(4, 0, 48, 8, 0), 0x2030, 1); /* skipped */
        put_entry(t, 160, unit_t1(4, 64, 48, 8, 1), 0xc8aa2800, 6 | 0u << 16);
        assert_int_equal(uncore_table_parse(t, 6 * 32, &tab), 0);
        assert_int_equal(tab.unit_count, 3);
        assert_int_equal(tab.invalid, 1);
        assert_int_equal(tab.skipped, 1);
        assert_int_equal(tab.truncated, 0);
        assert_int_equal(tab.units[2].type, 6);
        uncore_table_clear(&tab);

        /* The BAR holds less than max_units promises: what fits is read. */
        assert_int_equal(uncore_table_parse(t, 3 * 32 + 10, &tab), 0);
        assert_int_equal(tab.unit_count, 2);
        assert_int_equal(tab.truncated, 3);
        uncore_table_clear(&tab);

        /* Huge max_units with a small image: bounded by the image. */
        put_entry(t, 0, global_t1(4, 1023), 0x1000, 0);
        assert_int_equal(uncore_table_parse(t, sizeof(t), &tab), 0);
        assert_int_equal(tab.unit_count + tab.invalid + tab.skipped + tab.truncated, 1023);
        assert_int_equal(tab.truncated, 1023 - 63);
        uncore_table_clear(&tab);

        /* Stride 0, all-ones or a too-short image: no table. */
        put_entry(t, 0, global_t1(0, 5), 0x1000, 0);
        assert_int_equal(uncore_table_parse(t, sizeof(t), &tab), -EBADMSG);
        memset(t, 0xff, 24);
        assert_int_equal(uncore_table_parse(t, sizeof(t), &tab), -EBADMSG);
        assert_int_equal(uncore_table_parse(t, 23, &tab), -EBADMSG);
        assert_null(tab.units);
}

/* Random images and config spaces: every parse ends, within bounds (ASan
 * and valgrind would flag a read past the buffers). */
static void test_fuzz(void **state)
{
        uint32_t seed = 0x5eed1234;
        static uint8_t buf[8192];

        (void)state;
        for (int round = 0; round < 2000; round++) {
                struct uncore_table tab;
                struct uncore_dvsec d;
                size_t len = 1 + (seed % sizeof(buf));

                for (size_t i = 0; i < sizeof(buf); i++) {
                        seed = seed * 1103515245u + 12345u;
                        buf[i] = (uint8_t)(seed >> 16);
                }
                /* Bias towards plausible headers so the walks go deep. */
                if (round % 2) {
                        put_entry(buf, 0, global_t1(3 + round % 5, (unsigned int)round % 1024),
                                  0x1000, 0);
                        put32(buf, 0x100, EXT_HDR(PCI_EXT_CAP_ID_DVSEC, 0x100 + (round % 64) * 4));
                }
                if (uncore_table_parse(buf, len, &tab) == 0) {
                        assert_true(tab.unit_count + tab.invalid + tab.skipped + tab.truncated ==
                                    tab.global.max_units);
                        uncore_table_clear(&tab);
                }
                (void)uncore_find_pmon_dvsec(buf, len > 4096 ? 4096 : len, &d, NULL);
        }
}

static void test_cpu_id_and_names(void **state)
{
        unsigned int fam, mod;

        (void)state;
        assert_int_equal(
            uncore_cpu_id_parse("cpu:type:x86,ven0000fam0006mod008F:feature:,0000", &fam, &mod), 0);
        assert_int_equal(fam, 6);
        assert_int_equal(mod, 0x8f);
        assert_int_equal(uncore_cpu_id_parse("processor\t: 0\nvendor_id\t: GenuineIntel\n"
                                             "cpu family\t: 6\nmodel\t\t: 207\nmodel name\t: X\n",
                                             &fam, &mod),
                         0);
        assert_int_equal(mod, 207);
        assert_int_equal(uncore_cpu_id_parse("garbage", &fam, &mod), -EBADMSG);
        /* Found by fuzz_uncore_table: a family without a model left the
         * family set, so a failed read passed for family 6 model 0. */
        assert_int_equal(uncore_cpu_id_parse("cpu family\t: 6\nmodel\t\t", &fam, &mod), -EBADMSG);
        assert_int_equal(fam, 0);
        assert_int_equal(mod, 0);
        assert_int_equal(uncore_cpu_id_parse("cpu:type:x86,venXfam:", &fam, &mod), -EBADMSG);

        assert_int_equal(uncore_platform_of(6, 0x8f), UNCORE_PLATFORM_SPR);
        assert_int_equal(uncore_platform_of(6, 0xcf), UNCORE_PLATFORM_SPR);
        assert_int_equal(uncore_platform_of(6, 0xad), UNCORE_PLATFORM_GNR);
        assert_int_equal(uncore_platform_of(6, 0x55), UNCORE_PLATFORM_UNKNOWN);
        assert_int_equal(uncore_platform_of(25, 0x8f), UNCORE_PLATFORM_UNKNOWN);
        assert_string_equal(uncore_box_type_name(UNCORE_PLATFORM_SPR, 6), "IMC");
        assert_string_equal(uncore_box_type_name(UNCORE_PLATFORM_SPR, 3), "M2PCIe");
        assert_null(uncore_box_type_name(UNCORE_PLATFORM_SPR, 5));
        assert_string_equal(uncore_box_type_name(UNCORE_PLATFORM_GNR, 5), "UBOX");
        assert_null(uncore_box_type_name(UNCORE_PLATFORM_GNR, 3));
        assert_null(uncore_box_type_name(UNCORE_PLATFORM_GNR, 7));
        assert_string_equal(uncore_box_type_name(UNCORE_PLATFORM_GNR, 21), "PCIEX16");
        assert_null(uncore_box_type_name(UNCORE_PLATFORM_UNKNOWN, 9));
        assert_null(uncore_box_type_name(UNCORE_PLATFORM_SPR, 500));
}

/* ---- through the seam, on the simulated spr-2s ---- */

struct world {
        struct sim *sim;
        struct hw_env env;
};

static void world_open(struct world *w)
{
        struct sim_opts so = {.machine_dir = MACHINES};
        char msg[512] = "";

        memset(w, 0, sizeof(*w));
        log_text[0] = '\0';
        if (sim_open("spr-2s", &so, &w->sim, msg, sizeof(msg)))
                fail_msg("sim_open: %s", msg);
        hw_env_init_system(&w->env);
        w->env.log = capture_log;
        assert_int_equal(sim_env(w->sim, &w->env), 0);
}

static void test_discover_spr(void **state)
{
        static const uint64_t seed_imc[8] = {0xc8aa2800, 0xc8aaa800, 0xc8b22800, 0xc8b2a800,
                                             0xc8ba2800, 0xc8baa800, 0xc8c22800, 0xc8c2a800};
        struct uncore_inventory *inv;
        struct sample_set set = SAMPLE_SET_INIT;
        const struct uncore_source *s0;
        struct world w;
        size_t imc = 0, iio_units = 0;

        (void)state;
        world_open(&w);
        assert_int_equal(uncore_discover(&w.env, &inv), 0);
        assert_int_equal(inv->platform, UNCORE_PLATFORM_SPR);
        assert_int_equal(inv->source_count, sim_machine(w.sim)->intel.socket_count);
        assert_true(inv->other_dvsecs >= inv->source_count); /* PMT DVSECs passed over */
        s0 = &inv->sources[0];
        assert_int_equal(s0->error, 0);
        assert_int_equal(s0->device_id, 0x09a7);
        assert_true(s0->bar == sim_machine(w.sim)->intel.sockets[0].bar);
        assert_true(s0->bar_size == sim_machine(w.sim)->intel.sockets[0].bar_size);
        assert_int_equal(s0->table.unit_count, sim_machine(w.sim)->intel.sockets[0].unit_count);
        for (size_t k = 0; k < s0->table.unit_count; k++) {
                const struct uncore_unit *u = &s0->table.units[k];

                if (u->type == 6) {
                        assert_true(u->box_id < 8);
                        assert_true(u->ctl == seed_imc[u->box_id]);
                        assert_int_equal(u->access, UNCORE_ACCESS_MMIO);
                        assert_int_equal(u->width, 48);
                        assert_int_equal(u->num_regs, 4);
                        imc++;
                }
                iio_units += u->type == 1;
        }
        assert_int_equal(imc, 8);
        assert_true(iio_units >= sim_machine(w.sim)->intel.sockets[0].stack_count);
        assert_int_equal(uncore_inventory_count(inv, 6), 8 * inv->source_count);

        /* As metrics: one info per source, unit counts per type. */
        assert_int_equal(uncore_inventory_samples(inv, &set), 0);
        {
                size_t info = 0;
                double imc_units = 0;

                for (size_t i = 0; i < set.count; i++) {
                        const struct pcie_sample *s = &set.samples[i];

                        info += !strcmp(s->metric, "pcie_uncore_discovery_info");
                        if (!strcmp(s->metric, "pcie_uncore_units") &&
                            !strcmp(pcie_sample_label(s, "type"), "IMC") &&
                            !strcmp(pcie_sample_label(s, "access"), "MMIO"))
                                imc_units += s->gauge;
                }
                assert_int_equal(info, inv->source_count);
                assert_true(imc_units == 8.0 * (double)inv->source_count);
        }
        sample_set_free(&set);
        uncore_inventory_free(inv);
        sim_close(w.sim);
}

/* MMIO served by the test: an image that can be broken at will. */
static uint8_t fake_image[65536];
static size_t fake_len;
static int fake_map_err;

struct mmio_region {
        size_t len;
};

static int fake_map(void *ctx, const char *path, off_t off, size_t len, struct mmio_region **out)
{
        static struct mmio_region r;

        (void)ctx, (void)path, (void)off;
        if (fake_map_err)
                return fake_map_err;
        if (len > fake_len)
                return -ERANGE;
        r.len = len;
        *out = &r;
        return 0;
}

static int fake_read32(void *ctx, const struct mmio_region *r, size_t off, uint32_t *v)
{
        (void)ctx, (void)r, (void)off, (void)v;
        return -EIO;
}

static int fake_read64(void *ctx, const struct mmio_region *r, size_t off, uint64_t *v)
{
        (void)ctx;
        if (off + 8 > r->len)
                return -ERANGE;
        memcpy(v, fake_image + off, 8);
        return 0;
}

static void fake_unmap(void *ctx, struct mmio_region *r)
{
        (void)ctx, (void)r;
}

static const struct mmio_ops fake_mmio = {fake_map, fake_read32, fake_read64, fake_unmap, NULL};

static void test_discover_broken_tables(void **state)
{
        struct uncore_inventory *inv;
        struct world w;

        (void)state;
        world_open(&w);
        w.env.mmio = &fake_mmio;

        /* Unreadable resource: the source stays, with the reason. */
        fake_map_err = -EACCES;
        fake_len = sizeof(fake_image);
        assert_int_equal(uncore_discover(&w.env, &inv), 0);
        assert_int_equal(inv->sources[0].error, -EACCES);
        assert_non_null(strstr(inv->sources[0].message, "needs root"));
        assert_non_null(strstr(log_text, "resource0"));
        uncore_inventory_free(inv);
        fake_map_err = 0;

        /* An empty BAR: no table. */
        memset(fake_image, 0, sizeof(fake_image));
        assert_int_equal(uncore_discover(&w.env, &inv), 0);
        assert_int_equal(inv->sources[0].error, -EBADMSG);
        uncore_inventory_free(inv);

        /* The table claims 1000 units of stride 8 words (64 KiB), more than
         * the simulated BAR holds: what fits is read, the rest counted. */
        put_entry(fake_image, 0, global_t1(8, 1000), 0x1000, 0);
        for (size_t i = 1; (i + 1) * 64 <= sizeof(fake_image); i++)
                put_entry(fake_image, i * 64, unit_t1(4, 2, 48, 8, 0), 0x2000 + i, 0);
        assert_int_equal(uncore_discover(&w.env, &inv), 0);
        {
                const struct uncore_source *s = &inv->sources[0];
                size_t fit = (size_t)(s->bar_size / 64) - 1;

                assert_int_equal(s->error, 0);
                assert_true(s->bar_size > 0 && s->bar_size < 1001 * 64);
                assert_int_equal(s->table.unit_count, fit);
                assert_int_equal(s->table.truncated, 1000 - fit);
                assert_non_null(strstr(log_text, "units left out"));
        }
        uncore_inventory_free(inv);

        /* Stride 0 and all-ones entries. */
        put_entry(fake_image, 0, global_t1(0, 10), 0x1000, 0);
        assert_int_equal(uncore_discover(&w.env, &inv), 0);
        assert_int_equal(inv->sources[0].error, -EBADMSG);
        uncore_inventory_free(inv);
        memset(fake_image, 0xff, sizeof(fake_image));
        assert_int_equal(uncore_discover(&w.env, &inv), 0);
        assert_int_equal(inv->sources[0].error, -EBADMSG);
        uncore_inventory_free(inv);

        /* No MMIO at all in the environment. */
        w.env.mmio = NULL;
        assert_int_equal(uncore_discover(&w.env, &inv), 0);
        assert_int_equal(inv->sources[0].error, -ENODEV);
        uncore_inventory_free(inv);
        sim_close(w.sim);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_dvsec_walk),
            cmocka_unit_test(test_bar_address),
            cmocka_unit_test(test_global_decode),
            cmocka_unit_test(test_unit_decode),
            cmocka_unit_test(test_table_parse),
            cmocka_unit_test(test_fuzz),
            cmocka_unit_test(test_cpu_id_and_names),
            cmocka_unit_test(test_discover_spr),
            cmocka_unit_test(test_discover_broken_tables),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
