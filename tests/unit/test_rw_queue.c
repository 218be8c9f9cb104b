// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_rw_queue.c - the bounded sample queue: FIFO order across the ring's
 * wrap, refusal (not blocking) when full, wait with deadline and kick, and
 * several producer threads against one consumer losing nothing and keeping
 * each producer's order.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <errno.h>
#include <pthread.h>

#include "rw_queue.h"

static struct rw_sample mk(int i)
{
        struct rw_sample s = {.series = malloc(4), .value = i, .ts_ms = i};

        return s;
}

static struct timespec in_ms(long ms)
{
        struct timespec t;

        clock_gettime(CLOCK_MONOTONIC, &t);
        t.tv_nsec += ms * 1000000L;
        t.tv_sec += t.tv_nsec / 1000000000L;
        t.tv_nsec %= 1000000000L;
        return t;
}

static double now_s(void)
{
        struct timespec t;

        clock_gettime(CLOCK_MONOTONIC, &t);
        return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static void test_fifo_full_wrap(void **state)
{
        struct rw_queue *q = rw_queue_new(4);
        struct rw_sample out[8], s;
        int next = 0;

        assert_null(rw_queue_new(0));
        for (int round = 0; round < 5; round++) {
                for (int i = 0; i < 4; i++) {
                        s = mk(round * 4 + i);
                        assert_int_equal(rw_queue_push(q, &s), 0);
                }
                s = mk(-1);
                assert_int_equal(rw_queue_push(q, &s), -ENOSPC);
                free(s.series);
                assert_int_equal(rw_queue_len(q), 4);
                /* Pop in two uneven parts so head moves around the ring. */
                assert_int_equal(rw_queue_pop(q, out, 3), 3);
                assert_int_equal(rw_queue_pop(q, out + 3, 8), 1);
                for (int i = 0; i < 4; i++, next++) {
                        assert_int_equal(out[i].ts_ms, next);
                        free(out[i].series);
                }
        }
        assert_int_equal(rw_queue_pop(q, out, 8), 0);
        s = mk(99);
        rw_queue_push(q, &s);
        rw_queue_free(q); /* frees what is left */
}

static void test_wait(void **state)
{
        struct rw_queue *q = rw_queue_new(10);
        struct timespec dl = in_ms(100);
        double t0 = now_s();
        struct rw_sample s = mk(1);

        assert_int_equal(rw_queue_wait(q, 1, &dl), 0);
        assert_true(now_s() - t0 >= 0.09);
        rw_queue_push(q, &s);
        t0 = now_s();
        dl = in_ms(2000);
        assert_int_equal(rw_queue_wait(q, 1, &dl), 1); /* already there */
        assert_true(now_s() - t0 < 0.5);
        rw_queue_kick(q);
        dl = in_ms(2000);
        t0 = now_s();
        assert_int_equal(rw_queue_wait(q, 5, &dl), 1); /* kicked: no wait */
        assert_true(now_s() - t0 < 0.5);
        rw_queue_free(q);
}

#define PRODUCERS 4
#define PER       20000

struct prod {
        struct rw_queue *q;
        int id;
};

static void *producer(void *arg)
{
        struct prod *p = arg;
        struct rw_queue *q = p->q;

        for (int i = 0; i < PER; i++) {
                struct rw_sample s = mk(i);

                s.value = p->id; /* ts_ms: the producer's own sequence */

                while (rw_queue_push(q, &s) == -ENOSPC)
                        ; /* spin: the test wants every sample through */
        }
        return NULL;
}

static void test_threads(void **state)
{
        struct rw_queue *q = rw_queue_new(1000);
        pthread_t t[PRODUCERS];
        struct rw_sample out[256];
        long total = 0;
        struct prod p[PRODUCERS];
        int64_t next[PRODUCERS] = {0};

        for (int i = 0; i < PRODUCERS; i++) {
                p[i] = (struct prod){q, i};
                pthread_create(&t[i], NULL, producer, &p[i]);
        }
        while (total < PRODUCERS * PER) {
                struct timespec dl = in_ms(50);
                size_t n;

                rw_queue_wait(q, 1, &dl);
                n = rw_queue_pop(q, out, 256);
                for (size_t i = 0; i < n; i++) {
                        int id = (int)out[i].value;

                        /* FIFO: each producer's samples come out in order. */
                        assert_true(id >= 0 && id < PRODUCERS);
                        assert_int_equal(out[i].ts_ms, next[id]);
                        next[id]++;
                        free(out[i].series);
                }
                total += (long)n;
        }
        for (int i = 0; i < PRODUCERS; i++)
                pthread_join(t[i], NULL);
        assert_int_equal(total, PRODUCERS * PER);
        assert_int_equal(rw_queue_len(q), 0);
        rw_queue_free(q);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_fifo_full_wrap),
            cmocka_unit_test(test_wait),
            cmocka_unit_test(test_threads),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
