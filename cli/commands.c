// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * commands.c - the pciescope command table (in the way of perf's
 * cmd_struct table) and everything read from it: the global usage, each
 * command's help, the Markdown command list the man page is built from,
 * and the bash completion script.
 *
 * pciescope, pciescope-exporter and pciescope-snapshot are built from this
 * same file: in pciescope, exporter and snapshot have no handler and run
 * their helper program (CLI_CMD_HELPER); in a helper, its own command has.
 */
#include "pciescope_config.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"

const struct cli_option cli_options[] = {
    {"json", 0, 'j', CLI_ARG_NONE, NULL, NULL,
     "machine-readable output (see docs/topology-json.md)"},
    {"pci-dump", 0, 'd', CLI_ARG_FILE, "FILE", NULL,
     "read an `lspci -xxxx` dump instead of this machine"},
    {"sysfs-root", 0, 's', CLI_ARG_DIR, "DIR", NULL,
     "sysfs root for NUMA nodes and AER counters (default /sys live; none with --pci-dump)"},
    {"proc-root", 0, 'p', CLI_ARG_DIR, "DIR", NULL,
     "procfs root for the kernel command line (default /proc live; none with --pci-dump)"},
    {"policy", 0, 'P', CLI_ARG_WORDS, "NAME", "tune_off default safe performance peer2peer",
     "audit as if this MPS policy were in force: tune_off, default, safe, performance, "
     "peer2peer (default: from the kernel command line)"},
    {"no-names", 0, 'n', CLI_ARG_NONE, NULL, NULL, "do not look up vendor/device names in pci.ids"},
    {"simulate", 0, 'S', CLI_ARG_MACHINE, "MACHINE", NULL,
     "run on a SIMULATED machine (kunpeng930-2p, spr-2s, kunpeng930-misconfig, or a "
     "description file)"},
    {"kernel", 0, 'K', CLI_ARG_WORDS, "VERSION", "5.17 6.2 6.9 6.12 6.15",
     "simulated kernel: 5.17, 6.2, 6.9, 6.12, 6.15"},
    {"machine-dir", 0, 'M', CLI_ARG_DIR, "DIR", NULL, "where named machines live"},
    {"interval", 0, 'i', CLI_ARG_TEXT, "SECONDS", NULL,
     "length of an interval (default 1; top: between two refreshes; exporter: how often the "
     "page is refreshed; fleet: how often each host sends, default 10)"},
    {"count", 0, 'c', CLI_ARG_TEXT, "N", NULL, "intervals to print (default 3)"},
    {"detail", 0, 'L', CLI_ARG_WORDS, "LEVEL", "basic default full",
     "basic, default (the plugin's) or full (default full; exporter: default)"},
    {"iio-stack-bus", 0, 'B', CLI_ARG_TEXT, "PMU,SOCKET,BUS", NULL,
     "the root bus of an IIO stack the kernel does not map (e.g. "
     "uncore_iio_free_running_2,0,0000:15); repeatable"},
    {"no-scale-fix", 0, 'F', CLI_ARG_NONE, NULL, NULL,
     "keep a pre-6.15 kernel's 4-byte scale on CPUs that count 32 bytes"},
    {"raw", 0, 'R', CLI_ARG_NONE, NULL, NULL, "FILE holds raw PTT AUX bytes, not a perf.data"},
    {"time-mode", 0, 'T', CLI_ARG_WORDS, "MODE", "delta absolute",
     "the Time field is a delta from the previous entry (delta, default) or a counter "
     "(absolute)"},
    {"clock-hz", 0, 'H', CLI_ARG_TEXT, "HZ", NULL,
     "ticks per second of the Time field, to report latencies in ns (default: unknown, report "
     "ticks)"},
    {"top", 0, 'N', CLI_ARG_TEXT, "N", NULL,
     "requesters listed by name, the rest as \"other\" (default 16)"},
    {"max-size", 0, 'X', CLI_ARG_TEXT, "BYTES", NULL,
     "read at most this much from a pipe, device or stdin (K, M, G, T suffixes; default 4G)"},
    {"markdown", 0, 'm', CLI_ARG_NONE, NULL, NULL, "print it as a Markdown table"},
    {"listen", 0, 'l', CLI_ARG_TEXT, "ADDR:PORT", NULL,
     "where to serve (default 127.0.0.1:9943, loopback only; :9943 for every address, "
     "[::1]:9943 for IPv6)"},
    {"tls-cert", 0, 'C', CLI_ARG_FILE, "FILE", NULL,
     "serve HTTPS with this PEM certificate (chain); needs --tls-key"},
    {"tls-key", 0, 'k', CLI_ARG_FILE, "FILE", NULL, "the PEM key of --tls-cert"},
    {"basic-auth-user", 0, 'u', CLI_ARG_TEXT, "USER", NULL,
     "require HTTP basic authentication as this user; needs --basic-auth-password-file"},
    {"basic-auth-password-file", 0, 'w', CLI_ARG_FILE, "FILE", NULL,
     "the password of --basic-auth-user: the file's first line"},
    {"instance", 0, 'I', CLI_ARG_TEXT, "NAME", NULL,
     "add instance=\"NAME\" to every series (default none: Prometheus adds the target's)"},
    {"max-connections", 0, CLI_OPT_MAX_CONNECTIONS, CLI_ARG_TEXT, "N", NULL,
     "open connections at most (default 128)"},
    {"max-connections-per-client", 0, CLI_OPT_MAX_CONNECTIONS_PER_CLIENT, CLI_ARG_TEXT, "N", NULL,
     "open connections from one address at most (default 16)"},
    {"timeout", 0, CLI_OPT_TIMEOUT, CLI_ARG_TEXT, "SECONDS", NULL,
     "seconds a request may take from the connect (default 10)"},
    {"calibration", 0, 'A', CLI_ARG_FILE, "FILE", NULL,
     "a file `pciescope calibrate` wrote: its consistent units set FluxUnit, LatencyClock, "
     "TraceClock and TraceTimeMode (explicit options win)"},
    {"device", 0, 'E', CLI_ARG_TEXT, "BDF", NULL,
     "the endpoint to load (its block device is read with O_DIRECT, never written); "
     "snapshot: calibrate it into the archive"},
    {"bytes", 0, 'b', CLI_ARG_TEXT, "N", NULL,
     "bytes per load (K, M, G, T suffixes; default 1G); with --run, what the command moves"},
    {"run", 0, 'x', CLI_ARG_TEXT, "COMMAND", NULL,
     "the load is this command (sh -c), for a device without a block device; needs --bytes"},
    {"run-timeout", 0, CLI_OPT_RUN_TIMEOUT, CLI_ARG_TEXT, "SECONDS", NULL,
     "stop a --run command (its whole process group) that runs longer than this (default "
     "600)"},
    {"repeat", 0, 'r', CLI_ARG_TEXT, "N", NULL, "repeats of each measurement, 3..32 (default 5)"},
    {"option", 0, 'O', CLI_ARG_TEXT, "KEY=VALUE", NULL,
     "any option of the collectd plugin's table (`pciescope options`); repeatable"},
    {"output", 'o', 'o', CLI_ARG_FILE, "FILE", NULL,
     "snapshot: the archive (default pciescope-snapshot-<date>.tar.gz); calibrate: the "
     "calibration file (default pciescope-calibration.json)"},
    {"description", 0, 'D', CLI_ARG_FILE, "FILE", NULL, "write the machine description here too"},
    {"trace", 0, 'Y', CLI_ARG_NONE, NULL, NULL, "add a short PTT trace window per hisi_ptt device"},
    {"hosts", 0, CLI_OPT_HOSTS, CLI_ARG_TEXT, "N", NULL, "fleet: simulated hosts, 1..100000"},
    {"duration", 0, CLI_OPT_DURATION, CLI_ARG_TEXT, "SECONDS", NULL,
     "fleet: how long the fleet sends, then it ends by itself"},
    {"url", 0, CLI_OPT_URL, CLI_ARG_TEXT, "URL", NULL,
     "fleet: a remote_write receiver (repeatable: hosts are spread over the URLs by a hash of "
     "instance)"},
    {"seed", 0, CLI_OPT_SEED, CLI_ARG_TEXT, "K", NULL,
     "fleet: every random choice follows from it (default 1): the same seed, the same fleet"},
    {"header", 0, CLI_OPT_HEADER, CLI_ARG_TEXT, "\"NAME: VALUE\"", NULL,
     "fleet: an HTTP header on every request (repeatable; X-Scope-OrgID, THANOS-TENANT...)"},
    {"tenant-path", 0, CLI_OPT_TENANT_PATH, CLI_ARG_NONE, NULL, NULL,
     "fleet: the URLs are bases; each host sends to <base>/insert/<tenant>/prometheus/api/v1/"
     "write (VictoriaMetrics cluster)"},
    {"tenants", 0, CLI_OPT_TENANTS, CLI_ARG_TEXT, "N", NULL,
     "fleet: tenants for --tenant-path (default 2)"},
    {"truth", 0, CLI_OPT_TRUTH, CLI_ARG_FILE, "FILE", NULL,
     "fleet: write the planted faults here as JSON (docs/fleet.md)"},
    {"fault-rate", 0, CLI_OPT_FAULT_RATE, CLI_ARG_TEXT, "R", NULL,
     "fleet: share of the hosts that carry a planted fault, 0..1 (default 0.03)"},
    {"start-offset", 0, CLI_OPT_START_OFFSET, CLI_ARG_TEXT, "SECONDS", NULL,
     "fleet: start this far in the past and send the history first (default 0)"},
    {"mix", 0, CLI_OPT_MIX, CLI_ARG_TEXT, "NAME=W,...", NULL,
     "fleet: machine types and their weights (default "
     "kunpeng930-2p=4,spr-2s=3,turin-2p=1,yitian710-1p=1,grace-gh200=1)"},
    {"connections", 0, CLI_OPT_CONNECTIONS, CLI_ARG_TEXT, "N", NULL,
     "fleet: HTTP connections per URL, 1..1024 (default 32)"},
    {"healed-dir", 0, CLI_OPT_HEALED_DIR, CLI_ARG_DIR, "DIR", NULL,
     "fleet: write each machine's healed description (its own faults removed) here"},
    {"help", 'h', 'h', CLI_ARG_NONE, NULL, NULL, "this text"},
    {"version", 'V', 'V', CLI_ARG_NONE, NULL, NULL, "the version"},
    {NULL, 0, 0, CLI_ARG_NONE, NULL, NULL, NULL},
};

