// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_pcie_topo.c - tree building: parents, Root Ports, link partners,
 * downtraining, and robustness against broken bus numbers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fixture_cfg.h"
#include "hw_env.h"
#include "pcie_topo.h"

#define EP  PCI_EXP_TYPE_ENDPOINT
#define RP  PCI_EXP_TYPE_ROOT_PORT
#define USP PCI_EXP_TYPE_UPSTREAM
#define DSP PCI_EXP_TYPE_DOWNSTREAM

static const char *bdf_of(const struct pcie_topo *topo, size_t index)
{
        return index == PCIE_TOPO_NONE ? "none" : pcie_topo_get(topo, index)->bdf;
}

/* The real whole-machine dump from pciutils' tests (ASUS P6T6, X58). */
static void test_x58_machine(void **state)
{
        static const struct {
                const char *bdf, *parent, *root_port, *partner;
                unsigned int depth;
                uint8_t root_bus;
        } rows[] = {
            {"0000:00:03.0", "none", "0000:00:03.0", "0000:02:00.0", 0, 0x00},
            {"0000:02:00.0", "0000:00:03.0", "0000:00:03.0", "0000:00:03.0", 1, 0x00},
            {"0000:03:00.0", "0000:02:00.0", "0000:00:03.0", "0000:04:00.0", 2, 0x00},
            {"0000:04:00.0", "0000:03:00.0", "0000:00:03.0", "0000:03:00.0", 3, 0x00},
            {"0000:03:02.0", "0000:02:00.0", "0000:00:03.0", "none", 2, 0x00},
            {"0000:06:00.1", "0000:00:07.0", "0000:00:07.0", "0000:00:07.0", 1, 0x00},
            {"0000:00:07.0", "none", "0000:00:07.0", "0000:06:00.0", 0, 0x00},
            {"0000:00:14.0", "none", "none", "none", 0, 0x00},
            {"0000:ff:06.3", "none", "none", "none", 0, 0xff},
        };
        struct hw_env env = {0};
        struct pcie_topo_opts opts = {0};
        struct pcie_topo *topo;

        (void)state;
        assert_int_equal(pci_source_open_dump(TOP_SRCDIR
                                              "/tests/fixtures/pcidump/"
                                              "pciutils-whole-machine-x58-asus-p6t6.lspci-xxxx.txt",
                                              &env.pci),
                         0);
        assert_int_equal(pcie_topo_scan(&env, &opts, &topo), 0);
        assert_int_equal(pcie_topo_count(topo), 53);
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                size_t idx = fx_index(topo, rows[i].bdf);
                const struct pcie_function *f;

                assert_int_not_equal(idx, PCIE_TOPO_NONE);
                f = pcie_topo_get(topo, idx);
                if (strcmp(bdf_of(topo, f->parent), rows[i].parent) ||
                    strcmp(bdf_of(topo, f->root_port), rows[i].root_port) ||
                    strcmp(bdf_of(topo, f->partner), rows[i].partner) ||
                    f->depth != rows[i].depth || f->root_bus != rows[i].root_bus)
                        fail_msg("%s: parent %s root_port %s partner %s depth %u root bus %02x",
                                 rows[i].bdf, bdf_of(topo, f->parent), bdf_of(topo, f->root_port),
                                 bdf_of(topo, f->partner), f->depth, f->root_bus);
        }
        /* Sorted by address, and find() agrees with the order. */
        for (size_t i = 1; i < pcie_topo_count(topo); i++)
                assert_true(pci_addr_compare(&pcie_topo_get(topo, i - 1)->addr,
                                             &pcie_topo_get(topo, i)->addr) < 0);
        pcie_topo_free(topo);
        pci_source_close(env.pci);
}

