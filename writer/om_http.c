// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * om_http.c - the scrape endpoint on libmicrohttpd (see the header).
 *
 * libmicrohttpd runs the sockets: an internal polling thread pool (epoll
 * where the library has it), a per-connection memory cap that answers
 * oversized requests itself, and an idle timeout. This file decides who
 * gets a connection (an accept policy that counts connections per
 * address), how long one may take (a sweep thread that shuts down a
 * connection past its deadline: the idle timeout never fires for a client
 * that sends a byte now and then) and what each request gets.
 */
#include "om_http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netdb.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "om_auth.h"

/* Certificates and keys are small; a bigger file is a wrong path. */
#define PEM_MAX (1 << 20)
/* TLS 1.2 and 1.3 only, GnuTLS' NORMAL ciphers otherwise (Debian 12 has no
 * system-wide GnuTLS policy that "@SYSTEM" could name). */
#define TLS_PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"
/* How often the deadlines are checked. */
#define SWEEP_MS 100
/* A refusal or a failed login is logged at most this often. */
#define LOG_EVERY_S 10

/* One client connection: its address and the time its request must be
 * whole and answered by. A slot reserved by the accept policy has no
 * connection yet (c NULL) until libmicrohttpd says it started. */
struct conn {
        struct conn *prev, *next;
        struct MHD_Connection *c;
        int fd;
        unsigned char addr[16]; /* IPv4 as IPv4-mapped IPv6 */
        double since, deadline; /* monotonic seconds */
        bool dropped;
};

/* A message said at most every LOG_EVERY_S, with a count of the others. */
struct ratelimit {
        double last;
        unsigned long suppressed;
};

struct om_http {
        struct MHD_Daemon *daemon;
        struct om_store *store;
        om_http_log_fn log;
        void *log_ctx;
        char *cert, *key;
        char *user, *password;
        char *name;
        size_t user_len, password_len;
        unsigned int port;
        unsigned int max_connections, max_per_client;
        double timeout;
        /* Connections and reserved slots, under lock; the sweep thread
         * drops what passed its deadline. */
        pthread_mutex_t lock;
        pthread_cond_t wake;
        struct conn *conns;
        unsigned int n_conns;
        bool stopping, sweeping;
        pthread_t sweeper;
        struct ratelimit rl_full, rl_client, rl_auth, rl_late, rl_bad;
        atomic_uint_fast64_t pages, not_found, bad_method, unauthorized, failed;
        atomic_uint_fast64_t refused, timed_out, bad_request;
};

