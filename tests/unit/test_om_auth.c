// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_om_auth.c - what the scrape endpoint decides from headers alone
 * (basic credentials over their whole length, constant-time comparison,
 * framing headers, log escaping) and the secret files of the scrape
 * endpoints and remote_write (regular files only, never blocking on a
 * FIFO, a mode too open said, bad first lines refused by name).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "om_auth.h"
#include "secret_file.h"

static int decode(const char *value, struct om_credentials *c)
{
        return om_basic_auth_decode(value, strlen(value), c);
}

static void test_decode(void **state)
{
        struct om_credentials c;

        (void)state;
        /* base64("scraper:s3cret pass") */
        assert_int_equal(decode("Basic c2NyYXBlcjpzM2NyZXQgcGFzcw==", &c), 0);
        assert_int_equal(c.user_len, 7);
        assert_memory_equal(c.user, "scraper", 7);
        assert_int_equal(c.password_len, 11);
        assert_memory_equal(c.password, "s3cret pass", 11);
        /* any case of the scheme, blanks around, no padding */
        assert_int_equal(decode("bAsIc \t c2NyYXBlcjpzM2NyZXQgcGFzcw  ", &c), 0);
        assert_int_equal(c.password_len, 11);
        /* a colon in the password is the password's */
        assert_int_equal(decode("Basic dTphOmI=", &c), 0); /* u:a:b */
        assert_int_equal(c.user_len, 1);
        assert_int_equal(c.password_len, 3);
        /* base64("scraper:s3cret pass\0x"): the NUL and what follows count */
        assert_int_equal(decode("Basic c2NyYXBlcjpzM2NyZXQgcGFzcwB4", &c), 0);
        assert_int_equal(c.password_len, 13);
        assert_false(om_secret_equal(c.password, c.password_len, "s3cret pass", 11));
        /* empty user and password are credentials too */
        assert_int_equal(decode("Basic Og==", &c), 0); /* ":" */
        assert_int_equal(c.user_len + c.password_len, 0);
}

static void test_decode_refused(void **state)
{
        struct om_credentials c;
        char *long_value;

        (void)state;
        assert_int_equal(decode("Bearer c2NyYXBlcjpw", &c), -EINVAL);
        assert_int_equal(decode("Basic", &c), -EINVAL);
        assert_int_equal(decode("Basic ", &c), -EINVAL);
        assert_int_equal(decode("Basicc2NyYXBlcjpw", &c), -EINVAL);
        assert_int_equal(decode("Basic c2Nya*BlcjpwYQ==", &c), -EINVAL); /* not base64 */
        assert_int_equal(decode("Basic c2NyYXBlcg==", &c), -EINVAL);     /* "scraper": no ':' */
        assert_int_equal(decode("Basic dTpw=", &c), -EINVAL);            /* bad padding */
        assert_int_equal(decode("Basic dTpwY", &c), -EINVAL);            /* 5 digits */
        assert_int_equal(decode("Basic dTpx", &c), 0);                   /* u:q */
        assert_int_equal(decode("Basic dTpxZR==", &c), -EINVAL);         /* bits left over */
        assert_int_equal(decode("Basic dTpx ZQ==", &c), -EINVAL);        /* a blank inside */
        assert_null(c.user);
        long_value = malloc(OM_AUTH_MAX + 16);
        assert_non_null(long_value);
        strcpy(long_value, "Basic ");
        memset(long_value + 6, 'A', OM_AUTH_MAX + 4);
        long_value[OM_AUTH_MAX + 10] = '\0';
        assert_int_equal(decode(long_value, &c), -EINVAL);
        free(long_value);
}

