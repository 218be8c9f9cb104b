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
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int pci_source_scan(struct pci_source *src, pci_source_visit_fn visit, void *ctx)
{
        /* volatile: these are read after a longjmp back into this frame. */
        struct scan_state *volatile st = calloc(1, sizeof(*st));
        volatile int ret = 0;
        jmp_buf jb;

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
