// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_hw_env.c - the hardware seam: bounded file reads under a root, the
 * real perf_event_open funnel (software events, which work without a PMU)
 * and read-only MMIO over a plain file.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hw_env.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---- a temporary root ---- */

struct tree {
        char root[64];
        struct hw_env env;
};

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void)st;
        (void)flag;
        (void)ftw;
        return remove(path);
}

static int tree_setup(void **state)
{
        struct tree *t = calloc(1, sizeof(*t));

        if (!t)
                return -1;
        snprintf(t->root, sizeof(t->root), "/tmp/test_hw_env.XXXXXX");
        if (!mkdtemp(t->root)) {
                free(t);
                return -1;
        }
        t->env.sysfs_root = t->root;
        t->env.proc_root = t->root;
        *state = t;
        return 0;
}

static int tree_teardown(void **state)
{
        struct tree *t = *state;

        nftw(t->root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        free(t);
        return 0;
}

/* Writes @len bytes of @data to @rel (one directory level at most). */
static void put_file(const struct tree *t, const char *rel, const void *data, size_t len)
{
        char path[256];
        const char *slash = strchr(rel, '/');
        int fd;

        if (slash) {
                snprintf(path, sizeof(path), "%s/%.*s", t->root, (int)(slash - rel), rel);
                mkdir(path, 0755);
        }
        snprintf(path, sizeof(path), "%s/%s", t->root, rel);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, data, len), (ssize_t)len);
        close(fd);
}

/* A file of @len bytes 'a'..'z' repeated. */
static void put_sized(const struct tree *t, const char *rel, size_t len)
{
        char *data = malloc(len + 1);

        assert_non_null(data);
        for (size_t i = 0; i < len; i++)
                data[i] = (char)('a' + i % 26);
        put_file(t, rel, data, len);
        free(data);
}

/* ---- hw_env_init_system, hw_logf ---- */

static void test_init_system(void **state)
{
        struct hw_env env;

        (void)state;
        memset(&env, 0xff, sizeof(env));
        hw_env_init_system(&env);
        assert_string_equal(env.sysfs_root, "/sys");
        assert_string_equal(env.proc_root, "/proc");
        assert_ptr_equal(env.perf, &perf_ops_system);
        assert_ptr_equal(env.mmio, &mmio_ops_system);
        assert_null(env.pci);
        assert_null(env.log);
        assert_null(env.log_ctx);
}

struct log_capture {
        int calls;
        enum hw_log_level level;
        char msg[2048];
};

static void capture_log(void *ctx, enum hw_log_level level, const char *msg)
{
        struct log_capture *c = ctx;

        c->calls++;
        c->level = level;
        snprintf(c->msg, sizeof(c->msg), "%s", msg);
}

