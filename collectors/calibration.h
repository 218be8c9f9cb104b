/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * calibration.h - the arithmetic of `pciescope calibrate`: from counts
 * measured over repeats to the hidden units of the HiSilicon PCIe PMU and
 * PTT device, each with its spread and a verdict (docs/real-hardware.md).
 *
 * Pure: numbers in, numbers out. engine/calibrate.c takes the
 * measurements through the seam; this module decides what they say.
 *
 *   flux unit      bytes per *_flux count: the known bytes of a load over
 *                  the flux counts it added (idle baseline subtracted)
 *   time clock     *_time counts per second the counter ran
 *   PTT clock      Time-field ticks per second of a trace window
 *   PTT time mode  delta (ticks since the previous entry) or absolute (a
 *                  free-running counter): a free-running counter rises
 *                  from entry to entry, deltas rise about half the time
 *   latency clock  PMU latency cycles per TLP over the PTT-measured
 *                  request -> completion time of the same TLPs
 */
#ifndef PCIESCOPE_CALIBRATION_H
#define PCIESCOPE_CALIBRATION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CALIB_MAX_REPEATS 32
/* Relative spread (max - min over the median) up to which repeats agree. */
#define CALIB_TOLERANCE 0.02
/* A value needs at least this many usable repeats, and more than half of
 * the repeats asked for: one or two repeats have no spread to speak of,
 * and a value that most repeats could not give is not trusted. */
#define CALIB_MIN_REPEATS 3
/* The least load a flux repeat counts: 64 MiB moved (it outlasts the 10 ms
 * in which the counters are read around it) and 1000 flux counts added
 * (the count is then known to 0.1 %, a twentieth of the tolerance). */
#define CALIB_MIN_LOAD_BYTES (64ull << 20)
#define CALIB_MIN_COUNTS     1000
/* The least a trace window counts for the latency clock: reads traced
 * and reads the PMU counted. */
#define CALIB_MIN_READS 100
/*
 * Plausible ranges of the hidden units, for what calibrate finds, what a
 * calibration file holds and the options that set them (FluxUnit,
 * LatencyClock, TraceClock). A flux count is at least one byte and at
 * most one TLP's largest payload (4096 bytes, PCIe's Max_Payload_Size);
 * a counter clock of PCIe logic runs between 1 MHz and 10 GHz (no
 * controller clocks outside; the defaults are 100 MHz and 1 GHz).
 */
#define CALIB_FLUX_UNIT_MIN 1.0
#define CALIB_FLUX_UNIT_MAX 4096.0
#define CALIB_CLOCK_MIN_HZ  1e6
#define CALIB_CLOCK_MAX_HZ  1e10

/* Distinct reasons a value keeps for its dropped repeats. */
#define CALIB_MAX_DROP_REASONS 4

enum calib_verdict {
        CALIB_CONSISTENT,     /* repeats agree within the tolerance */
        CALIB_INCONSISTENT,   /* they do not: something else moved the counts */
        CALIB_NOT_MEASURABLE, /* no usable repeat (why says) */
};
/* "consistent", "inconsistent", "not measurable" */
const char *calib_verdict_name(enum calib_verdict v);

/* One quantity over the repeats. */
struct calib_value {
        enum calib_verdict verdict;
        double value;   /* the median of the repeats */
        double spread;  /* (max - min) / median, 0 for one repeat */
        size_t repeats; /* usable repeats: samples[] */
        double samples[CALIB_MAX_REPEATS];
        size_t asked;   /* repeats asked for (calib_value_finish) */
        size_t dropped; /* repeats that gave nothing usable */
        struct {
                const char *why; /* a string literal */
                size_t count;
        } drops[CALIB_MAX_DROP_REASONS];
        char why[300]; /* the reason when not consistent ("" otherwise) */
};

/* Starts an empty value (not measurable, why = @why until a sample comes). */
void calib_value_init(struct calib_value *v, const char *why);
/* Adds one repeat's result; one not finite or <= 0 is dropped ("the
 * counts gave no number"), one past CALIB_MAX_REPEATS ignored. */
