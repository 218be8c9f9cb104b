/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * calibration.c - the arithmetic of `pciescope calibrate`. See
 * calibration.h.
 */
#include "calibration.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *calib_verdict_name(enum calib_verdict v)
{
        switch (v) {
        case CALIB_CONSISTENT:
                return "consistent";
        case CALIB_INCONSISTENT:
                return "inconsistent";
        default:
                return "not measurable";
        }
}

void calib_value_init(struct calib_value *v, const char *why)
{
        memset(v, 0, sizeof(*v));
        v->verdict = CALIB_NOT_MEASURABLE;
        v->value = NAN;
        snprintf(v->why, sizeof(v->why), "%s", why ? why : "");
}

void calib_value_drop(struct calib_value *v, const char *why)
{
        size_t i = 0;

        v->dropped++;
        while (i < CALIB_MAX_DROP_REASONS && v->drops[i].why && strcmp(v->drops[i].why, why))
                i++;
        if (i == CALIB_MAX_DROP_REASONS) { /* the last one holds the rest */
                i = CALIB_MAX_DROP_REASONS - 1;
                v->drops[i].why = "other reasons";
        } else if (!v->drops[i].why) {
                v->drops[i].why = why;
        }
        v->drops[i].count++;
}

void calib_value_add(struct calib_value *v, double sample)
{
        if (!isfinite(sample) || sample <= 0) {
                calib_value_drop(v, "the counts gave no number (nothing added, or no time)");
                return;
        }
        if (v->repeats == CALIB_MAX_REPEATS)
                return;
        v->samples[v->repeats++] = sample;
}

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;

        return (x > y) - (x < y);
}

void calib_value_drops_text(const struct calib_value *v, char *buf, size_t size)
{
        size_t asked = v->asked > v->repeats + v->dropped ? v->asked : v->repeats + v->dropped;
        size_t used;

        if (!size)
                return;
        buf[0] = '\0';
        if (!v->dropped)
                return;
        snprintf(buf, size, "%zu of %zu repeats dropped:", v->dropped, asked);
        for (size_t i = 0; i < CALIB_MAX_DROP_REASONS && v->drops[i].why; i++) {
                used = strlen(buf);
                snprintf(buf + used, size - used, "%s %zu %s", i ? "," : "", v->drops[i].count,
                         v->drops[i].why);
        }
        if (asked > v->repeats + v->dropped) { /* a failure ended the phase */
                used = strlen(buf);
                snprintf(buf + used, size - used, "; %zu not run", asked - v->repeats - v->dropped);
        }
}

void calib_value_finish(struct calib_value *v, double tolerance, size_t asked)
{
        double sorted[CALIB_MAX_REPEATS];
        char drops[200];
        size_t n = v->repeats;

        if (asked < n + v->dropped)
                asked = n + v->dropped;
        v->asked = asked;
        calib_value_drops_text(v, drops, sizeof(drops));
        if (n == 0) { /* not measurable, with the caller's why */
                if (!v->why[0])
                        snprintf(v->why, sizeof(v->why), "%s", drops[0] ? drops : "not measured");
                return;
        }
        memcpy(sorted, v->samples, n * sizeof(sorted[0]));
        qsort(sorted, n, sizeof(sorted[0]), cmp_double);
        v->value = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
        v->spread = (sorted[n - 1] - sorted[0]) / v->value;
        if (n < CALIB_MIN_REPEATS || 2 * n <= asked) {
                v->verdict = CALIB_NOT_MEASURABLE;
                snprintf(v->why, sizeof(v->why),
                         "only %zu usable repeat%s of %zu: at least %d, and more than half, are "
                         "needed%s%s",
                         n, n == 1 ? "" : "s", asked, CALIB_MIN_REPEATS, drops[0] ? "; " : "",
                         drops);
        } else if (v->spread <= tolerance) {
                v->verdict = CALIB_CONSISTENT;
                v->why[0] = '\0';
        } else {
                v->verdict = CALIB_INCONSISTENT;
                snprintf(v->why, sizeof(v->why),
                         "the %zu repeats differ by %.1f %% (more than %.1f %%): other traffic or "
                         "a clock that is not steady moved the counts",
                         n, v->spread * 100, tolerance * 100);
        }
}

