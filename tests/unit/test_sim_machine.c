// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_sim_machine.c - the simulated machine: description loader, its
 * validation messages, computed bus numbers, and the sysfs/procfs tree the
 * writer produces (exact kernel text per version, configuration-space
 * images read back with the project's own decoder, AER updates).
 *
 * The machine texts here are SYNTHETIC test inputs; the shipped machines
 * under sim/machines/ are loaded as they are.
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
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "aer.h"
#include "pcie_monitor.h"
#include "hw_env.h"
#include "pcie_cfg.h"
#include "sim.h"
#include "sim_machine.h"
#include "sim_sysfs.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#ifndef TOP_SRCDIR
#define TOP_SRCDIR "."
#endif
#define MACHINES TOP_SRCDIR "/sim/machines/"

/* ---- helpers ---- */

static struct sim_machine *load_shipped(const char *name)
{
        char path[512], err[1024] = "";
        struct sim_machine *m = NULL;
        int r;

        snprintf(path, sizeof(path), "%s%s.json", MACHINES, name);
        r = sim_machine_load(path, &m, err, sizeof(err));
        if (r)
                print_error("%s: %s\n", path, err);
        assert_int_equal(r, 0);
        assert_non_null(m);
        return m;
}

static struct sim_machine *parse_ok(const char *json)
{
        struct sim_machine *m = NULL;
        char err[1024] = "";
        int r = sim_machine_parse(json, "test.json", &m, err, sizeof(err));

        if (r)
                print_error("unexpected error: %s\n", err);
        assert_int_equal(r, 0);
        assert_non_null(m);
        return m;
}

static size_t find(const struct sim_machine *m, const char *bdf)
{
        unsigned int dom, bus, dev, fn;

        assert_int_equal(sscanf(bdf, "%x:%x:%x.%x", &dom, &bus, &dev, &fn), 4);
        return sim_machine_find(m, (uint16_t)dom, (uint8_t)bus, (uint8_t)dev, (uint8_t)fn);
}

static const struct sim_device *dev_of(const struct sim_machine *m, const char *bdf)
{
        size_t i = find(m, bdf);

        if (i == SIM_NONE)
                print_error("no device %s\n", bdf);
        assert_true(i != SIM_NONE);
        return &m->devices[i];
}

static char *make_root(void)
{
        char *root = strdup("/tmp/test_sim_machine.XXXXXX");

        assert_non_null(root);
        assert_non_null(mkdtemp(root));
        return root;
}

static void drop_root(char *root)
{
        struct stat st;

        assert_int_equal(sim_sysfs_remove(root), 0);
        assert_int_not_equal(stat(root, &st), 0);
        free(root);
}

/* The whole file, or NULL if it does not exist. */
static char *slurp(const char *root, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static char *slurp(const char *root, const char *fmt, ...)
{
        char rel[512], path[1024];
        static char buf[16384];
        va_list ap;
        FILE *f;
        size_t n;

        va_start(ap, fmt);
        vsnprintf(rel, sizeof(rel), fmt, ap);
        va_end(ap);
        snprintf(path, sizeof(path), "%s/%s", root, rel);
        f = fopen(path, "r");
        if (!f)
                return NULL;
        n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = '\0';
        return buf;
}

#define assert_file(root, text, ...)                                                               \
        do {                                                                                       \
                const char *got_ = slurp(root, __VA_ARGS__);                                       \
                if (!got_)                                                                         \
                        print_error("missing file: " __VA_ARGS__);                                 \
                assert_non_null(got_);                                                             \
                assert_string_equal(got_, text);                                                   \
        } while (0)

#define assert_no_file(root, ...) assert_null(slurp(root, __VA_ARGS__))

/* ---- a small synthetic machine, pieces for the error table ---- */

#define HEAD_K(kernel)                                                                             \
        "{\"machine\": \"t\", \"kernel\": \"" kernel "\", \"cpus\": 8, \"sicls\": [{\"id\": 0, "   \
        "\"numa_node\": 0, \"cpus\": \"0-7\", \"cores\": [{\"id\": 0, \"root_ports\": ["
#define HEAD  HEAD_K("6.12")
#define TAIL  "]}]}]}"
#define LINK4 "\"link\": {\"max_speed\": \"16GT/s\", \"max_width\": 4}"
#define RP(bdf, extra)                                                                             \
        "{\"bdf\": \"" bdf "\", \"vendor\": \"0x19e5\", \"device\": \"0xa120\", " LINK4 extra "}"
#define EP(bdf, extra)                                                                             \
        "{\"bdf\": \"" bdf "\", \"vendor\": \"0x144d\", \"device\": \"0xa824\", \"class\": "       \
        "\"0x010802\", " LINK4 extra "}"
#define KIDS(...) ", \"children\": [" __VA_ARGS__ "]"
#define VALID     HEAD RP("0000:00:00.0", KIDS(EP("0000:01:00.0", ""))) TAIL

/* ---- loading the shipped machines ---- */

static void test_shipped_2p(void **state)
{
        struct sim_machine *m = load_shipped("kunpeng930-2p");
        const struct sim_device *d;

        (void)state;
        assert_string_equal(m->name, "kunpeng930-2p");
        assert_int_equal(m->kernel, SIM_KERNEL_6_12);
        assert_int_equal(m->cpus, 128);
        assert_int_equal(m->device_count, 57);
        assert_int_equal(m->core_count, 6);
        assert_true(m->clocks.flux_unit_bytes == 4);
        assert_true(m->clocks.time_clock_hz == 100e6);
        assert_true(m->clocks.latency_clock_hz == 1e9);
        for (size_t c = 0; c < m->core_count; c++) {
                const struct sim_core *core = &m->cores[c];

                assert_int_equal(core->sicl, c / 3);
                assert_int_equal(core->id, c % 3);
                assert_int_equal(core->identifier, 0x30);
                assert_int_equal(core->numa_node, c < 3 ? 0 : 2);
                assert_int_equal(core->cpu, c < 3 ? 0 : 64);
                assert_true(core->pmu_function != SIM_NONE);
                assert_true(core->ptt_function != SIM_NONE);
                assert_int_equal(m->devices[core->pmu_function].device, 0xa12d);
                assert_int_equal(m->devices[core->ptt_function].device, 0xa12e);
                assert_int_equal(m->devices[core->pmu_function].core, c);
                assert_true(core->port_count >= 1 && core->port_count <= 4);
                for (size_t p = 0; p < core->port_count; p++) {
                        assert_int_equal(m->devices[core->ports[p]].kind, SIM_ROOT_PORT);
                        assert_int_equal(m->devices[core->ports[p]].core, c);
                }
        }
        /* hisi_pcie0_core1: 00:08.0 .. 00:0e.0 */
        assert_int_equal(m->cores[1].bdf_min, 0x0040);
        assert_int_equal(m->cores[1].bdf_max, 0x0070);
        assert_int_equal(m->cores[5].bdf_min, 0x8080);
        /* parents first */
        for (size_t i = 0; i < m->device_count; i++) {
                if (m->devices[i].parent != SIM_NONE)
                        assert_true(m->devices[i].parent < i);
        }
        d = dev_of(m, "0000:81:00.0");
        assert_int_equal(d->numa_node, 2);
        assert_int_equal(d->max_speed, 4);
        assert_int_equal(d->cur_speed, 4);
        assert_int_equal(d->cur_width, 16);
        assert_true(d->has_workload);
        assert_true(d->workload.flow[SIM_DMA_WRITE].bytes_per_second == 11e9);
        /* the Gen5 port trained at the NIC's Gen4 */
        d = dev_of(m, "0000:80:00.0");
        assert_int_equal(d->max_speed, 5);
        assert_int_equal(d->cur_speed, 4);
        /* the empty hot-plug bay: link down */
        d = dev_of(m, "0000:00:0e.0");
        assert_true(d->hotplug);
        assert_int_equal(d->cur_width, 0);
        assert_int_equal(d->cur_speed, 0);
        /* MPS defaults to the parent's: the switch port under a 512 port */
        assert_int_equal(dev_of(m, "0000:06:00.0")->mps, 512);
        assert_int_equal(dev_of(m, "0000:06:00.0")->mpss, 2048);
        /* an RCiEP: MPS = MPSS, no AER unless asked, no link */
        d = dev_of(m, "0000:75:00.0");
        assert_int_equal(d->kind, SIM_RCIEP);
        assert_int_equal(d->mps, d->mpss);
        assert_false(d->has_aer);
        assert_int_equal(d->core, SIM_NONE);
        /* bursty device with phases */
        d = dev_of(m, "0000:03:00.0");
        assert_int_equal(d->workload.phase_count, 2);
        assert_true(d->workload.phases[1].scale == 0.1);
        assert_int_equal(d->aer_count[SIM_AER_CORRECTABLE], 2);
        assert_int_equal(m->injection_count, 0);
        sim_machine_free(m);
}

static void test_shipped_misconfig(void **state)
{
        struct sim_machine *m = load_shipped("kunpeng930-misconfig");
        const struct sim_device *nic, *rp, *nvme, *port;
        bool rising = false;

        (void)state;
        assert_int_equal(m->kernel, SIM_KERNEL_6_12);
        assert_non_null(strstr(m->cmdline, "pci=pcie_bus_tune_off"));
        /* downtrained: Gen4 x16 capable on a Gen5 x16 port, trained 8GT/s x8 */
        nic = dev_of(m, "0000:01:00.0");
        rp = dev_of(m, "0000:00:00.0");
        assert_int_equal(nic->max_speed, 4);
        assert_int_equal(nic->max_width, 16);
        assert_int_equal(nic->cur_speed, 3);
        assert_int_equal(nic->cur_width, 8);
        assert_int_equal(rp->cur_speed, 3);
        assert_int_equal(rp->cur_width, 8);
        /* MPS mismatch behind the switch */
        nvme = dev_of(m, "0000:04:00.0");
        port = &m->devices[nvme->parent];
        assert_int_equal(port->kind, SIM_SWITCH_DOWN);
        assert_true(nvme->mps > port->mps);
        /* rising AER counts */
        for (size_t i = 0; i < m->device_count; i++) {
                for (int c = 0; c < SIM_AER_CLASSES; c++) {
                        for (size_t k = 0; k < m->devices[i].aer_count[c]; k++)
                                rising |= m->devices[i].aer[c][k].per_second > 0;
                }
        }
        assert_true(rising);
        sim_machine_free(m);
}

static void test_bus_numbers(void **state)
{
        struct sim_machine *m = load_shipped("kunpeng930-2p");
        static const struct {
                const char *bdf;
                unsigned int secondary, subordinate;
        } rows[] = {
            {"0000:00:00.0", 0x01, 0x01}, {"0000:00:08.0", 0x02, 0x02},
            {"0000:00:0e.0", 0x05, 0x05}, {"0000:00:10.0", 0x06, 0x0b},
            {"0000:06:00.0", 0x07, 0x0b}, {"0000:07:02.0", 0x0a, 0x0a},
            {"0000:80:10.0", 0x85, 0x8a}, {"0000:85:00.0", 0x86, 0x8a},
            {"0000:86:03.0", 0x8a, 0x8a},
        };
        const char *json =
            HEAD RP("0000:00:00.0",
                    ", \"secondary\": 2, \"subordinate\": 9" KIDS(
                        "{\"kind\": \"switch\", \"bdf\": \"0000:02:00.0\", \"vendor\": \"0x1000\", "
                        "\"device\": \"0xc010\", " LINK4 ", \"downstream\": ["
                        "{\"bdf\": \"0000:03:00.0\", \"vendor\": \"0x1000\", \"device\": "
                        "\"0xc010\", " LINK4 KIDS(EP(
                            "0000:04:00.0",
                            "")) "},"
                                 "{\"bdf\": \"0000:03:01.0\", \"vendor\": \"0x1000\", \"device\": "
                                 "\"0xc010\", " LINK4 ", \"secondary\": 7}]}")) TAIL;

        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
                const struct sim_device *d = dev_of(m, rows[i].bdf);

                assert_int_equal(d->secondary, rows[i].secondary);
                assert_int_equal(d->subordinate, rows[i].subordinate);
        }
        sim_machine_free(m);

        /* Explicit reservations: the subordinate may exceed what is in use. */
        m = parse_ok(json);
        assert_int_equal(dev_of(m, "0000:00:00.0")->secondary, 2);
        assert_int_equal(dev_of(m, "0000:00:00.0")->subordinate, 9);
        assert_int_equal(dev_of(m, "0000:02:00.0")->secondary, 3);
        assert_int_equal(dev_of(m, "0000:02:00.0")->subordinate, 7);
        assert_int_equal(dev_of(m, "0000:03:00.0")->secondary, 4);
        assert_int_equal(dev_of(m, "0000:03:01.0")->secondary, 7);
        assert_int_equal(dev_of(m, "0000:03:01.0")->subordinate, 7);
        sim_machine_free(m);
}

/* ---- validation messages ---- */

/* A small Intel machine: one socket, one table, IIO stacks. */
#define INTEL_M(disc, stacks)                                                                      \
        "{\"machine\": \"i\", \"cpus\": 8, \"intel\": {\"cpu_model\": 143, \"sockets\": "          \
        "[{\"id\": 0, \"numa_node\": 0, \"cpus\": \"0-7\", \"discovery\": {" disc                  \
        "}, \"iio_stacks\": [" stacks "]}]}}"
#define DISC(stride, size, units)                                                                  \
        "\"bdf\": \"0000:7e:00.1\", \"bar\": \"0x20fffe000000\", \"bar_size\": \"" size            \
        "\", \"stride\": " stride ", \"units\": [" units "]"
#define UNIT_IIO(count, extra)                                                                     \
        "{\"type\": 1, \"access\": \"MSR\", \"count\": " count ", \"ctl\": \"0x3000\", "           \
        "\"ctl_step\": \"0x10\", \"num_regs\": 4, \"width\": 48, \"ctl_offset\": 8, "              \
        "\"ctr_offset\": 1" extra "}"
#define DISC_OK DISC("4", "0x1000", UNIT_IIO("12", ""))
#define STACK(box, bus, ports)                                                                     \
        "{\"box_id\": " box ", \"bus\": \"" bus "\", \"root_ports\": [" ports "]}"
#define IRP(bdf, extra)                                                                            \
        "{\"bdf\": \"" bdf "\", \"vendor\": \"0x8086\", \"device\": \"0x352a\", " LINK4 extra "}"
#define INTEL_VALID                                                                                \
        INTEL_M(DISC_OK, STACK("2", "0x15", IRP("0000:15:01.0", KIDS(EP("0000:16:00.0", "")))))
/* The same with the CPU bus registers (@regs: the intel keys to add). */
#define INTEL_REGS(model, regs, box)                                                               \
        "{\"machine\": \"i\", \"cpus\": 8, \"intel\": {\"cpu_model\": " model ", " regs            \
        ", \"sockets\": [{\"id\": 0, \"numa_node\": 0, \"cpus\": \"0-7\", \"discovery\": "         \
        "{" DISC_OK "}, \"iio_stacks\": [" STACK(box, "0x15", IRP("0000:15:01.0", "")) "]}]}}"

/* A small AMD machine: one socket, its root complexes. */
#define AMD_M(rcs)                                                                                 \
        "{\"machine\": \"a\", \"cpus\": 8, \"amd\": {\"cpu_family\": \"0x1a\", "                   \
        "\"cpu_model\": \"0x02\", \"sockets\": [{\"id\": 0, \"numa_node\": 0, \"cpus\": "          \
        "\"0-7\", \"root_complexes\": [" rcs "]}]}}"
#define RC(index, bus, extra, ports)                                                               \
        "{\"index\": " index ", \"bus\": \"" bus "\"" extra ", \"root_ports\": [" ports "]}"
#define ARP(bdf) "{\"bdf\": \"" bdf "\", \"vendor\": \"0x1022\", \"device\": \"0x153d\", " LINK4 "}"

struct err_row {
        const char *name;
        const char *json;
        const char *want[3]; /* substrings of the message */
};

static const struct err_row err_rows[] = {
    /* ---- AMD ---- */
    {"amd: port off the root bus",
     AMD_M(RC("0", "0x00", "", ARP("0000:20:01.1"))),
     {"amd.sockets[0].root_complexes[0].root_ports[0].bdf: ", "root bus 0000:00"}},
    {"amd: root complex index 8",
     AMD_M(RC("8", "0x00", "", "")),
     {"amd.sockets[0].root_complexes[0].index: "}},
    {"amd: duplicate index",
     AMD_M(RC("1", "0x00", "", "") "," RC("1", "0x20", "", "")),
     {"amd.sockets[0].root_complexes[1].index: ", "already described"}},
    {"amd: duplicate bus",
     AMD_M(RC("1", "0x00", "", "") "," RC("2", "0x00", "", "")),
     {"amd.sockets[0].root_complexes[1].bus: ", "also the root bus of root complex 1"}},
    {"amd: remote share above 1",
     AMD_M(RC("0", "0x00", ", \"remote_share\": 1.5", "")),
     {"amd.sockets[0].root_complexes[0].remote_share: "}},
    /* ---- Intel ---- */
    {"intel: port off the stack bus",
     INTEL_M(DISC_OK, STACK("2", "0x15", IRP("0000:16:01.0", KIDS(EP("0000:17:00.0", ""))))),
     {"intel.sockets[0].iio_stacks[0].root_ports[0].bdf: ", "stack's bus 0000:15"}},
    {"intel: port at device 0",
     INTEL_M(DISC_OK, STACK("2", "0x15", IRP("0000:15:00.0", KIDS(EP("0000:16:00.0", ""))))),
     {"intel.sockets[0].iio_stacks[0].root_ports[0].bdf: ", "devices 01..08"}},
    {"intel: port at device 9",
     INTEL_M(DISC_OK, STACK("2", "0x15", IRP("0000:15:09.0", KIDS(EP("0000:16:00.0", ""))))),
     {"intel.sockets[0].iio_stacks[0].root_ports[0].bdf: ", "devices 01..08"}},
    {"intel: port at function 1",
     INTEL_M(DISC_OK, STACK("2", "0x15", IRP("0000:15:01.1", KIDS(EP("0000:16:00.0", ""))))),
     {"intel.sockets[0].iio_stacks[0].root_ports[0].bdf: ", "function 0"}},
    {"intel: duplicate box id",
     INTEL_M(DISC_OK, STACK("2", "0x15", "") "," STACK("2", "0x26", "")),
     {"intel.sockets[0].iio_stacks[1].box_id: ", "box 2 is already a stack"}},
    {"intel: duplicate stack bus",
     INTEL_M(DISC_OK, STACK("2", "0x15", "") "," STACK("4", "0x15", "")),
     {"intel.sockets[0].iio_stacks[1].bus: ", "bus 0x15"}},
    {"intel: table too big for the BAR",
     INTEL_M(DISC("4", "0x1000", UNIT_IIO("12", "") "," UNIT_IIO("120", ", \"first_box_id\": 12")),
             ""),
     {"intel.sockets[0].discovery.bar_size: ", "cannot hold the table", "132 units"}},
    {"intel: stride 2",
     INTEL_M(DISC("2", "0x1000", UNIT_IIO("12", "")), ""),
     {"intel.sockets[0].discovery.stride: ", "at least 3"}},
    {"intel: BAR size not a power of two",
     INTEL_M(DISC("4", "0x3000", UNIT_IIO("12", "")), ""),
     {"intel.sockets[0].discovery.bar_size: ", "power of two"}},
    {"intel: stack without an IIO unit",
     INTEL_M(DISC_OK, STACK("12", "0x15", "")),
     {"intel.sockets[0].iio_stacks[0].box_id: ", "no IIO unit (type 1) with box id 12"}},
    {"intel: unknown key in a unit",
     INTEL_M(DISC("4", "0x1000", UNIT_IIO("12", ", \"flavour\": 1")), ""),
     {"intel.sockets[0].discovery.units[0].flavour: ", "unknown key"}},
    {"intel: unknown key in a stack",
     INTEL_M(DISC_OK, "{\"box_id\": 2, \"bus\": \"0x15\", \"root_ports\": [], \"x\": 1}"),
     {"intel.sockets[0].iio_stacks[0].x: ", "unknown key"}},
    {"intel: unknown key",
     "{\"machine\": \"i\", \"cpus\": 8, \"intel\": {\"cpu_model\": 143, \"colour\": 1}}",
     {"intel.colour: ", "unknown key"}},
    {"intel: duplicate unit",
     INTEL_M(DISC("4", "0x1000", UNIT_IIO("12", "") "," UNIT_IIO("1", ", \"first_box_id\": 3")),
             ""),
     {"intel.sockets[0].discovery.units[1]: ", "type 1 box 3 is already in the table"}},
    {"intel: ctl list and count disagree",
     INTEL_M(DISC("4", "0x1000",
                  "{\"type\": 6, \"access\": \"MMIO\", \"count\": 3, \"ctl\": [\"0xc8aa2800\"], "
                  "\"num_regs\": 4, \"width\": 48, \"ctl_offset\": 64, \"ctr_offset\": 8}"),
             ""),
     {"intel.sockets[0].discovery.units[0].count: ", "3, but \"ctl\" lists 1"}},
    {"intel: bad access",
     INTEL_M(DISC("4", "0x1000",
                  "{\"type\": 6, \"access\": \"IO\", \"ctl\": [\"0xc8aa2800\"], "
                  "\"num_regs\": 4, \"width\": 48, \"ctl_offset\": 64, \"ctr_offset\": 8}"),
             ""),
     {"intel.sockets[0].discovery.units[0].access: ", "\"IO\""}},
    {"intel: CPUs beyond the machine",
     "{\"machine\": \"i\", \"cpus\": 8, \"intel\": {\"cpu_model\": 143, \"sockets\": [{\"id\": "
     "0, \"numa_node\": 0, \"cpus\": \"0-8\", \"discovery\": {" DISC_OK "}}]}}",
     {"intel.sockets[0].cpus: ", "CPU 8 does not exist"}},
    {"intel: CPUs in two pieces",
     "{\"machine\": \"i\", \"cpus\": 8, \"intel\": {\"cpu_model\": 143, \"sockets\": [{\"id\": "
     "0, \"numa_node\": 0, \"cpus\": \"0-1,4-5\", \"discovery\": {" DISC_OK "}}]}}",
     {"intel.sockets[0].cpus: ", "one CPU range"}},
    {"intel: discovery BDF taken",
     "{\"machine\": \"i\", \"cpus\": 8, \"intel\": {\"cpu_model\": 143, \"sockets\": [{\"id\": "
     "0, \"numa_node\": 0, \"cpus\": \"0-7\", \"discovery\": {" DISC_OK
     "}, \"iio_stacks\": []}, {\"id\": 1, \"numa_node\": 1, \"cpus\": \"0-3\", \"discovery\": "
     "{" DISC_OK "}}]}}",
     {"intel.sockets[1].cpus: ", "overlap"}},
    {"intel: registers, stack not in the MCC table",
     INTEL_REGS("143", "\"stack_registers\": true, \"chop\": \"mcc\"", "6"),
     {"intel.stack_registers: ", "box 6", "spr-mcc"}},
    {"intel: registers, unknown chop",
     INTEL_REGS("143", "\"chop\": \"hcc\"", "2"),
     {"intel.chop: ", "\"hcc\""}},
    {"intel: registers, CPU without a table",
     INTEL_REGS("106", "\"stack_registers\": true", "2"),
     {"intel.stack_registers: ", "model 106"}},
    {"neither sicls nor intel", "{\"machine\": \"t\", \"cpus\": 8}", {"sicls: ", "missing"}},
    {"unknown key",
     HEAD RP("0000:00:00.0", ", \"mpz\": 256") TAIL,
     {"sicls[0].cores[0].root_ports[0].mpz: ", "unknown key", "mps"}},
    {"typo at the top", "{\"machine\": \"t\", \"cpu\": 8}", {"cpu: unknown key", "cpus"}},
    {"mps above mpss",
     HEAD RP("0000:00:00.0", KIDS(EP("0000:01:00.0", ", \"mpss\": 256, \"mps\": 512"))) TAIL,
     {"sicls[0].cores[0].root_ports[0].children[0].mps: ", "512 is above mpss 256"}},
    {"mps not a power of two",
     HEAD RP("0000:00:00.0", ", \"mps\": 300") TAIL,
     {"root_ports[0].mps: ", "power of two"}},
    {"duplicate BDF",
     HEAD RP("0000:00:00.0", KIDS(EP("0000:01:00.0", ""))) "," RP(
         "0000:00:04.0", KIDS(EP("0000:01:00.0", ""))) TAIL,
     {"root_ports[1].children[0].bdf: ", "duplicate BDF 0000:01:00.0",
      "sicls[0].cores[0].root_ports[0].children[0]"}},
    {"bad speed string",
     HEAD "{\"bdf\": \"0000:00:00.0\", \"vendor\": \"0x19e5\", \"device\": \"0xa120\", \"link\": "
          "{\"max_speed\": \"16 GT\", \"max_width\": 4}}" TAIL,
     {"root_ports[0].link.max_speed: ", "\"16 GT\" is not a PCIe link speed"}},
    {"speed not in the list",
     HEAD "{\"bdf\": \"0000:00:00.0\", \"vendor\": \"0x19e5\", \"device\": \"0xa120\", \"link\": "
          "{\"max_speed\": \"12GT/s\", \"max_width\": 4}}" TAIL,
     {"link.max_speed: ", "not a PCIe link speed"}},
    {"bad width",
     HEAD "{\"bdf\": \"0000:00:00.0\", \"vendor\": \"0x19e5\", \"device\": \"0xa120\", \"link\": "
          "{\"max_speed\": \"8GT/s\", \"max_width\": 3}}" TAIL,
     {"link.max_width: ", "x3 is not a PCIe link width"}},
    {"bus overlap",
     HEAD RP("0000:00:00.0",
             KIDS("{\"kind\": \"switch\", \"bdf\": \"0000:01:00.0\", \"vendor\": \"0x1000\", "
                  "\"device\": \"0xc010\", " LINK4 ", \"downstream\": [{\"bdf\": \"0000:02:00.0\", "
                  "\"vendor\": \"0x1000\", \"device\": \"0xc010\", " LINK4 KIDS(
                      EP("0000:03:00.0", "")) "}]}")) "," RP("0000:00:04.0",
                                                             KIDS(EP("0000:02:00.1", ""))) TAIL,
     {"sicls[0].cores[0].root_ports[1]: ",
      "buses 0x02-0x02 overlap buses 0x01-0x03 of 0000:00:00.0"}},
    {"two ports claim one bus",
     HEAD RP("0000:00:00.0", KIDS(EP("0000:01:00.0", ""))) "," RP(
         "0000:00:04.0", KIDS(EP("0000:01:00.1", ""))) TAIL,
     {"root_ports[1]: ", "secondary bus 0x01 is also claimed by 0000:00:00.0"}},
    {"child on the parent's bus",
     HEAD RP("0000:00:00.0", KIDS(EP("0000:00:01.0", ""))) TAIL,
     {"children[0].bdf: ", "bus 0x00 is the bus of its parent 0000:00:00.0"}},
    {"child above the parent's bus",
     HEAD RP("0000:05:00.0", KIDS(EP("0000:01:00.0", ""))) TAIL,
     {"children[0].bdf: ", "below the bus 0x05"}},
    {"device 1 below a port",
     HEAD RP("0000:00:00.0", KIDS(EP("0000:01:01.0", ""))) TAIL,
     {"children[0].bdf: ", "only device 00"}},
    {"root bus inside a bridge range",
     "{\"machine\": \"t\", \"cpus\": 8, \"sicls\": [{\"id\": 0, \"numa_node\": 0, \"cores\": "
     "[{\"id\": "
     "0, \"root_ports\": [" RP(
         "0000:00:00.0",
         KIDS(EP("0000:01:00.0", ""))) "]}], \"rcieps\": "
                                       "[{\"bdf\": \"0000:01:02.0\", \"vendor\": \"0x19e5\", "
                                       "\"device\": \"0xa250\", \"class\": "
                                       "\"0x120000\"}]}]}",
     {"sicls[0].rcieps[0].bdf: ", "bus 0x01 is a root bus"}},
    {"port bit clash",
     HEAD RP("0000:00:00.0", ", \"secondary\": 1") "," RP("0000:00:08.0", ", \"secondary\": 2")
         TAIL,
     {"root_ports[1].bdf: ", "port bit 0", "0000:00:00.0"}},
    {"empty bridge without a bus",
     HEAD RP("0000:00:00.0", "") TAIL,
     {"sicls[0].cores[0].root_ports[0]: ", "\"secondary\""}},
    {"PMU function of the wrong kind",
     "{\"machine\": \"t\", \"cpus\": 8, \"sicls\": [{\"id\": 0, \"numa_node\": 0, \"cores\": "
     "[{\"id\": "
     "0, \"pmu\": \"0000:7e:00.1\", \"root_ports\": [" RP(
         "0000:00:00.0",
         KIDS(EP("0000:01:00.0", ""))) "]}], "
                                       "\"rcieps\": [{\"bdf\": \"0000:7e:00.1\", \"vendor\": "
                                       "\"0x19e5\", \"device\": \"0xa12e\", "
                                       "\"class\": \"0x110100\"}]}]}",
     {"sicls[0].cores[0].pmu: ", "not a 19e5:a12d RCiEP"}},
    {"PMU function missing",
     "{\"machine\": \"t\", \"cpus\": 8, \"sicls\": [{\"id\": 0, \"numa_node\": 0, \"cores\": "
     "[{\"id\": "
     "0, \"ptt\": \"0000:7e:00.1\", \"root_ports\": [" RP("0000:00:00.0",
                                                          KIDS(EP("0000:01:00.0", ""))) "]}]}]}",
     {"sicls[0].cores[0].ptt: ", "no device 0000:7e:00.1"}},
    {"link ends disagree",
     HEAD "{\"bdf\": \"0000:00:00.0\", \"vendor\": \"0x19e5\", \"device\": \"0xa120\", \"link\": "
          "{\"max_speed\": \"16GT/s\", \"max_width\": 4, \"speed\": \"8GT/s\"}" KIDS(
              "{\"bdf\": \"0000:01:00.0\", \"vendor\": \"0x144d\", \"device\": \"0xa824\", "
              "\"class\": \"0x010802\", \"link\": {\"max_speed\": \"16GT/s\", \"max_width\": 4, "
              "\"speed\": \"16GT/s\"}}") "}" TAIL,
     {"children[0].link.speed: ", "16GT/s, but sicls[0].cores[0].root_ports[0] says 8GT/s"}},
    {"width above the partner",
     HEAD RP("0000:00:00.0", KIDS("{\"bdf\": \"0000:01:00.0\", \"vendor\": \"0x144d\", "
                                  "\"device\": \"0xa824\", \"class\": \"0x010802\", \"link\": "
                                  "{\"max_speed\": \"16GT/s\", \"max_width\": 8, \"width\": 8}}"))
         TAIL,
     {"children[0].link.width: ", "x8 is above max_width x4 of 0000:00:00.0"}},
    {"flapping link described on the port",
     HEAD "{\"bdf\": \"0000:00:00.0\", \"vendor\": \"0x19e5\", \"device\": \"0xa120\", \"link\": "
          "{\"max_speed\": \"16GT/s\", \"max_width\": 4, \"flap_period_s\": 4}" KIDS(
              EP("0000:01:00.0", "")) "}" TAIL,
     {"root_ports[0].link.flap_period_s: ", "on the function below it"}},
    {"flap width without a period",
     HEAD RP("0000:00:00.0",
             KIDS("{\"bdf\": \"0000:01:00.0\", \"vendor\": \"0x144d\", "
                  "\"device\": \"0xa824\", \"class\": \"0x010802\", \"link\": "
                  "{\"max_speed\": \"16GT/s\", \"max_width\": 4, \"flap_width\": 2}}")) TAIL,
     {"children[0].link.flap_width: ", "without flap_period_s"}},
    {"flap to the trained width",
     HEAD RP("0000:00:00.0",
             KIDS("{\"bdf\": \"0000:01:00.0\", \"vendor\": \"0x144d\", "
                  "\"device\": \"0xa824\", \"class\": \"0x010802\", \"link\": "
                  "{\"max_speed\": \"16GT/s\", \"max_width\": 4, \"flap_period_s\": 2, "
                  "\"flap_width\": 4}}")) TAIL,
     {"children[0].link.flap_width: ",
      "x4: a flapping link needs a width other than its trained x4"}},
    {"flap period too short",
     HEAD RP("0000:00:00.0",
             KIDS("{\"bdf\": \"0000:01:00.0\", \"vendor\": \"0x144d\", "
                  "\"device\": \"0xa824\", \"class\": \"0x010802\", \"link\": "
                  "{\"max_speed\": \"16GT/s\", \"max_width\": 4, \"flap_period_s\": 0.5}}")) TAIL,
     {"children[0].link.flap_period_s: "}},
    {"speed above its own maximum",
     HEAD "{\"bdf\": \"0000:00:00.0\", \"vendor\": \"0x19e5\", \"device\": \"0xa120\", \"link\": "
          "{\"max_speed\": \"8GT/s\", \"max_width\": 4, \"speed\": \"16GT/s\"}}" TAIL,
     {"root_ports[0].link.speed: ", "16GT/s is above max_speed 8GT/s"}},
    {"link down with a device below",
     HEAD "{\"bdf\": \"0000:00:00.0\", \"vendor\": \"0x19e5\", \"device\": \"0xa120\", \"link\": "
          "{\"max_speed\": \"16GT/s\", \"max_width\": 4, \"width\": 0}" KIDS(
              EP("0000:01:00.0", "")) "}" TAIL,
     {"root_ports[0].link.width: ", "link down"}},
    {"unknown AER counter",
     HEAD RP("0000:00:00.0", ", \"aer\": {\"correctable\": {\"RxErrs\": 1}}") TAIL,
     {"root_ports[0].aer.correctable.RxErrs: ", "unknown correctable AER counter"}},
    {"named bit given as a number",
     HEAD RP("0000:00:00.0", ", \"aer\": {\"fatal\": {\"dev_fatal_errs_bit[4]\": 1}}") TAIL,
     {"aer.fatal.dev_fatal_errs_bit[4]: ", "unknown fatal AER counter"}},
    {"negative AER rate",
     HEAD RP("0000:00:00.0", ", \"aer\": {\"nonfatal\": {\"CmpltTO\": {\"per_second\": -1}}}") TAIL,
     {"aer.nonfatal.CmpltTO.per_second: ", "out of range"}},
    {"workload on a port",
     HEAD RP("0000:00:00.0", ", \"workload\": {}") TAIL,
     {"root_ports[0].workload: ", "unknown key for a Root Port"}},
    {"bad distribution",
     HEAD RP("0000:00:00.0", KIDS(EP("0000:01:00.0", ", \"workload\": {\"dma_read\": {\"sizes\": "
                                                     "[[4096, 0.5], [512]]}}"))) TAIL,
     {"workload.dma_read.sizes[1]: ", "pair"}},
    {"zero weight",
     HEAD RP("0000:00:00.0",
             KIDS(EP("0000:01:00.0", ", \"workload\": {\"dma_read\": {\"latency_ns\": "
                                     "[[400, 0]]}}"))) TAIL,
     {"workload.dma_read.latency_ns[0][1]: ", "weight 0"}},
    {"phase without duration",
     HEAD RP("0000:00:00.0",
             KIDS(EP("0000:01:00.0", ", \"workload\": {\"phases\": [{\"scale\": 1}]}"))) TAIL,
     {"workload.phases[0].duration_s: ", "missing"}},
    {"unknown kernel",
     "{\"machine\": \"t\", \"kernel\": \"6.1\", \"cpus\": 8, \"sicls\": []}",
     {"kernel: ", "\"6.1\" is not a kernel"}},
    {"CPU out of range",
     "{\"machine\": \"t\", \"cpus\": 8, \"sicls\": [{\"id\": 0, \"numa_node\": 0, \"cpus\": "
     "\"0-9\"}]}",
     {"sicls[0].cpus: ", "CPU 9 does not exist"}},
    {"CPU claimed twice",
     "{\"machine\": \"t\", \"cpus\": 8, \"sicls\": [{\"id\": 0, \"numa_node\": 0, \"cpus\": "
     "\"0-3\"}, "
     "{\"id\": 1, \"numa_node\": 1, \"cpus\": \"3-7\"}]}",
     {"sicls[1].cpus: ", "CPU 3 is also listed by sicls[0]"}},
    {"SICL twice",
     "{\"machine\": \"t\", \"cpus\": 8, \"sicls\": [{\"id\": 0, \"numa_node\": 0}, {\"id\": 0, "
     "\"numa_node\": 1}]}",
     {"sicls[1].id: ", "already described"}},
    {"bad BDF", HEAD RP("00:00", "") TAIL, {"root_ports[0].bdf: ", "\"00:00\" is not a BDF"}},
    {"BDF device out of range",
     HEAD RP("0000:00:20.0", "") TAIL,
     {"root_ports[0].bdf: ", "not a BDF"}},
    {"vendor as a number",
     HEAD "{\"bdf\": \"0000:00:00.0\", \"vendor\": 6629}" TAIL,
     {"root_ports[0].vendor: ", "hex string"}},
    {"class of a bridge on an endpoint",
     HEAD RP("0000:00:00.0", KIDS("{\"bdf\": \"0000:01:00.0\", \"vendor\": \"0x144d\", \"device\": "
                                  "\"0xa824\", \"class\": \"0x060400\", " LINK4 "}")) TAIL,
     {"children[0].class: ", "bridge class"}},
    {"endpoint without a class",
     HEAD RP("0000:00:00.0", KIDS("{\"bdf\": \"0000:01:00.0\", \"vendor\": "
                                  "\"0x144d\", \"device\": \"0xa824\", " LINK4 "}")) TAIL,
     {"children[0].class: ", "missing"}},
    {"unknown child kind",
     HEAD RP("0000:00:00.0", KIDS("{\"kind\": \"bridge\", \"bdf\": \"0000:01:00.0\"}")) TAIL,
     {"children[0].kind: ", "\"bridge\""}},
    {"cpus out of range",
     "{\"machine\": \"t\", \"cpus\": 1e30, \"sicls\": []}",
     {"cpus: ", "out of range"}},
    {"cpus not an integer",
     "{\"machine\": \"t\", \"cpus\": 2.5, \"sicls\": []}",
     {"cpus: ", "integer"}},
    {"no SICL", "{\"machine\": \"t\", \"cpus\": 8, \"sicls\": []}", {"sicls: ", "empty"}},
    {"top level not an object", "[1, 2]", {"expected an object"}},
    {"syntax error",
     "{\n  \"machine\": \"t\",\n  \"cpus\": 8,,\n}",
     {"test.json: ", "line 3", "syntax error"}},
    {"unclosed", "{\n  \"machine\": \"t\",\n  \"sicls\": [\n", {"line 4", "unexpected end"}},
    {"text after the object", "{\"machine\": \"t\"} x", {"line 1, column 18", "text after"}},
    {"duplicate key",
     "{\"machine\": \"a\",\n \"cpus\": 8,\n \"machine\": \"b\"}",
     {"line 3", "key \"machine\" appears twice"}},
    {"comment hides nothing",
     "/* \"machine\": 1 */ {\"machine\": \"t\", // \"cpus\": 1\n \"cpus\": 0}",
     {"cpus: ", "0 is out of range 1..4096"}},
    {"injection for a missing PMU",
     "{\"machine\": \"t\", \"cpus\": 8, \"sicls\": [{\"id\": 0, \"numa_node\": 0, \"cores\": "
     "[{\"id\": "
     "0, \"root_ports\": [" RP(
         "0000:00:00.0",
         KIDS(EP("0000:01:00.0", ""))) "]}]}], \"inject\": "
                                       "[{\"pmu\": \"hisi_pcie1_core0\", \"errno\": \"EACCES\"}]}",
     {"inject[0].pmu: ", "no PMU \"hisi_pcie1_core0\""}},
    {"injection with a bad errno",
     "{\"machine\": \"t\", \"cpus\": 8, \"sicls\": [{\"id\": 0, \"numa_node\": 0, \"cores\": "
     "[{\"id\": "
     "0, \"root_ports\": [" RP("0000:00:00.0",
                               KIDS(EP("0000:01:00.0", ""))) "]}]}], \"inject\": "
                                                             "[{\"errno\": \"EWHAT\"}]}",
     {"inject[0].errno: ", "\"EWHAT\""}},
    {"name too long",
     "{\"machine\": \"t23456789012345678901234567890123456789012345678901234567890123456789\", "
     "\"cpus\": 8}",
     {"machine: ", "at most 63"}},
    {"NaN",
     "{\"machine\": \"t\", \"cpus\": 8, \"hisi_pcie\": {\"time_clock_hz\": NaN}, \"sicls\": []}",
     {"test.json: "}},
};

static void test_errors(void **state)
{
        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(err_rows); i++) {
                const struct err_row *row = &err_rows[i];
                struct sim_machine *m = (struct sim_machine *)1;
                char err[1024] = "";
                int r = sim_machine_parse(row->json, "test.json", &m, err, sizeof(err));

                if (r != -EINVAL)
                        print_error("row \"%s\": returned %d, message \"%s\"\n", row->name, r, err);
                assert_int_equal(r, -EINVAL);
                assert_null(m);
                if (strncmp(err, "test.json: ", 11))
                        print_error("row \"%s\": message \"%s\" does not start with the origin\n",
                                    row->name, err);
                assert_int_equal(strncmp(err, "test.json: ", 11), 0);
                for (size_t k = 0; k < ARRAY_SIZE(row->want) && row->want[k]; k++) {
                        if (!strstr(err, row->want[k]))
                                print_error("row \"%s\": \"%s\" not in \"%s\"\n", row->name,
                                            row->want[k], err);
                        assert_non_null(strstr(err, row->want[k]));
                }
        }
}

