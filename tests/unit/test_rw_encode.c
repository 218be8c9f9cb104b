// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_rw_encode.c - WriteRequest encoding: the body is snappy block format
 * (never the framed stream), decodes back with protobuf-c to exactly the
 * labels, values and millisecond timestamps that went in, keeps sample
 * order, carries the stale NaN bit for bit, and names each family once in
 * the metadata (HISTOGRAM for _bucket/_sum/_count of a histogram).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>
#include <snappy-c.h>

#include "remote.pb-c.h"
#include "rw_encode.h"
#include "rw_series.h"

static char *series(enum rw_kind kind, const char *name, const char *l1, const char *v1)
{
        struct rw_labelset s;

        rw_labelset_init(&s);
        rw_labelset_add(&s, "__name__", name);
        if (l1)
                rw_labelset_add(&s, l1, v1);
        rw_labelset_add(&s, "instance", "h1");
        rw_labelset_finish(&s);
        return rw_series_pack(&s, kind, NULL);
}

static Prometheus__WriteRequest *decode(const uint8_t *body, size_t len)
{
        size_t raw_len;
        char *raw;
        Prometheus__WriteRequest *req;

        assert_int_equal(snappy_validate_compressed_buffer((const char *)body, len), SNAPPY_OK);
        assert_int_equal(snappy_uncompressed_length((const char *)body, len, &raw_len), SNAPPY_OK);
        raw = malloc(raw_len ? raw_len : 1);
        assert_int_equal(snappy_uncompress((const char *)body, len, raw, &raw_len), SNAPPY_OK);
        req = prometheus__write_request__unpack(NULL, raw_len, (uint8_t *)raw);
        free(raw);
        assert_non_null(req);
        return req;
}

static void test_round_trip(void **state)
{
        struct rw_sample s[4];
        struct rw_encoder *e = rw_encoder_new(true);
        const uint8_t *body;
        size_t len, raw;
        Prometheus__WriteRequest *req;
        uint64_t bits;
        int hist = 0, gauge = 0;

        s[0] = (struct rw_sample){series(RW_KIND_HISTOGRAM, "lat_seconds_bucket", "le", "0.1"), 9.0,
                                  1700000000123};
        s[1] = (struct rw_sample){series(RW_KIND_HISTOGRAM, "lat_seconds_bucket", "le", "+Inf"),
                                  10.0, 1700000000123};
        s[2] = (struct rw_sample){series(RW_KIND_HISTOGRAM, "lat_seconds_count", NULL, NULL), 10.0,
                                  1700000000123};
        s[3] = (struct rw_sample){series(RW_KIND_GAUGE, "temp_celsius", "sensor", "s1"),
                                  rw_stale_nan(), 1700000001000};
        assert_int_equal(rw_encode(e, s, 4, &body, &len, &raw), 0);
        /* Block format: never the framed stream's identifier. */
        assert_false(len >= 2 && body[0] == 0xff && body[1] == 0x06);
        req = decode(body, len);
        assert_int_equal(req->n_timeseries, 4);
        assert_int_equal(req->timeseries[0]->n_labels, 3);
        assert_string_equal(req->timeseries[0]->labels[0]->name, "__name__");
        assert_string_equal(req->timeseries[0]->labels[0]->value, "lat_seconds_bucket");
        assert_string_equal(req->timeseries[0]->labels[2]->name, "le");
        assert_string_equal(req->timeseries[0]->labels[2]->value, "0.1");
        assert_string_equal(req->timeseries[1]->labels[2]->value, "+Inf");
        assert_int_equal(req->timeseries[0]->n_samples, 1);
        assert_true(req->timeseries[0]->samples[0]->value == 9.0);
        assert_int_equal(req->timeseries[0]->samples[0]->timestamp, 1700000000123);
        assert_int_equal(req->timeseries[3]->samples[0]->timestamp, 1700000001000);
        memcpy(&bits, &req->timeseries[3]->samples[0]->value, sizeof(bits));
        assert_int_equal(bits, 0x7ff0000000000002ULL);
        assert_true(rw_is_stale_nan(req->timeseries[3]->samples[0]->value));
        assert_false(rw_is_stale_nan(NAN));
        /* One metadata entry per family. */
        assert_int_equal(req->n_metadata, 2);
        for (size_t i = 0; i < req->n_metadata; i++) {
                if (!strcmp(req->metadata[i]->metric_family_name, "lat_seconds")) {
                        assert_int_equal(req->metadata[i]->type,
                                         PROMETHEUS__METRIC_METADATA__METRIC_TYPE__HISTOGRAM);
                        hist++;
                } else if (!strcmp(req->metadata[i]->metric_family_name, "temp_celsius")) {
                        assert_int_equal(req->metadata[i]->type,
                                         PROMETHEUS__METRIC_METADATA__METRIC_TYPE__GAUGE);
                        gauge++;
                }
        }
        assert_int_equal(hist, 1);
        assert_int_equal(gauge, 1);
        prometheus__write_request__free_unpacked(req, NULL);
        for (int i = 0; i < 4; i++)
                free(s[i].series);
        rw_encoder_free(e);
}

