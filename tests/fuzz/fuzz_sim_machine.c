// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_sim_machine.c - libFuzzer target: the simulated machine's JSON
 * loader (sim_machine_parse, the in-memory entry point of
 * sim_machine_load) on any text.
 *
 * Invariants: 0 with a machine, or a negative errno with no machine and a
 * terminated, non-empty message that names the origin; a machine that loads
 * is freed cleanly (ASan's leak check covers both paths).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim_machine.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct sim_machine *m = NULL;
        char *s = malloc(size + 1), err[512];
        int rc;

        if (!s)
                return 0;
        memcpy(s, data, size);
        s[size] = '\0';
        memset(err, 'x', sizeof(err));
        err[sizeof(err) - 1] = '\0';
        rc = sim_machine_parse(s, "fuzz.json", &m, err, sizeof(err));
        if (rc == 0) {
                if (!m)
                        __builtin_trap();
                sim_machine_free(m);
        } else if (rc > 0 || m || !err[0] || strlen(err) >= sizeof(err) ||
                   !strstr(err, "fuzz.json")) {
                __builtin_trap();
        }
        free(s);
        return 0;
}
