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
#include "pci_source.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
        /* pci_source_names_prefetch() runs: names and names_failed are its
         * thread's until names_wait(). */
        bool names_loading;
        pthread_t names_thread;
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

static void names_wait(struct pci_source *src);

void pci_source_close(struct pci_source *src)
{
        if (!src)
                return;
        names_wait(src);
        if (src->names) {
                jmp_buf jb;

                guard_jmp = &jb;
                guard_src = src;
                if (!setjmp(jb))
                        pci_cleanup(src->names);
                guard_jmp = NULL;
                guard_src = NULL;
        }
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
static struct pci_access *names_access(void)
{
        struct pci_access *a = pci_alloc();

        a->error = guard_error;
        a->warning = quiet_message;
        a->debug = quiet_message;
        return a;
}

/* The prefetch thread: pci.ids into src->names, under this thread's guard. */
static void *names_load(void *arg)
{
        struct pci_source *src = arg;
        jmp_buf jb;

        guard_jmp = &jb;
        /* NULL: src->error is the scan's meanwhile; a failed load only
         * means no names, as in pci_source_names(). */
        guard_src = NULL;
        if (setjmp(jb)) {
                src->names_failed = true;
        } else {
                src->names = names_access();
                pci_load_name_list(src->names);
        }
        guard_jmp = NULL;
        return NULL;
}

static void names_wait(struct pci_source *src)
{
        if (!src->names_loading)
                return;
        pthread_join(src->names_thread, NULL);
        src->names_loading = false;
}

void pci_source_names_prefetch(struct pci_source *src)
{
        if (src->names || src->names_failed || src->names_loading)
                return;
        /* Without a thread the list loads at the first look-up, as before. */
        src->names_loading = pthread_create(&src->names_thread, NULL, names_load, src) == 0;
}

void pci_source_names(struct pci_source *src, uint16_t vendor, uint16_t device, char *vendor_name,
                      size_t vendor_size, char *device_name, size_t device_size)
{
        struct pci_access *volatile a;
        jmp_buf jb;
        char *v, *d;

        vendor_name[0] = '\0';
        device_name[0] = '\0';
        names_wait(src);
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
                a = names_access();
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
