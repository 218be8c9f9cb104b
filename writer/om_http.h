/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * om_http.h - the scrape endpoint: an HTTP(S) server (libmicrohttpd) that
 * serves an om_store's page at /metrics (no collectd).
 *
 * GET or HEAD /metrics gives the page in the format the scraper's Accept
 * header asks for (om_negotiate), gzip-compressed when its Accept-Encoding
 * allows (Prometheus asks for it), / a short page that links to it, any
 * other path 404 and any other method 405. The server runs on threads of
 * its own: a scrape never runs on, or waits for, the threads that collect
 * (they share only the store's lock, held for a hash update or one
 * rendering). Each request must be whole and answered within Timeout of
 * the connection's start (or of the previous answer on a kept-alive
 * connection), or the connection is dropped, however slowly the client
 * keeps sending; past MaxConnections, or past MaxConnectionsPerClient from
 * one address, a new connection is closed at once. Framing headers that a
 * proxy could read otherwise are answered 400. Optional TLS 1.2/1.3 (a
 * PEM certificate and key) and HTTP basic authentication (failures logged).
 */
#ifndef PCIESCOPE_OM_HTTP_H
#define PCIESCOPE_OM_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "om_store.h"

struct om_http_cfg {
        const char *listen;                       /* address; NULL or "": every address */
        unsigned int port;                        /* 1..65535 */
        const char *tls_cert_file, *tls_key_file; /* both, or neither */
        const char *auth_user, *auth_password;    /* both, or neither */
        unsigned int max_connections;             /* 0: 128 */
        unsigned int max_per_client;              /* from one address; 0: the default */
        unsigned int timeout_s;                   /* per request; 0: 10 */
        const char *name;                         /* for the / page and the Server header */
};

/* Log callback: level is syslog-like (3 error, 4 warning, 6 info, 7 debug). */
typedef void (*om_http_log_fn)(void *ctx, int level, const char *msg);

/* MaxConnectionsPerClient when not given. */
#define OM_HTTP_DEFAULT_PER_CLIENT 16

struct om_http;

/*
 * om_http_start - listens and serves @st until om_http_stop. On failure
 * @err says what and where (the address, the certificate file, ...).
 * Returns 0, -EINVAL (configuration), -ENOTSUP (no TLS in libmicrohttpd),
 * or the errno of reading a file or binding.
 */
int om_http_start(const struct om_http_cfg *cfg, struct om_store *st, om_http_log_fn log,
                  void *log_ctx, struct om_http **out, char *err, size_t errlen);

/* What the server answered since it started. */
struct om_http_stats {
        uint64_t pages, not_found, bad_method, unauthorized, failed;
        uint64_t refused;     /* connections closed at once: a limit reached */
        uint64_t timed_out;   /* connections dropped at their deadline */
        uint64_t bad_request; /* requests refused for their framing headers */
};
void om_http_stats(struct om_http *h, struct om_http_stats *out);

/* Stops listening, closes every connection, joins the threads. NULL is fine. */
void om_http_stop(struct om_http *h);

#endif
