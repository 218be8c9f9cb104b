// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pci_source.c - PCI configuration space through libpci, guarded.
 *
 * libpci's `error` hook is declared noreturn and its default exits the
 * process (pciutils issues #136, #187). We install a hook that longjmp()s
 * back to the guard set up around every libpci call in this file. State is
 * thread-local, so two sources may be scanned from two threads at once; one
 * source must not be used from two threads at once.
 *
 * Each scan builds a fresh pci_access and tears it down: libpci cannot
 * rescan an access, and devices come and go (hot plug, SR-IOV).
 */
#define _GNU_SOURCE /* memfd_create */
#include "pci_source.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pci/pci.h>

/* Not pci_regs.h: libpci's header.h defines the same register names. */
enum { HEADER_SIZE = 64, CFG_SIZE = 256, CFG_EXP_SIZE = 4096 };

enum pci_source_method { PCI_SOURCE_LIVE, PCI_SOURCE_DUMP };

struct pci_source {
        enum pci_source_method method;
        char *path;               /* sysfs bus/pci directory, or dump file */
        struct pci_access *names; /* kept for pci.ids lookups, NULL until needed */
        bool names_failed;
        /* names holds only these functions' names (pci_source_names_for()):
         * vendor << 16 | device, sorted. NULL: names is the whole list. */
        uint32_t *names_ids;
        size_t names_n;
        char *ids_file; /* pci_source_set_ids_file(), NULL: libpci's default */
        char error[512];
};

/* The guard of the libpci call in progress on this thread. */
static __thread jmp_buf *guard_jmp;
static __thread struct pci_source *guard_src;

__attribute__((noreturn, format(printf, 1, 2))) static void guard_error(char *msg, ...)
{
        va_list ap;

        if (guard_src) {
                va_start(ap, msg);
                vsnprintf(guard_src->error, sizeof(guard_src->error), msg, ap);
                va_end(ap);
        }
        /* Every libpci call in this file runs inside GUARDED(); there is no
         * path on which guard_jmp is NULL here. */
        longjmp(*guard_jmp, 1);
}

static void quiet_message(char *msg, ...)
{
        /* libpci warnings (e.g. a config file vanishing under a hot-unplug)
         * show up to us as failed reads; nothing to print. */
        (void)msg;
}

static struct pci_access *new_access(const struct pci_source *src)
{
        struct pci_access *a = pci_alloc();

        a->error = guard_error;
        a->warning = quiet_message;
        a->debug = quiet_message;
        /* Bus-centric: only read `config` files, never the sysfs resource,
         * irq, vendor... files whose absence libpci treats as fatal. */
        a->buscentric = 1;
        if (src->method == PCI_SOURCE_DUMP) {
                a->method = PCI_ACCESS_DUMP;
                pci_set_param(a, "dump.name", src->path);
        } else {
                a->method = PCI_ACCESS_SYS_BUS_PCI;
                pci_set_param(a, "sysfs.path", src->path);
        }
        return a;
}

static int source_new(enum pci_source_method method, const char *path, struct pci_source **out)
{
        struct pci_source *src = calloc(1, sizeof(*src));

        if (!src)
                return -ENOMEM;
        src->method = method;
        src->path = strdup(path);
        if (!src->path) {
                free(src);
                return -ENOMEM;
        }
        *out = src;
        return 0;
}

int pci_source_open_live(const char *sysfs_root, struct pci_source **out)
{
        char path[1024];
        int n = snprintf(path, sizeof(path), "%s/bus/pci", sysfs_root);

        if (n < 0 || (size_t)n >= sizeof(path))
                return -ENAMETOOLONG;
        return source_new(PCI_SOURCE_LIVE, path, out);
}

int pci_source_open_dump(const char *dump_path, struct pci_source **out)
{
        return source_new(PCI_SOURCE_DUMP, dump_path, out);
}

static void names_drop(struct pci_source *src);

void pci_source_close(struct pci_source *src)
{
        if (!src)
                return;
        names_drop(src);
        free(src->ids_file);
        free(src->path);
        free(src);
}

const char *pci_source_method(const struct pci_source *src)
{
        return src->method == PCI_SOURCE_DUMP ? "dump" : "live";
}

const char *pci_source_error(const struct pci_source *src)
{
        return src->error;
}

/*
 * Read as much configuration space as the method gives: the 64-byte header,
 * then the rest of the 256 bytes, then extended space. Unprivileged sysfs
 * reads and short dumps stop at one of these steps.
 */
static size_t read_config(struct pci_dev *d, uint8_t *cfg)
{
        static const int steps[] = {0, HEADER_SIZE, CFG_SIZE, CFG_EXP_SIZE};
        size_t have = 0;

        for (size_t i = 1; i < sizeof(steps) / sizeof(steps[0]); i++) {
                if (!pci_read_block(d, steps[i - 1], cfg + steps[i - 1], steps[i] - steps[i - 1]))
                        break;
                have = (size_t)steps[i];
        }
        return have;
}

struct scan_state {
        struct pci_access *access;
        uint8_t cfg[CFG_EXP_SIZE];
};

/*
 * ---- dump files, read here rather than through libpci ----
 *
 * libpci's dump method (lib/dump.c) parses every byte of a dump with its
 * own sscanf() call: on a 1,000-function dump that was two thirds of
 * `pciescope topology`. This reader takes the same input the same way, line
 * by line with the same fgets() limit, and gives the same functions, in the
 * same order (libpci links each new function at the head of its list), with
 * the same bytes and the same error messages; test_pci_source compares the
 * two on every fixture and on mutated dumps. Live access stays with libpci.
 * One difference: an offset of 2^31 or more, which libpci stores as a
 * negative index and writes before its buffer, is refused here as beyond
 * 4096 bytes.
 */
struct dump_func {
        struct pci_addr addr;
        size_t have; /* bytes kept: 0, 64, 256 or 4096 (dump_have()) */
        size_t at;   /* where they start in dump_list.bytes */
};

/*
 * The function being read is filled in @cur, one buffer used again for
 * every function; when it ends, only the bytes a scan will hand over
 * (dump_have()) are appended to @bytes. Fresh pages are what a dump costs
 * in a virtual machine (about 6 us each at first touch here, even when
 * pre-faulted): a 4 KiB page per function was two thirds of the scan of a
 * 1,060-function dump; most functions keep 256 bytes.
 */
struct dump_list {
        struct dump_func *f;
        size_t n, cap;
        uint8_t *bytes;
        size_t used, size;
        bool reading;              /* lines still go to f[n - 1], in cur */
        size_t cur_len;            /* bytes up to the last one the dump gave */
        uint8_t cur[CFG_EXP_SIZE]; /* 0xff where the dump gave none */
};

static void dump_list_free(struct dump_list *l)
{
        free(l->bytes);
        free(l->f);
        l->f = NULL;
        l->bytes = NULL;
        l->n = l->cap = l->used = l->size = 0;
}

/* The steps of read_config() on a dump function: as libpci's dump_read(),
 * a block is there when the dump reached its end. */
static size_t dump_have(size_t len)
{
        static const size_t steps[] = {HEADER_SIZE, CFG_SIZE, CFG_EXP_SIZE};
        size_t have = 0;

        for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]) && steps[i] <= len; i++)
                have = steps[i];
        return have;
}

