// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rw_endpoint.c - one endpoint's queue, spool and sender thread (libcurl).
 */
#include "rw_endpoint.h"

#include <errno.h>
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

#include <curl/curl.h>

#include "rw_http.h"
#include "rw_queue.h"

#define BODY_LOG_MAX     1024 /* what Prometheus keeps of an error body */
#define BODY_LOG_EVERY_S 60
#define TOKEN_MAX        8192

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
        volatile bool stopping;
        double stop_deadline; /* monotonic s, valid when stopping */
        pthread_mutex_t stats_lock;
        struct rw_endpoint_stats st;
        struct pending p;
        double backoff;
        uint64_t spool_refused; /* samples the spool could not take */
        time_t last_body_log;
        /* answer of the request in flight */
        char body[BODY_LOG_MAX + 1];
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
        c->spool_max_bytes = 256ull << 20;
        c->spool_max_age = 3600;
        c->spool_fsync = true;
        c->metadata = true;
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
        memset(c, 0, sizeof(*c));
}

/* Reads a small secret file: the first line, without the line end. */
static int read_secret(const char *path, char **out, char *err, size_t errlen, const char *opt)
{
        char buf[TOKEN_MAX + 1];
        FILE *f = fopen(path, "re");
        size_t n;

        if (!f) {
                int e = errno;

                snprintf(err, errlen, "%s \"%s\": %s", opt, path, strerror(e));
                return -EINVAL;
        }
        n = fread(buf, 1, TOKEN_MAX, f);
        fclose(f);
        buf[n] = '\0';
        buf[strcspn(buf, "\r\n")] = '\0';
        if (!buf[0]) {
                snprintf(err, errlen, "%s \"%s\": empty", opt, path);
                return -EINVAL;
        }
        *out = strdup(buf);
        return *out ? 0 : -ENOMEM;
}

