// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rw_endpoint.c - one endpoint's queue, spool and sender thread (libcurl).
 */
#include "rw_endpoint.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include <curl/curl.h>

#include "rw_http.h"
#include "rw_pace.h"
#include "rw_queue.h"
#include "secret_file.h"

#define BODY_LOG_MAX      1024 /* what Prometheus keeps of an error body */
#define BODY_LOG_EVERY_S  60
#define TOKEN_MAX         8192
#define SPOOL_RETRY_S     10 /* a spool that failed is tried again after */
#define SPOOL_LOG_EVERY_S 60

struct pending {
        uint8_t *data;
        size_t len;
        uint32_t samples;
        bool from_spool;
};

struct rw_endpoint {
        struct rw_endpoint_cfg c;
        char *user_agent;
        char *password;
        rw_log_fn log;
        void *log_ctx;
        struct rw_queue *q;
        struct rw_spool *spool;
        struct rw_encoder *enc;
        CURL *curl;
        pthread_t thread;
        bool started;
        atomic_bool stopping; /* C11: set by the collectd thread, read by the sender */
        double stop_deadline; /* monotonic s, valid when stopping */
        pthread_mutex_t stats_lock;
        struct rw_endpoint_stats st;
        struct pending p;
        /* A batch the spool refused: newer than what the spool holds, so
         * it is sent after that. While it is held nothing else goes to the
         * spool (the order of every series is kept). */
        struct pending held;
        struct rw_sample *batch; /* the sender's batch buffer */
        double backoff;
        struct rw_rng rng;         /* backoff jitter */
        double phase;              /* s within batch_deadline (SendPhase) */
        struct rw_limiter limit;   /* ReplayShare */
        atomic_uint_fast64_t live; /* samples pushed, not yet credited */
        bool retrying;             /* the pending body failed: retries are not gated */
        /* The pending body's last attempt got no answer (a timeout, a
         * connection that broke): the receiver may have stored it. */
        bool unanswered;
        bool stored_said;      /* the log said once that a retry found it stored */
        double last_take;      /* mono s: when the queue was last emptied */
        double spool_retry_at; /* mono s: no spool write or open before */
        bool spool_failing;    /* the failure was logged; success logs it */
        bool retry_after_said; /* a Retry-After pause was logged; a success resets it */
        bool draining;         /* in drain(): the progress callback may call it */
        uint64_t spool_errors_unlogged;
        time_t last_spool_log;
        time_t last_body_log;
        /* answer of the request in flight */
        char body[BODY_LOG_MAX + 1];
        char body_esc[BODY_LOG_MAX * 4 + 1];
        size_t body_len;
        char retry_after[64];
};

