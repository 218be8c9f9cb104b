// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_retry_after.c - libFuzzer target: what a receiver sends back, as the
 * sender reads it: rw_parse_retry_after() on any header value, the reason
 * of a refusal read from any answer body (rw_refusal_reason,
 * rw_classify_answer; the bytes as they are, not terminated), and the log
 * helpers on any text (rw_log_escape, rw_redact_url).
 *
 * Invariants (a violation traps): Retry-After is 0 or -EINVAL, and when 0
 * a finite delay of 0 or more, which rw_retry_after_cap() brings within any
 * RetryAfterMax (the default and the largest allowed); an escaped text holds no
 * control character and fits its buffer; a redacted URL fits its buffer; a
 * refusal's reason is one of the enum's; a 429 is dropped exactly when its
 * body names a series limit, a 400 always, a 503 never.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rw_http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *s = malloc(size + 1), esc[64], url[48];
        double sec = -1;
        int rc;

        if (!s)
                return 0;
        memcpy(s, data, size);
        s[size] = '\0';
        /* a "now" before and after the dates a fuzzer is likely to make */
        for (int k = 0; k < 2; k++) {
                rc = rw_parse_retry_after(s, k ? (time_t)4102444800 : (time_t)1700000000, &sec);
                if (rc != 0 && rc != -EINVAL)
                        __builtin_trap();
                if (rc == 0 && !(isfinite(sec) && sec >= 0))
                        __builtin_trap();
                if (rc == 0 &&
                    (rw_retry_after_cap(sec, RW_RETRY_AFTER_MAX_DEFAULT) >
                         RW_RETRY_AFTER_MAX_DEFAULT ||
                     rw_retry_after_cap(sec, RW_RETRY_AFTER_MAX_LIMIT) > RW_RETRY_AFTER_MAX_LIMIT))
                        __builtin_trap();
        }
        {
                enum rw_refusal r = rw_refusal_reason(429, (const char *)data, size);
                enum rw_verdict v = rw_classify_answer(429, true, (const char *)data, size);

                if (r < RW_REFUSAL_OTHER || r > RW_REFUSAL_OUT_OF_BOUNDS)
                        __builtin_trap();
                if ((v == RW_VERDICT_DROP) != (r == RW_REFUSAL_SERIES_LIMIT))
                        __builtin_trap();
                if (rw_classify_answer(400, true, (const char *)data, size) != RW_VERDICT_DROP ||
                    rw_classify_answer(503, true, (const char *)data, size) != RW_VERDICT_RETRY)
                        __builtin_trap();
                r = rw_refusal_reason(400, (const char *)data, size);
                if (r < RW_REFUSAL_OTHER || r > RW_REFUSAL_OUT_OF_BOUNDS)
                        __builtin_trap();
        }
        rw_log_escape((const char *)data, size, esc, sizeof(esc));
        if (strlen(esc) >= sizeof(esc))
                __builtin_trap();
        for (const char *p = esc; *p; p++)
                if ((unsigned char)*p < 0x20 || *p == 0x7f)
                        __builtin_trap();
        rw_redact_url(s, url, sizeof(url));
        if (strlen(url) >= sizeof(url))
                __builtin_trap();
        free(s);
        return 0;
}
