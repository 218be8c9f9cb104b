/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hw_env.h - the one seam between pciescope's collectors and the machine.
 *
 * Every hardware or kernel access a collector makes goes through a struct
 * hw_env handed to it: files under the sysfs and procfs roots, PCI
 * configuration space (libpci, live or from an `lspci -xxxx` dump),
 * perf_event_open and friends, read-only MMIO, and logging. The real machine,
 * a fixture tree and the simulated machine are just different hw_envs; the
 * collectors run unchanged on all of them and never open /sys paths, list
 * directories, call syscall() or mmap() themselves: files and directories
 * below the roots go through hw_read_file, hw_write_file and hw_list_dir
 * (hw_env.c is the only code that opens them), perf through the perf ops,
 * register windows through the MMIO ops (which take a path under the root
 * built with hw_path).
 */
#ifndef PCIESCOPE_HW_ENV_H
#define PCIESCOPE_HW_ENV_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct perf_event_attr;
struct pci_source;

enum hw_log_level {
        HW_LOG_ERROR,
        HW_LOG_WARNING,
        HW_LOG_NOTICE,
        HW_LOG_INFO,
        HW_LOG_DEBUG,
};

typedef void (*hw_log_fn)(void *ctx, enum hw_log_level level, const char *msg);

/*
 * perf ops: the only way collectors reach perf_event_open(2) and the calls on
 * its file descriptors. Every function returns a negative errno on failure
 * (never -1 with errno). @ctx is perf_ops.ctx.
 */
struct perf_ops {
        /* Returns a file descriptor (>= 0). */
        int (*open)(void *ctx, struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
                    unsigned long flags);
        /* Returns bytes read. */
        ssize_t (*read)(void *ctx, int fd, void *buf, size_t len);
        int (*ioctl)(void *ctx, int fd, unsigned long request, unsigned long arg);
        /* Maps @len bytes at @offset of @fd; *@addr receives the mapping. */
        int (*mmap)(void *ctx, int fd, size_t len, int prot, off_t offset, void **addr);
        int (*munmap)(void *ctx, void *addr, size_t len);
        int (*close)(void *ctx, int fd);
        void *ctx;
};

/* The real syscalls; ctx unused. */
extern const struct perf_ops perf_ops_system;

/*
 * Read-only MMIO: a register window of a device (live: a sysfs `resourceN`
 * file; tests: any regular file). Errors: -ENOENT no such file, -EACCES not
 * permitted, -EINVAL offset/length not page-aligned or zero, -ERANGE window
 * beyond the file.
 */
struct mmio_region;
struct mmio_ops {
        int (*map)(void *ctx, const char *path, off_t offset, size_t len, struct mmio_region **out);
        /* Reads are bounds-checked: -ERANGE outside the window. */
        int (*read32)(void *ctx, const struct mmio_region *r, size_t off, uint32_t *val);
        int (*read64)(void *ctx, const struct mmio_region *r, size_t off, uint64_t *val);
        void (*unmap)(void *ctx, struct mmio_region *r);
        void *ctx;
};

/* mmap(2) of the file, PROT_READ, MAP_SHARED. */
extern const struct mmio_ops mmio_ops_system;

/*
 * Load ops: a known amount of traffic through one PCI function, which
 * `pciescope calibrate` measures with the PMU and the trace device at the
 * same time. Asynchronous: start returns at once, poll says when it ended,
 * so the caller keeps reading its counters and trace meanwhile.
 *   live (load_ops_system): O_DIRECT reads of @io_size bytes from the whole
 *        block device whose controller is the function (read-only, from
 *        offset 0, wrapping at its end), or, with @command, "/bin/sh -c
 *        @command", whose traffic the user states (@bytes);
 *   simulated: the bytes join the device's traffic as DMA writes.
 */
struct hw_load_request {
        char bdf[20];        /* the function, "0000:01:00.0" */
        uint64_t bytes;      /* to read; with a command, what the user says it moves */
        uint32_t io_size;    /* bytes per read (a multiple of 4096) */
        const char *command; /* NULL: read the block device */
        /* A command runs in a process group of its own, stopped whole when
         * it ends (what it left running), when it runs past @timeout_s
         * (poll: -ETIMEDOUT) and on release: SIGTERM, then SIGKILL after
         * HW_LOAD_KILL_GRACE_S, always reaped. 0: no time limit. */
        double timeout_s;
};

/* Seconds between a command group's SIGTERM and its SIGKILL. */
#define HW_LOAD_KILL_GRACE_S 2.0

