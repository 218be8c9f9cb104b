// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_intel_iio.c - the Intel IIO free-running collector against the
 * simulated spr-2s: bandwidth per stack and part vs the model's ground
 * truth on both kernel scale variants (6.12: 4-byte scale, corrected or
 * not; 6.15: 32-byte scale), bw_out where the kernel offers it, stack
 * mapping from die<N> files and from the configuration, open errors, and
 * the small parsers. Time is a fake clock.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>

#include <cmocka.h>

#include "hw_env.h"
#include "iio_stackmap.h"
#include "intel_iio.h"
#include "pci_source.h"
#include "pcie_topo.h"
#include "sample.h"
#include "sim.h"
#include "sim_intel_iio.h"
#include "support.h"

#define MACHINES TOP_SRCDIR "/sim/machines"

struct world {
        struct sim *sim;
        struct hw_env env;
        struct pcie_topo *topo;
        struct intel_iio *iio;
        char tmp_machine[256];
};

/* Replaces @from with @to (the same length) in @text, or fails. */
static void switch_text(char *text, const char *from, const char *to)
{
        char *at = strstr(text, from);

        assert_int_equal(strlen(from), strlen(to));
        if (!at)
                fail_msg("spr-2s.json has no %s to switch", from);
        memcpy(at, to, strlen(to));
}

/* What world_open changes in spr-2s as shipped. */
enum variant {
        AS_SHIPPED,
        DIE_FILES,    /* the kernel writes die<N> files too */
        NO_REGISTERS, /* no CPU bus register functions: nothing maps stacks */
};

/* spr-2s, or a copy with die<N> files switched on or the CPU bus
 * registers switched off. */
static void world_open(struct world *w, const char *kernel, enum variant variant)
{
        struct sim_opts so = {.machine_dir = MACHINES, .kernel = kernel, .clock = fake_clock};
        struct pcie_topo_opts to = {0};
        const char *machine = "spr-2s";
        char msg[512] = "";

        memset(w, 0, sizeof(*w));
        log_text[0] = '\0';
        fake_now = 0;
        if (variant != AS_SHIPPED) {
                FILE *in = fopen(MACHINES "/spr-2s.json", "r");
                static char text[1 << 17];
                size_t n;
                FILE *out;
                int fd;

                assert_non_null(in);
                n = fread(text, 1, sizeof(text) - 1, in);
                fclose(in);
                text[n] = '\0';
                if (variant == DIE_FILES)
                        switch_text(text, "\"die_files\": false", "\"die_files\":  true");
                else
                        switch_text(text, "\"stack_registers\": true", "\"stack_registers\":false");
                snprintf(w->tmp_machine, sizeof(w->tmp_machine), "/tmp/spr-var-XXXXXX.json");
                fd = mkstemps(w->tmp_machine, 5);
                assert_true(fd >= 0);
                out = fdopen(fd, "w");
                fputs(text, out);
                fclose(out);
                machine = w->tmp_machine;
        }
        if (sim_open(machine, &so, &w->sim, msg, sizeof(msg)))
                fail_msg("sim_open: %s", msg);
        hw_env_init_system(&w->env);
        w->env.log = capture_log;
        assert_int_equal(sim_env(w->sim, &w->env), 0);
        assert_int_equal(pcie_topo_scan(&w->env, &to, &w->topo), 0);
}

static void world_close(struct world *w)
{
        intel_iio_free(w->iio);
        pcie_topo_free(w->topo);
        sim_close(w->sim);
        if (w->tmp_machine[0])
                unlink(w->tmp_machine);
}

static const char *label_of(const struct pcie_sample *s, const char *name)
{
        for (size_t i = 0; i < s->label_count; i++)
                if (!strcmp(s->labels[i].name, name))
                        return s->labels[i].value;
        return NULL;
}

/* Index of the stack with box @box on simulated socket @socket. */
static size_t sim_stack(const struct sim_machine *m, size_t socket, unsigned int box)
{
        for (size_t k = 0; k < m->intel.sockets[socket].stack_count; k++)
                if (m->intel.sockets[socket].stacks[k].box_id == box)
                        return k;
        fail_msg("socket %zu has no stack with box %u", socket, box);
        return 0;
}

static size_t sim_socket(const struct sim_machine *m, unsigned int id)
{
        for (size_t i = 0; i < m->intel.socket_count; i++)
                if (m->intel.sockets[i].id == id)
                        return i;
        fail_msg("no simulated socket %u", id);
        return 0;
}

