// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_rw_spool.c - the on-disk spool: replay in order across reopen and
 * segments, the cursor surviving a restart, a torn tail cut off at open, a
 * corrupt record skipping (and counting) the rest of its segment, the size
 * limit dropping the oldest segments, the age limit, the directory lock,
 * and clear errors for an unusable directory; a full disk: a short write
 * reports the real errno (ENOSPC, not EIO) and leaves no partial record, and
 * a disk full at open still opens (replay frees space) with no cursor.tmp.
 */
#define _GNU_SOURCE /* unshare */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rw_spool.h"

static char dir[256];

static int setup(void **state)
{
        snprintf(dir, sizeof(dir), "/tmp/test_rw_spool.XXXXXX");
        return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
        char cmd[300];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        return system(cmd);
}

static struct rw_spool *open_sp(uint64_t max_bytes, int64_t max_age_ms, uint64_t seg)
{
        struct rw_spool_opts o = {.dir = dir,
                                  .max_bytes = max_bytes,
                                  .max_age_ms = max_age_ms,
                                  .segment_bytes = seg,
                                  .fsync = false};
        struct rw_spool *sp = NULL;
        char err[256];

        assert_int_equal(rw_spool_open(&o, &sp, err, sizeof(err)), 0);
        return sp;
}

static void put(struct rw_spool *sp, int i, size_t len, int64_t now)
{
        char *buf = malloc(len);

        memset(buf, 'a' + i % 26, len);
        snprintf(buf, len, "record %d", i);
        assert_int_equal(rw_spool_append(sp, buf, len, (uint32_t)(i + 1), now), 0);
        free(buf);
}

/* Peeks the next record and checks it is number i; consumes it. */
static void expect(struct rw_spool *sp, int i, int64_t now)
{
        void *data = NULL;
        size_t len;
        uint32_t samples;
        char want[32];

        assert_int_equal(rw_spool_peek(sp, now, &data, &len, &samples), 0);
        snprintf(want, sizeof(want), "record %d", i);
        assert_string_equal((char *)data, want);
        assert_int_equal(samples, i + 1);
        free(data);
        assert_int_equal(rw_spool_consume(sp), 0);
}

static void expect_empty(struct rw_spool *sp, int64_t now)
{
        void *data = NULL;
        size_t len;
        uint32_t samples;

        assert_int_equal(rw_spool_peek(sp, now, &data, &len, &samples), -ENOENT);
        assert_true(rw_spool_empty(sp));
}

static void test_order_and_reopen(void **state)
{
        struct rw_spool *sp = open_sp(0, 0, 4096);
        struct rw_spool_stats st;

        expect_empty(sp, 1000);
        for (int i = 0; i < 20; i++)
                put(sp, i, 1000, 1000); /* several 4 KiB segments */
        rw_spool_get_stats(sp, &st);
        assert_int_equal(st.records, 20);
        assert_int_equal(st.bytes, 20 * (1000 + RW_SPOOL_HEADER));
        expect(sp, 0, 1000);
        expect(sp, 1, 1000);
        rw_spool_close(sp);

        /* The cursor survives: replay goes on with record 2. */
        sp = open_sp(0, 0, 4096);
        rw_spool_get_stats(sp, &st);
        assert_int_equal(st.records, 18);
        for (int i = 2; i < 10; i++)
                expect(sp, i, 1000);
        put(sp, 20, 100, 1000); /* appending while replaying */
        for (int i = 10; i <= 20; i++)
                expect(sp, i, 1000);
        expect_empty(sp, 1000);
        rw_spool_close(sp);
}

/* The *.spool files' sizes in dir, as du would count them. */
static uint64_t segments_on_disk(void)
{
        DIR *d = opendir(dir);
        struct dirent *e;
        uint64_t sum = 0;

        assert_non_null(d);
        while ((e = readdir(d))) {
                char path[600];
                struct stat stt;
                size_t n = strlen(e->d_name);

                if (n < 6 || strcmp(e->d_name + n - 6, ".spool"))
                        continue;
                snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
                assert_int_equal(stat(path, &stt), 0);
                sum += (uint64_t)stt.st_size;
        }
        closedir(d);
        return sum;
}

