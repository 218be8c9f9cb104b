// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_perf_data.c - libFuzzer target for the perf.data reader: the input
 * is walked as a perf.data (file or pipe mode by its header). Every buffer
 * handed out is read end to end, so a buffer that reaches past the input
 * shows up under ASan; the error must name an offset inside the input.
 * Seeds: tests/fuzz/corpus/fuzz_perf_data/, written by tests/tools/ptt_perfdata:
 * file mode 4DW with the auxtrace index and AUX flags, pipe mode 8DW with
 * tail bytes, and a file whose last AUXTRACE payload runs past the end.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "perf_data.h"

static int touch(void *ctx, const struct perf_data_buffer *b)
{
        unsigned int *sum = ctx;

        for (uint64_t i = 0; i < b->size; i++)
                *sum += b->bytes[i];
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct perf_data_info info;
        struct perf_data_error err;
        unsigned int sum = 0;
        int r = perf_data_walk(data, size, PERF_DATA_AUTO, touch, &sum, &info, &err);

        if (r > 0 || (r < 0 && (err.offset > size || !err.msg[0])))
                abort();
        (void)perf_data_ptt_attr(&info);
        return 0;
}
