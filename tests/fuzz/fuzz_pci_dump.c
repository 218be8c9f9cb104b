// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_pci_dump.c - libFuzzer target, differential: an `lspci -xxxx` dump
 * (any bytes) read by pci_source's own dump reader and by libpci's dump
 * method, the reference it replaced (issue 17: libpci's per-byte sscanf()
 * was most of a large scan).
 *
 * Invariants: both give the same functions in the same order, with the
 * same bytes at the same steps (64, 256, 4096), or both fail with the same
 * message; ours hands over at most 4096 bytes in those steps and ends.
 * Inputs with an offset of 2^31 or more are only read by ours: libpci
 * stores such an offset as a negative index and writes before its buffer
 * (ours refuses it, see pci_source.c), so there is nothing to compare.
 *
 * The input goes to a file (the reader's interface is a path), on
 * /dev/shm when there is one.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pci/pci.h>

#include "pci_source.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct digest {
        size_t calls;
        uint64_t hash; /* FNV-1a over address, length and bytes, in order */
        char error[512];
        int ret;
};

static void fnv(uint64_t *h, const void *data, size_t len)
{
        const uint8_t *p = data;

        for (size_t i = 0; i < len; i++)
                *h = (*h ^ p[i]) * 0x100000001b3ull;
}

static void digest_add(struct digest *d, uint32_t domain, unsigned int bus, unsigned int dev,
                       unsigned int func, const uint8_t *cfg, size_t len)
{
        uint32_t head[5] = {domain, bus, dev, func, (uint32_t)len};

        fnv(&d->hash, head, sizeof(head));
        fnv(&d->hash, cfg, len);
        d->calls++;
}

static void digest_reset(struct digest *d)
{
        d->calls = 0;
        d->hash = 0xcbf29ce484222325ull;
}

static int ours_visit(void *ctx, const struct pci_addr *addr, const uint8_t *cfg, size_t len)
{
        if (len != 0 && len != 64 && len != 256 && len != 4096)
                __builtin_trap();
        digest_add(ctx, addr->domain, addr->bus, addr->dev, addr->func, cfg, len);
        return 0;
}

static void ours(const char *path, struct digest *d)
{
        struct pci_source *src = NULL;

        memset(d, 0, sizeof(*d));
        digest_reset(d);
        if (pci_source_open_dump(path, &src))
                __builtin_trap();
        d->ret = pci_source_scan(src, ours_visit, d);
        if (d->ret)
                digest_reset(d);
        snprintf(d->error, sizeof(d->error), "%s", pci_source_error(src));
        pci_source_close(src);
}

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

/* libpci's dump method, driven as pci_source drove it before issue 17. */
static void theirs(const char *path, struct digest *d)
{
        static const int steps[] = {0, 64, 256, 4096};
        struct pci_access *volatile a = pci_alloc();
        uint8_t cfg[4096];

        memset(d, 0, sizeof(*d));
        digest_reset(d);
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

/* An offset libpci would store as a negative index: 8 hex digits and ':'
 * at a line's start, the first digit 8 or more. */
static bool has_negative_offset(const uint8_t *data, size_t size)
{
        for (size_t i = 0; i + 9 <= size; i++) {
                size_t k;

                if (i && data[i - 1] != '\n')
                        continue;
                for (k = 0; k < 9 && i + k < size &&
                            strchr("0123456789abcdefABCDEF", data[i + k]) && data[i + k];
                     k++)
                        ;
                if (k == 8 && data[i + 8] == ':' && strchr("89abcdefABCDEF", data[i]))
                        return true;
        }
        return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static char path[64];
        struct digest a, b;
        FILE *f;

        if (!path[0])
                snprintf(path, sizeof(path), "%s/fuzz_pci_dump.%d",
                         access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm", (int)getpid());
        f = fopen(path, "wb");
        if (!f)
                __builtin_trap();
        if (size && fwrite(data, 1, size, f) != size)
                __builtin_trap();
        fclose(f);
        ours(path, &a);
        if (!has_negative_offset(data, size)) {
                theirs(path, &b);
                if (a.ret != b.ret || a.calls != b.calls || a.hash != b.hash ||
                    strcmp(a.error, b.error)) {
                        fprintf(stderr,
                                "fuzz_pci_dump: ours %d, %zu functions, %016llx, \"%s\"; "
                                "libpci %d, %zu, %016llx, \"%s\"\n",
                                a.ret, a.calls, (unsigned long long)a.hash, a.error, b.ret, b.calls,
                                (unsigned long long)b.hash, b.error);
                        __builtin_trap();
                }
        }
        unlink(path);
        return 0;
}
