// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_hotplug.c - hardware that changes under a running simulated machine
 * (sim_events.h) and what the engine makes of it, under the fake clock:
 * the `events` schedule and its strict loader, surprise removal of a
 * function and of a whole switch subtree with its ground truth (tree,
 * traffic, AER counters of the new pci_dev), and the engine logging each
 * change once, keeping every other unit running, dropping the removed
 * functions' series and picking them up again without a restart, with no
 * negative value and no utilisation above 1.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine.h"
#include "hw_env.h"
#include "sim.h"
#include "sim_events.h"
#include "sim_hisi_ptt.h"
#include "sim_intel_iio.h"
#include "support.h"
#include <linux/perf_event.h>

#ifndef TOP_SRCDIR
#define TOP_SRCDIR "."
#endif
#define HOTPLUG  TOP_SRCDIR "/tests/fixtures/machines/hotplug.json"
#define MACHINES TOP_SRCDIR "/sim/machines"

/* The switch subtree of hotplug.json below Root Port 00:10.0. */
static const char *const subtree[] = {"0000:06:00.0", "0000:07:00.0", "0000:07:01.0",
                                      "0000:07:02.0", "0000:07:03.0", "0000:08:00.0",
                                      "0000:09:00.0", "0000:0a:00.0", "0000:0b:00.0"};
#define SUBTREE (sizeof(subtree) / sizeof(subtree[0]))

