// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ptt_perfdata.c - test helper: write a perf.data (file or pipe mode) or a
 * raw AUX dump of synthetic hisi_ptt trace buffers, laid out by hand from
 * the documented format (kernel-facts.md §2.8 and §3.4), so Debian's perf
 * and pciescope can both read it.
 *
 *   ptt_perfdata [OPTIONS] OUT
 *     --format 4dw|8dw     entry format (default 4dw)
 *     --pipe               pipe mode (16-byte header, HEADER_ATTR record)
 *     --raw                a raw AUX dump (the buffers back to back)
 *     --buffers N          AUXTRACE buffers (default 3)
 *     --requests N         transactions per buffer (default 40)
 *     --seed N             random seed (default 1)
 *     --time-mode delta|absolute  how the time field counts (default delta)
 *     --index              file mode: write the auxtrace index feature
 *     --tail-bytes N       add N (< entry size, multiple of 8) bytes to the
 *                          first buffer that are not a whole entry
 *     --aux-flags F        precede each AUXTRACE by a PERF_RECORD_AUX with
 *                          these flags (1 truncated, 4 partial, ...)
 *     --corrupt KIND       bad-magic, short-header, zero-size, size-past-eof,
 *                          payload-past-eof, info-type, no-info, truncate
 *     --expect             print what was written as JSON on stdout
 *
 * The workload: requesters 01:00.0, 01:00.1 and 82:00.0 behind Root Port
 * 00:10.0 send posted writes (MWr, 64-bit addresses) and reads (MRd, 32-
 * and 64-bit, 10-bit tags), and the Root Port answers each read with CplDs
 * split at 128-byte (RCB) boundaries with decreasing byte counts: what 4DW direction
 * 2 records (inbound requests, outbound completions). Transactions finish
 * inside the buffer they start in. Latencies are 300..1670 ticks, below
 * 2048 so the 11-bit 4DW time field is unambiguous in both time modes.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define PTT_PMU_TYPE 48 /* the hisi_ptt PMU's type number at "record time" */
#define ATTR_SIZE    128
#define ROOT_PORT_ID 0x0080 /* 00:10.0 completes the reads */
#define RCB          128

/* PCIe Fmt/Type of the TLPs generated (PCIe base spec, TLP header DW0). */
#define FMT_3DW_NODATA 0
#define FMT_4DW_NODATA 1
#define FMT_3DW_DATA   2
#define FMT_4DW_DATA   3
#define TYPE_MEM       0x00
#define TYPE_CPL       0x0a

enum kind { K_MWR, K_MRD, K_CPLD, K_COUNT };
static const char *const kind_names[K_COUNT] = {"MWr", "MRd", "CplD"};
static const uint16_t requesters[] = {0x0100, 0x0101, 0x8200};
#define NREQ ARRAY_SIZE(requesters)

struct tlp {
        uint64_t time; /* absolute tick */
        unsigned int seq;
        uint32_t hdr[4]; /* PCIe header DW0..3 */
};

struct opts {
        bool eight_dw, pipe, raw, index, expect, delta;
        unsigned int buffers, requests, tail_bytes;
        uint64_t aux_flags, seed;
        const char *corrupt;
};

struct counts {
        uint64_t entries, count[K_COUNT][NREQ], bytes[K_COUNT][NREQ];
        uint64_t matched;
        /* latencies in ticks to the first and last completion */
        uint64_t *first, *last;
        size_t nlat, cap;
};

static uint64_t rng;

static uint32_t rnd(uint32_t n)
{
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        return (uint32_t)(rng % n);
}

/* Growable byte buffer; exits on out-of-memory (a test tool). */
struct out {
        unsigned char *p;
        size_t len, cap;
};

static void put(struct out *o, const void *src, size_t n)
{
        if (o->len + n > o->cap) {
                o->cap = (o->len + n) * 2 + 4096;
                o->p = realloc(o->p, o->cap);
                if (!o->p) {
                        perror("ptt_perfdata");
                        exit(1);
                }
        }
        memcpy(o->p + o->len, src, n);
        o->len += n;
}