/* Reusing the encoder for a bigger, then a smaller batch; order kept. */
static void test_reuse_and_order(void **state)
{
        enum { N = 5000 };
        struct rw_sample *s = calloc(N, sizeof(*s));
        struct rw_encoder *e = rw_encoder_new(false);
        const uint8_t *body;
        size_t len;
        Prometheus__WriteRequest *req;
        char v[16];

        for (int i = 0; i < N; i++) {
                snprintf(v, sizeof(v), "%d", i % 50);
                s[i] = (struct rw_sample){series(RW_KIND_COUNTER, "c_total", "k", v), (double)i,
                                          1000 + i};
        }
        assert_int_equal(rw_encode(e, s, 10, &body, &len, NULL), 0);
        assert_int_equal(rw_encode(e, s, N, &body, &len, NULL), 0);
        req = decode(body, len);
        assert_int_equal(req->n_timeseries, N);
        assert_int_equal(req->n_metadata, 0);
        for (int i = 0; i < N; i++) {
                assert_true(req->timeseries[i]->samples[0]->value == (double)i);
                assert_int_equal(req->timeseries[i]->samples[0]->timestamp, 1000 + i);
        }
        prometheus__write_request__free_unpacked(req, NULL);
        assert_int_equal(rw_encode(e, s + 7, 3, &body, &len, NULL), 0);
        req = decode(body, len);
        assert_int_equal(req->n_timeseries, 3);
        assert_true(req->timeseries[0]->samples[0]->value == 7.0);
        prometheus__write_request__free_unpacked(req, NULL);
        for (int i = 0; i < N; i++)
                free(s[i].series);
        free(s);
        rw_encoder_free(e);
}

/* An empty request is valid (receivers answer 204: a connectivity probe). */
static void test_empty(void **state)
{
        struct rw_encoder *e = rw_encoder_new(true);
        const uint8_t *body;
        size_t len, raw;
        Prometheus__WriteRequest *req;

        assert_int_equal(rw_encode(e, NULL, 0, &body, &len, &raw), 0);
        assert_int_equal(raw, 0);
        req = decode(body, len);
        assert_int_equal(req->n_timeseries, 0);
        prometheus__write_request__free_unpacked(req, NULL);
        rw_encoder_free(e);
}

/* Zero values and timestamps are omitted on the wire and decode as 0. */
static void test_zero(void **state)
{
        struct rw_sample s = {series(RW_KIND_GAUGE, "z", NULL, NULL), 0.0, 0};
        struct rw_encoder *e = rw_encoder_new(false);
        const uint8_t *body;
        size_t len;
        Prometheus__WriteRequest *req;

        assert_int_equal(rw_encode(e, &s, 1, &body, &len, NULL), 0);
        req = decode(body, len);
        assert_true(req->timeseries[0]->samples[0]->value == 0.0);
        assert_int_equal(req->timeseries[0]->samples[0]->timestamp, 0);
        prometheus__write_request__free_unpacked(req, NULL);
        free(s.series);
        rw_encoder_free(e);
}

/* The snappy library itself round-trips what we hand it. */
static void test_snappy_round_trip(void **state)
{
        char in[10000], out[10000];
        size_t clen = snappy_max_compressed_length(sizeof(in)), olen = sizeof(out);
        char *c = malloc(clen);

        for (size_t i = 0; i < sizeof(in); i++)
                in[i] = (char)(i % 7 == 0 ? i : 'a');
        assert_int_equal(snappy_compress(in, sizeof(in), c, &clen), SNAPPY_OK);
        assert_true(clen < sizeof(in));
        assert_int_equal(snappy_uncompress(c, clen, out, &olen), SNAPPY_OK);
        assert_int_equal(olen, sizeof(in));
        assert_memory_equal(in, out, sizeof(in));
        /* A truncated body is refused, not misread. */
        assert_int_not_equal(snappy_validate_compressed_buffer(c, clen / 2), SNAPPY_OK);
        free(c);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_round_trip),
            cmocka_unit_test(test_reuse_and_order),
            cmocka_unit_test(test_empty),
            cmocka_unit_test(test_zero),
            cmocka_unit_test(test_snappy_round_trip),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
