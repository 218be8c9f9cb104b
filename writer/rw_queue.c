// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rw_queue.c - bounded FIFO ring of samples (see rw_queue.h).
 */
#include "rw_queue.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

struct rw_queue {
        pthread_mutex_t lock;
        pthread_cond_t cond;
        struct rw_sample *ring;
        size_t cap, head, len;
        bool kicked;
};

struct rw_queue *rw_queue_new(size_t capacity)
{
        struct rw_queue *q;
        pthread_condattr_t attr;

        if (!capacity)
                return NULL;
        q = calloc(1, sizeof(*q));
        if (!q)
                return NULL;
        q->ring = calloc(capacity, sizeof(*q->ring));
        if (!q->ring) {
                free(q);
                return NULL;
        }
        q->cap = capacity;
        pthread_mutex_init(&q->lock, NULL);
        /* Deadlines are monotonic: a clock step must not stall a flush. */
        pthread_condattr_init(&attr);
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        pthread_cond_init(&q->cond, &attr);
        pthread_condattr_destroy(&attr);
        return q;
}

void rw_queue_free(struct rw_queue *q)
{
        if (!q)
                return;
        for (size_t i = 0; i < q->len; i++)
                free(q->ring[(q->head + i) % q->cap].series);
        pthread_mutex_destroy(&q->lock);
        pthread_cond_destroy(&q->cond);
        free(q->ring);
        free(q);
}

int rw_queue_push(struct rw_queue *q, const struct rw_sample *s)
{
        int err = 0;

        pthread_mutex_lock(&q->lock);
        if (q->len == q->cap) {
                err = -ENOSPC;
        } else {
                q->ring[(q->head + q->len) % q->cap] = *s;
                q->len++;
                pthread_cond_signal(&q->cond);
        }
        pthread_mutex_unlock(&q->lock);
        return err;
}

size_t rw_queue_pop(struct rw_queue *q, struct rw_sample *out, size_t max)
{
        size_t n;

        pthread_mutex_lock(&q->lock);
        n = q->len < max ? q->len : max;
        for (size_t i = 0; i < n; i++)
                out[i] = q->ring[(q->head + i) % q->cap];
        q->head = (q->head + n) % q->cap;
        q->len -= n;
        pthread_mutex_unlock(&q->lock);
        return n;
}

size_t rw_queue_len(struct rw_queue *q)
{
        size_t n;

        pthread_mutex_lock(&q->lock);
        n = q->len;
        pthread_mutex_unlock(&q->lock);
        return n;
}

size_t rw_queue_wait(struct rw_queue *q, size_t want, const struct timespec *deadline)
{
        size_t n;

        pthread_mutex_lock(&q->lock);
        while (q->len < want && !q->kicked)
                if (pthread_cond_timedwait(&q->cond, &q->lock, deadline) == ETIMEDOUT)
                        break;
        q->kicked = false;
        n = q->len;
        pthread_mutex_unlock(&q->lock);
        return n;
}

void rw_queue_kick(struct rw_queue *q)
{
        pthread_mutex_lock(&q->lock);
        q->kicked = true;
        pthread_cond_broadcast(&q->cond);
        pthread_mutex_unlock(&q->lock);
}
