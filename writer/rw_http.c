// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rw_http.c - answer classification, Retry-After and backoff (rw_http.h).
 */
#define _GNU_SOURCE /* strptime, timegm */
#include "rw_http.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum rw_verdict rw_classify(long status, bool retry429)
{
        if (status >= 200 && status < 300)
                return RW_VERDICT_SENT;
        if (status == 0 || status >= 500)
                return RW_VERDICT_RETRY;
        if (status == 429)
                return retry429 ? RW_VERDICT_RETRY : RW_VERDICT_DROP;
        /* 1xx/3xx cannot be a final answer to our POST: a misconfigured
         * URL (a redirect), not worth retrying forever. */
        return RW_VERDICT_DROP;
}

/* Whether the n bytes at b hold needle, ASCII case ignored. */
static bool has(const char *b, size_t n, const char *needle)
{
        size_t m = strlen(needle);

        for (size_t i = 0; m && i + m <= n; i++) {
                size_t k = 0;

                while (k < m && tolower((unsigned char)b[i + k]) == needle[k])
                        k++;
                if (k == m)
                        return true;
        }
        return false;
}

static bool has_any(const char *b, size_t n, const char *const *needles)
{
        for (; *needles; needles++)
                if (has(b, n, *needles))
                        return true;
        return false;
}

/* What names each reason, lower case: Mimir's error ids first (an answer
 * that holds one is decided by it alone, since the rest of Mimir's text
 * quotes the refused series, whose labels could hold any phrase), then
 * phrases of Mimir, Cortex and Prometheus. Order matters where phrases
 * overlap: Mimir's "too old" answer with an out-of-order window says
 * "out-of-order time window", so the time window is asked before the
 * order; Cortex's 429 for a series limit is a limit, not a rate. */
static const struct {
        enum rw_refusal reason;
        const char *const *ids, *const *phrases;
} refusals[] = {
    {RW_REFUSAL_SERIES_LIMIT,
     (const char *const[]){"err-mimir-max-series-per-user", "err-mimir-max-series-per-metric",
                           "err-mimir-max-metadata-per-user", "err-mimir-max-metadata-per-metric",
                           NULL},
     (const char *const[]){"series limit", "metadata limit", NULL}},
    {RW_REFUSAL_RATE_LIMIT,
     (const char *const[]){"err-mimir-tenant-max-ingestion-rate",
                           "err-mimir-tenant-max-request-rate", NULL},
     (const char *const[]){"rate limit", NULL}},
    {RW_REFUSAL_LABEL_LIMIT,
     (const char *const[]){"err-mimir-max-label-names-per-series", "err-mimir-label-name-too-long",
                           "err-mimir-label-value-too-long", NULL},
     (const char *const[]){"number of labels exceeds", "too many labels",
                           "label name length exceeds", "label value length exceeds",
                           "label name too long", "label value too long", NULL}},
    {RW_REFUSAL_OUT_OF_BOUNDS,
     (const char *const[]){"err-mimir-sample-timestamp-too-old", "err-mimir-too-far-in-future",
                           NULL},
     (const char *const[]){"out of bounds", "too old", "too far in the future", NULL}},
    {RW_REFUSAL_OUT_OF_ORDER,
     (const char *const[]){"err-mimir-sample-out-of-order", "err-mimir-sample-duplicate-timestamp",
                           NULL},
     (const char *const[]){"out of order", "out-of-order", "duplicate sample for timestamp", NULL}},
};

enum rw_refusal rw_refusal_reason(long status, const char *body, size_t n)
{
        size_t nr = sizeof(refusals) / sizeof(refusals[0]);

        if (!body)
                n = 0;
        for (size_t i = 0; i < nr; i++)
                if (has_any(body, n, refusals[i].ids))
                        return refusals[i].reason;
        /* A 429 is a rate limit unless its text names a series limit. */
        if (has_any(body, n, refusals[0].phrases))
                return RW_REFUSAL_SERIES_LIMIT;
        if (status == 429)
                return RW_REFUSAL_RATE_LIMIT;
        for (size_t i = 1; i < nr; i++)
                if (has_any(body, n, refusals[i].phrases))
                        return refusals[i].reason;
        return RW_REFUSAL_OTHER;
}

enum rw_verdict rw_classify_answer(long status, bool retry429, const char *body, size_t n)
{
        enum rw_verdict v = rw_classify(status, retry429);