#define EPLOG(ep, level, fmt, ...)                                                                 \
        do {                                                                                       \
                if ((ep)->log)                                                                     \
                        (ep)->log((ep)->log_ctx, level,                                            \
                                  "remote_write plugin: endpoint \"%s\": " fmt, (ep)->c.name,      \
                                  ##__VA_ARGS__);                                                  \
        } while (0)

static const char *const reserved_headers[] = {
    "Content-Encoding", "Content-Type",   "X-Prometheus-Remote-Write-Version",
    "User-Agent",       "Content-Length", "Authorization",
};

const char *rw_drop_reason_name(enum rw_drop_reason r)
{
        static const char *const names[RW_DROP_NREASONS] = {
            [RW_DROP_QUEUE_FULL] = "queue_full",
            [RW_DROP_HTTP_4XX] = "http_4xx",
            [RW_DROP_SPOOL_SIZE] = "spool_size",
            [RW_DROP_SPOOL_AGE] = "spool_age",
            [RW_DROP_SPOOL_CORRUPT] = "spool_corrupt",
            [RW_DROP_SHUTDOWN] = "shutdown",
            [RW_DROP_ENCODE] = "encode",
            [RW_DROP_SERIES_LIMIT] = "series_limit",
            [RW_DROP_RATE_LIMIT] = "rate_limit",
            [RW_DROP_LABEL_LIMIT] = "label_limit",
            [RW_DROP_OUT_OF_ORDER] = "out_of_order",
            [RW_DROP_OUT_OF_BOUNDS] = "out_of_bounds",
        };
        return r < RW_DROP_NREASONS ? names[r] : "unknown";
}

void rw_endpoint_cfg_init(struct rw_endpoint_cfg *c)
{
        memset(c, 0, sizeof(*c));
        c->timeout = 10;
        c->verify_peer = true;
        c->max_samples_per_send = 2000;
        c->batch_deadline = 5;
        c->queue_capacity = 100000;
        c->min_backoff = 0.03;
        c->max_backoff = 5;
        c->retry_after_max = RW_RETRY_AFTER_MAX_DEFAULT;
        /* A 429 is a rate limit that clears (Mimir's ingestion and request
         * rates); one that names a series limit is dropped all the same
         * (rw_classify_answer). */
        c->retry429 = true;
        c->spool_max_bytes = 256ull << 20;
        c->spool_max_age = 3600;
        c->spool_fsync = true;
        c->metadata = true;
        c->send_phase = true;
        c->replay_share = RW_REPLAY_SHARE_DEFAULT;
        c->backoff_jitter = true;
}

void rw_endpoint_cfg_free(struct rw_endpoint_cfg *c)
{
        free(c->name);
        free(c->url);
        free(c->user);
        free(c->password_file);
        free(c->bearer_token_file);
        for (size_t i = 0; i < c->n_headers; i++)
                free(c->headers[i]);
        free(c->headers);
        free(c->cacert);
        free(c->client_cert);
        free(c->client_key);
        free(c->spool_dir);
        free(c->host);
        memset(c, 0, sizeof(*c));
}

/* A file option must name a readable regular file: a directory reads as
 * empty and a FIFO blocks. */
static int check_regular(const char *opt, const char *path, char *err, size_t errlen)
{
        struct stat st;

        if (stat(path, &st)) {
                snprintf(err, errlen, "%s \"%s\": %s", opt, path, strerror(errno));
                return -EINVAL;
        }
        if (S_ISDIR(st.st_mode)) {
                snprintf(err, errlen, "%s \"%s\": is a directory, not a file", opt, path);
                return -EINVAL;
        }
        if (!S_ISREG(st.st_mode)) {
                snprintf(err, errlen, "%s \"%s\": not a regular file", opt, path);
                return -EINVAL;
        }
        if (access(path, R_OK)) {
                snprintf(err, errlen, "%s \"%s\": %s", opt, path, strerror(errno));
                return -EINVAL;
        }
        return 0;
}

/* Whether a PEM file holds at least one complete block of the wanted kind
 * ("CERTIFICATE", or "PRIVATE KEY" for any "... PRIVATE KEY"): catches a
 * wrong file at init instead of a TLS error at the first request. */
static int check_pem(const char *opt, const char *path, const char *kind, char *err, size_t errlen)
{
        char line[256];
        bool in = false, found = false;
        FILE *f;
        int rc = check_regular(opt, path, err, errlen);

        if (rc)
                return rc;
        f = fopen(path, "re");
        if (!f) {
                snprintf(err, errlen, "%s \"%s\": %s", opt, path, strerror(errno));
                return -EINVAL;
        }
        while (!found && fgets(line, sizeof(line), f)) {
                size_t n = strcspn(line, "\r\n");

                line[n] = '\0';
                if (!strncmp(line, "-----BEGIN ", 11) && n > 16 && !strcmp(line + n - 5, "-----") &&
                    strstr(line, kind))
                        in = true;
                else if (in && !strncmp(line, "-----END ", 9) && strstr(line, kind))
                        found = true;
        }
        fclose(f);
        if (!found) {
                snprintf(err, errlen, "%s \"%s\": no PEM %s in it", opt, path, kind);
                return -EINVAL;
        }
        return 0;
}

/* Reads a small secret file: the first line, without the line end (see
 * writer/secret_file). A mode too open is said in @warn (when not NULL). */
static int read_secret(const char *path, char **out, char *warn, size_t warnlen, char *err,
                       size_t errlen, const char *opt)
{
        char ignored[8];
        int rc = secret_file_read(path, opt, TOKEN_MAX, out, warn ? warn : ignored,
                                  warn ? warnlen : sizeof(ignored), err, errlen);

        return rc == -ENOMEM ? rc : rc ? -EINVAL : 0;
}

static int check_url(const char *raw, char *err, size_t errlen)
{
        char url[1024]; /* for messages: never the password */
        CURLU *u = curl_url();
        char *scheme = NULL, *host = NULL;
        int rc = -EINVAL;
        CURLUcode uc;

        if (!u)
                return -ENOMEM;
        rw_redact_url(raw, url, sizeof(url));
        uc = curl_url_set(u, CURLUPART_URL, raw, 0);
        if (uc) {
                snprintf(err, errlen, "URL \"%s\": cannot be parsed (%s)", url,
                         curl_url_strerror(uc));
                goto out;
        }
        if (curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) ||
            (strcasecmp(scheme, "http") && strcasecmp(scheme, "https"))) {
                snprintf(err, errlen, "URL \"%s\": scheme must be http or https", url);
                goto out;
        }
        if (curl_url_get(u, CURLUPART_HOST, &host, 0) || !host || !*host) {
                snprintf(err, errlen, "URL \"%s\": no host", url);
                goto out;
        }
        rc = 0;
out:
        curl_free(scheme);
        curl_free(host);
        curl_url_cleanup(u);
        return rc;
}

/* A secret file option must name a readable regular file (a FIFO would
 * block the sender, a directory reads as nothing). */
static int check_readable(const char *opt, const char *path, char *err, size_t errlen)
{
        char warn[8];

        return path && secret_file_check(path, opt, warn, sizeof(warn), err, errlen) ? -EINVAL : 0;
}

