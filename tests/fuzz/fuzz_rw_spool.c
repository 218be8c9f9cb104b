// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_rw_spool.c - libFuzzer target: the remote_write spool reader on any
 * directory contents: a cursor file and two segment files made from the
 * input, opened (recovery), read to the end (peek + consume), then one
 * record appended and read back after a reopen.
 *
 * Input: the cursor text up to the first '\n' (at most 64 bytes, the line
 * included), then one byte k, then the segment bytes, split at k/256 of
 * their length into segments 1 and 2.
 *
 * Invariants: open succeeds on any contents (corruption is cut, skipped and
 * counted, never fatal); every record read is at most RW_SPOOL_MAX_RECORD
 * and has the size it claims; reading ends (bounded by the bytes given);
 * afterwards the spool is empty, and a record appended then comes back
 * byte for byte, first, after a reopen.
 */
#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rw_spool.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64];

static void clean(void)
{
        DIR *d = opendir(dir);
        struct dirent *de;
        char path[128];

        if (!d)
                return;
        while ((de = readdir(d)))
                if (de->d_name[0] != '.') {
                        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
                        unlink(path);
                }
        closedir(d);
}

static void remove_dir(void)
{
        clean();
        rmdir(dir);
}

/* A failed step says why before the crash: libFuzzer keeps only the input,
 * and a failure that depends on the file system may not come back. */
__attribute__((noreturn)) static void fail(const char *step, const char *why)
{
        fprintf(stderr, "fuzz_rw_spool: %s failed: %s\n", step, why);
        __builtin_trap();
}

static void put_file(const char *name, const uint8_t *p, size_t n)
{
        char path[128];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        f = fopen(path, "wb");
        if (!f)
                __builtin_trap();
        if (n && fwrite(p, 1, n, f) != n)
                __builtin_trap();
        fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const char mine[] = "appended after the fuzzed contents";
        struct rw_spool_opts o = {.dir = dir, .segment_bytes = 1 << 16};
        struct rw_spool *sp;
        char err[256];
        const uint8_t *nl;
        size_t clen, rest, cut;
        void *buf;
        size_t len;
        uint32_t samples;
        uint64_t reads = 0;
        int rc;

        if (!dir[0]) {
                /* a RAM file system when there is one: the target renames and
                 * truncates files on every run */
                snprintf(dir, sizeof(dir), "%s/fuzz_rw_spool.%d",
                         access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm", (int)getpid());
                mkdir(dir, 0700);
                atexit(remove_dir);
        }
        clean();
        nl = memchr(data, '\n', size < 64 ? size : 64);
        clen = nl ? (size_t)(nl - data) + 1 : 0;
        put_file("cursor", data, clen);
        if (clen < size) {
                rest = size - clen - 1;
                cut = rest * data[clen] / 256;
                put_file("0000000000000001.spool", data + clen + 1, cut);
                put_file("0000000000000002.spool", data + clen + 1 + cut, rest - cut);
        }
        if (rw_spool_open(&o, &sp, err, sizeof(err)) != 0)
                fail("open", err);
        while (rw_spool_peek(sp, 0, &buf, &len, &samples) == 0) {
                if (len > RW_SPOOL_MAX_RECORD || len + RW_SPOOL_HEADER > size || ++reads > size)
                        __builtin_trap();
                free(buf);
                if (rw_spool_consume(sp) != 0)
                        __builtin_trap();
        }
        if (!rw_spool_empty(sp))
                __builtin_trap();
        rc = rw_spool_append(sp, mine, sizeof(mine), 7, 1);
        if (rc != 0) {
                snprintf(err, sizeof(err), "%s", strerror(-rc));
                fail("append", err);
        }
        rw_spool_close(sp);
        if (rw_spool_open(&o, &sp, err, sizeof(err)) != 0)
                fail("reopen after the append", err);
        if (rw_spool_peek(sp, 0, &buf, &len, &samples) != 0 || len != sizeof(mine) ||
            samples != 7 || memcmp(buf, mine, len))
                __builtin_trap();
        free(buf);
        rw_spool_close(sp);
        return 0;
}
