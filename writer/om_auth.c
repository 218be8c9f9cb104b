// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * om_auth.c - credentials, framing headers and log text of a scrape
 * request (see the header).
 */
#include "om_auth.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static int b64_value(unsigned char c)
{
        if (c >= 'A' && c <= 'Z')
                return c - 'A';
        if (c >= 'a' && c <= 'z')
                return c - 'a' + 26;
        if (c >= '0' && c <= '9')
                return c - '0' + 52;
        if (c == '+')
                return 62;
        if (c == '/')
                return 63;
        return -1;
}

int om_basic_auth_decode(const char *value, size_t len, struct om_credentials *out)
{
        size_t i = 5, n = 0, digits, pad = 0;
        uint32_t acc = 0;
        unsigned int bits = 0;
        const char *colon;

        memset(out, 0, sizeof(*out));
        if (!value || len < 6 || strncasecmp(value, "Basic", 5) ||
            (value[5] != ' ' && value[5] != '\t'))
                return -EINVAL;
        while (i < len && (value[i] == ' ' || value[i] == '\t'))
                i++;
        /* Trailing blanks are not part of the token. */
        while (len > i && (value[len - 1] == ' ' || value[len - 1] == '\t'))
                len--;
        while (len > i && value[len - 1] == '=' && pad < 2) {
                len--;
                pad++;
        }
        digits = len - i;
        if (!digits || digits > OM_AUTH_MAX || digits % 4 == 1 || (pad && (digits + pad) % 4))
                return -EINVAL;
        for (; i < len; i++) {
                int v = b64_value((unsigned char)value[i]);

                if (v < 0)
                        return -EINVAL;
                acc = (acc << 6) | (uint32_t)v;
                bits += 6;
                if (bits >= 8) {
                        bits -= 8;
                        out->buf[n++] = (char)((acc >> bits) & 0xff);
                }
        }
        /* The bits left over must be zero (one encoding per text). */
        if (acc & ((1u << bits) - 1))
                goto bad;
        colon = memchr(out->buf, ':', n);
        if (!colon)
                goto bad;
        out->user = out->buf;
        out->user_len = (size_t)(colon - out->buf);
        out->password = colon + 1;
        out->password_len = n - out->user_len - 1;
        return 0;
bad:
        memset(out, 0, sizeof(*out));
        return -EINVAL;
}

bool om_secret_equal(const char *given, size_t glen, const char *want, size_t wlen)
{
        volatile unsigned char d = glen != wlen;

        for (size_t i = 0; i < wlen; i++) {
                unsigned char g = glen ? (unsigned char)given[i % glen] : 0;

                d |= (unsigned char)(g ^ (unsigned char)want[i]);
        }
        return d == 0;
}

void om_request_headers_add(struct om_request_headers *h, const char *name, const char *value)
{
        if (!name)
                return;
        if (strpbrk(name, " \t"))
                h->blank_name++;
        if (!strcasecmp(name, "Content-Length")) {
                h->content_length++;
        } else if (!strcasecmp(name, "Transfer-Encoding")) {
                h->transfer_encoding++;
                h->te_chunked = value && !strcasecmp(value, "chunked");
        }
}

const char *om_request_headers_problem(const struct om_request_headers *h)
{
        if (h->blank_name)
                return "a blank in a header name (before its colon)";
        if (h->content_length > 1)
                return "more than one Content-Length header";
        if (h->transfer_encoding && h->content_length)
                return "Transfer-Encoding together with Content-Length";
        if (h->transfer_encoding > 1)
                return "more than one Transfer-Encoding header";
        if (h->transfer_encoding && !h->te_chunked)
                return "a transfer coding other than \"chunked\"";
        return NULL;
}

static size_t escape_one(unsigned char c, char tmp[5])
{
        if (c == '\\' || c == '"')
                return (size_t)snprintf(tmp, 5, "\\%c", c);
        if (c >= 0x20 && c < 0x7f)
                return (size_t)snprintf(tmp, 5, "%c", c);
        return (size_t)snprintf(tmp, 5, "\\x%02x", c);
}

char *om_log_escape(const char *in, size_t len, char *out, size_t outlen)
{
        size_t o = 0, need = 0, room;
        char tmp[5];

        if (!outlen)
                return out;
        for (size_t i = 0; i < len; i++)
                need += escape_one((unsigned char)in[i], tmp);
        /* All of it, or as much as leaves room for "..." */
        room = need < outlen ? outlen - 1 : (outlen > 3 ? outlen - 4 : 0);
        for (size_t i = 0; i < len; i++) {
                size_t k = escape_one((unsigned char)in[i], tmp);

                if (o + k > room)
                        break;
                memcpy(out + o, tmp, k);
                o += k;
        }
        if (need >= outlen && outlen > 3) {
                memcpy(out + o, "...", 3);
                o += 3;
        }
        out[o] = '\0';
        return out;
}