static void logf_(struct om_http *h, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void logf_(struct om_http *h, int level, const char *fmt, ...)
{
        char msg[512];
        va_list ap;

        if (!h->log)
                return;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        h->log(h->log_ctx, level, msg);
}

static double mono_now(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Whether to say it now; the count of those not said is in *@suppressed
 * (and starts again). Under h->lock. */
static bool ratelimit_ok(struct ratelimit *r, double now, unsigned long *suppressed)
{
        if (r->last && now - r->last < LOG_EVERY_S) {
                r->suppressed++;
                return false;
        }
        r->last = now;
        *suppressed = r->suppressed;
        r->suppressed = 0;
        return true;
}

/* " (N more ... since the last such line)", or "" when none. */
static const char *more_text(unsigned long more, const char *what, char *buf, size_t len)
{
        if (!more)
                return "";
        snprintf(buf, len, " (%lu more %s since the last such line)", more, what);
        return buf;
}

/* The 16-byte key of a client address (IPv4 as IPv4-mapped IPv6). */
static void addr_key(const struct sockaddr *sa, unsigned char key[16])
{
        memset(key, 0, 16);
        if (sa && sa->sa_family == AF_INET6) {
                memcpy(key, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
        } else if (sa && sa->sa_family == AF_INET) {
                key[10] = key[11] = 0xff;
                memcpy(key + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
        }
}

static const char *key_text(const unsigned char key[16], char *buf, size_t len)
{
        static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

        if (!memcmp(key, mapped, 12))
                inet_ntop(AF_INET, key + 12, buf, (socklen_t)len);
        else
                inet_ntop(AF_INET6, key, buf, (socklen_t)len);
        return buf;
}

static void conn_unlink(struct om_http *h, struct conn *k)
{
        if (k->prev)
                k->prev->next = k->next;
        else
                h->conns = k->next;
        if (k->next)
                k->next->prev = k->prev;
        h->n_conns--;
}

static void conn_link(struct om_http *h, struct conn *k)
{
        k->prev = NULL;
        k->next = h->conns;
        if (h->conns)
                h->conns->prev = k;
        h->conns = k;
        h->n_conns++;
}

/*
 * Before libmicrohttpd takes a connection: past MaxConnections, or past
 * MaxConnectionsPerClient from this address, it is closed at once (its
 * own limit is set higher, so that it never stops accepting and leaves
 * connections waiting in the kernel's backlog). A slot is reserved for
 * the connection let in.
 */
static enum MHD_Result accept_policy(void *cls, const struct sockaddr *sa, socklen_t len)
{
        struct om_http *h = cls;
        unsigned char key[16];
        unsigned int same = 0;
        struct conn *k;
        double now = mono_now();
        const char *why = NULL;
        struct ratelimit *rl = NULL;
        unsigned long more = 0;
        char addr[INET6_ADDRSTRLEN], mt[64];

        (void)len;
        addr_key(sa, key);
        pthread_mutex_lock(&h->lock);
        for (k = h->conns; k; k = k->next)
                same += !memcmp(k->addr, key, 16);
        if (h->n_conns >= h->max_connections) {
                why = "MaxConnections";
                rl = &h->rl_full;
        } else if (same >= h->max_per_client) {
                why = "MaxConnectionsPerClient";
                rl = &h->rl_client;
        }
        if (why) {
                bool say = ratelimit_ok(rl, now, &more);

                pthread_mutex_unlock(&h->lock);
                atomic_fetch_add(&h->refused, 1);
                if (say)
                        logf_(h, 4,
                              "refused a connection from %s: %s (%u) reached; the connection "
                              "is closed at once%s",
                              key_text(key, addr, sizeof(addr)), why,
                              rl == &h->rl_full ? h->max_connections : h->max_per_client,
                              more_text(more, "refused", mt, sizeof(mt)));
                return MHD_NO;
        }
        k = calloc(1, sizeof(*k));
        if (!k) {
                pthread_mutex_unlock(&h->lock);
                return MHD_NO;
        }
        memcpy(k->addr, key, 16);
        k->fd = -1;
        k->since = now;
        k->deadline = now + h->timeout;
        conn_link(h, k);
        pthread_mutex_unlock(&h->lock);
        return MHD_YES;
}

/* A connection started (it takes the slot its address reserved) or closed
 * (libmicrohttpd has not closed its socket yet: the sweep, under the same
 * lock, never shuts down a socket number that was reused). */
static void notify_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                              enum MHD_ConnectionNotificationCode toe)
{
        struct om_http *h = cls;
        struct conn *k = *socket_context;

        if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
                const union MHD_ConnectionInfo *ai =
                    MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
                const union MHD_ConnectionInfo *fi =
                    MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
                unsigned char key[16];

                addr_key(ai ? ai->client_addr : NULL, key);
                pthread_mutex_lock(&h->lock);
                for (k = h->conns; k; k = k->next)
                        if (!k->c && !memcmp(k->addr, key, 16))
                                break;
                if (k) {
                        k->c = c;
                        k->fd = fi ? fi->connect_fd : -1;
                        /* The deadline runs from the accept. */
                }
                pthread_mutex_unlock(&h->lock);
                if (!k && fi)
                        shutdown(fi->connect_fd, SHUT_RDWR); /* not one the policy let in */
                *socket_context = k;
        } else if (toe == MHD_CONNECTION_NOTIFY_CLOSED && k) {
                pthread_mutex_lock(&h->lock);
                conn_unlink(h, k);
                pthread_mutex_unlock(&h->lock);
                free(k);
                *socket_context = NULL;
        }
}

/* A request was answered (or ended): the next one on this connection has
 * Timeout from now. */
static void request_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                              enum MHD_RequestTerminationCode toe)
{
        struct om_http *h = cls;
        const union MHD_ConnectionInfo *si =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
        struct conn *k = si ? si->socket_context : NULL;

        (void)con_cls;
        (void)toe;
        if (!k)
                return;
        pthread_mutex_lock(&h->lock);
        k->since = mono_now();
        k->deadline = k->since + h->timeout;
        pthread_mutex_unlock(&h->lock);
}

/*
 * Every SWEEP_MS: a connection whose request is not whole and answered by
 * its deadline is shut down (libmicrohttpd then sees it end and closes
 * it); a slot reserved for a connection that never started is freed.
 * libmicrohttpd's own timeout is an idle one, which a client sending a
 * byte now and then never reaches.
 */
static void *sweep(void *arg)
{
        struct om_http *h = arg;

        pthread_mutex_lock(&h->lock);
        while (!h->stopping) {
                struct timespec ts;
                double now = mono_now();
                struct conn *k, *next;
                char addr[INET6_ADDRSTRLEN] = "", mt[64];
                unsigned long more = 0;
                bool say = false;

                for (k = h->conns; k; k = next) {
                        next = k->next;
                        if (!k->c) {
                                if (now - k->since > 5) {
                                        conn_unlink(h, k);
                                        free(k);
                                }
                                continue;
                        }
                        if (k->dropped || now < k->deadline)
                                continue;
                        k->dropped = true;
                        if (k->fd >= 0)
                                shutdown(k->fd, SHUT_RDWR);
                        atomic_fetch_add(&h->timed_out, 1);
                        if (ratelimit_ok(&h->rl_late, now, &more)) {
                                say = true;
                                key_text(k->addr, addr, sizeof(addr));
                        }
                }
                if (say) {
                        /* Logged outside the lock: a slow log never holds
                         * up the accept policy. */
                        pthread_mutex_unlock(&h->lock);
                        logf_(h, 6,
                              "dropped a connection from %s: no whole request answered within "
                              "Timeout (%g s)%s",
                              addr, h->timeout, more_text(more, "dropped", mt, sizeof(mt)));
                        pthread_mutex_lock(&h->lock);
                        if (h->stopping)
                                break;
                }
                clock_gettime(CLOCK_REALTIME, &ts);
                ts.tv_nsec += SWEEP_MS * 1000000L;
                if (ts.tv_nsec >= 1000000000L) {
                        ts.tv_sec++;
                        ts.tv_nsec -= 1000000000L;
                }
                pthread_cond_timedwait(&h->wake, &h->lock, &ts);
        }
        pthread_mutex_unlock(&h->lock);
        return NULL;
}

/* libmicrohttpd's own messages are about clients (a TLS handshake gone
 * wrong, a connection reset): debug, so a scanner cannot flood the log. */
static void mhd_logger(void *cls, const char *fmt, va_list ap)
{
        struct om_http *h = cls;
        char msg[512];
        size_t n;

        if (!h->log)
                return;
        vsnprintf(msg, sizeof(msg), fmt, ap);
        n = strlen(msg);
        while (n && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
                msg[--n] = '\0';
        h->log(h->log_ctx, 7, msg);
}

/* Reads a whole PEM file; the error names the file. */
static int read_pem(const char *path, const char *what, char **out, char *err, size_t errlen)
{
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        struct stat st;
        ssize_t n;
        char *buf;

        if (fd < 0) {
                int e = errno;

                snprintf(err, errlen, "%s \"%s\": %s", what, path, strerror(e));
                return -e;
        }
        if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size <= 0 || st.st_size > PEM_MAX) {
                snprintf(err, errlen, "%s \"%s\": not a regular file of 1 byte to 1 MiB", what,
                         path);
                close(fd);
                return -EINVAL;
        }
        buf = malloc((size_t)st.st_size + 1);
        if (!buf) {
                close(fd);
                return -ENOMEM;
        }
        n = read(fd, buf, (size_t)st.st_size);
        close(fd);
        if (n != st.st_size) {
                snprintf(err, errlen, "%s \"%s\": short read", what, path);
                free(buf);
                return -EIO;
        }
        buf[n] = '\0';
        if (!strstr(buf, "-----BEGIN ")) {
                snprintf(err, errlen, "%s \"%s\": not PEM (no \"-----BEGIN\" line)", what, path);
                free(buf);
                return -EINVAL;
        }
        *out = buf;
        return 0;
}

static enum MHD_Result queue_text(struct MHD_Connection *c, unsigned int status, const char *type,
                                  const char *text, const char *allow)
{
        struct MHD_Response *r =
            MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_MUST_COPY);
        enum MHD_Result rc;

        if (!r)
                return MHD_NO;
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
        if (allow)
                MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
        rc = MHD_queue_response(c, status, r);
        MHD_destroy_response(r);
        return rc;
}

