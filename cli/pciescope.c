// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pciescope.c - the command line tool: option parsing, and the engine that
 * opens the machine (live, an lspci dump plus an optional sysfs/procfs
 * tree, or a simulation) for every command but trace.
 */
#include "pciescope_config.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "calibration.h"
#include "cli.h"
#include "perf_data.h"
#include "pci_source.h"
#include "pcie_topo.h"

/* Long options without a short letter. */
enum {
        OPT_MAX_CONNECTIONS = 1001,
        OPT_MAX_CONNECTIONS_PER_CLIENT,
        OPT_TIMEOUT,
        OPT_RUN_TIMEOUT,
};

void cli_error(const char *fmt, ...)
{
        va_list ap;

        fputs("pciescope: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
}

int cli_scan(const struct cli_opts *opts, struct hw_env *env,
             const struct pcie_topo_opts *topo_opts, struct pcie_topo **out)
{
        int err = pcie_topo_scan(env, topo_opts, out);

        if (!err)
                return 0;
        cli_error("cannot read the PCI devices from %s: %s%s%s",
                  opts->cfg.pci_dump ? opts->cfg.pci_dump : "this machine", strerror(-err),
                  *pci_source_error(env->pci) ? ": " : "", pci_source_error(env->pci));
        return -1;
}

static void cli_log(void *ctx, enum hw_log_level level, const char *msg)
{
        (void)ctx;
        if (level <= HW_LOG_WARNING)
                fprintf(stderr, "pciescope: %s: %s\n", level == HW_LOG_ERROR ? "error" : "warning",
                        msg);
}

/* "4096", "64K", "1G": a byte count of 1 or more (binary suffixes). */
static int parse_size(const char *s, uint64_t *out)
{
        static const char units[] = "KMGT";
        unsigned long long v;
        const char *u;
        char *end;

        errno = 0;
        if (*s < '0' || *s > '9')
                return -EINVAL;
        v = strtoull(s, &end, 10);
        if (errno || end == s || v < 1)
                return -EINVAL;
        if (*end) {
                u = strchr(units, *end);
                if (!u || !*u || end[1])
                        return -EINVAL;
                for (const char *k = units; k <= u; k++) {
                        if (v > UINT64_MAX / 1024)
                                return -EINVAL;
                        v *= 1024;
                }
        }
        *out = v;
        return 0;
}

/* parse_size() for option @name; 0, or 1 after saying what it takes. */
static int take_size(const char *name, const char *arg, uint64_t *out)
{
        if (!parse_size(arg, out))
                return 0;
        cli_error("%s %s: bytes, 1 or more, with an optional K, M, G or T (binary units)", name,
                  arg);
        return 1;
}

static void usage(FILE *out)
{
        fprintf(out, "Usage: pciescope COMMAND [OPTIONS]\n"
                     "\n"
                     "Commands:\n"
                     "  topology    the PCI(e) tree with link speed and width on every link\n"
                     "  audit       MPS/MRRS audit against the kernel's five policies;\n"
                     "              exit status 0 ok, 1 warnings, 2 critical findings\n"
                     "  pmu         count with the HiSilicon PCIe PMUs: per-port bandwidth,\n"
                     "              utilisation and latency for a few intervals\n"
                     "  uncore      Intel uncore PMON discovery: every PMON unit the table\n"
                     "              behind DVSEC 0x23 (id 1) lists; read only, needs root\n"
                     "  iio         count with the Intel IIO free-running PMUs: PCIe bandwidth\n"
                     "              per IIO stack and part for a few intervals\n"
                     "  top         a live full-screen view: one row per Root Port with\n"
                     "              utilisation, bandwidth by TLP type, latency, link flags\n"
                     "              and AER errors per interval (needs a terminal)\n"
                     "  trace dump FILE    every dword of a hisi_ptt recording (perf.data in\n"
                     "              file or pipe mode, or --raw AUX bytes) at the offsets\n"
                     "              `perf report -D` prints, with labels and decoded TLPs\n"
                     "  trace report FILE  TLP mix, payload sizes, top requesters and\n"
                     "              request->completion latency of a recording\n"
                     "  options     the collectd plugin's options (the table every front end\n"
                     "              shares), with --markdown as in the README\n"
                     "  exporter    serve /metrics for Prometheus (text or OpenMetrics) until\n"
                     "              SIGINT/SIGTERM: the collectd plugin's values, names and\n"
                     "              labels, without collectd\n"
                     "  fleet       simulated hosts sending the plugin's series by remote_write\n"
                     "              (capacity planning, demos; `pciescope fleet --help`)\n"
                     "  calibrate   measure the HiSilicon PMU's and PTT's undocumented units\n"
                     "              with a known load through --device, and write them to a\n"
                     "              calibration file (docs/real-hardware.md); exit status 0\n"
                     "              all consistent, 1 some not\n"
                     "  snapshot    what reproduces this machine elsewhere, read-only and\n"
                     "              without secrets, in one tar.gz with a simulator\n"
                     "              description (README: pciescope snapshot)\n"
                     "\n"
                     "Options:\n"
                     "  --json              machine-readable output (see docs/topology-json.md)\n"
                     "  --pci-dump FILE     read an `lspci -xxxx` dump instead of this machine\n"
                     "  --sysfs-root DIR    sysfs root for NUMA nodes and AER counters\n"
                     "                      (default /sys live; none with --pci-dump)\n"
                     "  --proc-root DIR     procfs root for the kernel command line\n"
                     "                      (default /proc live; none with --pci-dump)\n"
                     "  --policy NAME       audit as if this MPS policy were in force:\n"
                     "                      tune_off, default, safe, performance, peer2peer\n"
                     "                      (default: from the kernel command line)\n"
                     "  --no-names          do not look up vendor/device names in pci.ids\n"
                     "  --simulate MACHINE  run on a SIMULATED machine (kunpeng930-2p, spr-2s,\n"
                     "                      kunpeng930-misconfig, or a description file)\n"
                     "  --kernel VERSION    simulated kernel: 5.17, 6.2, 6.9, 6.12, 6.15\n"
                     "  --machine-dir DIR   where named machines live\n"
                     "  --interval SECONDS  pmu, iio, top: length of an interval (default 1)\n"
                     "  --count N           pmu, iio: intervals to print (default 3)\n"
                     "  --detail LEVEL      pmu, iio, top, exporter: basic, default (the\n"
                     "                      plugin's) or full (default full; exporter: default)\n"
                     "  --iio-stack-bus PMU,SOCKET,BUS\n"
                     "                      iio: the root bus of an IIO stack the kernel does\n"
                     "                      not map (e.g. uncore_iio_free_running_2,0,0000:15)\n"
                     "  --no-scale-fix      iio: keep a pre-6.15 kernel's 4-byte scale on CPUs\n"
                     "                      that count 32 bytes\n"
                     "  --raw               trace: FILE holds raw PTT AUX bytes, not a perf.data\n"
                     "  --time-mode MODE    trace: the Time field is a delta from the previous\n"
                     "                      entry (delta, default) or a counter (absolute)\n"
                     "  --clock-hz HZ       trace: ticks per second of the Time field, to report\n"
                     "                      latencies in ns (default: unknown, report ticks)\n"
                     "  --top N             trace: requesters listed by name, the rest as\n"
                     "                      \"other\" (default 16)\n"
                     "  --max-size BYTES    trace: read at most this much from a pipe,\n"
                     "                      device or stdin (K, M, G, T suffixes; default 4G)\n"
                     "  --listen ADDR:PORT  exporter: where to serve (default 127.0.0.1:9943,\n"
                     "                      loopback only; :9943 for every address,\n"
                     "                      [::1]:9943 for IPv6)\n"
                     "  --tls-cert FILE, --tls-key FILE\n"
                     "                      exporter: serve HTTPS with this PEM certificate\n"
                     "                      and key\n"
                     "  --basic-auth-user USER, --basic-auth-password-file FILE\n"
                     "                      exporter: require HTTP basic authentication (the\n"
                     "                      password is the file's first line)\n"
                     "  --max-connections N, --max-connections-per-client N, --timeout S\n"
                     "                      exporter: open connections at most (default 128),\n"
                     "                      from one address (default 16); seconds a request\n"
                     "                      may take from the connect (default 10)\n"
                     "  --instance NAME     exporter: add instance=\"NAME\" to every series\n"
                     "                      (default none: Prometheus adds the target's)\n"
                     "  --option KEY=VALUE  exporter, top, pmu, iio: any option of the collectd\n"
                     "                      plugin's table (`pciescope options`), repeatable\n"
                     "  --calibration FILE  a file `pciescope calibrate` wrote: its consistent\n"
                     "                      units set FluxUnit, LatencyClock, TraceClock and\n"
                     "                      TraceTimeMode (explicit options win)\n"
                     "  --device BDF        calibrate: the endpoint to load (its block device\n"
                     "                      is read with O_DIRECT, never written)\n"
                     "  --bytes N           calibrate: bytes per load (K, M, G, T suffixes;\n"
                     "                      default 1G); with --run, what the command moves\n"
                     "  --run COMMAND       calibrate: the load is this command (sh -c), for a\n"
                     "                      device without a block device; needs --bytes\n"
                     "  --run-timeout S     calibrate: stop a --run command (its whole process\n"
                     "                      group) that runs longer than S seconds (default\n"
                     "                      600)\n"
                     "  --repeat N          calibrate: repeats of each measurement, 3..32\n"
                     "                      (default 5)\n"
                     "  -o, --output FILE   snapshot: the archive (default\n"
                     "                      pciescope-snapshot-<date>.tar.gz); calibrate: the\n"
                     "                      calibration file (default pciescope-calibration.json)\n"
                     "  --description FILE  snapshot: write the machine description here too\n"
                     "  --trace             snapshot: add a short PTT trace window per\n"
                     "                      hisi_ptt device\n"
                     "  -h, --help          this text\n"
                     "  -V, --version       the version\n");
}

/* --flag VALUE through the engine's option table: the same checks as the
 * plugin's option, the message in the flag's name. */
static int set_option(struct cli_opts *opts, const char *flag, const char *key,
                      const struct engine_value *v, size_t n, const char *arg)
{
        char why[512] = "";

        if (!engine_config_set(&opts->cfg, key, v, n, why, sizeof(why)))
                return 0;
        cli_error("%s%s%s: %s", flag, arg ? " " : "", arg ? arg : "", why);
        return -1;
}

static int set_string(struct cli_opts *opts, const char *flag, const char *key, const char *arg)
{
        struct engine_value v = {.type = ENGINE_VALUE_STRING, .string = arg};

        return set_option(opts, flag, key, &v, 1, arg);
}

static int set_boolean(struct cli_opts *opts, const char *flag, const char *key, bool value)
{
        struct engine_value v = {.type = ENGINE_VALUE_BOOLEAN, .boolean = value};

        return set_option(opts, flag, key, &v, 1, NULL);
}

/* A number written in full ("1e9" and "100000000" alike), then the option's
 * range. */
static int set_number(struct cli_opts *opts, const char *flag, const char *key, const char *arg)
{
        struct engine_value v = {.type = ENGINE_VALUE_NUMBER};
        char *end;

        errno = 0;
        v.number = strtod(arg, &end);
        if (errno || end == arg || *end) {
                cli_error("%s %s: not a number", flag, arg);
                return -1;
        }
        return set_option(opts, flag, key, &v, 1, arg);
}

/* --option KEY=VALUE: any option of the table, its value typed as the
 * option wants it (a number, a boolean, or the text). */
static int set_key_value(struct cli_opts *opts, const char *arg)
{
        const char *eq = strchr(arg, '=');
        const struct engine_option *o;
        char key[64], flag[80];

        if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof(key)) {
                cli_error("--option %s: want KEY=VALUE (keys: `pciescope options`)", arg);
                return -1;
        }
        memcpy(key, arg, (size_t)(eq - arg));
        key[eq - arg] = '\0';
        snprintf(flag, sizeof(flag), "--option %s", key);
        o = engine_option_find(key);
        if (o && (o->kind == ENGINE_OPT_NUMBER || o->kind == ENGINE_OPT_WHOLE))
                return set_number(opts, flag, key, eq + 1);
        if (o && o->kind == ENGINE_OPT_BOOLEAN) {
                const char *v = eq + 1;
                bool t = !strcasecmp(v, "true") || !strcasecmp(v, "yes") || !strcasecmp(v, "on");

                if (!t && strcasecmp(v, "false") && strcasecmp(v, "no") && strcasecmp(v, "off")) {
                        cli_error("%s=%s: want true or false", flag, v);
                        return -1;
                }
                return set_boolean(opts, flag, key, t);
        }
        return set_string(opts, flag, key, eq + 1);
}

