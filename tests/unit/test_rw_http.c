// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_rw_http.c - answer classification (2xx sent; 5xx, no answer and,
 * when enabled, 429 retried; other statuses dropped), Retry-After parsing
 * (seconds and IMF-fixdate, past/garbage refused, bounded, capped) and the
 * capped exponential backoff.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <errno.h>

#include "rw_http.h"

static void test_classify(void **state)
{
        static const struct {
                long status;
                bool retry429;
                enum rw_verdict want;
        } rows[] = {
            {200, false, RW_VERDICT_SENT},  {204, false, RW_VERDICT_SENT},
            {299, false, RW_VERDICT_SENT},  {0, false, RW_VERDICT_RETRY},
            {500, false, RW_VERDICT_RETRY}, {503, true, RW_VERDICT_RETRY},
            {599, false, RW_VERDICT_RETRY}, {429, false, RW_VERDICT_DROP},
            {429, true, RW_VERDICT_RETRY},  {400, true, RW_VERDICT_DROP},
            {401, false, RW_VERDICT_DROP},  {404, false, RW_VERDICT_DROP},
            {409, false, RW_VERDICT_DROP},  {413, false, RW_VERDICT_DROP},
            {301, false, RW_VERDICT_DROP},
        };

        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
                assert_int_equal(rw_classify(rows[i].status, rows[i].retry429), rows[i].want);
}

/* Answers as Mimir 2.x, Cortex and Prometheus 2.42 write them (the texts of
 * tests/tools/mimir_standin.py, where their sources are cited). */
static void test_refusal_reason(void **state)
{
        static const struct {
                long status;
                const char *body;
                enum rw_refusal want;
        } rows[] = {
            {400,
             "user=fleet: per-user series limit of 150000 exceeded "
             "(err-mimir-max-series-per-user). "
             "To adjust the related per-tenant limit, configure "
             "-ingester.max-global-series-per-user, or contact your service administrator.\n",
             RW_REFUSAL_SERIES_LIMIT},
            {400,
             "user=fleet: per-metric series limit of 20000 exceeded "
             "(err-mimir-max-series-per-metric). To adjust the related per-tenant limit, configure "
             "-ingester.max-global-series-per-metric, or contact your service administrator. This "
             "is for series {__name__=\"pcie_link_up\", instance=\"rate limit\"}\n",
             RW_REFUSAL_SERIES_LIMIT},
            {429,
             "the request has been rejected because the tenant exceeded the ingestion rate limit, "
             "set to 10000 items/s with a maximum allowed burst of 200000. This limit is applied "
             "on "
             "the total number of samples, exemplars and metadata received across all distributors "
             "(err-mimir-tenant-max-ingestion-rate). To adjust the related per-tenant limits, "
             "configure -distributor.ingestion-rate-limit and -distributor.ingestion-burst-size, "
             "or "
             "contact your service administrator.\n",
             RW_REFUSAL_RATE_LIMIT},
            {429, "", RW_REFUSAL_RATE_LIMIT},
            {429,
             "per-user series limit of 150000 exceeded, please contact administrator to raise it "
             "(local limit: 0 global limit: 150000 actual local limit: 50000)",
             RW_REFUSAL_SERIES_LIMIT},
            {400,
             "received a series whose number of labels exceeds the limit (actual: 31, limit: 30) "
             "series: 'pcie_link_up{a=\"1\"}' (err-mimir-max-label-names-per-series). To adjust "
             "the related per-tenant limit, configure -validation.max-label-names-per-series, or "
             "contact your service administrator.\n",
             RW_REFUSAL_LABEL_LIMIT},
            {400,
             "received a series whose label value length exceeds the limit, value: 'xxx' "
             "(truncated) series: 'pcie_link_up' (err-mimir-label-value-too-long). To adjust the "
             "related per-tenant limit, configure -validation.max-length-label-value, or contact "
             "your service administrator.\n",
             RW_REFUSAL_LABEL_LIMIT},
            {400,
             "user=fleet: the sample has been rejected because another sample with a more recent "
             "timestamp has already been ingested and out-of-order samples are not allowed "
             "(err-mimir-sample-out-of-order). The affected sample has timestamp "
             "2026-11-27T15:00:00Z and is from series {__name__=\"pcie_link_up\", "
             "note=\"too old\"}\n",
             RW_REFUSAL_OUT_OF_ORDER},
            {400,
             "user=fleet: the sample has been rejected because another sample with a more recent "
             "timestamp has already been ingested and this sample is beyond the out-of-order time "
             "window of 10m (err-mimir-sample-timestamp-too-old). The affected sample has "
             "timestamp 2026-11-27T15:00:00Z and is from series {__name__=\"x\"}\n",
             RW_REFUSAL_OUT_OF_BOUNDS},
            {400,
             "received a sample whose timestamp is too far in the future, timestamp: 1 series: 'x' "
             "(err-mimir-too-far-in-future). To adjust the related per-tenant limit, configure "
             "-validation.create-grace-period, or contact your service administrator.\n",
             RW_REFUSAL_OUT_OF_BOUNDS},
            {400, "out of bounds\n", RW_REFUSAL_OUT_OF_BOUNDS},
            {400, "OUT OF ORDER SAMPLE\n", RW_REFUSAL_OUT_OF_ORDER},
            {400, "duplicate sample for timestamp\n", RW_REFUSAL_OUT_OF_ORDER},
            {400, "snappy: corrupt input\n", RW_REFUSAL_OTHER},
            {401, "no org id\n", RW_REFUSAL_OTHER},
            {404, NULL, RW_REFUSAL_OTHER},
        };

        (void)state;
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                const char *b = rows[i].body;

                assert_int_equal(rw_refusal_reason(rows[i].status, b, b ? strlen(b) : 0),
                                 rows[i].want);
        }
        /* The body need not be terminated: only n bytes are read. */
        assert_int_equal(rw_refusal_reason(400, "out of boundsXX", 6), RW_REFUSAL_OTHER);
}

