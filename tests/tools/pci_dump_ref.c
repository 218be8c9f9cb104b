// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pci_dump_ref.c - see pci_dump_ref.h.
 */
#include "pci_dump_ref.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <pci/pci.h>

#include "pci_source.h"

static void digest_reset(struct dump_digest *d)
{
        d->calls = 0;
        d->hash = 0xcbf29ce484222325ull;
}

static void digest_start(struct dump_digest *d)
{
        memset(d, 0, sizeof(*d));
        digest_reset(d);
}

static void fnv(uint64_t *h, const void *data, size_t len)
{
        const uint8_t *p = data;

        for (size_t i = 0; i < len; i++)
                *h = (*h ^ p[i]) * 0x100000001b3ull;
}

static void digest_add(struct dump_digest *d, uint32_t domain, unsigned int bus, unsigned int dev,
                       unsigned int func, const uint8_t *cfg, size_t len)
{
        uint32_t head[5] = {domain, bus, dev, func, (uint32_t)len};

        fnv(&d->hash, head, sizeof(head));
        fnv(&d->hash, cfg, len);
        d->calls++;
        if (len != 0 && len != 64 && len != 256 && len != 4096)
                d->odd_length = true;
}

/* ---- libpci ---- */

static jmp_buf ref_jmp;
static char ref_error[512];

__attribute__((noreturn, format(printf, 1, 2))) static void ref_fail(char *msg, ...)
{
        va_list ap;

        va_start(ap, msg);
        vsnprintf(ref_error, sizeof(ref_error), msg, ap);
        va_end(ap);
        longjmp(ref_jmp, 1);
}

static void ref_quiet(char *msg, ...)
{
        (void)msg;
}

void dump_digest_libpci(const char *path, struct dump_digest *d)
{
        static const int steps[] = {0, 64, 256, 4096};
        struct pci_access *volatile a = pci_alloc();
        uint8_t cfg[4096];

        digest_start(d);
        ref_error[0] = '\0';
        a->error = ref_fail;
        a->warning = ref_quiet;
        a->debug = ref_quiet;
        a->buscentric = 1;
        a->method = PCI_ACCESS_DUMP;
        if (setjmp(ref_jmp)) {
                /* As the source: an error means no functions at all. */
                d->ret = -EIO;
                digest_reset(d);
                snprintf(d->error, sizeof(d->error), "%s", ref_error);
                pci_cleanup(a);
                return;
        }
        pci_set_param(a, "dump.name", (char *)path);
        pci_init(a);
        pci_scan_bus(a);
        for (struct pci_dev *p = a->devices; p; p = p->next) {
                size_t have = 0;

                memset(cfg, 0xff, sizeof(cfg));
                for (size_t i = 1; i < sizeof(steps) / sizeof(steps[0]); i++) {
                        if (!pci_read_block(p, steps[i - 1], cfg + steps[i - 1],
                                            steps[i] - steps[i - 1]))
                                break;
                        have = (size_t)steps[i];
                }
                digest_add(d, (uint32_t)p->domain, p->bus, p->dev, p->func, cfg, have);
        }
        pci_cleanup(a);
}

/* ---- pci_source ---- */

static int ours_visit(void *ctx, const struct pci_addr *addr, const uint8_t *cfg, size_t len)
{
        digest_add(ctx, addr->domain, addr->bus, addr->dev, addr->func, cfg, len);
        return 0;
}

int dump_digest_ours(const char *path, struct dump_digest *d)
{
        struct pci_source *src = NULL;
        int err;

        digest_start(d);
        err = pci_source_open_dump(path, &src);
        if (err)
                return err;
        d->ret = pci_source_scan(src, ours_visit, d);
        if (d->ret)
                digest_reset(d);
        snprintf(d->error, sizeof(d->error), "%s", pci_source_error(src));
        pci_source_close(src);
        return 0;
}

bool dump_digest_same(const struct dump_digest *a, const struct dump_digest *b)
{
        return a->ret == b->ret && a->calls == b->calls && a->hash == b->hash &&
               !strcmp(a->error, b->error);
}