/* --iio-stack-bus PMU,SOCKET,BUS ("uncore_iio_free_running_2,0,0000:15"). */
static int set_stack_bus(struct cli_opts *opts, const char *arg)
{
        struct engine_value v[3] = {{.type = ENGINE_VALUE_STRING},
                                    {.type = ENGINE_VALUE_NUMBER},
                                    {.type = ENGINE_VALUE_STRING}};
        char pmu[64], bus[16], tail;
        unsigned int socket;

        if (sscanf(arg, "%63[^,],%u,%15[^,]%c", pmu, &socket, bus, &tail) != 3) {
                cli_error("--iio-stack-bus %s: expected PMU,SOCKET,BUS such as "
                          "uncore_iio_free_running_2,0,0000:15",
                          arg);
                return -1;
        }
        v[0].string = pmu;
        v[1].number = socket;
        v[2].string = bus;
        return set_option(opts, "--iio-stack-bus", "IIOStackBus", v, 3, arg);
}

/* trace takes SUBCOMMAND FILE; one more is kept so that cmd_trace sees
 * and refuses it. */
#define TRACE_ARGS_MAX 3

static bool take_trace_arg(const char *command, int argc, char **argv, char **args, int *n)
{
        if (strcmp(command, "trace") || optind >= argc || *n >= TRACE_ARGS_MAX)
                return false;
        args[(*n)++] = argv[optind++];
        return true;
}