#ifdef CLI_WITH_EXPORTER
#define EXPORTER_RUN     cmd_exporter
#define EXPORTER_PREPARE cmd_exporter_prepare
#else
#define EXPORTER_RUN     NULL
#define EXPORTER_PREPARE NULL
#endif
#ifdef CLI_WITH_SNAPSHOT
#define SNAPSHOT_RUN cmd_snapshot
#else
#define SNAPSHOT_RUN NULL
#endif

static const struct cli_command trace_commands[] = {
    {.name = "dump",
     .summary = "every dword of a hisi_ptt recording at the offsets `perf report -D` prints, "
                "with labels and decoded TLPs",
     .args = "FILE",
     .min_args = 1,
     .max_args = 1,
     .options = "raw max-size",
     .run = cmd_trace_dump},
    {.name = "report",
     .summary = "TLP mix, payload sizes, top requesters and request->completion latency of a "
                "recording",
     .args = "FILE",
     .min_args = 1,
     .max_args = 1,
     .options = "raw json time-mode clock-hz top max-size calibration",
     .run = cmd_trace_report},
    {.name = NULL},
};

const struct cli_command cli_commands[] = {
    {.name = "topology",
     .summary = "the PCI(e) tree with link speed and width on every link",
     .options = "json pci-dump sysfs-root no-names",
     .run = cmd_topology,
     .flags = CLI_CMD_MACHINE},
    {.name = "audit",
     .summary = "MPS/MRRS audit against the kernel's five policies; exit status 0 ok, "
                "1 warnings, 2 critical findings",
     .options = "json pci-dump sysfs-root proc-root policy",
     .run = cmd_audit,
     .flags = CLI_CMD_MACHINE},
    {.name = "pmu",
     .summary = "count with the PCIe PMUs (HiSilicon hisi_pcie, Synopsys DWC, NVIDIA Grace, "
                "AMD data fabric): bandwidth, utilisation and latency per Root Port (or root "
                "complex) for a few intervals",
     .options = "json interval count detail option calibration",
     .run = cmd_pmu,
     .flags = CLI_CMD_MACHINE | CLI_CMD_START,
     .sources = ENGINE_SOURCE_PORT_PMUS | ENGINE_SOURCE_AMD_DF},
    {.name = "uncore",
     .summary = "Intel uncore PMON discovery: every PMON unit the table behind DVSEC 0x23 "
                "(id 1) lists; read only",
     .options = "json pci-dump",
     .run = cmd_uncore,
     .flags = CLI_CMD_MACHINE | CLI_CMD_ROOT},
    {.name = "iio",
     .summary = "count with the Intel IIO free-running PMUs: PCIe bandwidth per IIO stack "
                "and part for a few intervals",
     .options = "json interval count detail iio-stack-bus no-scale-fix option",
     .run = cmd_iio,
     .flags = CLI_CMD_MACHINE | CLI_CMD_START,
     .sources = ENGINE_SOURCE_INTEL_IIO},
    {.name = "top",
     .summary = "a live full-screen view: one row per Root Port with utilisation, bandwidth "
                "by TLP type, latency, link flags and AER errors per interval",
     .options = "interval detail pci-dump sysfs-root proc-root policy iio-stack-bus "
                "no-scale-fix option calibration",
     .run = cmd_top,
     .flags = CLI_CMD_MACHINE | CLI_CMD_START | CLI_CMD_TERMINAL,
     /* link state, audit and AER, and the bandwidth of either vendor */
     .sources = ENGINE_SOURCE_MONITOR | ENGINE_SOURCE_PORT_PMUS | ENGINE_SOURCE_INTEL_IIO |
                ENGINE_SOURCE_AMD_DF,
     .prepare = cmd_top_prepare,
     .no_terminal = "use `pciescope pmu`, `pciescope iio` or `pciescope topology` for text"},
    {.name = "trace",
     .summary = "a HiSilicon PTT recording, off-line: needs no PCI access",
     .args = "dump|report FILE",
     .min_args = 2,
     .max_args = 2,
     .subs = trace_commands},
    {.name = "options",
     .summary = "the collectd plugin's options (the table every front end shares), with "
                "--markdown as in docs/configuration.md",
     .options = "markdown",
     .run = cmd_options},
    {.name = "exporter",
     .summary = "serve /metrics for Prometheus (text or OpenMetrics) until SIGINT/SIGTERM: "
                "the collectd plugin's values, names and labels, without collectd",
     .options = "listen detail interval option instance tls-cert tls-key basic-auth-user "
                "basic-auth-password-file max-connections max-connections-per-client timeout "
                "calibration",
     .run = EXPORTER_RUN,
     .flags = CLI_CMD_HELPER,
     .prepare = EXPORTER_PREPARE},
    {.name = "fleet",
     .summary = "simulated hosts sending the plugin's series by remote_write, with planted "
                "faults (capacity planning, demos; docs/fleet.md)",
     .args = "--hosts N --duration SECONDS --url URL",
     .options = "hosts duration url interval seed header tenant-path tenants truth fault-rate "
                "start-offset mix connections machine-dir healed-dir",
     .flags = CLI_CMD_HELPER | CLI_CMD_OWN_OPTIONS},
    {.name = "calibrate",
     .summary = "measure the HiSilicon PMU's and PTT's undocumented units, a Grace PMU's "
                "`root_port` bit or an AMD Turin device's IO root complex with a known load and "
                "write them to a calibration file (docs/real-hardware.md); exit status 0 all "
                "consistent, 1 some not",
     .args = "--device BDF",
     .options = "device bytes run run-timeout repeat output json",
     .run = cmd_calibrate,
     .flags = CLI_CMD_MACHINE | CLI_CMD_ROOT},
    {.name = "snapshot",
     .summary = "what reproduces this machine elsewhere, read-only and without secrets, in "
                "one tar.gz with a simulator description (docs/cli.md: pciescope snapshot)",
     .options = "output description trace device bytes run run-timeout repeat pci-dump "
                "sysfs-root proc-root policy iio-stack-bus option",
     .run = SNAPSHOT_RUN,
     .flags = CLI_CMD_MACHINE | CLI_CMD_ROOT | CLI_CMD_HELPER},
    {.name = "help",
     .summary = "the commands, or one command's usage and options",
     .args = "[COMMAND [SUBCOMMAND]]",
     .max_args = 2,
     .options = "markdown",
     .run = cmd_help,
     .complete = "$commands"},
    {.name = "completion",
     .summary = "print the bash completion script (generated from this table)",
     .args = "bash",
     .min_args = 1,
     .max_args = 1,
     .run = cmd_completion,
     .complete = "bash"},
    {.name = NULL},
};

