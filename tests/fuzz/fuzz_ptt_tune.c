// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_ptt_tune.c - libFuzzer target: what a PTT tune file holds
 * (ptt_tune_parse), a knob name (ptt_knob_parse) and a configured level
 * (ptt_tune_value_check on the input's first 8 bytes as a double).
 *
 * Invariants: a parsed tune value is a u16; a parsed knob names itself back;
 * an accepted level is a whole number 0..2.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ptt_tune.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *s = malloc(size + 1);
        unsigned int v = 0;
        enum ptt_knob knob;
        double d;

        if (!s)
                return 0;
        memcpy(s, data, size);
        s[size] = '\0';
        if (ptt_tune_parse(s, &v) == 0 && v > 0xffff)
                __builtin_trap();
        if (ptt_knob_parse(s, &knob) == 0) {
                const char *name = ptt_knob_name(knob);

                if (!name || ptt_knob_parse(name, &knob) != 0)
                        __builtin_trap();
        }
        if (size >= sizeof(d)) {
                memcpy(&d, data, sizeof(d));
                if (ptt_tune_value_check(d) == 0 && !(d == 0 || d == 1 || d == 2))
                        __builtin_trap();
        }
        free(s);
        return 0;
}