/* A 429 is retried (Retry429 on) unless it names a series limit, which
 * time does not clear; a 400 series limit is never retried. */
static void test_classify_answer(void **state)
{
        static const char mimir_rate[] = "the request has been rejected because the tenant "
                                         "exceeded the ingestion rate limit, set to 10000 items/s "
                                         "(err-mimir-tenant-max-ingestion-rate)";
        static const char cortex_series[] = "per-user series limit of 150000 exceeded, please "
                                            "contact administrator to raise it";

        (void)state;
        assert_int_equal(rw_classify_answer(429, true, mimir_rate, strlen(mimir_rate)),
                         RW_VERDICT_RETRY);
        assert_int_equal(rw_classify_answer(429, false, mimir_rate, strlen(mimir_rate)),
                         RW_VERDICT_DROP);
        assert_int_equal(rw_classify_answer(429, true, cortex_series, strlen(cortex_series)),
                         RW_VERDICT_DROP);
        assert_int_equal(rw_classify_answer(400, true, cortex_series, strlen(cortex_series)),
                         RW_VERDICT_DROP);
        assert_int_equal(rw_classify_answer(503, true, cortex_series, strlen(cortex_series)),
                         RW_VERDICT_RETRY);
        assert_int_equal(rw_classify_answer(429, true, NULL, 0), RW_VERDICT_RETRY);
        assert_int_equal(rw_classify_answer(204, true, NULL, 0), RW_VERDICT_SENT);
}