static void put_u64(struct out *o, uint64_t v)
{
        unsigned char b[8];

        for (int i = 0; i < 8; i++)
                b[i] = (unsigned char)(v >> (8 * i));
        put(o, b, 8);
}

static void put_u32(struct out *o, uint32_t v)
{
        unsigned char b[4];

        for (int i = 0; i < 4; i++)
                b[i] = (unsigned char)(v >> (8 * i));
        put(o, b, 4);
}

static void set_u64(struct out *o, size_t at, uint64_t v)
{
        for (int i = 0; i < 8; i++)
                o->p[at + i] = (unsigned char)(v >> (8 * i));
}

static void put_header(struct out *o, uint32_t type, uint16_t misc, uint16_t size)
{
        put_u32(o, type);
        put(o, &misc, 2);
        put(o, &size, 2);
}

/* PCIe DW0: Fmt[31:29] Type[28:24] T9[23] TC[22:20] T8[19] Attr2 LN TH[16]
 * TD EP Attr[13:12] AT[11:10] Length[9:0]. */
static uint32_t dw0(unsigned fmt, unsigned type, unsigned tag, unsigned len_dw)
{
        return (uint32_t)fmt << 29 | (uint32_t)type << 24 | ((tag >> 9) & 1u) << 23 |
               ((tag >> 8) & 1u) << 19 | (len_dw & 0x3ffu);
}

static void mem_request(struct tlp *t, bool write, bool addr64, uint16_t rid, unsigned tag,
                        uint64_t addr, unsigned bytes)
{
        unsigned len_dw = bytes / 4;
        unsigned fmt = write ? (addr64 ? FMT_4DW_DATA : FMT_3DW_DATA)
                             : (addr64 ? FMT_4DW_NODATA : FMT_3DW_NODATA);

        t->hdr[0] = dw0(fmt, TYPE_MEM, tag, len_dw);
        t->hdr[1] = (uint32_t)rid << 16 | (tag & 0xffu) << 8 | (len_dw > 1 ? 0xf0u : 0) | 0xfu;
        if (addr64) {
                t->hdr[2] = (uint32_t)(addr >> 32);
                t->hdr[3] = (uint32_t)addr & ~3u;
        } else {
                t->hdr[2] = (uint32_t)addr & ~3u;
                t->hdr[3] = 0;
        }
}

static void completion(struct tlp *t, uint16_t rid, unsigned tag, unsigned bytes,
                       unsigned byte_count, unsigned lower)
{
        t->hdr[0] = dw0(FMT_3DW_DATA, TYPE_CPL, tag, bytes / 4);
        t->hdr[1] = (uint32_t)ROOT_PORT_ID << 16 | (byte_count & 0xfffu);
        t->hdr[2] = (uint32_t)rid << 16 | (tag & 0xffu) << 8 | (lower & 0x7fu);
        t->hdr[3] = 0;
}