static void test_downtrained(void **state)
{
        const struct fx_dev devs[] = {
            /* Gen4 x16 both ends, trained at Gen3 x8: downtrained. */
            {"0000:00:02.0", RP, 256, 256, 512, 5, 5, false, 4, 16, 3, 8},
            {"0000:05:00.0", EP, 256, 256, 512, 0, 0, false, 4, 16, 3, 8},
            /* Gen4 port, Gen3 device running Gen3 x8: as good as it gets. */
            {"0000:00:03.0", RP, 256, 256, 512, 6, 6, false, 4, 8, 3, 8},
            {"0000:06:00.0", EP, 256, 256, 512, 0, 0, false, 3, 8, 3, 8},
            /* Empty port: link down, not downtrained. */
            {"0000:00:04.0", RP, 256, 256, 512, 7, 7, true, 4, 16, 1, 0},
            /* A port with nothing below running slow: no partner to blame. */
            {"0000:00:05.0", RP, 256, 256, 512, 8, 8, false, 4, 16, 1, 1},
        };
        static const struct {
                const char *bdf;
                bool up, downtrained;
                unsigned int common_speed, common_width;
                uint64_t cap_current, cap_max;
        } rows[] = {
            {"0000:00:02.0", true, true, 4, 16, 7876923076, 31507692307},
            {"0000:05:00.0", true, true, 4, 16, 7876923076, 31507692307},
            {"0000:00:03.0", true, false, 3, 8, 7876923076, 15753846153},
            {"0000:06:00.0", true, false, 3, 8, 7876923076, 7876923076},
            {"0000:00:04.0", false, false, 4, 16, 0, 31507692307},
            {"0000:00:05.0", true, false, 4, 16, 250000000, 31507692307},
        };
        struct pcie_topo *topo = fx_topo(devs, sizeof(devs) / sizeof(devs[0]));

        (void)state;
        assert_non_null(topo);
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                const struct pcie_function *f = pcie_topo_get(topo, fx_index(topo, rows[i].bdf));

                assert_non_null(f);
                if (f->link_up != rows[i].up || f->downtrained != rows[i].downtrained ||
                    f->common_max.speed_code != rows[i].common_speed ||
                    f->common_max.width != rows[i].common_width ||
                    f->capacity_current != rows[i].cap_current ||
                    f->capacity_max != rows[i].cap_max)
                        fail_msg("%s: up %d downtrained %d common %u x%u capacity %llu/%llu",
                                 rows[i].bdf, f->link_up, f->downtrained, f->common_max.speed_code,
                                 f->common_max.width, (unsigned long long)f->capacity_current,
                                 (unsigned long long)f->capacity_max);
        }
        pcie_topo_free(topo);
}

/* Bridges whose secondary buses point at each other must not hang the
 * parent walk, and the remaining tree must still be usable. */
static void test_bus_number_cycle(void **state)
{
        const struct fx_dev devs[] = {
            {"0000:01:00.0", USP, 256, 256, 512, 2, 2, false},
            {"0000:02:00.0", DSP, 256, 256, 512, 1, 1, false},
            {"0000:02:00.1", EP, 256, 256, 512, 0, 0, false},
        };
        struct pcie_topo *topo = fx_topo(devs, 3);
        size_t cycle_roots = 0;

        (void)state;
        assert_non_null(topo);
        for (size_t i = 0; i < pcie_topo_count(topo); i++) {
                const struct pcie_function *f = pcie_topo_get(topo, i);

                assert_true(f->depth < pcie_topo_count(topo));
                if (f->parent == PCIE_TOPO_NONE)
                        cycle_roots++;
        }
        /* The cycle is cut in exactly one place. */
        assert_int_equal(cycle_roots, 1);
        pcie_topo_free(topo);
}

static void test_duplicates_gone_and_truncated(void **state)
{
        static uint8_t cfg[PCI_CFG_SPACE_EXP_SIZE];
        const struct fx_dev dev = {"0000:01:00.0", EP, 256, 256, 512, 0, 0, false};
        struct pcie_topo *topo = pcie_topo_new();
        struct pci_addr a = {0, 1, 0, 0}, b = {0, 1, 0, 1}, c = {0, 1, 0, 2};

        (void)state;
        assert_non_null(topo);
        fx_build(&dev, cfg);
        assert_int_equal(pcie_topo_add(topo, &a, cfg, sizeof(cfg)), 0);
        assert_int_equal(pcie_topo_add(topo, &a, cfg, sizeof(cfg)), 0);
        /* Only the header readable: kept, counted as truncated, no PCIe. */
        assert_int_equal(pcie_topo_add(topo, &b, cfg, 64), 0);
        /* All ones: gone between listing and reading, left out. */
        memset(cfg, 0xff, sizeof(cfg));
        assert_int_equal(pcie_topo_add(topo, &c, cfg, sizeof(cfg)), 0);
        pcie_topo_finish(topo);
        assert_int_equal(pcie_topo_count(topo), 2);
        assert_int_equal(pcie_topo_duplicates(topo), 1);
        assert_int_equal(pcie_topo_truncated(topo), 1);
        assert_false(pcie_topo_get(topo, 1)->info.has_pcie);
        assert_int_equal(pcie_topo_get(topo, 1)->info.vendor_id, 0x1234);
        assert_int_equal(pcie_topo_find(topo, &c), PCIE_TOPO_NONE);
        pcie_topo_free(topo);
}

