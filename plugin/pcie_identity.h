/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pcie_identity.h - the collectd identity of a sample: the plugin_instance
 * and type_instance under which the pcie plugin dispatches it (the type is
 * its family's data set).
 *
 * A sample is a family and its labels; collectd's identity is made from
 * them here, by the rules of metrics/families.spec (its collectd-identity
 * lines, whose template language the spec's header describes), so that no
 * source knows collectd. The rules are generated into
 * pcie_identity_rules.c. This file includes no collectd header: the test
 * tools use it too.
 */
#ifndef PCIESCOPE_PCIE_IDENTITY_H
#define PCIESCOPE_PCIE_IDENTITY_H

#include <stddef.h>

#include "pcie_families.h"

/* Longer than collectd's DATA_MAX_NAME_LEN (128): the plugin truncates
 * to what collectd holds, as it always did. */
#define PCIE_IDENTITY_LEN 256

struct pcie_identity {
        char plugin_instance[PCIE_IDENTITY_LEN];
        char type_instance[PCIE_IDENTITY_LEN];
};

/* One collectd-identity line of the spec: two templates ("" for none). */
struct pcie_identity_rule {
        const char *instance, *type_instance;
};

/* Each family's rules in the spec's order, ending in {NULL, NULL}; NULL
 * for a family the pcie plugin does not dispatch (remote_write's). */
extern const struct pcie_identity_rule *const pcie_identity_rules[PCIE_FAMILY_COUNT];

/*
 * pcie_identity - the identity of @s by the first rule of its family that
 * applies. @interval (@count samples, NULL and 0 for none) is the rest of
 * the interval @s belongs to, one source's sample set: a few rules take a
 * label of another sample of it (the spec names them).
 * Returns 0; -ENOENT when no rule applies, -EINVAL for a rule that is not a
 * template, -ENAMETOOLONG: then @out is two empty strings.
 */
int pcie_identity(const struct pcie_sample *s, const struct pcie_sample *interval, size_t count,
                  struct pcie_identity *out);

/*
 * pcie_identity_expand - @template expanded for @s into @out (@len bytes).
 * Returns 0, 1 when the template does not apply to @s (a label it needs
 * is missing, a test fails), -EINVAL or -ENAMETOOLONG.
 */
int pcie_identity_expand(const char *template, const struct pcie_sample *s,
                         const struct pcie_sample *interval, size_t count, char *out, size_t len);

#endif /* PCIESCOPE_PCIE_IDENTITY_H */
