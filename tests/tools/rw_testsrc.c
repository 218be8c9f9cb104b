// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rw_testsrc.c - a test-only collectd input plugin for the remote_write
 * integration tests: each read n = 1, 2, ... dispatches values whose
 * content follows from n alone, so a test can check every sample that
 * reached a receiver.
 *
 *   stock-like (no meta):
 *     rwtest/gauge-answer                 42
 *     rwtest-a/derive-ops                 10 * n
 *     rwtest-b/if_octets (rx, tx)         rx = n, tx = 2 * n
 *   meta-tagged (the pcie plugin's convention):
 *     rwtest_sequence_total{seq="main"}   n          (counter)
 *     rwtest_temperature_celsius{sensor="s1",zone=""} 21.5 (gauge; the
 *                                          empty zone is not sent)
 *     rwtest_latency_seconds_bucket{le=...}, _sum, _count: a histogram that
 *       gains 100 observations per read: 10 <= 1 ms, 30 in (1 ms, 10 ms],
 *       50 in (10 ms, 100 ms], 10 above; buckets 0.001, 0.01, 0.1, +Inf
 *       hold 10n, 40n, 90n, 100n; _sum = 2.5 n, _count = 100 n.
 *     rwtest_vanishing{...} 1, only while n <= Vanish (then collectd
 *       reports it missing and remote_write sends a stale marker)
 *     rwtest_late{...} 1 at reads 1-3 and once more at read 7, stamped 1 s
 *       after read 3: a value that waited in collectd's write queue while
 *       collectd reported its series missing (its stale marker must come
 *       before this value's time, or Prometheus refuses the request)
 *     rwtest_past 1 with a timestamp two hours old, with PastSeries true
 *       (a receiver that enforces order answers 400)
 *   with Burst N (the benchmark): only N gauges rwtest-dev<i/8>/gauge-m<i%8>;
 *   NullWriter true adds a write callback that does nothing (its baseline)
 */
#include "collectd/core/daemon/collectd.h"
#include "collectd/core/daemon/plugin.h"
#include "collectd/core/utils/common/common.h"

#include <inttypes.h>
#include <strings.h>

static uint64_t n;
static int vanish = 3;
static bool past_series;
static int burst;
static bool null_writer;

static int testsrc_config(const char *key, const char *value)
{
        if (!strcasecmp(key, "Vanish"))
                vanish = atoi(value);
        else if (!strcasecmp(key, "PastSeries"))
                past_series = IS_TRUE(value);
        else if (!strcasecmp(key, "Burst"))
                burst = atoi(value);
        else if (!strcasecmp(key, "NullWriter"))
                null_writer = IS_TRUE(value);
        else
                return -1;
        return 0;
}

static void put(const char *pi, const char *type, const char *ti, value_t *v, size_t nv,
                meta_data_t *meta, cdtime_t t)
{
        value_list_t vl = VALUE_LIST_INIT;

        vl.values = v;
        vl.values_len = nv;
        vl.meta = meta;
        vl.time = t;
        sstrncpy(vl.plugin, "rwtest", sizeof(vl.plugin));
        sstrncpy(vl.plugin_instance, pi, sizeof(vl.plugin_instance));
        sstrncpy(vl.type, type, sizeof(vl.type));
        sstrncpy(vl.type_instance, ti, sizeof(vl.type_instance));
        plugin_dispatch_values(&vl);
        meta_data_destroy(meta);
}

static meta_data_t *meta(const char *name, const char *type, const char *l1, const char *v1,
                         const char *l2, const char *v2)
{
        meta_data_t *m = meta_data_create();

        meta_data_add_string(m, "prom.name", name);
        meta_data_add_string(m, "prom.type", type);
        if (l1)
                meta_data_add_string(m, l1, v1);
        if (l2)
                meta_data_add_string(m, l2, v2);
        return m;
}

static int testsrc_read(void)
{
        static const char *const le[] = {"0.001", "0.01", "0.1", "+Inf"};
        static const int per_read[] = {10, 40, 90, 100};
        cdtime_t now = cdtime();
        value_t v[2];
        char ti[32];

        n++;
        /* The benchmark's value stream: Burst stock-like gauges per read. */
        for (int i = 0; i < burst; i++) {
                char pi[32];

                snprintf(pi, sizeof(pi), "dev%d", i / 8);
                snprintf(ti, sizeof(ti), "m%d", i % 8);
                v[0].gauge = (double)(n + (uint64_t)i);
                put(pi, "gauge", ti, v, 1, NULL, now);
        }
        if (burst)
                return 0;
        v[0].gauge = 42;
        put("", "gauge", "answer", v, 1, NULL, now);
        v[0].derive = (derive_t)(10 * n);
        put("a", "derive", "ops", v, 1, NULL, now);
        v[0].derive = (derive_t)n;
        v[1].derive = (derive_t)(2 * n);
        put("b", "if_octets", "", v, 2, NULL, now);

        v[0].derive = (derive_t)n;
        put("", "derive", "sequence", v, 1,
            meta("rwtest_sequence_total", "counter", "prom.label.seq", "main", NULL, NULL), now);
        v[0].gauge = 21.5;
        put("", "gauge", "temperature", v, 1,
            meta("rwtest_temperature_celsius", "gauge", "prom.label.sensor", "s1",
                 "prom.label.zone", ""),
            now);
        for (int i = 0; i < 4; i++) {
                snprintf(ti, sizeof(ti), "latency-le%d", i);
                v[0].gauge = (double)(per_read[i] * n);
                put("", "gauge", ti, v, 1,
                    meta("rwtest_latency_seconds_bucket", "histogram", "prom.label.le", le[i], NULL,
                         NULL),
                    now);
        }
        v[0].gauge = 2.5 * (double)n;
        put("", "gauge", "latency-sum", v, 1,
            meta("rwtest_latency_seconds_sum", "histogram", NULL, NULL, NULL, NULL), now);
        v[0].gauge = 100.0 * (double)n;
        put("", "gauge", "latency-count", v, 1,
            meta("rwtest_latency_seconds_count", "histogram", NULL, NULL, NULL, NULL), now);
        if (n <= (uint64_t)vanish) {
                v[0].gauge = 1;
                put("", "gauge", "vanishing", v, 1,
                    meta("rwtest_vanishing", "gauge", "prom.label.device", "gone", NULL, NULL),
                    now);
        }
        if (n <= 3 || n == 7) {
                static cdtime_t third;

                if (n == 3)
                        third = now;
                v[0].gauge = 1;
                put("", "gauge", "late", v, 1,
                    meta("rwtest_late", "gauge", "prom.label.device", "queued", NULL, NULL),
                    n == 7 ? third + TIME_T_TO_CDTIME_T(1) : now);
        }
        if (past_series) {
                v[0].gauge = (double)n;
                put("", "gauge", "past", v, 1, meta("rwtest_past", "gauge", NULL, NULL, NULL, NULL),
                    now - TIME_T_TO_CDTIME_T(7200) + n * TIME_T_TO_CDTIME_T(1));
        }
        return 0;
}

/* The benchmark's baseline: a write callback that does nothing (without
 * any writer collectd complains about every value, which costs more). */
static int null_write(const data_set_t *ds, const value_list_t *vl, user_data_t *ud)
{
        return 0;
}

static int testsrc_init(void)
{
        if (null_writer)
                plugin_register_write("rw_testsrc_null", null_write, NULL);
        return 0;
}

/* The tests compare what arrived with how many reads there were. */
static int testsrc_shutdown(void)
{
        INFO("rw_testsrc: %" PRIu64 " reads", n);
        return 0;
}

void module_register(void)
{
        static const char *keys[] = {"Vanish", "PastSeries", "Burst", "NullWriter"};

        plugin_register_config("rw_testsrc", testsrc_config, keys, 4);
        plugin_register_init("rw_testsrc", testsrc_init);
        plugin_register_read("rw_testsrc", testsrc_read);
        plugin_register_shutdown("rw_testsrc", testsrc_shutdown);
}