/* Runs every socket over [0, t1] with a baseline tick at t0 and returns the
 * samples of the last tick. */
static void run(struct world *w, double t0, double t1, struct sample_set *set)
{
        for (size_t i = 0; i < intel_iio_socket_count(w->iio); i++)
                assert_int_equal(intel_iio_socket_start(intel_iio_socket_at(w->iio, i), 0), 0);
        fake_now = t0;
        for (size_t i = 0; i < intel_iio_socket_count(w->iio); i++) {
                struct sample_set first = SAMPLE_SET_INIT;

                assert_int_equal(intel_iio_socket_tick(intel_iio_socket_at(w->iio, i), t0, &first),
                                 0);
                /* No rate from a single reading. */
                for (size_t k = 0; k < first.count; k++)
                        assert_string_not_equal(first.samples[k].metric,
                                                "pcie_port_bandwidth_bytes_per_second");
                sample_set_free(&first);
        }
        fake_now = t1;
        for (size_t i = 0; i < intel_iio_socket_count(w->iio); i++)
                assert_int_equal(intel_iio_socket_tick(intel_iio_socket_at(w->iio, i), t1, set), 0);
}

/* Every bandwidth sample against the truth times @factor; returns how many
 * parts carried traffic. */
static size_t check_truth(struct world *w, const struct sample_set *set, double t0, double t1,
                          double factor, const char *metric, bool out_dir)
{
        const struct sim_machine *m = sim_machine(w->sim);
        size_t busy = 0, seen = 0;

        for (size_t i = 0; i < set->count; i++) {
                const struct pcie_sample *s = &set->samples[i];
                unsigned int socket, box, part;
                double in, out, truth, slack;
                size_t si;

                if (strcmp(s->metric, metric))
                        continue;
                socket = (unsigned int)atoi(label_of(s, "socket"));
                box = (unsigned int)atoi(label_of(s, "stack"));
                part = (unsigned int)atoi(label_of(s, "part"));
                si = sim_socket(m, socket);
                sim_truth_iio_part(sim_iio(w->sim), si, sim_stack(m, si, box), part, t0, t1, &in,
                                   &out);
                truth = (out_dir ? out : in) / (t1 - t0) * factor;
                /* Whole counts: one count of slack at each end. */
                slack = 2 * 32 / (t1 - t0);
                if (fabs(s->gauge - truth) > 0.01 * truth + slack)
                        fail_msg("socket %u stack %u part %u: %.0f B/s, truth %.0f B/s", socket,
                                 box, part, s->gauge, truth);
                busy += truth > 0;
                seen++;
        }
        assert_true(seen > 0);
        return busy;
}

static size_t count_metric(const struct sample_set *set, const char *metric, const char *key,
                           const char *value)
{
        size_t n = 0;

        for (size_t i = 0; i < set->count; i++) {
                const char *v = key ? label_of(&set->samples[i], key) : NULL;

                if (!strcmp(set->samples[i].metric, metric) && (!key || (v && !strcmp(v, value))))
                        n++;
        }
        return n;
}

static void check_ports(struct world *w, const struct sample_set *set, size_t socket_index,
                        size_t stack_index);

