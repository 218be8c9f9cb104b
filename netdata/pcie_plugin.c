// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pcie_plugin.c - pcie.plugin, Netdata's external plugin for pciescope:
 * plugins.d glue over the engine, as plugin/pcie.c is collectd glue.
 *
 *   pcie.plugin UPDATE_EVERY
 *
 * Netdata starts it with the update interval in seconds and reads the
 * plugins.d protocol from its stdout (nd_charts.c); what it writes on
 * stderr goes to Netdata's error.log. The configuration is pcie.conf in
 * NETDATA_USER_CONFIG_DIR, or in Netdata's fixed /etc/netdata when the
 * plugin runs with raised privileges (nd_conf_path); nd_conf.c reads the
 * lines of collectd's <Plugin pcie> block through the engine's option
 * table. A bad option, or a machine that cannot be opened, is one line on
 * stderr and DISABLE: Netdata does not start the plugin again, so there is
 * no crash loop.
 *
 * Under `Simulate "<machine>"` no hardware is read: said on stderr at
 * start, and in a `simulated` label on every chart.
 */
#define _GNU_SOURCE /* secure_getenv */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"
#include "nd_charts.h"
#include "nd_conf.h"

#define PLUGIN "pcie.plugin"

static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
        (void)sig;
        stopping = 1;
}

static void log_line(void *ctx, enum hw_log_level level, const char *msg)
{
        static const char *const names[] = {[HW_LOG_ERROR] = "ERROR",
                                            [HW_LOG_WARNING] = "WARNING",
                                            [HW_LOG_NOTICE] = "NOTICE",
                                            [HW_LOG_INFO] = "INFO",
                                            [HW_LOG_DEBUG] = "DEBUG"};

        (void)ctx;
        if (level != HW_LOG_DEBUG)
                fprintf(stderr, PLUGIN ": %s: %s\n", names[level], msg);
}

/* One line on stderr, DISABLE to Netdata, and out: never a crash loop. */
static int disable(const char *fmt, ...)
{
        va_list ap;

        fprintf(stderr, PLUGIN ": ERROR: ");
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fprintf(stderr, "; plugin disabled\n");
        printf("DISABLE\n");
        fflush(stdout);
        return 1;
}

/* The effective capability set (CapEff of /proc/self/status); 0 when unreadable. */
static unsigned long long effective_caps(void)
{
        unsigned long long eff = 0;
        char line[256];
        FILE *f = fopen("/proc/self/status", "re");

        while (f && fgets(line, sizeof(line), f))
                if (sscanf(line, "CapEff: %llx", &eff) == 1)
                        break;
        if (f)
                fclose(f);
        return eff;
}

/*
 * Whether the plugin runs with more privileges than whoever set its
 * environment: the kernel says so in AT_SECURE (file capabilities gained at
 * exec, setuid, setgid), and a user other than root that holds capabilities
 * is treated the same way. Then the configuration directories are Netdata's
 * fixed ones, not the environment's (a user of the netdata group could
 * otherwise point a capable plugin at a file of their own).
 */
static bool running_privileged(void)
{
        return getauxval(AT_SECURE) || (geteuid() != 0 && effective_caps());
}

/* The kernel's perf_event_paranoid; 2 (Debian's default) when unreadable. */
static int perf_paranoid(void)
{
        FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
        int v = 2;

        if (f) {
                if (fscanf(f, "%d", &v) != 1)
                        v = 2;
                fclose(f);
        }
        return v;
}

/*
 * On a live machine without the capabilities Netdata's convention gives the
 * plugin (docs/netdata.md, "Permissions"): one line that says what is missing and what
 * it costs. When perf is closed to it altogether (no CAP_PERFMON nor
 * CAP_SYS_ADMIN, perf_event_paranoid above 0: system-wide PMU events are
 * refused) the PMU and trace sources are turned off through the option
 * table, instead of one permission error per PMU.
 */
static void degrade_without_capabilities(struct engine_config *cfg)
{
        enum { SYS_ADMIN = 21, PERFMON = 38, IPC_LOCK = 14 };
        static const struct {
                int bit;
                const char *name, *cost;
        } caps[] = {
            {PERFMON, "CAP_PERFMON", "PMU bandwidth/latency and PTT traces"},
            {SYS_ADMIN, "CAP_SYS_ADMIN",
             "config space past 64 bytes: MPS/MRRS and AER registers (link speed and width "
             "come from sysfs)"},
            {IPC_LOCK, "CAP_IPC_LOCK", "PTT buffers above perf_event_mlock_kb"},
        };
        unsigned long long eff = effective_caps();
        char missing[512] = "", off[128] = "";
        int paranoid = perf_paranoid();

        for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++)
                if (!(eff >> caps[i].bit & 1))
                        snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing),
                                 "%s%s (%s)", missing[0] ? ", " : "", caps[i].name, caps[i].cost);
        if (!missing[0])
                return;
        if (!(eff >> PERFMON & 1) && !(eff >> SYS_ADMIN & 1) && paranoid > 0) {
                static const char *const perf_sources[] = {"CollectPMU", "CollectIIO",
                                                           "CollectTrace"};
                char why[256];

                for (size_t i = 0; i < 3; i++)
                        engine_config_set_boolean(cfg, perf_sources[i], false, why, sizeof(why));
                snprintf(off, sizeof(off),
                         "; perf_event_paranoid is %d: CollectPMU, CollectIIO and CollectTrace "
                         "are off",
                         paranoid);
        }
        fprintf(stderr,
                PLUGIN ": WARNING: running as uid %u without %s%s; to get them install the "
                       "plugin root:netdata 0750 with setcap and the netdata.service drop-in "
                       "(docs/netdata.md, \"Permissions\")\n",
                (unsigned int)geteuid(), missing, off);
}