        if (v == RW_VERDICT_RETRY && status == 429 &&
            rw_refusal_reason(status, body, n) == RW_REFUSAL_SERIES_LIMIT)
                return RW_VERDICT_DROP;
        return v;
}

int rw_parse_retry_after(const char *value, time_t now, double *seconds)
{
        char buf[64];
        size_t len;
        struct tm tm;
        char *end;

        if (!value)
                return -EINVAL;
        while (*value == ' ' || *value == '\t')
                value++;
        len = strnlen(value, sizeof(buf));
        if (len == 0 || len >= sizeof(buf))
                return -EINVAL;
        memcpy(buf, value, len + 1);
        while (len && isspace((unsigned char)buf[len - 1]))
                buf[--len] = '\0';
        if (isdigit((unsigned char)buf[0])) {
                unsigned long v;

                errno = 0;
                v = strtoul(buf, &end, 10);
                if (errno || *end || len > 10)
                        return -EINVAL;
                *seconds = (double)v;
                return 0;
        }
        memset(&tm, 0, sizeof(tm));
        end = strptime(buf, "%a, %d %b %Y %H:%M:%S GMT", &tm);
        if (!end || *end) {
                return -EINVAL;
        } else {
                time_t t = timegm(&tm);

                if (t == (time_t)-1 || t <= now)
                        return -EINVAL;
                *seconds = difftime(t, now);
                return 0;
        }
}

double rw_retry_after_cap(double asked, double max)
{
        return asked > max ? max : asked;
}

static double clamp(double v, double lo, double hi)
{
        return v < lo ? lo : v > hi ? hi : v;
}

double rw_backoff(double *backoff, double retry_after, double min, double max)
{
        double sleep;

        /* "Retry-After: 0" is no hint (as in Prometheus): honoured as a
         * zero sleep, a receiver answering it every time would get a busy
         * loop of requests. */
        if (retry_after > 0) {
                sleep = retry_after;
                *backoff = clamp(retry_after * 2, min, max);
        } else {
                sleep = clamp(*backoff, min, max);
                *backoff = clamp(sleep * 2, min, max);
        }
        return sleep;
}

char *rw_log_escape(const char *in, size_t n, char *out, size_t outlen)
{
        static const char hex[] = "0123456789abcdef";
        size_t o = 0;

        if (!outlen)
                return out;
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char)in[i];
                char e[4];
                size_t k = 0;

                if (c == '\n' || c == '\r' || c == '\t' || c == '\\') {
                        e[k++] = '\\';
                        e[k++] = c == '\n' ? 'n' : c == '\r' ? 'r' : c == '\t' ? 't' : '\\';
                } else if (c < 0x20 || c == 0x7f) {
                        e[k++] = '\\';
                        e[k++] = 'x';
                        e[k++] = hex[c >> 4];
                        e[k++] = hex[c & 15];
                } else {
                        e[k++] = (char)c;
                }
                if (o + k >= outlen)
                        break;
                memcpy(out + o, e, k);
                o += k;
        }
        out[o] = '\0';
        return out;
}

/* Appends @n bytes of @s to @out (of @outlen) at *@o, cut to fit. */
static void append(char *out, size_t outlen, size_t *o, const char *s, size_t n)
{
        if (*o + n >= outlen)
                n = outlen - 1 - *o;
        memcpy(out + *o, s, n);
        *o += n;
}

char *rw_redact_url(const char *url, char *out, size_t outlen)
{
        const char *auth = strstr(url, "://"), *p = url;
        size_t o = 0;

        if (!outlen)
                return out;
        /* Every authority: after each "://" (a URL inside a mistyped value
         * too), or the whole text when there is none. */
        auth = auth ? auth + 3 : url;
        for (;;) {
                const char *end = auth + strcspn(auth, "/?#"), *at = NULL, *next;

                for (const char *q = auth; q < end; q++)
                        if (*q == '@')
                                at = q;
                if (at && at >= p) {
                        append(out, outlen, &o, p, (size_t)(auth > p ? auth - p : 0));
                        append(out, outlen, &o, "***", 3);
                        p = at;
                }
                next = strstr(auth, "://");
                if (!next)
                        break;
                auth = next + 3;
        }
        append(out, outlen, &o, p, strlen(p));
        out[o] = '\0';
        return out;
}