static void client_text(struct MHD_Connection *c, char *buf, size_t len)
{
        const union MHD_ConnectionInfo *ai =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        unsigned char key[16];

        addr_key(ai ? ai->client_addr : NULL, key);
        key_text(key, buf, len);
}

/*
 * The request's basic credentials against the configured ones: the whole
 * decoded user and password (a NUL byte in them is a byte like any other),
 * both compared in constant time, always. A failure is logged (at most
 * every LOG_EVERY_S) with the client's address and the user it gave,
 * never the password.
 */
static bool authorized(struct om_http *h, struct MHD_Connection *c)
{
        struct om_credentials cred;
        const char *value = NULL;
        size_t len = 0;
        bool given, decoded, ok;
        unsigned long more = 0;
        char addr[INET6_ADDRSTRLEN], user[128], mt[64];

        if (!h->user)
                return true;
        given = MHD_lookup_connection_value_n(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION,
                                              strlen(MHD_HTTP_HEADER_AUTHORIZATION), &value,
                                              &len) == MHD_YES &&
                value;
        decoded = given && !om_basic_auth_decode(value, len, &cred);
        if (!decoded) {
                memset(&cred, 0, sizeof(cred));
                cred.user = cred.password = "";
        }
        /* Both, whatever the first says (no early exit). */
        ok = om_secret_equal(cred.user, cred.user_len, h->user, h->user_len) &
             om_secret_equal(cred.password, cred.password_len, h->password, h->password_len);
        if (!ok) {
                bool say;

                pthread_mutex_lock(&h->lock);
                say = ratelimit_ok(&h->rl_auth, mono_now(), &more);
                pthread_mutex_unlock(&h->lock);
                client_text(c, addr, sizeof(addr));
                if (say && decoded)
                        logf_(h, 4, "authentication failed from %s: user \"%s\"%s", addr,
                              om_log_escape(cred.user, cred.user_len, user, sizeof(user)),
                              more_text(more, "failures", mt, sizeof(mt)));
                else if (say)
                        logf_(h, 4, "authentication failed from %s: %s%s", addr,
                              given ? "an Authorization header that is not basic credentials"
                                    : "no credentials",
                              more_text(more, "failures", mt, sizeof(mt)));
        }
        explicit_bzero(&cred, sizeof(cred));
        return ok;
}

