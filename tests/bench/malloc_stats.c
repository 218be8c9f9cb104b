// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * malloc_stats.c - an LD_PRELOAD shim for the soak benchmark
 * (tests/bench/bench_soak.sh, docs/soak.md): a thread in the process it
 * is loaded into writes glibc's mallinfo2() every period, so that the
 * bench can tell live heap (what the program holds: a leak or an
 * unbounded cache grows it) from what the allocator keeps (free chunks in
 * its arenas, which RSS counts too).
 *
 *   MALLOC_STATS_FILE=F [MALLOC_STATS_PERIOD=seconds] LD_PRELOAD=malloc_stats.so prog
 *
 * F gets one line per period (10 s unless given, at least 0.1 s):
 *
 *   unix_time arena hblkhd uordblks fordblks keepcost arenas
 *
 * in bytes: arena (bytes the arenas took from the system, brk and
 * mmapped heaps), hblkhd (chunks mmapped on their own), uordblks (in
 * use in the arenas), fordblks (free in the arenas), keepcost (the top
 * chunk of the main arena), arenas (how many arenas malloc_info lists).
 * Live heap is uordblks + hblkhd. F.xml gets malloc_info() every sixth
 * period (the per-arena detail), the latest only, and once more at exit.
 * mallinfo2 sums every arena (glibc >= 2.33). The thread itself allocates
 * nothing between samples but malloc_info's stream.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char path[4096];
static char xml_path[4100];
static double period = 10;

/* malloc_info's XML into F.xml (through a temporary name, so a reader
 * never sees half of it); returns the number of <heap elements. */
static unsigned int dump_xml(void)
{
        char tmp[4200], buf[4096];
        unsigned int heaps = 0;
        FILE *f;

        snprintf(tmp, sizeof(tmp), "%s.tmp", xml_path);
        f = fopen(tmp, "w+");
        if (!f)
                return 0;
        malloc_info(0, f);
        fflush(f);
        rewind(f);
        while (fgets(buf, sizeof(buf), f))
                if (strstr(buf, "<heap nr="))
                        heaps++;
        fclose(f);
        rename(tmp, xml_path);
        return heaps;
}

static void sample(int fd, unsigned int arenas)
{
        struct mallinfo2 mi = mallinfo2();
        char line[256];
        int n = snprintf(line, sizeof(line), "%lld %zu %zu %zu %zu %zu %u\n", (long long)time(NULL),
                         mi.arena, mi.hblkhd, mi.uordblks, mi.fordblks, mi.keepcost, arenas);

        if (n > 0 && write(fd, line, (size_t)n) < 0)
                return;
}

static void *run(void *arg)
{
        int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        unsigned int arenas = 0;
        struct timespec ts = {.tv_sec = (time_t)period,
                              .tv_nsec = (long)((period - (double)(time_t)period) * 1e9)};

        (void)arg;
        if (fd < 0)
                return NULL;
        for (unsigned long k = 0;; k++) {
                if (k % 6 == 0)
                        arenas = dump_xml();
                sample(fd, arenas);
                nanosleep(&ts, NULL);
        }
        return NULL;
}

__attribute__((constructor)) static void start(void)
{
        const char *f = getenv("MALLOC_STATS_FILE"), *p = getenv("MALLOC_STATS_PERIOD");
        pthread_attr_t attr;
        pthread_t t;

        if (!f || !*f || strlen(f) >= sizeof(path))
                return;
        snprintf(path, sizeof(path), "%s", f);
        snprintf(xml_path, sizeof(xml_path), "%s.xml", f);
        if (p && atof(p) >= 0.1)
                period = atof(p);
        /* Children (collectd's exec plugin, a shell) must not inherit it. */
        unsetenv("LD_PRELOAD");
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attr, 256 * 1024);
        pthread_create(&t, &attr, run, NULL);
        pthread_attr_destroy(&attr);
}

__attribute__((destructor)) static void finish(void)
{
        if (path[0])
                dump_xml();
}
