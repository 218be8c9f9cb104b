/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * commands.h - the pciescope command table: every command and option once,
 * with what dispatch needs (handler, flags) and what people read (one-line
 * help, usage, each option's help). Dispatch, `--help`, `help COMMAND`,
 * `COMMAND --help`, the man page's command list (`help --markdown`) and
 * the bash completion (`completion bash`) are all read from here.
 */
#ifndef PCIESCOPE_COMMANDS_H
#define PCIESCOPE_COMMANDS_H

#include <stdio.h>

#include "cli.h"

/* getopt_long's values of the long options without a short letter. */
enum {
        CLI_OPT_MAX_CONNECTIONS = 1001,
        CLI_OPT_MAX_CONNECTIONS_PER_CLIENT,
        CLI_OPT_TIMEOUT,
        CLI_OPT_RUN_TIMEOUT,
        /* fleet's own (pciescope-fleet parses them itself) */
        CLI_OPT_HOSTS,
        CLI_OPT_DURATION,
        CLI_OPT_URL,
        CLI_OPT_SEED,
        CLI_OPT_HEADER,
        CLI_OPT_TENANT_PATH,
        CLI_OPT_TENANTS,
        CLI_OPT_TRUTH,
        CLI_OPT_FAULT_RATE,
        CLI_OPT_START_OFFSET,
        CLI_OPT_MIX,
        CLI_OPT_CONNECTIONS,
        CLI_OPT_HEALED_DIR,
};

/* What an option's argument is, for bash completion. */
enum cli_arg {
        CLI_ARG_NONE,    /* a flag */
        CLI_ARG_TEXT,    /* anything: nothing to complete */
        CLI_ARG_FILE,    /* a file name */
        CLI_ARG_DIR,     /* a directory name */
        CLI_ARG_WORDS,   /* one of cli_option.words */
        CLI_ARG_MACHINE, /* a simulated machine's name or a description file */
};

struct cli_option {
        const char *name;     /* the long name, without "--" */
        int letter;           /* the short letter ('o' for -o), or 0 */
        int key;              /* getopt_long's value */
        enum cli_arg arg;     /* CLI_ARG_NONE: takes no argument */
        const char *arg_name; /* "FILE", "SECONDS"... as help shows it */
        const char *words;    /* CLI_ARG_WORDS: the values, space-separated */
        const char *help;     /* one sentence, wrapped when printed */
};

/* What a command needs before its handler runs. */
enum cli_command_flags {
        CLI_CMD_MACHINE = 1 << 0,  /* opens the machine (live, dump or simulated) */
        CLI_CMD_START = 1 << 1,    /* ... and starts the engine's sources on it */
        CLI_CMD_TERMINAL = 1 << 2, /* refused before anything starts without one */
        CLI_CMD_ROOT = 1 << 3,     /* needs root on a live machine (help says so) */
        CLI_CMD_HELPER = 1 << 4,   /* runs as pciescope-NAME, a program of its own */
        /* ... which parses its options itself: pciescope hands them over
         * unread (only --help is answered here, from this table). */
        CLI_CMD_OWN_OPTIONS = 1 << 5,
};

/* Runs a command; @e is the opened machine with CLI_CMD_MACHINE, else NULL.
 * Returns the exit status. */
typedef int cli_handler(const struct cli_opts *opts, struct engine *e);

struct cli_command {
        const char *name;
        const char *summary;             /* one line, lower case, no full stop */
        const char *args;                /* what follows the options in the usage line */
        unsigned int min_args, max_args; /* words after the name (a sub-command's included) */
        /* Its options, space-separated long names (the machine options,
         * --simulate, --kernel, --machine-dir, come with CLI_CMD_MACHINE). */
        const char *options;
        cli_handler *run; /* NULL with CLI_CMD_HELPER: pciescope runs the helper */
        unsigned int flags;
        unsigned int sources; /* ENGINE_SOURCE_* it runs (CLI_CMD_START) */
        /* Before the machine is opened (host NULL without CLI_CMD_MACHINE):
         * the command's own defaults and log sink. 0 or an exit status. */
        int (*prepare)(struct cli_opts *opts, struct engine_host *host);
        const char *no_terminal;        /* CLI_CMD_TERMINAL: what to use instead */
        const char *complete;           /* bash: the words its first argument may be */
        const struct cli_command *subs; /* sub-commands ({NULL} ends), chosen by the first word */
};

/* The table (cli_commands[], {NULL}-terminated) and the options. */
extern const struct cli_command cli_commands[];
extern const struct cli_option cli_options[];
/* The options every machine command takes. */
#define CLI_MACHINE_OPTIONS "simulate kernel machine-dir"

const struct cli_command *cli_command_find(const struct cli_command *table, const char *name);
const struct cli_option *cli_option_find(const char *name);
/* The name in @table nearest to @name (a typo), or NULL. */
const char *cli_command_nearest(const struct cli_command *table, const char *name);

/* Says that @name is no command (no sub-command of @parent, when not
 * NULL), with the nearest name if one is close. */
void cli_unknown_command(const struct cli_command *parent, const char *name);

/* "@prefix pciescope [PARENT ]NAME [--opt ARG]... ARGS\n" */
void cli_command_synopsis(FILE *out, const char *prefix, const struct cli_command *cmd,
                          const struct cli_command *parent);

/* `pciescope --help`: the commands and every option. */
void cli_usage(FILE *out);
/* `pciescope COMMAND --help`: its usage line and its options only; @sub
 * NULL for a command without sub-commands or to show them all. */
void cli_command_help(FILE *out, const struct cli_command *cmd, const struct cli_command *sub);
/* `pciescope help --markdown`: the synopsis and the command list for
 * docs/cli.md and the man page. */
void cli_commands_markdown(FILE *out);
/* `pciescope completion bash`: the completion script. */
void cli_completion_bash(FILE *out);

#endif /* PCIESCOPE_COMMANDS_H */