static void test_shipped_spr(void **state)
{
        struct sim_machine *m = load_shipped("spr-2s");
        const struct sim_intel *in = &m->intel;
        const struct sim_device *d;

        (void)state;
        assert_string_equal(m->name, "spr-2s");
        assert_int_equal(m->kernel, SIM_KERNEL_6_12);
        assert_int_equal(m->cpus, 112);
        assert_int_equal(m->core_count, 0);
        assert_true(in->present);
        assert_int_equal(in->cpu_model, 143);
        assert_true(in->iio_in_bytes_per_count == 32);
        assert_true(in->iio_out_bytes_per_count == 4);
        assert_true(in->ioclk_hz == 1e9);
        assert_false(in->die_files);
        assert_int_equal(in->socket_count, 2);
        for (size_t s = 0; s < 2; s++) {
                const struct sim_socket *so = &in->sockets[s];
                size_t imc = 0;

                assert_int_equal(so->id, s);
                assert_int_equal(so->numa_node, (int)s);
                assert_int_equal(so->first_cpu, 56 * s);
                assert_int_equal(so->cpu_count, 56);
                assert_int_equal(so->stride, 4);
                assert_int_equal(so->bar_size, 0x8000);
                assert_int_equal(so->unit_count, 122);
                assert_int_equal(so->other_dvsec_count, 1);
                assert_int_equal(so->other_dvsec_ids[0], 2);
                d = &m->devices[so->discovery_function];
                assert_int_equal(d->vendor, 0x8086);
                assert_int_equal(d->device, 0x09a7);
                assert_int_equal(d->class_code, 0x088000);
                assert_int_equal(d->kind, SIM_RCIEP);
                assert_int_equal(d->bus, s ? 0xfe : 0x7e);
                assert_int_equal(d->numa_node, (int)s);
                for (size_t u = 0; u < so->unit_count; u++) {
                        if (so->units[u].type != 6)
                                continue;
                        assert_int_equal(so->units[u].access, SIM_ACCESS_MMIO);
                        assert_int_equal(so->units[u].box_id, imc);
                        imc++;
                }
                assert_int_equal(imc, 8);
                assert_int_equal(so->stack_count, s ? 2 : 3);
                for (size_t k = 0; k < so->stack_count; k++) {
                        const struct sim_iio_stack *st = &so->stacks[k];

                        for (size_t p = 0; p < st->port_count; p++) {
                                d = &m->devices[st->ports[p]];
                                assert_int_equal(d->kind, SIM_ROOT_PORT);
                                assert_int_equal(d->core, SIM_NONE);
                                assert_int_equal(d->bus, st->bus);
                                assert_true(d->dev >= 1 && d->dev <= 8);
                                assert_int_equal(d->numa_node, (int)s);
                        }
                }
        }
        /* The seed's IMC listing on socket 0. */
        assert_int_equal(in->sockets[0].units[94].type, 6);
        assert_int_equal(in->sockets[0].units[94].ctl, 0xc8aa2800);
        assert_int_equal(in->sockets[0].units[101].ctl, 0xc8c2a800);
        assert_int_equal(in->sockets[0].units[94].ctl_offset, 64);
        assert_int_equal(in->sockets[0].units[94].ctr_offset, 8);
        assert_int_equal(in->sockets[0].units[94].width, 48);
        assert_int_equal(in->sockets[0].units[94].num_regs, 4);
        assert_int_equal(in->sockets[0].stacks[1].port_count, 4);
        /* Buses: the switch two levels below 37:01.0, the empty bay. */
        d = dev_of(m, "0000:37:01.0");
        assert_int_equal(d->secondary, 0x38);
        assert_int_equal(d->subordinate, 0x3b);
        d = dev_of(m, "0000:26:05.0");
        assert_int_equal(d->cur_width, 0);
        assert_int_equal(d->secondary, 0x29);
        d = dev_of(m, "0000:aa:00.0");
        assert_int_equal(d->cur_width, 8);
        assert_int_equal(sim_machine_root_port(m, find(m, "0000:3b:00.0")),
                         find(m, "0000:37:01.0"));
        /* The CPU bus register functions: an MSM and a PCU CR3 per socket,
         * 00.0 on every stack bus. */
        for (size_t s = 0; s < in->socket_count; s++) {
                const struct sim_socket *so = &in->sockets[s];

                d = &m->devices[so->msm_function];
                assert_int_equal(d->device, 0x09a6);
                assert_int_equal(d->bus, s ? 0xfe : 0x7e);
                assert_int_equal(d->dev, 3);
                d = &m->devices[so->pcu_function];
                assert_int_equal(d->device, 0x325b);
                assert_int_equal(d->dev, 0x1e);
                assert_int_equal(d->fn, 3);
                for (size_t k = 0; k < so->stack_count; k++) {
                        d = &m->devices[so->sad_function[k]];
                        assert_int_equal(d->device, 0x09a2);
                        assert_int_equal(d->bus, so->stacks[k].bus);
                        assert_int_equal(d->dev, 0);
                }
        }
        assert_int_equal(in->sockets[0].cpubus[0], 1); /* box 2 */
        assert_int_equal(in->sockets[0].cpubus[2], 3); /* box 6 */
        assert_int_equal(m->device_count, 24 + 2 * 2 + 5);
        sim_machine_free(m);
}

