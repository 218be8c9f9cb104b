// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nd_conf.c - pcie.conf for Netdata: collectd's quoting, the engine's
 * option table. See nd_conf.h.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "nd_conf.h"

static const char *skip_space(const char *p)
{
        while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
                p++;
        return p;
}

/* collectd's booleans (its scanner's BOOLEAN token). */
static int parse_boolean(const char *word, bool *out)
{
        static const char *const yes[] = {"true", "yes", "on"}, *const no[] = {"false", "no",
                                                                               "off"};

        for (size_t i = 0; i < 3; i++) {
                if (!strcmp(word, yes[i]))
                        return *out = true, 0;
                if (!strcmp(word, no[i]))
                        return *out = false, 0;
        }
        return -1;
}

/* A bare word as collectd types it: a number, a boolean, or a string. */
static void type_word(char *word, struct engine_value *v)
{
        char *end;
        double d;

        errno = 0;
        d = strtod(word, &end);
        /* strtod also reads "inf" and "nan": collectd has no such numbers. */
        if (end != word && !*end && !errno &&
            (isdigit((unsigned char)word[0]) || word[0] == '-' || word[0] == '+' ||
             word[0] == '.')) {
                *v = (struct engine_value){.type = ENGINE_VALUE_NUMBER, .number = d};
                return;
        }
        if (!parse_boolean(word, &v->boolean)) {
                v->type = ENGINE_VALUE_BOOLEAN;
                return;
        }
        *v = (struct engine_value){.type = ENGINE_VALUE_STRING, .string = word};
}

int nd_conf_split(const char *text, struct nd_conf_line *line, char *why, size_t whylen)
{
        const char *p = skip_space(text);
        char *out = line->buf, *end = line->buf + sizeof(line->buf);

        line->key = NULL;
        line->count = 0;
        if (!*p || *p == '#' || *p == '\n')
                return 0;
        if (*p == '<') {
                /* The collectd block's wrapper, so a block can be pasted. */
                char word[32] = "";

                if (sscanf(p, "<Plugin %31[^>]>", word) == 1 &&
                    (!strcmp(word, "pcie") || !strcmp(word, "\"pcie\"")))
                        return 0;
                if (!strncasecmp(p, "</Plugin>", 9) && !*skip_space(p + 9))
                        return 0;
                snprintf(why, whylen,
                         "only option lines (and a <Plugin pcie> wrapper) belong here");
                return -EINVAL;
        }
        while (*p && *p != '#' && *p != '\n') {
                char *start = out;
                bool quoted = *p == '"';

                if (line->key && line->count == ND_CONF_MAX_VALUES) {
                        snprintf(why, whylen, "more than %d values", ND_CONF_MAX_VALUES);
                        return -EINVAL;
                }
                if (quoted) {
                        for (p++; *p && *p != '"'; p++) {
                                if (*p == '\\' && p[1])
                                        p++; /* collectd: a backslash keeps the next char */
                                if (out + 1 >= end)
                                        break;
                                *out++ = *p;
                        }
                        if (*p != '"') {
                                snprintf(why, whylen, "%s",
                                         out + 1 >= end ? "line too long"
                                                        : "unterminated quoted string");
                                return -EINVAL;
                        }
                        p++;
                } else {
                        while (*p && !strchr(" \t\r\n#\"", *p) && out + 1 < end)
                                *out++ = *p++;
                        if (out + 1 >= end) {
                                snprintf(why, whylen, "line too long");
                                return -EINVAL;
                        }
                }
                *out++ = '\0';
                if (!line->key) {
                        if (quoted || !isalpha((unsigned char)*start)) {
                                snprintf(why, whylen,
                                         "a line starts with an option name, not %s%s%s",
                                         quoted ? "\"" : "", start, quoted ? "\"" : "");
                                return -EINVAL;
                        }
                        line->key = start;
                } else if (quoted) {
                        line->values[line->count++] =
                            (struct engine_value){.type = ENGINE_VALUE_STRING, .string = start};
                } else {
                        type_word(start, &line->values[line->count++]);
                }
                p = skip_space(p);
        }
        return 0;
}

/* ` "value"`, ` 8` or ` true` for the error line (the first value). */
static void describe_value(const struct nd_conf_line *l, char *buf, size_t len)
{
        const struct engine_value *v = &l->values[0];

        buf[0] = '\0';
        if (l->count == 0)
                return;
        if (v->type == ENGINE_VALUE_STRING)
                snprintf(buf, len, " \"%s\"", v->string);
        else if (v->type == ENGINE_VALUE_NUMBER)
                snprintf(buf, len, " %g", v->number);
        else
                snprintf(buf, len, " %s", v->boolean ? "true" : "false");
}

int nd_conf_load(const char *path, struct engine_config *cfg, int *found, char *why, size_t whylen)
{
        static struct nd_conf_line line; /* 1 KiB: not on a small stack */
        char *text = NULL, msg[512];
        size_t cap = 0;
        unsigned int n = 0;
        int err = 0;
        FILE *f = fopen(path, "re");

        *found = f != NULL;
        if (!f) {
                if (errno == ENOENT)
                        return 0;
                err = -errno;
                snprintf(why, whylen, "%s: %s", path, strerror(errno));
                return err;
        }
        while (!err && getline(&text, &cap, f) >= 0) {
                char value[300];

                n++;
                msg[0] = '\0';
                err = nd_conf_split(text, &line, msg, sizeof(msg));
                if (err) {
                        snprintf(why, whylen, "%s:%u: %s", path, n, msg);
                        break;
                }
                if (!line.key)
                        continue;
                err = engine_config_set(cfg, line.key, line.values, line.count, msg, sizeof(msg));
                if (err) {
                        describe_value(&line, value, sizeof(value));
                        snprintf(why, whylen, "%s:%u: option %s%s: %s", path, n, line.key, value,
                                 msg);
                }
        }
        if (!err && ferror(f)) {
                err = -EIO;
                snprintf(why, whylen, "%s: read error", path);
        }
        free(text);
        fclose(f);
        if (!err && engine_config_check(cfg, msg, sizeof(msg))) {
                snprintf(why, whylen, "%s: %s", path, msg);
                err = -EINVAL;
        }
        return err;
}

int nd_conf_path(char *buf, size_t len, bool privileged, char *(*env)(const char *name))
{
        static const char *const vars[2] = {"NETDATA_USER_CONFIG_DIR", "NETDATA_STOCK_CONFIG_DIR"};
        static const char *const fixed[2] = {ND_USER_CONFIG_DIR, ND_STOCK_CONFIG_DIR};
        const char *dirs[2];
        char stock[4096];
        int n;

        for (size_t i = 0; i < 2; i++) {
                const char *v = privileged ? NULL : env(vars[i]);

                dirs[i] = v && *v ? v : fixed[i];
        }
        n = snprintf(stock, sizeof(stock), "%s/pcie.conf", dirs[1]);
        if (n < 0 || (size_t)n >= sizeof(stock))
                return -ENAMETOOLONG;
        n = snprintf(buf, len, "%s/pcie.conf", dirs[0]);
        if (n < 0 || (size_t)n >= len)
                return -ENAMETOOLONG;
        if (access(buf, F_OK) && !access(stock, F_OK)) {
                if (strlen(stock) >= len)
                        return -ENAMETOOLONG;
                strcpy(buf, stock);
        }
        return 0;
}
