// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pciescope.c - the command line tool: option parsing and the environment
 * (live machine, or an lspci dump plus an optional sysfs/procfs tree).
 */
#include "pciescope_config.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "perf_data.h"
#include "pci_source.h"
#include "pcie_topo.h"
#include "sim.h"

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
                  opts->pci_dump ? opts->pci_dump : "this machine", strerror(-err),
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
                     "  trace dump FILE    every dword of a hisi_ptt recording (perf.data in\n"
                     "              file or pipe mode, or --raw AUX bytes) at the offsets\n"
                     "              `perf report -D` prints, with labels and decoded TLPs\n"
                     "  trace report FILE  TLP mix, payload sizes, top requesters and\n"
                     "              request->completion latency of a recording\n"
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
                     "  --interval SECONDS  pmu: length of an interval (default 1)\n"
                     "  --count N           pmu, iio: intervals to print (default 3)\n"
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
                     "  -h, --help          this text\n"
                     "  -V, --version       the version\n");
}

static int check_readable_file(const char *what, const char *path)
{
        struct stat st;

        if (stat(path, &st) < 0) {
                cli_error("%s %s: %s", what, path, strerror(errno));
                return -1;
        }
        if (S_ISDIR(st.st_mode)) {
                cli_error("%s %s: is a directory", what, path);
                return -1;
        }
        return 0;
}