void calib_value_check_range(struct calib_value *v, double min, double max, const char *unit)
{
        if (v->verdict != CALIB_CONSISTENT || (v->value >= min && v->value <= max))
                return;
        v->verdict = CALIB_NOT_MEASURABLE;
        snprintf(v->why, sizeof(v->why),
                 "%.6g is outside the plausible range %g..%g %s: not applied (the counters did "
                 "not count what calibrate assumes)",
                 v->value, min, max, unit);
}

const char *calib_format(double x, int width, char *buf, size_t size)
{
        if (!size)
                return buf;
        if (!isfinite(x)) {
                snprintf(buf, size, "%s", isnan(x) ? "-" : x > 0 ? "inf" : "-inf");
                return buf;
        }
        /* The most significant digits that fit; "%.1g" of a finite double
         * takes at most 8 characters ("-1e-300"), the least a column has. */
        for (int digits = 6; digits >= 1; digits--) {
                int n = snprintf(buf, size, "%.*g", digits, x);

                if (n >= 0 && n <= width && (size_t)n < size)
                        break;
        }
        return buf;
}

double calib_flux_added(double load_counts, double load_seconds, double idle_counts,
                        double idle_seconds)
{
        double baseline = idle_seconds > 0 ? idle_counts / idle_seconds * load_seconds : 0;

        if (!(load_seconds > 0))
                return NAN;
        return load_counts - baseline;
}

double calib_flux_unit(uint64_t bytes, double load_counts, double load_seconds, double idle_counts,
                       double idle_seconds)
{
        double added = calib_flux_added(load_counts, load_seconds, idle_counts, idle_seconds);

        if (bytes == 0 || !(added > 0))
                return NAN;
        return (double)bytes / added;
}

double calib_rate(double counts, double seconds)
{
        return seconds > 0 && counts > 0 ? counts / seconds : NAN;
}

double calib_latency_clock(double cycles, double tlps, double ptt_ticks, double ptt_requests,
                           double ptt_clock_hz)
{
        if (!(tlps > 0) || !(cycles > 0) || !(ptt_ticks > 0) || !(ptt_requests > 0) ||
            !(ptt_clock_hz > 0))
                return NAN;
        double seconds = ptt_ticks / ptt_requests / ptt_clock_hz;

        return cycles / tlps / seconds;
}

void calib_time_obs_init(struct calib_time_obs *o, unsigned int bits)
{
        memset(o, 0, sizeof(*o));
        o->bits = bits ? (bits > 32 ? 32 : bits) : 32;
}

void calib_time_obs_add(struct calib_time_obs *o, uint32_t time)
{
        uint64_t mask = o->bits == 32 ? 0xffffffffull : (1ull << o->bits) - 1;

        time &= (uint32_t)mask;
        o->entries++;
        if (o->have_prev) {
                uint64_t fwd = ((uint64_t)time - o->prev) & mask;

                o->pairs++;
                o->moved += fwd != 0;
                o->rising += fwd > 0 && fwd < (mask + 1) / 2;
                o->counter_span += fwd;
                o->delta_span += time;
        }
        o->have_prev = true;
        o->prev = time;
}

double calib_time_rising_share(const struct calib_time_obs *o)
{
        return o->moved ? (double)o->rising / (double)o->moved : 0;
}

enum calib_time_mode calib_time_mode_of(const struct calib_time_obs *o)
{
        double share = calib_time_rising_share(o);

        if (o->moved < 100)
                return CALIB_TIME_UNDECIDED;
        if (share >= 0.9)
                return CALIB_TIME_ABSOLUTE;
        if (share <= 0.75)
                return CALIB_TIME_DELTA;
        return CALIB_TIME_UNDECIDED;
}

uint64_t calib_time_span(const struct calib_time_obs *o, enum calib_time_mode mode)
{
        return mode == CALIB_TIME_ABSOLUTE ? o->counter_span : o->delta_span;
}