static void test_retry_after(void **state)
{
        /* 1994-11-06 08:49:37 UTC */
        time_t t = 784111777;
        double s = -1;

        assert_int_equal(rw_parse_retry_after("120", t, &s), 0);
        assert_true(s == 120);
        assert_int_equal(rw_parse_retry_after("  7 \r\n", t, &s), 0);
        assert_true(s == 7);
        assert_int_equal(rw_parse_retry_after("0", t, &s), 0);
        assert_true(s == 0);
        /* The receiver's value as it is; the endpoint caps it. */
        assert_int_equal(rw_parse_retry_after("86400", t, &s), 0);
        assert_true(s == 86400);
        assert_true(rw_retry_after_cap(s, RW_RETRY_AFTER_MAX_DEFAULT) == 60);
        assert_true(rw_retry_after_cap(s, 2) == 2);
        assert_true(rw_retry_after_cap(7, 60) == 7);
        assert_int_equal(rw_parse_retry_after("9999999999", t, &s), 0);
        assert_true(s == 9999999999.0);
        assert_true(rw_retry_after_cap(s, RW_RETRY_AFTER_MAX_LIMIT) == RW_RETRY_AFTER_MAX_LIMIT);
        assert_int_equal(rw_parse_retry_after("Sun, 06 Nov 1994 08:50:07 GMT", t, &s), 0);
        assert_true(s == 30);
        assert_int_equal(rw_parse_retry_after(" Sun, 06 Nov 1994 08:49:47 GMT\r\n", t, &s), 0);
        assert_true(s == 10);
        /* In the past, now, garbage, negative, too long, overflow. */
        assert_int_equal(rw_parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", t, &s), -EINVAL);
        assert_int_equal(rw_parse_retry_after("Sat, 05 Nov 1994 08:49:37 GMT", t, &s), -EINVAL);
        assert_int_equal(rw_parse_retry_after("soon", t, &s), -EINVAL);
        assert_int_equal(rw_parse_retry_after("-5", t, &s), -EINVAL);
        assert_int_equal(rw_parse_retry_after("5s", t, &s), -EINVAL);
        assert_int_equal(rw_parse_retry_after("", t, &s), -EINVAL);
        assert_int_equal(rw_parse_retry_after(NULL, t, &s), -EINVAL);
        assert_int_equal(rw_parse_retry_after("99999999999999999999", t, &s), -EINVAL);
        assert_int_equal(
            rw_parse_retry_after("Sun, 06 Nov 1994 08:50:07 GMT and then some more text here......",
                                 t, &s),
            -EINVAL);
}

static void test_backoff(void **state)
{
        double b = 0.03, sleep;
        const double want[] = {0.03, 0.06, 0.12, 0.24, 0.48, 0.96, 1.92, 3.84, 5, 5, 5};

        for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
                sleep = rw_backoff(&b, -1, 0.03, 5);
                assert_float_equal(sleep, want[i], 1e-9);
        }
        /* Retry-After is the sleep; the next backoff is twice it, capped. */
        b = 0.03;
        sleep = rw_backoff(&b, 1.5, 0.03, 5);
        assert_float_equal(sleep, 1.5, 1e-9);
        assert_float_equal(b, 3, 1e-9);
        sleep = rw_backoff(&b, 30, 0.03, 5);
        assert_float_equal(sleep, 30, 1e-9);
        assert_float_equal(b, 5, 1e-9);
        /* Retry-After 0 is no hint: the normal backoff applies, so a
         * receiver answering it every time gets no busy loop. */
        b = 0.03;
        sleep = rw_backoff(&b, 0, 0.03, 5);
        assert_float_equal(sleep, 0.03, 1e-9);
        assert_float_equal(b, 0.06, 1e-9);
        sleep = rw_backoff(&b, 0, 0.03, 5);
        assert_float_equal(sleep, 0.06, 1e-9);
}

/* Text from a receiver for a log line: control characters escaped, cut
 * whole, never past the buffer. */
static void test_log_escape(void **state)
{
        char out[64], small[8];

        (void)state;
        rw_log_escape("a\nb\r\x1b[31m\\\x7f\t", 12, out, sizeof(out));
        assert_string_equal(out, "a\\nb\\r\\x1b[31m\\\\\\x7f\\t");
        rw_log_escape("ab\ncd", 5, small, sizeof(small));
        assert_string_equal(small, "ab\\ncd");
        rw_log_escape("abc\x01", 4, small, 6);
        assert_string_equal(small, "abc"); /* "\x01" does not fit: cut before */
        rw_log_escape("x", 0, out, sizeof(out));
        assert_string_equal(out, "");
}

/* A URL's user information never reaches a log line. */
static void test_redact_url(void **state)
{
        char out[128];

        (void)state;
        assert_string_equal(rw_redact_url("https://u:p@h:1/w?a@b", out, sizeof(out)),
                            "https://***@h:1/w?a@b");
        assert_string_equal(rw_redact_url("http://a@b@host/x", out, sizeof(out)),
                            "http://***@host/x");
        assert_string_equal(rw_redact_url("http://host/a@b", out, sizeof(out)), "http://host/a@b");
        assert_string_equal(rw_redact_url("user:pw@host", out, sizeof(out)), "***@host");
        assert_string_equal(rw_redact_url("", out, sizeof(out)), "");
        /* A URL after a typo (found by fuzz_rw_config): every authority. */
        assert_string_equal(
            rw_redact_url("://\"https://alice:s3cr3t-pw@example.com:9e\"", out, sizeof(out)),
            "://\"https://***@example.com:9e\"");
        assert_string_equal(rw_redact_url("http://a:b@x/ http://c:d@y/", out, sizeof(out)),
                            "http://***@x/ http://***@y/");
        /* Cut to fit, always terminated. */
        assert_string_equal(rw_redact_url("https://u:p@host/path", out, 12), "https://***");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_classify),        cmocka_unit_test(test_refusal_reason),
            cmocka_unit_test(test_classify_answer), cmocka_unit_test(test_retry_after),
            cmocka_unit_test(test_backoff),         cmocka_unit_test(test_log_escape),
            cmocka_unit_test(test_redact_url),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