const struct cli_command *cli_command_find(const struct cli_command *table, const char *name)
{
        for (const struct cli_command *c = table; name && c->name; c++)
                if (!strcmp(c->name, name))
                        return c;
        return NULL;
}

const struct cli_option *cli_option_find(const char *name)
{
        for (const struct cli_option *o = cli_options; o->name; o++)
                if (!strcmp(o->name, name))
                        return o;
        return NULL;
}

/* Levenshtein distance of two short words (command names). */
static size_t distance(const char *a, const char *b)
{
        size_t la = strlen(a), lb = strlen(b), row[33];

        if (la > 32 || lb > 32)
                return 99;
        for (size_t j = 0; j <= lb; j++)
                row[j] = j;
        for (size_t i = 1; i <= la; i++) {
                size_t diag = row[0];

                row[0] = i;
                for (size_t j = 1; j <= lb; j++) {
                        size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);

                        if (up + 1 < best)
                                best = up + 1;
                        if (row[j - 1] + 1 < best)
                                best = row[j - 1] + 1;
                        diag = up;
                        row[j] = best;
                }
        }
        return row[lb];
}

const char *cli_command_nearest(const struct cli_command *table, const char *name)
{
        const char *best = NULL;
        size_t best_d = 3; /* at most two edits away */

        for (const struct cli_command *c = table; c->name; c++) {
                size_t d = strncmp(c->name, name, strlen(name)) ? distance(c->name, name) : 1;

                if (*name && d < best_d) {
                        best = c->name;
                        best_d = d;
                }
        }
        return best;
}