static void test_logf(void **state)
{
        struct log_capture cap = {0};
        struct hw_env env = {.log = capture_log, .log_ctx = &cap};
        struct hw_env quiet = {0};
        char big[1500];

        (void)state;
        hw_logf(&env, HW_LOG_WARNING, "device %s: %d", "0000:03:00.0", 42);
        assert_int_equal(cap.calls, 1);
        assert_int_equal(cap.level, HW_LOG_WARNING);
        assert_string_equal(cap.msg, "device 0000:03:00.0: 42");

        /* Long messages are cut, not overflowed. */
        memset(big, 'm', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        hw_logf(&env, HW_LOG_DEBUG, "%s", big);
        assert_int_equal(cap.calls, 2);
        assert_int_equal(cap.level, HW_LOG_DEBUG);
        assert_true(strlen(cap.msg) > 0 && strlen(cap.msg) < sizeof(big) - 1);
        assert_int_equal(strspn(cap.msg, "m"), strlen(cap.msg));

        /* No callback, or no env: nothing happens. */
        hw_logf(&quiet, HW_LOG_ERROR, "dropped");
        hw_logf(NULL, HW_LOG_ERROR, "dropped");
        assert_int_equal(cap.calls, 2);
}

/* ---- hw_read_file, hw_path ---- */

static void test_read_file(void **state)
{
        struct tree *t = *state;
        char buf[64];
        ssize_t n;

        put_file(t, "bus/vendor", "0x8086\n", 7);
        memset(buf, 0xff, sizeof(buf));
        n = hw_read_file(&t->env, HW_SYSFS, buf, sizeof(buf), "bus/%s", "vendor");
        assert_int_equal(n, 7);
        assert_string_equal(buf, "0x8086\n");

        /* The procfs root is separate. */
        put_file(t, "cmdline", "root=/dev/sda1 pci=pcie_bus_perf\n", 33);
        memset(buf, 0xff, sizeof(buf));
        n = hw_read_file(&t->env, HW_PROCFS, buf, sizeof(buf), "cmdline");
        assert_int_equal(n, 33);
        assert_string_equal(buf, "root=/dev/sda1 pci=pcie_bus_perf\n");

        /* An empty file: 0 bytes and an empty string. */
        put_file(t, "empty", "", 0);
        memset(buf, 0xff, sizeof(buf));
        assert_int_equal(hw_read_file(&t->env, HW_SYSFS, buf, sizeof(buf), "empty"), 0);
        assert_int_equal(buf[0], '\0');

        /* Binary content with NULs comes back byte for byte. */
        put_file(t, "config", "\x86\x80\x00\x10", 4);
        memset(buf, 0xff, sizeof(buf));
        assert_int_equal(hw_read_file(&t->env, HW_SYSFS, buf, sizeof(buf), "config"), 4);
        assert_memory_equal(buf, "\x86\x80\x00\x10\x00", 5);
}

static void test_read_file_missing(void **state)
{
        struct tree *t = *state;
        struct hw_env no_root = {0};
        struct hw_env empty_root = {.sysfs_root = "", .proc_root = ""};
        char buf[16];

        put_file(t, "present", "x\n", 2);
        memset(buf, 0xff, sizeof(buf));
        assert_int_equal(hw_read_file(&t->env, HW_SYSFS, buf, sizeof(buf), "absent"), -ENOENT);
        assert_int_equal(hw_read_file(&t->env, HW_SYSFS, buf, sizeof(buf), "nodir/absent"),
                         -ENOENT);
        assert_int_equal(hw_read_file(&no_root, HW_SYSFS, buf, sizeof(buf), "present"), -ENOENT);
        assert_int_equal(hw_read_file(&no_root, HW_PROCFS, buf, sizeof(buf), "present"), -ENOENT);
        assert_int_equal(hw_read_file(&empty_root, HW_SYSFS, buf, sizeof(buf), "present"), -ENOENT);
        /* A directory is not a file. */
        assert_int_equal(hw_read_file(&t->env, HW_SYSFS, buf, sizeof(buf), "."), -EISDIR);
}

static void test_read_file_sizes(void **state)
{
        static const struct {
                size_t file, buf;
                ssize_t ret;
        } rows[] = {
            {63, 64, 63},     /* size - 1 bytes fit */
            {64, 64, -EFBIG}, /* no room for the NUL */
            {100, 64, -EFBIG},
            {1, 2, 1},
            {2, 2, -EFBIG},
            {0, 1, 0},
            {4095, 4096, 4095},
            {4096, 4096, -EFBIG},
            {HW_FILE_MAX - 1, HW_FILE_MAX, HW_FILE_MAX - 1},
            {HW_FILE_MAX * 2, HW_FILE_MAX, -EFBIG},
        };
        struct tree *t = *state;
        char *buf = malloc(HW_FILE_MAX + 1);
        int failed = 0;

        assert_non_null(buf);
        for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
                ssize_t n;

                put_sized(t, "sized", rows[i].file);
                memset(buf, 0xff, HW_FILE_MAX + 1);
                n = hw_read_file(&t->env, HW_SYSFS, buf, rows[i].buf, "sized");
                if (n != rows[i].ret) {
                        print_message("# %zu-byte file into %zu bytes: %zd, expected %zd\n",
                                      rows[i].file, rows[i].buf, n, rows[i].ret);
                        failed++;
                        continue;
                }
                /* Always NUL-terminated inside the buffer, never past it. */
                if (n >= 0 &&
                    (buf[n] != '\0' || (n > 0 && buf[n - 1] != (char)('a' + (n - 1) % 26)))) {
                        print_message("# %zu-byte file: not terminated at %zd\n", rows[i].file, n);
                        failed++;
                }
                if ((unsigned char)buf[rows[i].buf] != 0xff) {
                        print_message("# %zu-byte file: wrote past %zu bytes\n", rows[i].file,
                                      rows[i].buf);
                        failed++;
                }
        }
        free(buf);
        assert_int_equal(failed, 0);
}