int rw_endpoint_cfg_check(const struct rw_endpoint_cfg *c, char *err, size_t errlen)
{
        int rc;

        if (!c->url) {
                snprintf(err, errlen, "URL: missing");
                return -EINVAL;
        }
        rc = check_url(c->url, err, errlen);
        if (rc)
                return rc;
        if (!(c->timeout > 0 && c->timeout <= 3600)) {
                snprintf(err, errlen, "Timeout %g: must be in (0, 3600] seconds", c->timeout);
                return -EINVAL;
        }
        if (c->max_samples_per_send < 1 || c->max_samples_per_send > 1000000) {
                snprintf(err, errlen, "MaxSamplesPerSend %zu: must be 1..1000000",
                         c->max_samples_per_send);
                return -EINVAL;
        }
        if (c->queue_capacity < c->max_samples_per_send || c->queue_capacity > 100000000) {
                snprintf(err, errlen,
                         "QueueCapacity %zu: must be at least MaxSamplesPerSend (%zu) and at "
                         "most 100000000",
                         c->queue_capacity, c->max_samples_per_send);
                return -EINVAL;
        }
        if (!(c->batch_deadline > 0 && c->batch_deadline <= 3600)) {
                snprintf(err, errlen, "BatchDeadline %g: must be in (0, 3600] seconds",
                         c->batch_deadline);
                return -EINVAL;
        }
        if (!(c->min_backoff > 0 && c->max_backoff >= c->min_backoff && c->max_backoff <= 3600)) {
                snprintf(err, errlen,
                         "MinBackoff %g / MaxBackoff %g: need 0 < MinBackoff <= MaxBackoff <= 3600",
                         c->min_backoff, c->max_backoff);
                return -EINVAL;
        }
        if (!(c->retry_after_max >= 1 && c->retry_after_max <= RW_RETRY_AFTER_MAX_LIMIT)) {
                snprintf(err, errlen, "RetryAfterMax %g: must be 1 to %g seconds",
                         c->retry_after_max, RW_RETRY_AFTER_MAX_LIMIT);
                return -EINVAL;
        }
        if (c->user && !c->password_file) {
                snprintf(err, errlen, "BasicAuth \"%s\": needs a password file", c->user);
                return -EINVAL;
        }
        if (c->user && c->bearer_token_file) {
                snprintf(err, errlen, "BasicAuth and BearerTokenFile: only one of them");
                return -EINVAL;
        }
        rc = check_readable("BasicAuth password file", c->password_file, err, errlen);
        rc = rc ?: check_readable("BearerTokenFile", c->bearer_token_file, err, errlen);
        if (!rc && c->cacert)
                rc = check_pem("CACert", c->cacert, "CERTIFICATE", err, errlen);
        if (!rc && c->client_cert)
                rc = check_pem("ClientCert", c->client_cert, "CERTIFICATE", err, errlen);
        if (!rc && c->client_key)
                rc = check_pem("ClientKey", c->client_key, "PRIVATE KEY", err, errlen);
        if (rc)
                return rc;
        for (size_t i = 0; i < c->n_headers; i++) {
                const char *h = c->headers[i], *colon = strchr(h, ':');
                size_t nlen = colon ? (size_t)(colon - h) : 0;

                if (!colon || nlen == 0 || strpbrk(h, "\r\n")) {
                        snprintf(err, errlen, "Header \"%s\": want \"Name: value\"", h);
                        return -EINVAL;
                }
                for (size_t k = 0; k < sizeof(reserved_headers) / sizeof(*reserved_headers); k++)
                        if (strlen(reserved_headers[k]) == nlen &&
                            strncasecmp(h, reserved_headers[k], nlen) == 0) {
                                snprintf(err, errlen,
                                         "Header \"%s\": %.*s is set by the plugin and cannot "
                                         "be overridden",
                                         h, (int)nlen, h);
                                return -EINVAL;
                        }
        }
        if (c->spool_dir && !(c->spool_max_bytes >= (1u << 20))) {
                snprintf(err, errlen, "SpoolMaxBytes %" PRIu64 ": at least 1048576",
                         c->spool_max_bytes);
                return -EINVAL;
        }
        if (!(c->replay_share >= 0 && c->replay_share <= RW_REPLAY_SHARE_MAX)) {
                snprintf(err, errlen, "ReplayShare %g: must be 0 (no limit) to %g", c->replay_share,
                         RW_REPLAY_SHARE_MAX);
                return -EINVAL;
        }
        /* Bounded: the spool keeps it as int64 milliseconds. */
        if (!(c->spool_max_age >= 0 && c->spool_max_age <= 315360000)) {
                snprintf(err, errlen, "SpoolMaxAge %g: must be in [0, 315360000] seconds",
                         c->spool_max_age);
                return -EINVAL;
        }
        return 0;
}

static CURLcode curl_rc = CURLE_OK;