static bool dir_exists(struct sim *s, const char *bdf)
{
        char path[4400];
        struct stat st;

        snprintf(path, sizeof(path), "%s/sys/bus/pci/devices/%s", sim_root(s), bdf);
        return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static size_t dev_index(struct sim *s, const char *bdf)
{
        unsigned int dom, bus, dev, fn;

        assert_int_equal(sscanf(bdf, "%x:%x:%x.%x", &dom, &bus, &dev, &fn), 4);
        return sim_machine_find(sim_machine(s), (uint16_t)dom, (uint8_t)bus, (uint8_t)dev,
                                (uint8_t)fn);
}

static struct sim *open_sim(const char *path)
{
        struct sim_opts opts = {.clock = fake_clock};
        struct sim *s = NULL;
        char err[512] = "";

        fake_now = 0;
        assert_int_equal(sim_open(path, &opts, &s, err, sizeof(err)), 0);
        return s;
}

/* ---- the simulator: the schedule and its ground truth ---- */

static void test_schedule_removes_and_adds_a_subtree(void **state)
{
        struct sim *s = open_sim(HOTPLUG);
        const struct sim_machine *m = sim_machine(s);
        size_t rp = dev_index(s, "0000:00:10.0"), nvme3 = dev_index(s, "0000:08:00.0");
        struct sim_truth before, during, after;

        (void)state;
        assert_int_equal(m->schedule_count, 15);
        for (double t = 0; t <= 70; t += 0.5) {
                /* Removed at 10 s, back at 20 s, every 30 s. */
                double phase = fmod(t, 30);
                bool gone = t >= 10 && phase >= 10 && phase < 20;

                fake_now = t;
                assert_int_equal(sim_refresh(s), 0);
                for (size_t i = 0; i < SUBTREE; i++) {
                        if (dir_exists(s, subtree[i]) != !gone)
                                fail_msg("%s at %.1f s: %s", subtree[i], t,
                                         gone ? "still there" : "missing");
                        assert_int_equal(sim_device_present(m, dev_index(s, subtree[i]), t), !gone);
                }
                /* The Root Port above it and the rest of the machine stay. */
                assert_true(dir_exists(s, "0000:00:10.0"));
                assert_true(dir_exists(s, "0000:01:00.0"));
                /* nvme0: removed at 15 s, back at 25 s, once. */
                assert_int_equal(dir_exists(s, "0000:02:00.0"), !(t >= 15 && t < 25));
        }
        /* Traffic through the port stops while the switch is gone. */
        sim_truth_port(sim_pmu(s), rp, SIM_RX_MWR, 2, 8, &before);
        sim_truth_port(sim_pmu(s), rp, SIM_RX_MWR, 11, 19, &during);
        sim_truth_port(sim_pmu(s), rp, SIM_RX_MWR, 22, 28, &after);
        assert_true(before.payload_bytes > 0);
        assert_true(during.payload_bytes == 0);
        assert_true(after.payload_bytes > 0);
        /* Over [5, 25] it carried exactly [5, 10) and [20, 25]. */
        sim_truth_port(sim_pmu(s), rp, SIM_RX_MWR, 5, 25, &during);
        sim_truth_port(sim_pmu(s), rp, SIM_RX_MWR, 5, 10, &before);
        sim_truth_port(sim_pmu(s), rp, SIM_RX_MWR, 20, 25, &after);
        assert_true(fabs(during.payload_bytes - before.payload_bytes - after.payload_bytes) <=
                    1e-9 * during.payload_bytes);
        /* The new pci_dev of a rescan: since 20 s, then 50 s. */
        assert_true(sim_device_origin(m, nvme3, 5) == 0);
        assert_true(sim_device_origin(m, nvme3, 15) < 0);
        assert_true(sim_device_origin(m, nvme3, 25) == 20);
        assert_true(sim_device_origin(m, nvme3, 55) == 50);
        assert_true(fabs(sim_device_present_seconds(m, nvme3, 0, 60) - 40) < 1e-9);
        sim_close(s);
}

/* The files of the functions that came back read as a new pci_dev's:
 * nvme5 (0a:00.0, 2 correctable errors at boot, one more a second) counts
 * from 0 again, and its Root Port's totals never go down: they count what
 * it reported while it was there. */
static unsigned long long read_count(struct hw_env *env, const char *file, const char *key)
{
        char buf[4096];
        const char *p;
        ssize_t n = hw_read_file(env, HW_SYSFS, buf, sizeof(buf), "bus/pci/devices/%s", file);

        if (n == -ENOENT)
                return ~0ull;
        assert_true(n > 0);
        if (!key)
                return strtoull(buf, NULL, 10);
        p = strstr(buf, key);
        assert_non_null(p);
        return strtoull(p + strlen(key), NULL, 10);
}

static void test_aer_of_a_new_pci_dev(void **state)
{
        static const char *const rp_total = "0000:00:10.0/aer_rootport_total_err_cor";
        static const char *const nvme5 = "0000:0a:00.0/aer_dev_correctable";
        struct sim *s = open_sim(HOTPLUG);
        struct hw_env env = {0};

        (void)state;
        assert_int_equal(sim_env(s, &env), 0);
        fake_now = 9;
        assert_int_equal(sim_refresh(s), 0);
        assert_int_equal(read_count(&env, nvme5, "RxErr "), 2 + 9);
        assert_int_equal(read_count(&env, rp_total, NULL), 2 + 9);
        fake_now = 12;
        assert_int_equal(sim_refresh(s), 0);
        assert_true(read_count(&env, nvme5, "RxErr ") == ~0ull); /* gone */
        assert_int_equal(read_count(&env, rp_total, NULL), 2 + 10);
        fake_now = 23.5;
        assert_int_equal(sim_refresh(s), 0);
        assert_int_equal(read_count(&env, nvme5, "RxErr "), 3);
        assert_int_equal(read_count(&env, nvme5, "TOTAL_ERR_COR "), 3);
        assert_int_equal(read_count(&env, rp_total, NULL), 2 + 10 + 3);
        sim_close(s);
}

/* The run-time API: the change is logged with its time and seen at once. */
static void test_runtime_remove_and_add(void **state)
{
        struct sim *s = open_sim(MACHINES "/kunpeng930-2p.json");
        const struct sim_machine *m = sim_machine(s);
        size_t nic = dev_index(s, "0000:01:00.1");
        struct sim_truth t;

        (void)state;
        assert_int_equal(sim_events_count(m), 0);
        fake_now = 3;
        assert_int_equal(sim_device_remove(s, "0000:01:00.1"), 0);
        assert_false(dir_exists(s, "0000:01:00.1"));
        assert_true(dir_exists(s, "0000:01:00.0"));
        assert_int_equal(sim_events_count(m), 1);
        assert_int_equal(m->events[0].kind, SIM_EV_REMOVE);
        assert_true(m->events[0].at_s == 3);
        fake_now = 7;
        assert_int_equal(sim_device_add(s, "0000:01:00.1"), 0);
        assert_true(dir_exists(s, "0000:01:00.1"));
        sim_truth_device(sim_pmu(s), nic, SIM_RX_MWR, 3, 7, &t);
        assert_true(t.payload_bytes == 0);
        sim_truth_device(sim_pmu(s), nic, SIM_RX_MWR, 0, 3, &t);
        assert_true(t.payload_bytes > 0);
        assert_int_equal(sim_device_remove(s, "0000:42:00.0"), -ENODEV);
        assert_int_equal(sim_device_remove(s, "not a bdf"), -ENODEV);
        sim_close(s);
}

/* A PMU driver unbound and bound again, as perf_pmu_unregister() and a
 * new registration do: the directory goes, open events are revoked (read
 * gives 0 bytes, ioctl -ENODEV), the old type opens nothing; bound again,
 * a fresh directory with a new type that opens. */
static void test_pmu_unbind_and_bind(void **state)
{
        struct sim *s = open_sim(MACHINES "/kunpeng930-2p.json");
        struct perf_event_attr a = {
            .size = sizeof(a), .type = SIM_PMU_TYPE_BASE, .config = 0x0104, .config2 = 1};
        const struct perf_ops *ops;
        struct hw_env env = {0};
        uint64_t buf[8];
        char text[64];
        int fd, fd2;

        (void)state;
        assert_int_equal(sim_env(s, &env), 0);
        ops = env.perf;
        fd = ops->open(ops->ctx, &a, -1, 0, -1, 0);
        assert_true(fd >= 0);
        fake_now = 2;
        assert_true(ops->read(ops->ctx, fd, buf, sizeof(buf)) > 0);
        assert_int_equal(sim_pmu_unbind(s, "hisi_pcie0_core0"), 0);
        assert_int_equal(hw_read_file(&env, HW_SYSFS, text, sizeof(text),
                                      "bus/event_source/devices/hisi_pcie0_core0/type"),
                         -ENOENT);
        assert_true(hw_read_file(&env, HW_SYSFS, text, sizeof(text),
                                 "bus/event_source/devices/hisi_pcie0_core1/type") > 0);
        assert_int_equal(ops->read(ops->ctx, fd, buf, sizeof(buf)), 0);
        assert_int_equal(ops->ioctl(ops->ctx, fd, PERF_EVENT_IOC_ENABLE, 0), -ENODEV);
        assert_int_equal(ops->open(ops->ctx, &a, -1, 0, -1, 0), -ENOENT);
        fake_now = 4;
        assert_int_equal(sim_pmu_bind(s, "hisi_pcie0_core0"), 0);
        assert_true(hw_read_file(&env, HW_SYSFS, text, sizeof(text),
                                 "bus/event_source/devices/hisi_pcie0_core0/type") > 0);
        assert_int_equal(strtoul(text, NULL, 10), SIM_PMU_TYPE_BASE + SIM_MAX_CORES);
        assert_int_equal(ops->read(ops->ctx, fd, buf, sizeof(buf)), 0); /* still revoked */
        assert_int_equal(ops->open(ops->ctx, &a, -1, 0, -1, 0), -ENOENT);
        a.type = SIM_PMU_TYPE_BASE + SIM_MAX_CORES;
        fd2 = ops->open(ops->ctx, &a, -1, 0, -1, 0);
        assert_true(fd2 >= 0);
        fake_now = 5;
        assert_true(ops->read(ops->ctx, fd2, buf, sizeof(buf)) > 0);
        assert_int_equal(ops->close(ops->ctx, fd), 0);
        assert_int_equal(ops->close(ops->ctx, fd2), 0);
        assert_int_equal(sim_pmu_open_count(sim_pmu(s)), 0);
        assert_int_equal(sim_pmu_unbind(s, "hisi_pcie9_core9"), -ENODEV);
        sim_close(s);
}

/* The same for a PTT device: the directory goes, the old type opens
 * nothing, a trace in progress stops as the driver's stop does (its buffer
 * handed over TRUNCATED); bound again, a fresh directory with a new type. */
static void test_ptt_unbind_and_bind(void **state)
{
        struct sim *s = open_sim(MACHINES "/kunpeng930-2p.json");
        struct perf_event_attr a = {
            .size = sizeof(a), .type = SIM_PTT_TYPE_BASE, .config = 0x1080001, .disabled = 1};
        const struct perf_ops *ops;
        struct hw_env env = {0};
        char text[64];
        int fd;

        (void)state;
        assert_int_equal(sim_env(s, &env), 0);
        ops = env.perf;
        fake_now = 1;
        assert_int_equal(sim_pmu_unbind(s, "hisi_ptt0_0"), 0);
        assert_int_equal(hw_read_file(&env, HW_SYSFS, text, sizeof(text),
                                      "bus/event_source/devices/hisi_ptt0_0/type"),
                         -ENOENT);
        assert_true(hw_read_file(&env, HW_SYSFS, text, sizeof(text),
                                 "bus/event_source/devices/hisi_ptt0_1/type") > 0);
        assert_true(hw_read_file(&env, HW_SYSFS, text, sizeof(text),
                                 "bus/event_source/devices/hisi_pcie0_core0/type") > 0);
        assert_int_equal(ops->open(ops->ctx, &a, -1, 0, -1, 0), -ENOENT);
        fake_now = 2;
        assert_int_equal(sim_pmu_bind(s, "hisi_ptt0_0"), 0);
        memset(text, 0, sizeof(text));
        assert_true(hw_read_file(&env, HW_SYSFS, text, sizeof(text),
                                 "bus/event_source/devices/hisi_ptt0_0/type") > 0);
        assert_int_equal(strtoul(text, NULL, 10), SIM_PTT_TYPE_BASE + SIM_MAX_CORES);
        assert_true(hw_read_file(&env, HW_SYSFS, text, sizeof(text),
                                 "bus/event_source/devices/hisi_ptt0_0/tune/qos_tx_cpl") > 0);
        assert_int_equal(ops->open(ops->ctx, &a, -1, 0, -1, 0), -ENOENT); /* the old type */
        a.type = SIM_PTT_TYPE_BASE + SIM_MAX_CORES;
        fd = ops->open(ops->ctx, &a, -1, 0, -1, 0);
        assert_true(fd >= 0);
        assert_int_equal(ops->close(ops->ctx, fd), 0);
        assert_int_equal(sim_pmu_unbind(s, "hisi_ptt9_9"), -ENODEV);
        sim_close(s);
}

/* An IIO free-running PMU unbound and bound again: its directory goes,
 * its open events are revoked, the old type opens nothing; bound again,
 * a new type whose events count from 0. */
static void test_iio_unbind_and_bind(void **state)
{
        struct sim *s = open_sim(MACHINES "/spr-2s.json");
        struct perf_event_attr a = {
            .size = sizeof(a), .type = SIM_IIO_TYPE_BASE + 2, .config = 0x20ff};
        struct hw_env env = {0};
        const struct perf_ops *ops;
        uint64_t v_old = 0, v_new = 0;
        char text[64];
        int fd, fd2;

        (void)state;
        assert_int_equal(sim_env(s, &env), 0);
        ops = env.perf;
        fd = ops->open(ops->ctx, &a, -1, 0, -1, 0);
        assert_true(fd >= 0);
        fake_now = 3;
        assert_int_equal(ops->read(ops->ctx, fd, &v_old, sizeof(v_old)), (ssize_t)sizeof(v_old));
        assert_true(v_old > 0);
        assert_int_equal(sim_pmu_unbind(s, "uncore_iio_free_running_2"), 0);
        assert_int_equal(hw_read_file(&env, HW_SYSFS, text, sizeof(text),
                                      "bus/event_source/devices/uncore_iio_free_running_2/type"),
                         -ENOENT);
        assert_true(hw_read_file(&env, HW_SYSFS, text, sizeof(text),
                                 "bus/event_source/devices/uncore_iio_free_running_4/type") > 0);
        assert_int_equal(ops->read(ops->ctx, fd, &v_new, sizeof(v_new)), 0); /* revoked */
        assert_int_equal(ops->open(ops->ctx, &a, -1, 0, -1, 0), -ENOENT);
        fake_now = 4;
        assert_int_equal(sim_pmu_bind(s, "uncore_iio_free_running_2"), 0);
        memset(text, 0, sizeof(text));
        assert_true(hw_read_file(&env, HW_SYSFS, text, sizeof(text),
                                 "bus/event_source/devices/uncore_iio_free_running_2/type") > 0);
        assert_int_equal(strtoul(text, NULL, 10), SIM_IIO_REBIND_BASE + 2);
        assert_int_equal(ops->open(ops->ctx, &a, -1, 0, -1, 0), -ENOENT); /* the old type */
        a.type = SIM_IIO_REBIND_BASE + 2;
        fd2 = ops->open(ops->ctx, &a, -1, 0, -1, 0);
        assert_true(fd2 >= 0);
        fake_now = 5;
        assert_int_equal(ops->read(ops->ctx, fd2, &v_new, sizeof(v_new)), (ssize_t)sizeof(v_new));
        /* From 0: one second of counts, less than the old event's three. */
        assert_true(v_new > 0 && v_new < v_old);
        assert_int_equal(ops->close(ops->ctx, fd), 0);
        assert_int_equal(ops->close(ops->ctx, fd2), 0);
        sim_close(s);
}

/* CPU 0 goes offline at 12 s and back at 22 s: the PMUs on it move their
 * cpumask to another CPU of their die and stay there. */
static void test_cpu_offline_moves_cpumask(void **state)
{
        struct sim *s = open_sim(HOTPLUG);
        struct hw_env env = {0};
        char text[64];

#define SYSFS_IS(path, want)                                                                       \
        do {                                                                                       \
                memset(text, 0, sizeof(text));                                                     \
                assert_true(hw_read_file(&env, HW_SYSFS, text, sizeof(text), path) > 0);           \
                assert_string_equal(text, want);                                                   \
        } while (0)
        (void)state;
        assert_int_equal(sim_env(s, &env), 0);
        fake_now = 11;
        assert_int_equal(sim_refresh(s), 0);
        SYSFS_IS("bus/event_source/devices/hisi_pcie0_core0/cpumask", "0\n");
        SYSFS_IS("devices/system/cpu/online", "0-127\n");
        fake_now = 13;
        assert_int_equal(sim_refresh(s), 0);
        SYSFS_IS("bus/event_source/devices/hisi_pcie0_core0/cpumask", "1\n");
        SYSFS_IS("bus/event_source/devices/hisi_pcie0_core2/cpumask", "1\n");
        SYSFS_IS("bus/event_source/devices/hisi_pcie1_core1/cpumask", "64\n");
        SYSFS_IS("devices/system/cpu/online", "1-127\n");
        /* The PTT devices on CPU 0 move with them (hisi_ptt_cpu_teardown()),
         * those of the other socket stay. */
        SYSFS_IS("bus/event_source/devices/hisi_ptt0_0/cpumask", "1\n");
        SYSFS_IS("bus/event_source/devices/hisi_ptt0_2/cpumask", "1\n");
        SYSFS_IS("bus/event_source/devices/hisi_ptt1_0/cpumask", "64\n");
        {
                /* perf_event_open() on the offline CPU: a PTT device
                 * -ENODEV (its event_init keeps event->cpu), a hisi_pcie
                 * PMU opens (event_init moves it to the cpumask CPU); on
                 * the CPU the cpumask names now, both open. */
                const struct perf_ops *ops = env.perf;
                struct perf_event_attr a = {
                    .size = sizeof(a), .type = SIM_PMU_TYPE_BASE, .config = 0x0104, .config2 = 1};
                struct perf_event_attr t = {.size = sizeof(t),
                                            .type = SIM_PTT_TYPE_BASE,
                                            .config = 0x1080001,
                                            .disabled = 1};
                int fd;

                fd = ops->open(ops->ctx, &a, -1, 0, -1, 0);
                assert_true(fd >= 0);
                assert_int_equal(ops->close(ops->ctx, fd), 0);
                assert_int_equal(ops->open(ops->ctx, &t, -1, 0, -1, 0), -ENODEV);
                fd = ops->open(ops->ctx, &a, -1, 1, -1, 0);
                assert_true(fd >= 0);
                assert_int_equal(ops->close(ops->ctx, fd), 0);
                fd = ops->open(ops->ctx, &t, -1, 1, -1, 0);
                assert_true(fd >= 0);
                assert_int_equal(ops->close(ops->ctx, fd), 0);
        }
        fake_now = 23;
        assert_int_equal(sim_refresh(s), 0);
        SYSFS_IS("devices/system/cpu/online", "0-127\n");
        /* hisi_pcie_pmu_online_cpu() takes a CPU only for a PMU without one. */
        SYSFS_IS("bus/event_source/devices/hisi_pcie0_core0/cpumask", "1\n");
        SYSFS_IS("bus/event_source/devices/hisi_ptt0_0/cpumask", "1\n");
#undef SYSFS_IS
        sim_close(s);
}

/* An Intel IIO PMU counts for each socket on one CPU of it (its cpumask
 * "0,56" on spr-2s): CPU 0 going offline moves socket 0's to CPU 1
 * (uncore_event_cpu_offline()), an event open on it counts on (migrated);
 * back online, CPU 0 takes nothing. */
static void test_cpu_offline_moves_iio_cpumask(void **state)
{
        struct sim *s = open_sim(MACHINES "/spr-2s.json");
        struct hw_env env = {0};
        const struct perf_ops *ops;
        /* bw_in_port0 of the free-running PMU of box 2 */
        struct perf_event_attr a = {
            .size = sizeof(a), .type = SIM_IIO_TYPE_BASE + 2, .config = 0x20ff};
        uint64_t v1 = 0, v2 = 0, v3 = 0;
        char text[64];
        int fd, fd2;

#define SYSFS_IS(path, want)                                                                       \
        do {                                                                                       \
                memset(text, 0, sizeof(text));                                                     \
                assert_true(hw_read_file(&env, HW_SYSFS, text, sizeof(text), path) > 0);           \
                assert_string_equal(text, want);                                                   \
        } while (0)
        (void)state;
        assert_int_equal(sim_env(s, &env), 0);
        ops = env.perf;
        SYSFS_IS("bus/event_source/devices/uncore_iio_free_running_2/cpumask", "0,56\n");
        fd = ops->open(ops->ctx, &a, -1, 0, -1, 0);
        assert_true(fd >= 0);
        fake_now = 1;
        assert_int_equal(ops->read(ops->ctx, fd, &v1, sizeof(v1)), (ssize_t)sizeof(v1));
        assert_int_equal(sim_cpu_down(s, 0), 0);
        SYSFS_IS("bus/event_source/devices/uncore_iio_free_running_2/cpumask", "1,56\n");
        SYSFS_IS("bus/event_source/devices/uncore_iio_2/cpumask", "1,56\n");
        SYSFS_IS("devices/system/cpu/online", "1-111\n");
        fake_now = 2;
        assert_int_equal(ops->read(ops->ctx, fd, &v2, sizeof(v2)), (ssize_t)sizeof(v2));
        assert_true(v2 > v1); /* migrated: counts on */
        fd2 = ops->open(ops->ctx, &a, -1, 1, -1, 0);
        assert_true(fd2 >= 0);
        assert_int_equal(sim_cpu_up(s, 0), 0);
        SYSFS_IS("bus/event_source/devices/uncore_iio_free_running_2/cpumask", "1,56\n");
        fake_now = 3;
        assert_int_equal(ops->read(ops->ctx, fd, &v3, sizeof(v3)), (ssize_t)sizeof(v3));
        assert_true(v3 > v2);
        assert_int_equal(ops->close(ops->ctx, fd), 0);
        assert_int_equal(ops->close(ops->ctx, fd2), 0);
        assert_int_equal(sim_cpu_down(s, 112), -ENODEV);
#undef SYSFS_IS
        sim_close(s);
}

/* ---- the loader ---- */

static const char base[] =
    "{\"machine\": \"t\", \"cpus\": 4, \"sicls\": [{\"id\": 0, \"numa_node\": 0, \"cores\": "
    "[{\"id\": 0, \"root_ports\": [{\"bdf\": \"00:00.0\", \"vendor\": \"0x19e5\", \"device\": "
    "\"0xa120\", \"link\": {\"max_speed\": \"16GT/s\", \"max_width\": 4}, \"children\": "
    "[{\"bdf\": \"01:00.0\", \"vendor\": \"0x144d\", \"device\": \"0xa824\", \"class\": "
    "\"0x010802\", \"link\": {\"max_speed\": \"16GT/s\", \"max_width\": 4}}]}]}]}], "
    "\"events\": %s}";

struct load_case {
        const char *events;
        const char *why; /* NULL: loads */
};

static const struct load_case load_cases[] = {
    {"[]", NULL},
    {"[{\"at_s\": 1, \"kind\": \"remove\", \"bdf\": \"01:00.0\"}]", NULL},
    {"[{\"at_s\": 1, \"every_s\": 5, \"kind\": \"add\", \"bdf\": \"0000:00:00.0\"}]", NULL},
    {"{}", "events: expected an array"},
    {"[1]", "events[0]: expected an object"},
    {"[{\"at_s\": 1, \"kind\": \"remove\", \"bdf\": \"01:00.0\", \"when\": 2}]",
     "events[0].when: unknown key"},
    {"[{\"at_s\": 1, \"kind\": \"unplug\", \"bdf\": \"01:00.0\"}]",
     "events[0].kind: \"unplug\" is not a kind of event"},
    {"[{\"at_s\": 1, \"bdf\": \"01:00.0\"}]", "events[0].kind: missing"},
    {"[{\"kind\": \"remove\", \"bdf\": \"01:00.0\"}]", "events[0].at_s: missing"},
    {"[{\"at_s\": -1, \"kind\": \"remove\", \"bdf\": \"01:00.0\"}]",
     "events[0].at_s: -1 is out of range"},
    {"[{\"at_s\": \"1\", \"kind\": \"remove\", \"bdf\": \"01:00.0\"}]",
     "events[0].at_s: expected a number"},
    {"[{\"at_s\": 1, \"every_s\": 0.5, \"kind\": \"remove\", \"bdf\": \"01:00.0\"}]",
     "events[0].every_s: 0.5 is out of range (1..1e+09)"},
    {"[{\"at_s\": 1, \"kind\": \"remove\"}]", "events[0].bdf: missing"},
    {"[{\"at_s\": 1, \"kind\": \"remove\", \"bdf\": \"02:00.0\"}]",
     "events[0].bdf: no function 02:00.0 on this machine"},
    {"[{\"at_s\": 1, \"kind\": \"remove\", \"bdf\": \"01:00\"}]",
     "events[0].bdf: \"01:00\" is not a BDF"},
    {"[{\"at_s\": 1, \"kind\": \"remove\", \"bdf\": \"01:00.0\", \"cpu\": 3}]",
     "events[0].cpu: a \"remove\" event takes \"bdf\", not \"cpu\""},
    {"[{\"at_s\": 1, \"kind\": \"pmu_unbind\", \"pmu\": \"hisi_pcie0_core0\"}]", NULL},
    {"[{\"at_s\": 1, \"kind\": \"pmu_bind\", \"pmu\": \"hisi_pcie0_core1\"}]",
     "events[0].pmu: no PMU \"hisi_pcie0_core1\" on this machine"},
    {"[{\"at_s\": 1, \"kind\": \"pmu_bind\"}]", "events[0].pmu: missing"},
    {"[{\"at_s\": 1, \"kind\": \"pmu_unbind\", \"pmu\": \"uncore_iio_free_running_2\"}]",
     "events[0].pmu: no PMU \"uncore_iio_free_running_2\" on this machine (the hisi_pcie PMU of "
     "SICL s, core c is hisi_pcie<s>_core<c>, its PTT device hisi_ptt<s>_<c>; an Intel IIO "
     "stack's is uncore_iio_free_running_<box>, the AMD data fabric's amd_df)"},
    {"[{\"at_s\": 1, \"kind\": \"pmu_unbind\", \"pmu\": \"hisi_ptt0_1\"}]",
     "events[0].pmu: no PMU \"hisi_ptt0_1\""},
    {"[{\"at_s\": 1, \"kind\": \"pmu_unbind\", \"pmu\": 3}]", "events[0].pmu: expected a string"},
    {"[{\"at_s\": 1, \"kind\": \"pmu_bind\", \"bdf\": \"01:00.0\"}]",
     "events[0].bdf: a \"pmu_bind\" event takes \"pmu\", not \"bdf\""},
    {"[{\"at_s\": 1, \"kind\": \"cpu_offline\", \"cpu\": 1}]", NULL},
    {"[{\"at_s\": 1, \"kind\": \"cpu_online\", \"cpu\": 4}]",
     "events[0].cpu: 4 is out of range (0..3)"},
    {"[{\"at_s\": 1, \"kind\": \"cpu_online\", \"cpu\": 1.5}]",
     "events[0].cpu: 1.5 is not a CPU number"},
    {"[{\"at_s\": 1, \"kind\": \"ptt_stop\"}]", NULL},
    {"[{\"at_s\": 1, \"kind\": \"ptt_stop\", \"pmu\": \"hisi_pcie0_core0\"}]",
     "events[0].pmu: no PTT device \"hisi_pcie0_core0\" on this machine"},
};

static void test_loader(void **state)
{
        char json[4096], err[512], many[8192];
        struct sim_machine *m;
        int failed = 0;

        (void)state;
        for (size_t i = 0; i < sizeof(load_cases) / sizeof(load_cases[0]); i++) {
                const struct load_case *c = &load_cases[i];
                int r;

                snprintf(json, sizeof(json), base, c->events);
                err[0] = '\0';
                r = sim_machine_parse(json, "t.json", &m, err, sizeof(err));
                if (c->why ? r != -EINVAL || !strstr(err, c->why) || strncmp(err, "t.json: ", 8)
                           : r != 0) {
                        print_message("# %s: %d \"%s\", expected \"%s\"\n", c->events, r, err,
                                      c->why ? c->why : "");
                        failed++;
                }
                sim_machine_free(m);
        }
        assert_int_equal(failed, 0);
        /* At most 64. */
        size_t len = (size_t)snprintf(many, sizeof(many), "[");
        for (int i = 0; i < 65; i++)
                len += (size_t)snprintf(many + len, sizeof(many) - len,
                                        "%s{\"at_s\": %d, \"kind\": \"add\", \"bdf\": \"01:00.0\"}",
                                        i ? "," : "", i);
        snprintf(many + len, sizeof(many) - len, "]");
        char *big = malloc(sizeof(base) + sizeof(many));
        assert_non_null(big);
        snprintf(big, sizeof(base) + sizeof(many), base, many);
        assert_int_equal(sim_machine_parse(big, "t.json", &m, err, sizeof(err)), -EINVAL);
        assert_non_null(strstr(err, "events: 65 events, at most 64"));
        free(big);
}

/* A machine of sim/machines with @events (a JSON array) spliced in, in a
 * new buffer. */
static char *machine_with_events(const char *machine, const char *events)
{
        char *text, *json, *at;
        FILE *f = fopen(machine, "r");
        size_t size;
        long len;

        assert_non_null(f);
        assert_int_equal(fseek(f, 0, SEEK_END), 0);
        len = ftell(f);
        assert_true(len > 0);
        rewind(f);
        size = (size_t)len + strlen(events) + 32;
        text = calloc(1, (size_t)len + 1);
        json = calloc(1, size);
        assert_non_null(text);
        assert_non_null(json);
        assert_int_equal(fread(text, 1, (size_t)len, f), (size_t)len);
        fclose(f);
        at = strstr(text, "\"machine\":");
        assert_non_null(at);
        snprintf(json, size, "%.*s\"events\": %s, %s", (int)(at - text), text, events, at);
        free(text);
        return json;
}

static char *spr_with_events(const char *events)
{
        return machine_with_events(MACHINES "/spr-2s.json", events);
}

/* @json written to a new file named after @path (a mkstemps template). */
static void write_machine(char *path, char *json)
{
        int fd = mkstemps(path, 5);
        FILE *f;

        assert_true(fd >= 0);
        f = fdopen(fd, "w");
        assert_non_null(f);
        fputs(json, f);
        fclose(f);
        free(json);
}

/* On an Intel machine the loader knows the IIO PMUs by name. */
static void test_loader_iio(void **state)
{
        char err[512] = "", *json;
        struct sim_machine *m = NULL;

        (void)state;
        json = spr_with_events("[{\"at_s\": 1, \"kind\": \"pmu_unbind\", \"pmu\": "
                               "\"uncore_iio_free_running_2\"}]");
        assert_int_equal(sim_machine_parse(json, "spr.json", &m, err, sizeof(err)), 0);
        assert_int_equal(m->events[0].pmu, SIM_PMUK_IIO);
        assert_int_equal(m->events[0].core, 2);
        sim_machine_free(m);
        free(json);
        json = spr_with_events("[{\"at_s\": 1, \"kind\": \"pmu_unbind\", \"pmu\": "
                               "\"uncore_iio_free_running_99\"}]");
        assert_int_equal(sim_machine_parse(json, "spr.json", &m, err, sizeof(err)), -EINVAL);
        assert_non_null(strstr(err, "spr.json: events[0].pmu: no PMU "
                                    "\"uncore_iio_free_running_99\" on this machine"));
        free(json);
}

/* ---- the engine ---- */

struct seen {
        bool bdf[SUBTREE + 1]; /* the subtree's functions, then nvme0 */
        bool rp;               /* the Root Port above the switch */
        bool pmu_device;       /* a PMU's per-endpoint series of the subtree */
        bool unbound_pmu;      /* a series of hisi_pcie1_core0 */
        double ptt_tlps;       /* TLPs of the subtree PTT windows counted so far */
        double ptt_cx7;        /* ... of 01:00.0, traced by hisi_ptt0_0 (on CPU 0 at start) */
        double ptt_nvme7;      /* ... of 82:00.0, traced by hisi_ptt1_1 (unbound 26.1-29 s) */
        size_t hisi_sets, negative, above_one;
        char bad[256];
};

static void sink(void *ctx, const struct engine_unit *unit, const struct sample_set *set)
{
        struct seen *s = ctx;

        if (unit && engine_unit_source(unit) == ENGINE_SOURCE_HISI_PCIE)
                s->hisi_sets++;
        for (size_t i = 0; i < set->count; i++) {
                const struct pcie_sample *p = &set->samples[i];
                const char *bdf = pcie_sample_label(p, "bdf");
                const char *req = pcie_sample_label(p, "requester");
                const char *device = pcie_sample_label(p, "device");
                const char *pmu = pcie_sample_label(p, "pmu");

                s->unbound_pmu |= pmu && !strcmp(pmu, "hisi_pcie1_core0");
                double v = p->kind == PCIE_METRIC_COUNTER ? (double)p->counter : p->gauge;

                for (size_t k = 0; device && k < SUBTREE; k++)
                        s->pmu_device |= !strcmp(device, subtree[k]);
                for (size_t k = 0; req && k < SUBTREE; k++)
                        if (!strcmp(req, subtree[k]))
                                s->ptt_tlps += v;
                if (req && !strcmp(req, "0000:01:00.0"))
                        s->ptt_cx7 += v;
                if (req && !strcmp(req, "0000:82:00.0"))
                        s->ptt_nvme7 += v;

                for (size_t k = 0; bdf && k < SUBTREE; k++)
                        s->bdf[k] |= !strcmp(bdf, subtree[k]);
                if (bdf && !strcmp(bdf, "0000:02:00.0"))
                        s->bdf[SUBTREE] = true;
                if (bdf && !strcmp(bdf, "0000:00:10.0"))
                        s->rp = true;
                if (v < 0 || isnan(v)) {
                        s->negative++;
                        snprintf(s->bad, sizeof(s->bad), "%s = %g", p->metric, v);
                }
                if (strstr(p->metric, "utilization") && v > 1) {
                        s->above_one++;
                        snprintf(s->bad, sizeof(s->bad), "%s = %g", p->metric, v);
                }
        }
}

static size_t count(const char *text, const char *what)
{
        size_t n = 0;

        for (const char *p = strstr(text, what); p; p = strstr(p + 1, what))
                n++;
        return n;
}

/* The collectd plugin's path: the engine on hotplug.json, read every
 * second for 35 s (the switch goes at 10 s and is back at 20 s; nvme0 goes
 * at 15 s and is back at 25 s). */
static void test_engine_follows_the_changes(void **state)
{
        struct engine_host host = {
            .log = capture_log, .interval = 1, .clock = fake_clock, .manual = true};
        struct engine_config cfg;
        struct engine *e;
        char why[512] = "";
        size_t hisi_units;

        (void)state;
        fake_now = 0;
        log_text[0] = '\0';
        assert_int_equal(engine_config_init(&cfg), 0);
        assert_int_equal(engine_config_set_string(&cfg, "Simulate", HOTPLUG, why, sizeof(why)), 0);
        /* A PTT window of 0.2 s on every device every second. */
        assert_int_equal(engine_config_set_number(&cfg, "TracePeriod", 1, why, sizeof(why)), 0);
        assert_int_equal(engine_config_set_number(&cfg, "TraceDuration", 0.2, why, sizeof(why)), 0);
        assert_int_equal(engine_config_set_number(&cfg, "MaxConcurrentTraces", 6, why, sizeof(why)),
                         0);
        assert_int_equal(engine_open(&cfg, &host, &e, why, sizeof(why)), 0);
        assert_int_equal(engine_start(e), 0);
        hisi_units = engine_unit_count(e, ENGINE_SOURCE_HISI_PCIE, NULL);
        assert_int_equal(hisi_units, 6);
        double ptt_last = 0, ptt_before = 0, ptt_after = 0;
        double cx7_at_13 = -1, sicl0_ptt_offline = 0;
        double nvme7_at_27 = -1, nvme7_unbound = -1, nvme7_back = 0;

        for (int t = 1; t <= 35; t++) {
                struct seen seen = {0};
                bool switch_gone = t >= 10 && t < 20, nvme0_gone = t >= 15 && t < 25;

                while (engine_next_due(e) <= t) {
                        fake_now = engine_next_due(e);
                        engine_advance(e, fake_now);
                }
                fake_now = t;
                assert_int_equal(engine_read(e, sink, &seen), 0);
                for (size_t k = 0; k < SUBTREE; k++)
                        if (seen.bdf[k] == switch_gone)
                                fail_msg("at %d s %s's series %s", t, subtree[k],
                                         switch_gone ? "still go out" : "are missing");
                assert_int_equal(seen.bdf[SUBTREE], !nvme0_gone);
                /* The PMU's per-endpoint series of the subtree stop too
                 * (from the first interval that ended after 10 s). */
                if (t >= 11 && t < 20 && seen.pmu_device)
                        fail_msg("at %d s the PMU still publishes a removed endpoint", t);
                if ((t >= 3 && t < 10) || t >= 22)
                        assert_true(seen.pmu_device);
                assert_true(seen.rp);
                /* Every PMU unit goes on publishing, but the one whose
                 * driver is unbound from 5 s to 8 s (its first interval
                 * after that has no rates yet). */
                if (t >= 5 && t <= 8)
                        assert_int_equal(seen.hisi_sets, hisi_units - 1);
                else
                        assert_int_equal(seen.hisi_sets, hisi_units);
                assert_int_equal(seen.unbound_pmu, !(t >= 5 && t <= 8));
                if (seen.negative || seen.above_one)
                        fail_msg("at %d s: %s", t, seen.bad);
                /* PTT windows (their counters run over the windows) see
                 * no TLP of a removed function; one read at 11 s may have
                 * begun before 10 s. */
                if (t >= 12 && t <= 20 && seen.ptt_tlps > ptt_last)
                        fail_msg("at %d s PTT windows saw %g TLPs of the removed switch", t,
                                 seen.ptt_tlps - ptt_last);
                if (t < 10)
                        ptt_before = seen.ptt_tlps;
                if (t > 21 && seen.ptt_tlps > ptt_last)
                        ptt_after += seen.ptt_tlps - ptt_last;
                if (seen.ptt_tlps > 0)
                        ptt_last = seen.ptt_tlps;
                /* CPU 0 is offline from 12 s to 22 s: SICL 0's PTT windows
                 * go on (on CPU 1). */
                if (t == 13)
                        cx7_at_13 = seen.ptt_cx7;
                if (t == 21)
                        sicl0_ptt_offline = seen.ptt_cx7 - cx7_at_13;
                /* hisi_ptt1_1 is unbound from 26.1 s to 29 s: no window
                 * traces between 27 s and 29 s; its windows come back. */
                if (t == 27)
                        nvme7_at_27 = seen.ptt_nvme7;
                if (t == 29)
                        nvme7_unbound = seen.ptt_nvme7 - nvme7_at_27;
                if (t == 35)
                        nvme7_back = seen.ptt_nvme7 - nvme7_at_27 - nvme7_unbound;
        }
        assert_true(ptt_before > 0);
        assert_true(ptt_after > 0);
        /* Each change logged once, by function. */
        for (size_t k = 0; k < SUBTREE; k++) {
                char gone[128], back[128];

                snprintf(gone, sizeof(gone), "%s: PCI function gone", subtree[k]);
                snprintf(back, sizeof(back), "%s: PCI function appeared", subtree[k]);
                assert_int_equal(count(log_text, gone), 1);
                assert_int_equal(count(log_text, back), 1);
        }
        assert_int_equal(count(log_text, "0000:02:00.0: PCI function gone"), 1);
        assert_int_equal(count(log_text, "0000:02:00.0: PCI function appeared"), 1);
        assert_int_equal(count(log_text, "PCI function gone"), SUBTREE + 1);
        assert_int_equal(count(log_text, "hisi_pcie1_core0: PMU gone (its driver was unbound)"), 1);
        assert_int_equal(count(log_text, "hisi_pcie1_core0: PMU back (perf type 28739)"), 1);
        assert_int_equal(count(log_text, "PMU gone"), 1);
        for (int core = 0; core < 3; core++) {
                char moved[96];

                snprintf(
                    moved, sizeof(moved),
                    "hisi_pcie0_core%d: cpumask moved from CPU 0 to CPU 1 (a CPU went offline)",
                    core);
                assert_int_equal(count(log_text, moved), 1);
        }
        /* ... and so do the PTT devices of SICL 0: their windows open on
         * CPU 1 from then on (perf_event_open() on CPU 0 fails), logged
         * once each, no failed window. */
        for (int core = 0; core < 3; core++) {
                char moved[128];

                snprintf(moved, sizeof(moved),
                         "hisi_ptt0_%d: cpumask moved from CPU 0 to CPU 1 (a CPU went offline); "
                         "trace windows open there",
                         core);
                assert_int_equal(count(log_text, moved), 1);
        }
        assert_int_equal(count(log_text, "cpumask moved"), 6);
        assert_int_equal(count(log_text, "trace window failed"), 0);
        assert_true(sicl0_ptt_offline > 0);
        /* The PTT device hisi_ptt1_1 lost its driver at 26.1 s and got it
         * back at 29 s with a new perf type: logged once each way, no
         * window while it was gone, windows again after. */
        assert_int_equal(count(log_text, "hisi_ptt1_1: PTT device gone (its driver was unbound)"),
                         1);
        assert_int_equal(count(log_text, "hisi_ptt1_1: PTT device back (perf type 31300)"), 1);
        assert_int_equal(count(log_text, "PTT device gone"), 1);
        assert_true(nvme7_unbound == 0);
        assert_true(nvme7_back > 0);
        /* The PTT driver stopped hisi_ptt0_0's trace at 16.1 s: that window
         * ended on time, logged once, and the next ones are whole. */
        assert_int_equal(count(log_text, "hisi_ptt0_0: the driver stopped the trace before the "
                                         "window ended"),
                         1);
        assert_int_equal(count(log_text, "hisi_ptt0_0: trace windows whole again"), 1);
        assert_int_equal(count(log_text, "the driver stopped the trace"), 1);
        assert_int_equal(count(log_text, "reading counters"), 0);
        engine_close(e);
        engine_config_clear(&cfg);
}

struct iio_seen {
        size_t box2, others, negative, above_one;
        char bad[256];
};

static void iio_sink(void *ctx, const struct engine_unit *unit, const struct sample_set *set)
{
        struct iio_seen *s = ctx;

        (void)unit;
        for (size_t i = 0; i < set->count; i++) {
                const struct pcie_sample *p = &set->samples[i];
                const char *pmu = pcie_sample_label(p, "pmu");
                double v = p->kind == PCIE_METRIC_COUNTER ? (double)p->counter : p->gauge;

                if (!pmu || strncmp(pmu, "uncore_iio_free_running_", 24) ||
                    strcmp(p->metric, "pcie_port_bandwidth_bytes_per_second"))
                        continue;
                if (!strcmp(pmu, "uncore_iio_free_running_2"))
                        s->box2++;
                else
                        s->others++;
                if (v < 0 || isnan(v)) {
                        s->negative++;
                        snprintf(s->bad, sizeof(s->bad), "%s %s = %g", pmu, p->metric, v);
                }
        }
        for (size_t i = 0; i < set->count; i++) {
                const struct pcie_sample *p = &set->samples[i];

                if (strstr(p->metric, "utilization") && p->gauge > 1) {
                        s->above_one++;
                        snprintf(s->bad, sizeof(s->bad), "%s = %g", p->metric, p->gauge);
                }
        }
}

/* The engine on spr-2s whose IIO PMU of box 2 (a stack on both sockets)
 * loses its driver at 5.5 s and gets it back at 8.5 s (a new perf type,
 * counters from 0), and whose CPU 0 (socket 0's IIO CPU) goes offline at
 * 12 s: each socket's unit logs the loss and the return once, publishes
 * nothing of box 2 while it is gone and from the first interval after its
 * return on, keeps its other stacks, and no rate is ever negative. */
static void test_engine_follows_iio(void **state)
{
        struct engine_host host = {
            .log = capture_log, .interval = 1, .clock = fake_clock, .manual = true};
        char path[] = "/tmp/pciescope-hotplug-spr-XXXXXX.json", why[512] = "";
        struct engine_config cfg;
        struct engine *e;
        char *json;
        FILE *f;
        int fd;

        (void)state;
        json = spr_with_events(
            "[{\"at_s\": 5.5, \"kind\": \"pmu_unbind\", \"pmu\": \"uncore_iio_free_running_2\"},"
            " {\"at_s\": 8.5, \"kind\": \"pmu_bind\", \"pmu\": \"uncore_iio_free_running_2\"},"
            " {\"at_s\": 12, \"kind\": \"cpu_offline\", \"cpu\": 0}]");
        fd = mkstemps(path, 5);
        assert_true(fd >= 0);
        f = fdopen(fd, "w");
        assert_non_null(f);
        fputs(json, f);
        fclose(f);
        free(json);
        fake_now = 0;
        log_text[0] = '\0';
        assert_int_equal(engine_config_init(&cfg), 0);
        assert_int_equal(engine_config_set_string(&cfg, "Simulate", path, why, sizeof(why)), 0);
        assert_int_equal(engine_open(&cfg, &host, &e, why, sizeof(why)), 0);
        assert_int_equal(engine_start(e), 0);
        for (int t = 1; t <= 16; t++) {
                struct iio_seen seen = {0};

                while (engine_next_due(e) <= t) {
                        fake_now = engine_next_due(e);
                        engine_advance(e, fake_now);
                }
                fake_now = t;
                assert_int_equal(engine_read(e, iio_sink, &seen), 0);
                if (seen.negative || seen.above_one)
                        fail_msg("at %d s: %s", t, seen.bad);
                if (t >= 2 && !seen.others)
                        fail_msg("at %d s the other IIO stacks published nothing", t);
                /* Gone from the first read after 5.5 s; back with rates from
                 * the second interval after 8.5 s. */
                if (t >= 6 && t <= 9 && seen.box2)
                        fail_msg("at %d s box 2 still published %zu rates", t, seen.box2);
                if (((t >= 2 && t <= 5) || t >= 11) && !seen.box2)
                        fail_msg("at %d s box 2 published no rate", t);
        }
        assert_int_equal(count(log_text, "uncore_iio_free_running_2: PMU gone (its driver was "
                                         "unbound); socket 0's"),
                         1);
        assert_int_equal(count(log_text, "uncore_iio_free_running_2: PMU gone (its driver was "
                                         "unbound); socket 1's"),
                         1);
        assert_int_equal(count(log_text, "uncore_iio_free_running_2: PMU back (perf type 32258)"),
                         2);
        assert_int_equal(count(log_text, "PMU gone"), 2);
        assert_int_equal(count(log_text, "reading counters"), 0);
        engine_close(e);
        engine_config_clear(&cfg);
        unlink(path);
}

/* turin-2p's data fabric PMU (amd_df, one unit per socket) loses its
 * driver at 5.5 s and gets it back at 8.5 s (a new perf type, counters
 * from 0): each socket's unit logs the loss and the return once, publishes
 * no rate while it is gone, rates again from the first interval after its
 * return, and none is negative. */
struct df_seen {
        size_t rates[2], negative;
        char bad[256];
};

static void df_sink(void *ctx, const struct engine_unit *unit, const struct sample_set *set)
{
        struct df_seen *s = ctx;

        (void)unit;
        for (size_t i = 0; i < set->count; i++) {
                const struct pcie_sample *p = &set->samples[i];
                const char *pmu = pcie_sample_label(p, "pmu");
                const char *socket = pcie_sample_label(p, "socket");

                if (!pmu || strcmp(pmu, "amd_df") || !socket ||
                    strcmp(p->metric, "pcie_port_bandwidth_bytes_per_second"))
                        continue;
                s->rates[socket[0] == '1']++;
                if (p->gauge < 0 || isnan(p->gauge)) {
                        s->negative++;
                        snprintf(s->bad, sizeof(s->bad), "socket %s %s = %g", socket, p->metric,
                                 p->gauge);
                }
        }
}

static void test_engine_follows_amd_df(void **state)
{
        struct engine_host host = {
            .log = capture_log, .interval = 1, .clock = fake_clock, .manual = true};
        char path[] = "/tmp/pciescope-hotplug-turin-XXXXXX.json", why[512] = "";
        struct engine_config cfg;
        struct engine *e;

        (void)state;
        write_machine(path, machine_with_events(
                                MACHINES "/turin-2p.json",
                                "[{\"at_s\": 5.5, \"kind\": \"pmu_unbind\", \"pmu\": \"amd_df\"},"
                                " {\"at_s\": 8.5, \"kind\": \"pmu_bind\", \"pmu\": \"amd_df\"}]"));
        fake_now = 0;
        log_text[0] = '\0';
        assert_int_equal(engine_config_init(&cfg), 0);
        assert_int_equal(engine_config_set_string(&cfg, "Simulate", path, why, sizeof(why)), 0);
        assert_int_equal(engine_open(&cfg, &host, &e, why, sizeof(why)), 0);
        assert_int_equal(engine_start(e), 0);
        for (int t = 1; t <= 14; t++) {
                struct df_seen seen = {0};

                while (engine_next_due(e) <= t) {
                        fake_now = engine_next_due(e);
                        engine_advance(e, fake_now);
                }
                fake_now = t;
                assert_int_equal(engine_read(e, df_sink, &seen), 0);
                if (seen.negative)
                        fail_msg("at %d s: %s", t, seen.bad);
                for (int k = 0; k < 2; k++) {
                        /* Gone from the first read after 5.5 s; back with
                         * rates from the second interval after 8.5 s. */
                        if (t >= 6 && t <= 9 && seen.rates[k])
                                fail_msg("at %d s socket %d still published %zu rates", t, k,
                                         seen.rates[k]);
                        if (((t >= 2 && t <= 5) || t >= 11) && !seen.rates[k])
                                fail_msg("at %d s socket %d published no rate", t, k);
                }
        }
        assert_int_equal(count(log_text, "amd_df-socket0: PMU gone (its driver was unbound)"), 1);
        assert_int_equal(count(log_text, "amd_df-socket1: PMU gone (its driver was unbound)"), 1);
        assert_int_equal(count(log_text, "PMU back (perf type 37121)"), 2); /* 0x9101 */
        assert_int_equal(count(log_text, "PMU gone"), 2);
        assert_int_equal(count(log_text, "reading counters"), 0);
        engine_close(e);
        engine_config_clear(&cfg);
        unlink(path);
}

/* ---- a device absent at start ---- */

#define LATE "0000:01:00.1" /* cx7-p1, below Root Port 00:00.0 of hisi_pcie0_core0 */
#define KEPT "0000:01:00.0" /* cx7-p0, the other endpoint of that port */

struct late_seen {
        double late_rx, late_tx; /* pcie_device_bandwidth_bytes_per_second of LATE */
        double kept_rx, kept_tx; /* ... of KEPT */
        double kept_flux;        /* its raw rx_mwr flux counter (Detail full) */
        bool late_any, kept_flux_seen, late_ptt;
        size_t negative;
        char bad[256];
};

static void late_sink(void *ctx, const struct engine_unit *unit, const struct sample_set *set)
{
        struct late_seen *s = ctx;

        (void)unit;
        for (size_t i = 0; i < set->count; i++) {
                const struct pcie_sample *p = &set->samples[i];
                const char *device = pcie_sample_label(p, "device");
                const char *target = pcie_sample_label(p, "target");
                const char *req = pcie_sample_label(p, "requester");
                const char *tlp = pcie_sample_label(p, "tlp");
                const char *event = pcie_sample_label(p, "event");
                double v = p->kind == PCIE_METRIC_COUNTER ? (double)p->counter : p->gauge;

                if (v < 0 || isnan(v)) {
                        s->negative++;
                        snprintf(s->bad, sizeof(s->bad), "%s = %g", p->metric, v);
                }
                if (req && !strcmp(req, LATE) && v > 0)
                        s->late_ptt = true;
                s->late_any |=
                    (device && !strcmp(device, LATE)) || (target && !strcmp(target, LATE));
                if (!strcmp(p->metric, "pcie_pmu_flux_total") && target && !strcmp(target, KEPT) &&
                    event && strstr(event, "rx_mwr")) {
                        s->kept_flux = v;
                        s->kept_flux_seen = true;
                }
                if (strcmp(p->metric, "pcie_device_bandwidth_bytes_per_second") || !device || !tlp)
                        continue;
                if (!strcmp(device, LATE))
                        *(strcmp(tlp, "mwr") ? &s->late_tx : &s->late_rx) = v;
                if (!strcmp(device, KEPT))
                        *(strcmp(tlp, "mwr") ? &s->kept_tx : &s->kept_rx) = v;
        }
}

static void check_close(double got, double want, const char *what, int t)
{
        if (!(want > 0) || fabs(got - want) > 0.01 * want)
                fail_msg("at %d s %s: %g, the simulator says %g", t, what, got, want);
}

/* A NIC function described in the machine file but removed at 0 s (so the
 * engine starts without it) and added at 10.5 s: the monitor's rescan bumps
 * the topology generation, hisi_pcie0_core0 replans without a restart and
 * logs it once; from a few intervals later its per-device bandwidth is
 * published and matches the simulator's truth (1 %), the PTT windows name it
 * as a requester, and the other endpoint of the same port goes on: its
 * series at every read, its rates right, its raw counter never going back. */
static void test_engine_picks_up_a_late_device(void **state)
{
        struct engine_host host = {
            .log = capture_log, .interval = 1, .clock = fake_clock, .manual = true};
        char path[] = "/tmp/pciescope-hotplug-late-XXXXXX.json", why[512] = "";
        struct engine_config cfg;
        struct engine *e;
        struct sim *truth;
        double rate[2][2], last_flux = 0; /* [late, kept][rx_mwr, tx_cpl] */
        size_t late = 0, kept = 0;
        int first_late = 0;
        bool late_ptt = false;

        (void)state;
        write_machine(path, machine_with_events(
                                MACHINES "/kunpeng930-2p.json",
                                "[{\"at_s\": 0, \"kind\": \"remove\", \"bdf\": \"" LATE "\"},"
                                " {\"at_s\": 10.5, \"kind\": \"add\", \"bdf\": \"" LATE "\"}]"));
        /* The ground truth: the same machine, on the same clock. */
        truth = open_sim(path);
        late = dev_index(truth, LATE);
        kept = dev_index(truth, KEPT);
        for (int k = 0; k < 2; k++) {
                size_t dev = k ? kept : late;
                struct sim_truth t;

                sim_truth_device(sim_pmu(truth), dev, SIM_RX_MWR, 12, 30, &t);
                rate[k][0] = (t.payload_bytes + t.header_bytes) / 18;
                sim_truth_device(sim_pmu(truth), dev, SIM_TX_CPL, 12, 30, &t);
                rate[k][1] = (t.payload_bytes + t.header_bytes) / 18;
        }
        {
                struct sim_truth t;

                sim_truth_device(sim_pmu(truth), late, SIM_RX_MWR, 0, 10.5, &t);
                assert_true(t.payload_bytes == 0); /* absent: it moved nothing */
        }
        sim_close(truth);

        fake_now = 0;
        log_text[0] = '\0';
        assert_int_equal(engine_config_init(&cfg), 0);
        assert_int_equal(engine_config_set_string(&cfg, "Simulate", path, why, sizeof(why)), 0);
        assert_int_equal(engine_config_set_string(&cfg, "Detail", "full", why, sizeof(why)), 0);
        assert_int_equal(engine_config_set_number(&cfg, "TracePeriod", 1, why, sizeof(why)), 0);
        assert_int_equal(engine_config_set_number(&cfg, "TraceDuration", 0.2, why, sizeof(why)), 0);
        assert_int_equal(engine_config_set_number(&cfg, "MaxConcurrentTraces", 6, why, sizeof(why)),
                         0);
        assert_int_equal(engine_open(&cfg, &host, &e, why, sizeof(why)), 0);
        assert_int_equal(engine_start(e), 0);
        for (int t = 1; t <= 30; t++) {
                struct late_seen seen = {0};

                while (engine_next_due(e) <= t) {
                        fake_now = engine_next_due(e);
                        engine_advance(e, fake_now);
                }
                fake_now = t;
                assert_int_equal(engine_read(e, late_sink, &seen), 0);
                if (seen.negative)
                        fail_msg("at %d s: %s", t, seen.bad);
                if (t <= 10 && (seen.late_any || seen.late_ptt))
                        fail_msg("at %d s a series of %s, absent since 0 s", t, LATE);
                if (seen.late_rx > 0 && !first_late)
                        first_late = t;
                if (t >= 15) {
                        check_close(seen.late_rx, rate[0][0], LATE " rx_mwr", t);
                        check_close(seen.late_tx, rate[0][1], LATE " tx_cpl", t);
                }
                late_ptt |= t > 10 && seen.late_ptt;
                /* The other endpoint: there at every read, right, and its
                 * counter never goes back (nothing reopened or reset). */
                if (t >= 4) {
                        check_close(seen.kept_rx, rate[1][0], KEPT " rx_mwr", t);
                        check_close(seen.kept_tx, rate[1][1], KEPT " tx_cpl", t);
                }
                if (seen.kept_flux_seen) {
                        if (seen.kept_flux < last_flux)
                                fail_msg("at %d s %s's flux counter went back: %g -> %g", t, KEPT,
                                         last_flux, seen.kept_flux);
                        last_flux = seen.kept_flux;
                }
        }
        assert_true(first_late >= 12 && first_late <= 15);
        assert_true(late_ptt);
        assert_int_equal(count(log_text, LATE ": PCI function appeared"), 1);
        assert_int_equal(count(log_text, "hisi_pcie0_core0: " LATE " appeared below Root Port "
                                         "0000:00:00.0; its bandwidth is counted from now on"),
                         1);
        assert_int_equal(count(log_text, "appeared below Root Port"), 1);
        assert_int_equal(count(log_text, "PCI function gone"), 0);
        assert_int_equal(count(log_text, "reading counters"), 0);
        engine_close(e);
        engine_config_clear(&cfg);
        unlink(path);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_schedule_removes_and_adds_a_subtree),
            cmocka_unit_test(test_aer_of_a_new_pci_dev),
            cmocka_unit_test(test_runtime_remove_and_add),
            cmocka_unit_test(test_pmu_unbind_and_bind),
            cmocka_unit_test(test_ptt_unbind_and_bind),
            cmocka_unit_test(test_iio_unbind_and_bind),
            cmocka_unit_test(test_cpu_offline_moves_cpumask),
            cmocka_unit_test(test_cpu_offline_moves_iio_cpumask),
            cmocka_unit_test(test_loader),
            cmocka_unit_test(test_loader_iio),
            cmocka_unit_test(test_engine_follows_the_changes),
            cmocka_unit_test(test_engine_follows_iio),
            cmocka_unit_test(test_engine_follows_amd_df),
            cmocka_unit_test(test_engine_picks_up_a_late_device),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