static void test_valid_intel(void **state)
{
        struct sim_machine *m;
        const struct sim_device *d;

        (void)state;
        m = parse_ok(INTEL_VALID);
        assert_true(m->intel.present);
        assert_int_equal(m->core_count, 0);
        assert_int_equal(m->device_count, 3);
        assert_int_equal(m->intel.sockets[0].unit_count, 12);
        assert_int_equal(m->intel.sockets[0].units[11].ctl, 0x30b0);
        assert_int_equal(m->intel.sockets[0].units[11].box_id, 11);
        assert_int_equal(m->intel.sockets[0].stacks[0].port_count, 1);
        assert_true(m->intel.iio_in_bytes_per_count == 32);
        assert_true(m->intel.ioclk_hz == 1e9);
        d = dev_of(m, "0000:15:01.0");
        assert_int_equal(d->core, SIM_NONE);
        assert_int_equal(d->secondary, 0x16);
        assert_int_equal(d->cur_width, 4);
        sim_machine_free(m);
        /* 6.15 is a kernel; a Kunpeng machine has no Intel part. */
        m = parse_ok("{\"machine\": \"i\", \"kernel\": \"6.15\", \"cpus\": 8, "
                     "\"intel\": {\"cpu_model\": 143, \"ioclk_hz\": 5e8, \"die_files\": true, "
                     "\"sockets\": [{\"id\": 0, \"numa_node\": 0, \"cpus\": \"0-7\", "
                     "\"discovery\": {" DISC_OK "}}]}}");
        assert_int_equal(m->kernel, SIM_KERNEL_6_15);
        assert_string_equal(sim_kernel_name(m->kernel), "6.15");
        assert_true(m->intel.ioclk_hz == 5e8);
        assert_true(m->intel.die_files);
        sim_machine_free(m);
        m = parse_ok(VALID);
        assert_false(m->intel.present);
        sim_machine_free(m);
}

