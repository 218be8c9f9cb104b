// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cmd_options.c - `pciescope options [--markdown]`: the option table every
 * front end shares (the collectd block's names).
 */
#include <stdio.h>

#include "cli.h"

static void write_stdout(void *ctx, const char *text)
{
        (void)ctx;
        fputs(text, stdout);
}

/* docs/configuration.md's reference table is the --markdown output. */
int cmd_options(const struct cli_opts *opts, struct engine *e)
{
        size_t count;
        const struct engine_option *o = engine_options(&count);

        (void)e;
        if (opts->markdown) {
                engine_options_markdown(write_stdout, NULL);
                return CLI_EXIT_OK;
        }
        for (size_t i = 0; i < count; i++)
                printf("%-24s %-40s default %s\n", o[i].name, o[i].value_text, o[i].default_text);
        return CLI_EXIT_OK;
}