static void sink(void *ctx, const struct engine_unit *unit, const struct sample_set *set)
{
        (void)unit;
        if (nd_charts_add(ctx, set))
                fprintf(stderr, PLUGIN ": WARNING: out of memory: some values left out\n");
}

static double now_mono(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Sleeps until @when (monotonic seconds); a signal ends the sleep. */
static void sleep_until(double when)
{
        struct timespec ts = {.tv_sec = (time_t)when,
                              .tv_nsec = (long)((when - (double)(time_t)when) * 1e9)};

        while (!stopping && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
                ;
}

static int run(struct engine *e, int update_every)
{
        struct nd_charts *charts = nd_charts_new(update_every);
        double next = now_mono();
        int rc = 0;

        if (!charts)
                return disable("out of memory");
        while (!stopping) {
                next += update_every;
                sleep_until(next);
                if (stopping)
                        break;
                /* A failed scan of the bus is logged once by the monitor;
                 * the other sources' intervals are charted all the same. */
                engine_read(e, sink, charts);
                if (nd_charts_flush(charts, stdout)) {
                        rc = 1; /* Netdata closed the pipe: it has gone */
                        break;
                }
                if (now_mono() > next + update_every)
                        next = now_mono(); /* fell behind (suspend): no burst */
        }
        nd_charts_free(charts);
        return rc;
}

int main(int argc, char **argv)
{
        struct engine_config cfg;
        struct engine *e = NULL;
        struct sigaction sa = {.sa_handler = on_signal};
        char path[4096], why[1024] = "";
        bool privileged = running_privileged();
        int update_every = 1, found = 0, rc;

        if (argc > 1) {
                char *end;
                long v = strtol(argv[1], &end, 10);

                if (*end || v < 1 || v > 86400)
                        return disable("update interval \"%s\": a whole number of seconds, 1 to "
                                       "86400, expected",
                                       argv[1]);
                update_every = (int)v;
        }
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGINT, &sa, NULL);
        signal(SIGPIPE, SIG_IGN); /* a write to a gone Netdata fails with EPIPE */
        if (engine_config_init(&cfg))
                return disable("out of memory");
        if (nd_conf_path(path, sizeof(path), privileged, secure_getenv)) {
                engine_config_clear(&cfg);
                return disable("the configuration directory's name is too long");
        }
        /* getenv() only to say what is ignored: its value is not used. */
        for (size_t i = 0; privileged && i < 2; i++) {
                static const char *const vars[2] = {"NETDATA_USER_CONFIG_DIR",
                                                    "NETDATA_STOCK_CONFIG_DIR"};

                if (getenv(vars[i]) && *getenv(vars[i])) {
                        fprintf(stderr,
                                PLUGIN ": NOTICE: running with raised privileges: %s is "
                                       "ignored, the configuration is %s\n",
                                vars[i], path);
                        break;
                }
        }
        if (nd_conf_load(path, &cfg, &found, why, sizeof(why))) {
                engine_config_clear(&cfg);
                return disable("%s", why);
        }
        if (!cfg.simulate && !cfg.pci_dump)
                degrade_without_capabilities(&cfg);

        struct engine_host host = {.log = log_line,
                                   .interval = update_every,
                                   .label_simulated = true,
                                   .baseline_at_start = true};

        if (engine_open(&cfg, &host, &e, why, sizeof(why))) {
                engine_config_clear(&cfg);
                return disable("%s", why);
        }
        if (engine_simulated(e))
                fprintf(stderr,
                        PLUGIN ": NOTICE: SIMULATED machine \"%s\" (kernel %s): no hardware is "
                               "read; every chart is labelled simulated=\"%s\"; tree in %s\n",
                        engine_simulated(e), engine_simulated_kernel(e), engine_simulated(e),
                        engine_simulated_root(e));
        if (engine_start(e)) {
                engine_close(e);
                engine_config_clear(&cfg);
                return disable("cannot start the collectors: out of memory");
        }
        rc = run(e, update_every);
        engine_close(e); /* joins the threads, restores PTT tune values */
        engine_config_clear(&cfg);
        return rc;
}