static void test_valid_small(void **state)
{
        struct sim_machine *m = parse_ok(VALID);
        const struct sim_device *rp = dev_of(m, "0000:00:00.0");
        const struct sim_device *ep = dev_of(m, "0000:01:00.0");

        (void)state;
        /* defaults */
        assert_int_equal(m->kernel, SIM_KERNEL_6_12);
        assert_int_equal(rp->mpss, 256);
        assert_int_equal(rp->mps, 256);
        assert_int_equal(rp->mrrs, 512);
        assert_int_equal(rp->class_code, 0x060400);
        assert_true(rp->has_aer);
        assert_int_equal(ep->numa_node, 0);
        assert_int_equal(ep->parent, find(m, "0000:00:00.0"));
        assert_int_equal(ep->core, 0);
        assert_int_equal(m->cores[0].pmu_function, SIM_NONE);
        assert_int_equal(m->cores[0].cpu, 0);
        assert_int_equal(m->cores[0].identifier, 0x30);
        assert_int_equal(sim_machine_root_port(m, find(m, "0000:01:00.0")),
                         find(m, "0000:00:00.0"));
        sim_machine_free(m);
}

static void test_bounds(void **state)
{
        size_t cap = 200000, len = 0;
        char *json = malloc(cap);
        struct sim_machine *m = NULL;
        char err[512];

        (void)state;
        assert_non_null(json);
        /* More devices than SIM_MAX_DEVICES, in two SICLs of 520 RCiEPs. */
        len += (size_t)snprintf(json + len, cap - len,
                                "{\"machine\": \"t\", \"cpus\": 8, \"sicls\": [");
        for (unsigned int i = 0; i < 1040; i++) {
                if (i % 520 == 0)
                        len += (size_t)snprintf(json + len, cap - len,
                                                "%s{\"id\": %u, \"numa_node\": 0, \"rcieps\": [",
                                                i ? "]}," : "", i / 520);
                len +=
                    (size_t)snprintf(json + len, cap - len,
                                     "%s{\"bdf\": \"%04x:%02x:%02x.%x\", \"vendor\": \"0x19e5\", "
                                     "\"device\": \"0xa250\", \"class\": \"0x120000\"}",
                                     i % 520 ? "," : "", i >> 8, i & 0xff, 0, 0);
        }
        snprintf(json + len, cap - len, "]}]}");
        assert_int_equal(sim_machine_parse(json, "big", &m, err, sizeof(err)), -EINVAL);
        if (!strstr(err, "sicls[1].rcieps[504]: more than 1024 devices"))
                print_error("%s\n", err);
        assert_non_null(strstr(err, "sicls[1].rcieps[504]: more than 1024 devices"));

        /* Nesting deeper than json-c allows. */
        memset(json, '[', 5000);
        json[5000] = '\0';
        assert_int_equal(sim_machine_parse(json, "deep", &m, err, sizeof(err)), -EINVAL);
        assert_non_null(strstr(err, "deep: line 1"));

        /* 17 Root Ports in one core. */
        len = (size_t)snprintf(json, cap, "%s", HEAD);
        for (unsigned int i = 0; i < 17; i++)
                len += (size_t)snprintf(json + len, cap - len,
                                        "%s{\"bdf\": \"0000:00:%02x.0\", \"vendor\": \"0x19e5\", "
                                        "\"device\": \"0xa120\", " LINK4 "}",
                                        i ? "," : "", i);
        snprintf(json + len, cap - len, "%s", TAIL);
        assert_int_equal(sim_machine_parse(json, "ports", &m, err, sizeof(err)), -EINVAL);
        assert_non_null(strstr(err, "root_ports: 17 entries"));

        /* Small, absent or NULL message buffers. */
        assert_int_equal(sim_machine_parse("{", "x", &m, err, 1), -EINVAL);
        assert_string_equal(err, "");
        assert_int_equal(sim_machine_parse("{", "x", &m, NULL, 0), -EINVAL);
        assert_int_equal(sim_machine_parse(NULL, "x", &m, err, sizeof(err)), -EINVAL);
        assert_int_equal(sim_machine_parse("{}", NULL, NULL, err, sizeof(err)), -EINVAL);
        free(json);
}

