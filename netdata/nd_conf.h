/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nd_conf.h - pcie.plugin's configuration file: Netdata's pcie.conf holds the
 * lines of collectd's <Plugin pcie> block, one `Option value...` per line in
 * collectd's quoting, and every line goes through the engine's one option
 * table (engine_config_set), so the names, values and checks are the
 * collectd plugin's.
 *
 *   # a comment
 *   Simulate "kunpeng930-2p"
 *   Device "0000:3b:*.*"
 *   CollectPMU true
 *   TraceClock 100000000
 *
 * A `<Plugin pcie>` ... `</Plugin>` wrapper around the lines is accepted, so
 * a collectd block can be copied as it is.
 */
#ifndef PCIESCOPE_ND_CONF_H
#define PCIESCOPE_ND_CONF_H

#include <stdbool.h>
#include <stddef.h>

#include "engine_config.h"

#define ND_CONF_MAX_VALUES 8

/* One line split in collectd's way; the strings point into @buf. */
struct nd_conf_line {
        const char *key; /* NULL: a blank line, a comment or the block wrapper */
        struct engine_value values[ND_CONF_MAX_VALUES];
        size_t count;
        char buf[1024];
};

/*
 * nd_conf_split - split @text (one line, no newline) into key and typed
 * values: "quoted strings" (backslash escapes the next character), numbers
 * (as strtod reads them: 8, -1.5, 1e9, 0x10), booleans (true, false, yes,
 * no, on, off) and other bare words (strings). Returns 0 or -EINVAL with
 * @why (an unterminated quote, a line too long, too many values, a key
 * that is not a word, a block other than <Plugin pcie>).
 */
int nd_conf_split(const char *text, struct nd_conf_line *line, char *why, size_t whylen);

/*
 * nd_conf_load - read @path into @cfg (initialised by the caller), line by
 * line through engine_config_set, then engine_config_check. A missing file
 * is no error (every option at its default): *@found says whether it was
 * read. Returns 0, or a negative errno with @why naming the file, the line,
 * the option and its value: "/etc/netdata/pcie.conf:3: option TraceClock 0:
 * ...".
 */
int nd_conf_load(const char *path, struct engine_config *cfg, int *found, char *why, size_t whylen);

/* Netdata's own configuration directories (its Debian and upstream packages). */
#define ND_USER_CONFIG_DIR  "/etc/netdata"
#define ND_STOCK_CONFIG_DIR "/usr/lib/netdata/conf.d"

/*
 * nd_conf_path - the pcie.conf to read into @buf: the one in the user's
 * config dir if it exists, else the stock one if that exists, else the
 * user's (missing: every option at its default). The two dirs are
 * NETDATA_USER_CONFIG_DIR and NETDATA_STOCK_CONFIG_DIR as @env (getenv's
 * signature) returns them, ND_USER_CONFIG_DIR and ND_STOCK_CONFIG_DIR when
 * unset or empty. When @privileged (the plugin runs with more privileges
 * than whoever set its environment: file capabilities) @env is not called
 * at all and the fixed dirs are used. Returns 0, or -ENAMETOOLONG when a
 * dir does not fit @buf.
 */
int nd_conf_path(char *buf, size_t len, bool privileged, char *(*env)(const char *name));

#endif /* PCIESCOPE_ND_CONF_H */
