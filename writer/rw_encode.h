/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rw_encode.h - batches of samples to a snappy-compressed Remote-Write 1.0
 * WriteRequest (protobuf-c + snappy block format).
 *
 * One TimeSeries per sample: the queue is in arrival order, so samples of
 * one series stay in timestamp order inside a request. With metadata on,
 * each request also carries one MetricMetadata per metric family in it
 * (HISTOGRAM for _bucket/_sum/_count series of a histogram family).
 */
#ifndef PCIESCOPE_RW_ENCODE_H
#define PCIESCOPE_RW_ENCODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The stale marker: exactly this NaN, never produced by arithmetic. */
#define RW_STALE_NAN_BITS 0x7ff0000000000002ULL
double rw_stale_nan(void);
bool rw_is_stale_nan(double v);

struct rw_sample {
        char *series; /* packed label set (rw_series_pack), owned */
        double value;
        int64_t ts_ms;
};

struct rw_encoder;
struct rw_encoder *rw_encoder_new(bool metadata);
void rw_encoder_free(struct rw_encoder *e);

/* Encodes n samples. On success *out points at the compressed body (valid
 * until the next call) and *raw_len, if given, is the protobuf size.
 * 0 or -ENOMEM / -EINVAL. */
int rw_encode(struct rw_encoder *e, const struct rw_sample *s, size_t n, const uint8_t **out,
              size_t *out_len, size_t *raw_len);

#endif
