// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_rw_config.c - endpoint configuration checks (each bad value is
 * refused with a message naming the option and the value), and the
 * endpoint's shutdown against an endpoint that never answers: within
 * Timeout, what was queued goes to the spool (or is counted as dropped
 * without one), and the spool replays it at the next start.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <errno.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <snappy-c.h>

#include "remote.pb-c.h"
#include "rw_endpoint.h"
#include "rw_series.h"

static char dir[256];
static char token[300];

static int setup(void **state)
{
        FILE *f;

        snprintf(dir, sizeof(dir), "/tmp/test_rw_config.XXXXXX");
        if (!mkdtemp(dir))
                return -1;
        snprintf(token, sizeof(token), "%s/token", dir);
        f = fopen(token, "w");
        fputs("s3cret\n", f);
        fclose(f);
        return 0;
}

static int teardown(void **state)
{
        char cmd[300];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        return system(cmd);
}

static void base(struct rw_endpoint_cfg *c)
{
        rw_endpoint_cfg_init(c);
        c->url = "http://127.0.0.1:9090/api/v1/write";
}

/* Expects a refusal whose message contains `what`. */
static void refused(const struct rw_endpoint_cfg *c, const char *what)
{
        char err[512] = "";

        assert_int_equal(rw_endpoint_cfg_check(c, err, sizeof(err)), -EINVAL);
        if (!strstr(err, what))
                fail_msg("message \"%s\" does not contain \"%s\"", err, what);
}

static void test_defaults_ok(void **state)
{
        struct rw_endpoint_cfg c;
        char err[256] = "";

        base(&c);
        assert_int_equal(rw_endpoint_cfg_check(&c, err, sizeof(err)), 0);
        assert_true(c.verify_peer);
        assert_true(c.retry429);
        assert_int_equal(c.max_samples_per_send, 2000);
        c.url = "https://[::1]:8428/prometheus/api/v1/write";
        c.bearer_token_file = token;
        c.headers = (char *[]){"X-Scope-OrgID: tenant-1"};
        c.n_headers = 1;
        assert_int_equal(rw_endpoint_cfg_check(&c, err, sizeof(err)), 0);
}

static void test_bad(void **state)
{
        struct rw_endpoint_cfg c;
        char missing[320];

        snprintf(missing, sizeof(missing), "%s/no-such-token", dir);
        base(&c);
        c.url = NULL;
        refused(&c, "URL: missing");
        c.url = "http://exa mple.com:80/write";
        refused(&c, "cannot be parsed");
        c.url = "http://host:99999999/write";
        refused(&c, "http://host:99999999/write");
        c.url = "ftp://example.com/write";
        refused(&c, "scheme must be http or https");
        c.url = "not a url at all";
        refused(&c, "not a url at all");

        base(&c);
        c.bearer_token_file = missing;
        refused(&c, "BearerTokenFile");
        refused(&c, "no-such-token");
        base(&c);
        c.user = "u";
        refused(&c, "needs a password file");
        c.password_file = missing;
        refused(&c, "BasicAuth password file");
        c.password_file = token;
        c.bearer_token_file = token;
        refused(&c, "only one of them");
        base(&c);
        c.cacert = missing;
        refused(&c, "CACert");

        base(&c);
        c.headers = (char *[]){"Content-Type: text/plain"};
        c.n_headers = 1;
        refused(&c, "cannot be overridden");
        c.headers = (char *[]){"user-agent: me"};
        refused(&c, "cannot be overridden");
        c.headers = (char *[]){"NoColon"};
        refused(&c, "Name: value");
        c.headers = (char *[]){"X-A: b\r\nX-Injected: c"};
        refused(&c, "Name: value");

        base(&c);
        c.max_samples_per_send = 0;
        refused(&c, "MaxSamplesPerSend");
        base(&c);
        c.queue_capacity = 10;
        refused(&c, "QueueCapacity");
        base(&c);
        c.min_backoff = 10;
        c.max_backoff = 1;
        refused(&c, "MaxBackoff");
        base(&c);
        c.timeout = 0;
        refused(&c, "Timeout");
        base(&c);
        c.batch_deadline = -1;
        refused(&c, "BatchDeadline");
        base(&c);
        c.spool_dir = dir;
        c.spool_max_bytes = 1000;
        refused(&c, "SpoolMaxBytes");
        base(&c);
        c.spool_max_age = 1e300;
        refused(&c, "SpoolMaxAge");
        c.spool_max_age = -1;
        refused(&c, "SpoolMaxAge");
}

