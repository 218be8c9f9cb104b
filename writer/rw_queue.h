/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rw_queue.h - the bounded in-memory sample queue between collectd's write
 * threads (producers, never blocked: a full queue refuses the sample) and
 * one endpoint's sender thread (consumer).
 */
#ifndef PCIESCOPE_RW_QUEUE_H
#define PCIESCOPE_RW_QUEUE_H

#include <stddef.h>
#include <time.h>

#include "rw_encode.h"

struct rw_queue;

struct rw_queue *rw_queue_new(size_t capacity);
/* Frees the queue and every sample still in it. */
void rw_queue_free(struct rw_queue *q);
/* Takes ownership of s->series on success; -ENOSPC when full. */
int rw_queue_push(struct rw_queue *q, const struct rw_sample *s);
/* Moves up to max samples (oldest first) to out; returns how many. */
size_t rw_queue_pop(struct rw_queue *q, struct rw_sample *out, size_t max);
size_t rw_queue_len(struct rw_queue *q);
/* Waits until at least `want` samples are queued, rw_queue_kick() was
 * called, or CLOCK_MONOTONIC reaches `deadline`. Returns the length. */
size_t rw_queue_wait(struct rw_queue *q, size_t want, const struct timespec *deadline);
/* Wakes the waiter once (flush, shutdown). */
void rw_queue_kick(struct rw_queue *q);

#endif