void calib_value_add(struct calib_value *v, double sample);
/* Counts one repeat left out, for @why (a string literal: repeats with the
 * same reason are counted together; past CALIB_MAX_DROP_REASONS distinct
 * reasons the last one holds the rest as "other reasons"). */
void calib_value_drop(struct calib_value *v, const char *why);
/*
 * calib_value_finish - median, spread and verdict against @tolerance, of
 * @asked repeats (the usable and dropped ones count when more). Consistent
 * needs at least CALIB_MIN_REPEATS usable repeats, more than half of those
 * asked, within @tolerance; fewer usable repeats leave the value not
 * measurable (its median kept, for people) with why saying how many were
 * dropped and why. With no sample the caller's why is kept if it set one.
 */
void calib_value_finish(struct calib_value *v, double tolerance, size_t asked);
/* A consistent @v outside @min..@max (@unit: "bytes per count", "Hz")
 * becomes not measurable, saying so: a file with it could not be read. */
void calib_value_check_range(struct calib_value *v, double min, double max, const char *unit);
/* "2 of 5 repeats dropped: 2 load too small (...)" into @buf, or "" when
 * none was dropped. */
void calib_value_drops_text(const struct calib_value *v, char *buf, size_t size);
/* @x in at most @width characters (the table's columns): "%.*g" with the
 * most significant digits that fit, or "-" for a NaN. Returns @buf. */
const char *calib_format(double x, int width, char *buf, size_t size);

/* ---- the counts of one repeat -> its result (NaN when it says nothing) ---- */

/* The counts a load added over the idle rate: @load_counts over
 * @load_seconds less @idle_counts per @idle_seconds (NaN without a load
 * time). */
double calib_flux_added(double load_counts, double load_seconds, double idle_counts,
                        double idle_seconds);
/* Bytes per flux count: @bytes moved by the load while the counter ran
 * @load_seconds and rose by @load_counts, against an idle rate of
 * @idle_counts over @idle_seconds. */
double calib_flux_unit(uint64_t bytes, double load_counts, double load_seconds, double idle_counts,
                       double idle_seconds);
/* Ticks per second of a counter that rose by @counts over @seconds. */
double calib_rate(double counts, double seconds);
/* Latency clock: @cycles over @tlps (the PMU), against @ptt_ticks over
 * @ptt_requests at @ptt_clock_hz (the trace). */
double calib_latency_clock(double cycles, double tlps, double ptt_ticks, double ptt_requests,
                           double ptt_clock_hz);

/* ---- the PTT Time field ---- */

/*
 * The Time fields of one trace window, entry by entry, read both ways:
 * as deltas (their sum, the first entry left out: it holds an absolute
 * count) and as a counter (the forward distance between neighbours,
 * modulo 2^bits).
 */
struct calib_time_obs {
        unsigned int bits;
        bool have_prev;
        uint32_t prev;
        uint64_t entries, pairs;
        uint64_t moved;        /* pairs with different Time fields */
        uint64_t rising;       /* pairs whose forward distance is in (0, 2^(bits-1)) */
        uint64_t delta_span;   /* sum of the Time fields after the first */
        uint64_t counter_span; /* sum of the forward distances */
};

void calib_time_obs_init(struct calib_time_obs *o, unsigned int bits);
void calib_time_obs_add(struct calib_time_obs *o, uint32_t time);

enum calib_time_mode {
        CALIB_TIME_DELTA,
        CALIB_TIME_ABSOLUTE,
        CALIB_TIME_UNDECIDED, /* too few entries, or rising between the two */
};

/* Share of the neighbours with different Time fields that rise (0 without
 * such pairs). Equal fields say nothing: two entries of one tick, or two
 * equal deltas. */
double calib_time_rising_share(const struct calib_time_obs *o);
/* The reading the window supports: absolute when >= 90 % of >= 100 such
 * pairs rise, delta when <= 75 % do. */
enum calib_time_mode calib_time_mode_of(const struct calib_time_obs *o);
/* The window's span in ticks under @mode. */
uint64_t calib_time_span(const struct calib_time_obs *o, enum calib_time_mode mode);

#endif /* PCIESCOPE_CALIBRATION_H */