static enum MHD_Result count_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                    const char *value)
{
        (void)kind;
        om_request_headers_add(cls, key, value);
        return MHD_YES;
}

static ssize_t page_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
        const struct om_page *p = cls;
        size_t n;

        if (pos >= p->len)
                return MHD_CONTENT_READER_END_OF_STREAM;
        n = p->len - (size_t)pos < max ? p->len - (size_t)pos : max;
        memcpy(buf, p->data + pos, n);
        return (ssize_t)n;
}

static void page_free(void *cls)
{
        om_page_release(cls);
}

static enum MHD_Result serve_page(struct om_http *h, struct MHD_Connection *c)
{
        const char *accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept");
        const char *enc = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept-Encoding");
        enum om_format f = om_negotiate(accept);
        const struct om_page *p =
            om_accepts_gzip(enc) ? om_store_page_gzip(h->store, f) : om_store_page(h->store, f);
        struct MHD_Response *r;
        enum MHD_Result rc;

        if (!p) {
                atomic_fetch_add(&h->failed, 1);
                return queue_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain; charset=utf-8",
                                  "out of memory rendering the page\n", NULL);
        }
        r = MHD_create_response_from_callback(p->len, 64 * 1024, page_reader, (void *)p, page_free);
        if (!r) {
                om_page_release(p);
                return MHD_NO;
        }
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, om_content_type(f));
        MHD_add_response_header(r, MHD_HTTP_HEADER_VARY, "Accept, Accept-Encoding");
        if (p->gzip)
                MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
        rc = MHD_queue_response(c, MHD_HTTP_OK, r);
        MHD_destroy_response(r);
        atomic_fetch_add(&h->pages, 1);
        return rc;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload_data,
                              size_t *upload_size, void **con_cls)
{
        static int marker;
        struct om_http *h = cls;
        bool get = !strcmp(method, MHD_HTTP_METHOD_GET), head = !strcmp(method, "HEAD");

        (void)version;
        (void)upload_data;
        if (*con_cls != &marker) {
                struct om_request_headers rh = {0};
                const char *why;

                /* The headers are in: a framing that a proxy in front
                 * could read otherwise is refused now, before any body;
                 * else answer once the request is whole. */
                *con_cls = &marker;
                MHD_get_connection_values(c, MHD_HEADER_KIND, count_header, &rh);
                why = om_request_headers_problem(&rh);
                if (why) {
                        char msg[160], addr[INET6_ADDRSTRLEN], mt[64];
                        unsigned long more = 0;
                        bool say;

                        atomic_fetch_add(&h->bad_request, 1);
                        pthread_mutex_lock(&h->lock);
                        say = ratelimit_ok(&h->rl_bad, mono_now(), &more);
                        pthread_mutex_unlock(&h->lock);
                        if (say) {
                                client_text(c, addr, sizeof(addr));
                                logf_(h, 6, "refused a request from %s (400): %s%s", addr, why,
                                      more_text(more, "refused", mt, sizeof(mt)));
                        }
                        snprintf(msg, sizeof(msg), "bad request: %s\n", why);
                        return queue_text(c, MHD_HTTP_BAD_REQUEST, "text/plain; charset=utf-8", msg,
                                          NULL);
                }
                return MHD_YES;
        }
        if (*upload_size) {
                *upload_size = 0; /* a body is read and ignored */
                return MHD_YES;
        }
        if (!get && !head) {
                atomic_fetch_add(&h->bad_method, 1);
                return queue_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain; charset=utf-8",
                                  "only GET and HEAD\n", "GET, HEAD");
        }
        if (!authorized(h, c)) {
                struct MHD_Response *r = MHD_create_response_from_buffer(
                    13, (void *)"unauthorized\n", MHD_RESPMEM_PERSISTENT);
                enum MHD_Result rc;

                atomic_fetch_add(&h->unauthorized, 1);
                if (!r)
                        return MHD_NO;
                rc = MHD_queue_basic_auth_fail_response(c, h->name, r);
                MHD_destroy_response(r);
                return rc;
        }
        if (!strcmp(url, "/metrics"))
                return serve_page(h, c);
        if (!strcmp(url, "/")) {
                char html[512];

                snprintf(html, sizeof(html),
                         "<html><head><title>%s</title></head><body><h1>%s</h1>"
                         "<p><a href=\"/metrics\">Metrics</a></p></body></html>\n",
                         h->name, h->name);
                return queue_text(c, MHD_HTTP_OK, "text/html; charset=utf-8", html, NULL);
        }
        atomic_fetch_add(&h->not_found, 1);
        return queue_text(c, MHD_HTTP_NOT_FOUND, "text/plain; charset=utf-8",
                          "not found: the metrics are at /metrics\n", NULL);
}