static void curl_once(void)
{
        curl_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

int rw_global_init(void)
{
        static pthread_once_t once = PTHREAD_ONCE_INIT;

        pthread_once(&once, curl_once);
        return curl_rc == CURLE_OK ? 0 : -EIO;
}

static double mono_now(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int64_t wall_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct timespec mono_ts(double t)
{
        struct timespec ts;

        ts.tv_sec = (time_t)t;
        ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
        if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
        }
        return ts;
}

static void stat_add(struct rw_endpoint *ep, uint64_t *field, uint64_t n)
{
        pthread_mutex_lock(&ep->stats_lock);
        *field += n;
        pthread_mutex_unlock(&ep->stats_lock);
}

static void sync_spool_stats(struct rw_endpoint *ep)
{
        struct rw_spool_stats s;

        if (!ep->spool)
                return;
        rw_spool_get_stats(ep->spool, &s);
        pthread_mutex_lock(&ep->stats_lock);
        ep->st.spool_bytes = s.bytes;
        ep->st.spool_disk_bytes = s.disk_bytes;
        ep->st.dropped[RW_DROP_SPOOL_SIZE] = s.dropped_size_samples;
        ep->st.dropped[RW_DROP_SPOOL_AGE] = s.dropped_age_samples;
        ep->st.dropped[RW_DROP_SPOOL_CORRUPT] = s.dropped_corrupt_records;
        pthread_mutex_unlock(&ep->stats_lock);
}

static void spool_log(void *ctx, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void spool_log(void *ctx, int level, const char *fmt, ...)
{
        struct rw_endpoint *ep = ctx;
        char msg[1024];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        EPLOG(ep, level, "%s", msg);
}

/* A spool failure: counted each time, logged the first time and then at
 * most once a minute; the endpoint goes on without the spool (samples wait
 * in memory, bounded by QueueCapacity) and tries it again SPOOL_RETRY_S
 * later. */
static void spool_failed(struct rw_endpoint *ep, const char *what)
{
        time_t now = time(NULL);

        pthread_mutex_lock(&ep->stats_lock);
        ep->st.spool_errors++;
        pthread_mutex_unlock(&ep->stats_lock);
        ep->spool_retry_at = mono_now() + SPOOL_RETRY_S;
        if (!ep->spool_failing) {
                ep->spool_failing = true;
                ep->last_spool_log = now;
                ep->spool_errors_unlogged = 0;
                EPLOG(ep, RW_LOG_ERR,
                      "spool %s: %s; going on without it (samples wait in memory, up to "
                      "QueueCapacity), trying again every %d s",
                      ep->c.spool_dir, what, SPOOL_RETRY_S);
        } else if (now - ep->last_spool_log >= SPOOL_LOG_EVERY_S) {
                EPLOG(ep, RW_LOG_ERR, "spool %s: still failing (%s), %" PRIu64 " errors since",
                      ep->c.spool_dir, what, ep->spool_errors_unlogged + 1);
                ep->last_spool_log = now;
                ep->spool_errors_unlogged = 0;
        } else {
                ep->spool_errors_unlogged++;
        }
}

static void spool_worked(struct rw_endpoint *ep)
{
        if (!ep->spool_failing)
                return;
        ep->spool_failing = false;
        EPLOG(ep, RW_LOG_NOTICE, "spool %s: working again", ep->c.spool_dir);
}

/* Opens the spool; on failure the endpoint runs without one for now. */
static bool spool_try_open(struct rw_endpoint *ep)
{
        struct rw_spool_opts so = {
            .dir = ep->c.spool_dir,
            .max_bytes = ep->c.spool_max_bytes,
            .max_age_ms = (int64_t)(ep->c.spool_max_age * 1000),
            .fsync = ep->c.spool_fsync,
            .log = spool_log,
            .log_ctx = ep,
        };
        char err[512];
        int rc;

        if (ep->spool)
                return true;
        err[0] = '\0';
        rc = rw_spool_open(&so, &ep->spool, err, sizeof(err));
        if (rc) {
                char what[600];

                snprintf(what, sizeof(what), "cannot open it (%s)", err[0] ? err : strerror(-rc));
                spool_failed(ep, what);
                return false;
        }
        sync_spool_stats(ep);
        return true;
}

int rw_endpoint_new(const struct rw_endpoint_cfg *c, const char *user_agent, rw_log_fn log,
                    void *log_ctx, struct rw_endpoint **out, char *err, size_t errlen)
{
        struct rw_endpoint *ep;
        int rc;

        rc = rw_endpoint_cfg_check(c, err, errlen);
        if (rc)
                return rc;
        if (rw_global_init()) {
                snprintf(err, errlen, "curl_global_init failed");
                return -EIO;
        }
        ep = calloc(1, sizeof(*ep));
        if (!ep)
                return -ENOMEM;
        ep->c = *c; /* takes ownership of the strings */
        ep->log = log;
        ep->log_ctx = log_ctx;
        pthread_mutex_init(&ep->stats_lock, NULL);
        ep->user_agent = strdup(user_agent);
        ep->q = rw_queue_new(c->queue_capacity);
        ep->enc = rw_encoder_new(c->metadata);
        ep->batch = calloc(c->max_samples_per_send, sizeof(*ep->batch));
        ep->curl = curl_easy_init();
        ep->backoff = c->min_backoff;
        ep->last_take = mono_now();
        {
                struct timespec ts;

                clock_gettime(CLOCK_REALTIME, &ts);
                rw_rng_seed(
                    &ep->rng,
                    c->jitter_seed
                        ? c->jitter_seed
                        : rw_seed_mix(c->host ? c->host : c->name, (uint64_t)getpid(),
                                      (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec));
        }
        /* The phase hashes the host and the endpoint's name: two
         * endpoints of one host need not send at the same instant. */
        {
                char key[512];

                snprintf(key, sizeof(key), "%s/%s", c->host ? c->host : "", c->name ? c->name : "");
                ep->phase = rw_phase_offset(key, c->batch_deadline);
        }
        rw_limiter_init(&ep->limit, c->replay_share, (double)c->max_samples_per_send, mono_now());
        atomic_init(&ep->live, 0);
        if (!ep->user_agent || !ep->q || !ep->enc || !ep->batch || !ep->curl) {
                snprintf(err, errlen, "out of memory");
                rc = -ENOMEM;
                goto fail;
        }
        if (c->password_file) {
                char warn[512];

                rc = read_secret(c->password_file, &ep->password, warn, sizeof(warn), err, errlen,
                                 "BasicAuth password file");
                if (rc)
                        goto fail;
                if (*warn)
                        EPLOG(ep, RW_LOG_WARNING, "%s", warn);
        }
        if (c->bearer_token_file) {
                char *tok = NULL, warn[512];

                rc = read_secret(c->bearer_token_file, &tok, warn, sizeof(warn), err, errlen,
                                 "BearerTokenFile");
                secret_free(tok);
                if (rc)
                        goto fail;
                if (*warn)
                        EPLOG(ep, RW_LOG_WARNING, "%s", warn);
        }
        if (c->spool_dir) {
                spool_try_open(ep);
                if (ep->spool && !rw_spool_empty(ep->spool))
                        EPLOG(ep, RW_LOG_INFO, "spool %s holds %" PRIu64 " bytes to replay",
                              c->spool_dir, ep->st.spool_bytes);
        }
        *out = ep;
        return 0;
fail:
        /* The caller keeps ownership of the configuration on failure. */
        memset(&ep->c, 0, sizeof(ep->c));
        rw_spool_close(ep->spool);
        rw_queue_free(ep->q);
        rw_encoder_free(ep->enc);
        free(ep->batch);
        if (ep->curl)
                curl_easy_cleanup(ep->curl);
        free(ep->user_agent);
        secret_free(ep->password);
        pthread_mutex_destroy(&ep->stats_lock);
        free(ep);
        return rc;
}

const char *rw_endpoint_name(const struct rw_endpoint *ep)
{
        return ep->c.name;
}

int rw_endpoint_push(struct rw_endpoint *ep, struct rw_sample *s)
{
        if (rw_queue_push(ep->q, s)) {
                free(s->series);
                s->series = NULL;
                stat_add(ep, &ep->st.dropped[RW_DROP_QUEUE_FULL], 1);
                return -ENOSPC;
        }
        atomic_fetch_add_explicit(&ep->live, 1, memory_order_relaxed);
        return 0;
}

void rw_endpoint_flush(struct rw_endpoint *ep)
{
        rw_queue_kick(ep->q);
}

void rw_endpoint_get_stats(struct rw_endpoint *ep, struct rw_endpoint_stats *st)
{
        pthread_mutex_lock(&ep->stats_lock);
        *st = ep->st;
        pthread_mutex_unlock(&ep->stats_lock);
        st->queue_length = rw_queue_len(ep->q);
}

/* ---- HTTP ------------------------------------------------------------- */

static size_t on_body(char *data, size_t size, size_t nmemb, void *ctx)
{
        struct rw_endpoint *ep = ctx;
        size_t n = size * nmemb, room = BODY_LOG_MAX - ep->body_len;
        size_t take = n < room ? n : room;

        memcpy(ep->body + ep->body_len, data, take);
        ep->body_len += take;
        ep->body[ep->body_len] = '\0';
        return n;
}

static size_t on_header(char *data, size_t size, size_t nmemb, void *ctx)
{
        struct rw_endpoint *ep = ctx;
        size_t n = size * nmemb;
        static const char key[] = "retry-after:";

        if (n > sizeof(key) - 1 && strncasecmp(data, key, sizeof(key) - 1) == 0) {
                size_t vlen = n - (sizeof(key) - 1);

                if (vlen >= sizeof(ep->retry_after))
                        vlen = sizeof(ep->retry_after) - 1;
                memcpy(ep->retry_after, data + sizeof(key) - 1, vlen);
                ep->retry_after[vlen] = '\0';
        }
        return n;
}

static bool drain(struct rw_endpoint *ep, bool all);

/* Called by libcurl about once a second (more often while data flows)
 * during a request: a slow receiver must not keep what is queued in memory
 * longer than BatchDeadline. */
static int on_progress(void *ctx, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
        struct rw_endpoint *ep = ctx;

        (void)dltotal;
        (void)dlnow;
        (void)ultotal;
        (void)ulnow;
        if (ep->c.spool_dir)
                drain(ep, false);
        return 0;
}

/* One POST; returns the HTTP status, or 0 when there was no answer. */
static long post(struct rw_endpoint *ep, const uint8_t *body, size_t len, double timeout,
                 char *cerr)
{
        struct curl_slist *h = NULL;
        char line[TOKEN_MAX + 64];
        CURL *c = ep->curl;
        long status = 0, ms = (long)(timeout * 1000);
        CURLcode rc;

        /* curl reads a timeout of 0 as "none": near the shutdown deadline
         * that would let a hung receiver block collectd's exit. */
        if (ms < 1)
                ms = 1;

        h = curl_slist_append(h, "Content-Encoding: snappy");
        h = curl_slist_append(h, "Content-Type: application/x-protobuf");
        h = curl_slist_append(h, "X-Prometheus-Remote-Write-Version: 0.1.0");
        snprintf(line, sizeof(line), "User-Agent: %s", ep->user_agent);
        h = curl_slist_append(h, line);
        /* No "Expect: 100-continue" round trip for bodies over 1 KiB. */
        h = curl_slist_append(h, "Expect:");
        for (size_t i = 0; i < ep->c.n_headers; i++)
                h = curl_slist_append(h, ep->c.headers[i]);
        if (ep->c.bearer_token_file) {
                char *tok = NULL, err[256];

                if (read_secret(ep->c.bearer_token_file, &tok, NULL, 0, err, sizeof(err),
                                "BearerTokenFile")) {
                        snprintf(cerr, CURL_ERROR_SIZE, "%s", err);
                        curl_slist_free_all(h);
                        return 0;
                }
                snprintf(line, sizeof(line), "Authorization: Bearer %s", tok);
                secret_free(tok);
                h = curl_slist_append(h, line);
                explicit_bzero(line, sizeof(line));
        }
        curl_easy_reset(c);
        curl_easy_setopt(c, CURLOPT_URL, ep->c.url);
        curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(c, CURLOPT_POST, 1L);
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, (const char *)body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
        curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, ms);
        curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, ms);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, ep);
        curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
        curl_easy_setopt(c, CURLOPT_HEADERDATA, ep);
        curl_easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
        curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
        curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
        curl_easy_setopt(c, CURLOPT_XFERINFODATA, ep);
        curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, ep->c.verify_peer ? 1L : 0L);
        curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, ep->c.verify_peer ? 2L : 0L);
        if (ep->c.cacert)
                curl_easy_setopt(c, CURLOPT_CAINFO, ep->c.cacert);
        if (ep->c.client_cert)
                curl_easy_setopt(c, CURLOPT_SSLCERT, ep->c.client_cert);
        if (ep->c.client_key)
                curl_easy_setopt(c, CURLOPT_SSLKEY, ep->c.client_key);
        if (ep->c.user) {
                curl_easy_setopt(c, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
                curl_easy_setopt(c, CURLOPT_USERNAME, ep->c.user);
                curl_easy_setopt(c, CURLOPT_PASSWORD, ep->password);
        }
        ep->body_len = 0;
        ep->body[0] = '\0';
        ep->retry_after[0] = '\0';
        cerr[0] = '\0';
        rc = curl_easy_perform(c);
        if (rc == CURLE_OK)
                curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
        else if (!cerr[0])
                snprintf(cerr, CURL_ERROR_SIZE, "%s", curl_easy_strerror(rc));
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, NULL);
        curl_slist_free_all(h);
        return status;
}