void cli_unknown_command(const struct cli_command *parent, const char *name)
{
        const char *near = cli_command_nearest(parent ? parent->subs : cli_commands, name);
        char help[64];

        snprintf(help, sizeof(help), "`pciescope help%s%s` lists them", parent ? " " : "",
                 parent ? parent->name : "");
        if (near)
                cli_error("unknown %s '%s': did you mean '%s'? (%s)",
                          parent ? "sub-command" : "command", name, near, help);
        else
                cli_error("unknown %s '%s' (%s)", parent ? "sub-command" : "command", name, help);
}

/* ---- words of an option list ---- */

/* Calls @fn for each option named in the space-separated @list. */
static void each_option(const char *list, void (*fn)(void *ctx, const struct cli_option *o),
                        void *ctx)
{
        char name[64];

        for (const char *p = list; p && *p;) {
                size_t len = strcspn(p, " ");

                if (len && len < sizeof(name)) {
                        const struct cli_option *o;

                        memcpy(name, p, len);
                        name[len] = '\0';
                        o = cli_option_find(name);
                        if (o)
                                fn(ctx, o);
                        else /* the table names an option the parser lacks */
                                fprintf(stderr, "pciescope: command table: no option --%s\n", name);
                }
                p += len + (p[len] == ' ');
        }
}