/* The options the trace commands read, from the Trace* options' values. */
static void take_trace_options(struct cli_opts *opts)
{
        opts->trace_time_mode = opts->cfg.trace.time_mode;
        /* A calibration file's clock counts like --clock-hz. */
        if (opts->cfg.calibration_file && !(opts->cfg.units_given & ENGINE_UNIT_TRACE_CLOCK) &&
            opts->trace_clock_hz == 0)
                opts->trace_clock_hz = opts->cfg.trace.clock_hz;
}

static void write_stdout(void *ctx, const char *text)
{
        (void)ctx;
        fputs(text, stdout);
}

/* `pciescope options [--markdown]`: the option table every front end shares
 * (the collectd block's names; the README's reference is this output). */
static int cmd_options(bool markdown)
{
        size_t count;
        const struct engine_option *o = engine_options(&count);

        if (markdown) {
                engine_options_markdown(write_stdout, NULL);
                return CLI_EXIT_OK;
        }
        for (size_t i = 0; i < count; i++)
                printf("%-24s %-40s default %s\n", o[i].name, o[i].value_text, o[i].default_text);
        return CLI_EXIT_OK;
}

/* Which sources a command runs, and how long an interval is. */
static unsigned int command_sources(const char *command)
{
        if (!strcmp(command, "pmu"))
                return ENGINE_SOURCE_HISI_PCIE;
        if (!strcmp(command, "iio"))
                return ENGINE_SOURCE_INTEL_IIO;
        /* top: link state, audit and AER, and the bandwidth of either vendor. */
        if (!strcmp(command, "top"))
                return ENGINE_SOURCE_MONITOR | ENGINE_SOURCE_HISI_PCIE | ENGINE_SOURCE_INTEL_IIO;
        return 0;
}

