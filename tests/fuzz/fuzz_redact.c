// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_redact.c - libFuzzer target: what `pciescope snapshot` removes
 * (redact.h), on every input both ways: as a function's configuration
 * space (any bytes, up to 4096) through redact_cfg(), and as a kernel
 * command line (up to the first NUL) through redact_cmdline().
 *
 * Invariants (a violation traps):
 * - configuration space: every byte is kept or zeroed, nothing else; a
 *   second pass changes nothing and finds no field the first did not (it
 *   may find fewer: a header the first pass zeroed ends its walk); a
 *   Device Serial Number planted at 0x100 and a VPD capability planted at
 *   0x40 (the input's next pointers kept) lose their serial and data
 *   bytes, and are reported;
 * - command line: the result fits the bound (input length plus one marker
 *   per value redacted), holds no blank but ' ', and a second pass gives
 *   the same text; with secrets planted around the input (ip=, a quoted
 *   nfsroot=, rootpw=, --password VALUE before it; ks= with a password in
 *   the URL and init's arguments after "--" behind it, its double quotes
 *   balanced so that the parameters after it are its own), no planted
 *   secret survives: "PLANT" occurs no more often than in the input.
 */
#include <ctype.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "redact.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t count(const char *s, const char *word)
{
        size_t n = 0;

        for (const char *p = s; (p = strstr(p, word)); p++)
                n++;
        return n;
}

/* Occurrences of @word in the first @n bytes of @s (no NUL among them). */
static size_t count_n(const char *s, size_t n, const char *word)
{
        size_t w = strlen(word), c = 0;

        for (size_t i = 0; i + w <= n; i++)
                c += !memcmp(s + i, word, w);
        return c;
}

static void fuzz_cfg(const uint8_t *data, size_t size)
{
        static uint8_t a[4096], b[4096];
        size_t len = size < sizeof(a) ? size : sizeof(a);
        unsigned int found, again;

        memcpy(a, data, len);
        found = redact_cfg(a, len);
        for (size_t i = 0; i < len; i++)
                if (a[i] != data[i] && a[i] != 0)
                        __builtin_trap();
        memcpy(b, a, len);
        again = redact_cfg(b, len);
        /* A second walk may stop sooner (a capability header inside a body
         * zeroed later in the first walk reads 0 now) but zeroes no more. */
        if ((again & ~found) || memcmp(a, b, len))
                __builtin_trap();
        /* planted: a DSN first in the extended list, a VPD first in the
         * standard one (type 0 header, capability list bit set) */
        if (len >= 0x10c) {
                memcpy(a, data, len);
                a[0x100] = 0x03;
                a[0x101] = 0x00;
                memset(a + 0x104, 0xa5, 8);
                if (!(redact_cfg(a, len) & REDACT_CFG_DSN))
                        __builtin_trap();
                for (size_t i = 0x104; i < 0x10c; i++)
                        if (a[i])
                                __builtin_trap();
        }
        if (len >= 0x48) {
                memcpy(a, data, len);
                a[0x06] |= 0x10;
                a[0x0e] &= 0x80;
                a[0x34] = 0x40;
                a[0x40] = 0x03;
                memset(a + 0x44, 0x5a, 4);
                if (!(redact_cfg(a, len) & REDACT_CFG_VPD))
                        __builtin_trap();
                for (size_t i = 0x44; i < 0x48; i++)
                        if (a[i])
                                __builtin_trap();
        }
}

/* @in redacted into @out (@size: past the bound), checked, and again. */
static int redact_checked(const char *in, char *out, char *again, size_t size)
{
        int r = redact_cmdline(in, out, size);

        if (r < 0 || strlen(out) > strlen(in) + strlen(REDACT_MARKER) * (size_t)r)
                __builtin_trap();
        for (const char *p = out; *p; p++)
                if (*p != ' ' && (isspace((unsigned char)*p) || (unsigned char)*p == 0xa0))
                        __builtin_trap();
        if (redact_cmdline(out, again, size) < 0 || strcmp(out, again))
                __builtin_trap();
        return r;
}

static void fuzz_cmdline(const uint8_t *data, size_t size)
{
        static const char before[] = "ip=10.9.8.7:PLANT1 \"nfsroot=srv:/PLANT2 x\" rootpw=PLANT3 "
                                     "--password PLANT4 ";
        static const char after[] = " ks=http://u:PLANT5@h/ks.cfg -- PLANT6";
        size_t n = strnlen((const char *)data, size), quotes = 0, tlen = 0;
        size_t tsize = sizeof(before) + n + 1 + sizeof(after);
        /* the bound: the input plus 10 per value, a value per 2 bytes at most */
        size_t osize = 6 * tsize + 64;
        char *t = malloc(tsize), *out = malloc(osize), *again = malloc(osize);

        if (!t || !out || !again)
                goto out;
        memcpy(t, data, n);
        t[n] = '\0';
        redact_checked(t, out, again, osize);
        /* the same text with secrets around it: four before, ks= and init's
         * arguments behind (all behind one "--" if the input has one) */
        for (size_t i = 0; i < n; i++)
                quotes += data[i] == '"';
        memcpy(t, before, sizeof(before) - 1);
        tlen += sizeof(before) - 1;
        memcpy(t + tlen, data, n);
        tlen += n;
        if (quotes % 2)
                t[tlen++] = '"';
        memcpy(t + tlen, after, sizeof(after));
        if (redact_checked(t, out, again, osize) < 5 ||
            count(out, "PLANT") > count_n((const char *)data, n, "PLANT"))
                __builtin_trap();
out:
        free(t);
        free(out);
        free(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        fuzz_cfg(data, size);
        fuzz_cmdline(data, size);
        return 0;
}