/* The function being read has no more lines: keep what a scan gives of it.
 * NULL or a message. */
static const char *dump_func_end(struct dump_list *l)
{
        struct dump_func *d;

        if (!l->reading)
                return NULL;
        l->reading = false;
        d = &l->f[l->n - 1];
        d->have = dump_have(l->cur_len);
        d->at = l->used;
        if (!d->have)
                return NULL;
        if (l->size - l->used < d->have) {
                size_t size = l->size ? 2 * l->size : 64u << 10;
                uint8_t *nb = realloc(l->bytes, size);

                if (!nb)
                        return "dump: out of memory";
                l->bytes = nb;
                l->size = size;
        }
        memcpy(l->bytes + l->used, l->cur, d->have);
        l->used += d->have;
        return NULL;
}

/* A new function at @addr: the one before ends. NULL or a message. */
static const char *dump_func_start(struct dump_list *l, const struct pci_addr *addr)
{
        const char *err = dump_func_end(l);

        if (err)
                return err;
        if (l->n == l->cap) {
                size_t cap = l->cap ? 2 * l->cap : 256;
                struct dump_func *nf = realloc(l->f, cap * sizeof(*nf));

                if (!nf)
                        return "dump: out of memory";
                l->f = nf;
                l->cap = cap;
        }
        l->f[l->n].addr = *addr;
        l->f[l->n].have = 0;
        l->f[l->n].at = 0;
        l->n++;
        l->reading = true;
        l->cur_len = 0;
        memset(l->cur, 0xff, sizeof(l->cur));
        return NULL;
}

