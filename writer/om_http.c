// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * om_http.c - the scrape endpoint on libmicrohttpd (see the header).
 *
 * libmicrohttpd runs the sockets: an internal polling thread pool (epoll
 * where the library has it), a per-connection memory cap that answers
 * oversized requests itself, and an idle timeout that drops clients that
 * never finish a request. This file decides what each request gets.
 */
#include "om_http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

/* Certificates and keys are small; a bigger file is a wrong path. */
#define PEM_MAX (1 << 20)

struct om_http {
        struct MHD_Daemon *daemon;
        struct om_store *store;
        om_http_log_fn log;
        void *log_ctx;
        char *cert, *key;
        char *user, *password;
        char *name;
        unsigned int port;
        atomic_uint_fast64_t pages, not_found, bad_method, unauthorized, failed;
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

/* Compares without leaking where the first difference is. */
static bool same_secret(const char *given, const char *want)
{
        size_t lg = strlen(given), lw = strlen(want);
        unsigned char d = lg != lw;

        for (size_t i = 0; i < lw; i++)
                d |= (unsigned char)(given[i < lg ? i : 0] ^ want[i]);
        return d == 0;
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

static bool authorized(struct om_http *h, struct MHD_Connection *c)
{
        char *pass = NULL, *user;
        bool ok;

        if (!h->user)
                return true;
        user = MHD_basic_auth_get_username_password(c, &pass);
        ok = user && pass && same_secret(user, h->user) && same_secret(pass, h->password);
        MHD_free(user);
        MHD_free(pass);
        return ok;
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
                /* The headers are in; answer once the request is whole. */
                *con_cls = &marker;
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
        free(h->key);
        free(h->user);
        free(h->password);
        free(h->name);
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
        h->name = strdup(cfg->name ? cfg->name : "pciescope");
        if (!h->name || (cfg->auth_user && (!(h->user = strdup(cfg->auth_user)) ||
                                            !(h->password = strdup(cfg->auth_password))))) {
                free_http(h);
                return -ENOMEM;
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
                    {MHD_OPTION_CONNECTION_LIMIT, cfg->max_connections ? cfg->max_connections : 128,
                     NULL},
                    {MHD_OPTION_CONNECTION_TIMEOUT, cfg->timeout_s ? cfg->timeout_s : 10, NULL},
                    {MHD_OPTION_CONNECTION_MEMORY_LIMIT, 64 * 1024, NULL},
                    {MHD_OPTION_THREAD_POOL_SIZE, 2, NULL},
                    {MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)mhd_logger, h},
                    /* Only with TLS: libmicrohttpd refuses them without. */
                    {tls ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0, h->cert},
                    {MHD_OPTION_HTTPS_MEM_KEY, 0, h->key},
                    {MHD_OPTION_END, 0, NULL},
                };

                h->daemon = MHD_start_daemon(flags, (uint16_t)cfg->port, NULL, NULL, handle, h,
                                             MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
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
}

void om_http_stop(struct om_http *h)
{
        if (!h)
                return;
        MHD_stop_daemon(h->daemon);
        free_http(h);
}
