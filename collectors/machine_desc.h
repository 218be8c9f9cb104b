/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * machine_desc.h - a machine description in the simulator's JSON schema
 * (docs/simulator.md), generated from what `pciescope snapshot` collected:
 * the configuration space of every function, its sysfs NUMA node and AER
 * counts, and the PMU directories (hisi_pcie, hisi_ptt, uncore_iio) with
 * the Intel PMON discovery tables.
 *
 * Pure: facts in, JSON text out; no I/O (machine_facts.h gathers the facts
 * through the seam). What the schema cannot express is left out or
 * approximated, and every such case is reported as a note, never silently:
 * the notes go into the description's "description" line (their count)
 * and the snapshot's manifest (the full text).
 */
#ifndef PCIESCOPE_MACHINE_DESC_H
#define PCIESCOPE_MACHINE_DESC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aer.h"
#include "pci_addr.h"

struct uncore_inventory;

#define MD_MAX_PORTS 16 /* PTT root_port_filters kept per device */
#define MD_MAX_DIES  8  /* die<N> files kept per uncore_iio box */

struct md_function {
        struct pci_addr addr;
        const uint8_t *cfg; /* configuration space from offset 0 */
        size_t cfg_len;     /* bytes readable: 64 (not root), 256 or 4096 */
        int numa_node;      /* sysfs numa_node, -1 unknown */
        bool aer_known;     /* the aer_dev_* files were read */
        struct aer_device aer;
};

/* hisi_pcie<sicl>_core<core> */
struct md_hisi_pmu {
        unsigned int sicl, core;
        int cpu; /* cpumask, -1 unknown */
        bool has_identifier;
        uint32_t identifier;
        bool has_range; /* bdf_min / bdf_max (Linux 6.12 on) */
        uint32_t bdf_min, bdf_max;
        bool has_bus;
        unsigned int bus;
        /* What tells the kernel version apart (docs/simulator.md). */
        unsigned int event_count;
        bool has_len_mode;
        bool old_mrd_codes; /* rx_mrd_flux is 0x1005: Linux 5.17's wrong code */
};

/* hisi_ptt<sicl>_<core> */
struct md_ptt {
        unsigned int sicl, core;
        char bdf[PCI_BDF_LEN]; /* its PCI function, "" when sysfs does not say */
};

/* uncore_iio_free_running_<box> */
struct md_iio_box {
        unsigned int box;
        size_t cpu_count;
        int cpus[64]; /* cpumask: one CPU per socket with the stack */
        bool bw_out;  /* bw_out_port* events (before Linux 6.15) */
        /* die<N> files of uncore_iio_<box>: socket N owns domain:bus. */
        size_t die_count;
        unsigned int die_socket[MD_MAX_DIES];
        struct pci_addr die_bus[MD_MAX_DIES];
};

/* IIOStackBus from the configuration: box, socket, root bus. */
struct md_stack_bus {
        unsigned int box, socket;
        struct pci_addr bus;
};

struct md_socket {
        unsigned int id;         /* physical_package_id */
        int first_cpu, last_cpu; /* its first contiguous run of CPUs */
        bool contiguous;         /* no other CPU of the socket outside the run */
        int numa_node;           /* from devices/system/node, -1 unknown */
        uint64_t numa_mask;      /* every node (< 64) of its CPUs: several with SNC */
};

/* The hidden PMU/PTT units a calibration settled (`snapshot --device`,
 * docs/real-hardware.md): the description's `hisi_pcie` clocks. */
struct md_units {
        bool have_flux, have_time_clock, have_latency_clock, have_ptt_clock, have_ptt_time;
        double flux_unit_bytes, time_clock_hz, latency_clock_hz, ptt_clock_hz;
        bool ptt_time_absolute;
};

struct md_facts {
        unsigned int cpus;     /* online CPUs: highest + 1; 0 unknown */
        const char *cmdline;   /* already redacted; NULL unknown */
        const char *osrelease; /* NULL unknown */
        const char *source;    /* "this machine", "simulated kunpeng930-2p", ... */

        size_t function_count;
        const struct md_function *functions;
        size_t hisi_count;
        const struct md_hisi_pmu *hisi;
        size_t ptt_count;
        const struct md_ptt *ptt;

        /* Intel */
        unsigned int cpu_model; /* x86 model, 0 unknown */
        size_t box_count;
        const struct md_iio_box *boxes;
        size_t socket_count;
        const struct md_socket *sockets; /* sorted by id */
        size_t stack_bus_count;
        const struct md_stack_bus *stack_buses;
        const struct uncore_inventory *uncore; /* NULL: none read */
        const struct md_units *units;          /* NULL: the simulator's defaults */
};

/* Where the generator approximated or left something out. */
#define MD_NOTE_LEN 240
struct md_notes {
        size_t count;
        size_t dropped; /* notes beyond the array */
        char text[128][MD_NOTE_LEN];
};

/*
 * machine_desc_build - the description of @f as JSON text (malloc'd, in
 * *@json), named @name (≤ 63 characters). Returns 0, -ENOTSUP when nothing
 * simulatable was found (no hisi_pcie core with a Root Port, no Intel
 * discovery table; the reason in @notes), or -ENOMEM.
 */
int machine_desc_build(const struct md_facts *f, const char *name, char **json,
                       struct md_notes *notes);

/* The simulated kernel ("5.17" ... "6.15") these facts point to, and in
 * @why how it was told. */
const char *machine_desc_kernel(const struct md_facts *f, char *why, size_t whylen);

#endif /* PCIESCOPE_MACHINE_DESC_H */
