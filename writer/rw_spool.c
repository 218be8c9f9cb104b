// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rw_spool.c - the on-disk spool (format and policy in rw_spool.h).
 */
#include "rw_spool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define MAGIC 0x31575250u /* "PRW1" little-endian */

struct seg {
        uint64_t id;
        uint64_t size;    /* bytes in the file */
        uint64_t records; /* unread records known to be in it */
        uint64_t samples; /* their samples */
};

struct rw_spool {
        struct rw_spool_opts o;
        char *dir;
        int lock_fd;
        int wfd; /* the newest segment, O_APPEND; -1 until needed */
        struct seg *segs;
        size_t n, cap;
        uint64_t roff; /* read offset in segs[0] */
        uint64_t plen; /* size of the peeked record, 0 if none */
        uint32_t psamples;
        struct rw_spool_stats st;
        /* The cursor on disk may name a segment that is gone (it could not
         * be rewritten at open): no new segment until it is rewritten. */
        bool cursor_stale;
        bool sealed; /* the newest segment takes no more appends */
};

uint32_t rw_crc32(uint32_t crc, const void *data, size_t len)
{
        static uint32_t table[256];
        static int ready;
        const uint8_t *p = data;

        if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE)) {
                for (uint32_t i = 0; i < 256; i++) {
                        uint32_t c = i;

                        for (int k = 0; k < 8; k++)
                                c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
                        table[i] = c;
                }
                __atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
        }
        crc = ~crc;
        for (size_t i = 0; i < len; i++)
                crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
        return ~crc;
}