/* bytes counts what is unsent; disk_bytes what the segments hold on disk:
 * sent records stay until their segment is full, read, and a newer exists. */
static void test_disk_bytes(void **state)
{
        struct rw_spool *sp = open_sp(0, 0, 4096);
        struct rw_spool_stats st;
        const uint64_t rec = 1000 + RW_SPOOL_HEADER;

        (void)state;
        for (int i = 0; i < 3; i++)
                put(sp, i, 1000, 1000);
        expect(sp, 0, 1000);
        expect(sp, 1, 1000);
        rw_spool_get_stats(sp, &st);
        assert_int_equal(st.bytes, rec);
        assert_int_equal(st.disk_bytes, 3 * rec);
        assert_int_equal(st.disk_bytes, segments_on_disk());
        expect(sp, 2, 1000);
        rw_spool_get_stats(sp, &st);
        assert_int_equal(st.bytes, 0);
        assert_int_equal(st.disk_bytes, 3 * rec); /* all sent, still on disk */
        assert_int_equal(st.disk_bytes, segments_on_disk());
        /* Past the 4 KiB segment a new one starts; once the old one is
         * read to its end it goes. */
        for (int i = 3; i < 8; i++)
                put(sp, i, 1000, 1000);
        for (int i = 3; i < 8; i++)
                expect(sp, i, 1000);
        rw_spool_get_stats(sp, &st);
        assert_int_equal(st.bytes, 0);
        assert_true(st.disk_bytes < 8 * rec);
        assert_int_equal(st.disk_bytes, segments_on_disk());
        rw_spool_close(sp);
}

static void test_lock(void **state)
{
        struct rw_spool *a = open_sp(0, 0, 0), *b = NULL;
        struct rw_spool_opts o = {.dir = dir};
        char err[256] = "";

        assert_int_equal(rw_spool_open(&o, &b, err, sizeof(err)), -EBUSY);
        assert_non_null(strstr(err, "in use"));
        rw_spool_close(a);
}

static void test_bad_dir(void **state)
{
        char path[300], err[512] = "";
        struct rw_spool_opts o = {.dir = path};
        struct rw_spool *sp = NULL;
        FILE *f;

        snprintf(path, sizeof(path), "%s/file", dir);
        f = fopen(path, "w");
        fclose(f);
        snprintf(path, sizeof(path), "%s/file/sub", dir);
        assert_int_not_equal(rw_spool_open(&o, &sp, err, sizeof(err)), 0);
        assert_non_null(strstr(err, "SpoolDir"));
        assert_non_null(strstr(err, path));
}

/* The oldest segment's path (n >= 600). */
static char *only_segment(char *buf, size_t n)
{
        DIR *d = opendir(dir);
        struct dirent *de;

        buf[0] = '\0';
        while ((de = readdir(d)))
                if (strstr(de->d_name, ".spool") && strlen(de->d_name) < 64 &&
                    (!buf[0] || strcmp(de->d_name, strrchr(buf, '/') + 1) < 0))
                        snprintf(buf, n, "%s/%.63s", dir, de->d_name);
        closedir(d);
        return buf;
}