static int run_command(const char *command, struct cli_opts *opts)
{
        struct engine_host host = {.log = cli_log,
                                   .interval = opts->interval,
                                   .manual = true,
                                   .baseline_at_start = true,
                                   .sources = command_sources(command)};
        struct engine *e;
        char why[512] = "";
        int status;

        if (engine_config_check(&opts->cfg, why, sizeof(why))) {
                cli_error("%s", why);
                return CLI_EXIT_ERROR;
        }
        /* top: refused before anything starts when there is no terminal;
         * its screen shows the engine's messages, and every endpoint a PMU
         * measures (the view lists them under their port). */
        if (!strcmp(command, "top")) {
                if (cmd_top_check_terminal())
                        return CLI_EXIT_ERROR;
                host.log = cmd_top_log;
                opts->cfg.pmu.top_talkers = 1000;
        }
        if (opts->cfg.simulate && getenv("PCIESCOPE_VIRTUAL_CLOCK")) {
                cli_use_virtual_clock();
                host.clock = cli_virtual_clock;
        }
        if (engine_open(&opts->cfg, &host, &e, why, sizeof(why))) {
                cli_error("%s", why);
                return CLI_EXIT_ERROR;
        }
        if (engine_simulated(e))
                /* Said on stderr so --json output stays clean, and always. */
                fprintf(stderr,
                        "pciescope: SIMULATED machine \"%s\" (drivers of Linux %s): "
                        "nothing below is read from this machine's hardware\n",
                        engine_simulated(e), engine_simulated_kernel(e));
        if (!strcmp(command, "topology"))
                status = cmd_topology(opts, engine_env(e));
        else if (!strcmp(command, "audit"))
                status = cmd_audit(opts, engine_env(e));
        else if (!strcmp(command, "uncore"))
                status = cmd_uncore(opts, engine_env(e));
        else if (!strcmp(command, "calibrate"))
                status = cmd_calibrate(opts, e); /* owns the PMU and PTT: no source runs */
#ifdef CLI_WITH_SNAPSHOT
        else if (!strcmp(command, "snapshot"))
                status = cmd_snapshot(opts, e);
#endif
        else if (engine_start(e))
                status = CLI_EXIT_ERROR;
        else if (!strcmp(command, "iio"))
                status = cmd_iio(opts, e);
        else if (!strcmp(command, "top"))
                status = cmd_top(opts, e);
        else
                status = cmd_pmu(opts, e);
        engine_close(e);
        return status;
}

