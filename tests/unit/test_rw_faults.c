// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_rw_faults.c - remote_write endpoints under faults:
 *  - a crash (SIGKILL of a child process running the endpoint) while the
 *    receiver is down, or while it hangs on a request, loses nothing that
 *    was pushed more than BatchDeadline (+ 1 s, libcurl's progress tick)
 *    before: all of it is in the spool, in order;
 *  - a spool that cannot be opened leaves the endpoint running without one
 *    (one ERROR, counted) and its samples still reach the receiver;
 *  - what a receiver answers reaches the log with control characters
 *    escaped; a URL's password never reaches an error message; a
 *    directory as BearerTokenFile and a non-PEM CACert are refused by name;
 *  - a 503 with "Retry-After: 100000" pauses the endpoint RetryAfterMax, not
 *    the receiver's day: logged once, counted;
 *  - a retry after a request that got no answer in time, refused as out of
 *    order (the receiver had stored the first attempt), is sent, not
 *    dropped; the same refusal of a first attempt is a drop.
 */
#define _GNU_SOURCE /* strcasestr */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "rw_endpoint.h"
#include "rw_series.h"

static char dir[256];

/* ---- captured log ------------------------------------------------------ */

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char logbuf[65536];
static size_t loglen;
static int log_errors;

static void lg(void *ctx, int level, const char *fmt, ...)
{
        char line[4096];
        va_list ap;
        int n;

        (void)ctx;
        va_start(ap, fmt);
        n = vsnprintf(line, sizeof(line), fmt, ap);
        va_end(ap);
        if (n < 0)
                return;
        pthread_mutex_lock(&log_lock);
        if (level <= RW_LOG_ERR)
                log_errors++;
        /* One record per call, ended by a 0x1e so that a newline inside a
         * message shows up as what it is. */
        loglen += (size_t)snprintf(logbuf + loglen, sizeof(logbuf) - loglen, "%s\x1e", line);
        if (loglen >= sizeof(logbuf))
                loglen = sizeof(logbuf) - 1;
        pthread_mutex_unlock(&log_lock);
}

static void log_reset(void)
{
        pthread_mutex_lock(&log_lock);
        loglen = 0;
        logbuf[0] = '\0';
        log_errors = 0;
        pthread_mutex_unlock(&log_lock);
}

/* ---- a tiny HTTP receiver ---------------------------------------------- */

struct server {
        int ls;
        int port;
        int status;
        const char *body;
        /* the first `first_count` requests get `first_status` and these
         * header lines instead */
        int first_status, first_count;
        const char *first_headers;
        int first_delay_ms; /* the first requests are answered this late */
        volatile int requests;
        volatile bool stop;
        pthread_t th;
};

static void *server_main(void *arg)
{
        struct server *s = arg;

        while (!s->stop) {
                char buf[65536], resp[2048];
                size_t got = 0, need = 0;
                int fd = accept(s->ls, NULL, NULL), n;
                char *hdr_end = NULL;

                if (fd < 0)
                        continue;
                for (;;) {
                        ssize_t r = read(fd, buf + got, sizeof(buf) - 1 - got);

                        if (r <= 0)
                                break;
                        got += (size_t)r;
                        buf[got] = '\0';
                        if (!hdr_end && (hdr_end = strstr(buf, "\r\n\r\n"))) {
                                char *cl = strcasestr(buf, "Content-Length:");

                                need = (size_t)(hdr_end + 4 - buf) +
                                       (cl ? strtoul(cl + 15, NULL, 10) : 0);
                        }
                        if (hdr_end && got >= need)
                                break;
                }
                bool first = __atomic_load_n(&s->requests, __ATOMIC_SEQ_CST) < s->first_count;

                if (first && s->first_delay_ms)
                        usleep((useconds_t)s->first_delay_ms * 1000);

                n = snprintf(
                    resp, sizeof(resp),
                    "HTTP/1.1 %d X\r\n%sContent-Length: %zu\r\nConnection: close\r\n\r\n%s",
                    first ? s->first_status : s->status,
                    first && s->first_headers ? s->first_headers : "", strlen(s->body), s->body);
                if (write(fd, resp, (size_t)n) != n)
                        fprintf(stderr, "# test server: short write\n");
                close(fd);
                __atomic_add_fetch(&s->requests, 1, __ATOMIC_SEQ_CST);
        }
        return NULL;
}

/* A listening socket; with serve, a thread answers each request. */
static void server_start(struct server *s, bool serve)
{
        struct sockaddr_in a = {.sin_family = AF_INET};
        socklen_t alen = sizeof(a);
        struct timeval tv = {.tv_sec = 0, .tv_usec = 100000};

        s->ls = socket(AF_INET, SOCK_STREAM, 0);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        assert_int_equal(bind(s->ls, (struct sockaddr *)&a, sizeof(a)), 0);
        assert_int_equal(listen(s->ls, 64), 0);
        assert_int_equal(getsockname(s->ls, (struct sockaddr *)&a, &alen), 0);
        s->port = ntohs(a.sin_port);
        /* accept() wakes up to see stop */
        setsockopt(s->ls, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        if (serve)
                assert_int_equal(pthread_create(&s->th, NULL, server_main, s), 0);
}

static void server_stop(struct server *s, bool serve)
{
        s->stop = true;
        if (serve)
                pthread_join(s->th, NULL);
        close(s->ls);
}

/* ---- helpers ------------------------------------------------------------ */

static int setup(void **state)
{
        (void)state;
        snprintf(dir, sizeof(dir), "/tmp/test_rw_faults.XXXXXX");
        return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
        char cmd[300];

        (void)state;
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        return system(cmd);
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

static void cfg_for(struct rw_endpoint_cfg *c, int port, const char *spool)
{
        char url[128];

        rw_endpoint_cfg_init(c);
        c->name = strdup("e");
        snprintf(url, sizeof(url), "http://127.0.0.1:%d/api/v1/write", port);
        c->url = strdup(url);
        c->batch_deadline = 0.3;
        c->max_samples_per_send = 1000;
        c->queue_capacity = 10000;
        c->max_backoff = 0.2;
        c->spool_dir = spool ? strdup(spool) : NULL;
}

/* The samples in a spool directory, checking that every record is whole. */
static uint64_t spooled_samples(const char *path)
{
        struct rw_spool_opts o = {.dir = path};
        struct rw_spool *sp;
        char err[256];
        void *data;
        size_t len;
        uint32_t samples;
        uint64_t total = 0;

        assert_int_equal(rw_spool_open(&o, &sp, err, sizeof(err)), 0);
        while (rw_spool_peek(sp, 0, &data, &len, &samples) == 0) {
                total += samples;
                free(data);
                assert_int_equal(rw_spool_consume(sp), 0);
        }
        rw_spool_close(sp);
        return total;
}

/* In a child: an endpoint with a spool pushes n samples, 50 ms apart (the
 * first one alone, then the rest), says so on the pipe and waits for its
 * SIGKILL. The parent waits `grace` seconds after the last push, kills it
 * and counts what the spool holds. */
static uint64_t crash_after_pushes(int port, const char *spool, double timeout, int n, double grace)
{
        int pfd[2];
        pid_t pid;
        char c;
        uint64_t got;

        assert_int_equal(pipe(pfd), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                struct rw_endpoint_cfg cfg;
                struct rw_endpoint *ep;
                char err[512];

                close(pfd[0]);
                cfg_for(&cfg, port, spool);
                cfg.timeout = timeout;
                if (rw_endpoint_new(&cfg, "test/0", NULL, NULL, &ep, err, sizeof(err)) ||
                    rw_endpoint_start(ep))
                        _exit(1);
                for (int i = 0; i < n; i++) {
                        struct rw_sample s = {mkseries(i), i, 1000 + i};

                        rw_endpoint_push(ep, &s);
                        usleep(i == 0 ? 400000 : 50000);
                }
                if (write(pfd[1], "x", 1) != 1)
                        _exit(1);
                for (;;)
                        pause();
        }
        close(pfd[1]);
        assert_int_equal(read(pfd[0], &c, 1), 1);
        close(pfd[0]);
        usleep((useconds_t)(grace * 1e6));
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        got = spooled_samples(spool);
        return got;
}

/* ---- tests -------------------------------------------------------------- */

/* Receiver down (connection refused): the first batch fails and is
 * spooled; every later sample reaches the spool within BatchDeadline, not
 * only full batches (MaxSamplesPerSend 1000 is never reached here). */
static void test_crash_during_outage(void **state)
{
        char spool[300];

        (void)state;
        snprintf(spool, sizeof(spool), "%s/outage", dir);
        /* 0.3 s BatchDeadline, 1.2 s after the last push */
        assert_int_equal(crash_after_pushes(1, spool, 1, 40, 1.2), 40);
}

/* The receiver accepts the connection and never answers (a hung or very
 * slow receiver, as in a slow replay): the batch in flight is on disk
 * already, and what arrives during the request goes to the spool every
 * BatchDeadline although the sender is blocked in that request. */
static void test_crash_during_hung_request(void **state)
{
        struct server s = {0};
        char spool[300];

        (void)state;
        server_start(&s, false);
        snprintf(spool, sizeof(spool), "%s/hung", dir);
        assert_int_equal(crash_after_pushes(s.port, spool, 30, 40, 1.8), 40);
        server_stop(&s, false);
}

/* A spool directory that cannot be created (its parent is a file): the
 * endpoint runs without a spool, says so once, counts it, and delivers. */
static void test_spool_cannot_open(void **state)
{
        struct server s = {.status = 204, .body = ""};
        struct rw_endpoint_cfg cfg;
        struct rw_endpoint *ep = NULL;
        struct rw_endpoint_stats st;
        char file[300], spool[400], err[512] = "";
        FILE *f;

        (void)state;
        snprintf(file, sizeof(file), "%s/a-file", dir);
        f = fopen(file, "w");
        assert_non_null(f);
        fclose(f);
        snprintf(spool, sizeof(spool), "%s/spool", file);
        server_start(&s, true);
        log_reset();
        cfg_for(&cfg, s.port, spool);
        cfg.batch_deadline = 0.05;
        assert_int_equal(rw_endpoint_new(&cfg, "test/0", lg, NULL, &ep, err, sizeof(err)), 0);
        assert_int_equal(rw_endpoint_start(ep), 0);
        for (int i = 0; i < 5; i++) {
                struct rw_sample smp = {mkseries(i), i, 1000 + i};

                assert_int_equal(rw_endpoint_push(ep, &smp), 0);
        }
        for (int i = 0; i < 100; i++) {
                rw_endpoint_get_stats(ep, &st);
                if (st.samples_sent == 5)
                        break;
                usleep(20000);
        }
        assert_int_equal(st.samples_sent, 5);
        assert_true(st.spool_errors >= 1);
        assert_int_equal(log_errors, 1);
        assert_non_null(strstr(logbuf, spool));
        rw_endpoint_stop(ep);
        server_stop(&s, true);
}

/* A receiver's error body with a newline, a carriage return and an ESC
 * sequence: the log gets one record, escaped. */
static void test_body_escaped(void **state)
{
        struct server s = {.status = 400, .body = "bad\n[error] forged line\r\x1b[31mred\x7f"};
        struct rw_endpoint_cfg cfg;
        struct rw_endpoint *ep = NULL;
        struct rw_endpoint_stats st;
        struct rw_sample smp = {mkseries(1), 1, 1000};
        char err[512] = "";

        (void)state;
        server_start(&s, true);
        log_reset();
        cfg_for(&cfg, s.port, NULL);
        cfg.batch_deadline = 0.05;
        assert_int_equal(rw_endpoint_new(&cfg, "test/0", lg, NULL, &ep, err, sizeof(err)), 0);
        assert_int_equal(rw_endpoint_start(ep), 0);
        assert_int_equal(rw_endpoint_push(ep, &smp), 0);
        for (int i = 0; i < 100; i++) {
                rw_endpoint_get_stats(ep, &st);
                if (st.samples_failed == 1)
                        break;
                usleep(20000);
        }
        rw_endpoint_stop(ep);
        server_stop(&s, true);
        assert_int_equal(st.samples_failed, 1);
        pthread_mutex_lock(&log_lock);
        assert_non_null(strstr(logbuf, "bad\\n[error] forged line\\r\\x1b[31mred\\x7f"));
        assert_null(strchr(logbuf, '\n'));
        assert_null(strchr(logbuf, '\r'));
        assert_null(strchr(logbuf, '\x1b'));
        pthread_mutex_unlock(&log_lock);
}

/* A receiver that asks for a day's pause: the endpoint waits RetryAfterMax
 * (1 s here), says so once with both numbers, counts it, and sends. */
static void test_retry_after_capped(void **state)
{
        struct server s = {.status = 204,
                           .body = "",
                           .first_status = 503,
                           .first_count = 2,
                           .first_headers = "Retry-After: 100000\r\n"};
        struct rw_endpoint_cfg cfg;
        struct rw_endpoint *ep = NULL;
        struct rw_endpoint_stats st;
        struct rw_sample smp = {mkseries(1), 1, 1000};
        char err[512] = "";
        struct timespec t0, t1;
        double took;
        int said = 0;

        (void)state;
        server_start(&s, true);
        log_reset();
        cfg_for(&cfg, s.port, NULL);
        cfg.batch_deadline = 0.05;
        cfg.retry_after_max = 1;
        assert_int_equal(rw_endpoint_new(&cfg, "test/0", lg, NULL, &ep, err, sizeof(err)), 0);
        assert_int_equal(rw_endpoint_start(ep), 0);
        clock_gettime(CLOCK_MONOTONIC, &t0);
        assert_int_equal(rw_endpoint_push(ep, &smp), 0);
        for (int i = 0; i < 500; i++) {
                rw_endpoint_get_stats(ep, &st);
                if (st.samples_sent == 1)
                        break;
                usleep(20000);
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        rw_endpoint_stop(ep);
        server_stop(&s, true);
        took = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
        assert_int_equal(st.samples_sent, 1);
        /* two pauses of 1 s each, not 100000 s (nor the former 300 s cap) */
        if (!(took >= 1.9 && took < 6))
                fail_msg("sent after %.2f s, want two pauses of 1 s", took);
        assert_int_equal(st.retry_after_pauses, 2);
        assert_int_equal(s.requests, 3);
        pthread_mutex_lock(&log_lock);
        for (const char *p = logbuf; (p = strstr(p, "Retry-After")); p++)
                said++;
        assert_non_null(strstr(logbuf, "HTTP 503 with Retry-After 100000 s: pausing 1 s "
                                       "(RetryAfterMax)"));
        pthread_mutex_unlock(&log_lock);
        assert_int_equal(said, 1);

        /* out of range: refused by name */
        {
                struct rw_endpoint_cfg c;

                cfg_for(&c, 1, NULL);
                c.retry_after_max = 0;
                assert_int_equal(rw_endpoint_cfg_check(&c, err, sizeof(err)), -EINVAL);
                assert_non_null(strstr(err, "RetryAfterMax 0: must be 1 to 3600 seconds"));
                c.retry_after_max = 3601;
                assert_int_equal(rw_endpoint_cfg_check(&c, err, sizeof(err)), -EINVAL);
                assert_non_null(strstr(err, "RetryAfterMax 3601"));
                rw_endpoint_cfg_free(&c);
        }
}

/* The receiver stores the first attempt but answers after the endpoint's
 * Timeout; the retry is refused as Prometheus refuses samples it has. */
static void test_retry_found_stored(void **state)
{
        struct server s = {.status = 400,
                           .body = "out of order sample",
                           .first_status = 204,
                           .first_count = 1,
                           .first_delay_ms = 1500};
        struct rw_endpoint_cfg cfg;
        struct rw_endpoint *ep = NULL;
        struct rw_endpoint_stats st;
        struct rw_sample smp = {mkseries(1), 1, 1000};
        char err[512] = "";

        (void)state;
        server_start(&s, true);
        log_reset();
        cfg_for(&cfg, s.port, NULL);
        cfg.batch_deadline = 0.05;
        cfg.timeout = 0.5;
        assert_int_equal(rw_endpoint_new(&cfg, "test/0", lg, NULL, &ep, err, sizeof(err)), 0);
        assert_int_equal(rw_endpoint_start(ep), 0);
        assert_int_equal(rw_endpoint_push(ep, &smp), 0);
        for (int i = 0; i < 250; i++) {
                rw_endpoint_get_stats(ep, &st);
                if (st.samples_sent + st.samples_failed == 1)
                        break;
                usleep(20000);
        }
        rw_endpoint_stop(ep);
        server_stop(&s, true);
        assert_int_equal(st.samples_sent, 1);
        assert_int_equal(st.samples_failed, 0);
        assert_int_equal(st.dropped[RW_DROP_OUT_OF_ORDER], 0);
        assert_true(st.samples_retried >= 1);
        pthread_mutex_lock(&log_lock);
        assert_int_equal(log_errors, 0);
        assert_non_null(strstr(logbuf, "the receiver had stored the first attempt"));
        pthread_mutex_unlock(&log_lock);
}

/* The same refusal of a first attempt: a drop, counted with its reason. */
static void test_out_of_order_dropped(void **state)
{
        struct server s = {.status = 400, .body = "out of order sample"};
        struct rw_endpoint_cfg cfg;
        struct rw_endpoint *ep = NULL;
        struct rw_endpoint_stats st;
        struct rw_sample smp = {mkseries(1), 1, 1000};
        char err[512] = "";

        (void)state;
        server_start(&s, true);
        log_reset();
        cfg_for(&cfg, s.port, NULL);
        cfg.batch_deadline = 0.05;
        assert_int_equal(rw_endpoint_new(&cfg, "test/0", lg, NULL, &ep, err, sizeof(err)), 0);
        assert_int_equal(rw_endpoint_start(ep), 0);
        assert_int_equal(rw_endpoint_push(ep, &smp), 0);
        for (int i = 0; i < 100; i++) {
                rw_endpoint_get_stats(ep, &st);
                if (st.samples_failed == 1)
                        break;
                usleep(20000);
        }
        rw_endpoint_stop(ep);
        server_stop(&s, true);
        assert_int_equal(st.samples_sent, 0);
        assert_int_equal(st.dropped[RW_DROP_OUT_OF_ORDER], 1);
}

static void refused(const struct rw_endpoint_cfg *c, const char *want, const char *never)
{
        char err[512] = "";

        assert_int_equal(rw_endpoint_cfg_check(c, err, sizeof(err)), -EINVAL);
        if (!strstr(err, want))
                fail_msg("\"%s\" does not contain \"%s\"", err, want);
        if (never && strstr(err, never))
                fail_msg("\"%s\" contains \"%s\"", err, never);
}

static void test_config_files_and_secrets(void **state)
{
        struct rw_endpoint_cfg c;
        char pem[300];
        FILE *f;

        (void)state;
        rw_endpoint_cfg_init(&c);
        c.url = "https://alice:s3cr3t@exa mple.com/api/v1/write";
        refused(&c, "https://***@exa mple.com/api/v1/write", "s3cr3t");
        c.url = "ftp://alice:s3cr3t@example.com/write";
        refused(&c, "ftp://***@example.com/write", "s3cr3t");

        c.url = "http://127.0.0.1:9/api/v1/write";
        c.bearer_token_file = dir;
        refused(&c, "is a directory", NULL);
        c.bearer_token_file = NULL;
        c.cacert = "/etc/passwd";
        refused(&c, "CACert \"/etc/passwd\": no PEM CERTIFICATE", NULL);
        c.cacert = dir;
        refused(&c, "CACert", NULL);
        /* A certificate-shaped file passes the check (curl parses it). */
        snprintf(pem, sizeof(pem), "%s/ca.pem", dir);
        f = fopen(pem, "w");
        assert_non_null(f);
        fputs("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n", f);
        fclose(f);
        c.cacert = pem;
        {
                char err[512] = "";

                assert_int_equal(rw_endpoint_cfg_check(&c, err, sizeof(err)), 0);
        }
        c.client_key = pem;
        refused(&c, "ClientKey", NULL);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_crash_during_outage),
            cmocka_unit_test(test_crash_during_hung_request),
            cmocka_unit_test(test_spool_cannot_open),
            cmocka_unit_test(test_body_escaped),
            cmocka_unit_test(test_retry_after_capped),
            cmocka_unit_test(test_retry_found_stored),
            cmocka_unit_test(test_out_of_order_dropped),
            cmocka_unit_test(test_config_files_and_secrets),
        };

        signal(SIGPIPE, SIG_IGN);
        return cmocka_run_group_tests(tests, setup, teardown);
}