static void test_torn_tail(void **state)
{
        struct rw_spool *sp = open_sp(0, 0, 0);
        char seg[600];
        int fd;
        struct stat st;

        put(sp, 0, 200, 1000);
        put(sp, 1, 200, 1000);
        rw_spool_close(sp);
        /* A crash in the middle of the third append: half a header. */
        only_segment(seg, sizeof(seg));
        fd = open(seg, O_WRONLY | O_APPEND);
        assert_int_equal(write(fd, "PRW1\x10\x00", 6), 6);
        close(fd);
        sp = open_sp(0, 0, 0);
        stat(seg, &st);
        assert_int_equal(st.st_size, 2 * (200 + RW_SPOOL_HEADER));
        put(sp, 2, 200, 1000); /* appends cleanly after the cut */
        expect(sp, 0, 1000);
        expect(sp, 1, 1000);
        expect(sp, 2, 1000);
        expect_empty(sp, 1000);
        rw_spool_close(sp);
}

static void test_corrupt_record(void **state)
{
        struct rw_spool *sp = open_sp(0, 0, 900);
        struct rw_spool_stats st;
        char seg[600];
        int fd;

        put(sp, 0, 300, 1000); /* segment 1 (972 bytes): records 0, 1, 2 */
        put(sp, 1, 300, 1000);
        put(sp, 2, 300, 1000);
        put(sp, 3, 300, 1000); /* segment 2 */
        rw_spool_close(sp);
        /* Flip one payload byte of record 1. */
        only_segment(seg, sizeof(seg));
        fd = open(seg, O_RDWR);
        assert_int_equal(pwrite(fd, "X", 1, 300 + RW_SPOOL_HEADER + RW_SPOOL_HEADER + 50), 1);
        close(fd);
        sp = open_sp(0, 0, 900);
        expect(sp, 0, 1000);
        /* Records 1 and 2 go (no trustworthy way past a bad record), the
         * next segment is read. */
        expect(sp, 3, 1000);
        rw_spool_get_stats(sp, &st);
        assert_true(st.dropped_corrupt_records >= 1);
        expect_empty(sp, 1000);
        rw_spool_close(sp);

        /* Garbage where the header of the newest segment's last record
         * should be (record 3 before it was sent already): cut at open. */
        sp = open_sp(0, 0, 0);
        put(sp, 5, 100, 1000);
        rw_spool_close(sp);
        only_segment(seg, sizeof(seg));
        fd = open(seg, O_RDWR);
        assert_int_equal(pwrite(fd, "JUNK", 4, 300 + RW_SPOOL_HEADER), 4);
        close(fd);
        sp = open_sp(0, 0, 0);
        expect_empty(sp, 1000);
        rw_spool_get_stats(sp, &st);
        assert_int_equal(st.dropped_corrupt_records, 1);
        rw_spool_close(sp);
}

static void test_size_limit(void **state)
{
        const uint64_t max = 1 << 20;
        struct rw_spool *sp = open_sp(max, 0, 0); /* segments of max/8 */
        struct rw_spool_stats st;
        void *data = NULL;
        size_t len;
        uint32_t samples;
        int first;

        for (int i = 0; i < 64; i++)
                put(sp, i, 64 << 10, 1000);
        rw_spool_get_stats(sp, &st);
        assert_true(st.bytes <= max);
        assert_true(st.dropped_size_samples > 0);
        /* What is left is the newest data, in order, up to record 63. */
        assert_int_equal(rw_spool_peek(sp, 1000, &data, &len, &samples), 0);
        assert_int_equal(sscanf(data, "record %d", &first), 1);
        free(data);
        assert_true(first > 0);
        for (int i = first; i < 64; i++)
                expect(sp, i, 1000);
        expect_empty(sp, 1000);
        /* Samples dropped + samples replayed = samples appended. */
        {
                uint64_t kept = 0, all = 0;

                for (int i = 0; i < 64; i++)
                        all += (uint64_t)i + 1;
                for (int i = first; i < 64; i++)
                        kept += (uint64_t)i + 1;
                assert_int_equal(st.dropped_size_samples, all - kept);
        }
        /* A record larger than half the limit is refused. */
        {
                char *big = calloc(1, max / 2);

                assert_int_equal(rw_spool_append(sp, big, max / 2, 1, 1000), -EFBIG);
                free(big);
        }
        rw_spool_close(sp);
}

