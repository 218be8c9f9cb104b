/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rw_series.h - collectd value lists, and series that already have a
 * Prometheus name (pciescope's samples), to Prometheus series (no collectd).
 *
 * Naming follows collectd 5.12's write_prometheus for stock plugins:
 *   collectd_<plugin>_<type>_<ds>[_total]
 * (plugin left out when equal to type, ds left out when "value", _total for
 * COUNTER/DERIVE), labels <plugin>=<plugin_instance>, type=<type_instance>
 * (named <plugin> when there is no plugin instance) and instance=<host>.
 * A value list with "prom.name" meta data (our pcie plugin) is named by it
 * and labelled by its "prom.label.*" entries plus instance=<host>; a
 * series with a name of its own (rw_series_named: the exporter's and the
 * fleet's samples) is labelled the same way, by the same code.
 *
 * A finished label set is sorted by name (byte order), unique (the label
 * added last wins), has no empty values, every name is valid for
 * Remote-Write 1.0 (invalid characters become '_'), and every value is
 * valid UTF-8 (a byte that is not becomes U+FFFD).
 */
#ifndef PCIESCOPE_RW_SERIES_H
#define PCIESCOPE_RW_SERIES_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RW_MAX_LABELS    32
#define RW_LABEL_ARENA   8192
#define RW_MAX_VALUE_LEN 2048

/* Metric kinds; the numbers travel in packed series (rw_series_pack). */
enum rw_kind {
        RW_KIND_UNKNOWN = 0,
        RW_KIND_COUNTER = 1,
        RW_KIND_GAUGE = 2,
        RW_KIND_HISTOGRAM = 3,
        RW_KIND_INFO = 6,
};

/* collectd data source types, same numbers as collectd's DS_TYPE_*. */
enum rw_ds_type { RW_DS_COUNTER = 0, RW_DS_GAUGE = 1, RW_DS_DERIVE = 2, RW_DS_ABSOLUTE = 3 };

struct rw_label {
        const char *name;
        const char *value;
};

/* A label set under construction; strings are copied into its arena. */
struct rw_labelset {
        size_t n;
        struct rw_label l[RW_MAX_LABELS];
        size_t used;
        bool overflow; /* a label did not fit and was left out */
        char arena[RW_LABEL_ARENA];
};

void rw_labelset_init(struct rw_labelset *set);
/* Adds name=value (copied, name sanitised). An empty value is skipped, a
 * name starting with "__" other than __name__ is refused. 0, or -EINVAL /
 * -ENOSPC (set->overflow is then true). */
int rw_labelset_add(struct rw_labelset *set, const char *name, const char *value);
/* Sorts, drops duplicates keeping the one added last. */
void rw_labelset_finish(struct rw_labelset *set);
const char *rw_labelset_get(const struct rw_labelset *set, const char *name);

/* Writes src into dst as a valid metric name ([a-zA-Z_:][a-zA-Z0-9_:]*) or
 * label name (no ':'); an invalid character becomes '_', a leading digit
 * gets a '_' in front. Returns the length, or -ENOSPC. */
int rw_sanitize_name(char *dst, size_t size, const char *src, bool metric);
bool rw_valid_name(const char *s, bool metric);

/* write_prometheus' family name; -ENOSPC when it does not fit. */
int rw_collectd_name(char *dst, size_t size, const char *plugin, const char *type,
                     const char *ds_name, enum rw_ds_type ds_type);

/* Maps "gauge", "counter", "info", "histogram" to a kind; -EINVAL else. */
int rw_kind_parse(const char *s, enum rw_kind *kind);
/* The family of a series name: the name itself, or for a histogram the name
 * without its _bucket/_sum/_count suffix. Writes into dst. */
int rw_family_name(char *dst, size_t size, const char *name, enum rw_kind kind);

/* Rename and drop rules, applied to every series before it is queued. */
struct rw_rules;
struct rw_rules *rw_rules_new(void);
void rw_rules_free(struct rw_rules *r);
/* DropMetric: POSIX extended regex, anchored, on the final metric name. */
int rw_rules_drop_metric(struct rw_rules *r, const char *regex, char *err, size_t errlen);
/* RenameMetric: exact old name to new name. */
int rw_rules_rename_metric(struct rw_rules *r, const char *from, const char *to);
int rw_rules_rename_label(struct rw_rules *r, const char *from, const char *to);
int rw_rules_drop_label(struct rw_rules *r, const char *name);

/* One collectd value list's identity and meta data, as plain strings. */
struct rw_vl {
        const char *host, *plugin, *plugin_instance, *type, *type_instance;
        const char *prom_name; /* "prom.name" meta, or NULL */
        const char *prom_type; /* "prom.type" meta, or NULL */
        size_t n_meta;         /* "prom.label.<name>" entries */
        const char *const *meta_names;
        const char *const *meta_values;
};

/* Builds the label set (including __name__) of data source `ds_name` of
 * `vl`, after external labels and rules. Returns 1 when the series was
 * dropped by a rule, 0 when built, negative errno on bad input. */
int rw_series_build(const struct rw_vl *vl, const char *ds_name, enum rw_ds_type ds_type,
                    size_t ds_num, const struct rw_labelset *external, const struct rw_rules *rules,
                    struct rw_labelset *out, enum rw_kind *kind);

/* The label set (including __name__) of series @metric with the @n labels
 * @names=@values and instance=@instance, after external labels and rules:
 * exactly what rw_series_build makes of a value list with prom.name @metric,
 * prom.label.<names> @values and host @instance. Returns 1 when the series
 * was dropped by a rule, 0 when built, negative errno on bad input. */
int rw_series_named(const char *metric, size_t n, const char *const *names,
                    const char *const *values, const char *instance,
                    const struct rw_labelset *external, const struct rw_rules *rules,
                    struct rw_labelset *out);

/* A packed series: one allocation holding the kind, the label count and the
 * sorted labels as NUL-terminated name/value pairs. Readers walk it with
 * rw_packed_*; the encoder points protobuf strings straight into it. */
char *rw_series_pack(const struct rw_labelset *set, enum rw_kind kind, size_t *len);
static inline enum rw_kind rw_packed_kind(const char *p)
{
        return (enum rw_kind)(uint8_t)p[0];
}
static inline size_t rw_packed_nlabels(const char *p)
{
        return (uint8_t)p[1];
}
static inline const char *rw_packed_first(const char *p)
{
        return p + 2;
}

#endif