/* "--name ARG" or "-o, --name ARG" into @buf. */
static const char *option_tag(const struct cli_option *o, char *buf, size_t size)
{
        char letter[8] = "";

        if (o->letter)
                snprintf(letter, sizeof(letter), "-%c, ", o->letter);
        snprintf(buf, size, "%s--%s%s%s", letter, o->name, o->arg_name ? " " : "",
                 o->arg_name ? o->arg_name : "");
        return buf;
}

/* A space that wrap() does not break at ("[--listen ADDR:PORT]"). */
#define NBSP '\x01'

#define HELP_COLUMN 24
#define HELP_WIDTH  79

/* @text from column @col to HELP_WIDTH, continued at column @indent. */
static void wrap(FILE *out, const char *text, size_t col, size_t indent)
{
        const char *p = text;

        while (*p) {
                size_t room = HELP_WIDTH - col, len = strlen(p);

                if (len > room) {
                        len = room;
                        while (len && p[len] != ' ')
                                len--;
                        if (!len)
                                len = strcspn(p, " ");
                }
                for (size_t i = 0; i < len; i++)
                        fputc(p[i] == NBSP ? ' ' : p[i], out);
                fputc('\n', out);
                p += len;
                while (*p == ' ')
                        p++;
                if (*p)
                        fprintf(out, "%*s", (int)indent, "");
                col = indent;
        }
}

/* "  --tag ARG           help..." */
static void print_entry(FILE *out, const char *tag, const char *help)
{
        int n = fprintf(out, "  %s", tag);

        if (n < 0)
                return;
        if ((size_t)n + 2 > HELP_COLUMN) {
                fprintf(out, "\n%*s", HELP_COLUMN, "");
                n = HELP_COLUMN;
        } else {
                fprintf(out, "%*s", HELP_COLUMN - n, "");
                n = HELP_COLUMN;
        }
        wrap(out, help, (size_t)n, HELP_COLUMN);
}