static void test_age_limit(void **state)
{
        struct rw_spool *sp = open_sp(0, 5000, 0);
        struct rw_spool_stats st;

        put(sp, 0, 100, 1000); /* 10 s old at now = 11000 */
        put(sp, 1, 100, 4000); /* 7 s old */
        put(sp, 2, 100, 9000); /* 2 s old: kept */
        expect(sp, 2, 11000);
        rw_spool_get_stats(sp, &st);
        assert_int_equal(st.dropped_age_samples, 1 + 2);
        expect_empty(sp, 11000);
        rw_spool_close(sp);
}

/* Segments removed by hand while the cursor stays: what is spooled after
 * that must not be taken for sent at the next open. */
static void test_cursor_without_segments(void **state)
{
        struct rw_spool *sp = open_sp(0, 0, 4096);
        char cmd[400];

        for (int i = 0; i < 12; i++)
                put(sp, i, 1000, 1000); /* segments 1..4 */
        for (int i = 0; i < 10; i++)
                expect(sp, i, 1000); /* the cursor moves on to segment 4 */
        rw_spool_close(sp);
        snprintf(cmd, sizeof(cmd), "rm -f '%s'/*.spool", dir);
        assert_int_equal(system(cmd), 0);
        sp = open_sp(0, 0, 4096);
        expect_empty(sp, 1000);
        for (int i = 20; i < 26; i++)
                put(sp, i, 1000, 1000); /* new segments 1 and 2 */
        rw_spool_close(sp);
        sp = open_sp(0, 0, 4096);
        for (int i = 20; i < 26; i++)
                expect(sp, i, 1000);
        expect_empty(sp, 1000);
        rw_spool_close(sp);
}

static void test_crc(void **state)
{
        /* The standard check value of CRC-32/ISO-HDLC. */
        assert_int_equal(rw_crc32(0, "123456789", 9), 0xcbf43926u);
}

/* A file size limit makes the record's write short: the spool must report
 * why (EFBIG here, ENOSPC on a full disk), not EIO, and cut the partial
 * record so that the next open finds only whole ones. */
static void test_short_write_errno(void **state)
{
        struct rw_spool *sp = open_sp(0, 0, 1 << 20);
        struct rlimit old, lim;
        char *buf = calloc(1, 8192);
        void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
        int rc;

        (void)state;
        put(sp, 0, 100, 1);
        assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
        lim = old;
        lim.rlim_cur = 4096;
        assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
        rc = rw_spool_append(sp, buf, 8192, 1, 2);
        assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
        signal(SIGXFSZ, prev);
        assert_int_equal(rc, -EFBIG);
        put(sp, 2, 100, 3);
        rw_spool_close(sp);
        sp = open_sp(0, 0, 1 << 20);
        {
                struct rw_spool_stats st;

                rw_spool_get_stats(sp, &st);
                assert_int_equal(st.records, 2);
                assert_int_equal(st.dropped_corrupt_records, 0);
        }
        rw_spool_close(sp);
        free(buf);
}

/* In a child with a mount namespace of its own (root only, else skipped):
 * a 64 KiB tmpfs. Returns the child's exit status: 0 passed, 77 skipped. */