static void test_truth_615(void **state)
{
        struct intel_iio_opts opts;
        struct sample_set set = SAMPLE_SET_INIT;
        const struct sim_machine *m;
        struct world w;
        size_t stacks = 0;

        (void)state;
        world_open(&w, "6.15", AS_SHIPPED);
        m = sim_machine(w.sim);
        intel_iio_opts_default(&opts);
        assert_int_equal(intel_iio_discover(&w.env, w.topo, &opts, &w.iio), 0);
        assert_non_null(w.iio);
        assert_int_equal(intel_iio_socket_count(w.iio), m->intel.socket_count);
        for (size_t i = 0; i < m->intel.socket_count; i++)
                stacks += m->intel.sockets[i].stack_count;
        assert_int_equal(intel_iio_stack_count(w.iio), stacks);
        /* SPR kernels publish no die<N> files: every stack is mapped from
         * the CPU bus registers, silently. */
        assert_int_equal(intel_iio_mapped_count(w.iio), stacks);
        assert_null(strstr(log_text, "IIOStackBus"));

        run(&w, 1.0, 3.5, &set);
        assert_true(check_truth(&w, &set, 1.0, 3.5, 1.0, "pcie_port_bandwidth_bytes_per_second",
                                false) >= 4);
        /* v6.15 removed bw_out; the scale is the kernel's own 32 bytes. */
        assert_int_equal(
            count_metric(&set, "pcie_iio_bw_out_estimate_bytes_per_second", NULL, NULL), 0);
        assert_int_equal(count_metric(&set, "pcie_iio_stack_info", "scale", "kernel"), stacks);
        assert_int_equal(count_metric(&set, "pcie_iio_stack_info", "bytes_per_count", "32"),
                         stacks);
        assert_int_equal(count_metric(&set, "pcie_iio_stack_info", "mapping", "registers"), stacks);
        for (size_t i = 0; i < m->intel.socket_count; i++)
                for (size_t k = 0; k < m->intel.sockets[i].stack_count; k++)
                        check_ports(&w, &set, i, k);
        assert_true(count_metric(&set, "pcie_port_utilization_ratio", "capacity", "raw") >= 1);
        sample_set_free(&set);
        world_close(&w);

        /* Without the register functions: nothing mapped, and said once. */
        world_open(&w, "6.15", NO_REGISTERS);
        assert_int_equal(intel_iio_discover(&w.env, w.topo, &opts, &w.iio), 0);
        assert_int_equal(intel_iio_mapped_count(w.iio), 0);
        assert_non_null(strstr(log_text, "IIOStackBus"));
        assert_non_null(strstr(log_text, "no MSM function (PCI 8086:09a6)"));
        run(&w, 1.0, 3.5, &set);
        assert_true(check_truth(&w, &set, 1.0, 3.5, 1.0, "pcie_port_bandwidth_bytes_per_second",
                                false) >= 4);
        assert_int_equal(count_metric(&set, "pcie_iio_stack_info", "mapping", "unmapped"), stacks);
        assert_int_equal(count_metric(&set, "pcie_port_utilization_ratio", NULL, NULL), 0);
        /* Once: at discovery, not at every interval. */
        {
                const char *at = strstr(log_text, "no MSM function");

                assert_null(strstr(at + 1, "no MSM function"));
        }
        sample_set_free(&set);
        world_close(&w);
}

static void test_truth_612_scales(void **state)
{
        struct intel_iio_opts opts;
        struct sample_set set = SAMPLE_SET_INIT;
        struct world w;

        (void)state;
        /* The pre-fix kernel says 4 bytes per count; the CPU counts 32. */
        world_open(&w, "6.12", AS_SHIPPED);
        intel_iio_opts_default(&opts);
        assert_int_equal(intel_iio_discover(&w.env, w.topo, &opts, &w.iio), 0);
        assert_non_null(strstr(log_text, "506f981ab40f"));
        run(&w, 0.5, 2.0, &set);
        check_truth(&w, &set, 0.5, 2.0, 1.0, "pcie_port_bandwidth_bytes_per_second", false);
        assert_true(count_metric(&set, "pcie_iio_stack_info", "scale", "corrected") > 0);
        /* bw_out is still offered before 6.15: an estimate at its scale. */
        assert_true(check_truth(&w, &set, 0.5, 2.0, 1.0,
                                "pcie_iio_bw_out_estimate_bytes_per_second", true) > 0);
        sample_set_free(&set);
        world_close(&w);

        /* IIOScaleFix false: the kernel's scale, 1/8 of the traffic. */
        world_open(&w, "6.12", AS_SHIPPED);
        intel_iio_opts_default(&opts);
        opts.scale_fix = false;
        opts.bw_out = false;
        assert_int_equal(intel_iio_discover(&w.env, w.topo, &opts, &w.iio), 0);
        assert_null(strstr(log_text, "506f981ab40f"));
        run(&w, 0.5, 2.0, &set);
        check_truth(&w, &set, 0.5, 2.0, 1.0 / 8, "pcie_port_bandwidth_bytes_per_second", false);
        assert_true(count_metric(&set, "pcie_iio_stack_info", "bytes_per_count", "4") > 0);
        assert_int_equal(
            count_metric(&set, "pcie_iio_bw_out_estimate_bytes_per_second", NULL, NULL), 0);
        sample_set_free(&set);
        world_close(&w);
}

/* Root Ports found on a mapped stack carry their BDF, and their links
 * their utilisation. */