/* --iio-stack-bus PMU,SOCKET,BUS ("uncore_iio_free_running_2,0,0000:15"). */
static int parse_stack_bus(const char *arg, struct intel_iio_opts *iio)
{
        struct intel_iio_map *m = &iio->maps[iio->map_count];
        char pmu[64], bus[16];
        unsigned int socket;
        char tail;

        if (iio->map_count >= INTEL_IIO_MAX_MAPS) {
                cli_error("--iio-stack-bus: at most %d", INTEL_IIO_MAX_MAPS);
                return -1;
        }
        if (sscanf(arg, "%63[^,],%u,%15[^,]%c", pmu, &socket, bus, &tail) != 3 ||
            intel_iio_parse_bus(bus, &m->domain, &m->bus)) {
                cli_error("--iio-stack-bus %s: expected PMU,SOCKET,BUS such as "
                          "uncore_iio_free_running_2,0,0000:15",
                          arg);
                return -1;
        }
        snprintf(m->pmu, sizeof(m->pmu), "%s", pmu);
        m->socket = socket;
        iio->map_count++;
        return 0;
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
            {"iio-stack-bus", required_argument, NULL, 'B'},
            {"no-scale-fix", no_argument, NULL, 'F'},
            {"raw", no_argument, NULL, 'R'},
            {"time-mode", required_argument, NULL, 'T'},
            {"clock-hz", required_argument, NULL, 'H'},
            {"top", required_argument, NULL, 'N'},
            {"max-size", required_argument, NULL, 'X'},
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
        struct sim *sim = NULL;
        char *end;
        const char *command;
        char *trace_args[TRACE_ARGS_MAX];
        int trace_argc = 0;
        struct hw_env env;
        int c, err, status;

        intel_iio_opts_default(&opts.iio);

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
        /* getopt stops at the first non-option (the "+" of the first scan
         * sticks), so trace's SUBCOMMAND and FILE are taken here one by one
         * and the options around them still parse. */
        while ((c = getopt_long(argc, argv, "hV", long_opts, NULL)) != -1 ||
               take_trace_arg(command, argc, argv, trace_args, &trace_argc)) {
                switch (c) {
                case -1:
                        break; /* a trace argument, taken above */
                case 'j':
                        opts.json = true;
                        break;
                case 'd':
                        opts.pci_dump = optarg;
                        break;
                case 's':
                        opts.sysfs_root = optarg;
                        break;
                case 'p':
                        opts.proc_root = optarg;
                        break;
                case 'P':
                        if (pcie_policy_parse(optarg, &opts.policy)) {
                                cli_error("--policy %s: unknown policy (tune_off, default, safe, "
                                          "performance, peer2peer)",
                                          optarg);
                                return CLI_EXIT_ERROR;
                        }
                        opts.policy_given = true;
                        break;
                case 'n':
                        opts.names = false;
                        break;
                case 'S':
                        opts.simulate = optarg;
                        break;
                case 'K':
                        opts.kernel = optarg;
                        break;
                case 'M':
                        opts.machine_dir = optarg;
                        break;
                case 'i':
                        errno = 0;
                        opts.interval = strtod(optarg, &end);
                        if (errno || *end || !(opts.interval >= 0.05 && opts.interval <= 3600)) {
                                cli_error("--interval %s: seconds from 0.05 to 3600", optarg);
                                return CLI_EXIT_ERROR;
                        }
                        break;
                case 'c': {
                        unsigned long n;

                        errno = 0;
                        n = strtoul(optarg, &end, 10);
                        if (errno || *end || n < 1 || n > 100000) {
                                cli_error("--count %s: a number from 1 to 100000", optarg);
                                return CLI_EXIT_ERROR;
                        }
                        opts.count = (unsigned int)n;
                        break;
                }
                case 'B':
                        if (parse_stack_bus(optarg, &opts.iio))
                                return CLI_EXIT_ERROR;
                        break;
                case 'F':
                        opts.iio.scale_fix = false;
                        break;
                case 'R':
                        opts.trace_raw = true;
                        break;
                case 'T':
                        if (ptt_time_mode_parse(optarg, &opts.trace_time_mode)) {
                                cli_error("--time-mode %s: delta or absolute", optarg);
                                return CLI_EXIT_ERROR;
                        }
                        break;
                case 'H': {
                        unsigned long long hz;

                        errno = 0;
                        hz = strtoull(optarg, &end, 10);
                        if (errno || *end || end == optarg || hz < 1 || hz > 100000000000ULL) {
                                cli_error("--clock-hz %s: ticks per second, 1 to 1e11", optarg);
                                return CLI_EXIT_ERROR;
                        }
                        opts.trace_clock_hz = hz;
                        break;
                }
                case 'N': {
                        unsigned long n;

                        errno = 0;
                        n = strtoul(optarg, &end, 10);
                        if (errno || *end || end == optarg || n < 1 || n > 4096) {
                                cli_error("--top %s: a number from 1 to 4096", optarg);
                                return CLI_EXIT_ERROR;
                        }
                        opts.trace_top = (unsigned int)n;
                        break;
                }
                case 'X':
                        if (parse_size(optarg, &opts.trace_max_size)) {
                                cli_error("--max-size %s: bytes, 1 or more, with an optional K, "
                                          "M, G or T (binary units)",
                                          optarg);
                                return CLI_EXIT_ERROR;
                        }
                        break;
                case 'h':
                        usage(stdout);
                        return CLI_EXIT_OK;
                case 'V':
                        printf("pciescope %s\n", PACKAGE_VERSION);
                        return CLI_EXIT_OK;
                default:
                        usage(stderr);
                        return CLI_EXIT_ERROR;
                }
        }
        /* trace reads a file made elsewhere: no PCI access, no machine. */
        if (!strcmp(command, "trace"))
                return cmd_trace(&opts, trace_argc, trace_args);
        if (optind < argc) {
                cli_error("unexpected argument '%s'", argv[optind]);
                return CLI_EXIT_ERROR;
        }
        if (strcmp(command, "topology") && strcmp(command, "audit") && strcmp(command, "pmu") &&
            strcmp(command, "uncore") && strcmp(command, "iio")) {
                cli_error("unknown command '%s' (try --help)", command);
                return CLI_EXIT_ERROR;
        }

        hw_env_init_system(&env);
        env.log = cli_log;
        /* A dump comes from another machine: this machine's sysfs and procfs
         * say nothing about it unless the user hands us trees that do. */
        if (opts.simulate) {
                struct sim_opts so = {.machine_dir = opts.machine_dir, .kernel = opts.kernel};
                char msg[512] = "";

                if (opts.pci_dump || opts.sysfs_root || opts.proc_root) {
                        cli_error("--simulate brings its own machine: no --pci-dump, --sysfs-root "
                                  "or --proc-root with it");
                        return CLI_EXIT_ERROR;
                }
                err = sim_open(opts.simulate, &so, &sim, msg, sizeof(msg));
                if (err) {
                        cli_error("--simulate %s: %s", opts.simulate,
                                  msg[0] ? msg : strerror(-err));
                        return CLI_EXIT_ERROR;
                }
                err = sim_env(sim, &env);
                /* Said on stderr so --json output stays clean, and always. */
                fprintf(stderr,
                        "pciescope: SIMULATED machine \"%s\" (drivers of Linux %s): "
                        "nothing below is read from this machine's hardware\n",
                        sim_machine(sim)->name, sim_kernel_name(sim_machine(sim)->kernel));
        } else if (opts.kernel) {
                cli_error("--kernel only applies to --simulate");
                return CLI_EXIT_ERROR;
        } else if (opts.pci_dump) {
                env.sysfs_root = opts.sysfs_root;
                env.proc_root = opts.proc_root;
                if (check_readable_file("--pci-dump", opts.pci_dump))
                        return CLI_EXIT_ERROR;
                err = pci_source_open_dump(opts.pci_dump, &env.pci);
        } else {
                if (opts.sysfs_root)
                        env.sysfs_root = opts.sysfs_root;
                if (opts.proc_root)
                        env.proc_root = opts.proc_root;
                err = pci_source_open_live(env.sysfs_root, &env.pci);
        }
        if (err) {
                cli_error("cannot set up PCI access: %s", strerror(-err));
                return CLI_EXIT_ERROR;
        }

        if (!strcmp(command, "topology"))
                status = cmd_topology(&opts, &env);
        else if (!strcmp(command, "audit"))
                status = cmd_audit(&opts, &env);
        else if (!strcmp(command, "uncore"))
                status = cmd_uncore(&opts, &env);
        else if (!strcmp(command, "iio"))
                status = cmd_iio(&opts, &env);
        else
                status = cmd_pmu(&opts, &env);
        if (sim)
                sim_close(sim); /* closes the PCI source it opened */
        else
                pci_source_close(env.pci);
        return status;
}