/* NUMA nodes come from sysfs below the env's root; -1 means unknown. */
static void test_numa_from_sysfs(void **state)
{
        const struct fx_dev devs[] = {
            {"0000:00:01.0", RP, 256, 256, 512, 1, 1, false},
            {"0000:01:00.0", EP, 256, 256, 512, 0, 0, false},
        };
        char root[] = "/tmp/pciescope-topo-XXXXXX", path[512], dump[512];
        struct hw_env env = {0};
        struct pcie_topo_opts opts = {.read_sysfs = true};
        struct pcie_topo *topo;
        FILE *f;

        (void)state;
        assert_non_null(mkdtemp(root));
        snprintf(dump, sizeof(dump), "%s/dump.txt", root);
        assert_int_equal(fx_write_dump(dump, devs, 2), 0);
        snprintf(path, sizeof(path),
                 "mkdir -p %s/bus/pci/devices/0000:00:01.0 "
                 "%s/bus/pci/devices/0000:01:00.0",
                 root, root);
        assert_int_equal(system(path), 0);
        snprintf(path, sizeof(path), "%s/bus/pci/devices/0000:00:01.0/numa_node", root);
        f = fopen(path, "w");
        assert_non_null(f);
        fputs("1\n", f);
        fclose(f);
        snprintf(path, sizeof(path), "%s/bus/pci/devices/0000:01:00.0/numa_node", root);
        f = fopen(path, "w");
        assert_non_null(f);
        fputs("-1\n", f);
        fclose(f);

        env.sysfs_root = root;
        assert_int_equal(pci_source_open_dump(dump, &env.pci), 0);
        assert_int_equal(pcie_topo_scan(&env, &opts, &topo), 0);
        assert_int_equal(pcie_topo_get(topo, 0)->numa_node, 1);
        assert_int_equal(pcie_topo_get(topo, 1)->numa_node, PCIE_NUMA_UNKNOWN);
        pcie_topo_free(topo);
        pci_source_close(env.pci);
        snprintf(path, sizeof(path), "rm -rf %s", root);
        assert_int_equal(system(path), 0);
}

static void put_sysfs(const char *root, const char *bdf, const char *name, const char *text)
{
        char path[512];
        FILE *f;

        snprintf(path, sizeof(path), "mkdir -p %s/bus/pci/devices/%s", root, bdf);
        assert_int_equal(system(path), 0);
        snprintf(path, sizeof(path), "%s/bus/pci/devices/%s/%s", root, bdf, name);
        f = fopen(path, "w");
        assert_non_null(f);
        fputs(text, f);
        fclose(f);
}

/* The link files of sysfs: max and current speed and width. */
static void put_link(const char *root, const char *bdf, const char *max_speed, int max_width,
                     const char *cur_speed, int cur_width)
{
        char text[64];

        put_sysfs(root, bdf, "max_link_speed", max_speed);
        snprintf(text, sizeof(text), "%d\n", max_width);
        put_sysfs(root, bdf, "max_link_width", text);
        put_sysfs(root, bdf, "current_link_speed", cur_speed);
        snprintf(text, sizeof(text), "%d\n", cur_width);
        put_sysfs(root, bdf, "current_link_width", text);
}

/*
 * An unprivileged reader gets only the 64-byte header of config space (an
 * `lspci -x` dump): the links come from sysfs, and each link's two ends are
 * paired from the tree (a switch's downstream port with its child, not with
 * the switch's upstream port).
 */
