// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * secret_file.c - a password or token read from a small file (see the
 * header).
 */
#include "secret_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *kind_of(mode_t m)
{
        if (S_ISDIR(m))
                return "a directory";
        if (S_ISFIFO(m))
                return "a FIFO";
        if (S_ISSOCK(m))
                return "a socket";
        if (S_ISCHR(m))
                return "a character device";
        if (S_ISBLK(m))
                return "a block device";
        return "not a regular file";
}

/* Opens @path without blocking on a FIFO and checks what it is. */
static int open_secret(const char *path, const char *what, char *warn, size_t warnlen, char *err,
                       size_t errlen)
{
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        struct stat st;

        if (warnlen)
                warn[0] = '\0';
        if (fd < 0) {
                int e = errno;

                snprintf(err, errlen, "%s \"%s\": %s", what, path, strerror(e));
                return -e;
        }
        if (fstat(fd, &st)) {
                int e = errno;

                snprintf(err, errlen, "%s \"%s\": %s", what, path, strerror(e));
                close(fd);
                return -e;
        }
        if (!S_ISREG(st.st_mode)) {
                snprintf(err, errlen, "%s \"%s\": is %s, not a regular file holding the secret",
                         what, path, kind_of(st.st_mode));
                close(fd);
                return -EINVAL;
        }
        if (st.st_mode & 077)
                snprintf(warn, warnlen,
                         "%s: permissions %04o for \"%s\" are too open: group or others may "
                         "access the secret (chmod 600 it)",
                         what, (unsigned int)(st.st_mode & 07777), path);
        return fd;
}

int secret_file_check(const char *path, const char *what, char *warn, size_t warnlen, char *err,
                      size_t errlen)
{
        int fd = open_secret(path, what, warn, warnlen, err, errlen);

        if (fd < 0)
                return fd;
        close(fd);
        return 0;
}

int secret_file_read(const char *path, const char *what, size_t max, char **out, char *warn,
                     size_t warnlen, char *err, size_t errlen)
{
        char buf[SECRET_FILE_MAX + 2];
        size_t n = 0, line;
        int fd, rc = 0;

        *out = NULL;
        if (max < 1 || max > SECRET_FILE_MAX)
                max = SECRET_FILE_MAX;
        fd = open_secret(path, what, warn, warnlen, err, errlen);
        if (fd < 0)
                return fd;
        /* Up to one byte past @max: enough to tell a line that is too long. */
        while (n < max + 1) {
                ssize_t r = read(fd, buf + n, max + 1 - n);

                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0) {
                        int e = errno;

                        snprintf(err, errlen, "%s \"%s\": %s", what, path, strerror(e));
                        rc = -e;
                        goto out;
                }
                if (r == 0)
                        break;
                n += (size_t)r;
                if (memchr(buf + n - (size_t)r, '\n', (size_t)r) ||
                    memchr(buf + n - (size_t)r, '\r', (size_t)r))
                        break;
        }
        for (line = 0; line < n && buf[line] != '\n' && buf[line] != '\r'; line++)
                ;
        if (line > max) {
                snprintf(err, errlen, "%s \"%s\": the first line is longer than %zu bytes", what,
                         path, max);
                rc = -EINVAL;
                goto out;
        }
        if (memchr(buf, '\0', line)) {
                snprintf(err, errlen, "%s \"%s\": the first line holds a NUL byte", what, path);
                rc = -EINVAL;
                goto out;
        }
        if (!line) {
                snprintf(err, errlen, "%s \"%s\": the first line is empty", what, path);
                rc = -EINVAL;
                goto out;
        }
        *out = malloc(line + 1);
        if (!*out) {
                snprintf(err, errlen, "%s \"%s\": out of memory", what, path);
                rc = -ENOMEM;
                goto out;
        }
        memcpy(*out, buf, line);
        (*out)[line] = '\0';
out:
        explicit_bzero(buf, sizeof(buf));
        close(fd);
        return rc;
}

void secret_free(char *s)
{
        if (!s)
                return;
        explicit_bzero(s, strlen(s));
        free(s);
}