static int by_time(const void *a, const void *b)
{
        const struct tlp *x = a, *y = b;

        if (x->time != y->time)
                return x->time < y->time ? -1 : 1;
        return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void add_latency(struct counts *c, uint64_t first, uint64_t last)
{
        if (c->nlat == c->cap) {
                c->cap = c->cap * 2 + 64;
                c->first = realloc(c->first, c->cap * sizeof(*c->first));
                c->last = realloc(c->last, c->cap * sizeof(*c->last));
                if (!c->first || !c->last) {
                        perror("ptt_perfdata");
                        exit(1);
                }
        }
        c->first[c->nlat] = first;
        c->last[c->nlat++] = last;
        c->matched++;
}

/* One buffer's transactions, sorted by time; returns the TLP count. */
static size_t make_buffer(const struct opts *o, uint64_t *now, unsigned *tags, struct tlp *tl,
                          struct counts *c)
{
        static const unsigned read_sizes[] = {64, 128, 256, 512};
        size_t n = 0;
        unsigned seq = 0;

        for (unsigned i = 0; i < o->requests; i++) {
                unsigned r = rnd(NREQ), pick = rnd(10);
                uint64_t addr = 0x2000000000ULL + (uint64_t)rnd(1u << 20) * 64;
                struct tlp *t = &tl[n++];

                *now += 5 + rnd(56);
                t->time = *now;
                t->seq = seq++;
                if (pick < 4) { /* posted write, 64..256 bytes */
                        unsigned bytes = 64u << rnd(3);

                        mem_request(t, true, true, requesters[r], 0, addr, bytes);
                        c->count[K_MWR][r]++;
                        c->bytes[K_MWR][r] += bytes;
                        continue;
                }
                /* A read with a 10-bit tag (so T9/T8 are exercised), split
                 * completions at the RCB, the last one up to 120 ticks later. */
                unsigned bytes = read_sizes[rnd(4)], tag = tags[r]++ % 1024, left = bytes;
                bool addr64 = pick < 9;
                uint64_t lat = 300 + rnd(1201), first = 0, last = 0;

                if (!addr64)
                        addr &= 0xfffffffULL;
                mem_request(t, false, addr64, requesters[r], tag, addr, bytes);
                c->count[K_MRD][r]++;
                for (unsigned k = 0; left; k++) {
                        /* The first completion ends at an RCB boundary. */
                        unsigned room = k ? RCB : RCB - (unsigned)(addr % RCB);
                        unsigned chunk = left < room ? left : room;
                        struct tlp *cp = &tl[n++];

                        cp->time = *now + lat + 40 * k + rnd(8);
                        cp->seq = seq++;
                        completion(cp, requesters[r], tag, chunk, left,
                                   k ? 0 : (unsigned)(addr & 0x7f));
                        c->count[K_CPLD][r]++;
                        c->bytes[K_CPLD][r] += chunk;
                        if (!k)
                                first = cp->time - t->time;
                        last = cp->time - t->time;
                        left -= chunk;
                }
                add_latency(c, first, last);
        }
        qsort(tl, n, sizeof(*tl), by_time);
        /* The next buffer starts after this one's last completion. */
        *now = tl[n - 1].time;
        c->entries += n;
        return n;
}

/* Appends the PTT entries of @n TLPs; @prev carries the delta chain. */
static void encode(const struct opts *o, const struct tlp *tl, size_t n, uint64_t *prev,
                   bool *first_entry, struct out *b)
{
        for (size_t i = 0; i < n; i++) {
                const struct tlp *t = &tl[i];
                uint64_t time = (o->delta && !*first_entry) ? t->time - *prev : t->time;
                uint32_t h0 = t->hdr[0];

                *prev = t->time;
                *first_entry = false;
                if (o->eight_dw) {
                        put_u32(b, 0xffffffffu); /* [31:11] all ones, [10:0] reserved */
                        put_u32(b, 0);           /* no TLP prefix */
                        for (int d = 0; d < 4; d++)
                                put_u32(b, t->hdr[d]);
                        put_u32(b, 0);
                        put_u32(b, (uint32_t)time);
                        continue;
                }
                /* The 4DW remap of DW0 (kernel-facts.md §2.8). */
                uint32_t fmt = (h0 >> 29) & 3, type = (h0 >> 24) & 0x1f, t9 = (h0 >> 23) & 1;
                uint32_t t8 = (h0 >> 19) & 1, th = (h0 >> 16) & 1, len = h0 & 0x3ff;

                put_u32(b, fmt << 30 | type << 25 | t9 << 24 | t8 << 23 | th << 22 | len << 11 |
                               ((uint32_t)time & 0x7ff));
                for (int d = 1; d < 4; d++)
                        put_u32(b, t->hdr[d]);
        }
}

static void put_attr(struct out *o, const struct opts *op)
{
        unsigned char a[ATTR_SIZE];
        /* filter 00:10.0 (0x80001), direction 2, type P|NP|CPL, format. */
        uint64_t config = 0x80001ULL | 2ULL << 20 | 7ULL << 24 | (uint64_t)op->eight_dw << 32;

        memset(a, 0, sizeof(a));
        struct out tmp = {0};

        put_u32(&tmp, PTT_PMU_TYPE);
        put_u32(&tmp, ATTR_SIZE);
        put_u64(&tmp, config);
        put_u64(&tmp, 1);         /* sample_period */
        put_u64(&tmp, 1ULL << 2); /* sample_type: PERF_SAMPLE_TIME */
        put_u64(&tmp, 0);         /* read_format */
        put_u64(&tmp, 1ULL << 0); /* disabled */
        memcpy(a, tmp.p, tmp.len);
        free(tmp.p);
        put(o, a, sizeof(a));
}

struct layout {
        size_t info_at, first_record, first_auxtrace, last_auxtrace, last_record, data_end;
};

static void put_records(struct out *o, const struct opts *op, struct out *bufs, size_t nbuf,
                        struct layout *l, size_t *auxtrace_at)
{
        uint64_t aux_pos = 0;

        l->first_record = o->len;
        l->info_at = o->len;
        put_header(o, 70, 0, 24); /* AUXTRACE_INFO */
        put_u32(o, 6);            /* PERF_AUXTRACE_HISI_PTT */
        put_u32(o, 0);
        put_u64(o, PTT_PMU_TYPE);
        for (size_t i = 0; i < nbuf; i++) {
                if (op->aux_flags) {
                        put_header(o, 11, 0, 32); /* PERF_RECORD_AUX */
                        put_u64(o, aux_pos);
                        put_u64(o, bufs[i].len);
                        put_u64(o, op->aux_flags);
                }
                auxtrace_at[i] = o->len;
                if (!i)
                        l->first_auxtrace = o->len;
                l->last_auxtrace = o->len;
                put_header(o, 71, 0, 48); /* AUXTRACE */
                put_u64(o, bufs[i].len);
                put_u64(o, aux_pos);
                put_u64(o, 0x1000 + i); /* reference */
                put_u32(o, 0);          /* idx */
                put_u32(o, UINT32_MAX); /* tid -1: a per-CPU event */
                put_u32(o, (uint32_t)i % 4);
                put_u32(o, 0);
                put(o, bufs[i].p, bufs[i].len);
                aux_pos += bufs[i].len;
        }
        l->last_record = o->len;
        put_header(o, 68, 0, 8); /* FINISHED_ROUND */
        l->data_end = o->len;
}

static void write_file_mode(struct out *o, const struct opts *op, struct out *bufs, size_t nbuf,
                            struct layout *l)
{
        size_t *at = calloc(nbuf + 1, sizeof(*at));

        put(o, "PERFILE2", 8);
        put_u64(o, 104);
        put_u64(o, ATTR_SIZE + 16);
        put_u64(o, 104);            /* attrs.offset */
        put_u64(o, ATTR_SIZE + 16); /* attrs.size: one attr */
        put_u64(o, 0);              /* data.offset, set below */
        put_u64(o, 0);              /* data.size */
        put_u64(o, 0);              /* event_types */
        put_u64(o, 0);
        for (int i = 0; i < 4; i++) /* adds_features */
                put_u64(o, i == 0 && op->index ? 1ULL << 18 : 0);
        put_attr(o, op);
        put_u64(o, 0); /* ids.offset */
        put_u64(o, 0); /* ids.size */
        set_u64(o, 40, o->len);
        put_records(o, op, bufs, nbuf, l, at);
        set_u64(o, 48, o->len - l->first_record);
        if (op->index) {
                size_t table = o->len;

                put_u64(o, table + 16); /* the index right after the table */
                put_u64(o, 8 + 16 * nbuf);
                put_u64(o, nbuf);
                for (size_t i = 0; i < nbuf; i++) {
                        put_u64(o, at[i]);
                        put_u64(o, 48 + bufs[i].len);
                }
        }
        free(at);
}

static void write_pipe_mode(struct out *o, const struct opts *op, struct out *bufs, size_t nbuf,
                            struct layout *l)
{
        size_t *at = calloc(nbuf + 1, sizeof(*at));

        put(o, "PERFILE2", 8);
        put_u64(o, 16);
        put_header(o, 64, 0, 8 + ATTR_SIZE + 8); /* HEADER_ATTR with one id */
        put_attr(o, op);
        put_u64(o, 1);
        put_records(o, op, bufs, nbuf, l, at);
        free(at);
}

/* Breaks @o as @kind says; returns the byte offset a reader must name. */
static long long corrupt(struct out *o, const struct opts *op, const struct layout *l)
{
        const char *k = op->corrupt;

        if (!strcmp(k, "bad-magic")) {
                o->p[0] = 'X';
                return 0;
        }
        if (!strcmp(k, "short-header")) {
                o->len = op->pipe ? 12 : 60;
                return (long long)o->len;
        }
        if (!strcmp(k, "zero-size")) {
                o->p[l->info_at + 6] = 0;
                o->p[l->info_at + 7] = 0;
                return (long long)l->info_at;
        }
        if (!strcmp(k, "size-past-eof")) {
                o->p[l->last_record + 6] = 0xf8;
                o->p[l->last_record + 7] = 0xff;
                return (long long)l->last_record;
        }
        if (!strcmp(k, "payload-past-eof")) {
                set_u64(o, l->last_auxtrace + 8, (uint64_t)1 << 20);
                return (long long)l->last_auxtrace;
        }
        if (!strcmp(k, "info-type")) {
                o->p[l->info_at + 8] = 1; /* Intel PT */
                return (long long)l->info_at;
        }
        if (!strcmp(k, "no-info")) {
                o->p[l->info_at] = 68; /* the info becomes a FINISHED_ROUND */
                return (long long)l->first_auxtrace;
        }
        if (!strcmp(k, "truncate")) {
                o->len = l->last_auxtrace + 48 + 40; /* cut inside the last payload */
                /* File mode: the header's data section now ends past the file. */
                return op->pipe ? (long long)l->last_auxtrace : 40;
        }
        fprintf(stderr, "ptt_perfdata: unknown --corrupt %s\n", k);
        exit(2);
}

static void print_expect(const struct opts *op, const struct counts *c, size_t nbuf,
                         const struct out *bufs, long long err_at)
{
        const char *sep = "";

        printf("{\"format\": \"%s\", \"mode\": \"%s\", \"buffers\": %zu, \"entries\": %llu, "
               "\"matched\": %llu, \"error_offset\": %lld,\n \"buffer_sizes\": [",
               op->eight_dw ? "8dw" : "4dw",
               op->raw    ? "raw"
               : op->pipe ? "pipe"
                          : "file",
               nbuf, (unsigned long long)c->entries, (unsigned long long)c->matched, err_at);
        for (size_t i = 0; i < nbuf; i++)
                printf("%s%zu", i ? ", " : "", bufs[i].len);
        printf("],\n \"tlps\": [");
        for (int k = 0; k < K_COUNT; k++) {
                for (size_t r = 0; r < NREQ; r++) {
                        if (!c->count[k][r])
                                continue;
                        printf("%s\n  {\"kind\": \"%s\", \"requester\": \"%02x:%02x.%x\", "
                               "\"count\": %llu, \"payload_bytes\": %llu}",
                               sep, kind_names[k], requesters[r] >> 8, (requesters[r] >> 3) & 0x1f,
                               requesters[r] & 7, (unsigned long long)c->count[k][r],
                               (unsigned long long)c->bytes[k][r]);
                        sep = ",";
                }
        }
        printf("],\n \"latency_ticks_first\": [");
        for (size_t i = 0; i < c->nlat; i++)
                printf("%s%llu", i ? ", " : "", (unsigned long long)c->first[i]);
        printf("],\n \"latency_ticks_last\": [");
        for (size_t i = 0; i < c->nlat; i++)
                printf("%s%llu", i ? ", " : "", (unsigned long long)c->last[i]);
        printf("]}\n");
}

static int parse_uint(const char *s, unsigned long max, unsigned long *v)
{
        char *end;

        errno = 0;
        *v = strtoul(s, &end, 0);
        return errno || *end || end == s || *v > max ? -1 : 0;
}

static void usage(void)
{
        fprintf(stderr, "usage: ptt_perfdata [--format 4dw|8dw] [--pipe|--raw] [--buffers N] "
                        "[--requests N] [--seed N] [--time-mode delta|absolute] [--index] "
                        "[--tail-bytes N] [--aux-flags F] [--corrupt KIND] [--expect] OUT\n");
        exit(2);
}

int main(int argc, char **argv)
{
        struct opts op = {.buffers = 3, .requests = 40, .seed = 1, .delta = true};
        struct counts c = {0};
        struct layout l = {0};
        struct out o = {0}, *bufs;
        struct tlp *tl;
        unsigned tags[NREQ] = {0};
        uint64_t now = 100000, prev = 0;
        bool first_entry = true;
        long long err_at = -1;
        unsigned long v;
        const char *path = NULL;
        FILE *f;
        int i;

        for (i = 1; i < argc; i++) {
                const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

                if (!strcmp(a, "--pipe")) {
                        op.pipe = true;
                } else if (!strcmp(a, "--raw")) {
                        op.raw = true;
                } else if (!strcmp(a, "--index")) {
                        op.index = true;
                } else if (!strcmp(a, "--expect")) {
                        op.expect = true;
                } else if (!val && a[0] == '-' && a[1] == '-') {
                        usage();
                } else if (!strcmp(a, "--format")) {
                        if (strcmp(val, "4dw") && strcmp(val, "8dw"))
                                usage();
                        op.eight_dw = !strcmp(val, "8dw");
                        i++;
                } else if (!strcmp(a, "--time-mode")) {
                        if (strcmp(val, "delta") && strcmp(val, "absolute"))
                                usage();
                        op.delta = !strcmp(val, "delta");
                        i++;
                } else if (!strcmp(a, "--buffers")) {
                        if (parse_uint(val, 4096, &v) || !v)
                                usage();
                        op.buffers = (unsigned)v;
                        i++;
                } else if (!strcmp(a, "--requests")) {
                        if (parse_uint(val, 1000000, &v) || !v)
                                usage();
                        op.requests = (unsigned)v;
                        i++;
                } else if (!strcmp(a, "--seed")) {
                        if (parse_uint(val, ~0UL, &v))
                                usage();
                        op.seed = v;
                        i++;
                } else if (!strcmp(a, "--tail-bytes")) {
                        if (parse_uint(val, 24, &v) || v % 8)
                                usage();
                        op.tail_bytes = (unsigned)v;
                        i++;
                } else if (!strcmp(a, "--aux-flags")) {
                        if (parse_uint(val, 0xff, &v))
                                usage();
                        op.aux_flags = v;
                        i++;
                } else if (!strcmp(a, "--corrupt")) {
                        op.corrupt = val;
                        i++;
                } else if (a[0] == '-' || path) {
                        usage();
                } else {
                        path = a;
                }
        }
        if (!path || (op.pipe && op.raw) || (op.index && (op.pipe || op.raw)))
                usage();
        if (op.tail_bytes >= (op.eight_dw ? 32u : 16u))
                usage();
        rng = op.seed * 2654435761u + 88172645463325252ULL;

        /* Each request makes at most 2 + 512 / RCB TLPs (a read that does
         * not start on an RCB boundary needs one completion more). */
        tl = calloc((size_t)op.requests * (2 + 512 / RCB), sizeof(*tl));
        bufs = calloc(op.buffers, sizeof(*bufs));
        if (!tl || !bufs)
                return 1;
        for (unsigned b = 0; b < op.buffers; b++) {
                size_t n = make_buffer(&op, &now, tags, tl, &c);

                encode(&op, tl, n, &prev, &first_entry, &bufs[b]);
                if (b == 0 && op.tail_bytes) {
                        unsigned char junk[24];

                        memset(junk, 0xa5, sizeof(junk));
                        put(&bufs[b], junk, op.tail_bytes);
                }
        }
        if (op.raw) {
                for (unsigned b = 0; b < op.buffers; b++)
                        put(&o, bufs[b].p, bufs[b].len);
        } else if (op.pipe) {
                write_pipe_mode(&o, &op, bufs, op.buffers, &l);
        } else {
                write_file_mode(&o, &op, bufs, op.buffers, &l);
        }
        if (op.corrupt && !op.raw)
                err_at = corrupt(&o, &op, &l);
        f = fopen(path, "wb");
        if (!f || fwrite(o.p, 1, o.len, f) != o.len || fclose(f)) {
                perror(path);
                return 1;
        }
        if (op.expect)
                print_expect(&op, &c, op.buffers, bufs, err_at);
        for (unsigned b = 0; b < op.buffers; b++)
                free(bufs[b].p);
        free(bufs);
        free(tl);
        free(o.p);
        free(c.first);
        free(c.last);
        return 0;
}