/* ---- the sender thread ------------------------------------------------ */

static void pending_clear(struct rw_endpoint *ep)
{
        free(ep->p.data);
        memset(&ep->p, 0, sizeof(ep->p));
}

/* Takes up to max samples off the queue into a finished request body. */
static int encode_batch(struct rw_endpoint *ep, struct rw_sample *batch, struct pending *out)
{
        size_t n = rw_queue_pop(ep->q, batch, ep->c.max_samples_per_send);
        const uint8_t *body;
        size_t len;
        int rc;

        if (!n)
                return -ENOENT;
        rc = rw_encode(ep->enc, batch, n, &body, &len, NULL);
        if (!rc) {
                out->data = malloc(len ? len : 1);
                if (out->data) {
                        memcpy(out->data, body, len);
                        out->len = len;
                        out->samples = (uint32_t)n;
                        out->from_spool = false;
                } else {
                        rc = -ENOMEM;
                }
        }
        for (size_t i = 0; i < n; i++)
                free(batch[i].series);
        if (rc) {
                EPLOG(ep, RW_LOG_ERR, "encoding %zu samples failed: %s", n, strerror(-rc));
                stat_add(ep, &ep->st.dropped[RW_DROP_ENCODE], n);
        }
        return rc;
}

/* Appends a finished body to the spool; false when that failed (counted
 * and logged by spool_failed). */