static void test_load_errors(void **state)
{
        struct sim_machine *m = NULL;
        char err[512], path[] = "/tmp/test_sim_machine.XXXXXX";
        FILE *f;
        int fd;

        (void)state;
        assert_int_equal(sim_machine_load("/nonexistent/machine.json", &m, err, sizeof(err)),
                         -ENOENT);
        assert_non_null(strstr(err, "/nonexistent/machine.json"));
        assert_null(m);
        assert_int_equal(sim_machine_load("/", &m, err, sizeof(err)), -EINVAL);
        fd = mkstemp(path);
        assert_true(fd >= 0);
        f = fdopen(fd, "w");
        assert_non_null(f);
        fwrite("{\"machine\": \"t\"\0}", 1, 18, f);
        fclose(f);
        assert_int_equal(sim_machine_load(path, &m, err, sizeof(err)), -EINVAL);
        assert_non_null(strstr(err, "NUL byte"));
        f = fopen(path, "w");
        assert_non_null(f);
        fputs("{\"machine\": \"t\",\n \"cpus\": 8,\n \"sicls\": 3}\n", f);
        fclose(f);
        assert_int_equal(sim_machine_load(path, &m, err, sizeof(err)), -EINVAL);
        assert_int_equal(strncmp(err, path, strlen(path)), 0);
        assert_non_null(strstr(err, ": sicls: expected an array, got a number"));
        unlink(path);
}

