/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rw_spool.h - crash-safe on-disk spool of finished request bodies for one
 * endpoint, replayed in order (the vmagent model, much smaller).
 *
 * Layout of the spool directory:
 *   lock                    flock()ed while open: one process per directory
 *   <16 hex digits>.spool   segments, appended in order, oldest first
 *   cursor                  "<segment> <offset>\n": where replay goes on
 * A record is a 24-byte little-endian header
 *   magic "PRW1" | payload length u32 | samples u32 | CRC-32 u32 |
 *   created (ms since the epoch) i64
 * then the payload; the CRC covers length, samples, created and payload.
 *
 * fsync policy: with `fsync` on (the default) every appended record is
 * fdatasync()ed before append returns, so a record that was spooled survives
 * a crash or power loss; a torn record at the end of the newest segment is
 * cut off at the next open. The cursor is replaced with rename() after each
 * record sent but not fsync()ed: after a power loss the last records sent
 * may be sent again (exact duplicates, which Prometheus ignores), never
 * lost.
 *
 * A full disk: an append that does not fit fails with the real errno
 * (ENOSPC) and leaves no partial record; an open whose cursor cannot be
 * written still succeeds (replay frees space) and creates no new segment
 * until the cursor is written.
 *
 * Limits: past max_bytes the oldest whole segments are removed; records
 * older than max_age_ms are skipped at replay; a corrupt record ends its
 * segment. Each is counted in the stats (samples when known) and logged.
 */
#ifndef PCIESCOPE_RW_SPOOL_H
#define PCIESCOPE_RW_SPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RW_SPOOL_HEADER     24
#define RW_SPOOL_MAX_RECORD (64u << 20)

typedef void (*rw_log_fn)(void *ctx, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Log levels, same numbers as syslog's. */
enum { RW_LOG_ERR = 3, RW_LOG_WARNING = 4, RW_LOG_NOTICE = 5, RW_LOG_INFO = 6 };

struct rw_spool_opts {
        const char *dir;
        uint64_t max_bytes;     /* 0: no limit */
        int64_t max_age_ms;     /* 0: no limit */
        uint64_t segment_bytes; /* 0: max_bytes / 8, at least 64 KiB */
        bool fsync;
        rw_log_fn log;
        void *log_ctx;
};

struct rw_spool_stats {
        uint64_t bytes;      /* unread bytes on disk, headers included */
        uint64_t disk_bytes; /* the segments' size on disk: read records stay
                                until their whole segment is read and a newer
                                one exists */
        uint64_t records;    /* unread records */
        uint64_t dropped_size_samples, dropped_age_samples, dropped_corrupt_records;
};

struct rw_spool;

/* Opens (creating the directory) and recovers the spool. On error `err`
 * says what and where. */
int rw_spool_open(const struct rw_spool_opts *o, struct rw_spool **out, char *err, size_t errlen);
void rw_spool_close(struct rw_spool *sp);
/* Appends one record; -EFBIG when it is larger than half of max_bytes. */
int rw_spool_append(struct rw_spool *sp, const void *data, size_t len, uint32_t samples,
                    int64_t now_ms);
/* The oldest unread record (malloc'ed into *data), skipping aged and
 * corrupt ones. 0, -ENOENT when empty, other negative errno on I/O error. */
int rw_spool_peek(struct rw_spool *sp, int64_t now_ms, void **data, size_t *len, uint32_t *samples);
/* Marks the record returned by the last peek as sent. */
int rw_spool_consume(struct rw_spool *sp);
bool rw_spool_empty(struct rw_spool *sp);
void rw_spool_get_stats(struct rw_spool *sp, struct rw_spool_stats *st);

uint32_t rw_crc32(uint32_t crc, const void *data, size_t len);

#endif
