// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_engine_options.c - libFuzzer target: the engine's option table, the
 * one parser behind the collectd <Plugin pcie> block, the CLI's flags and
 * Netdata's pcie.conf. The input is option lines as a user writes them
 * (`Key "string" 12.5 true`, one per line); every line goes through
 * engine_config_set, the whole through engine_config_check, and the
 * configuration is freed. A refusal must say why; nothing may crash, leak
 * or read out of bounds (ASan, UBSan: no unchecked double-to-integer).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Splits one line into a key and typed values, collectd-style. */
static size_t split(char *line, char **key, struct engine_value *v, size_t max)
{
        size_t n = 0;
        char *p = line;

        while (*p == ' ' || *p == '\t')
                p++;
        *key = p;
        while (*p && *p != ' ' && *p != '\t')
                p++;
        while (*p && n < max) {
                *p++ = '\0';
                while (*p == ' ' || *p == '\t')
                        p++;
                if (!*p)
                        break;
                if (*p == '"') {
                        v[n].type = ENGINE_VALUE_STRING;
                        v[n].string = ++p;
                        while (*p && *p != '"')
                                p++;
                        if (*p)
                                *p++ = '\0';
                } else if (!strncmp(p, "true", 4) || !strncmp(p, "false", 5)) {
                        v[n].type = ENGINE_VALUE_BOOLEAN;
                        v[n].boolean = *p == 't';
                        p += *p == 't' ? 4 : 5;
                } else {
                        char *end;

                        v[n].type = ENGINE_VALUE_NUMBER;
                        v[n].number = strtod(p, &end);
                        p = end > p ? end : p + 1;
                }
                n++;
        }
        return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct engine_config cfg;
        char *text = malloc(size + 1), *line, *save = NULL;
        char why[512];

        if (!text || engine_config_init(&cfg)) {
                free(text);
                return 0;
        }
        memcpy(text, data, size);
        text[size] = '\0';
        for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                struct engine_value v[8];
                char *key;
                size_t n = split(line, &key, v, 8);

                why[0] = '\0';
                if (engine_config_set(&cfg, key, v, n, why, sizeof(why)) && !why[0])
                        __builtin_trap(); /* a refusal says why */
        }
        why[0] = '\0';
        if (engine_config_check(&cfg, why, sizeof(why)) && !why[0])
                __builtin_trap();
        engine_config_clear(&cfg);
        free(text);
        return 0;
}