static void print_option(void *ctx, const struct cli_option *o)
{
        char tag[96];

        print_entry(ctx, option_tag(o, tag, sizeof(tag)), o->help);
}

/* " [--name ARG]" for each option not already in @cmd's args. */
struct synopsis {
        char *buf;
        size_t size, len;
        const struct cli_command *cmd;
};

static void append(struct synopsis *s, const char *text)
{
        int n = snprintf(s->buf + s->len, s->size - s->len, "%s", text);

        if (n > 0)
                s->len += (size_t)n < s->size - s->len ? (size_t)n : s->size - s->len - 1;
}

static void add_bracketed(void *ctx, const struct cli_option *o)
{
        struct synopsis *s = ctx;
        char tag[96], flag[72], word[100];

        /* An option the arguments name (a required one) is not repeated. */
        snprintf(flag, sizeof(flag), "--%s ", o->name);
        for (const char *a = s->cmd->args; a && (a = strstr(a, flag)); a++)
                if (a == s->cmd->args || a[-1] == ' ')
                        return;
        snprintf(tag, sizeof(tag), "--%s%s%s", o->name, o->arg_name ? " " : "",
                 o->arg_name ? o->arg_name : "");
        snprintf(word, sizeof(word), " [%s]", tag);
        for (char *p = word + 1; *p; p++)
                if (*p == ' ')
                        *p = NBSP;
        append(s, word);
}

/* "pciescope [PARENT ]NAME [--opt ARG]... ARGS" into @buf. */
static const char *synopsis(char *buf, size_t size, const struct cli_command *cmd,
                            const struct cli_command *parent)
{
        struct synopsis s = {buf, size, 0, cmd};

        buf[0] = '\0';
        append(&s, "pciescope ");
        if (parent) {
                append(&s, parent->name);
                append(&s, " ");
        }
        append(&s, cmd->name);
        each_option(cmd->options, add_bracketed, &s);
        if (cmd->args) {
                append(&s, " ");
                append(&s, cmd->args);
        }
        return buf;
}

void cli_command_synopsis(FILE *out, const char *prefix, const struct cli_command *cmd,
                          const struct cli_command *parent)
{
        char buf[1024];

        synopsis(buf, sizeof(buf), cmd, parent);
        for (char *p = buf; *p; p++)
                if (*p == NBSP)
                        *p = ' ';
        fprintf(out, "%s%s\n", prefix, buf);
}

/* The synopsis wrapped at HELP_WIDTH, continued under the command's name. */
static void print_usage(FILE *out, const char *prefix, const struct cli_command *cmd,
                        const struct cli_command *parent)
{
        char buf[1024];
        size_t indent = strlen(prefix) + strlen("pciescope ") + strlen(cmd->name) + 1 +
                        (parent ? strlen(parent->name) + 1 : 0);

        fputs(prefix, out);
        wrap(out, synopsis(buf, sizeof(buf), cmd, parent), strlen(prefix),
             indent < 40 ? indent : 8);
}

static const char *needs(const struct cli_command *cmd, char *buf, size_t size)
{
        snprintf(buf, size, "%s%s%s", cmd->flags & CLI_CMD_ROOT ? "root on a live machine" : "",
                 (cmd->flags & CLI_CMD_ROOT) && (cmd->flags & CLI_CMD_TERMINAL) ? ", " : "",
                 cmd->flags & CLI_CMD_TERMINAL ? "a terminal" : "");
        return buf;
}

void cli_usage(FILE *out)
{
        char tag[64], need[64], line[512];

        fprintf(out, "Usage: pciescope COMMAND [OPTIONS]\n"
                     "       pciescope help COMMAND    (or pciescope COMMAND --help)\n"
                     "\nCommands:\n");
        for (const struct cli_command *c = cli_commands; c->name; c++) {
                const struct cli_command *sub = c->subs;

                do {
                        snprintf(tag, sizeof(tag), "%s%s%s", c->name, sub ? " " : "",
                                 sub ? sub->name : "");
                        needs(c, need, sizeof(need));
                        snprintf(line, sizeof(line), "%s%s%s%s", sub ? sub->summary : c->summary,
                                 *need ? " (needs " : "", need, *need ? ")" : "");
                        print_entry(out, tag, line);
                } while (sub && (++sub)->name);
        }
        fprintf(out, "\nOptions (`pciescope COMMAND --help` lists the ones it takes):\n");
        for (const struct cli_option *o = cli_options; o->name; o++)
                print_option(out, o);
}