/* Cut and mutated versions of a real description never crash the loader. */
static void test_robustness(void **state)
{
        char path[512], err[256];
        struct sim_machine *m;
        uint32_t seed = 12345;
        FILE *f;
        char *text;
        long size;

        (void)state;
        snprintf(path, sizeof(path), "%skunpeng930-misconfig.json", MACHINES);
        f = fopen(path, "r");
        assert_non_null(f);
        fseek(f, 0, SEEK_END);
        size = ftell(f);
        fseek(f, 0, SEEK_SET);
        text = malloc((size_t)size + 1);
        assert_non_null(text);
        assert_int_equal(fread(text, 1, (size_t)size, f), (size_t)size);
        fclose(f);
        text[size] = '\0';
        for (long cut = 0; cut < size - 2; cut += 97) {
                char saved = text[cut];

                text[cut] = '\0';
                m = NULL;
                assert_int_equal(sim_machine_parse(text, "cut", &m, err, sizeof(err)), -EINVAL);
                assert_null(m);
                assert_true(err[0] != '\0');
                text[cut] = saved;
        }
        for (int i = 0; i < 400; i++) {
                char *copy = strdup(text);
                int r;

                assert_non_null(copy);
                for (int k = 0; k < 3; k++) {
                        seed = seed * 1103515245u + 12345u;
                        copy[(seed >> 8) % (uint32_t)size] =
                            "0123456789{}[]\",:x-. "[(seed >> 4) % 21];
                }
                m = NULL;
                r = sim_machine_parse(copy, "mutant", &m, err, sizeof(err));
                assert_true(r == 0 || r == -EINVAL);
                assert_true(r != 0 || m != NULL);
                if (r)
                        assert_true(err[0] != '\0');
                sim_machine_free(m);
                free(copy);
        }
        free(text);
}

/* ---- the sysfs tree ---- */

static const char *const kernels[] = {"5.17", "6.2", "6.9", "6.12"};

static void test_tree_per_kernel(void **state)
{
        (void)state;
        for (int k = 0; k < 4; k++) {
                char json[4096], err[512];
                const char *pmu = "sys/bus/event_source/devices/hisi_pcie0_core0";
                struct sim_machine *m = NULL;
                char *root = make_root();
                struct dirent *de;
                size_t events = 0;
                DIR *dir;

                snprintf(json, sizeof(json),
                         HEAD_K("%s") RP("0000:00:00.0", KIDS(EP("0000:01:00.0", ""))) "," RP(
                             "0000:00:04.0", ", \"secondary\": 2") TAIL,
                         kernels[k]);
                assert_int_equal(sim_machine_parse(json, "k", &m, err, sizeof(err)), 0);
                assert_string_equal(sim_kernel_name(m->kernel), kernels[k]);
                assert_int_equal(sim_sysfs_write(m, root, 100, err, sizeof(err)), 0);

                assert_file(root, "100\n", "%s/type", pmu);
                assert_file(root, "0\n", "%s/cpumask", pmu);
                assert_file(root, "0x30\n", "%s/identifier", pmu);
                assert_file(root, "0x00\n", "%s/bus", pmu);
                assert_file(root, "config:0-16\n", "%s/format/event", pmu);
                assert_file(root, "config1:0-3\n", "%s/format/thr_len", pmu);
                assert_file(root, "config1:4\n", "%s/format/thr_mode", pmu);
                assert_file(root, "config1:5-8\n", "%s/format/trig_len", pmu);
                assert_file(root, "config1:9\n", "%s/format/trig_mode", pmu);
                assert_file(root, "config2:0-15\n", "%s/format/port", pmu);
                assert_file(root, "config2:16-31\n", "%s/format/bdf", pmu);
                assert_file(root, "config=0x10\n", "%s/events/rx_mwr_latency", pmu);
                assert_file(root, "config=0x10010\n", "%s/events/rx_mwr_cnt", pmu);
                assert_file(root, "config=0x210\n", "%s/events/rx_mrd_latency", pmu);
                assert_file(root, "config=0x10210\n", "%s/events/rx_mrd_cnt", pmu);
                assert_file(root, "config=0x11\n", "%s/events/tx_mrd_latency", pmu);
                assert_file(root, "config=0x10011\n", "%s/events/tx_mrd_cnt", pmu);
                if (k == 0) { /* 5.17: the wrong codes, no len_mode */
                        assert_file(root, "config=0x1005\n", "%s/events/rx_mrd_flux", pmu);
                        assert_file(root, "config=0x11005\n", "%s/events/rx_mrd_time", pmu);
                        assert_file(root, "config=0x2004\n", "%s/events/tx_mrd_flux", pmu);
                        assert_file(root, "config=0x12004\n", "%s/events/tx_mrd_time", pmu);
                        assert_no_file(root, "%s/format/len_mode", pmu);
                } else {
                        assert_file(root, "config=0x804\n", "%s/events/rx_mrd_flux", pmu);
                        assert_file(root, "config=0x10804\n", "%s/events/rx_mrd_time", pmu);
                        assert_file(root, "config=0x405\n", "%s/events/tx_mrd_flux", pmu);
                        assert_file(root, "config=0x10405\n", "%s/events/tx_mrd_time", pmu);
                        assert_file(root, "config1:10-11\n", "%s/format/len_mode", pmu);
                }
                if (k >= 2) { /* 6.9: four more pairs */
                        assert_file(root, "config=0x104\n", "%s/events/rx_mwr_flux", pmu);
                        assert_file(root, "config=0x10104\n", "%s/events/rx_mwr_time", pmu);
                        assert_file(root, "config=0x2004\n", "%s/events/rx_cpl_flux", pmu);
                        assert_file(root, "config=0x12004\n", "%s/events/rx_cpl_time", pmu);
                        assert_file(root, "config=0x105\n", "%s/events/tx_mwr_flux", pmu);
                        assert_file(root, "config=0x10105\n", "%s/events/tx_mwr_time", pmu);
                        assert_file(root, "config=0x1005\n", "%s/events/tx_cpl_flux", pmu);
                        assert_file(root, "config=0x11005\n", "%s/events/tx_cpl_time", pmu);
                } else {
                        assert_no_file(root, "%s/events/rx_mwr_flux", pmu);
                        assert_no_file(root, "%s/events/tx_cpl_flux", pmu);
                }
                if (k == 3) { /* 6.12: bdf_min / bdf_max, %#04x */
                        assert_file(root, "0x00\n", "%s/bdf_min", pmu);
                        assert_file(root, "0x20\n", "%s/bdf_max", pmu);
                } else {
                        assert_no_file(root, "%s/bdf_min", pmu);
                        assert_no_file(root, "%s/bdf_max", pmu);
                }
                {
                        char events_dir[1024];

                        snprintf(events_dir, sizeof(events_dir), "%s/%s/events", root, pmu);
                        dir = opendir(events_dir);
                }
                assert_non_null(dir);
                while ((de = readdir(dir)))
                        events += de->d_name[0] != '.';
                closedir(dir);
                assert_int_equal(events, k >= 2 ? 18 : 10);
                sim_machine_free(m);
                drop_root(root);
        }
}

#define PCI "sys/bus/pci/devices/"

static void test_tree_files(void **state)
{
        struct sim_machine *m = load_shipped("kunpeng930-2p");
        char *root = make_root();
        char err[512], cmdline[600];

        (void)state;
        assert_int_equal(sim_sysfs_write(m, root, 64, err, sizeof(err)), 0);
        /* a Gen5 x16 Root Port */
        assert_file(root, "0x19e5\n", PCI "0000:00:00.0/vendor");
        assert_file(root, "0xa120\n", PCI "0000:00:00.0/device");
        assert_file(root, "0x060400\n", PCI "0000:00:00.0/class");
        assert_file(root, "0x30\n", PCI "0000:00:00.0/revision");
        assert_file(root, "0\n", PCI "0000:00:00.0/numa_node");
        assert_file(root, "32.0 GT/s PCIe\n", PCI "0000:00:00.0/current_link_speed");
        assert_file(root, "16\n", PCI "0000:00:00.0/current_link_width");
        assert_file(root, "32.0 GT/s PCIe\n", PCI "0000:00:00.0/max_link_speed");
        assert_file(root, "16\n", PCI "0000:00:00.0/max_link_width");
        assert_file(root, "1\n", PCI "0000:00:00.0/secondary_bus_number");
        /* the Hi1822 behind its bridge, at 8GT/s on a Gen5 port */
        assert_file(root, "8.0 GT/s PCIe\n", PCI "0000:80:10.0/current_link_speed");
        assert_file(root, "2\n", PCI "0000:87:00.0/numa_node");
        assert_file(root, "0x19e5\n", PCI "0000:87:00.0/subsystem_vendor");
        assert_file(root, "0xd136\n", PCI "0000:87:00.0/subsystem_device");
        assert_file(root, "0x020000\n", PCI "0000:87:00.0/class");
        /* the empty hot-plug bay */
        assert_file(root, "Unknown\n", PCI "0000:00:0e.0/current_link_speed");
        assert_file(root, "0\n", PCI "0000:00:0e.0/current_link_width");
        assert_file(root, "32.0 GT/s PCIe\n", PCI "0000:00:0e.0/max_link_speed");
        assert_file(root, "4\n", PCI "0000:00:0e.0/max_link_width");
        /* an RCiEP has no link and (here) no AER */
        assert_file(root, "Unknown\n", PCI "0000:7e:00.0/current_link_speed");
        assert_file(root, "0\n", PCI "0000:7e:00.0/max_link_width");
        assert_no_file(root, PCI "0000:7e:00.0/aer_dev_correctable");
        assert_no_file(root, PCI "0000:7e:00.0/secondary_bus_number");
        /* AER text as the kernel prints it */
        assert_file(root,
                    "RxErr 3\nBadTLP 0\nBadDLLP 1\nRollover 0\nTimeout 0\nNonFatalErr 0\n"
                    "CorrIntErr 0\nHeaderOF 0\nTOTAL_ERR_COR 4\n",
                    PCI "0000:03:00.0/aer_dev_correctable");
        assert_file(root,
                    "Undefined 0\nDLP 0\nSDES 0\nTLP 0\nFCP 0\nCmpltTO 0\nCmpltAbrt 0\n"
                    "UnxCmplt 0\nRxOF 0\nMalfTLP 0\nECRC 0\nUnsupReq 0\nACSViol 0\n"
                    "UncorrIntErr 0\nBlockedTLP 0\nAtomicOpBlocked 0\nTLPBlockedErr 0\n"
                    "PoisonTLPBlocked 0\nTOTAL_ERR_FATAL 0\n",
                    PCI "0000:03:00.0/aer_dev_fatal");
        assert_file(root, "4\n", PCI "0000:00:0a.0/aer_rootport_total_err_cor");
        assert_file(root, "0\n", PCI "0000:00:0a.0/aer_rootport_total_err_fatal");
        assert_file(root, "0\n", PCI "0000:00:0a.0/aer_rootport_total_err_nonfatal");
        assert_file(root, "2\n", PCI "0000:00:10.0/aer_rootport_total_err_cor");
        assert_no_file(root, PCI "0000:03:00.0/aer_rootport_total_err_cor");
        /* PMUs: one per core, types in core order */
        assert_file(root, "64\n", "sys/bus/event_source/devices/hisi_pcie0_core0/type");
        assert_file(root, "69\n", "sys/bus/event_source/devices/hisi_pcie1_core2/type");
        assert_file(root, "64\n", "sys/bus/event_source/devices/hisi_pcie1_core2/cpumask");
        assert_file(root, "0x80\n", "sys/bus/event_source/devices/hisi_pcie1_core2/bus");
        assert_file(root, "0x8080\n", "sys/bus/event_source/devices/hisi_pcie1_core2/bdf_min");
        assert_file(root, "0x8080\n", "sys/bus/event_source/devices/hisi_pcie1_core2/bdf_max");
        assert_file(root, "0x40\n", "sys/bus/event_source/devices/hisi_pcie0_core1/bdf_min");
        assert_file(root, "0x70\n", "sys/bus/event_source/devices/hisi_pcie0_core1/bdf_max");
        /* CPUs and the command line */
        assert_file(root, "0-127\n", "sys/devices/system/cpu/online");
        snprintf(cmdline, sizeof(cmdline), "%s\n", m->cmdline);
        assert_file(root, cmdline, "proc/cmdline");
        /* the root must be empty */
        assert_int_equal(sim_sysfs_write(m, root, 64, err, sizeof(err)), -EEXIST);
        assert_non_null(strstr(err, root));
        sim_machine_free(m);
        drop_root(root);
}

