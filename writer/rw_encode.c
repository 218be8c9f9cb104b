// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rw_encode.c - WriteRequest encoding and snappy compression.
 *
 * The protobuf-c message structs live in arrays owned by the encoder and
 * reused across calls (grow only); label strings point straight into the
 * packed series, so encoding copies nothing but the wire bytes.
 */
#include "rw_encode.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <snappy-c.h>

#include "prom_catalog.h"
#include "remote.pb-c.h"
#include "rw_series.h"

#define FAMILY_MAX 256

struct family {
        uint64_t hash;
        char *name; /* owned */
        int type;
};

struct rw_encoder {
        bool metadata;
        size_t cap_ts, cap_labels;
        Prometheus__TimeSeries *ts;
        Prometheus__TimeSeries **ts_ptr;
        Prometheus__Sample *samples;
        Prometheus__Sample **sample_ptr;
        Prometheus__Label *labels;
        Prometheus__Label **label_ptr;
        /* metadata of this request: open addressing on the family hash */
        size_t cap_fam, n_fam;
        struct family *fam;
        Prometheus__MetricMetadata *md;
        Prometheus__MetricMetadata **md_ptr;
        uint8_t *raw;
        size_t cap_raw;
        uint8_t *out;
        size_t cap_out;
};

double rw_stale_nan(void)
{
        uint64_t bits = RW_STALE_NAN_BITS;
        double v;

        memcpy(&v, &bits, sizeof(v));
        return v;
}

bool rw_is_stale_nan(double v)
{
        uint64_t bits;

        memcpy(&bits, &v, sizeof(bits));
        return bits == RW_STALE_NAN_BITS;
}

struct rw_encoder *rw_encoder_new(bool metadata)
{
        struct rw_encoder *e = calloc(1, sizeof(*e));

        if (e)
                e->metadata = metadata;
        return e;
}

static void clear_families(struct rw_encoder *e)
{
        for (size_t i = 0; i < e->cap_fam; i++) {
                free(e->fam[i].name);
                e->fam[i].name = NULL;
        }
        e->n_fam = 0;
}

void rw_encoder_free(struct rw_encoder *e)
{
        if (!e)
                return;
        clear_families(e);
        free(e->fam);
        free(e->md);
        free(e->md_ptr);
        free(e->ts);
        free(e->ts_ptr);
        free(e->samples);
        free(e->sample_ptr);
        free(e->labels);
        free(e->label_ptr);
        free(e->raw);
        free(e->out);
        free(e);
}

static int grow(void **p, size_t *cap, size_t want, size_t elem)
{
        void *n;

        if (want <= *cap)
                return 0;
        n = realloc(*p, want * elem);
        if (!n)
                return -ENOMEM;
        *p = n;
        *cap = want;
        return 0;
}

static int reserve(struct rw_encoder *e, size_t n, size_t nlabels)
{
        size_t cap;
        int err = 0;

        if (n > e->cap_ts) {
                cap = e->cap_ts;
                err = grow((void **)&e->ts, &cap, n, sizeof(*e->ts));
                cap = e->cap_ts;
                err = err ?: grow((void **)&e->ts_ptr, &cap, n, sizeof(*e->ts_ptr));
                cap = e->cap_ts;
                err = err ?: grow((void **)&e->samples, &cap, n, sizeof(*e->samples));
                cap = e->cap_ts;
                err = err ?: grow((void **)&e->sample_ptr, &cap, n, sizeof(*e->sample_ptr));
                if (err)
                        return err;
                e->cap_ts = n;
        }
        if (nlabels > e->cap_labels) {
                cap = e->cap_labels;
                err = grow((void **)&e->labels, &cap, nlabels, sizeof(*e->labels));
                cap = e->cap_labels;
                err = err ?: grow((void **)&e->label_ptr, &cap, nlabels, sizeof(*e->label_ptr));
                if (err)
                        return err;
                e->cap_labels = nlabels;
        }
        return 0;
}

static uint64_t fnv1a(const char *s, size_t len)
{
        uint64_t h = 1469598103934665603ULL;

        for (size_t i = 0; i < len; i++)
                h = (h ^ (uint8_t)s[i]) * 1099511628211ULL;
        return h;
}

static int md_type(enum rw_kind k)
{
        switch (k) {
        case RW_KIND_COUNTER:
                return PROMETHEUS__METRIC_METADATA__METRIC_TYPE__COUNTER;
        case RW_KIND_GAUGE:
                return PROMETHEUS__METRIC_METADATA__METRIC_TYPE__GAUGE;
        case RW_KIND_HISTOGRAM:
                return PROMETHEUS__METRIC_METADATA__METRIC_TYPE__HISTOGRAM;
        case RW_KIND_INFO:
                return PROMETHEUS__METRIC_METADATA__METRIC_TYPE__INFO;
        default:
                return PROMETHEUS__METRIC_METADATA__METRIC_TYPE__UNKNOWN;
        }
}

