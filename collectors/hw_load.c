/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hw_load.c - the live machine's load ops (hw_env.h): a known amount of
 * traffic through one PCI function for `pciescope calibrate`.
 *
 * Block-device reads: the whole disk whose sysfs path runs through the
 * function's directory is read with O_DIRECT (no page cache: every byte
 * crosses the link as the controller's DMA writes), sequentially from
 * offset 0 and wrapping at its end, on a thread of its own so the caller
 * keeps reading counters. Nothing is ever written. A command is run with
 * /bin/sh -c in a process group of its own; what it moves is the user's
 * figure. The whole group is stopped when the command ends (what it left
 * running in the background), when it runs past its time limit, and on
 * release: SIGTERM (and SIGCONT, for a stopped one), SIGKILL to whatever
 * is left after HW_LOAD_KILL_GRACE_S; the command itself is always
 * reaped. A process that leaves the group (setsid) is not followed.
 *
 * This is seam code: it alone opens /sys/block, /dev and forks here.
 */
#define _GNU_SOURCE
#include "hw_env.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct hw_load {
        bool is_command;
        /* block reads */
        pthread_t thread;
        bool thread_started;
        int fd;
        void *buf;
        uint32_t io_size;
        uint64_t target, disk_size;
        _Atomic uint64_t done_bytes;
        atomic_bool finished, stop;
        int error; /* errno of a failed read, set before finished */
        /* command: @pid leads the process group @pid */
        pid_t pid;
        int status;
        bool reaped;
        double timeout_s;
        /* both */
        double started, ended;
        char what[96];
};

/* The process groups of the commands running, for hw_load_kill_commands()
 * (0: a free slot). One command runs at a time; a few spare slots. */
#define MAX_GROUPS 4
static volatile sig_atomic_t running_groups[MAX_GROUPS];

static void groups_add(pid_t pgid)
{
        for (int i = 0; i < MAX_GROUPS; i++)
                if (!running_groups[i]) {
                        running_groups[i] = pgid;
                        return;
                }
}

static void groups_remove(pid_t pgid)
{
        for (int i = 0; i < MAX_GROUPS; i++)
                if (running_groups[i] == pgid)
                        running_groups[i] = 0;
}

void hw_load_kill_commands(void)
{
        for (int i = 0; i < MAX_GROUPS; i++)
                if (running_groups[i] > 0)
                        kill(-(pid_t)running_groups[i], SIGKILL);
}

