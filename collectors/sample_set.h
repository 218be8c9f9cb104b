/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sample_set.h - an owned list of pcie_samples.
 *
 * pcie_monitor emits samples whose strings live only during the callback.
 * Collector threads instead build a whole interval's samples and hand them
 * over to the read callback later, so the samples must own their strings:
 * a sample_set copies every string into its own storage.
 */
#ifndef PCIESCOPE_SAMPLE_SET_H
#define PCIESCOPE_SAMPLE_SET_H

#include <stddef.h>

#include "pcie_monitor.h"

struct sample_set {
        size_t count, cap;
        struct pcie_sample *samples;
        /* String storage: chunks that never move once allocated. */
        struct sample_chunk *chunks;
};

#define SAMPLE_SET_INIT                                                                            \
        {                                                                                          \
                0                                                                                  \
        }

/* Appends a deep copy of @s. Returns 0 or -ENOMEM (the set is unchanged). */
int sample_set_add(struct sample_set *set, const struct pcie_sample *s);

/* Forgets all samples; keeps the memory for the next interval. */
void sample_set_clear(struct sample_set *set);

void sample_set_free(struct sample_set *set);

/* Swaps the contents of two sets (hand-over between threads). */
void sample_set_swap(struct sample_set *a, struct sample_set *b);

#endif /* PCIESCOPE_SAMPLE_SET_H */
