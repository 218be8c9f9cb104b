/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * perf_pmu.h - generic discovery of a dynamic perf PMU from sysfs.
 *
 * A kernel PMU publishes itself under bus/event_source/devices/<name>/:
 * `type` (the number for perf_event_attr.type), `cpumask` (the CPUs to open
 * uncore events on), `format/<field>` (which attr bits a field occupies, e.g.
 * "config1:0-3" or "config:0-7,32-35") and `events/<event>` (comma-separated
 * terms such as "config=0x10010" or "event=0x83,umask=0x04", with optional
 * `.scale` and `.unit` siblings). This module reads those files through the
 * hw_env seam and turns event names and field values into perf_event_attr
 * bits, so no PMU's layout is hard-coded (hisi_pcie, Intel uncore, ...).
 *
 * The parsers for one file's text are pure functions and exported for tests
 * and fuzzing.
 */
#ifndef PCIESCOPE_PERF_PMU_H
#define PCIESCOPE_PERF_PMU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hw_env;
struct perf_event_attr;

#define PERF_PMU_NAME_MAX    64 /* longest PMU, event or field name we accept */
#define PERF_PMU_UNIT_MAX    32 /* longest .unit string */
#define PERF_FORMAT_PIECES   8  /* bit ranges in one format field */
#define PERF_EVENT_TERMS     8  /* terms in one events/ file */
#define PERF_PMU_MAX_FORMATS 64
#define PERF_PMU_MAX_EVENTS  512

/* Which perf_event_attr word a format piece lives in. */
enum perf_config_word {
        PERF_CONFIG,  /* attr.config */
        PERF_CONFIG1, /* attr.config1 (shares the slot with bp_addr) */
        PERF_CONFIG2, /* attr.config2 (bp_len) */
        PERF_CONFIG3, /* attr.config3 (kernels with PERF_ATTR_SIZE_VER8) */
};

struct perf_format_piece {
        enum perf_config_word word;
        uint8_t lo, hi; /* inclusive bit range, lo <= hi <= 63 */
};

/* One format/<field> file: the value's bits go into the pieces in order,
 * lowest value bits into the first piece. */
struct perf_format {
        char name[PERF_PMU_NAME_MAX];
        size_t piece_count;
        struct perf_format_piece pieces[PERF_FORMAT_PIECES];
};

struct perf_event_term {
        char name[PERF_PMU_NAME_MAX];
        uint64_t value; /* a term with no "=value" means 1 */
        bool asked;     /* "=?": the user gives the value (value 0 here) */
};

/* One events/<name> file with its optional .scale/.unit/.per-pkg/.snapshot. */
struct perf_pmu_event {
        char name[PERF_PMU_NAME_MAX];
        size_t term_count;
        struct perf_event_term terms[PERF_EVENT_TERMS];
        double scale;                 /* 1.0 when there is no .scale file */
        char unit[PERF_PMU_UNIT_MAX]; /* "" when there is no .unit file */
        bool per_pkg;
        bool snapshot;
};

/*
 * perf_format_parse - parse the text of a format file ("config1:0-3",
 * "config:4", "config:0-7,32-35", trailing newline allowed).
 * Returns 0 or -EINVAL (unknown word, bad range, hi > 63, lo > hi, too many
 * pieces, overlapping pieces, trailing junk). @out->name is left as is.
 */
int perf_format_parse(const char *text, struct perf_format *out);

/* Total number of value bits the field holds (sum of the pieces). */
unsigned int perf_format_width(const struct perf_format *fmt);

/*
 * perf_format_apply - OR @value into @attr according to @fmt, clearing the
 * field's bits first. Returns 0, or -ERANGE when @value does not fit in the
 * field's width (nothing is changed then). Also -EOPNOTSUPP for a config3
 * field when the build's <linux/perf_event.h> has no config3 (before
 * PERF_ATTR_SIZE_VER8, e.g. Debian 12), and -EINVAL for a hand-made @fmt
 * whose pieces are out of range; @attr is unchanged then too.
 */
int perf_format_apply(const struct perf_format *fmt, uint64_t value, struct perf_event_attr *attr);

/* The value of the field as currently set in @attr (inverse of apply). */
uint64_t perf_format_extract(const struct perf_format *fmt, const struct perf_event_attr *attr);

/*
 * perf_event_terms_parse - parse the text of an events/ file
 * ("config=0x10010", "event=0x83,umask=0x04", "event=0xff,umask=0x20,",
 * trailing newline allowed). Values are decimal or 0x hex; a term without a
 * value means 1. Returns 0 or -EINVAL (empty term name, bad number, too
 * many terms, over-long name, junk). @out->name, scale and unit are left as
 * they are.
 */
int perf_event_terms_parse(const char *text, struct perf_pmu_event *out);

