// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_aer.c - libFuzzer target: the AER sysfs text parsers (aer_parse for
 * aer_dev_*, the one-number aer_rootport_total_err_* files) on any text.
 *
 * The first byte picks the file; the rest is its text (as hw_read_file
 * hands it: NUL-terminated, at most 4 KiB). What is parsed must be coherent:
 * within the counter limit, names NUL-terminated and distinct as labels,
 * counts within collectd's signed DERIVE; checked here and turned into a
 * crash so libFuzzer keeps the input.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "aer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static struct aer_device dev;
        char text[4096];
        unsigned int bad_line = 0;
        enum aer_file file;
        size_t n;
        int ret;

        if (size < 1)
                return 0;
        file = (enum aer_file)(data[0] % (AER_FILES + 1)); /* one past: refused */
        n = size - 1 < sizeof(text) - 1 ? size - 1 : sizeof(text) - 1;
        memcpy(text, data + 1, n);
        text[n] = '\0';
        memset(&dev, 0, sizeof(dev));
        ret = aer_device_parse_file(&dev, file, text, &bad_line);
        if (file >= AER_FILES && ret != -EINVAL)
                __builtin_trap();
        if (ret == 0 && bad_line != 0)
                __builtin_trap();
        if (ret == -EBADMSG && bad_line == 0)
                __builtin_trap();
        for (int c = 0; c < AER_CLASS_COUNT && ret == 0; c++) {
                const struct aer_list *l = &dev.classes[c];

                if (l->count > AER_MAX_COUNTERS || (l->has_total && l->total > INT64_MAX))
                        __builtin_trap();
                for (size_t i = 0; i < l->count; i++) {
                        char a[AER_NAME_LEN], b[AER_NAME_LEN];

                        if (!memchr(l->counters[i].name, '\0', AER_NAME_LEN) ||
                            l->counters[i].count > INT64_MAX)
                                __builtin_trap();
                        aer_sanitize_name(l->counters[i].name, a, sizeof(a));
                        for (size_t k = 0; k < i; k++) {
                                aer_sanitize_name(l->counters[k].name, b, sizeof(b));
                                if (!strcmp(a, b))
                                        __builtin_trap(); /* one series twice */
                        }
                }
                if (dev.has_rootport_total[c] && dev.rootport_total[c] > INT64_MAX)
                        __builtin_trap();
        }
        return 0;
}