static double mono_now(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void say(char *why, size_t whylen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void say(char *why, size_t whylen, const char *fmt, ...)
{
        va_list ap;

        if (!why || !whylen)
                return;
        va_start(ap, fmt);
        vsnprintf(why, whylen, fmt, ap);
        va_end(ap);
}

/* Whether the path @real has the directory component @bdf. */
static bool path_has_component(const char *real, const char *bdf)
{
        size_t n = strlen(bdf);

        for (const char *p = strstr(real, bdf); p; p = strstr(p + 1, bdf))
                if (p > real && p[-1] == '/' && (p[n] == '/' || p[n] == '\0'))
                        return true;
        return false;
}

/*
 * The /dev name of a disk of @bdf: the first entry of /sys/class/block
 * (disks and their partitions, hidden NVMe multipath paths included)
 * that is a whole disk and whose device path runs through the function.
 * A hidden path nvme<S>c<C>n<N> has no device node: its head nvme<S>n<N>
 * is the disk to read (the kernel's naming).
 */
static int find_disk(const char *bdf, char *name, size_t size)
{
        DIR *d = opendir("/sys/class/block");
        struct dirent *de;
        int ret = -ENODEV;

        if (!d)
                return -errno;
        while ((de = readdir(d)) && ret == -ENODEV) {
                char path[300], real[PATH_MAX], part[320];
                unsigned int s, c, n;
                struct stat st;

                if (de->d_name[0] == '.')
                        continue;
                snprintf(path, sizeof(path), "/sys/class/block/%s", de->d_name);
                snprintf(part, sizeof(part), "%s/partition", path);
                if (!realpath(path, real) || !stat(part, &st) || !path_has_component(real, bdf))
                        continue;
                if (sscanf(de->d_name, "nvme%uc%un%u", &s, &c, &n) == 3)
                        snprintf(name, size, "nvme%un%u", s, n);
                else
                        snprintf(name, size, "%s", de->d_name);
                ret = 0;
        }
        closedir(d);
        return ret;
}

static void *read_loop(void *arg)
{
        struct hw_load *l = arg;
        uint64_t off = 0;

        while (atomic_load(&l->done_bytes) < l->target && !atomic_load(&l->stop)) {
                ssize_t n;

                if (off + l->io_size > l->disk_size)
                        off = 0;
                n = pread(l->fd, l->buf, l->io_size, (off_t)off);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        l->error = n < 0 ? errno : EIO;
                        break;
                }
                off += (uint64_t)n;
                atomic_fetch_add(&l->done_bytes, (uint64_t)n);
        }
        l->ended = mono_now();
        atomic_store(&l->finished, true);
        return NULL;
}

static void load_free(struct hw_load *l)
{
        if (l->thread_started) {
                atomic_store(&l->stop, true);
                pthread_join(l->thread, NULL);
        }
        if (l->fd >= 0)
                close(l->fd);
        free(l->buf);
        free(l);
}

static int start_reads(const struct hw_load_request *req, struct hw_load *l, char *why,
                       size_t whylen)
{
        char disk[NAME_MAX + 1], dev[NAME_MAX + 8];
        int ret = find_disk(req->bdf, disk, sizeof(disk));

        if (ret == -ENODEV) {
                say(why, whylen,
                    "no block device has %s as its controller (/sys/class/block); give the load "
                    "with --run COMMAND and --bytes N",
                    req->bdf);
                return ret;
        }
        if (ret) {
                say(why, whylen, "/sys/class/block: %s", strerror(-ret));
                return ret;
        }
        snprintf(dev, sizeof(dev), "/dev/%s", disk);
        snprintf(l->what, sizeof(l->what), "%.*s", (int)sizeof(l->what) - 1, dev);
        l->fd = open(dev, O_RDONLY | O_DIRECT | O_CLOEXEC);
        if (l->fd < 0) {
                ret = -errno;
                say(why, whylen, "%s: %s", dev, strerror(errno));
                return ret;
        }
        if (ioctl(l->fd, BLKGETSIZE64, &l->disk_size) || l->disk_size < req->io_size) {
                say(why, whylen, "%s: cannot read its size, or it is smaller than one read", dev);
                return -EINVAL;
        }
        if (posix_memalign(&l->buf, 4096, req->io_size))
                return -ENOMEM;
        l->io_size = req->io_size;
        l->target = req->bytes;
        l->started = mono_now();
        ret = pthread_create(&l->thread, NULL, read_loop, l);
        if (ret) {
                say(why, whylen, "cannot start the reading thread: %s", strerror(ret));
                return -ret;
        }
        l->thread_started = true;
        return 0;
}

static int start_command(const struct hw_load_request *req, struct hw_load *l, char *why,
                         size_t whylen)
{
        snprintf(l->what, sizeof(l->what), "command");
        l->started = mono_now();
        l->timeout_s = req->timeout_s;
        l->pid = fork();
        if (l->pid < 0) {
                int ret = -errno;

                say(why, whylen, "cannot run the command: %s", strerror(errno));
                return ret;
        }
        if (l->pid == 0) {
                /* A group of its own, set on both sides of the fork so that
                 * it holds before either goes on. */
                setpgid(0, 0);
                execl("/bin/sh", "sh", "-c", req->command, (char *)NULL);
                _exit(127);
        }
        setpgid(l->pid, l->pid);
        groups_add(l->pid);
        l->is_command = true;
        return 0;
}

static void sleep_seconds(double s)
{
        struct timespec ts = {.tv_sec = (time_t)s,
                              .tv_nsec = (long)((s - (double)(time_t)s) * 1e9)};

        nanosleep(&ts, NULL);
}

/* Reaps the command if it ended (false: still running). */
static bool reap(struct hw_load *l, bool block)
{
        pid_t r;

        if (l->reaped)
                return true;
        do
                r = waitpid(l->pid, &l->status, block ? 0 : WNOHANG);
        while (r < 0 && errno == EINTR);
        if (r == 0)
                return false;
        if (r < 0) /* not our child any more: nothing to wait for */
                l->status = 0;
        l->reaped = true;
        l->ended = mono_now();
        return true;
}

/* Whether a process of the command's group is left once the command is
 * reaped (the group's ID stays the command's while one is). */
static bool group_left(const struct hw_load *l)
{
        return l->reaped ? kill(-l->pid, 0) == 0 || errno != ESRCH : true;
}

/* Waits until the command is reaped and its group is empty, or @until. */
static bool wait_group(struct hw_load *l, double until)
{
        for (;;) {
                reap(l, false);
                if (!group_left(l))
                        return true;
                if (mono_now() >= until)
                        return false;
                sleep_seconds(0.01);
        }
}

/*
 * Stops the command's whole group: SIGTERM (and SIGCONT), SIGKILL to
 * what is left after the grace period, the command reaped. The command
 * is left unreaped until the group has been signalled: its ID cannot go
 * to another process (or group) meanwhile. A process left after SIGKILL
 * (a zombie its new parent has not reaped yet) is waited for a second,
 * no longer.
 */
static void stop_group(struct hw_load *l)
{
        if (!l->reaped || group_left(l)) {
                kill(-l->pid, SIGTERM);
                kill(-l->pid, SIGCONT);
        }
        if (!wait_group(l, mono_now() + HW_LOAD_KILL_GRACE_S)) {
                kill(-l->pid, SIGKILL);
                reap(l, true);
                wait_group(l, mono_now() + 1);
        }
        groups_remove(l->pid);
}

static int load_start(void *ctx, const struct hw_load_request *req, struct hw_load **out, char *why,
                      size_t whylen)
{
        struct hw_load *l;
        int ret;

        (void)ctx;
        *out = NULL;
        if (!req || !req->bdf[0] ||
            (!req->command && (req->io_size == 0 || req->io_size % 4096 || req->bytes == 0))) {
                say(why, whylen, "a load needs a device, bytes and a read size in 4 KiB multiples");
                return -EINVAL;
        }
        l = calloc(1, sizeof(*l));
        if (!l)
                return -ENOMEM;
        l->fd = -1;
        ret = req->command ? start_command(req, l, why, whylen) : start_reads(req, l, why, whylen);
        if (ret) {
                load_free(l);
                return ret;
        }
        l->target = req->bytes;
        *out = l;
        return 0;
}

static int load_poll(void *ctx, struct hw_load *l, struct hw_load_result *res, char *why,
                     size_t whylen)
{
        (void)ctx;
        if (l->is_command) {
                if (!l->reaped) {
                        siginfo_t info = {0};
                        int r;

                        /* Ended? Not reaped yet: its group is stopped first. */
                        do
                                r = waitid(P_PID, (id_t)l->pid, &info, WEXITED | WNOHANG | WNOWAIT);
                        while (r < 0 && errno == EINTR);
                        if (r < 0)
                                return -errno;
                        if (info.si_pid == 0) {
                                if (l->timeout_s > 0 && mono_now() - l->started > l->timeout_s) {
                                        stop_group(l);
                                        say(why, whylen,
                                            "the command ran past its time limit of %g s "
                                            "(--run-timeout): its process group was stopped",
                                            l->timeout_s);
                                        return -ETIMEDOUT;
                                }
                                return 0;
                        }
                        double ended = mono_now();

                        stop_group(l); /* what it left running in the background */
                        l->ended = ended;
                }
                if (!WIFEXITED(l->status) || WEXITSTATUS(l->status)) {
                        say(why, whylen, "the command %s %d",
                            WIFEXITED(l->status) ? "exited with status" : "was killed by signal",
                            WIFEXITED(l->status) ? WEXITSTATUS(l->status) : WTERMSIG(l->status));
                        return -ECHILD;
                }
        } else {
                if (!atomic_load(&l->finished))
                        return 0;
                if (l->error) {
                        say(why, whylen, "%s: read: %s", l->what, strerror(l->error));
                        return -l->error;
                }
        }
        res->bytes = l->is_command ? l->target : atomic_load(&l->done_bytes);
        res->seconds = l->ended - l->started;
        snprintf(res->what, sizeof(res->what), "%s", l->what);
        return 1;
}

static void load_release(void *ctx, struct hw_load *l)
{
        (void)ctx;
        if (!l)
                return;
        if (l->is_command && !l->reaped)
                stop_group(l);
        load_free(l);
}

const struct load_ops load_ops_system = {
    .start = load_start,
    .poll = load_poll,
    .release = load_release,
};
