// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_om_auth.c - libFuzzer target: what the scrape endpoint reads from a
 * request's headers: om_basic_auth_decode() on any Authorization value,
 * om_request_headers_add/_problem on any header lines ("Name: value"), and
 * om_log_escape() on any text.
 *
 * Invariants (a violation traps): decoding is 0 or -EINVAL; when 0 the
 * user and the password lie inside the buffer, the user holds no ':', and
 * re-encoding them gives back the token; a secret always equals itself and
 * never a copy with one byte more; the framing verdict agrees with the
 * counts (blanks in names included); an escaped text holds only printable
 * ASCII and fits its buffer.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "om_auth.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t b64(const unsigned char *in, size_t n, char *out)
{
        static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        size_t o = 0;

        for (size_t i = 0; i < n; i += 3) {
                uint32_t v = (uint32_t)in[i] << 16;

                if (i + 1 < n)
                        v |= (uint32_t)in[i + 1] << 8;
                if (i + 2 < n)
                        v |= in[i + 2];
                out[o++] = a[(v >> 18) & 63];
                out[o++] = a[(v >> 12) & 63];
                out[o++] = i + 1 < n ? a[(v >> 6) & 63] : '=';
                out[o++] = i + 2 < n ? a[v & 63] : '=';
        }
        return o;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct om_credentials *c = malloc(sizeof(*c));
        struct om_request_headers h = {0};
        char *s = malloc(size + 1), esc[48], *enc = NULL;
        int rc;

        if (!c || !s)
                goto out;
        memcpy(s, data, size);
        s[size] = '\0';
        rc = om_basic_auth_decode(s, size, c);
        if (rc != 0 && rc != -EINVAL)
                __builtin_trap();
        if (rc == 0) {
                size_t n = c->user_len + 1 + c->password_len, m;

                if (c->user != c->buf || c->password != c->buf + c->user_len + 1 ||
                    n > sizeof(c->buf) || memchr(c->user, ':', c->user_len))
                        __builtin_trap();
                if (!om_secret_equal(c->password, c->password_len, c->password, c->password_len) ||
                    om_secret_equal(c->password, c->password_len, c->buf, c->password_len + 1))
                        __builtin_trap();
                /* The token, re-encoded with padding, decodes the same. */
                enc = malloc(6 + (n + 2) / 3 * 4 + 1);
                if (!enc)
                        goto out;
                memcpy(enc, "Basic ", 6);
                m = 6 + b64((const unsigned char *)c->buf, n, enc + 6);
                {
                        struct om_credentials *d = malloc(sizeof(*d));

                        if (d && (om_basic_auth_decode(enc, m, d) || d->user_len != c->user_len ||
                                  d->password_len != c->password_len || memcmp(d->buf, c->buf, n)))
                                __builtin_trap();
                        free(d);
                }
        }
        /* Header lines: each "Name: value" up to a newline. */
        {
                unsigned int cl = 0, te = 0, blank = 0;
                char *line = s, *nl;

                while (line && *line) {
                        char *colon, *v;

                        nl = strchr(line, '\n');
                        if (nl)
                                *nl = '\0';
                        colon = strchr(line, ':');
                        if (colon) {
                                *colon = '\0';
                                for (v = colon + 1; *v == ' '; v++)
                                        ;
                                om_request_headers_add(&h, line, v);
                                cl += !strcasecmp(line, "Content-Length");
                                te += !strcasecmp(line, "Transfer-Encoding");
                                blank += strpbrk(line, " \t") != NULL;
                        }
                        line = nl ? nl + 1 : NULL;
                }
                if (h.content_length != cl || h.transfer_encoding != te)
                        __builtin_trap();
                if (!om_request_headers_problem(&h) !=
                    (!blank && cl <= 1 && te <= 1 && !(cl && te) && (!te || h.te_chunked)))
                        __builtin_trap();
        }
        om_log_escape((const char *)data, size, esc, sizeof(esc));
        if (strlen(esc) >= sizeof(esc))
                __builtin_trap();
        for (const char *p = esc; *p; p++)
                if (*p < 0x20 || *p > 0x7e)
                        __builtin_trap();
out:
        free(enc);
        free(c);
        free(s);
        return 0;
}