/* Parses a `cpumask`/`cpus` list ("0", "0-3,8,10-11"). Fills at most @max
 * CPUs in ascending order and returns how many the list holds (may exceed
 * @max), or -EINVAL (nothing written then). */
int perf_cpu_list_parse(const char *text, int *cpus, size_t max);

/* ---- a PMU read from sysfs ---- */

struct perf_pmu; /* opaque */

/*
 * perf_pmu_load - read bus/event_source/devices/@name/ under env->sysfs_root.
 * `type` must exist and parse; `cpumask` (or `cpus`) is optional; every
 * format/ and events/ file is read. A malformed format or events file is
 * logged through the env (naming the file) and left out; the PMU still loads.
 * Returns 0, -ENOENT (no such PMU), -EBADMSG (`type` unreadable or not a
 * number), -E2BIG (more formats/events than the limits), or -ENOMEM; also
 * -EINVAL (@name empty, too long or not one path component) and the errno
 * of a PMU directory that exists but cannot be listed (e.g. -EACCES).
 */
int perf_pmu_load(const struct hw_env *env, const char *name, struct perf_pmu **out);
void perf_pmu_free(struct perf_pmu *pmu);

/*
 * perf_pmu_list - names of the PMUs under bus/event_source/devices/ whose
 * name starts with @prefix ("" for all), sorted. *@names is a NULL-terminated
 * array the caller frees with perf_pmu_list_free(). Returns the count or a
 * negative errno (-ENOENT when the directory does not exist).
 */
int perf_pmu_list(const struct hw_env *env, const char *prefix, char ***names);
void perf_pmu_list_free(char **names);

/*
 * perf_pmu_reload_type - read the PMU's `type` again: a driver unbound and
 * bound again registers it with a new perf type. 0, -ENOENT (the PMU is
 * gone: no driver now), -EBADMSG or the errno of reading.
 */
int perf_pmu_reload_type(const struct hw_env *env, struct perf_pmu *pmu);

/*
 * perf_pmu_reload_cpus - read the PMU's `cpumask` again: it moves to
 * another CPU of the die when its CPU goes offline. Afterwards
 * perf_pmu_cpu_count() is 0 when the directory is gone or the mask is
 * empty (no CPU of the die online). 0 or -ENOMEM (the old list stays).
 */
int perf_pmu_reload_cpus(const struct hw_env *env, struct perf_pmu *pmu);

const char *perf_pmu_name(const struct perf_pmu *pmu);
uint32_t perf_pmu_type(const struct perf_pmu *pmu);

/* CPUs of `cpumask`; returns the number (0 when the file is absent). */
size_t perf_pmu_cpu_count(const struct perf_pmu *pmu);
/* The @i-th CPU, or -1. */
int perf_pmu_cpu(const struct perf_pmu *pmu, size_t i);

/* Format fields. NULL when the PMU has no such field. */
const struct perf_format *perf_pmu_format(const struct perf_pmu *pmu, const char *field);
size_t perf_pmu_format_count(const struct perf_pmu *pmu);
const struct perf_format *perf_pmu_format_at(const struct perf_pmu *pmu, size_t i);

/* Events. NULL when the running kernel does not offer @event. */
const struct perf_pmu_event *perf_pmu_event(const struct perf_pmu *pmu, const char *event);
size_t perf_pmu_event_count(const struct perf_pmu *pmu);
const struct perf_pmu_event *perf_pmu_event_at(const struct perf_pmu *pmu, size_t i);

/*
 * perf_pmu_set - set format field @field to @value in @attr.
 * Returns 0, -ENOENT (no such field on this PMU) or -ERANGE (too wide).
 */
int perf_pmu_set(const struct perf_pmu *pmu, struct perf_event_attr *attr, const char *field,
                 uint64_t value);

/*
 * perf_pmu_event_attr - fill @attr for @event: zeroes it, sets size and
 * type, and applies every term of the event through the format files (a
 * term named "config", "config1", "config2" or "config3" sets that word
 * directly, as the kernel's own event aliases do).
 * Returns 0, -ENOENT (no such event, or a term names an unknown field) or
 * -ERANGE; -EOPNOTSUPP for a config3 term or field where the build has no
 * config3 (see perf_format_apply).
 */
int perf_pmu_event_attr(const struct perf_pmu *pmu, const char *event,
                        struct perf_event_attr *attr);

/*
 * perf_pmu_read_u64 - read a numeric PMU attribute file such as `bus`,
 * `bdf_min` or `identifier` (decimal, or hex with 0x; the kernel prints
 * "%#x"). Returns 0, -ENOENT (absent), or -EBADMSG (not a number); also
 * -EINVAL for a @file that is not one path component, and other read errors
 * as they are.
 */
int perf_pmu_read_u64(const struct hw_env *env, const struct perf_pmu *pmu, const char *file,
                      uint64_t *value);

#endif /* PCIESCOPE_PERF_PMU_H */