/* A FIFO delivers the content in two pieces; the reader loops to EOF. */
/* Only regular files are read (sysfs attributes and procfs files are):
 * a FIFO planted under the root is refused at once instead of blocking the
 * reading thread in open() (before, a FIFO without a writer hung it for
 * ever), and a directory says so. */
static void test_read_file_not_regular(void **state)
{
        struct tree *t = *state;
        char path[128], buf[64];

        snprintf(path, sizeof(path), "%s/fifo", t->root);
        assert_int_equal(mkfifo(path, 0600), 0);
        alarm(10); /* a blocked open() fails the test instead of hanging it */
        assert_int_equal(hw_read_file(&t->env, HW_SYSFS, buf, sizeof(buf), "fifo"), -EINVAL);
        alarm(0);
        snprintf(path, sizeof(path), "%s/dir", t->root);
        assert_int_equal(mkdir(path, 0755), 0);
        assert_int_equal(hw_read_file(&t->env, HW_SYSFS, buf, sizeof(buf), "dir"), -EISDIR);
}

static void test_read_file_long_path(void **state)
{
        struct tree *t = *state;
        char name[600], buf[16];

        memset(name, 'n', sizeof(name) - 1);
        name[sizeof(name) - 1] = '\0';
        memset(buf, 0xff, sizeof(buf));
        assert_int_equal(hw_read_file(&t->env, HW_SYSFS, buf, sizeof(buf), "%s", name),
                         -ENAMETOOLONG);
}

static void test_path(void **state)
{
        struct hw_env env = {.sysfs_root = "/sys", .proc_root = "/fixture/proc"};
        struct hw_env none = {0};
        char out[32];

        (void)state;
        memset(out, 0xff, sizeof(out));
        assert_int_equal(hw_path(&env, HW_SYSFS, out, sizeof(out), "bus/pci"), 0);
        assert_string_equal(out, "/sys/bus/pci");
        assert_int_equal(hw_path(&env, HW_PROCFS, out, sizeof(out), "cmdline"), 0);
        assert_string_equal(out, "/fixture/proc/cmdline");
        /* "/sys/bus/pci" is 12 characters: 13 bytes fit, 12 do not. */
        assert_int_equal(hw_path(&env, HW_SYSFS, out, 13, "bus/pci"), 0);
        assert_int_equal(hw_path(&env, HW_SYSFS, out, 12, "bus/pci"), -ENAMETOOLONG);
        assert_int_equal(
            hw_path(&env, HW_SYSFS, out, sizeof(out), "bus/pci/devices/0000:00:00.0/config"),
            -ENAMETOOLONG);
        assert_int_equal(hw_path(&none, HW_SYSFS, out, sizeof(out), "bus"), -ENOENT);
        assert_int_equal(hw_path(&none, HW_PROCFS, out, sizeof(out), "cmdline"), -ENOENT);
}

/* ---- perf_ops_system with software events ---- */

struct group_read {
        uint64_t nr;
        uint64_t time_enabled;
        uint64_t time_running;
        uint64_t values[2];
};

static void sw_attr(struct perf_event_attr *attr, uint64_t config, bool leader)
{
        memset(attr, 0, sizeof(*attr));
        attr->type = PERF_TYPE_SOFTWARE;
        attr->size = sizeof(*attr);
        attr->config = config;
        attr->disabled = leader;
        attr->read_format =
            PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
        /* Own process, user space only: allowed at perf_event_paranoid 2. */
        attr->exclude_kernel = 1;
        attr->exclude_hv = 1;
}

static void burn_cpu(void)
{
        struct timespec start, now;
        volatile uint64_t x = 1;

        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &start);
        do {
                for (int i = 0; i < 100000; i++)
                        x = x * 6364136223846793005ull + 1442695040888963407ull;
                clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
        } while ((now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec) <
                 20 * 1000 * 1000);
}

static bool perf_unavailable(int err)
{
        return err == -EACCES || err == -EPERM || err == -ENOENT || err == -ENOSYS ||
               err == -EOPNOTSUPP;
}