/* A hex digit's value plus one, 0 for anything else: a table rather than
 * comparisons, because in a dump digits and letters alternate at random and
 * the branches of a comparison chain were mispredicted about every third
 * character (the scan of a 1,060-function dump went from ~16 to ~6 ms). */
static const uint8_t hex_plus1[256] = {
    ['0'] = 1,  ['1'] = 2,  ['2'] = 3,  ['3'] = 4,  ['4'] = 5,  ['5'] = 6,  ['6'] = 7,  ['7'] = 8,
    ['8'] = 9,  ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
    ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

/* A hex digit's value, 16 or more for anything else. */
static inline unsigned int hex_val(char c)
{
        return (unsigned int)hex_plus1[(unsigned char)c] - 1u;
}

static inline bool is_hex(char c)
{
        return hex_val(c) < 16;
}

/* @n hex digits at @s (validated), as sscanf("%x") reads them. */
static uint32_t hex_n(const char *s, unsigned int n)
{
        uint32_t v = 0;

        for (unsigned int i = 0; i < n; i++)
                v = v << 4 | hex_val(s[i]);
        return v;
}

/* A function line, "bb:dd.f ", or with a domain of 4 or 5 hex digits. As
 * libpci: the function is one decimal digit (the validation lets a hex
 * letter through, which sscanf's %d then refuses). */
static bool dump_header(const char *s, struct pci_addr *addr)
{
        unsigned int dom = 0;

        while (dom < 6 && is_hex(s[dom]))
                dom++;
        if (dom == 2) {
                dom = 0;
        } else if ((dom == 4 || dom == 5) && s[dom] == ':') {
                addr->domain = hex_n(s, dom);
                s += dom + 1;
                dom = 1;
        } else {
                return false;
        }
        if (!is_hex(s[0]) || !is_hex(s[1]) || s[2] != ':' || !is_hex(s[3]) || !is_hex(s[4]) ||
            s[5] != '.' || !is_hex(s[6]) || s[7] != ' ' || s[6] < '0' || s[6] > '9')
                return false;
        if (!dom)
                addr->domain = 0;
        addr->bus = (uint8_t)hex_n(s, 2);
        addr->dev = (uint8_t)hex_n(s + 3, 2);
        addr->func = (uint8_t)(s[6] - '0');
        return true;
}

/* libpci reads a line with fgets(buf, 255): a line of 254 characters or
 * more (before its newline) is an error, as is one fgets() cuts at a NUL
 * (strchr() finds no newline) and a last line without a newline. */
#define DUMP_LINE_MAX 253

/* One line, its newline (and a CR before it) removed. NULL or libpci's
 * message. */
static const char *dump_line(struct dump_list *l, char *buf, size_t len)
{
        struct pci_addr addr;
        size_t digits;

        if (dump_header(buf, &addr))
                return dump_func_start(l, &addr);
        if (!len)
                /* An empty line ends the function: lines up to the next
                 * function line are ignored. */
                return dump_func_end(l);
        for (digits = 0; digits < 9 && is_hex(buf[digits]); digits++)
                ;
        if (!l->reading || digits < 2 || digits > 8 || buf[digits] != ':' || buf[digits + 1] != ' ')
                return NULL;
        {
                uint32_t i = hex_n(buf, (unsigned int)digits), start = i;
                const char *p = buf + digits + 2;

                for (;;) {
                        unsigned int hi = hex_val(p[0]), lo;

                        /* In order: p[1] only after p[0] is a digit (not
                         * the line's end), as libpci's isxdigit() chain. */
                        if (hi >= 16 || (lo = hex_val(p[1])) >= 16 || (p[2] && p[2] != ' '))
                                break;
                        if (i >= CFG_EXP_SIZE)
                                return "dump: At most 4096 bytes of config space are supported";
                        l->cur[i++] = (uint8_t)(hi << 4 | lo);
                        p += 2;
                        if (*p)
                                p++;
                }
                if (i != start && i > l->cur_len)
                        l->cur_len = i;
                if (*p)
                        return "dump: Malformed line";
        }
        return NULL;
}

/* Reads the dump in 64 KiB blocks (a few system calls, no stdio per line;
 * a device file such as /dev/zero fails at its first line, as in libpci). */
static int dump_read_file(struct pci_source *src, struct dump_list *l)
{
        enum { BLOCK = 64 << 10 };
        const char *msg = NULL;
        size_t have = 0;
        bool eof = false, nul;
        char *buf;
        int fd = open(src->path, O_RDONLY | O_CLOEXEC);

        if (fd < 0) {
                snprintf(src->error, sizeof(src->error), "dump: Cannot open %s: %s", src->path,
                         strerror(errno));
                return -EIO;
        }
        /* +1: room for the NUL that ends the last line in the block. */
        buf = malloc(BLOCK + 1);
        if (!buf) {
                close(fd);
                return -ENOMEM;
        }
        while (!msg && (!eof || have)) {
                size_t at = 0;

                if (!eof && have < BLOCK) {
                        ssize_t n = read(fd, buf + have, BLOCK - have);

                        if (n < 0 && errno == EINTR)
                                continue;
                        if (n < 0) {
                                /* libpci's fgets() ends the file at an
                                 * error; the unterminated rest fails. */
                                n = 0;
                        }
                        if (n == 0)
                                eof = true;
                        have += (size_t)n;
                }
                /* A text file has no NUL: one look per block, not per line. */
                nul = memchr(buf, '\0', have) != NULL;
                while (!msg) {
                        char *line = buf + at, *nl = memchr(line, '\n', have - at);
                        size_t len;

                        if (!nl) {
                                if (have - at > DUMP_LINE_MAX || (eof && have > at))
                                        msg = "dump: line too long or unterminated";
                                break;
                        }
                        len = (size_t)(nl - line);
                        if (len > DUMP_LINE_MAX || (nul && memchr(line, '\0', len))) {
                                msg = "dump: line too long or unterminated";
                                break;
                        }
                        *nl = '\0';
                        if (len && line[len - 1] == '\r')
                                line[--len] = '\0';
                        msg = dump_line(l, line, len);
                        at = (size_t)(nl - buf) + 1;
                }
                memmove(buf, buf + at, have - at);
                have -= at;
                if (eof && !have)
                        break;
        }
        free(buf);
        close(fd);
        if (!msg)
                msg = dump_func_end(l);
        if (msg) {
                snprintf(src->error, sizeof(src->error), "%s", msg);
                return -EIO;
        }
        return 0;
}

static int dump_scan(struct pci_source *src, pci_source_visit_fn visit, void *ctx)
{
        struct dump_list *l = calloc(1, sizeof(*l));
        uint8_t *cfg = malloc(CFG_EXP_SIZE);
        int ret;

        if (!l || !cfg) {
                free(l);
                free(cfg);
                return -ENOMEM;
        }
        src->error[0] = '\0';
        ret = dump_read_file(src, l);
        /* Newest first, as libpci's list. */
        for (size_t k = l->n; !ret && k-- > 0;) {
                const struct dump_func *d = &l->f[k];

                if (d->have)
                        memcpy(cfg, l->bytes + d->at, d->have);
                memset(cfg + d->have, 0xff, CFG_EXP_SIZE - d->have);
                ret = visit(ctx, &d->addr, cfg, d->have);
        }
        dump_list_free(l);
        free(l);
        free(cfg);
        return ret;
}

int pci_source_scan(struct pci_source *src, pci_source_visit_fn visit, void *ctx)
{
        /* volatile: these are read after a longjmp back into this frame. */
        struct scan_state *volatile st;
        volatile int ret = 0;
        jmp_buf jb;

        if (src->method == PCI_SOURCE_DUMP)
                return dump_scan(src, visit, ctx);
        st = calloc(1, sizeof(*st));

        if (!st)
                return -ENOMEM;
        src->error[0] = '\0';
        guard_jmp = &jb;
        guard_src = src;
        if (setjmp(jb)) {
                ret = -EIO;
                goto out;
        }
        st->access = new_access(src);
        pci_init(st->access);
        pci_scan_bus(st->access);
        for (struct pci_dev *d = st->access->devices; d && !ret; d = d->next) {
                struct pci_addr addr = {
                    .domain = (uint32_t)d->domain,
                    .bus = d->bus,
                    .dev = d->dev,
                    .func = d->func,
                };
                size_t len;

                memset(st->cfg, 0xff, sizeof(st->cfg));
                len = read_config(d, st->cfg);
                ret = visit(ctx, &addr, st->cfg, len);
        }
out:
        if (st->access) {
                /* Clean up under the guard too: cleanup of a half-built
                 * access may report an error of its own. */
                if (!setjmp(jb))
                        pci_cleanup(st->access);
        }
        guard_jmp = NULL;
        guard_src = NULL;
        free(st);
        return ret;
}

/* The pci_access of the name look-ups (no method: only pci.ids). */
static struct pci_access *names_access(const struct pci_source *src)
{
        struct pci_access *a = pci_alloc();

        a->error = guard_error;
        a->warning = quiet_message;
        a->debug = quiet_message;
        /* A copy libpci frees; without memory for it, libpci's default. */
        if (src->ids_file) {
                char *name = strdup(src->ids_file);

                if (name)
                        pci_set_name_list_path(a, name, 1);
        }
        return a;
}

/* The names loaded so far go; the next look-up loads them anew. */
static void names_drop(struct pci_source *src)
{
        if (src->names) {
                jmp_buf jb;

                guard_jmp = &jb;
                guard_src = src;
                if (!setjmp(jb))
                        pci_cleanup(src->names);
                guard_jmp = NULL;
                guard_src = NULL;
        }
        src->names = NULL;
        free(src->names_ids);
        src->names_ids = NULL;
        src->names_n = 0;
}

/* libpci fails a whole list with a line of MAX_LINE - 1 (1,023) characters
 * or more. */
#define IDS_LINE_MAX 1022

static int compare_ids(const void *a, const void *b)
{
        uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

        return x < y ? -1 : x > y;
}

/* Index of the first of the sorted @ids at or above @key. */
static size_t ids_lower_bound(const uint32_t *ids, size_t n, uint32_t key)
{
        size_t lo = 0, hi = n;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (ids[mid] < key)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

static bool ids_have(const uint32_t *ids, size_t n, uint32_t key)
{
        size_t at = ids_lower_bound(ids, n, key);

        return at < n && ids[at] == key;
}

static bool ids_have_vendor(const uint32_t *ids, size_t n, uint16_t vendor)
{
        size_t at = ids_lower_bound(ids, n, (uint32_t)vendor << 16);

        return at < n && ids[at] >> 16 == vendor;
}

/* @n hex digits at @s (any character after them), or -1. */
static long ids_hex(const char *s, unsigned int n)
{
        long v = 0;

        for (unsigned int i = 0; i < n; i++) {
                if (hex_val(s[i]) >= 16)
                        return -1;
                v = v << 4 | hex_val(s[i]);
        }
        return v;
}

/*
 * The part of pci.ids from which libpci's parser makes the names of some
 * functions: for each wanted vendor its vendor line ("vvvv  Name") and,
 * below it, the device lines (one tab) of the wanted devices. Everything
 * else goes (comments, other devices, subsystem lines, the class, "S" and
 * other lettered blocks, other vendors). Each vendor line starts a block
 * of its own in libpci's parser, and a device line is one entry, so what
 * is kept becomes the same vendor and device entries as in the whole file.
 */
struct ids_cut {
        const uint32_t *ids; /* wanted vendor << 16 | device, sorted */
        size_t n;
        int vendor; /* the kept vendor block we are in, or -1 */
        char *out;
        size_t len, cap;
        bool broken; /* out of memory */
};

static void cut_keep(struct ids_cut *c, const char *line, size_t n)
{
        if (c->cap - c->len < n) {
                size_t cap = c->cap ? 2 * c->cap : 16u << 10;
                char *grown;

                while (cap - c->len < n)
                        cap *= 2;
                grown = realloc(c->out, cap);
                if (!grown) {
                        c->broken = true;
                        return;
                }
                c->out = grown;
                c->cap = cap;
        }
        memcpy(c->out + c->len, line, n);
        c->len += n;
}

/* One line, @n bytes with its newline (the last line may have none). */
static void cut_line(struct ids_cut *c, const char *line, size_t n)
{
        long id;

        if (line[0] == '\t') {
                /* A device line (not "\t\t", a subsystem) of a kept vendor. */
                if (c->vendor >= 0 && n > 5 && line[1] != '\t' &&
                    (id = ids_hex(line + 1, 4)) >= 0 &&
                    ids_have(c->ids, c->n, (uint32_t)c->vendor << 16 | (uint32_t)id))
                        cut_keep(c, line, n);
                return;
        }
        /* Comments and empty lines change nothing in libpci's parser (a
         * line indented by spaces, which it refuses, is left out too). */
        if (line[0] == '#' || line[0] == ' ' || line[0] == '\n' || line[0] == '\r')
                return;
        /* Top level: a vendor line, or a lettered block of no vendor. */
        c->vendor = -1;
        id = n > 4 && (line[4] == ' ' || line[4] == '\t') ? ids_hex(line, 4) : -1;
        if (id >= 0 && ids_have_vendor(c->ids, c->n, (uint16_t)id)) {
                c->vendor = (int)id;
                cut_keep(c, line, n);
        }
}

/*
 * Reads the list libpci would read for @a and cuts it (struct ids_cut) in
 * 64 KiB blocks: the whole file never sits in memory, whose first touch
 * of fresh pages cost more here than the cut. False when it cannot be
 * cut: the ".gz" name opens (maybe compressed: only libpci reads it), the
 * file does not open or is not regular, reading fails, or libpci would cut
 * its lines elsewhere (a NUL, a line of 1,023 characters or more).
 */
static bool ids_cut_file(struct pci_access *a, struct ids_cut *c)
{
        enum { BLOCK = 64 << 10 };
        const char *name = a->id_file_name;
        size_t name_len = strlen(name), have = 0;
        char plain[4096], *buf = NULL;
        bool ok = false, eof = false;
        struct stat st;
        int fd;

        /* libpci's pci_open(): the name; when it ends in ".gz" and cannot
         * be opened, the name without it. */
        fd = open(name, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        if (name_len >= 3 && !strcmp(name + name_len - 3, ".gz")) {
                if (fd >= 0 || name_len - 3 >= sizeof(plain))
                        goto out;
                memcpy(plain, name, name_len - 3);
                plain[name_len - 3] = '\0';
                fd = open(plain, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        }
        if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode))
                goto out;
        buf = malloc(BLOCK);
        if (!buf)
                goto out;
        while (!eof || have) {
                size_t at = 0;

                if (!eof) {
                        ssize_t r = read(fd, buf + have, BLOCK - have);

                        if (r < 0 && errno == EINTR)
                                continue;
                        if (r < 0)
                                goto out;
                        eof = r == 0;
                        if (memchr(buf + have, '\0', (size_t)r))
                                goto out;
                        have += (size_t)r;
                }
                for (;;) {
                        const char *line = buf + at, *nl = memchr(line, '\n', have - at);
                        size_t n = nl ? (size_t)(nl - line) + 1 : have - at;

                        if (!n || (!nl && !eof))
                                break;
                        if (n > IDS_LINE_MAX + 1)
                                goto out;
                        cut_line(c, line, n);
                        at += n;
                }
                if (have - at > IDS_LINE_MAX)
                        goto out;
                memmove(buf, buf + at, have - at);
                have -= at;
                if (eof && !have)
                        break;
        }
        ok = !c->broken;
out:
        if (fd >= 0)
                close(fd);
        free(buf);
        return ok;
}

/*
 * The cut of @a's list for the sorted @ids in an anonymous memory file,
 * for libpci, which reads only from a path (/proc/self/fd names it). -1
 * when the list cannot be cut here: libpci reads it whole.
 */
static int ids_part_fd(struct pci_access *a, const uint32_t *ids, size_t n)
{
        struct ids_cut c = {.ids = ids, .n = n, .vendor = -1};
        int fd = -1;

        if (ids_cut_file(a, &c)) {
                fd = memfd_create("pciescope-pci.ids", MFD_CLOEXEC);
                if (fd >= 0 && write(fd, c.out, c.len) != (ssize_t)c.len) {
                        close(fd);
                        fd = -1;
                }
        }
        free(c.out);
        return fd;
}

int pci_source_set_ids_file(struct pci_source *src, const char *path)
{
        char *copy = path ? strdup(path) : NULL;

        if (path && !copy)
                return -ENOMEM;
        names_drop(src);
        src->names_failed = false;
        free(src->ids_file);
        src->ids_file = copy;
        return 0;
}

size_t pci_source_names_part(const struct pci_source *src)
{
        return src->names_ids ? src->names_n : 0;
}

int pci_source_names_for(struct pci_source *src, const uint32_t *ids, size_t n)
{
        struct pci_access *volatile a = NULL;
        char *volatile saved = NULL;
        volatile int fd = -1, loaded = 0;
        volatile bool failed = false;
        uint32_t *wanted;
        volatile size_t kept = 0; /* volatile: read after a longjmp */
        char path[64];
        jmp_buf jb;

        if (src->names_failed)
                return 0;
        if (src->names) {
                /* Loaded: the whole list, or a part that may cover these. */
                bool covered = true;

                for (size_t i = 0; i < n && src->names_ids; i++)
                        covered = covered && ids_have(src->names_ids, src->names_n, ids[i]);
                if (covered)
                        return 0;
                names_drop(src);
        }
        wanted = malloc(n * sizeof(*wanted) + 1);
        if (!wanted)
                return -ENOMEM;
        if (n)
                memcpy(wanted, ids, n * sizeof(*wanted));
        if (n > 1)
                qsort(wanted, n, sizeof(*wanted), compare_ids);
        for (size_t i = 0; i < n; i++)
                if (!kept || wanted[kept - 1] != wanted[i])
                        wanted[kept++] = wanted[i];
        guard_jmp = &jb;
        guard_src = src;
        if (setjmp(jb)) {
                /* libpci refused the list: no names, as with the whole. */
                failed = true;
        } else {
                a = names_access(src);
                fd = ids_part_fd(a, wanted, kept);
                saved = fd >= 0 ? strdup(a->id_file_name) : NULL;
                if (saved) {
                        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
                        pci_set_name_list_path(a, path, 0);
                        loaded = pci_load_name_list(a);
                }
        }
        /* The real name back, for libpci's messages and a later load of
         * the whole list. */
        if (saved)
                pci_set_name_list_path(a, saved, 1);
        if (fd >= 0)
                close(fd);
        if (a && (failed || !loaded) && !setjmp(jb))
                pci_cleanup(a);
        guard_jmp = NULL;
        guard_src = NULL;
        if (failed || !loaded) {
                /* Not loaded (no /proc, a compressed list...): the whole
                 * list at the first look-up, as without this call. */
                src->names_failed = failed;
                free(wanted);
                return 0;
        }
        src->names = a;
        src->names_ids = wanted;
        src->names_n = kept;
        return 0;
}

void pci_source_names(struct pci_source *src, uint16_t vendor, uint16_t device, char *vendor_name,
                      size_t vendor_size, char *device_name, size_t device_size)
{
        struct pci_access *volatile a;
        jmp_buf jb;
        char *v, *d;

        vendor_name[0] = '\0';
        device_name[0] = '\0';
        /* Only some functions' names loaded, not this one's: the whole list. */
        if (src->names_ids &&
            !ids_have(src->names_ids, src->names_n, (uint32_t)vendor << 16 | device))
                names_drop(src);
        a = src->names;
        if (src->names_failed)
                return;
        guard_jmp = &jb;
        guard_src = src;
        if (setjmp(jb)) {
                src->names_failed = true;
                goto out;
        }
        if (!a) {
                a = names_access(src);
                src->names = a;
        }
        /* NO_NUMBERS: NULL rather than "Device 1234" when the id is unknown,
         * so callers can tell a name from a made-up one. */
        v = pci_lookup_name(a, vendor_name, (int)vendor_size,
                            PCI_LOOKUP_VENDOR | PCI_LOOKUP_NO_NUMBERS | PCI_LOOKUP_NO_HWDB, vendor);
        if (!v)
                vendor_name[0] = '\0';
        d = pci_lookup_name(a, device_name, (int)device_size,
                            PCI_LOOKUP_DEVICE | PCI_LOOKUP_NO_NUMBERS | PCI_LOOKUP_NO_HWDB, vendor,
                            device);
        if (!d)
                device_name[0] = '\0';
out:
        guard_jmp = NULL;
        guard_src = NULL;
}
