// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_safe_file.c - safe_file.h, in a temporary directory:
 *
 * - a new file gets the bytes, @mode less the umask (0666 and 0600), and
 *   nothing else is left in the directory;
 * - a symbolic link at the name is replaced, its target untouched; links
 *   at every name "<path>.tmp-*" could be guessed as (the names are drawn
 *   at random: a link at the old fixed "<path>.tmp" and at every name the
 *   test plants) are not followed either;
 * - an existing file is replaced whole;
 * - failures leave nothing: no directory (-ENOENT), a directory at the
 *   name (rename fails), an abort; a name too long: -ENAMETOOLONG.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "safe_file.h"

static char dir[64];

static int setup(void **state)
{
        (void)state;
        snprintf(dir, sizeof(dir), "/tmp/test_safe_file.XXXXXX");
        return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
        char cmd[96];

        (void)state;
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        return system(cmd) == 0 ? 0 : -1;
}

static void in_dir(char *out, const char *name)
{
        snprintf(out, PATH_MAX, "%s/%s", dir, name);
}

/* The names in the directory, sorted, joined by spaces. */
static void listing(char *out, size_t size)
{
        struct dirent **names;
        int n = scandir(dir, &names, NULL, alphasort);
        size_t len = 0;

        assert_true(n >= 0);
        out[0] = '\0';
        for (int i = 0; i < n; i++) {
                if (strcmp(names[i]->d_name, ".") && strcmp(names[i]->d_name, ".."))
                        len += (size_t)snprintf(out + len, size - len, "%s%s", len ? " " : "",
                                                names[i]->d_name);
                free(names[i]);
        }
        free(names);
}

static void assert_content(const char *path, const char *want)
{
        char buf[256];
        int fd = open(path, O_RDONLY);
        ssize_t n;

        assert_true(fd >= 0);
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        assert_true(n >= 0);
        buf[n] = '\0';
        assert_string_equal(buf, want);
}

static void test_new_file(void **state)
{
        char path[PATH_MAX], names[1024];
        struct stat st;
        mode_t old = umask(027);

        (void)state;
        in_dir(path, "a.tar.gz");
        assert_int_equal(safe_file_write(path, "hello", 5, 0666), 0);
        assert_content(path, "hello");
        assert_int_equal(lstat(path, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0640);
        in_dir(path, "b.json");
        assert_int_equal(safe_file_write(path, "", 0, 0600), 0);
        assert_int_equal(lstat(path, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0600);
        assert_int_equal(st.st_size, 0);
        umask(old);
        listing(names, sizeof(names));
        assert_string_equal(names, "a.tar.gz b.json");
}

static void test_symlinks(void **state)
{
        char path[PATH_MAX], victim[PATH_MAX], link[PATH_MAX], names[4096], target[PATH_MAX];
        struct safe_file f;
        struct stat st;
        ssize_t n;

        (void)state;
        in_dir(victim, "victim");
        in_dir(path, "out.tar.gz");
        assert_int_equal(safe_file_write(victim, "precious", 8, 0644), 0);
        /* a link at the name itself, and at the fixed temporary name */
        assert_int_equal(symlink(victim, path), 0);
        in_dir(link, "out.tar.gz.tmp");
        assert_int_equal(symlink(victim, link), 0);
        assert_int_equal(safe_file_write(path, "new", 3, 0666), 0);
        assert_content(victim, "precious");
        assert_int_equal(lstat(path, &st), 0);
        assert_true(S_ISREG(st.st_mode));
        assert_content(path, "new");
        /* the temporary name is not the fixed one, nor any one planted:
         * plant a link at the name just drawn, then open again */
        assert_int_equal(safe_file_open(&f, path, 0666), 0);
        assert_non_null(strstr(f.tmp, "/out.tar.gz.tmp-"));
        assert_int_equal(strlen(strstr(f.tmp, ".tmp-")), 5 + 16);
        snprintf(target, sizeof(target), "%s", f.tmp);
        safe_file_abort(&f);
        assert_int_equal(symlink(victim, target), 0);
        for (int i = 0; i < 32; i++) {
                assert_int_equal(safe_file_open(&f, path, 0666), 0);
                assert_string_not_equal(f.tmp, target);
                assert_int_equal(write(f.fd, "x", 1), 1);
                assert_int_equal(safe_file_commit(&f), 0);
        }
        assert_content(victim, "precious");
        n = readlink(target, names, sizeof(names) - 1);
        assert_true(n > 0);
        unlink(target);
        unlink(link);
        listing(names, sizeof(names));
        assert_string_equal(names, "out.tar.gz victim");
        assert_content(path, "x");
}

static void test_failures(void **state)
{
        char path[PATH_MAX], names[1024], sub[PATH_MAX], longname[PATH_MAX + 8];
        struct safe_file f;

        (void)state;
        /* no such directory */
        in_dir(path, "no/such/x.json");
        assert_int_equal(safe_file_write(path, "x", 1, 0666), -ENOENT);
        /* a directory (not empty) at the name: rename fails, nothing left */
        in_dir(path, "d");
        assert_int_equal(mkdir(path, 0755), 0);
        in_dir(sub, "d/keep");
        assert_int_equal(safe_file_write(sub, "k", 1, 0644), 0);
        assert_true(safe_file_write(path, "x", 1, 0666) < 0);
        listing(names, sizeof(names));
        assert_string_equal(names, "d");
        /* an abort */
        in_dir(path, "e.json");
        assert_int_equal(safe_file_open(&f, path, 0666), 0);
        assert_int_equal(write(f.fd, "half", 4), 4);
        safe_file_abort(&f);
        safe_file_abort(&f); /* twice: nothing more */
        assert_int_equal(safe_file_commit(&f), -EBADF);
        listing(names, sizeof(names));
        assert_string_equal(names, "d");
        /* a name too long for the temporary one */
        memset(longname, 'a', PATH_MAX - 4);
        longname[PATH_MAX - 4] = '\0';
        assert_int_equal(safe_file_open(&f, longname, 0666), -ENAMETOOLONG);
        assert_int_equal(f.fd, -1);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_new_file, setup, teardown),
            cmocka_unit_test_setup_teardown(test_symlinks, setup, teardown),
            cmocka_unit_test_setup_teardown(test_failures, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
