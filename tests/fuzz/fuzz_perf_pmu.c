// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_perf_pmu.c - libFuzzer target: the texts of a sysfs PMU directory
 * as perf_pmu.c parses them: a format/ file (perf_format_parse), an
 * events/ file (perf_event_terms_parse) and a cpumask (perf_cpu_list_parse),
 * each fed the whole input.
 *
 * Invariants: a parsed format has 1..PERF_FORMAT_PIECES pieces with
 * lo <= hi <= 63 and at most 64 bits in all, and a value that fits its
 * width comes back unchanged from apply + extract while one that does not
 * is refused with -ERANGE; parsed terms are at most PERF_EVENT_TERMS with
 * named, terminated names; a parsed CPU list is ascending and non-negative
 * and its count is what was filled when it fits.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <linux/perf_event.h>

#include "perf_pmu.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_format(const char *s, uint64_t value)
{
        struct perf_format f;
        struct perf_event_attr attr;
        unsigned int w;
        int rc;

        memset(&f, 0, sizeof(f));
        if (perf_format_parse(s, &f) != 0)
                return;
        if (f.piece_count < 1 || f.piece_count > PERF_FORMAT_PIECES)
                __builtin_trap();
        for (size_t i = 0; i < f.piece_count; i++)
                if (f.pieces[i].lo > f.pieces[i].hi || f.pieces[i].hi > 63)
                        __builtin_trap();
        w = perf_format_width(&f);
        if (w < 1 || w > 64)
                __builtin_trap();
        memset(&attr, 0, sizeof(attr));
        rc = perf_format_apply(&f, value, &attr);
        if (rc == -EOPNOTSUPP)
                return; /* config3 on an old <linux/perf_event.h> */
        if (w < 64 && value >> w) {
                if (rc != -ERANGE)
                        __builtin_trap();
                return;
        }
        if (rc != 0 || perf_format_extract(&f, &attr) != value)
                __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *s = malloc(size + 1);
        struct perf_pmu_event ev;
        int cpus[16], n;
        uint64_t value = 0;

        if (!s)
                return 0;
        memcpy(s, data, size);
        s[size] = '\0';
        for (size_t i = 0; i < size && i < 8; i++)
                value = value << 8 | data[size - 1 - i];
        check_format(s, value);
        check_format(s, value & 0xff);

        memset(&ev, 0, sizeof(ev));
        if (perf_event_terms_parse(s, &ev) == 0) {
                if (ev.term_count > PERF_EVENT_TERMS)
                        __builtin_trap();
                for (size_t i = 0; i < ev.term_count; i++)
                        if (!ev.terms[i].name[0] ||
                            strnlen(ev.terms[i].name, PERF_PMU_NAME_MAX) >= PERF_PMU_NAME_MAX)
                                __builtin_trap();
        }

        n = perf_cpu_list_parse(s, cpus, sizeof(cpus) / sizeof(*cpus));
        if (n >= 0) {
                int filled = n < 16 ? n : 16;

                for (int i = 0; i < filled; i++)
                        if (cpus[i] < 0 || (i && cpus[i] <= cpus[i - 1]))
                                __builtin_trap();
        } else if (n != -EINVAL) {
                __builtin_trap();
        }
        free(s);
        return 0;
}