static void skip_perf(const char *what, int err)
{
        char paranoid[16] = "?";
        FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");

        if (f) {
                if (!fgets(paranoid, sizeof(paranoid), f))
                        snprintf(paranoid, sizeof(paranoid), "?");
                paranoid[strcspn(paranoid, "\n")] = '\0';
                fclose(f);
        }
        print_message("# perf_event_open(%s) not permitted here (%s, perf_event_paranoid=%s): "
                      "skipping\n",
                      what, strerror(-err), paranoid);
        skip();
}

static void test_perf_sw_group(void **state)
{
        const struct perf_ops *ops = &perf_ops_system;
        struct perf_event_attr attr;
        struct group_read gr;
        int leader, member;
        ssize_t n;

        (void)state;
        sw_attr(&attr, PERF_COUNT_SW_CPU_CLOCK, true);
        leader = ops->open(ops->ctx, &attr, 0, -1, -1, 0);
        if (leader < 0 && perf_unavailable(leader))
                skip_perf("cpu-clock", leader);
        assert_true(leader >= 0);
        sw_attr(&attr, PERF_COUNT_SW_TASK_CLOCK, false);
        member = ops->open(ops->ctx, &attr, 0, -1, leader, 0);
        assert_true(member >= 0);
        assert_int_not_equal(member, leader);

        /* The fds are close-on-exec (the funnel adds the flag). */
        assert_true(fcntl(leader, F_GETFD) & FD_CLOEXEC);

        assert_int_equal(ops->ioctl(ops->ctx, leader, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP),
                         0);
        burn_cpu();
        assert_int_equal(ops->ioctl(ops->ctx, leader, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP),
                         0);

        memset(&gr, 0, sizeof(gr));
        n = ops->read(ops->ctx, leader, &gr, sizeof(gr));
        assert_int_equal(n, sizeof(gr));
        assert_int_equal(gr.nr, 2);
        assert_true(gr.time_enabled > 0);
        assert_true(gr.time_running > 0);
        assert_true(gr.time_running <= gr.time_enabled);
        /* At least 10 ms of the 20 ms burnt, in ns, on both clocks. */
        if (gr.values[0] < 10000000 || gr.values[1] < 10000000)
                print_message("# cpu-clock %llu ns, task-clock %llu ns\n",
                              (unsigned long long)gr.values[0], (unsigned long long)gr.values[1]);
        assert_true(gr.values[0] >= 10000000);
        assert_true(gr.values[1] >= 10000000);

        /* A buffer too small for the group: an errno, not -1. */
        n = ops->read(ops->ctx, leader, &gr, 8);
        assert_int_equal(n, -ENOSPC);

        assert_int_equal(ops->close(ops->ctx, member), 0);
        assert_int_equal(ops->close(ops->ctx, leader), 0);

        /* Calls on a closed fd come back as -EBADF. */
        assert_int_equal(ops->read(ops->ctx, leader, &gr, sizeof(gr)), -EBADF);
        assert_int_equal(ops->ioctl(ops->ctx, leader, PERF_EVENT_IOC_ENABLE, 0), -EBADF);
        assert_int_equal(ops->close(ops->ctx, leader), -EBADF);
}

static void test_perf_mmap(void **state)
{
        const struct perf_ops *ops = &perf_ops_system;
        long page = sysconf(_SC_PAGESIZE);
        struct perf_event_attr attr;
        void *addr = NULL;
        int fd;

        (void)state;
        sw_attr(&attr, PERF_COUNT_SW_TASK_CLOCK, true);
        attr.read_format = 0;
        fd = ops->open(ops->ctx, &attr, 0, -1, -1, 0);
        if (fd < 0 && perf_unavailable(fd))
                skip_perf("task-clock", fd);
        assert_true(fd >= 0);
        /* The user page alone (no data pages) may be mapped read-only. */
        assert_int_equal(ops->mmap(ops->ctx, fd, (size_t)page, PROT_READ, 0, &addr), 0);
        assert_non_null(addr);
        /* The kernel fills the user page in (since Linux 3.12). */
        assert_int_equal(((const struct perf_event_mmap_page *)addr)->cap_bit0_is_deprecated, 1);
        assert_int_equal(ops->munmap(ops->ctx, addr, (size_t)page), 0);
        /* Unaligned address: -EINVAL from munmap. */
        assert_int_equal(ops->munmap(ops->ctx, (char *)addr + 1, (size_t)page), -EINVAL);
        assert_int_equal(ops->close(ops->ctx, fd), 0);
        addr = NULL;
        assert_int_equal(ops->mmap(ops->ctx, fd, (size_t)page, PROT_READ, 0, &addr), -EBADF);
        assert_null(addr);
}

