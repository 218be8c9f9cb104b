// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_nd_conf.c - libFuzzer target: pcie.plugin's pcie.conf reader
 * (netdata/nd_conf.c), collectd's quoting split by nd_conf_split, each line
 * through the engine's option table as nd_conf_load does. A refusal must say
 * why; a line that splits has a key that is a word, at most
 * ND_CONF_MAX_VALUES values, and strings inside the line's buffer; nothing
 * may crash, leak or read out of bounds.
 */
#include <ctype.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nd_conf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_line(const struct nd_conf_line *l)
{
        const char *lo = l->buf, *hi = l->buf + sizeof(l->buf);

        if (!l->key)
                return;
        if (l->key < lo || l->key >= hi || !isalpha((unsigned char)l->key[0]) ||
            l->count > ND_CONF_MAX_VALUES)
                __builtin_trap();
        for (size_t i = 0; i < l->count; i++)
                if (l->values[i].type == ENGINE_VALUE_STRING &&
                    (l->values[i].string < lo || l->values[i].string >= hi ||
                     !memchr(l->values[i].string, '\0', (size_t)(hi - l->values[i].string))))
                        __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static struct nd_conf_line line;
        struct engine_config cfg;
        char *text = malloc(size + 1), *p, *save = NULL;
        char why[512];

        if (!text || engine_config_init(&cfg)) {
                free(text);
                return 0;
        }
        memcpy(text, data, size);
        text[size] = '\0';
        for (p = strtok_r(text, "\n", &save); p; p = strtok_r(NULL, "\n", &save)) {
                why[0] = '\0';
                if (nd_conf_split(p, &line, why, sizeof(why))) {
                        if (!why[0])
                                __builtin_trap(); /* a refusal says why */
                        continue;
                }
                check_line(&line);
                why[0] = '\0';
                if (line.key &&
                    engine_config_set(&cfg, line.key, line.values, line.count, why, sizeof(why)) &&
                    !why[0])
                        __builtin_trap();
        }
        engine_config_clear(&cfg);
        free(text);
        return 0;
}
