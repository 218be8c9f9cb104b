// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_sim_intel_iio.c - the simulated Sapphire Rapids machine (spr-2s):
 * the sysfs tree the collectors see (uncore IIO PMUs per kernel, the PMON
 * discovery function's config space, resource and resource0 files, CPU
 * topology, /proc/cpuinfo), and the IIO free-running perf model behind the
 * simulation's perf ops (open errors, groups, counts against the ground
 * truth, enable/disable, no fd leaks). Time is a fake clock.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "hw_env.h"
#include "sim.h"
#include "sim_intel_iio.h"
#include "sim_sysfs.h"
#include "support.h"

#define MACHINES TOP_SRCDIR "/sim/machines"
#define FR       "sys/bus/event_source/devices/uncore_iio_free_running_"
#define PROG     "sys/bus/event_source/devices/uncore_iio_"
#define DISC0    "sys/bus/pci/devices/0000:7e:00.1/"

struct world {
        struct sim *sim;
        struct hw_env env;
        const struct perf_ops *ops;
};

static void world_open(struct world *w, const char *machine, const char *kernel)
{
        struct sim_opts so = {.machine_dir = MACHINES, .kernel = kernel, .clock = fake_clock};
        char msg[512] = "";
        int ret;

        memset(w, 0, sizeof(*w));
        fake_now = 1000;
        ret = sim_open(machine, &so, &w->sim, msg, sizeof(msg));
        if (ret)
                fail_msg("sim_open(%s): %s", machine, msg);
        hw_env_init_system(&w->env);
        assert_int_equal(sim_env(w->sim, &w->env), 0);
        w->ops = w->env.perf;
}

static void world_close(struct world *w)
{
        sim_close(w->sim);
}