/* Every image decodes, with the project's decoder, to what was described;
 * the `config` files hold exactly the images. */
static void check_images(const char *name)
{
        struct sim_machine *m = load_shipped(name);
        char *root = make_root();
        uint8_t cfg[4096];
        char err[512];

        assert_int_equal(sim_sysfs_write(m, root, 64, err, sizeof(err)), 0);
        for (size_t i = 0; i < m->device_count; i++) {
                const struct sim_device *d = &m->devices[i];
                struct pcie_func_info info;
                bool bridge = d->kind == SIM_ROOT_PORT || d->kind == SIM_SWITCH_UP ||
                              d->kind == SIM_SWITCH_DOWN;
                static const enum pcie_port_type types[] = {[SIM_ROOT_PORT] = PCIE_PORT_ROOT_PORT,
                                                            [SIM_SWITCH_UP] = PCIE_PORT_UPSTREAM,
                                                            [SIM_SWITCH_DOWN] =
                                                                PCIE_PORT_DOWNSTREAM,
                                                            [SIM_ENDPOINT] = PCIE_PORT_ENDPOINT,
                                                            [SIM_RCIEP] = PCIE_PORT_RC_ENDPOINT};
                char bdf[16], file[1024];
                uint8_t disk[4096];
                FILE *f;

                sim_device_bdf(d, bdf, sizeof(bdf));
                sim_config_image(m, i, cfg);
                memset(&info, 0xff, sizeof(info));
                assert_int_equal(pcie_cfg_decode(cfg, sizeof(cfg), &info), 0);
                assert_int_equal(info.vendor_id, d->vendor);
                assert_int_equal(info.device_id, d->device);
                assert_int_equal(info.class_code, d->class_code);
                assert_int_equal(info.is_bridge, bridge);
                if (bridge) {
                        assert_int_equal(info.primary_bus, d->bus);
                        assert_int_equal(info.secondary_bus, d->secondary);
                        assert_int_equal(info.subordinate_bus, d->subordinate);
                }
                assert_true(info.has_pcie);
                assert_int_equal(info.pcie_cap_version, 2);
                assert_int_equal(info.port_type, types[d->kind]);
                assert_int_equal(info.mpss_bytes, d->mpss);
                assert_int_equal(info.mps_bytes, d->mps);
                assert_int_equal(info.mrrs_bytes, d->mrrs);
                assert_int_equal(info.hotplug_capable, d->hotplug && (d->kind == SIM_ROOT_PORT ||
                                                                      d->kind == SIM_SWITCH_DOWN));
                assert_int_equal(info.has_link, d->kind != SIM_RCIEP);
                if (d->kind != SIM_RCIEP) {
                        assert_int_equal(info.link.max_speed_code, d->max_speed);
                        assert_int_equal(info.link.max_width, d->max_width);
                        assert_int_equal(info.link.cur_speed_code, d->cur_width ? d->cur_speed : 0);
                        assert_int_equal(info.link.cur_width, d->cur_width);
                        assert_int_equal(info.link.speed_vector, (1u << (d->max_speed + 1)) - 2);
                }
                assert_int_equal(info.aer_cap, d->has_aer ? 0x100 : 0);
                assert_int_equal(pcie_cfg_find_ext_cap(cfg, sizeof(cfg), 0x0001),
                                 d->has_aer ? 0x100 : -ENOENT);
                /* the file on disk */
                snprintf(file, sizeof(file), "%s/" PCI "%s/config", root, bdf);
                f = fopen(file, "rb");
                assert_non_null(f);
                assert_int_equal(fread(disk, 1, sizeof(disk), f), sizeof(disk));
                assert_int_equal(fgetc(f), EOF);
                fclose(f);
                assert_memory_equal(disk, cfg, sizeof(cfg));
        }
        /* out of range: all zero, no crash */
        memset(cfg, 0xab, sizeof(cfg));
        sim_config_image(m, m->device_count, cfg);
        assert_int_equal(cfg[0], 0);
        sim_machine_free(m);
        drop_root(root);
}

static void test_config_images(void **state)
{
        (void)state;
        check_images("kunpeng930-2p");
        check_images("kunpeng930-misconfig");
}

static bool temp_files_left(const char *dir)
{
        struct dirent *de;
        bool found = false;
        DIR *d = opendir(dir);

        assert_non_null(d);
        while ((de = readdir(d)))
                found |= strstr(de->d_name, ".tmp") != NULL;
        closedir(d);
        return found;
}

static uint64_t counter(const struct aer_list *l, const char *name)
{
        for (size_t i = 0; i < l->count; i++) {
                if (!strcmp(l->counters[i].name, name))
                        return l->counters[i].count;
        }
        fail_msg("no counter %s", name);
        return 0;
}

static void test_aer_update(void **state)
{
        struct sim_machine *m = load_shipped("kunpeng930-misconfig");
        char *root = make_root();
        char sys[600], err[512], dir[1024];
        struct hw_env env;
        struct aer_device a;
        const char *what = NULL;
        unsigned int bad = 0;

        (void)state;
        assert_int_equal(sim_sysfs_write(m, root, 64, err, sizeof(err)), 0);
        snprintf(sys, sizeof(sys), "%s/sys", root);
        memset(&env, 0, sizeof(env));
        env.sysfs_root = sys;

        /* at start: the initial counts, read with the project's parser */
        assert_int_equal(pcie_monitor_read_aer(&env, "0000:01:00.0", &a, &what, &bad), 0);
        assert_int_equal(counter(&a.classes[AER_CORRECTABLE], "RxErr"), 12);
        assert_int_equal(a.classes[AER_CORRECTABLE].total, 20);
        assert_int_equal(pcie_monitor_read_aer(&env, "0000:00:00.0", &a, &what, &bad), 0);
        assert_true(a.has_rootport_total[AER_CORRECTABLE]);
        assert_int_equal(a.rootport_total[AER_CORRECTABLE], 25);

        /* 10 s later: initial + rate * 10, rounded down */
        assert_int_equal(sim_sysfs_update_aer(m, root, 10.0, NULL), 0);
        assert_int_equal(pcie_monitor_read_aer(&env, "0000:01:00.0", &a, &what, &bad), 0);
        assert_int_equal(counter(&a.classes[AER_CORRECTABLE], "RxErr"), 32);
        assert_int_equal(counter(&a.classes[AER_CORRECTABLE], "BadTLP"), 5);
        assert_int_equal(counter(&a.classes[AER_CORRECTABLE], "BadDLLP"), 10);
        assert_int_equal(counter(&a.classes[AER_CORRECTABLE], "Rollover"), 0);
        assert_int_equal(a.classes[AER_CORRECTABLE].total, 47);
        assert_int_equal(a.classes[AER_FATAL].total, 0);
        assert_int_equal(pcie_monitor_read_aer(&env, "0000:00:00.0", &a, &what, &bad), 0);
        assert_int_equal(counter(&a.classes[AER_CORRECTABLE], "RxErr"), 9);
        assert_int_equal(a.rootport_total[AER_CORRECTABLE], 11 + 47);
        /* the MalfTLP of the mismatched switch port reaches its Root Port */
        assert_int_equal(sim_sysfs_update_aer(m, root, 100.0, NULL), 0);
        assert_int_equal(pcie_monitor_read_aer(&env, "0000:03:00.0", &a, &what, &bad), 0);
        assert_int_equal(counter(&a.classes[AER_FATAL], "MalfTLP"), 3);
        assert_int_equal(a.classes[AER_FATAL].total, 3);
        assert_int_equal(pcie_monitor_read_aer(&env, "0000:00:08.0", &a, &what, &bad), 0);
        assert_int_equal(a.rootport_total[AER_FATAL], 3);
        assert_int_equal(a.rootport_total[AER_NONFATAL], 2 + 5);
        /* nonsense elapsed times read as 0 */
        assert_int_equal(sim_sysfs_update_aer(m, root, -5, NULL), 0);
        assert_int_equal(pcie_monitor_read_aer(&env, "0000:01:00.0", &a, &what, &bad), 0);
        assert_int_equal(a.classes[AER_CORRECTABLE].total, 20);
        snprintf(dir, sizeof(dir), "%s/" PCI "0000:01:00.0", root);
        assert_false(temp_files_left(dir));
        assert_int_equal(sim_sysfs_update_aer(NULL, root, 1, NULL), -EINVAL);

        /* With a record of what was written, a file whose counts did not
         * move is left alone (a marker written into it survives), one whose
         * counts moved is rewritten. */
        {
                uint64_t *written =
                    calloc(m->device_count, SIM_AER_WRITTEN_SLOTS * sizeof(*written));
                char path[PATH_MAX];
                FILE *f;

                assert_non_null(written);
                assert_int_equal(sim_sysfs_update_aer(m, root, 10.0, written), 0);
                snprintf(path, sizeof(path), "%s/aer_dev_fatal", dir);
                f = fopen(path, "w");
                assert_non_null(f);
                fputs("Undefined 0\nTOTAL_ERR_FATAL 0\n", f);
                fclose(f);
                assert_int_equal(sim_sysfs_update_aer(m, root, 20.0, written), 0);
                assert_int_equal(pcie_monitor_read_aer(&env, "0000:01:00.0", &a, &what, &bad), 0);
                assert_int_equal(a.classes[AER_CORRECTABLE].total, 20 + 2 * 27);
                assert_int_equal(a.classes[AER_FATAL].count, 1); /* the marker */
                free(written);
        }
        sim_machine_free(m);
        drop_root(root);
}