static int resolve(const char *listen, unsigned int port, struct sockaddr_storage *sa, char *err,
                   size_t errlen)
{
        struct addrinfo hints = {.ai_flags = AI_PASSIVE | AI_NUMERICSERV,
                                 .ai_socktype = SOCK_STREAM};
        struct addrinfo *res = NULL;
        char service[8];
        int rc;

        snprintf(service, sizeof(service), "%u", port);
        rc = getaddrinfo(listen && *listen ? listen : NULL, service, &hints, &res);
        if (rc || !res) {
                snprintf(err, errlen, "Listen \"%s\": %s", listen ? listen : "",
                         rc ? gai_strerror(rc) : "no address");
                return -EINVAL;
        }
        memcpy(sa, res->ai_addr, res->ai_addrlen);
        freeaddrinfo(res);
        return 0;
}

static void free_http(struct om_http *h)
{
        free(h->cert);
        if (h->key)
                explicit_bzero(h->key, strlen(h->key));
        free(h->key);
        free(h->user);
        if (h->password)
                explicit_bzero(h->password, h->password_len);
        free(h->password);
        free(h->name);
        while (h->conns) {
                struct conn *k = h->conns;

                conn_unlink(h, k);
                free(k);
        }
        pthread_cond_destroy(&h->wake);
        pthread_mutex_destroy(&h->lock);
        free(h);
}