static void test_perf_errors(void **state)
{
        const struct perf_ops *ops = &perf_ops_system;
        struct perf_event_attr attr;
        int fd;

        (void)state;
        /* Where perf_event_open is refused as a whole (seccomp, paranoid
         * 3), every error below would read -EPERM: nothing to learn. */
        sw_attr(&attr, PERF_COUNT_SW_CPU_CLOCK, true);
        fd = ops->open(ops->ctx, &attr, 0, -1, -1, 0);
        if (fd < 0 && perf_unavailable(fd))
                skip_perf("cpu-clock", fd);
        assert_true(fd >= 0);
        assert_int_equal(ops->close(ops->ctx, fd), 0);

        /* No such PMU type. The raw syscall returns -1 with errno; the ops
         * must give -errno instead, and an unknown type is not EPERM. */
        attr.type = 0x7fff0000;
        fd = ops->open(ops->ctx, &attr, 0, -1, -1, 0);
        assert_true(fd < 0);
        assert_int_not_equal(fd, -1);
        print_message("# unknown PMU type: %s\n", strerror(-fd));

        /* A software event with an unknown config. */
        sw_attr(&attr, 0x7fffffff, true);
        fd = ops->open(ops->ctx, &attr, 0, -1, -1, 0);
        assert_true(fd < 0);
        assert_int_not_equal(fd, -1);

        /* A group fd that is not a perf event. */
        sw_attr(&attr, PERF_COUNT_SW_CPU_CLOCK, false);
        fd = ops->open(ops->ctx, &attr, 0, -1, 0x7ffffff, 0);
        assert_int_equal(fd, -EBADF);

        assert_int_equal(ops->read(ops->ctx, -1, &attr, 8), -EBADF);
        assert_int_equal(ops->ioctl(ops->ctx, -1, PERF_EVENT_IOC_DISABLE, 0), -EBADF);
        assert_int_equal(ops->close(ops->ctx, -1), -EBADF);
}

/* ---- mmio_ops_system over a plain file ---- */

static void make_window_file(struct tree *t, char *path, size_t size, size_t page)
{
        uint8_t *data = calloc(1, 2 * page);
        uint32_t v32;
        uint64_t v64;

        assert_non_null(data);
        v32 = 0x11223344u;
        memcpy(data + 0, &v32, 4);
        v32 = 0xdeadbeefu;
        memcpy(data + 4, &v32, 4);
        v64 = 0x0102030405060708ull;
        memcpy(data + 8, &v64, 8);
        v32 = 0xcafef00du;
        memcpy(data + page, &v32, 4);
        v64 = 0xa5a5a5a55a5a5a5aull;
        memcpy(data + 2 * page - 8, &v64, 8);
        put_file(t, "resource0", data, 2 * page);
        free(data);
        snprintf(path, size, "%s/resource0", t->root);
}