struct hw_load_result {
        uint64_t bytes; /* moved: what the reads returned, or the user's figure */
        double seconds; /* how long it ran */
        char what[96];  /* "/dev/nvme0n1", "command", "simulated DMA writes" */
};

struct hw_load;
struct load_ops {
        /* Returns 0 and a running load; -ENODEV (no block device below the
         * function), -EOPNOTSUPP (not possible here), or an errno of
         * opening it. @why says which and where. */
        int (*start)(void *ctx, const struct hw_load_request *req, struct hw_load **out, char *why,
                     size_t whylen);
        /* 0: still running; 1: ended, @res filled; a negative errno: it
         * failed (a read error, the command's exit status: @why). */
        int (*poll)(void *ctx, struct hw_load *l, struct hw_load_result *res, char *why,
                    size_t whylen);
        /* Stops it if still running, and frees. */
        void (*release)(void *ctx, struct hw_load *l);
        void *ctx;
};

/* Block-device reads and commands on this machine (collectors/hw_load.c). */
extern const struct load_ops load_ops_system;

/* SIGKILL to the process group of every command load still running. For a
 * host's handler of a signal that ends it (async-signal-safe): a command's
 * group is not the host's, so a terminal's Ctrl-C does not reach it. */
void hw_load_kill_commands(void);

struct hw_env {
        const char *sysfs_root; /* "/sys", a fixture dir, or NULL: no sysfs */
        const char *proc_root;  /* "/proc", a fixture dir, or NULL: no procfs */
        struct pci_source *pci; /* config space access; may be NULL */
        const struct perf_ops *perf;
        const struct mmio_ops *mmio;
        const struct load_ops *load; /* NULL: no load can be made (a dump) */
        hw_log_fn log;
        void *log_ctx;
};

/* Defaults: /sys, /proc, the real perf, MMIO and load ops, no PCI, no logging. */
void hw_env_init_system(struct hw_env *env);

void hw_logf(const struct hw_env *env, enum hw_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

enum hw_fs { HW_SYSFS, HW_PROCFS };

/* Longest file a collector reads through the seam; sysfs attributes are
 * one page, /proc/cmdline is at most a few KiB. */
#define HW_FILE_MAX 65536

/*
 * hw_read_file - read a whole (small) file below the sysfs or procfs root.
 * @relpath: printf format of the path relative to the root, no leading "/".
 * @buf receives at most @size - 1 bytes and a terminating NUL.
 *
 * Returns the number of bytes read, -ENOENT when the root is not set or the
 * file does not exist, -EFBIG when the file does not fit in @buf, -EISDIR
 * or -EINVAL when it is a directory or not a regular file (a FIFO or a
 * device never blocks or floods the reader), or another negative errno
 * from open/read.
 */
ssize_t hw_read_file(const struct hw_env *env, enum hw_fs fs, char *buf, size_t size,
                     const char *relpath_fmt, ...) __attribute__((format(printf, 5, 6)));

/* Same, for a path under the root given as a format + va_list. */
ssize_t hw_read_file_v(const struct hw_env *env, enum hw_fs fs, char *buf, size_t size,
                       const char *relpath_fmt, va_list ap);

/*
 * hw_write_file - write @text to an existing file below the sysfs or
 * procfs root (a sysfs attribute such as a PTT tune file). The file is not
 * created. Returns 0, -ENOENT (no root or no such file), -ENAMETOOLONG, or
 * the negative errno of open/write/close (the driver's answer to a bad
 * value arrives as the write's errno, e.g. -EINVAL or -ETIMEDOUT).
 */
int hw_write_file(const struct hw_env *env, enum hw_fs fs, const char *text,
                  const char *relpath_fmt, ...) __attribute__((format(printf, 4, 5)));

/*
 * hw_list_dir - the names in a directory below the sysfs or procfs root
 * (in readdir order, without "." and ".."), one call of @visit each; a
 * non-zero return of @visit stops the listing and is returned. Returns 0,
 * -ENOENT (no root or no such directory), -ENOTDIR, -ENAMETOOLONG, the
 * errno of opendir (e.g. -EACCES), or @visit's value.
 */
typedef int (*hw_dir_visit_fn)(void *ctx, const char *name);
int hw_list_dir(const struct hw_env *env, enum hw_fs fs, hw_dir_visit_fn visit, void *ctx,
                const char *relpath_fmt, ...) __attribute__((format(printf, 5, 6)));

/* Absolute path of @relpath under the root; -ENAMETOOLONG or -ENOENT. */
int hw_path(const struct hw_env *env, enum hw_fs fs, char *out, size_t size, const char *relpath);

#endif /* PCIESCOPE_HW_ENV_H */