static void test_helpers(void **state)
{
        struct sim_machine *m = load_shipped("kunpeng930-2p");
        struct sim_dist d = {2, {1500, 64}, {0.6, 0.4}};
        struct sim_dist empty = {0, {0}, {0}};
        char buf[64];

        (void)state;
        assert_true(sim_dist_mean(&d) > 925.59 && sim_dist_mean(&d) < 925.61);
        assert_true(sim_dist_mean(&empty) == 0);
        assert_string_equal(sim_kernel_name(SIM_KERNEL_5_17), "5.17");
        assert_string_equal(sim_kernel_name(SIM_KERNEL_6_12), "6.12");
        sim_device_bdf(dev_of(m, "0000:8a:00.0"), buf, sizeof(buf));
        assert_string_equal(buf, "0000:8a:00.0");
        assert_int_equal(sim_device_rid(dev_of(m, "0000:80:10.0")), 0x8080);
        assert_int_equal(find(m, "0000:ff:00.0"), SIM_NONE);
        assert_int_equal(sim_machine_root_port(m, find(m, "0000:0a:00.0")),
                         find(m, "0000:00:10.0"));
        assert_int_equal(sim_machine_root_port(m, find(m, "0000:00:10.0")),
                         find(m, "0000:00:10.0"));
        assert_int_equal(sim_machine_root_port(m, find(m, "0000:75:00.0")), SIM_NONE);
        assert_int_equal(sim_machine_root_port(m, m->device_count), SIM_NONE);
        sim_pmu_name(m, 5, buf, sizeof(buf));
        assert_string_equal(buf, "hisi_pcie1_core2");
        sim_pmu_name(m, 99, buf, sizeof(buf));
        assert_string_equal(buf, "");
        sim_machine_free(m);
        sim_machine_free(NULL);
        assert_int_equal(sim_sysfs_remove(""), -EINVAL);
}

static void test_injections(void **state)
{
        struct sim_machine *m = parse_ok(
            "{\"machine\": \"t\", \"cpus\": 8, \"sicls\": [{\"id\": 1, \"numa_node\": 0, "
            "\"cores\": "
            "[{\"id\": 0, \"root_ports\": [" RP(
                "0000:00:00.0",
                KIDS(EP("0000:01:00.0", ""))) "]}]}], "
                                              "\"inject\": [{\"pmu\": \"hisi_pcie1_core0\", "
                                              "\"errno\": \"EACCES\", \"count\": -1}, "
                                              "{\"errno\": 16, \"count\": 2}]}");

        (void)state;
        assert_int_equal(m->injection_count, 2);
        assert_string_equal(m->injections[0].pmu, "hisi_pcie1_core0");
        assert_int_equal(m->injections[0].err, EACCES);
        assert_int_equal(m->injections[0].count, -1);
        assert_string_equal(m->injections[1].pmu, "");
        assert_int_equal(m->injections[1].err, EBUSY);
        assert_int_equal(m->injections[1].count, 2);
        sim_machine_free(m);
}

/* ---- trees of killed processes (issue 19, item 12) ---- */

/* The one entry of @dir whose name starts with @prefix, into @out. */
static bool find_entry(const char *dir, const char *prefix, char *out, size_t len)
{
        DIR *d = opendir(dir);
        struct dirent *de;
        bool found = false;

        assert_non_null(d);
        while ((de = readdir(d)))
                if (!strncmp(de->d_name, prefix, strlen(prefix))) {
                        snprintf(out, len, "%s/%s", dir, de->d_name);
                        found = true;
                }
        closedir(d);
        return found;
}

static void make_dir_with(const char *dir, const char *file)
{
        char path[PATH_MAX + 64];
        int fd;

        assert_int_equal(mkdir(dir, 0755), 0);
        snprintf(path, sizeof(path), "%s/%s", dir, file);
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
        assert_true(fd >= 0);
        close(fd);
}

static bool exists(const char *path)
{
        struct stat st;

        return lstat(path, &st) == 0;
}

static void remove_dir_with(const char *dir, const char *file)
{
        char path[PATH_MAX + 64];

        snprintf(path, sizeof(path), "%s/%s", dir, file);
        unlink(path);
        rmdir(dir);
}

/*
 * A process killed while it runs a simulation (collectd under kill -9)
 * leaves its tree; the next sim_open in the same parent removes it, and
 * nothing else: not a directory without the marker, not a symlink (nor
 * what it points to), not the tree of a live process, not a name of
 * another pattern.
 */
static void test_stale_trees(void **state)
{
        char parent[] = "/tmp/test_sim_stale.XXXXXX", stale[PATH_MAX], fresh[PATH_MAX];
        char nomark[PATH_MAX], link[PATH_MAX], victim[PATH_MAX], live[PATH_MAX], other[PATH_MAX];
        char msg[512] = "", name[64], mark[PATH_MAX + 64];
        struct sim_opts so = {.machine_dir = MACHINES};
        struct sim *s = NULL;
        int status;
        pid_t child;

        (void)state;
        assert_non_null(mkdtemp(parent));
        so.tmp_dir = parent;
        child = fork();
        assert_true(child >= 0);
        if (child == 0) {
                if (sim_open("kunpeng930-2p", &so, &s, msg, sizeof(msg)))
                        _exit(1);
                raise(SIGKILL);
                _exit(2);
        }
        assert_int_equal(waitpid(child, &status, 0), child);
        assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
        assert_true(find_entry(parent, "pciescope-sim-", stale, sizeof(stale)));

        /* What must stay: the same dead pid without the marker; a symlink
         * with the dead pid to a directory holding the marker; a live
         * process's tree (our parent's pid); another pattern. */
        snprintf(nomark, sizeof(nomark), "%s/pciescope-sim-%ld-nomark", parent, (long)child);
        make_dir_with(nomark, "keep");
        snprintf(victim, sizeof(victim), "%s/victim", parent);
        make_dir_with(victim, ".pciescope-sim");
        snprintf(link, sizeof(link), "%s/pciescope-sim-%ld-symlnk", parent, (long)child);
        assert_int_equal(symlink(victim, link), 0);
        snprintf(live, sizeof(live), "%s/pciescope-sim-%ld-livexx", parent, (long)getppid());
        make_dir_with(live, ".pciescope-sim");
        snprintf(other, sizeof(other), "%s/pciescope-sim-old-%ld", parent, (long)child);
        make_dir_with(other, ".pciescope-sim");

        assert_int_equal(sim_open("kunpeng930-2p", &so, &s, msg, sizeof(msg)), 0);
        assert_false(exists(stale));
        snprintf(name, sizeof(name), "pciescope-sim-%ld-", (long)getpid());
        assert_true(find_entry(parent, name, fresh, sizeof(fresh)));
        assert_string_equal(fresh, sim_root(s));
        assert_true(exists(nomark) && exists(link) && exists(live) && exists(other));
        snprintf(mark, sizeof(mark), "%s/.pciescope-sim", victim);
        assert_true(exists(mark));
        sim_close(s);
        assert_false(exists(fresh));

        unlink(link);
        remove_dir_with(nomark, "keep");
        remove_dir_with(victim, ".pciescope-sim");
        remove_dir_with(live, ".pciescope-sim");
        remove_dir_with(other, ".pciescope-sim");
        assert_int_equal(rmdir(parent), 0);
}

/* ---- a flapping link ---- */

static double flap_now;

static double flap_clock(void *ctx)
{
        (void)ctx;
        return flap_now;
}

/* The width both ends show: current_link_width and LNKSTA in config. */
static unsigned int shown_width(const char *root, const char *bdf)
{
        char path[PATH_MAX], text[16] = "";
        uint8_t cfg[256];
        unsigned int w;
        FILE *f;

        snprintf(path, sizeof(path), "%s/" PCI "%s/current_link_width", root, bdf);
        f = fopen(path, "r");
        assert_non_null(f);
        assert_non_null(fgets(text, sizeof(text), f));
        fclose(f);
        w = (unsigned int)atoi(text);
        snprintf(path, sizeof(path), "%s/" PCI "%s/config", root, bdf);
        f = fopen(path, "rb");
        assert_non_null(f);
        assert_int_equal(fread(cfg, 1, sizeof(cfg), f), sizeof(cfg));
        fclose(f);
        /* The PCIe capability at 0x40 (sim_sysfs.c's CAP_EXP), LNKSTA at +0x12. */
        assert_int_equal((cfg[0x40 + 0x12] | cfg[0x40 + 0x13] << 8) >> 4 & 0x3f, w);
        return w;
}

static void test_link_flap(void **state)
{
        char path[] = "/tmp/test_sim_flap.XXXXXX", msg[512] = "";
        struct sim_opts so = {.clock = flap_clock};
        struct sim *s = NULL;
        FILE *f;
        int fd;

        (void)state;
        fd = mkstemp(path);
        assert_true(fd >= 0);
        f = fdopen(fd, "w");
        assert_non_null(f);
        fputs(HEAD RP("0000:00:00.0",
                      KIDS("{\"bdf\": \"0000:01:00.0\", \"vendor\": \"0x144d\", "
                           "\"device\": \"0xa824\", \"class\": \"0x010802\", \"link\": "
                           "{\"max_speed\": \"16GT/s\", \"max_width\": 4, "
                           "\"flap_period_s\": 4}}")) TAIL,
              f);
        fclose(f);
        flap_now = 100;
        assert_int_equal(sim_open(path, &so, &s, msg, sizeof(msg)), 0);
        /* Trained x4 at start; x2 (half, the default) in odd periods. */
        assert_int_equal(shown_width(sim_root(s), "0000:01:00.0"), 4);
        flap_now = 101;
        assert_int_equal(sim_refresh(s), 0);
        assert_int_equal(shown_width(sim_root(s), "0000:01:00.0"), 4);
        flap_now = 105;
        assert_int_equal(sim_refresh(s), 0);
        assert_int_equal(shown_width(sim_root(s), "0000:01:00.0"), 2);
        assert_int_equal(shown_width(sim_root(s), "0000:00:00.0"), 2);
        flap_now = 109;
        assert_int_equal(sim_refresh(s), 0);
        assert_int_equal(shown_width(sim_root(s), "0000:01:00.0"), 4);
        assert_int_equal(shown_width(sim_root(s), "0000:00:00.0"), 4);
        assert_false(temp_files_left(sim_root(s)));
        sim_close(s);
        unlink(path);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_shipped_2p),      cmocka_unit_test(test_shipped_misconfig),
            cmocka_unit_test(test_bus_numbers),     cmocka_unit_test(test_valid_small),
            cmocka_unit_test(test_link_flap),       cmocka_unit_test(test_errors),
            cmocka_unit_test(test_bounds),          cmocka_unit_test(test_load_errors),
            cmocka_unit_test(test_robustness),      cmocka_unit_test(test_injections),
            cmocka_unit_test(test_tree_per_kernel), cmocka_unit_test(test_tree_files),
            cmocka_unit_test(test_config_images),   cmocka_unit_test(test_aer_update),
            cmocka_unit_test(test_helpers),         cmocka_unit_test(test_shipped_spr),
            cmocka_unit_test(test_valid_intel),     cmocka_unit_test(test_stale_trees),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
