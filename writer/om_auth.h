/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * om_auth.h - what the scrape endpoint (om_http) decides from a request's
 * headers alone, without libmicrohttpd: HTTP basic credentials, compared
 * in constant time over their whole length; the framing headers an HTTP
 * proxy in front could read differently (refused); text from a client
 * made safe for one log line.
 */
#ifndef PCIESCOPE_OM_AUTH_H
#define PCIESCOPE_OM_AUTH_H

#include <stdbool.h>
#include <stddef.h>

/* The longest Authorization value decoded; longer is refused. */
#define OM_AUTH_MAX 4096

/* Decoded credentials: user and password point into buf (not
 * NUL-terminated; either may hold any byte but the user's ':'). */
struct om_credentials {
        char buf[OM_AUTH_MAX / 4 * 3 + 1];
        const char *user, *password;
        size_t user_len, password_len;
};

/*
 * om_basic_auth_decode - an Authorization header value of @len bytes:
 * "Basic" (any case), spaces, and base64 of "user:password" (padded or
 * not). Returns 0, or -EINVAL (another scheme, bad base64, no ':', too
 * long): @out then holds nothing.
 */
int om_basic_auth_decode(const char *value, size_t len, struct om_credentials *out);

/*
 * om_secret_equal - whether @given (@glen bytes) equals @want (@wlen
 * bytes), in a time that depends on @wlen only: every byte of @want is
 * compared whatever differs first.
 */
bool om_secret_equal(const char *given, size_t glen, const char *want, size_t wlen);

/* What om_request_headers_add has seen of the framing headers. */
struct om_request_headers {
        unsigned int content_length, transfer_encoding;
        unsigned int blank_name; /* names holding a space or tab ("Name : v") */
        bool te_chunked;         /* the (one) Transfer-Encoding is exactly "chunked" */
};

/* Counts one request header (@name as the client sent it, any case). */
void om_request_headers_add(struct om_request_headers *h, const char *name, const char *value);

/*
 * om_request_headers_problem - NULL when the framing is unambiguous, else
 * why the request is refused (400): two Content-Length headers,
 * Transfer-Encoding with Content-Length, more than one Transfer-Encoding,
 * a transfer coding other than "chunked", or a header name with a blank
 * in it (RFC 9112 5.1: "Transfer-Encoding : chunked" is one to a proxy
 * and an unknown header to libmicrohttpd).
 */
const char *om_request_headers_problem(const struct om_request_headers *h);

/*
 * om_log_escape - @in (@len bytes, any bytes) for one log line: printable
 * ASCII as is, '\\' and '"' escaped, anything else as \xHH; cut with
 * "..." to fit @outlen (at least 8). Returns @out.
 */
char *om_log_escape(const char *in, size_t len, char *out, size_t outlen);

#endif