static void test_secret_equal(void **state)
{
        (void)state;
        assert_true(om_secret_equal("s3cret", 6, "s3cret", 6));
        assert_false(om_secret_equal("s3cre", 5, "s3cret", 6));
        assert_false(om_secret_equal("s3cretX", 7, "s3cret", 6));
        assert_false(om_secret_equal("s3cret\0X", 8, "s3cret", 6));
        assert_false(om_secret_equal("S3cret", 6, "s3cret", 6));
        assert_false(om_secret_equal("", 0, "s3cret", 6));
        assert_true(om_secret_equal("", 0, "", 0));
        assert_false(om_secret_equal("x", 1, "", 0));
        /* the repeated given text does not fool it */
        assert_false(om_secret_equal("ab", 2, "abab", 4));
}

static const char *problem(const char *const *pairs)
{
        struct om_request_headers h = {0};

        for (; pairs[0]; pairs += 2)
                om_request_headers_add(&h, pairs[0], pairs[1]);
        return om_request_headers_problem(&h);
}

static void test_framing(void **state)
{
        (void)state;
        assert_null(problem((const char *const[]){"Host", "x", NULL}));
        assert_null(problem((const char *const[]){"content-length", "3", NULL}));
        assert_null(problem((const char *const[]){"Transfer-Encoding", "Chunked", NULL}));
        assert_string_equal(
            problem((const char *const[]){"Content-Length", "3", "content-length", "3", NULL}),
            "more than one Content-Length header");
        assert_string_equal(problem((const char *const[]){"Transfer-Encoding", "chunked",
                                                          "Content-Length", "3", NULL}),
                            "Transfer-Encoding together with Content-Length");
        assert_string_equal(problem((const char *const[]){"Transfer-Encoding", "chunked",
                                                          "Transfer-Encoding", "chunked", NULL}),
                            "more than one Transfer-Encoding header");
        assert_string_equal(problem((const char *const[]){"Transfer-Encoding", "gzip", NULL}),
                            "a transfer coding other than \"chunked\"");
        assert_string_equal(problem((const char *const[]){"Transfer-Encoding ", "gzip", NULL}),
                            "a blank in a header name (before its colon)");
        assert_string_equal(problem((const char *const[]){"Content-Length\t", "1", NULL}),
                            "a blank in a header name (before its colon)");
        assert_string_equal(
            problem((const char *const[]){"Transfer-Encoding", "gzip, chunked", NULL}),
            "a transfer coding other than \"chunked\"");
}

static void test_log_escape(void **state)
{
        char out[32];

        (void)state;
        assert_string_equal(om_log_escape("scraper", 7, out, sizeof(out)), "scraper");
        assert_string_equal(om_log_escape("a\nb\0c\"\\", 7, out, sizeof(out)),
                            "a\\x0ab\\x00c\\\"\\\\");
        assert_string_equal(om_log_escape("\x1b[31mred", 8, out, sizeof(out)), "\\x1b[31mred");
        /* cut to fit, and said so */
        assert_string_equal(om_log_escape("0123456789", 10, out, 8), "0123...");
        assert_string_equal(om_log_escape("0123456", 7, out, 8), "0123456");
}

/* ---- secret files ------------------------------------------------------ */

static char dir[64];

static char *write_file(const char *name, const void *data, size_t len, mode_t mode)
{
        static char path[128];
        int fd;

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        unlink(path);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, data, len), (ssize_t)len);
        close(fd);
        assert_int_equal(chmod(path, mode), 0);
        return path;
}

static int read_it(const char *path, size_t max, char **out, char *warn, char *err)
{
        return secret_file_read(path, "BasicAuthPasswordFile", max, out, warn, 256, err, 256);
}