static void lg(void *ctx, int level, const char *fmt, ...)
{
        (void)ctx;
        (void)level;
        (void)fmt;
}

static char *mkseries(int i)
{
        struct rw_labelset s;
        char v[16];

        snprintf(v, sizeof(v), "%d", i);
        rw_labelset_init(&s);
        rw_labelset_add(&s, "__name__", "m");
        rw_labelset_add(&s, "i", v);
        rw_labelset_finish(&s);
        return rw_series_pack(&s, RW_KIND_GAUGE, NULL);
}

static struct rw_endpoint *unreachable(bool spool)
{
        struct rw_endpoint_cfg c;
        struct rw_endpoint *ep = NULL;
        char err[512] = "", sp[300];

        rw_endpoint_cfg_init(&c);
        c.name = strdup("down");
        /* Port 1 on loopback: connection refused at once. */
        c.url = strdup("http://127.0.0.1:1/api/v1/write");
        c.timeout = 1;
        c.batch_deadline = 0.05;
        c.max_samples_per_send = 4;
        c.queue_capacity = 100;
        snprintf(sp, sizeof(sp), "%s/spool", dir);
        if (spool)
                c.spool_dir = strdup(sp);
        assert_int_equal(rw_endpoint_new(&c, "test/0", lg, NULL, &ep, err, sizeof(err)), 0);
        assert_int_equal(rw_endpoint_start(ep), 0);
        return ep;
}