static int check_url(const char *url, char *err, size_t errlen)
{
        CURLU *u = curl_url();
        char *scheme = NULL, *host = NULL;
        int rc = -EINVAL;
        CURLUcode uc;

        if (!u)
                return -ENOMEM;
        uc = curl_url_set(u, CURLUPART_URL, url, 0);
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

static int check_readable(const char *opt, const char *path, char *err, size_t errlen)
{
        if (path && access(path, R_OK)) {
                snprintf(err, errlen, "%s \"%s\": %s", opt, path, strerror(errno));
                return -EINVAL;
        }
        return 0;
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
        rc = rc ?: check_readable("CACert", c->cacert, err, errlen);
        rc = rc ?: check_readable("ClientCert", c->client_cert, err, errlen);
        rc = rc ?: check_readable("ClientKey", c->client_key, err, errlen);
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
        /* Set, not added: keep what the spool refused (spool_queue) in. */
        ep->st.dropped[RW_DROP_SPOOL_SIZE] = s.dropped_size_samples + ep->spool_refused;
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
        ep->curl = curl_easy_init();
        ep->backoff = c->min_backoff;
        if (!ep->user_agent || !ep->q || !ep->enc || !ep->curl) {
                snprintf(err, errlen, "out of memory");
                rc = -ENOMEM;
                goto fail;
        }
        if (c->password_file) {
                rc = read_secret(c->password_file, &ep->password, err, errlen,
                                 "BasicAuth password file");
                if (rc)
                        goto fail;
        }
        if (c->bearer_token_file) {
                char *tok = NULL;

                rc = read_secret(c->bearer_token_file, &tok, err, errlen, "BearerTokenFile");
                free(tok);
                if (rc)
                        goto fail;
        }
        if (c->spool_dir) {
                struct rw_spool_opts so = {
                    .dir = c->spool_dir,
                    .max_bytes = c->spool_max_bytes,
                    .max_age_ms = (int64_t)(c->spool_max_age * 1000),
                    .fsync = c->spool_fsync,
                    .log = spool_log,
                    .log_ctx = ep,
                };

                rc = rw_spool_open(&so, &ep->spool, err, errlen);
                if (rc)
                        goto fail;
                sync_spool_stats(ep);
                if (!rw_spool_empty(ep->spool))
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
        if (ep->curl)
                curl_easy_cleanup(ep->curl);
        free(ep->user_agent);
        free(ep->password);
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

                if (read_secret(ep->c.bearer_token_file, &tok, err, sizeof(err),
                                "BearerTokenFile")) {
                        snprintf(cerr, CURL_ERROR_SIZE, "%s", err);
                        curl_slist_free_all(h);
                        return 0;
                }
                snprintf(line, sizeof(line), "Authorization: Bearer %s", tok);
                free(tok);
                h = curl_slist_append(h, line);
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

/* Puts a finished body into the spool; false when that failed (the caller
 * keeps it in memory then). */
static bool spool_put(struct rw_endpoint *ep, const struct pending *p)
{
        int rc = rw_spool_append(ep->spool, p->data, p->len, p->samples, wall_ms());

        if (rc) {
                EPLOG(ep, RW_LOG_ERR, "spool %s: appending %u samples failed: %s", ep->c.spool_dir,
                      p->samples, strerror(-rc));
                return false;
        }
        sync_spool_stats(ep);
        return true;
}

/* While waiting to retry, full batches go to the spool, so the memory queue
 * never has to refuse samples during an outage. */
static void spool_queue(struct rw_endpoint *ep, struct rw_sample *batch, bool all)
{
        while (ep->spool && (rw_queue_len(ep->q) >= ep->c.max_samples_per_send ||
                             (all && rw_queue_len(ep->q) > 0))) {
                struct pending b = {0};

                if (encode_batch(ep, batch, &b))
                        continue;
                if (!spool_put(ep, &b)) {
                        if (all) {
                                stat_add(ep, &ep->st.dropped[RW_DROP_SHUTDOWN], b.samples);
                        } else {
                                ep->spool_refused += b.samples;
                                sync_spool_stats(ep);
                        }
                }
                free(b.data);
        }
}

static void log_drop(struct rw_endpoint *ep, long status)
{
        time_t now = time(NULL);

        /* The answer's body says why; at most once a minute. */
        if (now - ep->last_body_log < BODY_LOG_EVERY_S)
                return;
        ep->last_body_log = now;
        EPLOG(ep, RW_LOG_ERR, "HTTP %ld, dropped %u samples (not retryable): %s", status,
              ep->p.samples, ep->body_len ? ep->body : "(empty body)");
}

/* Sends the pending body once. Returns the verdict and, for RETRY, sets
 * *retry_after (-1 if none). */
static enum rw_verdict send_pending(struct rw_endpoint *ep, double timeout, double *retry_after)
{
        char cerr[CURL_ERROR_SIZE];
        double t0 = mono_now(), dt;
        long status = post(ep, ep->p.data, ep->p.len, timeout, cerr);
        enum rw_verdict v = rw_classify(status, ep->c.retry429);

        dt = mono_now() - t0;
        *retry_after = -1;
        pthread_mutex_lock(&ep->stats_lock);
        ep->st.requests++;
        if (v == RW_VERDICT_SENT) {
                ep->st.samples_sent += ep->p.samples;
                ep->st.last_send_seconds = dt;
                ep->st.send_seconds_total += dt;
                ep->st.last_success_ms = wall_ms();
        } else {
                ep->st.requests_failed++;
                if (v == RW_VERDICT_DROP) {
                        ep->st.samples_failed += ep->p.samples;
                        ep->st.dropped[RW_DROP_HTTP_4XX] += ep->p.samples;
                } else {
                        ep->st.samples_retried += ep->p.samples;
                }
        }
        pthread_mutex_unlock(&ep->stats_lock);
        if (v == RW_VERDICT_DROP) {
                log_drop(ep, status);
        } else if (v == RW_VERDICT_RETRY) {
                double ra;

                if (ep->retry_after[0] &&
                    rw_parse_retry_after(ep->retry_after, time(NULL), &ra) == 0)
                        *retry_after = ra;
                /* Logged on the first failure of a run only. */
                if (ep->backoff <= ep->c.min_backoff) {
                        char what[CURL_ERROR_SIZE + BODY_LOG_MAX + 64];

                        if (status)
                                snprintf(what, sizeof(what), "HTTP %ld: %s", status,
                                         ep->body_len ? ep->body : "(empty body)");
                        else
                                snprintf(what, sizeof(what), "no answer: %s", cerr);
                        EPLOG(ep, RW_LOG_WARNING, "%s; retrying %u samples with backoff up to %g s",
                              what, ep->p.samples, ep->c.max_backoff);
                }
        }
        return v;
}

/* Gets the next body to send: the spool first (it is older), then the
 * queue. Waits up to the batch deadline for a full batch. */
static bool next_pending(struct rw_endpoint *ep, struct rw_sample *batch)
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

                        EPLOG(ep, RW_LOG_ERR, "spool %s: reading failed: %s; trying again in 1 s",
                              ep->c.spool_dir, strerror(-rc));
                        /* Not a busy loop on a broken disk. */
                        rw_queue_wait(ep->q, SIZE_MAX, &dl);
                        return false;
                }
        }
        if (!ep->stopping && rw_queue_len(ep->q) < ep->c.max_samples_per_send) {
                struct timespec dl = mono_ts(mono_now() + ep->c.batch_deadline);

                rw_queue_wait(ep->q, ep->c.max_samples_per_send, &dl);
        }
        return encode_batch(ep, batch, &ep->p) == 0;
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
static void park_leftovers(struct rw_endpoint *ep, struct rw_sample *batch)
{
        uint64_t lost = 0;

        if (ep->p.data && !ep->p.from_spool) {
                if (!ep->spool || !spool_put(ep, &ep->p))
                        lost += ep->p.samples;
        }
        pending_clear(ep);
        if (ep->spool) {
                spool_queue(ep, batch, true);
        } else {
                size_t n;

                while ((n = rw_queue_pop(ep->q, batch, ep->c.max_samples_per_send)) > 0) {
                        lost += n;
                        for (size_t i = 0; i < n; i++)
                                free(batch[i].series);
                }
        }
        if (lost) {
                stat_add(ep, &ep->st.dropped[RW_DROP_SHUTDOWN], lost);
                EPLOG(ep, RW_LOG_WARNING, "shutdown: %" PRIu64 " samples could not be sent%s", lost,
                      ep->spool ? " or spooled" : " (no SpoolDir)");
        } else if (ep->spool && !rw_spool_empty(ep->spool)) {
                sync_spool_stats(ep);
                EPLOG(ep, RW_LOG_INFO,
                      "shutdown: %" PRIu64 " bytes left in spool %s for the next start",
                      ep->st.spool_bytes, ep->c.spool_dir);
        }
}

static void *sender_main(void *arg)
{
        struct rw_endpoint *ep = arg;
        struct rw_sample *batch = calloc(ep->c.max_samples_per_send, sizeof(*batch));

        if (!batch) {
                EPLOG(ep, RW_LOG_ERR, "out of memory, the sender does not run");
                return NULL;
        }
        for (;;) {
                double timeout = ep->c.timeout, ra, sleep_s;
                enum rw_verdict v;

                if (ep->stopping) {
                        double left = ep->stop_deadline - mono_now();

                        if (left <= 0 || (!ep->p.data && rw_queue_len(ep->q) == 0 &&
                                          (!ep->spool || rw_spool_empty(ep->spool))))
                                break;
                        timeout = left < timeout ? left : timeout;
                }
                if (!ep->p.data && !next_pending(ep, batch))
                        continue;
                v = send_pending(ep, timeout, &ra);
                if (v != RW_VERDICT_RETRY) {
                        ep->backoff = ep->c.min_backoff;
                        finish_pending(ep);
                        continue;
                }
                /* A batch that failed once goes to disk at once: it is the
                 * oldest data (the spool was empty when it was taken), and
                 * from now on it survives a crash. */
                if (ep->spool && !ep->p.from_spool && spool_put(ep, &ep->p))
                        pending_clear(ep);
                /* A spooled record is read again for each attempt, so that
                 * SpoolMaxAge and SpoolMaxBytes still apply to it: kept in
                 * memory, one record a receiver keeps answering 5xx would
                 * be retried for ever and stall the endpoint. */
                else if (ep->p.from_spool)
                        pending_clear(ep);
                sleep_s = rw_backoff(&ep->backoff, ra, ep->c.min_backoff, ep->c.max_backoff);
                if (ep->stopping) {
                        if (mono_now() + sleep_s >= ep->stop_deadline)
                                break;
                }
                {
                        double until = mono_now() + sleep_s;

                        while (mono_now() < until &&
                               !(ep->stopping && mono_now() >= ep->stop_deadline)) {
                                struct timespec dl = mono_ts(until);

                                spool_queue(ep, batch, false);
                                rw_queue_wait(ep->q, ep->c.max_samples_per_send, &dl);
                                if (ep->stopping)
                                        break;
                        }
                }
        }
        park_leftovers(ep, batch);
        free(batch);
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
        if (!ep || !ep->started || ep->stopping)
                return;
        ep->stop_deadline = mono_now() + ep->c.timeout;
        __atomic_store_n(&ep->stopping, true, __ATOMIC_RELEASE);
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
        free(ep->user_agent);
        free(ep->password);
        rw_endpoint_cfg_free(&ep->c);
        pthread_mutex_destroy(&ep->stats_lock);
        free(ep);
}
