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
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

void pci_source_close(struct pci_source *src)
{
        if (!src)
                return;
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
        size_t len;    /* bytes up to the last one the dump gave */
        uint8_t *data; /* CFG_EXP_SIZE bytes, 0xff where the dump gave none */
};

/*
 * The functions' bytes live in chunks of DUMP_CHUNK_FUNCS x 4 KiB mapped
 * with MAP_POPULATE: a 1,000-function dump needs 4 MiB, and touching it a
 * page at a time cost a page fault per function, which in a virtual
 * machine was a large part of the scan.
 */
#define DUMP_CHUNK_FUNCS 256
#define DUMP_CHUNK_BYTES ((size_t)DUMP_CHUNK_FUNCS * CFG_EXP_SIZE)

struct dump_list {
        struct dump_func *f;
        size_t n, cap;
        uint8_t **chunk; /* cap / DUMP_CHUNK_FUNCS of them, mapped as needed */
};

static void dump_list_free(struct dump_list *l)
{
        for (size_t c = 0; c * DUMP_CHUNK_FUNCS < l->n; c++)
                munmap(l->chunk[c], DUMP_CHUNK_BYTES);
        free(l->chunk);
        free(l->f);
        memset(l, 0, sizeof(*l));
}

/* Room for one more function; NULL or a message. */
static const char *dump_list_grow(struct dump_list *l)
{
        if (l->n == l->cap) {
                size_t cap = l->cap ? 2 * l->cap : DUMP_CHUNK_FUNCS;
                struct dump_func *nf = realloc(l->f, cap * sizeof(*nf));
                uint8_t **nc;

                if (!nf)
                        return "dump: out of memory";
                l->f = nf;
                nc = realloc(l->chunk, cap / DUMP_CHUNK_FUNCS * sizeof(*nc));
                if (!nc)
                        return "dump: out of memory";
                l->chunk = nc;
                l->cap = cap;
        }
        if (l->n % DUMP_CHUNK_FUNCS == 0) {
                void *p = mmap(NULL, DUMP_CHUNK_BYTES, PROT_READ | PROT_WRITE,
                               MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

                if (p == MAP_FAILED)
                        return "dump: out of memory";
                l->chunk[l->n / DUMP_CHUNK_FUNCS] = p;
        }
        return NULL;
}

/* A hex digit's value, 16 for anything else. */
static inline unsigned int hex_val(char c)
{
        unsigned int d = (unsigned int)(unsigned char)c - '0';
        unsigned int l = ((unsigned int)(unsigned char)c | 0x20u) - 'a';

        return d < 10 ? d : l < 6 ? l + 10 : 16;
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
static const char *dump_line(struct dump_list *l, struct dump_func **devp, char *buf, size_t len)
{
        struct dump_func *dev = *devp;
        struct pci_addr addr;
        size_t digits;

        if (dump_header(buf, &addr)) {
                const char *err = dump_list_grow(l);

                if (err)
                        return err;
                dev = &l->f[l->n];
                dev->addr = addr;
                dev->len = 0;
                dev->data = l->chunk[l->n / DUMP_CHUNK_FUNCS] +
                            (l->n % DUMP_CHUNK_FUNCS) * (size_t)CFG_EXP_SIZE;
                memset(dev->data, 0xff, CFG_EXP_SIZE);
                l->n++;
                *devp = dev;
                return NULL;
        }
        if (!len) {
                *devp = NULL;
                return NULL;
        }
        for (digits = 0; digits < 9 && is_hex(buf[digits]); digits++)
                ;
        if (!dev || digits < 2 || digits > 8 || buf[digits] != ':' || buf[digits + 1] != ' ')
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
                        dev->data[i++] = (uint8_t)(hi << 4 | lo);
                        p += 2;
                        if (*p)
                                p++;
                }
                if (i != start && i > dev->len)
                        dev->len = i;
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
        struct dump_func *dev = NULL;
        const char *msg = NULL;
        size_t have = 0;
        bool eof = false;
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
                while (!msg) {
                        char *line = buf + at, *nl = memchr(line, '\n', have - at);
                        size_t len;

                        if (!nl) {
                                if (have - at > DUMP_LINE_MAX || (eof && have > at))
                                        msg = "dump: line too long or unterminated";
                                break;
                        }
                        len = (size_t)(nl - line);
                        if (len > DUMP_LINE_MAX || memchr(line, '\0', len)) {
                                msg = "dump: line too long or unterminated";
                                break;
                        }
                        *nl = '\0';
                        if (len && line[len - 1] == '\r')
                                line[--len] = '\0';
                        msg = dump_line(l, &dev, line, len);
                        at = (size_t)(nl - buf) + 1;
                }
                memmove(buf, buf + at, have - at);
                have -= at;
                if (eof && !have)
                        break;
        }
        free(buf);
        close(fd);
        if (msg) {
                snprintf(src->error, sizeof(src->error), "%s", msg);
                return -EIO;
        }
        return 0;
}

/* The steps of read_config() on a dump function: as libpci's dump_read(),
 * a block is there when the dump reached its end. */
static size_t dump_config(const struct dump_func *d, uint8_t *cfg)
{
        static const size_t steps[] = {HEADER_SIZE, CFG_SIZE, CFG_EXP_SIZE};
        size_t have = 0;

        for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]) && steps[i] <= d->len; i++)
                have = steps[i];
        memcpy(cfg, d->data, have);
        return have;
}

static int dump_scan(struct pci_source *src, pci_source_visit_fn visit, void *ctx)
{
        struct dump_list l = {NULL, 0, 0, NULL};
        uint8_t *cfg = malloc(CFG_EXP_SIZE);
        int ret;

        if (!cfg)
                return -ENOMEM;
        src->error[0] = '\0';
        ret = dump_read_file(src, &l);
        /* Newest first, as libpci's list. */
        for (size_t k = l.n; !ret && k-- > 0;) {
                size_t len;

                memset(cfg, 0xff, CFG_EXP_SIZE);
                len = dump_config(&l.f[k], cfg);
                ret = visit(ctx, &l.f[k].addr, cfg, len);
        }
        dump_list_free(&l);
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

void pci_source_names(struct pci_source *src, uint16_t vendor, uint16_t device, char *vendor_name,
                      size_t vendor_size, char *device_name, size_t device_size)
{
        struct pci_access *volatile a = src->names;
        jmp_buf jb;
        char *v, *d;

        vendor_name[0] = '\0';
        device_name[0] = '\0';
        if (src->names_failed)
                return;
        guard_jmp = &jb;
        guard_src = src;
        if (setjmp(jb)) {
                src->names_failed = true;
                goto out;
        }
        if (!a) {
                a = pci_alloc();
                a->error = guard_error;
                a->warning = quiet_message;
                a->debug = quiet_message;
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
