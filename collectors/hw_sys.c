// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hw_sys.c - the real back ends of the seam: the single funnel to
 * perf_event_open(2) and its fd calls, and read-only MMIO through mmap(2).
 *
 * This is the only file in collectors/ that calls syscall() or mmap().
 */
#include "hw_env.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int sys_perf_open(void *ctx, struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
                         unsigned long flags)
{
        long fd;

        (void)ctx;
        fd = syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags | PERF_FLAG_FD_CLOEXEC);
        return fd < 0 ? -errno : (int)fd;
}

static ssize_t sys_perf_read(void *ctx, int fd, void *buf, size_t len)
{
        ssize_t got;

        (void)ctx;
        do {
                got = read(fd, buf, len);
        } while (got < 0 && errno == EINTR);
        return got < 0 ? -errno : got;
}

static int sys_perf_ioctl(void *ctx, int fd, unsigned long request, unsigned long arg)
{
        (void)ctx;
        return ioctl(fd, request, arg) < 0 ? -errno : 0;
}

static int sys_perf_mmap(void *ctx, int fd, size_t len, int prot, off_t offset, void **addr)
{
        void *p;

        (void)ctx;
        p = mmap(NULL, len, prot, MAP_SHARED, fd, offset);
        if (p == MAP_FAILED)
                return -errno;
        *addr = p;
        return 0;
}

static int sys_perf_munmap(void *ctx, void *addr, size_t len)
{
        (void)ctx;
        return munmap(addr, len) < 0 ? -errno : 0;
}

static int sys_perf_close(void *ctx, int fd)
{
        (void)ctx;
        return close(fd) < 0 ? -errno : 0;
}

const struct perf_ops perf_ops_system = {
    .open = sys_perf_open,
    .read = sys_perf_read,
    .ioctl = sys_perf_ioctl,
    .mmap = sys_perf_mmap,
    .munmap = sys_perf_munmap,
    .close = sys_perf_close,
    .ctx = NULL,
};

struct mmio_region {
        void *base;
        size_t len;
};

static int sys_mmio_map(void *ctx, const char *path, off_t offset, size_t len,
                        struct mmio_region **out)
{
        long page = sysconf(_SC_PAGESIZE);
        struct mmio_region *r;
        struct stat st;
        int fd, err;
        void *p;

        (void)ctx;
        if (!len || page <= 0 || offset % page)
                return -EINVAL;
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        /* sysfs resource files report the BAR size as st_size; mapping past
         * it would fault on first access instead of failing here. */
        if (fstat(fd, &st) < 0) {
                err = -errno;
                close(fd);
                return err;
        }
        if (S_ISREG(st.st_mode) && (off_t)(offset + (off_t)len) > st.st_size) {
                close(fd);
                return -ERANGE;
        }
        p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, offset);
        err = p == MAP_FAILED ? -errno : 0;
        close(fd);
        if (err)
                return err;
        r = calloc(1, sizeof(*r));
        if (!r) {
                munmap(p, len);
                return -ENOMEM;
        }
        r->base = p;
        r->len = len;
        *out = r;
        return 0;
}

static int sys_mmio_read32(void *ctx, const struct mmio_region *r, size_t off, uint32_t *val)
{
        (void)ctx;
        if (off % 4 || off > r->len || r->len - off < 4)
                return -ERANGE;
        /* One aligned 32-bit load, as a device register wants it. */
        *val = *(const volatile uint32_t *)((const char *)r->base + off);
        return 0;
}

static int sys_mmio_read64(void *ctx, const struct mmio_region *r, size_t off, uint64_t *val)
{
        (void)ctx;
        if (off % 8 || off > r->len || r->len - off < 8)
                return -ERANGE;
        *val = *(const volatile uint64_t *)((const char *)r->base + off);
        return 0;
}

static void sys_mmio_unmap(void *ctx, struct mmio_region *r)
{
        (void)ctx;
        if (!r)
                return;
        munmap(r->base, r->len);
        free(r);
}

const struct mmio_ops mmio_ops_system = {
    .map = sys_mmio_map,
    .read32 = sys_mmio_read32,
    .read64 = sys_mmio_read64,
    .unmap = sys_mmio_unmap,
    .ctx = NULL,
};