/* The whole file below the tree's root, or NULL; *len its size. */
static char *slurp(const char *root, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static char *slurp(const char *root, size_t *len, const char *fmt, ...)
{
        char rel[512], path[1024];
        static char buf[1 << 16];
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
        if (len)
                *len = n;
        return buf;
}

#define assert_file(root, text, ...)                                                               \
        do {                                                                                       \
                const char *got_ = slurp(root, NULL, __VA_ARGS__);                                 \
                if (!got_)                                                                         \
                        print_error("missing file: " __VA_ARGS__);                                 \
                assert_non_null(got_);                                                             \
                if (strcmp(got_, text))                                                            \
                        print_error("got \"%s\", want \"%s\"\n", got_, text);                      \
                assert_string_equal(got_, text);                                                   \
        } while (0)

#define assert_no_file(root, ...) assert_null(slurp(root, NULL, __VA_ARGS__))

static uint64_t le64(const uint8_t *p)
{
        uint64_t v = 0;

        for (int i = 7; i >= 0; i--)
                v = v << 8 | p[i];
        return v;
}

static uint32_t le32(const uint8_t *p)
{
        return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* ---- the tree ---- */

static void check_iio_pmu(const char *root, unsigned int box, const char *mask, bool v615)
{
        const char *scale = v615 ? "3.0517578125e-5" : "3.814697266e-6";
        char want[64];

        snprintf(want, sizeof(want), "%u\n", SIM_IIO_TYPE_BASE + box);
        assert_file(root, want, FR "%u/type", box);
        snprintf(want, sizeof(want), "%s\n", mask);
        assert_file(root, want, FR "%u/cpumask", box);
        assert_file(root, "config:0-7\n", FR "%u/format/event", box);
        assert_file(root, "config:8-15\n", FR "%u/format/umask", box);
        assert_file(root, "event=0xff,umask=0x10", FR "%u/events/ioclk", box);
        for (unsigned int p = 0; p < 8; p++) {
                snprintf(want, sizeof(want), "event=0xff,umask=0x2%u", p);
                assert_file(root, want, FR "%u/events/bw_in_port%u", box, p);
                assert_file(root, scale, FR "%u/events/bw_in_port%u.scale", box, p);
                assert_file(root, "MiB", FR "%u/events/bw_in_port%u.unit", box, p);
                if (v615) {
                        assert_no_file(root, FR "%u/events/bw_out_port%u", box, p);
                        assert_no_file(root, FR "%u/events/bw_out_port%u.scale", box, p);
                        continue;
                }
                snprintf(want, sizeof(want), "event=0xff,umask=0x3%u", p);
                assert_file(root, want, FR "%u/events/bw_out_port%u", box, p);
                assert_file(root, scale, FR "%u/events/bw_out_port%u.scale", box, p);
                assert_file(root, "MiB", FR "%u/events/bw_out_port%u.unit", box, p);
        }
        snprintf(want, sizeof(want), "%u\n", SIM_IIO_TYPE_BASE + 0x100 + box);
        assert_file(root, want, PROG "%u/type", box);
        snprintf(want, sizeof(want), "%s\n", mask);
        assert_file(root, want, PROG "%u/cpumask", box);
        assert_file(root, "config:0-7\n", PROG "%u/format/event", box);
        assert_file(root, "config:8-15\n", PROG "%u/format/umask", box);
        assert_file(root, "config:18\n", PROG "%u/format/edge", box);
        assert_file(root, "config:23\n", PROG "%u/format/inv", box);
        assert_file(root, "config:24-35\n", PROG "%u/format/thresh", box);
        assert_file(root, "config:36-47\n", PROG "%u/format/ch_mask", box);
        assert_file(root, "config:48-50\n", PROG "%u/format/fc_mask", box);
        /* SPR kernels publish no die<N> files (die_files false). */
        assert_no_file(root, PROG "%u/die0", box);
        assert_no_file(root, PROG "%u/die1", box);
}

static void check_tree(const char *kernel, bool v615)
{
        struct world w;
        const char *root;
        char *text;

        world_open(&w, "spr-2s", kernel);
        root = sim_root(w.sim);
        check_iio_pmu(root, 2, "0,56", v615);
        check_iio_pmu(root, 4, "0,56", v615);
        check_iio_pmu(root, 6, "0", v615);
        /* Only the stacks that exist. */
        assert_no_file(root, FR "0/type");
        assert_no_file(root, FR "7/type");
        assert_no_file(root, PROG "1/type");
        /* CPU topology and cpuinfo. */
        assert_file(root, "0-111\n", "sys/devices/system/cpu/online");
        assert_file(root, "0\n", "sys/devices/system/cpu/cpu0/topology/physical_package_id");
        assert_file(root, "0\n", "sys/devices/system/cpu/cpu55/topology/physical_package_id");
        assert_file(root, "1\n", "sys/devices/system/cpu/cpu56/topology/physical_package_id");
        assert_file(root, "1\n", "sys/devices/system/cpu/cpu111/topology/physical_package_id");
        assert_file(root, "0\n", "sys/devices/system/cpu/cpu111/topology/die_id");
        assert_no_file(root, "sys/devices/system/cpu/cpu112/topology/physical_package_id");
        text = slurp(root, NULL, "proc/cpuinfo");
        assert_non_null(text);
        {
                static const char head[] = "processor\t: 0\nvendor_id\t: GenuineIntel\n"
                                           "cpu family\t: 6\nmodel\t\t: 143\n";

                assert_int_equal(strncmp(text, head, strlen(head)), 0);
        }
        assert_non_null(strstr(text, "processor\t: 111\n"));
        assert_non_null(strstr(text, "(SIMULATED)"));
        assert_non_null(strstr(text, "physical id\t: 1\n"));
        /* Devices: the discovery functions and the NUMA nodes. */
        assert_file(root, "0x8086\n", DISC0 "vendor");
        assert_file(root, "0x09a7\n", DISC0 "device");
        assert_file(root, "0x088000\n", DISC0 "class");
        assert_file(root, "0\n", DISC0 "numa_node");
        assert_file(root, "1\n", "sys/bus/pci/devices/0000:fe:00.1/numa_node");
        assert_file(root, "1\n", "sys/bus/pci/devices/0000:98:00.0/numa_node");
        assert_file(root, "0\n", "sys/bus/pci/devices/0000:3a:00.0/numa_node");
        assert_file(root, "0x352a\n", "sys/bus/pci/devices/0000:15:01.0/device");
        /* No hisi_pcie PMU on an Intel machine. */
        assert_no_file(root, "sys/bus/event_source/devices/hisi_pcie0_core0/type");
        world_close(&w);
}

static void test_tree_612(void **state)
{
        (void)state;
        check_tree(NULL, false);
        check_tree("6.12", false);
}

static void test_tree_615(void **state)
{
        (void)state;
        check_tree("6.15", true);
}

static void test_die_files(void **state)
{
        char path[512], err[512] = "", root[] = "/tmp/test_sim_intel_iio.XXXXXX";
        struct sim_machine *m = NULL;

        (void)state;
        snprintf(path, sizeof(path), "%s/spr-2s.json", MACHINES);
        assert_int_equal(sim_machine_load(path, &m, err, sizeof(err)), 0);
        m->intel.die_files = true;
        assert_non_null(mkdtemp(root));
        assert_int_equal(sim_sysfs_write(m, root, 0x7000, err, sizeof(err)), 0);
        assert_file(root, "0000:15\n", PROG "2/die0");
        assert_file(root, "0000:97\n", PROG "2/die1");
        assert_file(root, "0000:26\n", PROG "4/die0");
        assert_file(root, "0000:a8\n", PROG "4/die1");
        assert_file(root, "0000:37\n", PROG "6/die0");
        assert_no_file(root, PROG "6/die1");
        assert_no_file(root, FR "2/die0");
        assert_int_equal(sim_sysfs_remove(root), 0);
        sim_machine_free(m);
}

static void test_resources(void **state)
{
        static const uint64_t imc[8] = {0xc8aa2800, 0xc8aaa800, 0xc8b22800, 0xc8b2a800,
                                        0xc8ba2800, 0xc8baa800, 0xc8c22800, 0xc8c2a800};
        struct world w;
        const char *root;
        uint8_t *img;
        size_t len = 0, imc_seen = 0, iio_seen = 0, units;
        char *text;
        uint64_t g;

        (void)state;
        world_open(&w, "spr-2s", NULL);
        root = sim_root(w.sim);
        text = slurp(root, &len, DISC0 "resource");
        assert_non_null(text);
        assert_int_equal(len, 13 * 57);
        assert_int_equal(strncmp(text,
                                 "0x000020fffe000000 0x000020fffe007fff 0x0000000000140204\n"
                                 "0x0000000000000000 0x0000000000000000 0x0000000000000000\n",
                                 2 * 57),
                         0);
        text = slurp(root, &len, "sys/bus/pci/devices/0000:fe:00.1/resource");
        assert_non_null(text);
        assert_int_equal(
            strncmp(text, "0x000021fffe000000 0x000021fffe007fff 0x0000000000140204\n", 57), 0);

        text = slurp(root, &len, DISC0 "resource0");
        assert_non_null(text);
        assert_int_equal(len, 0x8000);
        img = (uint8_t *)text;
        g = le64(img);
        assert_int_equal(g & 0xff, 0);        /* type */
        assert_int_equal((g >> 8) & 0xff, 4); /* stride */
        units = (g >> 16) & 0x3ff;            /* max_units */
        assert_int_equal(units, 122);
        assert_int_equal(g >> 62, 1); /* MMIO */
        assert_int_equal(le64(img + 8), 0x20fffe000000ULL + 0x8000 - 0x1000);
        for (size_t i = 0; i < units; i++) {
                const uint8_t *e = img + (i + 1) * 4 * 8;
                uint64_t t1 = le64(e), ctl = le64(e + 8), t3 = le64(e + 16);
                unsigned int type = t3 & 0xffff, box = (t3 >> 16) & 0xffff;

                assert_true(t1 != 0 && ctl != 0);
                if (type == 6) {
                        assert_true(box < 8);
                        assert_int_equal(ctl, imc[box]);
                        assert_int_equal(t1 & 0xff, 4);          /* num_regs */
                        assert_int_equal((t1 >> 8) & 0xff, 64);  /* ctl_offset */
                        assert_int_equal((t1 >> 16) & 0xff, 48); /* width */
                        assert_int_equal((t1 >> 24) & 0xff, 8);  /* ctr_offset */
                        assert_int_equal(t1 >> 62, 1);           /* MMIO */
                        imc_seen++;
                }
                if (type == 1) {
                        assert_int_equal(t1 >> 62, 0); /* MSR */
                        assert_int_equal(ctl, 0x3000 + 0x10 * box);
                        iio_seen++;
                }
                if (type == 0 && box == 55)
                        assert_int_equal(ctl, 0x2000 + 0x10 * 55);
        }
        assert_int_equal(imc_seen, 8);
        assert_int_equal(iio_seen, 12);
        /* Beyond the last entry: zeros. */
        for (size_t off = (units + 1) * 32; off < 0x8000; off++)
                assert_int_equal(img[off], 0);
        world_close(&w);
}

static void test_dvsec_chain(void **state)
{
        struct world w;
        const uint8_t *cfg;
        size_t len = 0, off = 0x100;
        uint16_t ids[4];
        size_t n = 0;

        (void)state;
        world_open(&w, "spr-2s", NULL);
        cfg = (const uint8_t *)slurp(sim_root(w.sim), &len, DISC0 "config");
        assert_non_null(cfg);
        assert_int_equal(len, 4096);
        assert_int_equal(le32(cfg) & 0xffff, 0x8086);
        assert_int_equal(le32(cfg) >> 16, 0x09a7);
        assert_int_equal(cfg[0x0e] & 0x7f, 0);                           /* header type 0 */
        assert_true(le32(cfg + 0x04) >> 16 & 0x10);                      /* capability list */
        assert_int_equal(le32(cfg + 0x10), (0xfe000000u & ~0xfu) | 0x4); /* 64-bit memory */
        assert_int_equal(le32(cfg + 0x14), 0x20ff);
        while (off && n < 4) {
                uint32_t hdr = le32(cfg + off);

                assert_int_equal(hdr & 0xffff, 0x0023); /* DVSEC */
                assert_int_equal((hdr >> 16) & 0xf, 1); /* version */
                assert_int_equal(le32(cfg + off + 4) & 0xffff, 0x8086);
                assert_int_equal(le32(cfg + off + 4) >> 20, 0x10); /* length */
                assert_int_equal(le32(cfg + off + 0xc), 0);        /* BIR 0 */
                ids[n++] = (uint16_t)le32(cfg + off + 8);
                off = hdr >> 20;
        }
        assert_int_equal(n, 2);
        assert_int_equal(ids[0], 2); /* PMT telemetry first */
        assert_int_equal(ids[1], 1); /* then PMON discovery */
        world_close(&w);
}

/* ---- perf ---- */

static int open_ev(struct world *w, unsigned int box, unsigned int umask, int cpu, int group,
                   bool disabled)
{
        struct perf_event_attr a = {0};

        a.size = sizeof(a);
        a.type = SIM_IIO_TYPE_BASE + box;
        a.config = 0xff | umask << 8;
        a.disabled = disabled;
        a.read_format =
            PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
        return w->ops->open(w->ops->ctx, &a, -1, cpu, group, 0);
}

static void test_open_errors(void **state)
{
        struct perf_event_attr a = {0};
        struct world w;
        struct sim_iio *iio;
        uint64_t buf[8];
        int fd, fd2;

        (void)state;
        world_open(&w, "spr-2s", NULL);
        iio = sim_iio(w.sim);
        assert_non_null(iio);
        a.size = sizeof(a);
        a.config = 0x20ff;
        a.type = SIM_IIO_TYPE_BASE + 3; /* no stack 3 */
        assert_int_equal(w.ops->open(w.ops->ctx, &a, -1, 0, -1, 0), -ENOENT);
        a.type = 0x1234;
        assert_int_equal(w.ops->open(w.ops->ctx, &a, -1, 0, -1, 0), -ENOENT);
        a.type = SIM_PMU_TYPE_BASE; /* no hisi_pcie PMU here */
        assert_int_equal(w.ops->open(w.ops->ctx, &a, -1, 0, -1, 0), -ENOENT);
        a.type = SIM_IIO_TYPE_BASE + 0x100 + 2; /* programmable: not modelled */
        assert_int_equal(w.ops->open(w.ops->ctx, &a, -1, 0, -1, 0), -ENOENT);
        a.type = SIM_IIO_TYPE_BASE + 2;
        assert_int_equal(w.ops->open(w.ops->ctx, &a, 0, 0, -1, 0), -EINVAL);    /* task */
        assert_int_equal(w.ops->open(w.ops->ctx, &a, -1, -1, -1, 0), -EINVAL);  /* no CPU */
        assert_int_equal(w.ops->open(w.ops->ctx, &a, -1, 999, -1, 0), -EINVAL); /* no such CPU */
        a.type = SIM_IIO_TYPE_BASE + 6; /* stack 6 exists on socket 0 only */
        assert_int_equal(w.ops->open(w.ops->ctx, &a, -1, 56, -1, 0), -EINVAL);
        a.type = SIM_IIO_TYPE_BASE + 2;
        a.config = 0x40ff; /* unknown umask */
        assert_int_equal(w.ops->open(w.ops->ctx, &a, -1, 0, -1, 0), -EINVAL);
        a.config = 0x2001; /* not the free-running event code */
        assert_int_equal(w.ops->open(w.ops->ctx, &a, -1, 0, -1, 0), -EINVAL);
        a.config = 0x20ff;
        a.sample_period = 1000;
        assert_int_equal(w.ops->open(w.ops->ctx, &a, -1, 0, -1, 0), -EINVAL);
        a.sample_period = 0;
        a.exclude_kernel = 1;
        assert_int_equal(w.ops->open(w.ops->ctx, &a, -1, 0, -1, 0), -EINVAL);
        a.exclude_kernel = 0;
        assert_int_equal(sim_iio_open_count(iio), 0);

        /* Groups: one PMU and one socket. */
        fd = open_ev(&w, 2, 0x10, 0, -1, true);
        assert_true(fd >= SIM_IIO_FD_BASE);
        assert_int_equal(open_ev(&w, 4, 0x20, 0, fd, true), -EINVAL);  /* other box */
        assert_int_equal(open_ev(&w, 2, 0x20, 56, fd, true), -EINVAL); /* other socket */
        assert_int_equal(open_ev(&w, 2, 0x20, 0, 12345, true), -EBADF);
        fd2 = open_ev(&w, 2, 0x20, 5, fd, true); /* any CPU of socket 0 */
        assert_true(fd2 >= SIM_IIO_FD_BASE);
        assert_int_equal(open_ev(&w, 2, 0x21, 0, fd2, true), -EINVAL); /* not a leader */
        assert_int_equal(sim_iio_open_count(iio), 2);
        /* Bad fds, short buffers, unknown ioctls, mmap. */
        assert_int_equal(w.ops->read(w.ops->ctx, 7, buf, sizeof(buf)), -EBADF);
        assert_int_equal(w.ops->read(w.ops->ctx, SIM_IIO_FD_BASE + 100, buf, sizeof(buf)), -EBADF);
        assert_int_equal(w.ops->read(w.ops->ctx, fd, buf, 8), -ENOSPC);
        assert_int_equal(w.ops->ioctl(w.ops->ctx, fd, 0x1234, 0), -ENOTTY);
        {
                void *addr = (void *)1;

                assert_int_equal(w.ops->mmap(w.ops->ctx, fd, 4096, 1, 0, &addr), -ENODEV);
                assert_null(addr);
        }
        assert_int_equal(w.ops->close(w.ops->ctx, fd2), 0);
        assert_int_equal(w.ops->close(w.ops->ctx, fd), 0);
        assert_int_equal(w.ops->close(w.ops->ctx, fd), -EBADF);
        assert_int_equal(sim_iio_open_count(iio), 0);
        world_close(&w);
}

/* Opens a group (ioclk leader, bw_in/bw_out of @part, bw_in of an empty
 * part) on @cpu's socket, box @box. fds[0..3]. */
static void open_group(struct world *w, unsigned int box, int cpu, unsigned int part,
                       unsigned int empty_part, int fds[4])
{
        fds[0] = open_ev(w, box, 0x10, cpu, -1, true);
        assert_true(fds[0] >= 0);
        fds[1] = open_ev(w, box, 0x20 + part, cpu, fds[0], true);
        fds[2] = open_ev(w, box, 0x30 + part, cpu, fds[0], true);
        fds[3] = open_ev(w, box, 0x20 + empty_part, cpu, fds[0], true);
        assert_true(fds[1] >= 0 && fds[2] >= 0 && fds[3] >= 0);
}

struct group_read {
        uint64_t nr, enabled, running, v[4];
};

static void read_group(struct world *w, int leader, struct group_read *g)
{
        ssize_t n = w->ops->read(w->ops->ctx, leader, g, sizeof(*g));

        assert_int_equal(n, (ssize_t)sizeof(*g));
        assert_int_equal(g->nr, 4);
        assert_int_equal(g->enabled, g->running);
}

static void near_count(uint64_t got, double want, double tolerance)
{
        if (fabs((double)got - want) > tolerance)
                print_error("count %llu, truth %.3f\n", (unsigned long long)got, want);
        assert_true(fabs((double)got - want) <= tolerance);
}

/* Counts over [t_on, t_read] with a disabled pause, against the truth. */
static void check_counts(const char *kernel, size_t socket, size_t stack, unsigned int box, int cpu,
                         unsigned int part, unsigned int empty_part)
{
        const double in_b = 32, out_b = 4;
        struct world w;
        struct sim_iio *iio;
        struct group_read g;
        double in1, out1, in2, out2;
        int fds[4];

        world_open(&w, "spr-2s", kernel);
        iio = sim_iio(w.sim);
        fake_now = 1002.25;
        open_group(&w, box, cpu, part, empty_part, fds);
        fake_now = 1003;
        read_group(&w, fds[0], &g); /* disabled: nothing yet */
        assert_int_equal(g.enabled, 0);
        assert_int_equal(g.v[0], 0);
        assert_int_equal(g.v[1], 0);
        assert_int_equal(
            w.ops->ioctl(w.ops->ctx, fds[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP), 0);
        fake_now = 1010.5; /* crosses phase boundaries of the bursty devices */
        read_group(&w, fds[0], &g);
        sim_truth_iio_part(iio, socket, stack, part, 3, 10.5, &in1, &out1);
        assert_true(in1 > 0 && out1 > 0);
        assert_int_equal(g.enabled, 7500000000ULL);
        assert_int_equal(g.v[0], 7500000000ULL); /* ioclk at 1 GHz */
        near_count(g.v[1], in1 / in_b, 1);
        near_count(g.v[2], out1 / out_b, 1);
        assert_int_equal(g.v[3], 0);
        /* Disabled: the values stay. */
        assert_int_equal(
            w.ops->ioctl(w.ops->ctx, fds[0], PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP), 0);
        fake_now = 1014;
        {
                struct group_read h;

                read_group(&w, fds[0], &h);
                assert_memory_equal(&g, &h, sizeof(g));
        }
        assert_int_equal(
            w.ops->ioctl(w.ops->ctx, fds[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP), 0);
        fake_now = 1033.125;
        read_group(&w, fds[0], &g);
        sim_truth_iio_part(iio, socket, stack, part, 14, 33.125, &in2, &out2);
        assert_int_equal(g.enabled, 7500000000ULL + 19125000000ULL);
        assert_int_equal(g.v[0], 7500000000ULL + 19125000000ULL);
        near_count(g.v[1], (in1 + in2) / in_b, 2);
        near_count(g.v[2], (out1 + out2) / out_b, 2);
        assert_int_equal(g.v[3], 0);
        /* Reset zeroes the group. */
        assert_int_equal(
            w.ops->ioctl(w.ops->ctx, fds[0], PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP), 0);
        read_group(&w, fds[0], &g);
        assert_int_equal(g.v[0], 0);
        assert_int_equal(g.v[1], 0);
        for (int i = 3; i >= 0; i--)
                assert_int_equal(w.ops->close(w.ops->ctx, fds[i]), 0);
        assert_int_equal(sim_iio_open_count(iio), 0);
        world_close(&w);
}

static void test_counts(void **state)
{
        (void)state;
        /* socket 0, box 2: the ConnectX-7 (two functions below 15:01.0) */
        check_counts(NULL, 0, 0, 2, 0, 0, 1);
        /* socket 0, box 4, part 2 (26:03.0): a bursty NVMe */
        check_counts(NULL, 0, 1, 4, 3, 2, 4);
        /* socket 0, box 6: GPU and NVMe two levels below a switch */
        check_counts("6.15", 0, 2, 6, 0, 0, 7);
        /* socket 1, box 4, part 0: the RAID controller with an idle phase */
        check_counts(NULL, 1, 1, 4, 100, 0, 1);
}

static void test_truth(void **state)
{
        struct world w;
        struct sim_iio *iio;
        double in, out;

        (void)state;
        world_open(&w, "spr-2s", NULL);
        iio = sim_iio(w.sim);
        /* Two CX7 functions: DMA writes + MMIO read data in; DMA read data
         * + MMIO writes out (steady workloads: rate x time). */
        sim_truth_iio_part(iio, 0, 0, 0, 1, 3, &in, &out);
        assert_true(fabs(in - 2 * (14e9 + 8e4 + 2.5e9)) < 1);
        assert_true(fabs(out - 2 * (11e9 + 6e7 + 2e9 + 8e6)) < 1);
        /* Below the switch: GPU + NVMe. */
        sim_truth_iio_part(iio, 0, 2, 0, 0, 1, &in, &out);
        assert_true(fabs(in - (3e9 + 2e5 + 2e9)) < 1);
        assert_true(fabs(out - (18e9 + 4e7 + 9e9 + 1e7)) < 1);
        /* The empty bay (part 4 of box 4), the idle drive (part 6), no port. */
        sim_truth_iio_part(iio, 0, 1, 4, 0, 10, &in, &out);
        assert_true(in == 0 && out == 0);
        sim_truth_iio_part(iio, 0, 1, 6, 0, 10, &in, &out);
        assert_true(in == 0 && out == 0);
        sim_truth_iio_part(iio, 0, 0, 7, 0, 10, &in, &out);
        assert_true(in == 0 && out == 0);
        sim_truth_iio_part(iio, 5, 0, 0, 0, 10, &in, &out);
        assert_true(in == 0 && out == 0);
        /* The RAID's third phase (15..20 s of its 20 s cycle) is idle. */
        sim_truth_iio_part(iio, 1, 1, 0, 15, 20, &in, &out);
        assert_true(in == 0 && out == 0);
        assert_true(sim_iio_now(iio) == 0);
        world_close(&w);
}

/* Both models behind one set of ops: Kunpeng has no IIO model. */
static void test_routing(void **state)
{
        struct perf_event_attr a = {0};
        struct world w;
        int fd;

        (void)state;
        world_open(&w, "kunpeng930-2p", "6.15");
        assert_null(sim_iio(w.sim));
        a.size = sizeof(a);
        a.type = SIM_IIO_TYPE_BASE + 2;
        a.config = 0x20ff;
        assert_int_equal(w.ops->open(w.ops->ctx, &a, -1, 0, -1, 0), -ENOENT);
        a.type = SIM_PMU_TYPE_BASE;
        a.config = 0x0804; /* rx_mrd_flux */
        a.config2 = 1;     /* port 0 */
        fd = w.ops->open(w.ops->ctx, &a, -1, 0, -1, 0);
        assert_true(fd >= SIM_FD_BASE && fd < SIM_IIO_FD_BASE);
        assert_int_equal(sim_pmu_open_count(sim_pmu(w.sim)), 1);
        assert_int_equal(w.ops->close(w.ops->ctx, fd), 0);
        assert_int_equal(w.ops->close(w.ops->ctx, SIM_IIO_FD_BASE), -EBADF);
        assert_int_equal(sim_pmu_open_count(sim_pmu(w.sim)), 0);
        /* 6.15 is 6.12 for hisi_pcie. */
        assert_non_null(
            slurp(sim_root(w.sim), NULL, "sys/bus/event_source/devices/hisi_pcie0_core0/bdf_min"));
        assert_non_null(slurp(sim_root(w.sim), NULL,
                              "sys/bus/event_source/devices/hisi_pcie0_core0/events/rx_cpl_flux"));
        world_close(&w);
}

/* Many opens and closes, single and grouped: nothing leaks. */
static void test_no_leak(void **state)
{
        struct world w;
        struct sim_iio *iio;
        int fds[64];

        (void)state;
        world_open(&w, "spr-2s", NULL);
        iio = sim_iio(w.sim);
        for (int round = 0; round < 50; round++) {
                for (int i = 0; i < 64; i++) {
                        int leader = i % 8 == 0 ? -1 : fds[i - i % 8];
                        int cpu = (i / 8) % 2 ? 56 + i % 8 : i % 8; /* groups alternate sockets */

                        fds[i] = open_ev(&w, 2, 0x20 + (i % 8), cpu, leader, false);
                        assert_true(fds[i] >= SIM_IIO_FD_BASE);
                }
                assert_int_equal(sim_iio_open_count(iio), 64);
                for (int i = 63; i >= 0; i--)
                        assert_int_equal(w.ops->close(w.ops->ctx, fds[i]), 0);
                assert_int_equal(sim_iio_open_count(iio), 0);
        }
        /* The fds are reused: the lowest free one comes first. */
        fds[0] = open_ev(&w, 2, 0x20, 0, -1, false);
        assert_int_equal(fds[0], SIM_IIO_FD_BASE);
        assert_int_equal(w.ops->close(w.ops->ctx, fds[0]), 0);
        world_close(&w);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_tree_612),    cmocka_unit_test(test_tree_615),
            cmocka_unit_test(test_die_files),   cmocka_unit_test(test_resources),
            cmocka_unit_test(test_dvsec_chain), cmocka_unit_test(test_open_errors),
            cmocka_unit_test(test_counts),      cmocka_unit_test(test_truth),
            cmocka_unit_test(test_routing),     cmocka_unit_test(test_no_leak),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