static void check_ports(struct world *w, const struct sample_set *set, size_t socket_index,
                        size_t stack_index)
{
        const struct sim_machine *m = sim_machine(w->sim);
        const struct sim_socket *so = &m->intel.sockets[socket_index];
        const struct sim_iio_stack *st = &so->stacks[stack_index];
        char socket[12], box[12];

        snprintf(socket, sizeof(socket), "%u", so->id);
        snprintf(box, sizeof(box), "%u", st->box_id);
        for (size_t p = 0; p < st->port_count; p++) {
                const struct sim_device *d = &m->devices[st->ports[p]];
                char bdf[16], part[4];
                bool found = false;

                sim_device_bdf(d, bdf, sizeof(bdf));
                snprintf(part, sizeof(part), "%u", d->dev - 1u);
                for (size_t i = 0; i < set->count; i++) {
                        const struct pcie_sample *s = &set->samples[i];

                        if (strcmp(s->metric, "pcie_port_bandwidth_bytes_per_second") ||
                            strcmp(label_of(s, "socket"), socket) ||
                            strcmp(label_of(s, "stack"), box) || strcmp(label_of(s, "part"), part))
                                continue;
                        assert_non_null(label_of(s, "port"));
                        assert_string_equal(label_of(s, "port"), bdf);
                        found = true;
                }
                if (!found)
                        fail_msg("no bandwidth sample for %s (part %s)", bdf, part);
        }
}

static void test_mapping(void **state)
{
        struct intel_iio_opts opts;
        struct sample_set set = SAMPLE_SET_INIT;
        const struct sim_machine *m;
        const struct sim_iio_stack *st;
        struct world w;

        (void)state;
        /* From the configuration: one stack of socket 1, on a machine
         * without the CPU bus registers. */
        world_open(&w, "6.15", NO_REGISTERS);
        m = sim_machine(w.sim);
        st = &m->intel.sockets[1].stacks[0];
        intel_iio_opts_default(&opts);
        snprintf(opts.maps[0].pmu, sizeof(opts.maps[0].pmu), "uncore_iio_free_running_%u",
                 st->box_id);
        opts.maps[0].socket = m->intel.sockets[1].id;
        opts.maps[0].domain = st->domain;
        opts.maps[0].bus = st->bus;
        opts.map_count = 1;
        assert_int_equal(intel_iio_discover(&w.env, w.topo, &opts, &w.iio), 0);
        assert_int_equal(intel_iio_mapped_count(w.iio), 1);
        run(&w, 1, 2, &set);
        check_ports(&w, &set, 1, 0);
        assert_int_equal(count_metric(&set, "pcie_iio_stack_info", "mapping", "config"), 1);
        assert_true(count_metric(&set, "pcie_port_utilization_ratio", "capacity", "raw") >= 1);
        for (size_t i = 0; i < set.count; i++) {
                const struct pcie_sample *s = &set.samples[i];

                if (!strcmp(s->metric, "pcie_port_utilization_ratio"))
                        assert_true(s->gauge >= 0 && s->gauge <= 1);
        }
        sample_set_free(&set);
        world_close(&w);

        /* The configuration wins over the registers, also where they
         * disagree (said once); the registers map the other stacks. */
        world_open(&w, "6.15", AS_SHIPPED);
        m = sim_machine(w.sim);
        assert_int_equal(intel_iio_discover(&w.env, w.topo, &opts, &w.iio), 0);
        assert_int_equal(intel_iio_mapped_count(w.iio), intel_iio_stack_count(w.iio));
        assert_null(strstr(log_text, "registers say"));
        run(&w, 1, 2, &set);
        assert_int_equal(count_metric(&set, "pcie_iio_stack_info", "mapping", "config"), 1);
        assert_int_equal(count_metric(&set, "pcie_iio_stack_info", "mapping", "registers"),
                         intel_iio_stack_count(w.iio) - 1);
        sample_set_free(&set);
        intel_iio_free(w.iio);
        w.iio = NULL;
        opts.maps[0].bus = m->intel.sockets[1].stacks[1].bus; /* the other stack's bus */
        assert_int_equal(intel_iio_discover(&w.env, w.topo, &opts, &w.iio), 0);
        assert_non_null(strstr(log_text, "the CPU bus registers say"));
        assert_non_null(strstr(log_text, "using the configuration"));
        run(&w, 1, 2, &set);
        assert_int_equal(count_metric(&set, "pcie_iio_stack_info", "root_bus", "0000:a8"), 2);
        sample_set_free(&set);
        world_close(&w);

        /* From die<N> files (kernels that publish them): every stack. */
        world_open(&w, "6.15", DIE_FILES);
        m = sim_machine(w.sim);
        intel_iio_opts_default(&opts);
        assert_int_equal(intel_iio_discover(&w.env, w.topo, &opts, &w.iio), 0);
        assert_int_equal(intel_iio_mapped_count(w.iio), intel_iio_stack_count(w.iio));
        run(&w, 1, 2, &set);
        for (size_t s = 0; s < m->intel.socket_count; s++)
                for (size_t k = 0; k < m->intel.sockets[s].stack_count; k++)
                        check_ports(&w, &set, s, k);
        assert_int_equal(count_metric(&set, "pcie_iio_stack_info", "mapping", "kernel"),
                         intel_iio_stack_count(w.iio));
        check_truth(&w, &set, 1, 2, 1.0, "pcie_port_bandwidth_bytes_per_second", false);
        sample_set_free(&set);
        world_close(&w);
}

