// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pciescope.c - the command line tool: option parsing (getopt_long's
 * table is built from the command table's options, commands.c), then
 * dispatch through the command table: a command's --help, its words, the
 * machine it runs on (live, an lspci dump plus an optional sysfs/procfs
 * tree, or a simulation) for the commands that read one, or the helper
 * program it runs in.
 */
#include "pciescope_config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <limits.h>
#include <unistd.h>

#include "calibration.h"
#include "cli.h"
#include "commands.h"
#include "perf_data.h"

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

/* A word after the command's name (trace's SUBCOMMAND and FILE, help's
 * COMMAND): one more than any command takes is kept, so that it is
 * refused with the command's usage. */
static bool take_arg(int argc, char **argv, struct cli_opts *opts)
{
        if (optind >= argc || opts->argc >= CLI_ARGS_MAX)
                return false;
        opts->args[opts->argc++] = argv[optind++];
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

/* Opens the machine for @cmd (and starts its sources), runs it, closes. */
static int run_command(const struct cli_command *cmd, struct cli_opts *opts)
{
        struct engine_host host = {.log = cli_log,
                                   .interval = opts->interval,
                                   .manual = true,
                                   .baseline_at_start = true,
                                   .sources = cmd->sources};
        struct engine *e;
        char why[512] = "";
        int status;

        if (engine_config_check(&opts->cfg, why, sizeof(why))) {
                cli_error("%s", why);
                return CLI_EXIT_ERROR;
        }
        /* Refused before anything starts. */
        if ((cmd->flags & CLI_CMD_TERMINAL) && cli_check_terminal(cmd->name, cmd->no_terminal))
                return CLI_EXIT_ERROR;
        if (cmd->prepare && (status = cmd->prepare(opts, &host)))
                return status;
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
        if ((cmd->flags & CLI_CMD_START) && engine_start(e))
                status = CLI_EXIT_ERROR;
        else
                status = cmd->run(opts, e);
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

/* A usage line on stderr, and where the options are. */
static void usage_error(const struct cli_command *cmd, const struct cli_command *sub)
{
        cli_command_synopsis(stderr, "pciescope: usage: ", sub ? sub : cmd, sub ? cmd : NULL);
        fprintf(stderr, "(`pciescope %s%s%s --help` lists its options)\n", cmd->name,
                sub ? " " : "", sub ? sub->name : "");
}

/* Checks the words after @cmd's name (@sub: the sub-command the first one
 * names), then runs it: on the machine, as a helper program, or alone. */
static int dispatch(const struct cli_command *cmd, const struct cli_command *sub,
                    struct cli_opts *opts, int argc, char **argv)
{
        const struct cli_command *run = sub ? sub : cmd;
        int status;

        if (cmd->subs && !sub) {
                if (opts->argc)
                        cli_unknown_command(cmd, opts->args[0]);
                usage_error(cmd, NULL);
                return CLI_EXIT_ERROR;
        }
        if (sub) { /* the sub-command's words follow its name */
                memmove(opts->args, opts->args + 1, (opts->argc - 1) * sizeof(opts->args[0]));
                opts->argc--;
        }
        if (!run->max_args && (opts->argc || optind < argc)) {
                cli_error("unexpected argument '%s'", opts->argc ? opts->args[0] : argv[optind]);
                return CLI_EXIT_ERROR;
        }
        if (optind < argc || opts->argc < run->min_args || opts->argc > run->max_args) {
                usage_error(cmd, sub);
                return CLI_EXIT_ERROR;
        }
        if (cmd->prepare && !(cmd->flags & CLI_CMD_MACHINE) && (status = cmd->prepare(opts, NULL)))
                return status;
#if !defined(CLI_WITH_EXPORTER) || !defined(CLI_WITH_SNAPSHOT)
        if (!run->run && (cmd->flags & CLI_CMD_HELPER))
                return run_helper(cmd->name, helper_args);
#endif
        if (cmd->flags & CLI_CMD_MACHINE)
                return run_command(run, opts);
        return run->run(opts, NULL);
}

int main(int argc, char **argv)
{
        /* getopt_long's table, from the command table's options. */
        static struct option *long_opts; /* static: reachable until exit */
        size_t n_opts = 0;
        struct cli_opts opts = {.names = true,
                                .interval = 1,
                                .count = 3,
                                .trace_time_mode = PTT_TIME_DELTA,
                                .trace_top = PTT_SUMMARY_DEFAULT_TOP_N,
                                .trace_max_size = PERF_DATA_DEFAULT_MAX_SIZE};
        const struct cli_command *cmd, *sub = NULL;
        char *end;
        bool help = false;
        int c, status, bad = 0;

        while (cli_options[n_opts].name)
                n_opts++;
        long_opts = calloc(n_opts + 1, sizeof(*long_opts));
        if (!long_opts)
                return CLI_EXIT_ERROR;
        for (size_t i = 0; i < n_opts; i++)
                long_opts[i] = (struct option){cli_options[i].name,
                                               cli_options[i].arg ? required_argument : no_argument,
                                               NULL, cli_options[i].key};

#if !defined(CLI_WITH_EXPORTER) || !defined(CLI_WITH_SNAPSHOT)
        helper_args = calloc((size_t)argc + 1, sizeof(*helper_args));
        if (!helper_args)
                return CLI_EXIT_ERROR;
        memcpy(helper_args, argv, (size_t)argc * sizeof(*helper_args));
#endif
        if (engine_config_init(&opts.cfg))
                return CLI_EXIT_ERROR;
        opts.plugin_top_talkers = opts.cfg.pmu.top_talkers;
        /* The counting commands name the three busiest endpoints, and a
         * person at a terminal sees every value (--detail to narrow): the
         * series budget is a fleet's concern, not a terminal's. */
        opts.cfg.pmu.top_talkers = 3;
        if (set_string(&opts, "--detail", "Detail", "full"))
                return CLI_EXIT_ERROR;

        while ((c = getopt_long(argc, argv, "+hV", long_opts, NULL)) != -1) {
                if (c == 'h') {
                        cli_usage(stdout);
                        return CLI_EXIT_OK;
                }
                if (c == 'V') {
                        printf("pciescope %s\n", PACKAGE_VERSION);
                        return CLI_EXIT_OK;
                }
                cli_usage(stderr);
                return CLI_EXIT_ERROR;
        }
        if (optind >= argc) {
                cli_usage(stderr);
                return CLI_EXIT_ERROR;
        }
        cmd = cli_command_find(cli_commands, argv[optind]);
        if (!cmd) {
                cli_unknown_command(NULL, argv[optind]);
                return CLI_EXIT_ERROR;
        }
        optind++;
        if (cmd->flags & CLI_CMD_OWN_OPTIONS) {
                /* Its program reads its options; only help is answered
                 * here, from the table, without starting it. */
                for (int i = optind; i < argc; i++) {
                        if (!strcmp(argv[i], "--"))
                                break;
                        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
                                cli_command_help(stdout, cmd, NULL);
                                return CLI_EXIT_OK;
                        }
                }
                if (!helper_args) {
                        cli_error("%s: run it as `pciescope %s`", cmd->name, cmd->name);
                        return CLI_EXIT_ERROR;
                }
                return run_helper(cmd->name, helper_args);
        }
        /* getopt stops at the first non-option (the "+" of the first scan
         * sticks), so the words after the command (trace's SUBCOMMAND and
         * FILE) are taken here one by one and the options around them
         * still parse. */
        while (!bad && !help &&
               ((c = getopt_long(argc, argv, "hVo:", long_opts, NULL)) != -1 ||
                take_arg(argc, argv, &opts))) {
                switch (c) {
                case -1:
                        break; /* a word, taken above */
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
                        opts.markdown = true;
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
                case CLI_OPT_MAX_CONNECTIONS:
                        bad = set_limit("--max-connections", optarg, 10000, &opts.max_connections);
                        break;
                case CLI_OPT_MAX_CONNECTIONS_PER_CLIENT:
                        bad = set_limit("--max-connections-per-client", optarg, 10000,
                                        &opts.max_per_client);
                        break;
                case CLI_OPT_TIMEOUT:
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
                case CLI_OPT_RUN_TIMEOUT: {
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
                case 'h': /* the command's own help, even for a helper's command */
                        help = true;
                        break;
                case 'V':
                        printf("pciescope %s\n", PACKAGE_VERSION);
                        return CLI_EXIT_OK;
                default:
                        usage_error(cmd, NULL);
                        bad = 1;
                }
        }
        if (bad) {
                engine_config_clear(&opts.cfg);
                return CLI_EXIT_ERROR;
        }
        if (cmd->subs && opts.argc)
                sub = cli_command_find(cmd->subs, opts.args[0]);
        if (help) {
                /* `trace --help dump`: the sub-command may come after. */
                for (int i = optind; cmd->subs && !sub && i < argc; i++)
                        sub = cli_command_find(cmd->subs, argv[i]);
                cli_command_help(stdout, cmd, sub);
                engine_config_clear(&opts.cfg);
                return CLI_EXIT_OK;
        }
        take_trace_options(&opts);
        status = dispatch(cmd, sub, &opts, argc, argv);
        engine_config_clear(&opts.cfg);
        return status;
}