static void test_shutdown_spools(void **state)
{
        struct rw_endpoint *ep = unreachable(true);
        struct rw_endpoint_stats st;
        struct timespec t0, t1;

        for (int i = 0; i < 10; i++) {
                struct rw_sample s = {mkseries(i), i, 1000 + i};

                assert_int_equal(rw_endpoint_push(ep, &s), 0);
        }
        usleep(300000);
        rw_endpoint_get_stats(ep, &st);
        assert_true(st.samples_retried > 0);
        assert_int_equal(st.samples_sent, 0);
        clock_gettime(CLOCK_MONOTONIC, &t0);
        rw_endpoint_stop(ep);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        /* Within Timeout (1 s), with some slack for a loaded machine. */
        assert_true((t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9 < 2.5);

        /* The next start finds all 10 samples in the spool. */
        ep = unreachable(true);
        rw_endpoint_get_stats(ep, &st);
        assert_true(st.spool_bytes > 0);
        rw_endpoint_stop(ep);
        {
                struct rw_spool *spool;
                struct rw_spool_opts o = {0};
                char sp[300], err[256];
                void *data;
                size_t len;
                uint32_t samples, total = 0;
                int64_t next_ts = 1000;

                snprintf(sp, sizeof(sp), "%s/spool", dir);
                o.dir = sp;
                assert_int_equal(rw_spool_open(&o, &spool, err, sizeof(err)), 0);
                while (rw_spool_peek(spool, 0, &data, &len, &samples) == 0) {
                        Prometheus__WriteRequest *req;
                        size_t raw_len;
                        char *raw;

                        /* In order: every sample's timestamp is the next. */
                        assert_int_equal(snappy_uncompressed_length(data, len, &raw_len),
                                         SNAPPY_OK);
                        raw = malloc(raw_len);
                        assert_int_equal(snappy_uncompress(data, len, raw, &raw_len), SNAPPY_OK);
                        req = prometheus__write_request__unpack(NULL, raw_len, (uint8_t *)raw);
                        assert_non_null(req);
                        assert_int_equal(req->n_timeseries, samples);
                        for (size_t i = 0; i < req->n_timeseries; i++)
                                assert_int_equal(req->timeseries[i]->samples[0]->timestamp,
                                                 next_ts++);
                        prometheus__write_request__free_unpacked(req, NULL);
                        free(raw);
                        total += samples;
                        free(data);
                        rw_spool_consume(spool);
                }
                assert_int_equal(total, 10);
                rw_spool_close(spool);
        }
}

/* A spooled record the receiver never takes still ages out of the spool
 * (SpoolMaxAge) instead of being retried for ever and stalling the endpoint. */
static void test_spool_age_while_down(void **state)
{
        struct rw_endpoint_cfg c;
        struct rw_endpoint *ep = NULL;
        struct rw_endpoint_stats st;
        char err[512] = "", sp[300];

        rw_endpoint_cfg_init(&c);
        c.name = strdup("down");
        c.url = strdup("http://127.0.0.1:1/api/v1/write");
        c.timeout = 1;
        c.batch_deadline = 0.05;
        c.max_samples_per_send = 4;
        c.queue_capacity = 100;
        c.max_backoff = 0.05;
        c.spool_max_age = 0.3;
        c.spool_fsync = false;
        snprintf(sp, sizeof(sp), "%s/spool", dir);
        c.spool_dir = strdup(sp);
        assert_int_equal(rw_endpoint_new(&c, "test/0", lg, NULL, &ep, err, sizeof(err)), 0);
        assert_int_equal(rw_endpoint_start(ep), 0);
        for (int i = 0; i < 8; i++) {
                struct rw_sample s = {mkseries(i), i, 1000 + i};

                assert_int_equal(rw_endpoint_push(ep, &s), 0);
        }
        for (int i = 0; i < 60; i++) {
                usleep(50000);
                rw_endpoint_get_stats(ep, &st);
                if (st.dropped[RW_DROP_SPOOL_AGE] == 8)
                        break;
        }
        assert_int_equal(st.dropped[RW_DROP_SPOOL_AGE], 8);
        assert_int_equal(st.samples_sent, 0);
        assert_int_equal(st.spool_bytes, 0);
        rw_endpoint_stop(ep);
}

/* Two endpoints whose receiver accepts connections and never answers:
 * begun together, their shutdown flushes take one Timeout, not two. */
static void test_stop_endpoints_together(void **state)
{
        struct sockaddr_in a = {.sin_family = AF_INET};
        socklen_t alen = sizeof(a);
        int ls = socket(AF_INET, SOCK_STREAM, 0);
        struct rw_endpoint *ep[2];
        struct timespec t0, t1;
        char url[64];

        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        assert_int_equal(bind(ls, (struct sockaddr *)&a, sizeof(a)), 0);
        assert_int_equal(listen(ls, 16), 0);
        assert_int_equal(getsockname(ls, (struct sockaddr *)&a, &alen), 0);
        snprintf(url, sizeof(url), "http://127.0.0.1:%u/api/v1/write", ntohs(a.sin_port));
        for (int k = 0; k < 2; k++) {
                struct rw_endpoint_cfg c;
                char err[512] = "";

                rw_endpoint_cfg_init(&c);
                c.name = strdup(k ? "b" : "a");
                c.url = strdup(url);
                c.timeout = 1;
                c.batch_deadline = 0.05;
                assert_int_equal(rw_endpoint_new(&c, "test/0", lg, NULL, &ep[k], err, sizeof(err)),
                                 0);
                assert_int_equal(rw_endpoint_start(ep[k]), 0);
        }
        for (int k = 0; k < 2; k++) {
                struct rw_sample s = {mkseries(k), k, 1000};

                rw_endpoint_push(ep[k], &s);
        }
        usleep(200000); /* both requests hang now */
        clock_gettime(CLOCK_MONOTONIC, &t0);
        rw_endpoint_begin_stop(ep[0]);
        rw_endpoint_begin_stop(ep[1]);
        rw_endpoint_stop(ep[0]);
        rw_endpoint_stop(ep[1]);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        assert_true((t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9 < 1.8);
        close(ls);
}

static void test_shutdown_without_spool(void **state)
{
        struct rw_endpoint *ep = unreachable(false);
        struct rw_endpoint_stats st;

        for (int i = 0; i < 10; i++) {
                struct rw_sample s = {mkseries(i), i, 1000 + i};

                rw_endpoint_push(ep, &s);
        }
        /* Queue full: refused and counted, never blocking. */
        for (int i = 0; i < 200; i++) {
                struct rw_sample s = {mkseries(i), i, 2000 + i};

                rw_endpoint_push(ep, &s);
        }
        rw_endpoint_get_stats(ep, &st);
        assert_true(st.dropped[RW_DROP_QUEUE_FULL] > 0);
        assert_true(st.dropped[RW_DROP_QUEUE_FULL] + st.queue_length <= 210);
        rw_endpoint_stop(ep);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_defaults_ok, setup, teardown),
            cmocka_unit_test_setup_teardown(test_bad, setup, teardown),
            cmocka_unit_test_setup_teardown(test_shutdown_spools, setup, teardown),
            cmocka_unit_test_setup_teardown(test_spool_age_while_down, setup, teardown),
            cmocka_unit_test_setup_teardown(test_stop_endpoints_together, setup, teardown),
            cmocka_unit_test_setup_teardown(test_shutdown_without_spool, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