static void command_options(FILE *out, const struct cli_command *cmd)
{
        fprintf(out, "\nOptions:\n");
        each_option(cmd->options, print_option, out);
        print_option(out, cli_option_find("help"));
}

void cli_command_help(FILE *out, const struct cli_command *cmd, const struct cli_command *sub)
{
        char need[64];

        if (cmd->subs && !sub) {
                fprintf(out, "Usage:\n");
                for (sub = cmd->subs; sub->name; sub++)
                        print_usage(out, "  ", sub, cmd);
                fprintf(out, "\n%s.\n\nSub-commands:\n", cmd->summary);
                for (sub = cmd->subs; sub->name; sub++)
                        print_entry(out, sub->name, sub->summary);
                fprintf(out, "\n`pciescope %s SUBCOMMAND --help` lists its options.\n", cmd->name);
                return;
        }
        print_usage(out, "Usage: ", sub ? sub : cmd, sub ? cmd : NULL);
        fprintf(out, "\n");
        wrap(out, sub ? sub->summary : cmd->summary, 0, 0);
        if (*needs(cmd, need, sizeof(need)))
                fprintf(out, "Needs %s.\n", need);
        if (cmd->flags & CLI_CMD_HELPER)
                fprintf(out, "Runs as pciescope-%s, a program of its own.\n", cmd->name);
        command_options(out, sub ? sub : cmd);
        if (cmd->flags & CLI_CMD_MACHINE) {
                fprintf(out, "\nThe machine (every command that reads one):\n");
                each_option(CLI_MACHINE_OPTIONS, print_option, out);
        }
}

/* ---- Markdown: the synopsis and the command list ---- */

void cli_commands_markdown(FILE *out)
{
        char need[64];

        for (const struct cli_command *c = cli_commands; c->name; c++) {
                if (!c->subs)
                        cli_command_synopsis(out, "    ", c, NULL);
                for (const struct cli_command *s = c->subs; s && s->name; s++)
                        cli_command_synopsis(out, "    ", s, c);
        }
        fprintf(out, "    pciescope COMMAND --simulate MACHINE [--kernel VERSION] "
                     "[--machine-dir DIR] ...\n");
        fprintf(out, "\n| command | needs | what it does |\n|---|---|---|\n");
        for (const struct cli_command *c = cli_commands; c->name; c++) {
                const struct cli_command *sub = c->subs;

                do {
                        fprintf(out, "| `%s%s%s` | %s | %s |\n", c->name, sub ? " " : "",
                                sub ? sub->name : "", needs(c, need, sizeof(need)),
                                sub ? sub->summary : c->summary);
                } while (sub && (++sub)->name);
        }
}

/* ---- bash completion ---- */

static void print_word(void *ctx, const struct cli_option *o)
{
        fprintf(ctx, " --%s", o->name);
        if (o->letter)
                fprintf(ctx, " -%c", o->letter);
}

/* The case arm of every option whose argument is of kind @arg. */
static void arg_pattern(FILE *out, enum cli_arg arg)
{
        const char *sep = "    ";

        for (const struct cli_option *o = cli_options; o->name; o++) {
                if (o->arg != arg)
                        continue;
                fprintf(out, "%s--%s", sep, o->name);
                sep = " | ";
                if (o->letter) {
                        fprintf(out, " | -%c", o->letter);
                }
        }
        fprintf(out, ")\n");
}

static void command_words(FILE *out, const char *indent, const struct cli_command *c)
{
        fprintf(out, "%s%s) opts=\"", indent, c->name);
        each_option(c->options, print_word, out);
        if (c->flags & CLI_CMD_MACHINE)
                each_option(CLI_MACHINE_OPTIONS, print_word, out);
        print_word(out, cli_option_find("help"));
        fputc('"', out);
        if (c->complete)
                fprintf(out, "\n%s    [[ -z $sub ]] && args=%s", indent, c->complete);
        fprintf(out, " ;;\n");
}