static void test_mmio_read(void **state)
{
        const struct mmio_ops *ops = &mmio_ops_system;
        struct tree *t = *state;
        size_t page = (size_t)sysconf(_SC_PAGESIZE);
        struct mmio_region *r = NULL;
        char path[128];
        uint32_t v32;
        uint64_t v64;

        make_window_file(t, path, sizeof(path), page);
        assert_int_equal(ops->map(ops->ctx, path, 0, 2 * page, &r), 0);
        assert_non_null(r);
        assert_int_equal(ops->read32(ops->ctx, r, 0, &v32), 0);
        assert_int_equal(v32, 0x11223344u);
        assert_int_equal(ops->read32(ops->ctx, r, 4, &v32), 0);
        assert_int_equal(v32, 0xdeadbeefu);
        assert_int_equal(ops->read64(ops->ctx, r, 8, &v64), 0);
        assert_true(v64 == 0x0102030405060708ull);
        assert_int_equal(ops->read32(ops->ctx, r, page, &v32), 0);
        assert_int_equal(v32, 0xcafef00du);
        assert_int_equal(ops->read64(ops->ctx, r, 2 * page - 8, &v64), 0);
        assert_true(v64 == 0xa5a5a5a55a5a5a5aull);
        assert_int_equal(ops->read32(ops->ctx, r, 2 * page - 4, &v32), 0);

        /* Unaligned, and beyond the window: -ERANGE, value untouched. */
        v32 = 0x5555;
        v64 = 0x5555;
        assert_int_equal(ops->read32(ops->ctx, r, 2, &v32), -ERANGE);
        assert_int_equal(ops->read32(ops->ctx, r, 1, &v32), -ERANGE);
        assert_int_equal(ops->read64(ops->ctx, r, 4, &v64), -ERANGE);
        assert_int_equal(ops->read32(ops->ctx, r, 2 * page, &v32), -ERANGE);
        assert_int_equal(ops->read64(ops->ctx, r, 2 * page, &v64), -ERANGE);
        assert_int_equal(ops->read32(ops->ctx, r, 2 * page + 4096, &v32), -ERANGE);
        assert_int_equal(ops->read64(ops->ctx, r, 2 * page - 4, &v64), -ERANGE);
        assert_int_equal(v32, 0x5555);
        assert_true(v64 == 0x5555);
        ops->unmap(ops->ctx, r);

        /* A window at a page offset sees the file from there. */
        r = NULL;
        assert_int_equal(ops->map(ops->ctx, path, (off_t)page, page, &r), 0);
        assert_int_equal(ops->read32(ops->ctx, r, 0, &v32), 0);
        assert_int_equal(v32, 0xcafef00du);
        assert_int_equal(ops->read64(ops->ctx, r, page - 8, &v64), 0);
        assert_true(v64 == 0xa5a5a5a55a5a5a5aull);
        assert_int_equal(ops->read32(ops->ctx, r, page, &v32), -ERANGE);
        ops->unmap(ops->ctx, r);

        /* unmap(NULL) is a no-op. */
        ops->unmap(ops->ctx, NULL);
}

static void test_mmio_map_errors(void **state)
{
        const struct mmio_ops *ops = &mmio_ops_system;
        struct tree *t = *state;
        size_t page = (size_t)sysconf(_SC_PAGESIZE);
        struct mmio_region *r = NULL;
        char path[128], missing[160];

        make_window_file(t, path, sizeof(path), page);
        snprintf(missing, sizeof(missing), "%s/resource9", t->root);
        assert_int_equal(ops->map(ops->ctx, path, 0, 3 * page, &r), -ERANGE);
        assert_int_equal(ops->map(ops->ctx, path, (off_t)page, 2 * page, &r), -ERANGE);
        assert_int_equal(ops->map(ops->ctx, path, (off_t)(2 * page), page, &r), -ERANGE);
        assert_int_equal(ops->map(ops->ctx, path, 100, page, &r), -EINVAL);
        assert_int_equal(ops->map(ops->ctx, path, (off_t)page / 2, page, &r), -EINVAL);
        assert_int_equal(ops->map(ops->ctx, path, 0, 0, &r), -EINVAL);
        assert_int_equal(ops->map(ops->ctx, missing, 0, page, &r), -ENOENT);
        assert_null(r);
}

int main(void)
{
        const struct CMUnitTest test_hw_env[] = {
            cmocka_unit_test(test_init_system),
            cmocka_unit_test(test_logf),
            cmocka_unit_test_setup_teardown(test_read_file, tree_setup, tree_teardown),
            cmocka_unit_test_setup_teardown(test_read_file_missing, tree_setup, tree_teardown),
            cmocka_unit_test_setup_teardown(test_read_file_sizes, tree_setup, tree_teardown),
            cmocka_unit_test_setup_teardown(test_read_file_not_regular, tree_setup, tree_teardown),
            cmocka_unit_test_setup_teardown(test_read_file_long_path, tree_setup, tree_teardown),
            cmocka_unit_test(test_path),
            cmocka_unit_test(test_perf_sw_group),
            cmocka_unit_test(test_perf_mmap),
            cmocka_unit_test(test_perf_errors),
            cmocka_unit_test_setup_teardown(test_mmio_read, tree_setup, tree_teardown),
            cmocka_unit_test_setup_teardown(test_mmio_map_errors, tree_setup, tree_teardown),
        };

        return cmocka_run_group_tests(test_hw_env, NULL, NULL);
}
