/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * support.h - what many unit tests need alike: a fake clock for the
 * simulated machines (time moves only when the test says so, so every
 * check is exact) and a log callback that keeps what the code under test
 * logged through the hw_env, for assertions on messages. Header-only;
 * include it once per test program.
 */
#ifndef PCIESCOPE_UNIT_SUPPORT_H
#define PCIESCOPE_UNIT_SUPPORT_H

#include <stdio.h>
#include <string.h>

#include "hw_env.h"

/* Seconds of the fake clock; tests set it. */
static double fake_now __attribute__((unused));

static inline double fake_clock(void *ctx)
{
        (void)ctx;
        return fake_now;
}

/* Every line logged since the test last cleared it (log_text[0] = '\0'). */
static char log_text[16384] __attribute__((unused));

static inline void capture_log(void *ctx, enum hw_log_level level, const char *msg)
{
        size_t len = strlen(log_text);

        (void)ctx, (void)level;
        snprintf(log_text + len, sizeof(log_text) - len, "%s\n", msg);
}

#endif /* PCIESCOPE_UNIT_SUPPORT_H */