void cli_completion_bash(FILE *out)
{
        fprintf(out,
                "# bash completion for pciescope(1)                         -*- shell-script -*-\n"
                "# Generated by `pciescope completion bash` from the command table\n"
                "# (cli/commands.c): commands, sub-commands, the options each takes,\n"
                "# option arguments with a fixed set of values, and machine names.\n\n"
                "_pciescope_machine_dir()\n{\n"
                "    local i\n"
                "    for ((i = 1; i < COMP_CWORD; i++)); do\n"
                "        if [[ ${COMP_WORDS[i]} == --machine-dir ]]; then\n"
                "            echo \"${COMP_WORDS[i + 1]}\"\n"
                "            return\n"
                "        fi\n"
                "    done\n"
                "    echo \"${PCIESCOPE_MACHINE_DIR:-/usr/share/pciescope/machines}\"\n"
                "}\n\n"
                "_pciescope()\n{\n"
                "    local cur prev words cword\n"
                "    _init_completion || return\n\n");
        fprintf(out, "    local commands=\"");
        for (const struct cli_command *c = cli_commands; c->name; c++)
                fprintf(out, "%s%s", c == cli_commands ? "" : " ", c->name);
        fprintf(out, "\"\n    local command= sub= i\n"
                     "    for ((i = 1; i < cword; i++)); do\n"
                     "        case ${words[i]} in\n"
                     "        -*) ;;\n"
                     "        *)\n"
                     "            case ${words[i - 1]} in\n"
                     "            # an option's argument, not a command word\n");
        for (enum cli_arg a = CLI_ARG_TEXT; a <= CLI_ARG_MACHINE; a++) {
                fprintf(out, "        ");
                arg_pattern(out, a);
                fprintf(out, "                ;;\n");
        }
        fprintf(out, "            *)\n"
                     "                if [[ -z $command ]]; then\n"
                     "                    command=${words[i]}\n"
                     "                elif [[ -z $sub ]]; then\n"
                     "                    sub=${words[i]}\n"
                     "                fi\n"
                     "                ;;\n"
                     "            esac\n"
                     "            ;;\n"
                     "        esac\n"
                     "    done\n\n"
                     "    case $prev in\n");
        arg_pattern(out, CLI_ARG_FILE);
        fprintf(out, "        _filedir\n        return\n        ;;\n");
        arg_pattern(out, CLI_ARG_DIR);
        fprintf(out, "        _filedir -d\n        return\n        ;;\n");
        for (const struct cli_option *o = cli_options; o->name; o++)
                if (o->arg == CLI_ARG_WORDS)
                        fprintf(out,
                                "    --%s)\n"
                                "        COMPREPLY=($(compgen -W \"%s\" -- \"$cur\"))\n"
                                "        return\n        ;;\n",
                                o->name, o->words);
        arg_pattern(out, CLI_ARG_MACHINE);
        fprintf(out, "        local dir names f\n"
                     "        dir=$(_pciescope_machine_dir)\n"
                     "        for f in \"$dir\"/*.json; do\n"
                     "            [[ -e $f ]] || continue\n"
                     "            f=${f##*/}\n"
                     "            names+=\" ${f%%.json}\"\n"
                     "        done\n"
                     "        COMPREPLY=($(compgen -W \"$names\" -- \"$cur\"))\n"
                     "        [[ $cur == */* ]] && _filedir json\n"
                     "        return\n        ;;\n");
        arg_pattern(out, CLI_ARG_TEXT);
        fprintf(out, "        return\n        ;;\n    esac\n\n"
                     "    local opts= args=\n"
                     "    case $command in\n"
                     "    \"\") opts=\"--help --version\" args=$commands ;;\n");
        for (const struct cli_command *c = cli_commands; c->name; c++) {
                if (!c->subs) {
                        command_words(out, "    ", c);
                        continue;
                }
                fprintf(out, "    %s)\n        case $sub in\n", c->name);
                fprintf(out, "        \"\") opts=\"--help\" args=\"");
                for (const struct cli_command *s = c->subs; s->name; s++)
                        fprintf(out, "%s%s", s == c->subs ? "" : " ", s->name);
                fprintf(out, "\" ;;\n");
                for (const struct cli_command *s = c->subs; s->name; s++)
                        command_words(out, "        ", s);
                fprintf(out, "        esac\n        ;;\n");
        }
        fprintf(out, "    esac\n"
                     "    if [[ $cur == -* ]]; then\n"
                     "        COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
                     "    elif [[ -n $args ]]; then\n"
                     "        COMPREPLY=($(compgen -W \"$args\" -- \"$cur\"))\n"
                     "    elif [[ $command == trace ]]; then\n"
                     "        _filedir\n"
                     "    fi\n"
                     "} &&\n"
                     "    complete -F _pciescope pciescope\n\n"
                     "# ex: filetype=sh\n");
}