int om_http_start(const struct om_http_cfg *cfg, struct om_store *st, om_http_log_fn log,
                  void *log_ctx, struct om_http **out, char *err, size_t errlen)
{
        struct sockaddr_storage sa;
        struct om_http *h;
        unsigned int flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG;
        bool tls = cfg->tls_cert_file || cfg->tls_key_file;
        const union MHD_DaemonInfo *info;
        int rc;

        *out = NULL;
        if (tls && !(cfg->tls_cert_file && cfg->tls_key_file)) {
                snprintf(err, errlen, "TLS needs both a certificate and a key file");
                return -EINVAL;
        }
        if (!cfg->auth_user != !cfg->auth_password) {
                snprintf(err, errlen, "basic authentication needs both a user and a password");
                return -EINVAL;
        }
        if (cfg->port > 65535) {
                snprintf(err, errlen, "Port %u: not in 1..65535", cfg->port);
                return -EINVAL;
        }
        if (tls && MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
                snprintf(err, errlen, "this libmicrohttpd was built without TLS");
                return -ENOTSUP;
        }
        rc = resolve(cfg->listen, cfg->port, &sa, err, errlen);
        if (rc)
                return rc;
        h = calloc(1, sizeof(*h));
        if (!h)
                return -ENOMEM;
        h->store = st;
        h->log = log;
        h->log_ctx = log_ctx;
        h->max_connections = cfg->max_connections ? cfg->max_connections : 128;
        h->max_per_client = cfg->max_per_client ? cfg->max_per_client : OM_HTTP_DEFAULT_PER_CLIENT;
        h->timeout = cfg->timeout_s ? cfg->timeout_s : 10;
        pthread_mutex_init(&h->lock, NULL);
        pthread_cond_init(&h->wake, NULL);
        h->name = strdup(cfg->name ? cfg->name : "pciescope");
        if (!h->name || (cfg->auth_user && (!(h->user = strdup(cfg->auth_user)) ||
                                            !(h->password = strdup(cfg->auth_password))))) {
                free_http(h);
                return -ENOMEM;
        }
        if (h->user) {
                h->user_len = strlen(h->user);
                h->password_len = strlen(h->password);
        }
        if (tls) {
                rc = read_pem(cfg->tls_cert_file, "TLS certificate", &h->cert, err, errlen);
                if (!rc)
                        rc = read_pem(cfg->tls_key_file, "TLS key", &h->key, err, errlen);
                if (rc) {
                        free_http(h);
                        return rc;
                }
                flags |= MHD_USE_TLS;
        }
        if (sa.ss_family == AF_INET6)
                flags |= MHD_USE_IPv6;
        {
                struct MHD_OptionItem opts[] = {
                    {MHD_OPTION_SOCK_ADDR, 0, &sa},
                    /* Above MaxConnections (the accept policy's limit): at
                     * its own limit a pool thread stops accepting, and the
                     * kernel would hold new connections instead of the
                     * policy closing them. */
                    {MHD_OPTION_CONNECTION_LIMIT, (intptr_t)h->max_connections * 2 + 16, NULL},
                    {MHD_OPTION_CONNECTION_TIMEOUT, (intptr_t)h->timeout, NULL},
                    {MHD_OPTION_CONNECTION_MEMORY_LIMIT, 64 * 1024, NULL},
                    {MHD_OPTION_THREAD_POOL_SIZE, 2, NULL},
                    {MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)mhd_logger, h},
                    {MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)notify_connection, h},
                    {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)request_completed, h},
                    /* Host required in HTTP/1.1, no space before a header's
                     * colon, no line folding (Prometheus and curl pass). */
                    {MHD_OPTION_STRICT_FOR_CLIENT, 1, NULL},
                    /* Only with TLS: libmicrohttpd refuses them without. */
                    {tls ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0, h->cert},
                    {MHD_OPTION_HTTPS_MEM_KEY, 0, h->key},
                    {MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)TLS_PRIORITIES},
                    {MHD_OPTION_END, 0, NULL},
                };

                h->daemon = MHD_start_daemon(flags, (uint16_t)cfg->port, accept_policy, h, handle,
                                             h, MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
        }
        if (!h->daemon) {
                char addr[INET6_ADDRSTRLEN] = "?";

                if (sa.ss_family == AF_INET6)
                        inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&sa)->sin6_addr, addr,
                                  sizeof(addr));
                else
                        inet_ntop(AF_INET, &((struct sockaddr_in *)&sa)->sin_addr, addr,
                                  sizeof(addr));
                snprintf(err, errlen,
                         "cannot serve on %s port %u: the address is taken or not this "
                         "host's%s",
                         addr, cfg->port,
                         tls ? ", or the TLS certificate and key do not match "
                               "or do not load"
                             : "");
                free_http(h);
                return -EADDRNOTAVAIL;
        }
        if (pthread_create(&h->sweeper, NULL, sweep, h)) {
                snprintf(err, errlen, "cannot start the thread that enforces Timeout");
                MHD_stop_daemon(h->daemon);
                free_http(h);
                return -EAGAIN;
        }
        h->sweeping = true;
        info = MHD_get_daemon_info(h->daemon, MHD_DAEMON_INFO_BIND_PORT);
        h->port = info ? info->port : cfg->port;
        logf_(h, 6, "serving /metrics on %s port %u%s%s",
              cfg->listen && *cfg->listen ? cfg->listen : "*", h->port, tls ? " (TLS)" : "",
              h->user ? " (basic auth)" : "");
        *out = h;
        return 0;
}

void om_http_stats(struct om_http *h, struct om_http_stats *out)
{
        out->pages = atomic_load(&h->pages);
        out->not_found = atomic_load(&h->not_found);
        out->bad_method = atomic_load(&h->bad_method);
        out->unauthorized = atomic_load(&h->unauthorized);
        out->failed = atomic_load(&h->failed);
        out->refused = atomic_load(&h->refused);
        out->timed_out = atomic_load(&h->timed_out);
        out->bad_request = atomic_load(&h->bad_request);
}

void om_http_stop(struct om_http *h)
{
        if (!h)
                return;
        if (h->sweeping) {
                pthread_mutex_lock(&h->lock);
                h->stopping = true;
                pthread_cond_signal(&h->wake);
                pthread_mutex_unlock(&h->lock);
                pthread_join(h->sweeper, NULL);
        }
        MHD_stop_daemon(h->daemon);
        free_http(h);
}