/* Remembers the family of one series; bounded: past FAMILY_MAX families in
 * one request the rest go without metadata (it is advisory). */
static int note_family(struct rw_encoder *e, const char *name, enum rw_kind kind)
{
        char fam[512];
        int len = rw_family_name(fam, sizeof(fam), name, kind);
        uint64_t h;
        size_t i;

        if (len < 0 || e->n_fam >= FAMILY_MAX)
                return 0;
        if (!e->fam) {
                e->fam = calloc(FAMILY_MAX * 2, sizeof(*e->fam));
                if (!e->fam)
                        return -ENOMEM;
                e->cap_fam = FAMILY_MAX * 2;
        }
        h = fnv1a(fam, (size_t)len);
        for (i = h % e->cap_fam; e->fam[i].name; i = (i + 1) % e->cap_fam)
                if (e->fam[i].hash == h && strcmp(e->fam[i].name, fam) == 0)
                        return 0;
        e->fam[i].name = strdup(fam);
        if (!e->fam[i].name)
                return -ENOMEM;
        e->fam[i].hash = h;
        e->fam[i].type = md_type(kind);
        e->n_fam++;
        return 0;
}

static int build_metadata(struct rw_encoder *e, Prometheus__WriteRequest *req)
{
        const struct prom_family_doc *doc;
        size_t k = 0;

        if (!e->md) {
                e->md = calloc(FAMILY_MAX, sizeof(*e->md));
                e->md_ptr = calloc(FAMILY_MAX, sizeof(*e->md_ptr));
                if (!e->md || !e->md_ptr)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < e->cap_fam && k < e->n_fam; i++) {
                if (!e->fam[i].name)
                        continue;
                prometheus__metric_metadata__init(&e->md[k]);
                e->md[k].type = e->fam[i].type;
                e->md[k].metric_family_name = e->fam[i].name;
                /* The same HELP and unit as the scrape page (om_format). */
                doc = prom_catalog_find(e->fam[i].name);
                if (doc) {
                        e->md[k].help = (char *)doc->help;
                        e->md[k].unit = (char *)doc->unit;
                }
                e->md_ptr[k] = &e->md[k];
                k++;
        }
        req->n_metadata = k;
        req->metadata = e->md_ptr;
        return 0;
}

int rw_encode(struct rw_encoder *e, const struct rw_sample *s, size_t n, const uint8_t **out,
              size_t *out_len, size_t *raw_len)
{
        Prometheus__WriteRequest req = PROMETHEUS__WRITE_REQUEST__INIT;
        size_t nlabels = 0, li = 0, raw, clen;
        int err;

        for (size_t i = 0; i < n; i++)
                nlabels += rw_packed_nlabels(s[i].series);
        err = reserve(e, n, nlabels);
        if (err)
                return err;
        clear_families(e);
        for (size_t i = 0; i < n; i++) {
                Prometheus__TimeSeries *ts = &e->ts[i];
                const char *p = rw_packed_first(s[i].series);
                size_t nl = rw_packed_nlabels(s[i].series);

                prometheus__time_series__init(ts);
                ts->labels = &e->label_ptr[li];
                ts->n_labels = nl;
                for (size_t k = 0; k < nl; k++, li++) {
                        Prometheus__Label *l = &e->labels[li];

                        prometheus__label__init(l);
                        l->name = (char *)p;
                        p += strlen(p) + 1;
                        l->value = (char *)p;
                        p += strlen(p) + 1;
                        e->label_ptr[li] = l;
                        if (e->metadata && strcmp(l->name, "__name__") == 0) {
                                err = note_family(e, l->value, rw_packed_kind(s[i].series));
                                if (err)
                                        return err;
                        }
                }
                prometheus__sample__init(&e->samples[i]);
                e->samples[i].value = s[i].value;
                e->samples[i].timestamp = s[i].ts_ms;
                e->sample_ptr[i] = &e->samples[i];
                ts->samples = &e->sample_ptr[i];
                ts->n_samples = 1;
                e->ts_ptr[i] = ts;
        }
        req.timeseries = e->ts_ptr;
        req.n_timeseries = n;
        if (e->metadata && e->n_fam) {
                err = build_metadata(e, &req);
                if (err)
                        return err;
        }
        raw = prometheus__write_request__get_packed_size(&req);
        if (grow((void **)&e->raw, &e->cap_raw, raw ? raw : 1, 1))
                return -ENOMEM;
        prometheus__write_request__pack(&req, e->raw);
        clen = snappy_max_compressed_length(raw);
        if (grow((void **)&e->out, &e->cap_out, clen, 1))
                return -ENOMEM;
        if (snappy_compress((const char *)e->raw, raw, (char *)e->out, &clen) != SNAPPY_OK)
                return -EINVAL;
        *out = e->out;
        *out_len = clen;
        if (raw_len)
                *raw_len = raw;
        return 0;
}