static bool spool_put(struct rw_endpoint *ep, const struct pending *p)
{
        int rc = rw_spool_append(ep->spool, p->data, p->len, p->samples, wall_ms());

        if (rc) {
                char what[128];

                snprintf(what, sizeof(what), "appending %u samples: %s", p->samples, strerror(-rc));
                spool_failed(ep, what);
                return false;
        }
        spool_worked(ep);
        sync_spool_stats(ep);
        return true;
}

/* Whether new batches may go to the spool now: it is open (or opens now),
 * did not fail in the last SPOOL_RETRY_S, and holds back no refused batch. */
static bool spool_writable(struct rw_endpoint *ep)
{
        if (!ep->c.spool_dir || ep->held.data || mono_now() < ep->spool_retry_at)
                return false;
        return spool_try_open(ep);
}

/* When the next batch is due (monotonic s): BatchDeadline after the last
 * one, or with SendPhase the first instant after it where the wall clock
 * is at the host's phase within BatchDeadline. */
static double batch_due(struct rw_endpoint *ep)
{
        double off;

        if (!ep->c.send_phase)
                return ep->last_take + ep->c.batch_deadline;
        off = (double)wall_ms() / 1000 - mono_now();
        return rw_phase_next(ep->last_take + off, ep->c.batch_deadline, ep->phase) - off;
}

/* Moves queued samples to the spool: full batches at once, and the rest
 * once BatchDeadline passed since the queue was last emptied, or all of it
 * with `all`. This is what bounds a crash's loss to the samples of the last
 * BatchDeadline: with a spool every batch goes to disk before it is sent
 * (write-ahead) and leaves it only once the receiver answered. A batch the
 * spool refuses is held in memory. Returns false when the spool cannot be
 * written now (the samples stay queued). */
static bool drain(struct rw_endpoint *ep, bool all)
{
        double now = mono_now();
        bool due = all || now >= batch_due(ep), ok = true;

        if (ep->draining)
                return true;
        ep->draining = true;
        while (rw_queue_len(ep->q) >= ep->c.max_samples_per_send ||
               (due && rw_queue_len(ep->q) > 0)) {
                struct pending b = {0};

                if (!spool_writable(ep)) {
                        ok = false;
                        break;
                }
                if (encode_batch(ep, ep->batch, &b))
                        continue;
                if (!spool_put(ep, &b)) {
                        ep->held = b; /* takes the body */
                        ok = false;
                        break;
                }
                free(b.data);
        }
        if (due)
                ep->last_take = now;
        ep->draining = false;
        return ok;
}

/* The receiver's answer for a log line: its text is not ours, so control
 * characters are escaped (no forged log lines). */
static const char *body_text(struct rw_endpoint *ep)
{
        size_t n = ep->body_len;

        /* The line end most bodies have is no news. */
        while (n && (ep->body[n - 1] == '\n' || ep->body[n - 1] == '\r'))
                n--;
        if (!n)
                return "(empty body)";
        return rw_log_escape(ep->body, n, ep->body_esc, sizeof(ep->body_esc));
}

/* The drop reason of a refusal. */
static enum rw_drop_reason refusal_drop(enum rw_refusal r)
{
        switch (r) {
        case RW_REFUSAL_SERIES_LIMIT:
                return RW_DROP_SERIES_LIMIT;
        case RW_REFUSAL_RATE_LIMIT:
                return RW_DROP_RATE_LIMIT;
        case RW_REFUSAL_LABEL_LIMIT:
                return RW_DROP_LABEL_LIMIT;
        case RW_REFUSAL_OUT_OF_ORDER:
                return RW_DROP_OUT_OF_ORDER;
        case RW_REFUSAL_OUT_OF_BOUNDS:
                return RW_DROP_OUT_OF_BOUNDS;
        case RW_REFUSAL_OTHER:
        default:
                return RW_DROP_HTTP_4XX;
        }
}

static void log_drop(struct rw_endpoint *ep, long status, enum rw_drop_reason why)
{
        time_t now = time(NULL);

        /* The answer's body says why; at most once a minute. */
        if (now - ep->last_body_log < BODY_LOG_EVERY_S)
                return;
        ep->last_body_log = now;
        EPLOG(ep, RW_LOG_ERR, "HTTP %ld, dropped %u samples (not retryable, reason %s): %s", status,
              ep->p.samples, rw_drop_reason_name(why), body_text(ep));
}

/* Sends the pending body once. Returns the verdict and, for RETRY, sets
 * *retry_after (-1 if none). */
static enum rw_verdict send_pending(struct rw_endpoint *ep, double timeout, double *retry_after)
{
        char cerr[CURL_ERROR_SIZE];
        double t0 = mono_now(), dt;
        long status = post(ep, ep->p.data, ep->p.len, timeout, cerr);
        enum rw_verdict v = rw_classify_answer(status, ep->c.retry429, ep->body, ep->body_len);
        enum rw_drop_reason why = refusal_drop(rw_refusal_reason(status, ep->body, ep->body_len));