/*
 * exporter and snapshot need libmicrohttpd and libarchive, whose start-up
 * (GnuTLS, nettle, p11-kit, libxml2, ICU) cost every other command about
 * 15 ms when they were linked into this program: more than its own work in
 * `topology` on a 1,000-function dump. They are programs of their own,
 * pciescope-exporter and pciescope-snapshot, built from these same sources
 * with the command compiled in (CLI_WITH_EXPORTER, CLI_WITH_SNAPSHOT); this
 * one checks the arguments, then runs the helper with the same ones, in
 * place of itself (git's way with its helpers). Where the helper is:
 *   $PCIESCOPE_EXEC_PATH, when set (and then only there);
 *   beside this program (the build tree);
 *   ../libexec/pciescope beside it (an installed tree, wherever it is);
 *   the configured $(pkglibexecdir).
 */
#if !defined(CLI_WITH_EXPORTER) || !defined(CLI_WITH_SNAPSHOT)
/* A whole number in 1..@max for an exporter flag (the plugin's range). */
static int set_limit(const char *flag, const char *arg, unsigned long max, unsigned int *out)
{
        unsigned long n;
        char *end;

        errno = 0;
        n = strtoul(arg, &end, 10);
        if (errno || end == arg || *end || n < 1 || n > max || *arg == '-') {
                cli_error("%s %s: a whole number from 1 to %lu", flag, arg, max);
                return 1;
        }
        *out = (unsigned int)n;
        return 0;
}

/* The arguments as given (getopt_long() reorders argv's pointers). */
static char **helper_args;

static bool helper_at(char *path, size_t size, const char *dir, const char *sub,
                      const char *command)
{
        int n = snprintf(path, size, "%s%s/pciescope-%s", dir, sub, command);

        return n > 0 && (size_t)n < size && access(path, X_OK) == 0;
}

static int run_helper(const char *command, char **argv)
{
        const char *env = getenv("PCIESCOPE_EXEC_PATH");
        char self[PATH_MAX], path[PATH_MAX + 64];
        char *slash;
        bool found;

        if (env && *env) {
                found = helper_at(path, sizeof(path), env, "", command);
        } else {
                /* Only here: with PCIESCOPE_EXEC_PATH set, where this
                 * program lives does not matter. */
                ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

                found = false;
                if (n > 0) {
                        self[n] = '\0';
                        slash = strrchr(self, '/');
                        if (slash) {
                                *slash = '\0';
                                found = helper_at(path, sizeof(path), self, "", command) ||
                                        helper_at(path, sizeof(path), self, "/../libexec/pciescope",
                                                  command);
                        }
                }
                if (!found)
                        found = helper_at(path, sizeof(path), PCIESCOPE_LIBEXECDIR, "", command);
        }
        if (!found) {
                if (env && *env)
                        cli_error("%s: no program pciescope-%s in %s (PCIESCOPE_EXEC_PATH)",
                                  command, command, env);
                else
                        cli_error("%s: no program pciescope-%s beside this one nor in %s: "
                                  "is pciescope completely installed?",
                                  command, command, PCIESCOPE_LIBEXECDIR);
                return CLI_EXIT_ERROR;
        }
        execv(path, argv);
        cli_error("%s: cannot run %s: %s", command, path, strerror(errno));
        return CLI_EXIT_ERROR;
}
#endif