static void test_secret_file(void **state)
{
        char warn[256], err[256], *s = NULL, *path, *big;

        (void)state;
        path = write_file("ok", "s3cret pass\r\nsecond line\n", 25, 0600);
        assert_int_equal(read_it(path, SECRET_FILE_MAX, &s, warn, err), 0);
        assert_string_equal(s, "s3cret pass");
        assert_string_equal(warn, "");
        secret_free(s);
        /* no line end at all */
        path = write_file("bare", "tok", 3, 0400);
        assert_int_equal(read_it(path, SECRET_FILE_MAX, &s, warn, err), 0);
        assert_string_equal(s, "tok");
        secret_free(s);
        /* read, with the mode said as ssh says it */
        path = write_file("open", "s3cret\n", 7, 0644);
        assert_int_equal(read_it(path, SECRET_FILE_MAX, &s, warn, err), 0);
        assert_string_equal(s, "s3cret");
        assert_non_null(strstr(warn, "permissions 0644 for"));
        assert_non_null(strstr(warn, "are too open"));
        assert_non_null(strstr(warn, path));
        secret_free(s);
        path = write_file("group", "s3cret\n", 7, 0640);
        assert_int_equal(
            secret_file_check(path, "BearerTokenFile", warn, sizeof(warn), err, sizeof(err)), 0);
        assert_non_null(strstr(warn, "BearerTokenFile: permissions 0640"));
        /* bad first lines, named */
        path = write_file("empty", "\nsecond\n", 8, 0600);
        assert_int_equal(read_it(path, SECRET_FILE_MAX, &s, warn, err), -EINVAL);
        assert_null(s);
        assert_non_null(strstr(err, "the first line is empty"));
        path = write_file("nul", "s3c\0ret\n", 8, 0600);
        assert_int_equal(read_it(path, SECRET_FILE_MAX, &s, warn, err), -EINVAL);
        assert_non_null(strstr(err, "holds a NUL byte"));
        path = write_file("long", "0123456789\n", 11, 0600);
        assert_int_equal(read_it(path, 10, &s, warn, err), 0);
        secret_free(s);
        assert_int_equal(read_it(path, 9, &s, warn, err), -EINVAL);
        assert_non_null(strstr(err, "longer than 9 bytes"));
        big = malloc(SECRET_FILE_MAX + 1);
        assert_non_null(big);
        memset(big, 'x', SECRET_FILE_MAX + 1);
        path = write_file("big", big, SECRET_FILE_MAX + 1, 0600);
        free(big);
        assert_int_equal(read_it(path, SECRET_FILE_MAX, &s, warn, err), -EINVAL);
        assert_non_null(strstr(err, "longer than 8192 bytes"));
}

static void test_secret_file_not_regular(void **state)
{
        char warn[256], err[256], path[128], *s = NULL;

        (void)state;
        /* a directory: named, not "empty" */
        assert_int_equal(read_it(dir, SECRET_FILE_MAX, &s, warn, err), -EINVAL);
        assert_non_null(strstr(err, "is a directory"));
        assert_null(strstr(err, "empty"));
        /* a FIFO nobody writes to: refused at once, never waited on */
        snprintf(path, sizeof(path), "%s/fifo", dir);
        assert_int_equal(mkfifo(path, 0600), 0);
        assert_int_equal(read_it(path, SECRET_FILE_MAX, &s, warn, err), -EINVAL);
        assert_non_null(strstr(err, "is a FIFO"));
        assert_int_equal(
            secret_file_check(path, "BearerTokenFile", warn, sizeof(warn), err, sizeof(err)),
            -EINVAL);
        unlink(path);
        /* a device */
        assert_int_equal(read_it("/dev/null", SECRET_FILE_MAX, &s, warn, err), -EINVAL);
        assert_non_null(strstr(err, "is a character device"));
        /* missing: the errno's text, the file named */
        snprintf(path, sizeof(path), "%s/none", dir);
        assert_int_equal(read_it(path, SECRET_FILE_MAX, &s, warn, err), -ENOENT);
        assert_non_null(strstr(err, "No such file"));
        assert_non_null(strstr(err, path));
        assert_null(s);
}

static int setup(void **state)
{
        (void)state;
        snprintf(dir, sizeof(dir), "/tmp/test_om_auth.XXXXXX");
        return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
        char cmd[128];

        (void)state;
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_decode),
            cmocka_unit_test(test_decode_refused),
            cmocka_unit_test(test_secret_equal),
            cmocka_unit_test(test_framing),
            cmocka_unit_test(test_log_escape),
            cmocka_unit_test(test_secret_file),
            cmocka_unit_test(test_secret_file_not_regular),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}
