/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rw_endpoint.h - one Remote-Write endpoint: configuration, validation, the
 * sample queue, the spool and the sender thread (libcurl). No collectd.
 *
 * Data flow: producers (collectd's write threads) push samples into the
 * bounded queue and return at once. The sender thread takes batches of up
 * to max_samples (or what arrived within batch_deadline), encodes and
 * compresses them, and POSTs one request at a time, so every series stays
 * in order. With a spool every batch is appended to it first (write-ahead)
 * and sent from there, oldest first; a record leaves the spool only once
 * the receiver answered, and the queue goes to the spool every
 * batch_deadline even while a request or a backoff blocks the sender, so a
 * crash loses at most the samples of the last batch_deadline (+ 1 s).
 * Batches leave at the host's phase within batch_deadline, retries wait a
 * jittered backoff, and after an outage the backlog goes at a bounded share
 * of the live rate (rw_pace.h): a fleet does not act as one. A
 * spool that fails is retried every 10 s; meanwhile the endpoint works as
 * without one (a request that must be retried is kept in memory and sent
 * again after a backoff).
 */
#ifndef PCIESCOPE_RW_ENDPOINT_H
#define PCIESCOPE_RW_ENDPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rw_encode.h"
#include "rw_spool.h"

struct rw_endpoint_cfg {
        char *name;
        char *url;
        double timeout; /* s, per request and for the shutdown flush */
        char *user;     /* BasicAuth */
        char *password_file;
        char *bearer_token_file; /* re-read before each request (rotation) */
        char **headers;          /* "Name: value" */
        size_t n_headers;
        char *cacert, *client_cert, *client_key;
        bool verify_peer;
        size_t max_samples_per_send;
        double batch_deadline;           /* s */
        size_t queue_capacity;           /* samples */
        double min_backoff, max_backoff; /* s */
        double retry_after_max;          /* s: the longest Retry-After pause */
        bool retry429;
        char *spool_dir; /* NULL: no spool */
        uint64_t spool_max_bytes;
        double spool_max_age; /* s */
        bool spool_fsync;
        bool metadata;
        /* Fleet behaviour (writer/rw_pace.h). */
        char *host;          /* the phase and seed key: collectd's Hostname */
        bool send_phase;     /* SendPhase: batches at the host's phase */
        double replay_share; /* ReplayShare: backlog at this share of the live rate, 0 = no limit */
        bool backoff_jitter; /* full jitter (tests and benches turn it off) */
        uint64_t jitter_seed; /* 0: from host, pid and time */
};

/* Fills the defaults (documented in docs/remote_write.md). */
void rw_endpoint_cfg_init(struct rw_endpoint_cfg *c);
void rw_endpoint_cfg_free(struct rw_endpoint_cfg *c);
/* Checks a configuration without side effects: URL syntax and scheme,
 * readable credential files, ranges, reserved headers. 0 or -EINVAL with
 * a message naming the option and value in err. */
int rw_endpoint_cfg_check(const struct rw_endpoint_cfg *c, char *err, size_t errlen);

/* Why samples were dropped. */
enum rw_drop_reason {
        RW_DROP_QUEUE_FULL,
        RW_DROP_HTTP_4XX,
        RW_DROP_SPOOL_SIZE,
        RW_DROP_SPOOL_AGE,
        RW_DROP_SPOOL_CORRUPT, /* records, the sample count is unknown */
        RW_DROP_SHUTDOWN,
        RW_DROP_ENCODE,
        /* Refused for good, the reason read from the answer (rw_http.h's
         * rw_refusal_reason; any other refusal is RW_DROP_HTTP_4XX). */
        RW_DROP_SERIES_LIMIT,
        RW_DROP_RATE_LIMIT,
        RW_DROP_LABEL_LIMIT,
        RW_DROP_OUT_OF_ORDER,
        RW_DROP_OUT_OF_BOUNDS,
        RW_DROP_NREASONS
};
const char *rw_drop_reason_name(enum rw_drop_reason r);

struct rw_endpoint_stats {
        uint64_t samples_sent, samples_failed, samples_retried;
        uint64_t dropped[RW_DROP_NREASONS];
        uint64_t requests, requests_failed;
        uint64_t queue_length, spool_bytes;
        uint64_t spool_disk_bytes;   /* the spool's segments on disk, sent records included */
        uint64_t spool_errors;       /* failed spool opens and appends */
        uint64_t retry_after_pauses; /* pauses a receiver's Retry-After asked for */
        double last_send_seconds;    /* latency of the last successful request */
        double send_seconds_total;   /* sum over successful requests */
        int64_t last_success_ms;
};

struct rw_endpoint;

/* Validates, opens the spool, creates the queue; no thread yet. */
int rw_endpoint_new(const struct rw_endpoint_cfg *c, const char *user_agent, rw_log_fn log,
                    void *log_ctx, struct rw_endpoint **out, char *err, size_t errlen);
int rw_endpoint_start(struct rw_endpoint *ep);
/* Never blocks for long: 0, or -ENOSPC (queue full: counted, series freed). */
int rw_endpoint_push(struct rw_endpoint *ep, struct rw_sample *s);
/* Asks the sender to send what is queued now. */
void rw_endpoint_flush(struct rw_endpoint *ep);
/* Sends what is left within cfg.timeout, spools (or drops and counts) the
 * rest, stops the thread and frees everything. */
void rw_endpoint_stop(struct rw_endpoint *ep);
/* Starts the shutdown flush without waiting: call it for every endpoint
 * before rw_endpoint_stop(), so that they flush at the same time and the
 * whole shutdown takes one Timeout, not one per endpoint. */
void rw_endpoint_begin_stop(struct rw_endpoint *ep);
void rw_endpoint_get_stats(struct rw_endpoint *ep, struct rw_endpoint_stats *st);
const char *rw_endpoint_name(const struct rw_endpoint *ep);

/* curl_global_init, once per process. */
int rw_global_init(void);

#endif