int main(int argc, char **argv)
{
        static const struct option long_opts[] = {
            {"json", no_argument, NULL, 'j'},
            {"pci-dump", required_argument, NULL, 'd'},
            {"sysfs-root", required_argument, NULL, 's'},
            {"proc-root", required_argument, NULL, 'p'},
            {"policy", required_argument, NULL, 'P'},
            {"no-names", no_argument, NULL, 'n'},
            {"simulate", required_argument, NULL, 'S'},
            {"kernel", required_argument, NULL, 'K'},
            {"machine-dir", required_argument, NULL, 'M'},
            {"interval", required_argument, NULL, 'i'},
            {"count", required_argument, NULL, 'c'},
            {"detail", required_argument, NULL, 'L'},
            {"iio-stack-bus", required_argument, NULL, 'B'},
            {"no-scale-fix", no_argument, NULL, 'F'},
            {"raw", no_argument, NULL, 'R'},
            {"time-mode", required_argument, NULL, 'T'},
            {"clock-hz", required_argument, NULL, 'H'},
            {"top", required_argument, NULL, 'N'},
            {"markdown", no_argument, NULL, 'm'},
            {"max-size", required_argument, NULL, 'X'},
            {"listen", required_argument, NULL, 'l'},
            {"tls-cert", required_argument, NULL, 'C'},
            {"tls-key", required_argument, NULL, 'k'},
            {"basic-auth-user", required_argument, NULL, 'u'},
            {"basic-auth-password-file", required_argument, NULL, 'w'},
            {"instance", required_argument, NULL, 'I'},
            {"max-connections", required_argument, NULL, OPT_MAX_CONNECTIONS},
            {"max-connections-per-client", required_argument, NULL, OPT_MAX_CONNECTIONS_PER_CLIENT},
            {"timeout", required_argument, NULL, OPT_TIMEOUT},
            {"calibration", required_argument, NULL, 'A'},
            {"device", required_argument, NULL, 'E'},
            {"bytes", required_argument, NULL, 'b'},
            {"run", required_argument, NULL, 'x'},
            {"run-timeout", required_argument, NULL, OPT_RUN_TIMEOUT},
            {"repeat", required_argument, NULL, 'r'},
            {"option", required_argument, NULL, 'O'},
            {"output", required_argument, NULL, 'o'},
            {"description", required_argument, NULL, 'D'},
            {"trace", no_argument, NULL, 'Y'},
            {"help", no_argument, NULL, 'h'},
            {"version", no_argument, NULL, 'V'},
            {NULL, 0, NULL, 0},
        };
        struct cli_opts opts = {.names = true,
                                .interval = 1,
                                .count = 3,
                                .trace_time_mode = PTT_TIME_DELTA,
                                .trace_top = PTT_SUMMARY_DEFAULT_TOP_N,
                                .trace_max_size = PERF_DATA_DEFAULT_MAX_SIZE};
        char *end;
        const char *command;
        char *trace_args[TRACE_ARGS_MAX];
        int trace_argc = 0;
        bool markdown = false;
        unsigned int default_top_talkers;
        int c, status, bad = 0;

#if !defined(CLI_WITH_EXPORTER) || !defined(CLI_WITH_SNAPSHOT)
        helper_args = calloc((size_t)argc + 1, sizeof(*helper_args));
        if (!helper_args)
                return CLI_EXIT_ERROR;
        memcpy(helper_args, argv, (size_t)argc * sizeof(*helper_args));
#endif
        if (engine_config_init(&opts.cfg))
                return CLI_EXIT_ERROR;
        default_top_talkers = opts.cfg.pmu.top_talkers;
        /* The counting commands name the three busiest endpoints, and a
         * person at a terminal sees every value (--detail to narrow): the
         * series budget is a fleet's concern, not a terminal's. */
        opts.cfg.pmu.top_talkers = 3;
        if (set_string(&opts, "--detail", "Detail", "full"))
                return CLI_EXIT_ERROR;

        while ((c = getopt_long(argc, argv, "+hV", long_opts, NULL)) != -1) {
                if (c == 'h') {
                        usage(stdout);
                        return CLI_EXIT_OK;
                }
                if (c == 'V') {
                        printf("pciescope %s\n", PACKAGE_VERSION);
                        return CLI_EXIT_OK;
                }
                usage(stderr);
                return CLI_EXIT_ERROR;
        }
        if (optind >= argc) {
                usage(stderr);
                return CLI_EXIT_ERROR;
        }
        command = argv[optind];
        optind++;
#if !defined(CLI_WITH_EXPORTER) || !defined(CLI_WITH_SNAPSHOT)
        /* fleet has options of its own (cli/cmd_fleet.c, docs/fleet.md) */
        if (!strcmp(command, "fleet"))
                return run_helper("fleet", helper_args);
#endif
        /* getopt stops at the first non-option (the "+" of the first scan
         * sticks), so trace's SUBCOMMAND and FILE are taken here one by one
         * and the options around them still parse. */
        while (!bad && ((c = getopt_long(argc, argv, "hVo:", long_opts, NULL)) != -1 ||
                        take_trace_arg(command, argc, argv, trace_args, &trace_argc))) {
                switch (c) {
                case -1:
                        break; /* a trace argument, taken above */
                case 'j':
                        opts.json = true;
                        break;
                case 'd':
                        bad = set_string(&opts, "--pci-dump", "PCIDump", optarg);
                        break;
                case 's':
                        bad = set_string(&opts, "--sysfs-root", "SysfsRoot", optarg);
                        break;
                case 'p':
                        bad = set_string(&opts, "--proc-root", "ProcRoot", optarg);
                        break;
                case 'P':
                        bad = set_string(&opts, "--policy", "MPSPolicy", optarg);
                        break;
                case 'n':
                        opts.names = false;
                        bad = set_boolean(&opts, "--no-names", "ResolveNames", false);
                        break;
                case 'S':
                        bad = set_string(&opts, "--simulate", "Simulate", optarg);
                        break;
                case 'K':
                        bad = set_string(&opts, "--kernel", "SimulateKernel", optarg);
                        break;
                case 'M':
                        bad = set_string(&opts, "--machine-dir", "MachineDirectory", optarg);
                        break;
                case 'i':
                        errno = 0;
                        opts.interval = strtod(optarg, &end);
                        if (errno || *end || !(opts.interval >= 0.05 && opts.interval <= 3600)) {
                                cli_error("--interval %s: seconds from 0.05 to 3600", optarg);
                                bad = 1;
                        }
                        break;
                case 'c': {
                        unsigned long n;

                        errno = 0;
                        n = strtoul(optarg, &end, 10);
                        if (errno || *end || n < 1 || n > 100000) {
                                cli_error("--count %s: a number from 1 to 100000", optarg);
                                bad = 1;
                        }
                        opts.count = (unsigned int)n;
                        break;
                }
                case 'B':
                        bad = set_stack_bus(&opts, optarg);
                        break;
                case 'F':
                        bad = set_boolean(&opts, "--no-scale-fix", "IIOScaleFix", false);
                        break;
                case 'R':
                        opts.trace_raw = true;
                        break;
                case 'm':
                        markdown = true;
                        break;
                case 'T':
                        bad = set_string(&opts, "--time-mode", "TraceTimeMode", optarg);
                        break;
                case 'H':
                        bad = set_number(&opts, "--clock-hz", "TraceClock", optarg);
                        opts.trace_clock_hz = opts.cfg.trace.clock_hz;
                        break;
                case 'N':
                        bad = set_number(&opts, "--top", "TraceTopRequesters", optarg);
                        opts.trace_top = opts.cfg.trace.top_n;
                        break;
                case 'L':
                        bad = set_string(&opts, "--detail", "Detail", optarg);
                        opts.detail_given = true;
                        break;
                case 'l':
                        opts.listen = optarg;
                        break;
                case 'C':
                        opts.tls_cert = optarg;
                        break;
                case 'k':
                        opts.tls_key = optarg;
                        break;
                case 'u':
                        opts.auth_user = optarg;
                        break;
                case 'w':
                        opts.auth_password_file = optarg;
                        break;
                case 'I':
                        opts.instance = optarg;
                        break;
                case OPT_MAX_CONNECTIONS:
                        bad = set_limit("--max-connections", optarg, 10000, &opts.max_connections);
                        break;
                case OPT_MAX_CONNECTIONS_PER_CLIENT:
                        bad = set_limit("--max-connections-per-client", optarg, 10000,
                                        &opts.max_per_client);
                        break;
                case OPT_TIMEOUT:
                        bad = set_limit("--timeout", optarg, 3600, &opts.timeout_s);
                        break;
                case 'O':
                        bad = set_key_value(&opts, optarg);
                        opts.detail_given |= !strncasecmp(optarg, "Detail=", 7);
                        break;
                case 'o': /* snapshot: the archive; calibrate: the calibration file */
                        opts.snapshot_out = optarg;
                        opts.calib_output = optarg;
                        break;
                case 'D':
                        opts.snapshot_description = optarg;
                        break;
                case 'Y':
                        opts.snapshot_trace = true;
                        break;
                case 'X':
                        bad = take_size("--max-size", optarg, &opts.trace_max_size);
                        break;
                case 'A':
                        bad = set_string(&opts, "--calibration", "CalibrationFile", optarg);
                        break;
                case 'E':
                        opts.calib_device = optarg;
                        break;
                case 'b':
                        bad = take_size("--bytes", optarg, &opts.calib_bytes);
                        break;
                case 'x':
                        opts.calib_command = optarg;
                        break;
                case OPT_RUN_TIMEOUT: {
                        double t;

                        errno = 0;
                        t = strtod(optarg, &end);
                        if (errno || end == optarg || *end || !(t >= 0.1 && t <= 86400)) {
                                cli_error("--run-timeout %s: seconds from 0.1 to 86400", optarg);
                                bad = 1;
                        }
                        opts.calib_run_timeout = t;
                        break;
                }
                case 'r': {
                        unsigned long n;

                        errno = 0;
                        n = strtoul(optarg, &end, 10);
                        if (errno || *end || n < CALIB_MIN_REPEATS || n > CALIB_MAX_REPEATS) {
                                cli_error("--repeat %s: a number from %d to %d (a value needs at "
                                          "least %d repeats that agree)",
                                          optarg, CALIB_MIN_REPEATS, CALIB_MAX_REPEATS,
                                          CALIB_MIN_REPEATS);
                                bad = 1;
                        }
                        opts.calib_repeats = (unsigned int)n;
                        break;
                }
                case 'h':
                        usage(stdout);
                        return CLI_EXIT_OK;
                case 'V':
                        printf("pciescope %s\n", PACKAGE_VERSION);
                        return CLI_EXIT_OK;
                default:
                        usage(stderr);
                        bad = 1;
                }
        }
        if (bad) {
                engine_config_clear(&opts.cfg);
                return CLI_EXIT_ERROR;
        }
        take_trace_options(&opts);
        /* trace reads a file made elsewhere: no PCI access, no machine. */
        if (!strcmp(command, "trace"))
                status = cmd_trace(&opts, trace_argc, trace_args);
        else if (optind < argc) {
                cli_error("unexpected argument '%s'", argv[optind]);
                status = CLI_EXIT_ERROR;
        } else if (!strcmp(command, "options")) {
                status = cmd_options(markdown);
        } else if (!strcmp(command, "exporter")) {
                /* A fleet's endpoint: the plugin's defaults (Detail
                 * "default", its TopTalkers), not a terminal's. */
                opts.cfg.pmu.top_talkers = default_top_talkers;
                if (!opts.detail_given && set_string(&opts, "--detail", "Detail", "default"))
                        status = CLI_EXIT_ERROR;
                else
#ifdef CLI_WITH_EXPORTER
                        status = cmd_exporter(&opts);
#else
                        status = run_helper("exporter", helper_args);
#endif
        } else if (strcmp(command, "topology") && strcmp(command, "audit") &&
                   strcmp(command, "pmu") && strcmp(command, "uncore") && strcmp(command, "iio") &&
                   strcmp(command, "top") && strcmp(command, "calibrate") &&
                   strcmp(command, "snapshot")) {
                cli_error("unknown command '%s' (try --help)", command);
                status = CLI_EXIT_ERROR;
#ifndef CLI_WITH_SNAPSHOT
        } else if (!strcmp(command, "snapshot")) {
                status = run_helper("snapshot", helper_args);
#endif
        } else {
                status = run_command(command, &opts);
        }
        engine_config_clear(&opts.cfg);
        return status;
}
