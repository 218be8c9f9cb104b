// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cmd_help.c - `pciescope help [COMMAND [SUBCOMMAND]]` and
 * `pciescope completion bash`: both read the command table (commands.c).
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"

int cmd_help(const struct cli_opts *opts, struct engine *e)
{
        const struct cli_command *cmd, *sub = NULL;

        (void)e;
        if (opts->markdown) {
                cli_commands_markdown(stdout);
                return CLI_EXIT_OK;
        }
        if (!opts->argc) {
                cli_usage(stdout);
                return CLI_EXIT_OK;
        }
        cmd = cli_command_find(cli_commands, opts->args[0]);
        if (!cmd) {
                cli_unknown_command(NULL, opts->args[0]);
                return CLI_EXIT_ERROR;
        }
        if (opts->argc > 1) {
                sub = cli_command_find(cmd->subs, opts->args[1]);
                if (!sub) {
                        if (cmd->subs)
                                cli_unknown_command(cmd, opts->args[1]);
                        else
                                cli_error("help: %s has no sub-commands", cmd->name);
                        return CLI_EXIT_ERROR;
                }
        }
        cli_command_help(stdout, cmd, sub);
        return CLI_EXIT_OK;
}

int cmd_completion(const struct cli_opts *opts, struct engine *e)
{
        (void)e;
        if (strcmp(opts->args[0], "bash")) {
                cli_error("completion %s: only bash is generated (`pciescope completion bash`)",
                          opts->args[0]);
                return CLI_EXIT_ERROR;
        }
        cli_completion_bash(stdout);
        return CLI_EXIT_OK;
}