        dt = mono_now() - t0;
        *retry_after = -1;
        /* A retry of a body whose last attempt got no answer, refused as
         * out of order or as a duplicate: that is what a receiver says of
         * samples it already has (a single sender keeps each series in
         * order), so the first attempt was stored. Sent, not dropped: a
         * slow receiver must not make samples look lost. */
        if (v == RW_VERDICT_DROP && why == RW_DROP_OUT_OF_ORDER && ep->unanswered) {
                v = RW_VERDICT_SENT;
                if (!ep->stored_said) {
                        ep->stored_said = true;
                        EPLOG(ep, RW_LOG_WARNING,
                              "HTTP %ld to a retry after no answer (%s): the receiver had stored "
                              "the first attempt; %u samples counted as sent (said once)",
                              status, body_text(ep), ep->p.samples);
                }
        }
        ep->unanswered = v == RW_VERDICT_RETRY && status == 0;
        pthread_mutex_lock(&ep->stats_lock);
        ep->st.requests++;
        if (v == RW_VERDICT_SENT) {
                ep->st.samples_sent += ep->p.samples;
                ep->st.last_send_seconds = dt;
                ep->st.send_seconds_total += dt;
                ep->st.last_success_ms = wall_ms();
                ep->retry_after_said = false;
        } else {
                ep->st.requests_failed++;
                if (v == RW_VERDICT_DROP) {
                        ep->st.samples_failed += ep->p.samples;
                        ep->st.dropped[why] += ep->p.samples;
                } else {
                        ep->st.samples_retried += ep->p.samples;
                }
        }
        pthread_mutex_unlock(&ep->stats_lock);
        if (v == RW_VERDICT_DROP) {
                log_drop(ep, status, why);
        } else if (v == RW_VERDICT_RETRY) {
                double ra;

                if (ep->retry_after[0] &&
                    rw_parse_retry_after(ep->retry_after, time(NULL), &ra) == 0) {
                        *retry_after = rw_retry_after_cap(ra, ep->c.retry_after_max);
                        if (ra > 0) {
                                pthread_mutex_lock(&ep->stats_lock);
                                ep->st.retry_after_pauses++;
                                pthread_mutex_unlock(&ep->stats_lock);
                        }
                        /* Once per outage: the counter has the rest. */
                        if (ra > 0 && !ep->retry_after_said) {
                                ep->retry_after_said = true;
                                EPLOG(ep, RW_LOG_WARNING,
                                      "HTTP %ld with Retry-After %.0f s: pausing %g s%s; further "
                                      "pauses until a request succeeds are counted "
                                      "(remote_write_retry_after_pauses_total), not logged",
                                      status, ra, *retry_after,
                                      ra > *retry_after ? " (RetryAfterMax)" : "");
                        }
                }
                /* Logged on the first failure of a run only. */
                if (ep->backoff <= ep->c.min_backoff) {
                        char what[CURL_ERROR_SIZE + BODY_LOG_MAX + 64];

                        char esc[CURL_ERROR_SIZE * 4];

                        if (status)
                                snprintf(what, sizeof(what), "HTTP %ld: %s", status, body_text(ep));
                        else
                                snprintf(what, sizeof(what), "no answer: %s",
                                         rw_log_escape(cerr, strlen(cerr), esc, sizeof(esc)));
                        EPLOG(ep, RW_LOG_WARNING, "%s; retrying %u samples with backoff up to %g s",
                              what, ep->p.samples, ep->c.max_backoff);
                }
        }
        return v;
}

/* Gets the next body to send: the spool first (it is older), then a batch
 * the spool refused, then the queue. Waits up to the batch deadline for a
 * full batch; with a working spool the batch is appended to it and sent
 * from there (false: the caller loops and peeks it). */
static bool next_pending(struct rw_endpoint *ep)
{
        if (ep->spool && !rw_spool_empty(ep->spool)) {
                void *data = NULL;
                size_t len;
                uint32_t samples;
                int rc = rw_spool_peek(ep->spool, wall_ms(), &data, &len, &samples);

                sync_spool_stats(ep);
                if (rc == 0) {
                        ep->p = (struct pending){
                            .data = data, .len = len, .samples = samples, .from_spool = true};
                        return true;
                }
                if (rc != -ENOENT) {
                        struct timespec dl = mono_ts(mono_now() + 1);

                        char what[128];

                        /* Logged and counted like a write error: once,
                         * then at most once a minute. */
                        snprintf(what, sizeof(what), "reading: %s", strerror(-rc));
                        spool_failed(ep, what);
                        /* Not a busy loop on a broken disk. */
                        rw_queue_wait(ep->q, SIZE_MAX, &dl);
                        return false;
                }
        }
        if (ep->held.data) {
                ep->p = ep->held;
                memset(&ep->held, 0, sizeof(ep->held));
                return true;
        }
        if (!atomic_load(&ep->stopping) && rw_queue_len(ep->q) < ep->c.max_samples_per_send) {
                double due = batch_due(ep);
                struct timespec dl;

                if (due > mono_now()) {
                        dl = mono_ts(due);
                        rw_queue_wait(ep->q, ep->c.max_samples_per_send, &dl);
                }
        }
        if (ep->c.spool_dir && spool_writable(ep)) {
                drain(ep, true);
                return false;
        }
        ep->last_take = mono_now();
        return encode_batch(ep, ep->batch, &ep->p) == 0;
}

static void finish_pending(struct rw_endpoint *ep)
{
        if (ep->p.from_spool) {
                rw_spool_consume(ep->spool);
                sync_spool_stats(ep);
        }
        pending_clear(ep);
}

/* At shutdown, whatever could not be sent goes to the spool or is counted
 * as dropped. */
static void park_leftovers(struct rw_endpoint *ep)
{
        uint64_t lost = 0;
        size_t n;

        ep->spool_retry_at = 0; /* one more try for what is left */
        if (ep->p.data && !ep->p.from_spool) {
                if (!spool_writable(ep) || !spool_put(ep, &ep->p))
                        lost += ep->p.samples;
        }
        pending_clear(ep);
        if (ep->held.data) {
                struct pending h = ep->held;

                memset(&ep->held, 0, sizeof(ep->held));
                if (!spool_writable(ep) || !spool_put(ep, &h))
                        lost += h.samples;
                free(h.data);
        }
        if (ep->c.spool_dir)
                drain(ep, true);
        if (ep->held.data) {
                lost += ep->held.samples;
                free(ep->held.data);
                memset(&ep->held, 0, sizeof(ep->held));
        }
        while ((n = rw_queue_pop(ep->q, ep->batch, ep->c.max_samples_per_send)) > 0) {
                lost += n;
                for (size_t i = 0; i < n; i++)
                        free(ep->batch[i].series);
        }
        if (lost) {
                stat_add(ep, &ep->st.dropped[RW_DROP_SHUTDOWN], lost);
                EPLOG(ep, RW_LOG_WARNING, "shutdown: %" PRIu64 " samples could not be sent%s", lost,
                      ep->c.spool_dir ? " or spooled" : " (no SpoolDir)");
        } else if (ep->spool && !rw_spool_empty(ep->spool)) {
                sync_spool_stats(ep);
                EPLOG(ep, RW_LOG_INFO,
                      "shutdown: %" PRIu64 " bytes left in spool %s for the next start",
                      ep->st.spool_bytes, ep->c.spool_dir);
        }
}