static int deny_open(void *ctx, struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
                     unsigned long flags)
{
        (void)ctx, (void)attr, (void)pid, (void)cpu, (void)group_fd, (void)flags;
        return -EACCES;
}

static void test_errors(void **state)
{
        struct intel_iio_opts opts;
        struct perf_ops denied;
        struct world w;

        (void)state;
        intel_iio_opts_default(&opts);
        /* Permission denied: one line with what to do, nothing left open. */
        world_open(&w, "6.15", AS_SHIPPED);
        assert_int_equal(intel_iio_discover(&w.env, w.topo, &opts, &w.iio), 0);
        denied = *w.env.perf;
        denied.open = deny_open;
        w.env.perf = &denied;
        log_text[0] = '\0';
        assert_int_equal(intel_iio_socket_start(intel_iio_socket_at(w.iio, 0), 0), -EACCES);
        assert_non_null(strstr(log_text, "CAP_PERFMON"));
        assert_int_equal(sim_iio_open_count(sim_iio(w.sim)), 0);
        world_close(&w);

        /* Started and stopped: every fd closed. */
        world_open(&w, "6.12", AS_SHIPPED);
        assert_int_equal(intel_iio_discover(&w.env, w.topo, &opts, &w.iio), 0);
        for (size_t i = 0; i < intel_iio_socket_count(w.iio); i++)
                assert_int_equal(intel_iio_socket_start(intel_iio_socket_at(w.iio, i), 0), 0);
        assert_true(sim_iio_open_count(sim_iio(w.sim)) > 0);
        for (size_t i = 0; i < intel_iio_socket_count(w.iio); i++)
                intel_iio_socket_stop(intel_iio_socket_at(w.iio, i));
        assert_int_equal(sim_iio_open_count(sim_iio(w.sim)), 0);
        world_close(&w);

        /* A Kunpeng machine has no IIO PMU: nothing, no error. */
        {
                struct sim_opts so = {.machine_dir = MACHINES};
                struct sim *k;
                struct hw_env env;
                struct intel_iio *iio = (struct intel_iio *)&env;
                char msg[256];

                assert_int_equal(sim_open("kunpeng930-2p", &so, &k, msg, sizeof(msg)), 0);
                hw_env_init_system(&env);
                assert_int_equal(sim_env(k, &env), 0);
                assert_int_equal(intel_iio_discover(&env, NULL, &opts, &iio), 0);
                assert_null(iio);
                sim_close(k);
        }
}