static int in_small_tmpfs(void (*fn)(const char *mnt))
{
        pid_t pid = fork();
        int st;

        assert_true(pid >= 0);
        if (pid == 0) {
                char mnt[300];

                snprintf(mnt, sizeof(mnt), "%s/mnt", dir);
                if (mkdir(mnt, 0700) || unshare(CLONE_NEWNS) ||
                    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
                    mount("tmpfs", mnt, "tmpfs", 0, "size=64k"))
                        _exit(77);
                fn(mnt);
                _exit(0);
        }
        assert_int_equal(waitpid(pid, &st, 0), pid);
        return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

#define CHILD_CHECK(c)                                                                             \
        do {                                                                                       \
                if (!(c)) {                                                                        \
                        fprintf(stderr, "# %s:%d: %s\n", __FILE__, __LINE__, #c);                  \
                        _exit(1);                                                                  \
                }                                                                                  \
        } while (0)

static void fill_disk(const char *mnt)
{
        struct rw_spool_opts o = {.dir = mnt, .segment_bytes = 1 << 20};
        struct rw_spool *sp;
        char err[256], *buf = calloc(1, 10000);
        int rc = 0, n = 0;

        CHILD_CHECK(rw_spool_open(&o, &sp, err, sizeof(err)) == 0);
        while (n < 100 && (rc = rw_spool_append(sp, buf, 10000, 1, 1)) == 0)
                n++;
        CHILD_CHECK(n >= 3 && n < 10);
        CHILD_CHECK(rc == -ENOSPC);
        rw_spool_close(sp);
        CHILD_CHECK(rw_spool_open(&o, &sp, err, sizeof(err)) == 0);
        {
                struct rw_spool_stats st;

                rw_spool_get_stats(sp, &st);
                CHILD_CHECK(st.records == (uint64_t)n);
        }
        rw_spool_close(sp);
        free(buf);
}

static void test_disk_full(void **state)
{
        int rc = in_small_tmpfs(fill_disk);

        (void)state;
        if (rc == 77)
                skip();
        assert_int_equal(rc, 0);
}

static void full_at_open(const char *mnt)
{
        char sd[400], filler[400], tmp[500];
        struct rw_spool_opts o = {.dir = sd};
        struct rw_spool *sp;
        char err[256], buf[4096] = {0};
        int fd;

        snprintf(sd, sizeof(sd), "%s/spool", mnt);
        snprintf(filler, sizeof(filler), "%s/filler", mnt);
        snprintf(tmp, sizeof(tmp), "%s/cursor.tmp", sd);
        CHILD_CHECK(mkdir(sd, 0700) == 0);
        fd = open(filler, O_WRONLY | O_CREAT, 0600);
        while (write(fd, buf, sizeof(buf)) == (ssize_t)sizeof(buf))
                ;
        close(fd);
        err[0] = '\0';
        CHILD_CHECK(rw_spool_open(&o, &sp, err, sizeof(err)) == 0);
        CHILD_CHECK(access(tmp, F_OK) != 0);
        CHILD_CHECK(rw_spool_append(sp, buf, 1000, 1, 1) == -ENOSPC);
        CHILD_CHECK(access(tmp, F_OK) != 0);
        unlink(filler);
        CHILD_CHECK(rw_spool_append(sp, buf, 1000, 1, 1) == 0);
        rw_spool_close(sp);
}

static void test_disk_full_at_open(void **state)
{
        int rc = in_small_tmpfs(full_at_open);

        (void)state;
        if (rc == 77)
                skip();
        assert_int_equal(rc, 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_order_and_reopen, setup, teardown),
            cmocka_unit_test_setup_teardown(test_disk_bytes, setup, teardown),
            cmocka_unit_test_setup_teardown(test_lock, setup, teardown),
            cmocka_unit_test_setup_teardown(test_bad_dir, setup, teardown),
            cmocka_unit_test_setup_teardown(test_torn_tail, setup, teardown),
            cmocka_unit_test_setup_teardown(test_corrupt_record, setup, teardown),
            cmocka_unit_test_setup_teardown(test_size_limit, setup, teardown),
            cmocka_unit_test_setup_teardown(test_age_limit, setup, teardown),
            cmocka_unit_test_setup_teardown(test_cursor_without_segments, setup, teardown),
            cmocka_unit_test(test_crc),
            cmocka_unit_test_setup_teardown(test_short_write_errno, setup, teardown),
            cmocka_unit_test_setup_teardown(test_disk_full, setup, teardown),
            cmocka_unit_test_setup_teardown(test_disk_full_at_open, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
