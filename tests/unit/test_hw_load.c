// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_hw_load.c - the live load op's block-device reads on this machine:
 * the disk below a PCI function is found through /sys/class/block and
 * read with O_DIRECT, exactly the bytes asked. TAP; skipped (1..0 # SKIP)
 * with the reason where no disk sits below a PCI function, or where this
 * machine forbids opening it (a container's device cgroup).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hw_env.h"

static int tests, failed;

static void check(int ok, const char *what)
{
        printf("%s %d - %s\n", ok ? "ok" : "not ok", ++tests, what);
        failed += !ok;
}

/* The PCI function closest above the first disk of /sys/class/block. */
static void find_disk_function(char *bdf, size_t size)
{
        DIR *d = opendir("/sys/class/block");
        struct dirent *de;
        regex_t re;

        bdf[0] = '\0';
        if (!d)
                return;
        regcomp(&re, "/([0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\\.[0-7])/", REG_EXTENDED);
        while (!bdf[0] && (de = readdir(d))) {
                char path[512], real[PATH_MAX];
                regmatch_t m[2];

                snprintf(path, sizeof(path), "/sys/class/block/%s", de->d_name);
                if (de->d_name[0] == '.' || !realpath(path, real))
                        continue;
                for (const char *p = real; !regexec(&re, p, 2, m, 0); p += m[1].rm_eo) {
                        size_t n = (size_t)(m[1].rm_eo - m[1].rm_so);

                        if (n < size) {
                                memcpy(bdf, p + m[1].rm_so, n);
                                bdf[n] = '\0';
                        }
                }
        }
        regfree(&re);
        closedir(d);
}

int main(void)
{
        struct hw_load_request req = {.bytes = 32u << 20, .io_size = 1u << 20};
        struct hw_load_result res = {0};
        struct hw_load *l;
        char why[512] = "", what[160];
        int ret;

        find_disk_function(req.bdf, sizeof(req.bdf));
        if (!req.bdf[0]) {
                printf("1..0 # SKIP no disk below a PCI function on this machine\n");
                return 0;
        }
        ret = load_ops_system.start(NULL, &req, &l, why, sizeof(why));
        if (ret == -EPERM || ret == -EACCES) {
                printf("1..0 # SKIP the disk of %s cannot be opened here: %s\n", req.bdf, why);
                return 0;
        }
        printf("1..4\n");
        snprintf(what, sizeof(what), "start: O_DIRECT reads of the disk of %s (%s)", req.bdf,
                 ret ? why : "ok");
        check(ret == 0, what);
        if (ret)
                return 1;
        while (!(ret = load_ops_system.poll(NULL, l, &res, why, sizeof(why))))
                usleep(1000);
        check(ret == 1, "the load ends");
        snprintf(what, sizeof(what), "exactly the 32 MiB asked were read (%llu) from %s",
                 (unsigned long long)res.bytes, res.what);
        check(res.bytes == 32u << 20 && !strncmp(res.what, "/dev/", 5), what);
        check(res.seconds > 0, "its duration is measured");
        load_ops_system.release(NULL, l);
        return failed ? 1 : 0;
}
