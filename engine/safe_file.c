// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * safe_file.c - a file written under a fresh name and renamed into place.
 * See safe_file.h.
 */
#include "safe_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#define TRIES 64

/* 64 bits no one can guess in advance (a clock and counter mix if the
 * kernel's generator cannot answer at once: O_EXCL keeps it safe anyway). */
static uint64_t random64(void)
{
        static uint64_t counter;
        struct timespec ts;
        uint64_t v;

        if (getrandom(&v, sizeof(v), GRND_NONBLOCK) == (ssize_t)sizeof(v))
                return v;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        v = (uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 30 ^ (uint64_t)getpid() << 40 ^
            ++counter * 0x9e3779b97f4a7c15ull;
        v ^= v >> 33;
        v *= 0xff51afd7ed558ccdull;
        return v ^ v >> 33;
}

int safe_file_open(struct safe_file *f, const char *path, mode_t mode)
{
        f->fd = -1;
        f->tmp[0] = '\0';
        if (snprintf(f->path, sizeof(f->path), "%s", path) >= (int)sizeof(f->path))
                return -ENAMETOOLONG;
        for (int i = 0; i < TRIES; i++) {
                if (snprintf(f->tmp, sizeof(f->tmp), "%s.tmp-%016llx", path,
                             (unsigned long long)random64()) >= (int)sizeof(f->tmp)) {
                        f->tmp[0] = '\0';
                        return -ENAMETOOLONG;
                }
                f->fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
                if (f->fd >= 0)
                        return 0;
                if (errno != EEXIST) {
                        int ret = -errno;

                        f->tmp[0] = '\0';
                        return ret;
                }
        }
        f->tmp[0] = '\0';
        return -EEXIST;
}

void safe_file_abort(struct safe_file *f)
{
        if (f->fd >= 0)
                close(f->fd);
        f->fd = -1;
        if (f->tmp[0])
                unlink(f->tmp);
        f->tmp[0] = '\0';
}

int safe_file_commit(struct safe_file *f)
{
        int ret = 0;

        if (f->fd < 0 || !f->tmp[0])
                return -EBADF;
        if (fsync(f->fd))
                ret = -errno;
        if (close(f->fd) && !ret)
                ret = -errno;
        f->fd = -1;
        if (!ret && rename(f->tmp, f->path))
                ret = -errno;
        if (ret) {
                safe_file_abort(f);
                return ret;
        }
        f->tmp[0] = '\0';
        return 0;
}

int safe_file_write(const char *path, const void *data, size_t len, mode_t mode)
{
        struct safe_file f;
        const char *p = data;
        int ret = safe_file_open(&f, path, mode);

        if (ret)
                return ret;
        while (len) {
                ssize_t n = write(f.fd, p, len);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        ret = n < 0 ? -errno : -EIO;
                        safe_file_abort(&f);
                        return ret;
                }
                p += n;
                len -= (size_t)n;
        }
        return safe_file_commit(&f);
}