/* Waits `seconds` (a backoff, or the replay limiter), cut short by the
 * shutdown deadline; meanwhile the queue goes to the spool every
 * BatchDeadline. */
static void pause_for(struct rw_endpoint *ep, double seconds)
{
        double until = mono_now() + seconds;

        while (mono_now() < until &&
               !(atomic_load(&ep->stopping) && mono_now() >= ep->stop_deadline)) {
                double wake = until;
                size_t want = SIZE_MAX;
                struct timespec dl;

                /* While the endpoint is down the queue goes to the spool
                 * every BatchDeadline. */
                if (ep->c.spool_dir && drain(ep, false)) {
                        double due = batch_due(ep);

                        want = ep->c.max_samples_per_send;
                        if (due < wake)
                                wake = due;
                }
                dl = mono_ts(wake);
                rw_queue_wait(ep->q, want, &dl);
                if (atomic_load(&ep->stopping))
                        break;
        }
}

static void *sender_main(void *arg)
{
        struct rw_endpoint *ep = arg;

        for (;;) {
                double timeout = ep->c.timeout, ra, sleep_s;
                enum rw_verdict v;

                rw_limiter_credit(&ep->limit, atomic_exchange(&ep->live, 0), mono_now());

                if (atomic_load(&ep->stopping)) {
                        double left = ep->stop_deadline - mono_now();

                        if (left <= 0 ||
                            (!ep->p.data && !ep->held.data && rw_queue_len(ep->q) == 0 &&
                             (!ep->spool || rw_spool_empty(ep->spool))))
                                break;
                        timeout = left < timeout ? left : timeout;
                }
                /* ReplayShare: a new request (not the retry of a failed
                 * one, not at shutdown) waits while the budget is spent.
                 * Checked before the next body is taken, so the wait
                 * holds no spool record and reorders nothing. */
                if (!ep->p.data && !ep->retrying && !atomic_load(&ep->stopping)) {
                        double w = rw_limiter_wait(&ep->limit, mono_now());

                        if (w > 0) {
                                pause_for(ep, w);
                                continue;
                        }
                }
                if (!ep->p.data && !next_pending(ep))
                        continue;
                v = send_pending(ep, timeout, &ra);
                ep->retrying = v == RW_VERDICT_RETRY;
                if (v != RW_VERDICT_RETRY) {
                        rw_limiter_charge(&ep->limit, ep->p.samples, mono_now());
                        ep->backoff = ep->c.min_backoff;
                        finish_pending(ep);
                        continue;
                }
                rw_limiter_failed(&ep->limit);
                /* A batch sent from memory (the spool was failing) goes to
                 * disk once it can, if that keeps the order: only into an
                 * empty spool, else it is sent first from memory. */
                if (!ep->p.from_spool && ep->spool && rw_spool_empty(ep->spool) &&
                    spool_writable(ep) && spool_put(ep, &ep->p))
                        pending_clear(ep);
                /* A spooled record is read again for each attempt, so that
                 * SpoolMaxAge and SpoolMaxBytes still apply to it: kept in
                 * memory, one record a receiver keeps answering 5xx would
                 * be retried for ever and stall the endpoint. */
                else if (ep->p.from_spool)
                        pending_clear(ep);
                /* The backoff is a ceiling: each retry waits a random
                 * time below it (full jitter), a Retry-After what was
                 * asked plus up to a tenth, so a fleet that failed at one
                 * instant does not come back at one instant. */
                sleep_s = rw_backoff(&ep->backoff, ra, ep->c.min_backoff, ep->c.max_backoff);
                if (ep->c.backoff_jitter)
                        sleep_s = ra > 0 ? rw_jitter_retry_after(&ep->rng, sleep_s)
                                         : rw_jitter_full(&ep->rng, sleep_s);
                if (atomic_load(&ep->stopping)) {
                        if (mono_now() + sleep_s >= ep->stop_deadline)
                                break;
                }
                pause_for(ep, sleep_s);
        }
        park_leftovers(ep);
        return NULL;
}

int rw_endpoint_start(struct rw_endpoint *ep)
{
        int rc = pthread_create(&ep->thread, NULL, sender_main, ep);

        if (rc)
                return -rc;
        ep->started = true;
        return 0;
}

void rw_endpoint_begin_stop(struct rw_endpoint *ep)
{
        if (!ep || !ep->started || atomic_load(&ep->stopping))
                return;
        ep->stop_deadline = mono_now() + ep->c.timeout;
        atomic_store(&ep->stopping, true);
        rw_queue_kick(ep->q);
}

void rw_endpoint_stop(struct rw_endpoint *ep)
{
        if (!ep)
                return;
        if (ep->started) {
                rw_endpoint_begin_stop(ep);
                pthread_join(ep->thread, NULL);
        }
        rw_spool_close(ep->spool);
        rw_queue_free(ep->q);
        rw_encoder_free(ep->enc);
        curl_easy_cleanup(ep->curl);
        free(ep->p.data);
        free(ep->held.data);
        free(ep->batch);
        free(ep->user_agent);
        secret_free(ep->password);
        rw_endpoint_cfg_free(&ep->c);
        pthread_mutex_destroy(&ep->stats_lock);
        free(ep);
}