static void put32(uint8_t *p, uint32_t v)
{
        for (int i = 0; i < 4; i++)
                p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p)
{
        return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put64(uint8_t *p, uint64_t v)
{
        put32(p, (uint32_t)v);
        put32(p + 4, (uint32_t)(v >> 32));
}

static uint64_t get64(const uint8_t *p)
{
        return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

struct hdr {
        uint32_t len, samples, crc;
        int64_t created;
};

static uint32_t record_crc(const uint8_t *h, const void *payload, size_t len)
{
        uint32_t c = rw_crc32(0, h + 4, 4 + 4); /* length, samples */

        c = rw_crc32(c, h + 16, 8); /* created */
        return rw_crc32(c, payload, len);
}

/* Parses a header; -EBADMSG when it cannot be one. */
static int parse_hdr(const uint8_t *h, struct hdr *out)
{
        if (get32(h) != MAGIC)
                return -EBADMSG;
        out->len = get32(h + 4);
        out->samples = get32(h + 8);
        out->crc = get32(h + 12);
        out->created = (int64_t)get64(h + 16);
        return out->len > RW_SPOOL_MAX_RECORD ? -EBADMSG : 0;
}

static void seg_path(const struct rw_spool *sp, uint64_t id, char *buf, size_t n)
{
        snprintf(buf, n, "%s/%016" PRIx64 ".spool", sp->dir, id);
}

#define SPLOG(sp, level, ...)                                                                      \
        do {                                                                                       \
                if ((sp)->o.log)                                                                   \
                        (sp)->o.log((sp)->o.log_ctx, level, __VA_ARGS__);                          \
        } while (0)

/* Reads and checks the record at off of segment fd. Returns the payload
 * size (+ header) in *total, payload into *data when data != NULL.
 * -EBADMSG corrupt, -ENODATA truncated, other negative errno. */
static int read_record(int fd, uint64_t off, uint64_t fsize, struct hdr *h, void **data,
                       uint64_t *total)
{
        uint8_t hb[RW_SPOOL_HEADER];
        void *buf;
        ssize_t r;
        int err;

        if (fsize - off < RW_SPOOL_HEADER)
                return -ENODATA;
        r = pread(fd, hb, sizeof(hb), (off_t)off);
        if (r != (ssize_t)sizeof(hb))
                return r < 0 ? -errno : -ENODATA;
        err = parse_hdr(hb, h);
        if (err)
                return err;
        if (fsize - off - RW_SPOOL_HEADER < h->len)
                return -ENODATA;
        buf = malloc(h->len ? h->len : 1);
        if (!buf)
                return -ENOMEM;
        r = pread(fd, buf, h->len, (off_t)(off + RW_SPOOL_HEADER));
        if (r != (ssize_t)h->len) {
                free(buf);
                return r < 0 ? -errno : -ENODATA;
        }
        if (record_crc(hb, buf, h->len) != h->crc) {
                free(buf);
                return -EBADMSG;
        }
        *total = RW_SPOOL_HEADER + (uint64_t)h->len;
        if (data)
                *data = buf;
        else
                free(buf);
        return 0;
}

static int add_seg(struct rw_spool *sp, uint64_t id, uint64_t size)
{
        if (sp->n == sp->cap) {
                size_t cap = sp->cap ? sp->cap * 2 : 16;
                struct seg *g = realloc(sp->segs, cap * sizeof(*g));

                if (!g)
                        return -ENOMEM;
                sp->segs = g;
                sp->cap = cap;
        }
        sp->segs[sp->n++] = (struct seg){.id = id, .size = size};
        return 0;
}

static int cmp_seg(const void *a, const void *b)
{
        const struct seg *x = a, *y = b;

        return x->id < y->id ? -1 : x->id > y->id;
}

static bool seg_name(const char *name, uint64_t *id)
{
        char *end;

        if (strlen(name) != 16 + 6 || strcmp(name + 16, ".spool") != 0)
                return false;
        for (int i = 0; i < 16; i++)
                if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f')))
                        return false;
        *id = strtoull(name, &end, 16);
        return end == name + 16;
}

static int write_cursor(struct rw_spool *sp)
{
        char path[4096], tmp[4096], line[64];
        int fd, len;

        snprintf(path, sizeof(path), "%s/cursor", sp->dir);
        snprintf(tmp, sizeof(tmp), "%s/cursor.tmp", sp->dir);
        len = snprintf(line, sizeof(line), "%016" PRIx64 " %" PRIu64 "\n",
                       sp->n ? sp->segs[0].id : 0, sp->roff);
        fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0)
                return -errno;
        errno = 0;
        if (write(fd, line, (size_t)len) != len) {
                /* A short write of a few bytes to a new file: the disk is
                 * full. No empty or half cursor.tmp is left behind. */
                int err = errno ? -errno : -ENOSPC;

                close(fd);
                unlink(tmp);
                return err;
        }
        /* Closed once whatever close() says (Linux releases the number
         * even on an error; a second close could hit another thread's
         * newly opened file). */
        if (close(fd)) {
                int err = -errno;

                unlink(tmp);
                return err;
        }
        if (rename(tmp, path)) {
                int err = -errno;

                unlink(tmp);
                return err;
        }
        sp->cursor_stale = false;
        return 0;
}

/* Reads the cursor; missing or unparsable means "from the start". */
static void read_cursor(struct rw_spool *sp, uint64_t *id, uint64_t *off)
{
        char path[4096], line[80] = {0};
        FILE *f;

        *id = 0;
        *off = 0;
        snprintf(path, sizeof(path), "%s/cursor", sp->dir);
        f = fopen(path, "re");
        if (!f)
                return;
        if (!fgets(line, sizeof(line), f) || sscanf(line, "%16" SCNx64 " %" SCNu64, id, off) != 2) {
                SPLOG(
                    sp, RW_LOG_WARNING,
                    "remote_write: spool %s: unreadable cursor, replaying from the oldest segment",
                    path);
                *id = 0;
                *off = 0;
        }
        fclose(f);
}

/* Walks a segment's records from off: counts them, and for the newest
 * segment cuts a torn or corrupt tail (a crash during append). */
static int scan_seg(struct rw_spool *sp, struct seg *g, uint64_t off, bool newest)
{
        char path[4096];
        struct hdr h;
        uint64_t total;
        int fd, err = 0;

        seg_path(sp, g->id, path, sizeof(path));
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        while (off < g->size) {
                err = read_record(fd, off, g->size, &h, NULL, &total);
                if (err)
                        break;
                g->records++;
                g->samples += h.samples;
                off += total;
        }
        close(fd);
        if (err == -ENOMEM)
                return err;
        if (err && newest) {
                SPLOG(sp, RW_LOG_WARNING,
                      "remote_write: spool %s: %s record at offset %" PRIu64
                      " of the newest segment, cut off there",
                      path, err == -ENODATA ? "torn (a crash while appending)" : "corrupt", off);
                if (truncate(path, (off_t)off))
                        return -errno;
                /* What followed a bad record could not be read anyway;
                 * cutting it keeps new appends readable. */
                if (err == -EBADMSG)
                        sp->st.dropped_corrupt_records++;
                g->size = off;
        }
        return 0;
}

int rw_spool_open(const struct rw_spool_opts *o, struct rw_spool **out, char *err, size_t errlen)
{
        struct rw_spool *sp;
        char path[4096];
        DIR *d;
        struct dirent *de;
        uint64_t cid, coff;
        int rc;

        sp = calloc(1, sizeof(*sp));
        if (!sp)
                return -ENOMEM;
        sp->o = *o;
        sp->wfd = -1;
        sp->lock_fd = -1;
        if (!sp->o.segment_bytes) {
                sp->o.segment_bytes = o->max_bytes / 8;
                if (sp->o.segment_bytes < (64u << 10))
                        sp->o.segment_bytes = 64u << 10;
        }
        sp->dir = strdup(o->dir);
        if (!sp->dir) {
                free(sp);
                return -ENOMEM;
        }
        if (mkdir(sp->dir, 0700) && errno != EEXIST) {
                rc = -errno;
                snprintf(err, errlen, "SpoolDir \"%s\": cannot create: %s", sp->dir, strerror(-rc));
                goto fail;
        }
        snprintf(path, sizeof(path), "%s/lock", sp->dir);
        sp->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (sp->lock_fd < 0) {
                rc = -errno;
                snprintf(err, errlen, "SpoolDir \"%s\": cannot open %s: %s", sp->dir, path,
                         strerror(-rc));
                goto fail;
        }
        if (flock(sp->lock_fd, LOCK_EX | LOCK_NB)) {
                rc = -EBUSY;
                snprintf(err, errlen, "SpoolDir \"%s\": in use by another endpoint or process",
                         sp->dir);
                goto fail;
        }
        d = opendir(sp->dir);
        if (!d) {
                rc = -errno;
                snprintf(err, errlen, "SpoolDir \"%s\": %s", sp->dir, strerror(-rc));
                goto fail;
        }
        while ((de = readdir(d))) {
                uint64_t id;
                struct stat stt;

                if (!seg_name(de->d_name, &id))
                        continue;
                seg_path(sp, id, path, sizeof(path));
                if (stat(path, &stt) || !S_ISREG(stt.st_mode))
                        continue;
                rc = add_seg(sp, id, (uint64_t)stt.st_size);
                if (rc) {
                        closedir(d);
                        snprintf(err, errlen, "SpoolDir \"%s\": out of memory", sp->dir);
                        goto fail;
                }
        }
        closedir(d);
        if (sp->n) /* qsort() wants a valid pointer even for 0 elements */
                qsort(sp->segs, sp->n, sizeof(*sp->segs), cmp_seg);
        read_cursor(sp, &cid, &coff);
        /* Segments before the cursor's were sent completely. */
        while (sp->n && sp->segs[0].id < cid) {
                seg_path(sp, sp->segs[0].id, path, sizeof(path));
                unlink(path);
                memmove(sp->segs, sp->segs + 1, (sp->n - 1) * sizeof(*sp->segs));
                sp->n--;
        }
        if (sp->n && sp->segs[0].id == cid && coff <= sp->segs[0].size)
                sp->roff = coff;
        for (size_t i = 0; i < sp->n; i++) {
                rc = scan_seg(sp, &sp->segs[i], i == 0 ? sp->roff : 0, i + 1 == sp->n);
                if (rc) {
                        snprintf(err, errlen, "SpoolDir \"%s\": segment %016" PRIx64 ": %s",
                                 sp->dir, sp->segs[i].id, strerror(-rc));
                        goto fail;
                }
        }
        /* The cursor now says what was recovered: one naming a segment
         * that is gone (segments removed by hand) would otherwise make the
         * next open delete the new, lower-numbered ones unsent. */
        rc = write_cursor(sp);
        if (rc) {
                /* Not fatal (a full disk): what is spooled can still be
                 * replayed, which frees space; no segment is created
                 * before the cursor could be written (open_writer). */
                SPLOG(sp, RW_LOG_WARNING,
                      "remote_write: spool %s: cannot write the cursor: %s; replaying what is "
                      "there, appending once it can be written",
                      sp->dir, strerror(-rc));
                sp->cursor_stale = true;
        }
        *out = sp;
        return 0;
fail:
        rw_spool_close(sp);
        return rc;
}

void rw_spool_close(struct rw_spool *sp)
{
        if (!sp)
                return;
        if (sp->wfd >= 0)
                close(sp->wfd);
        if (sp->lock_fd >= 0)
                close(sp->lock_fd);
        free(sp->segs);
        free(sp->dir);
        free(sp);
}

/* Removes segs[0] and counts what was unread in it as dropped. */
static void drop_oldest(struct rw_spool *sp, bool count)
{
        char path[4096];

        seg_path(sp, sp->segs[0].id, path, sizeof(path));
        if (count && sp->segs[0].samples)
                SPLOG(sp, RW_LOG_WARNING,
                      "remote_write: spool %s: over SpoolMaxBytes, dropping the oldest "
                      "segment (%" PRIu64 " samples)",
                      path, sp->segs[0].samples);
        if (count)
                sp->st.dropped_size_samples += sp->segs[0].samples;
        unlink(path);
        if (sp->n == 1 && sp->wfd >= 0) {
                close(sp->wfd);
                sp->wfd = -1;
        }
        memmove(sp->segs, sp->segs + 1, (sp->n - 1) * sizeof(*sp->segs));
        sp->n--;
        sp->roff = 0;
        sp->plen = 0;
        write_cursor(sp);
}

static uint64_t unread_bytes(const struct rw_spool *sp)
{
        uint64_t b = 0;

        for (size_t i = 0; i < sp->n; i++)
                b += sp->segs[i].size;
        return b - (sp->n ? sp->roff : 0);
}

static int open_writer(struct rw_spool *sp)
{
        char path[4096];
        uint64_t id = sp->n ? sp->segs[sp->n - 1].id + 1 : 1;
        int err;

        if (sp->wfd >= 0 && sp->n && sp->segs[sp->n - 1].size < sp->o.segment_bytes)
                return 0;
        if (sp->wfd < 0 && sp->n && sp->segs[sp->n - 1].size < sp->o.segment_bytes && !sp->sealed) {
                /* Go on appending to the newest segment left from before. */
                id = sp->segs[sp->n - 1].id;
                seg_path(sp, id, path, sizeof(path));
                sp->wfd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
                return sp->wfd < 0 ? -errno : 0;
        }
        if (sp->cursor_stale) {
                err = write_cursor(sp);
                if (err)
                        return err;
        }
        if (sp->wfd >= 0)
                close(sp->wfd);
        seg_path(sp, id, path, sizeof(path));
        sp->wfd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (sp->wfd < 0)
                return -errno;
        if (sp->o.fsync) {
                /* The new name must survive a power loss too, not only the
                 * records fdatasync()ed into it. */
                int dfd = open(sp->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

                if (dfd < 0 || fsync(dfd)) {
                        err = -errno;
                        if (dfd >= 0)
                                close(dfd);
                        close(sp->wfd);
                        sp->wfd = -1;
                        unlink(path);
                        return err;
                }
                close(dfd);
        }
        err = add_seg(sp, id, 0);
        if (err)
                return err;
        sp->sealed = false;
        return 0;
}

/* writev() until all of iov[0..1] is written. A short write on a regular
 * file means the disk (or a limit) is full: writing the rest then fails with
 * the real reason (ENOSPC, EDQUOT, EFBIG), which is what the caller sees.
 * Returns the bytes written, or -1 with errno set (part may be written). */
static ssize_t write_all(int fd, struct iovec *iov, size_t total)
{
        size_t done = 0;

        while (done < total) {
                ssize_t w = writev(fd, iov, 2);

                if (w < 0) {
                        if (errno == EINTR)
                                continue;
                        return -1;
                }
                if (w == 0) {
                        errno = ENOSPC;
                        return -1;
                }
                done += (size_t)w;
                for (int i = 0; i < 2; i++) {
                        size_t k = (size_t)w < iov[i].iov_len ? (size_t)w : iov[i].iov_len;

                        iov[i].iov_base = (uint8_t *)iov[i].iov_base + k;
                        iov[i].iov_len -= k;
                        w -= (ssize_t)k;
                }
        }
        return (ssize_t)done;
}

int rw_spool_append(struct rw_spool *sp, const void *data, size_t len, uint32_t samples,
                    int64_t now_ms)
{
        uint8_t h[RW_SPOOL_HEADER];
        struct iovec iov[2];
        struct seg *g;
        ssize_t w;
        int err;

        if (len > RW_SPOOL_MAX_RECORD ||
            (sp->o.max_bytes && len + RW_SPOOL_HEADER > sp->o.max_bytes / 2))
                return -EFBIG;
        err = open_writer(sp);
        if (err)
                return err;
        put32(h, MAGIC);
        put32(h + 4, (uint32_t)len);
        put32(h + 8, samples);
        put64(h + 16, (uint64_t)now_ms);
        put32(h + 12, record_crc(h, data, len));
        iov[0] = (struct iovec){.iov_base = h, .iov_len = sizeof(h)};
        iov[1] = (struct iovec){.iov_base = (void *)data, .iov_len = len};
        g = &sp->segs[sp->n - 1];
        w = write_all(sp->wfd, iov, sizeof(h) + len);
        err = w < 0 ? -errno : 0;
        if (!err && sp->o.fsync && fdatasync(sp->wfd))
                err = -errno;
        if (err) {
                char path[4096];

                /* Leave no partial (or unsynced) record behind for the
                 * reader, and the next append where g->size says. */
                seg_path(sp, g->id, path, sizeof(path));
                if (truncate(path, (off_t)g->size) && errno != ENOENT) {
                        /* Appends go to a new segment then: the reader
                         * never looks past g->size. */
                        close(sp->wfd);
                        sp->wfd = -1;
                        sp->sealed = true;
                }
                return err;
        }
        g->size += sizeof(h) + len;
        g->records++;
        g->samples += samples;
        while (sp->o.max_bytes && sp->n > 1 && unread_bytes(sp) > sp->o.max_bytes)
                drop_oldest(sp, true);
        return 0;
}

/* The reader reached the end of segs[0]: remove it unless it is the one
 * being written. Returns false when there is nothing further. */
static bool next_segment(struct rw_spool *sp)
{
        if (sp->n <= 1)
                return false;
        drop_oldest(sp, false);
        return true;
}

int rw_spool_peek(struct rw_spool *sp, int64_t now_ms, void **data, size_t *len, uint32_t *samples)
{
        char path[4096];

        sp->plen = 0;
        while (sp->n) {
                struct seg *g = &sp->segs[0];
                struct hdr h;
                uint64_t total;
                int fd, err;

                if (sp->roff >= g->size) {
                        if (!next_segment(sp))
                                return -ENOENT;
                        continue;
                }
                seg_path(sp, g->id, path, sizeof(path));
                fd = open(path, O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        return -errno;
                err = read_record(fd, sp->roff, g->size, &h, data, &total);
                close(fd);
                if (err == -EBADMSG || err == -ENODATA) {
                        /* Without a trustworthy length there is no next
                         * record to find: the rest of the segment goes. */
                        SPLOG(sp, RW_LOG_ERR,
                              "remote_write: spool %s: corrupt record at offset %" PRIu64
                              ", skipping the rest of the segment",
                              path, sp->roff);
                        sp->st.dropped_corrupt_records += g->records ? g->records : 1;
                        g->records = 0;
                        g->samples = 0;
                        sp->roff = g->size;
                        write_cursor(sp);
                        continue;
                }
                if (err)
                        return err;
                if (sp->o.max_age_ms && h.created < now_ms - sp->o.max_age_ms) {
                        free(*data);
                        *data = NULL;
                        sp->st.dropped_age_samples += h.samples;
                        sp->roff += total;
                        g->records -= g->records ? 1 : 0;
                        g->samples -= g->samples >= h.samples ? h.samples : g->samples;
                        write_cursor(sp);
                        continue;
                }
                *len = h.len;
                *samples = h.samples;
                sp->plen = total;
                sp->psamples = h.samples;
                return 0;
        }
        return -ENOENT;
}

int rw_spool_consume(struct rw_spool *sp)
{
        struct seg *g;

        if (!sp->plen || !sp->n)
                return -EINVAL;
        g = &sp->segs[0];
        sp->roff += sp->plen;
        g->records -= g->records ? 1 : 0;
        g->samples -= g->samples >= sp->psamples ? sp->psamples : g->samples;
        sp->plen = 0;
        if (sp->roff >= g->size && sp->n > 1)
                drop_oldest(sp, false);
        return write_cursor(sp);
}

bool rw_spool_empty(struct rw_spool *sp)
{
        return unread_bytes(sp) == 0;
}

void rw_spool_get_stats(struct rw_spool *sp, struct rw_spool_stats *st)
{
        *st = sp->st;
        st->bytes = unread_bytes(sp);
        st->records = 0;
        st->disk_bytes = 0;
        for (size_t i = 0; i < sp->n; i++) {
                st->records += sp->segs[i].records;
                st->disk_bytes += sp->segs[i].size;
        }
}