static void test_links_from_sysfs(void **state)
{
        const struct fx_dev devs[] = {
            {"0000:00:01.0", RP, 256, 256, 512, 1, 1, false},
            {"0000:01:00.0", EP, 256, 256, 512, 0, 0, false},
            {"0000:00:02.0", RP, 256, 256, 512, 2, 4, false},
            {"0000:02:00.0", PCI_EXP_TYPE_UPSTREAM, 256, 256, 512, 3, 4, false},
            {"0000:03:00.0", PCI_EXP_TYPE_DOWNSTREAM, 256, 256, 512, 4, 4, false},
            {"0000:04:00.0", EP, 256, 256, 512, 0, 0, false},
        };
        static uint8_t cfg[PCI_CFG_SPACE_EXP_SIZE];
        char root[] = "/tmp/pciescope-topo-XXXXXX", path[512], dump[512];
        struct hw_env env = {0};
        struct pcie_topo_opts opts = {.read_sysfs = true};
        const struct pcie_function *f;
        struct pcie_topo *topo;
        FILE *out;

        (void)state;
        assert_non_null(mkdtemp(root));
        snprintf(dump, sizeof(dump), "%s/dump.txt", root);
        out = fopen(dump, "w");
        assert_non_null(out);
        for (size_t i = 0; i < sizeof(devs) / sizeof(devs[0]); i++) {
                fx_build(&devs[i], cfg);
                fprintf(out, "%s Synthetic device\n", devs[i].bdf);
                for (size_t off = 0; off < 64; off += 16) {
                        fprintf(out, "%02zx:", off);
                        for (size_t b = 0; b < 16; b++)
                                fprintf(out, " %02x", cfg[off + b]);
                        fputc('\n', out);
                }
                fputc('\n', out);
        }
        fclose(out);
        /* 00:01.0 - 01:00.0: a x16 Gen4 link trained at 8 GT/s x8. */
        put_link(root, "0000:00:01.0", "16.0 GT/s PCIe\n", 16, "8.0 GT/s PCIe\n", 8);
        put_link(root, "0000:01:00.0", "16.0 GT/s PCIe\n", 16, "8.0 GT/s PCIe\n", 8);
        /* 00:02.0 - 02:00.0 (switch up) at its best, the switch's inside
         * link 02:00.0 - 03:00.0 as the kernel shows it, and 03:00.0 -
         * 04:00.0 a x4 drive in a x8 slot: at its best, not downtrained. */
        put_link(root, "0000:00:02.0", "16.0 GT/s PCIe\n", 8, "16.0 GT/s PCIe\n", 8);
        put_link(root, "0000:02:00.0", "16.0 GT/s PCIe\n", 8, "16.0 GT/s PCIe\n", 8);
        put_link(root, "0000:03:00.0", "16.0 GT/s PCIe\n", 8, "16.0 GT/s PCIe\n", 4);
        put_link(root, "0000:04:00.0", "16 GT/s\n", 4, "16 GT/s\n", 4);

        env.sysfs_root = root;
        assert_int_equal(pci_source_open_dump(dump, &env.pci), 0);
        assert_int_equal(pcie_topo_scan(&env, &opts, &topo), 0);
        assert_int_equal(pcie_topo_truncated(topo), 6);
        f = pcie_topo_get(topo, fx_index(topo, "0000:01:00.0"));
        assert_false(f->info.has_pcie);
        assert_true(f->info.has_link && f->link_from_sysfs && f->link_up && f->downtrained);
        assert_int_equal(f->info.link.cur_width, 8);
        assert_int_equal(f->partner, fx_index(topo, "0000:00:01.0"));
        assert_true(pcie_topo_get(topo, fx_index(topo, "0000:00:01.0"))->downtrained);
        f = pcie_topo_get(topo, fx_index(topo, "0000:02:00.0"));
        assert_int_equal(f->partner, fx_index(topo, "0000:00:02.0"));
        assert_false(f->downtrained);
        f = pcie_topo_get(topo, fx_index(topo, "0000:03:00.0"));
        assert_int_equal(f->partner, fx_index(topo, "0000:04:00.0"));
        assert_false(f->downtrained);
        assert_false(pcie_topo_get(topo, fx_index(topo, "0000:04:00.0"))->downtrained);
        assert_int_equal(pcie_topo_get(topo, fx_index(topo, "0000:04:00.0"))->capacity_current,
                         pcie_link_capacity_bytes(4, 4));
        pcie_topo_free(topo);
        pci_source_close(env.pci);

        /* Without sysfs (or without its link files) there is no link. */
        put_sysfs(root, "0000:01:00.0", "max_link_width", "wide\n");
        assert_int_equal(pci_source_open_dump(dump, &env.pci), 0);
        assert_int_equal(pcie_topo_scan(&env, &opts, &topo), 0);
        assert_false(pcie_topo_get(topo, fx_index(topo, "0000:01:00.0"))->info.has_link);
        assert_true(pcie_topo_get(topo, fx_index(topo, "0000:00:01.0"))->info.has_link);
        pcie_topo_free(topo);
        pci_source_close(env.pci);
        snprintf(path, sizeof(path), "rm -rf %s", root);
        assert_int_equal(system(path), 0);
}

/* An empty dump is an empty tree (issue 19 item 11: finishing a tree
 * of no functions handed qsort() a NULL array, which UBSan reports; the
 * sanitizer run of this test failed there). */
static void test_empty_dump(void **state)
{
        struct hw_env env;
        struct pcie_topo *topo = NULL;
        struct pcie_topo_opts opts = {0};

        (void)state;
        hw_env_init_system(&env);
        assert_int_equal(pci_source_open_dump(TOP_SRCDIR "/tests/fixtures/malformed/"
                                                         "empty.lspci-xxxx.txt",
                                              &env.pci),
                         0);
        assert_int_equal(pcie_topo_scan(&env, &opts, &topo), 0);
        assert_int_equal(pcie_topo_count(topo), 0);
        assert_null(pcie_topo_get(topo, 0));
        pcie_topo_free(topo);
        pci_source_close(env.pci);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_x58_machine),
            cmocka_unit_test(test_downtrained),
            cmocka_unit_test(test_bus_number_cycle),
            cmocka_unit_test(test_duplicates_gone_and_truncated),
            cmocka_unit_test(test_numa_from_sysfs),
            cmocka_unit_test(test_links_from_sysfs),
            cmocka_unit_test(test_empty_dump),
        };

        return cmocka_run_group_tests_name("pcie_topo", tests, NULL, NULL);
}
