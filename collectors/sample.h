/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sample.h - the neutral sample every source produces, sample sets, and the
 * one emitter kit the sources build their samples with.
 *
 * A sample is one value of a metric family with its labels, nothing more;
 * hosts (the collectd plugin, the CLI, ...) turn samples into whatever
 * they speak (the collectd plugin derives its identity from the family and
 * the labels: plugin/pcie_identity.h). This is the bottom layer of
 * collectors/: it includes nothing else of the project, so every source,
 * the engine and every host can use it without pulling in a collector.
 */
#ifndef PCIESCOPE_SAMPLE_H
#define PCIESCOPE_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum pcie_metric_kind {
        PCIE_METRIC_GAUGE,
        PCIE_METRIC_COUNTER, /* monotonic since the source started */
        PCIE_METRIC_INFO,    /* gauge with value 1 carrying labels */
        /* Monotonic, but fractional (seconds of CPU or counting time): the
         * value is in .gauge, collectd sees a gauge, Prometheus a counter. */
        PCIE_METRIC_FLOAT_COUNTER,
        /* One series of a Prometheus histogram: .metric ends in _bucket
         * (with an "le" label), _sum or _count; cumulative since the
         * collector started; the value is in .gauge (collectd sees a gauge,
         * prom.type says "histogram"). */
        PCIE_METRIC_HISTOGRAM,
};
/* "gauge", "counter" (both counter kinds), "info", "histogram" */
const char *pcie_metric_kind_name(enum pcie_metric_kind kind);

/*
 * A metric family: one row of metrics/families.spec. The table of every
 * family (pcie_families[], PCIE_FAM_<NAME> for pcie_<name>) is made from
 * the spec at build time (pcie_families.h); sources pass one to
 * sample_init, hosts read what they need of it (the collectd plugin its
 * data set, the writers HELP and UNIT).
 */
struct pcie_family {
        const char *name; /* Prometheus family name: counters end in _total */
        enum pcie_metric_kind kind;
        const char *unit;          /* OpenMetrics unit, "" for a plain count */
        const char *help;          /* one line */
        const char *collectd_type; /* data set of the pcie plugin, or NULL */
        /* A histogram's series names (NULL for other kinds). */
        const char *bucket, *sum, *count;
};

/*
 * How many series a source publishes (the Detail option; docs/metrics.md
 * has the budget of each level). DEFAULT is 0 so that options set up by
 * memset() or a designated initializer get the fleet default.
 *   BASIC    what the alert rules and the fleet overview need;
 *   DEFAULT  adds per-endpoint bandwidth, TLP length, PTT requesters and
 *            quantiles, AER counters per error type once they count, and
 *            the MPS policy predictions that would change something:
 *            at most 1,500 series on the simulated 2-socket Kunpeng 930;
 *   FULL     every series: raw PMU and IIO counters, coverage per
 *            measurement, every AER type and policy, both PTT latency
 *            histograms.
 */
enum pcie_detail {
        PCIE_DETAIL_BASIC = -1,
        PCIE_DETAIL_DEFAULT = 0,
        PCIE_DETAIL_FULL = 1,
};
/* "basic", "default", "full" */
const char *pcie_detail_name(enum pcie_detail detail);
/* The level called @name (case-insensitive). 0 or -EINVAL. */
int pcie_detail_parse(const char *name, enum pcie_detail *out);

/* Room for a source's own labels plus the ones a host adds (simulated). */
#define PCIE_SAMPLE_MAX_LABELS 16

struct pcie_label {
        const char *name;
        const char *value;
};

struct pcie_sample {
        const struct pcie_family *family;
        /* The series' Prometheus name: the family's, or for a histogram its
         * _bucket, _sum or _count series. */
        const char *metric;
        enum pcie_metric_kind kind; /* the family's */
        double gauge;               /* every kind but COUNTER */
        uint64_t counter;           /* COUNTER */
        size_t label_count;
        struct pcie_label labels[PCIE_SAMPLE_MAX_LABELS];
};

/* The value of label @name of @s, or NULL. */
const char *pcie_sample_label(const struct pcie_sample *s, const char *name);

/* Return non-zero to stop the producer (it returns that value). */
typedef int (*pcie_emit_fn)(void *ctx, const struct pcie_sample *sample);

/* ---- sample sets: owned lists of samples ---- */

struct sample_chunk;

struct sample_set {
        size_t count, cap;
        struct pcie_sample *samples;
        /* String storage: chunks that never move once allocated. */
        struct sample_chunk *chunks;
};

#define SAMPLE_SET_INIT                                                                            \
        {                                                                                          \
                0                                                                                  \
        }

/* Appends a deep copy of @s. Returns 0 or -ENOMEM (the set is unchanged). */
int sample_set_add(struct sample_set *set, const struct pcie_sample *s);

/*
 * sample_set_add_label - adds label @name = @value to every sample of the
 * set (a host's label such as simulated="<machine>"). The strings are not
 * copied: they must outlive the set's contents. Samples already full keep
 * their labels.
 */
void sample_set_add_label(struct sample_set *set, const char *name, const char *value);

/* Forgets all samples; keeps the memory for the next interval. */
void sample_set_clear(struct sample_set *set);

void sample_set_free(struct sample_set *set);

/* Swaps the contents of two sets (hand-over between threads). */
void sample_set_swap(struct sample_set *a, struct sample_set *b);

/* ---- the emitter kit ---- */

/*
 * A source builds each sample on the stack (sample_init, sample_label) and
 * hands it to sample_emit, which copies it into a set or passes it to a
 * callback, and keeps the first failure so that one sample that could not
 * be stored never stops the others.
 */
struct sample_emitter {
        struct sample_set *set; /* samples are copied here, or else */
        pcie_emit_fn fn;        /* handed to this callback */
        void *ctx;
        int err; /* the first failure: -ENOMEM or the callback's value */
};

/* A sample of @family (PCIE_FAM_...) with no labels and value 0. */
void sample_init(struct pcie_sample *s, const struct pcie_family *family);

/* Makes @s a sample of @family, keeping its labels and value (a source's
 * companion series: the cycles of a latency in seconds...). */
void sample_set_family(struct pcie_sample *s, const struct pcie_family *family);

/* Adds a label; a NULL or empty value is no label (as in Prometheus), and
 * a full sample keeps the labels it has. */
void sample_label(struct pcie_sample *s, const char *name, const char *value);

/* Returns 0, or the failure (also kept in em->err when it is the first). */
int sample_emit(struct sample_emitter *em, const struct pcie_sample *s);

#endif /* PCIESCOPE_SAMPLE_H */
