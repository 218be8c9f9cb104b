/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rw_http.h - what to do with a Remote-Write answer, and when to try again
 * (pure; the rules of the spec and of Prometheus' sender):
 *   2xx done; 5xx, network errors and (when enabled) 429 retried with a
 *   capped exponential backoff that honours Retry-After; any other status
 *   dropped, with the reason read from the answer's body (a series limit,
 *   a rate limit, ...: the bounded reason label of the dropped-samples
 *   counter).
 */
#ifndef PCIESCOPE_RW_HTTP_H
#define PCIESCOPE_RW_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

/* RetryAfterMax: the longest pause a receiver's Retry-After gets (s). */
#define RW_RETRY_AFTER_MAX_DEFAULT 60.0
#define RW_RETRY_AFTER_MAX_LIMIT   3600.0

enum rw_verdict { RW_VERDICT_SENT, RW_VERDICT_RETRY, RW_VERDICT_DROP };

/* status 0 means no HTTP answer (connection refused, timeout, TLS error). */
enum rw_verdict rw_classify(long status, bool retry429);

/* Why a receiver refused samples for good, read from its answer: the
 * status and the start of its body (what the endpoint keeps of it, 1 KiB).
 * Mimir's error ids (err-mimir-*) and phrases of Mimir, Cortex and
 * Prometheus (docs/remote_write.md has the table). A bounded set: the reason label of
 * remote_write_samples_dropped_total. */
enum rw_refusal {
        RW_REFUSAL_OTHER,         /* any other refusal (the reason http_4xx) */
        RW_REFUSAL_SERIES_LIMIT,  /* a per-tenant or per-metric series (or metadata) limit */
        RW_REFUSAL_RATE_LIMIT,    /* 429, or a rate limit named in the body */
        RW_REFUSAL_LABEL_LIMIT,   /* too many labels, a label name or value too long */
        RW_REFUSAL_OUT_OF_ORDER,  /* older than the series' newest sample, or a duplicate */
        RW_REFUSAL_OUT_OF_BOUNDS, /* outside the receiver's time window (too old, future) */
};

/* body: n bytes, need not be terminated (NULL with n 0: no body). */
enum rw_refusal rw_refusal_reason(long status, const char *body, size_t n);

/* rw_classify() with the answer's body considered: a 429 whose body names
 * a limit that time does not clear (a series or metadata limit: Cortex
 * answered those with 429 before cortexproject/cortex#3827) is dropped even
 * with retry429, since retrying it would stall the endpoint for ever. */
enum rw_verdict rw_classify_answer(long status, bool retry429, const char *body, size_t n);

/* Parses a Retry-After value: delta-seconds (at most 10 digits) or an
 * IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT"), relative to `now`. 0 and
 * *seconds, the receiver's value as it is (the caller caps it: see
 * rw_retry_after_cap), or -EINVAL for anything else, a date in the past
 * included (the normal backoff applies then). */
int rw_parse_retry_after(const char *value, time_t now, double *seconds);

/* The pause a receiver's Retry-After of @asked seconds gets: at most @max
 * (RetryAfterMax), so that one answer cannot park the endpoint for a day. */
double rw_retry_after_cap(double asked, double max);

/* How long to sleep before the next attempt and what the backoff becomes:
 * without Retry-After (retry_after <= 0) the sleep is the current backoff
 * and the next one doubles; with it, the sleep is Retry-After and the next
 * backoff twice that; the backoff is always kept within [min, max]. */
double rw_backoff(double *backoff, double retry_after, double min, double max);

/* Copies n bytes of text from outside (a receiver's answer, curl's error
 * message) for a log line: control characters, DEL and backslash become
 * \n \r \t \\ or \xHH, so the text cannot forge log lines or send
 * terminal escapes. Always terminated; cut (never mid-escape) when out is
 * too small. Returns out. */
char *rw_log_escape(const char *in, size_t n, char *out, size_t outlen);

/* Copies a URL for a log line with its user information hidden: a
 * "user:password@" before the host becomes "***@", whether or not the URL
 * is otherwise valid, and in every "scheme://" of the text (a value that
 * holds a URL after some typo). */
char *rw_redact_url(const char *url, char *out, size_t outlen);

#endif
