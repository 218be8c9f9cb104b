/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bdf_match.h - BDF patterns for Device/IgnoreDevice options.
 *
 * A pattern is "[domain:]bus:dev.func" where each of the four fields is hex
 * digits, "*" (any value) or a mix with "?" for one hex digit, e.g.
 * "0000:3b:00.0", "3b:*.*", "*:00.0", "0001:*:*.*". Without a domain the
 * pattern matches every domain. Anything else is rejected when the pattern
 * is compiled, so a typo fails the configuration instead of matching nothing.
 */
#ifndef PCIESCOPE_BDF_MATCH_H
#define PCIESCOPE_BDF_MATCH_H

#include <stdbool.h>

#include "pci_addr.h"

struct bdf_pattern {
        char field[4][9]; /* domain, bus, dev, func: normalised lower-case */
};

/* Returns 0 or -EINVAL. */
int bdf_pattern_compile(const char *text, struct bdf_pattern *out);
bool bdf_pattern_match(const struct bdf_pattern *pat, const struct pci_addr *addr);

/* A set of include and exclude patterns: a function is selected when it
 * matches an include (or there are none) and matches no exclude. */
struct bdf_filter {
        struct bdf_pattern *include, *exclude;
        unsigned int include_count, exclude_count;
};

int bdf_filter_add(struct bdf_filter *f, const char *text, bool exclude);
bool bdf_filter_selects(const struct bdf_filter *f, const struct pci_addr *addr);
void bdf_filter_clear(struct bdf_filter *f);

#endif /* PCIESCOPE_BDF_MATCH_H */
