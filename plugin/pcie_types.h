/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pcie_types.h - the plugin's data sets, generated from pcie_types.db.
 */
#ifndef PCIESCOPE_PCIE_TYPES_H
#define PCIESCOPE_PCIE_TYPES_H

#include <math.h>

#include "collectd/core/daemon/collectd.h"
#include "collectd/core/daemon/plugin.h"

struct pcie_type_def {
        const char *name;
        int ds_type; /* DS_TYPE_GAUGE or DS_TYPE_DERIVE */
        double min, max;
};

/* Ends with a NULL name. */
extern const struct pcie_type_def pcie_type_defs[];

#endif /* PCIESCOPE_PCIE_TYPES_H */