static void test_parsers(void **state)
{
        static const struct {
                double scale;
                const char *unit;
                int ret;
                double bytes;
        } rows[] = {
            {3.814697266e-6, "MiB", 0, 4.0},
            {3.0517578125e-5, "MiB", 0, 32.0},
            {1, "", 0, 1},
            {0.5, "KiB", 0, 512},
            {1, "furlongs", -EINVAL, 0},
            {0, "MiB", -EINVAL, 0},
            {-1, "MiB", -EINVAL, 0},
        };
        uint32_t domain;
        uint8_t bus;
        double b;

        (void)state;
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                assert_int_equal(intel_iio_bytes_per_count(rows[i].scale, rows[i].unit, &b),
                                 rows[i].ret);
                if (!rows[i].ret && fabs(b - rows[i].bytes) > 1e-6 * rows[i].bytes)
                        fail_msg("row %zu: %.9f bytes, want %g", i, b, rows[i].bytes);
        }
        assert_int_equal(intel_iio_parse_bus("0000:15", &domain, &bus), 0);
        assert_int_equal(bus, 0x15);
        assert_int_equal(intel_iio_parse_bus("0001:a8\n", &domain, &bus), -EINVAL);
        assert_int_equal(intel_iio_parse_bus("0001:a8", &domain, &bus), 0);
        assert_int_equal(domain, 1);
        assert_int_equal(intel_iio_parse_bus("97", &domain, &bus), 0);
        assert_int_equal(bus, 0x97);
        assert_int_equal(intel_iio_parse_bus("", &domain, &bus), -EINVAL);
        assert_int_equal(intel_iio_parse_bus("1:2:3", &domain, &bus), -EINVAL);
        assert_int_equal(intel_iio_parse_bus("zz", &domain, &bus), -EINVAL);
        assert_int_equal(intel_iio_parse_bus("0000:100", &domain, &bus), -EINVAL);
}

/* The registers through the seam: the simulator's, none, and real lspci
 * dumps of other machines (which have no MSM function). */
static void test_read_registers(void **state)
{
        static struct iio_stackmap map;
        const struct sim_machine *m;
        char why[256];
        struct world w;
        size_t stacks = 0, dumps = 0;
        struct dirent *de;
        DIR *dir;

        (void)state;
        world_open(&w, "6.15", AS_SHIPPED);
        m = sim_machine(w.sim);
        assert_int_equal(intel_iio_read_stackmap(&w.env, 6, 0x8f, &map, why, sizeof(why)), 0);
        assert_int_equal(map.layout, IIO_LAYOUT_SPR_XCC);
        for (size_t i = 0; i < m->intel.socket_count; i++) {
                const struct sim_socket *s = &m->intel.sockets[i];

                for (size_t k = 0; k < s->stack_count; k++) {
                        const struct iio_stack_root *r =
                            iio_stackmap_find(&map, s->id, s->stacks[k].box_id);

                        assert_non_null(r);
                        assert_int_equal(r->domain, s->stacks[k].domain);
                        assert_int_equal(r->bus, s->stacks[k].bus);
                        stacks++;
                }
        }
        assert_int_equal(map.count, stacks);
        /* A CPU without a table (Ice Lake: the kernel's die<N> files). */
        assert_int_equal(intel_iio_read_stackmap(&w.env, 6, 0x6a, &map, why, sizeof(why)), -EINVAL);
        assert_non_null(strstr(why, "model 0x6a"));
        assert_int_equal(map.count, 0);
        world_close(&w);

        world_open(&w, "6.15", NO_REGISTERS);
        assert_int_equal(intel_iio_read_stackmap(&w.env, 6, 0x8f, &map, why, sizeof(why)), -ENOENT);
        assert_non_null(strstr(why, "absent"));
        world_close(&w);

        /* Every real dump: absent, a clean -ENOENT, never a crash. */
        dir = opendir(TOP_SRCDIR "/tests/fixtures/pcidump");
        assert_non_null(dir);
        while ((de = readdir(dir))) {
                char path[512];
                struct hw_env env;

                if (!strstr(de->d_name, ".lspci-"))
                        continue;
                snprintf(path, sizeof(path), "%s/%s", TOP_SRCDIR "/tests/fixtures/pcidump",
                         de->d_name);
                memset(&env, 0, sizeof(env));
                assert_int_equal(pci_source_open_dump(path, &env.pci), 0);
                for (unsigned int model = 0x8f; model; model = model == 0x8f ? 0xad : 0) {
                        int err = intel_iio_read_stackmap(&env, 6, model, &map, why, sizeof(why));

                        if (err != -ENOENT)
                                fail_msg("%s: %d (%s)", de->d_name, err, why);
                        assert_int_equal(map.count, 0);
                }
                pci_source_close(env.pci);
                dumps++;
        }
        closedir(dir);
        assert_true(dumps >= 10);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_truth_615), cmocka_unit_test(test_truth_612_scales),
            cmocka_unit_test(test_mapping),   cmocka_unit_test(test_errors),
            cmocka_unit_test(test_parsers),   cmocka_unit_test(test_read_registers),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
