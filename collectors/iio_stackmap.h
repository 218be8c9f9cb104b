/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * iio_stackmap.h - which PCI root bus each Intel IIO stack (PMU box) owns,
 * decoded from configuration-space registers of the uncore's own PCI
 * functions: bytes in, mapping out, no I/O.
 *
 * On Sapphire Rapids and later the kernel publishes no IIO die<N> files
 * (kernel-facts.md section 5.4), so the stack-to-bus mapping is read the way
 * Intel PCM does it (intel/pcm src/pcm-iio-topology.cpp,
 * EagleStreamPlatformMapping::getRootBuses and the Xeon 6 successor used by
 * BirchStreamPlatform; the register constants are in src/types.h and the
 * reads in src/utils.cpp get_cpu_bus()):
 *
 * - One MSM function per socket, Intel device 0x09a6 (PCM looks for it at
 *   device 3, function 0 of some bus; we look for the IDs anywhere).
 *   CPUBUSNO_VALID (dword at 0x1a0): bit i set = CPU bus i is in use.
 *   CPUBUSNO0..3 (dwords at 0x190..0x19c) hold the root bus numbers of CPU
 *   buses 0..15, CPUBUSNO4..7 (0x1c0..0x1cc) those of 16..31, one byte
 *   each: bus(i) = byte i % 4 of dword i / 4. An all-ones dword is a read
 *   that failed. The buses are in the MSM function's PCI domain.
 * - The package: SAD_CONTROL_CFG (dword at 0x3f4) of function 00.0 on the
 *   first valid CPU bus (the Mesh2IIO memory-map function, Intel 0x09a2),
 *   bits [3:0] = the package (socket) id. The kernel reads the same
 *   register on ICX/SNR (SNR_ICX_SAD_CONTROL_CFG in uncore_snbep.c, stack
 *   id in bits [6:4]: too narrow for SPR's CPU bus ids, so not used here).
 * - Which CPU bus id is which PMU box: a fixed table per die layout, PCM's
 *   *_sad_to_pmu_id_mapping. On SPR it depends on the die "chop": the PCU
 *   CR3 function (Intel 0x325b, device 0x1e function 3) CAPID4 (dword at
 *   0x94) bits [7:6]: 0b11 XCC, 0b01 MCC. EMR has one table. Granite Rapids
 *   and Sierra Forest (Xeon 6, "Birch Stream") use other CPU bus ids (up
 *   to 31; 30 and 31 are UBOX buses, no IIO PMU) and no chop.
 * - Root Ports of a PCIe stack: devices 1..8 of its root bus on SPR/EMR
 *   (part = device - 1), devices 2..9 on Xeon 6 (part = device - 2).
 *
 * Nothing here was checked on hardware; the tables are PCM's, and a wrong
 * value is caught only as far as it is inconsistent (docs/metrics.md,
 * "IIO stacks").
 */
#ifndef PCIESCOPE_IIO_STACKMAP_H
#define PCIESCOPE_IIO_STACKMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IIO_MSM_DEVICE_ID        0x09a6
#define IIO_MSM_CPUBUSNO0        0x190 /* CPU buses 0..15: 4 dwords */
#define IIO_MSM_CPUBUSNO_VALID   0x1a0
#define IIO_MSM_CPUBUSNO4        0x1c0 /* CPU buses 16..31: 4 dwords */
#define IIO_MSM_CFG_BYTES        0x1d0 /* config bytes the decoder needs */
#define IIO_SAD_DEVICE_ID        0x09a2
#define IIO_SAD_CONTROL_CFG      0x3f4
#define IIO_PCU_CR3_DEVICE_ID    0x325b
#define IIO_PCU_CR3_DEVICE       0x1e
#define IIO_PCU_CR3_FUNCTION     3
#define IIO_PCU_CAPID4           0x94
#define IIO_CPU_BUSES            32
#define IIO_STACKMAP_MAX_SOCKETS 8

/* Die layouts whose CPU bus -> PMU box table is known. */
enum iio_layout {
        IIO_LAYOUT_UNKNOWN,
        IIO_LAYOUT_SPR_XCC,
        IIO_LAYOUT_SPR_MCC,
        IIO_LAYOUT_EMR,
        IIO_LAYOUT_XEON6, /* Granite Rapids, Sierra Forest */
};

/* SPR die chop from CAPID4 bits [7:6]. */
enum iio_chop { IIO_CHOP_UNKNOWN = -1, IIO_CHOP_MCC = 1, IIO_CHOP_XCC = 3 };

/* "spr-xcc", "spr-mcc", "emr", "xeon6", "unknown". */
const char *iio_layout_name(enum iio_layout l);

/* Whether the platform needs the SPR chop to pick its table. */
bool iio_layout_needs_chop(unsigned int family, unsigned int model);

/* The layout of a CPU (family 6 models 0x8f SPR, 0xcf EMR, 0xad GNR, 0xaf
 * SRF); on SPR @chop picks XCC or MCC (IIO_CHOP_UNKNOWN: unknown layout). */
enum iio_layout iio_layout_of(unsigned int family, unsigned int model, enum iio_chop chop);

/* Device number of part 0's Root Port on a stack's root bus: 2 on Xeon 6,
 * 1 otherwise (SPR/EMR, and the configured mapping's default). */
unsigned int iio_layout_port_device0(enum iio_layout l);

/* PMU box of CPU bus @cpubus, or -1 when the bus is not an IIO stack's. */
int iio_layout_box(enum iio_layout l, unsigned int cpubus);

/* CPU bus id of PMU box @box, or -1 (the inverse; the simulator uses it). */
int iio_layout_cpubus(enum iio_layout l, unsigned int box);

/*
 * iio_chop_decode - the chop from a PCU CR3 function's configuration
 * space (@cfg, @len readable bytes). 0; -ENODATA when @len does not reach
 * CAPID4; -EBADMSG when it reads all ones (a failed read); -ERANGE for a
 * chop that is neither XCC nor MCC (*@chop holds the bits).
 */
int iio_chop_decode(const uint8_t *cfg, size_t len, int *chop);

/* CPU buses of one MSM function. */
struct iio_cpubus {
        uint32_t valid;
        uint8_t bus[IIO_CPU_BUSES];
};

/*
 * iio_cpubus_decode - CPUBUSNO_VALID and CPUBUSNO0..7 from an MSM
 * function's configuration space. 0; -ENODATA when @len < 0x1d0 (the
 * kernel hides extended configuration space from non-root readers);
 * -EBADMSG when a register reads all ones; -ENOENT when no bus is valid.
 */
int iio_cpubus_decode(const uint8_t *cfg, size_t len, struct iio_cpubus *out);

/* The first valid CPU bus's root bus (whose 00.0 holds SAD_CONTROL_CFG),
 * or -1 when none is valid. */
int iio_cpubus_first(const struct iio_cpubus *cb);

/*
 * iio_package_decode - the package id, bits [3:0] of SAD_CONTROL_CFG, from
 * the configuration space of 00.0 on the first valid CPU bus. 0; -ENODATA
 * when @len does not reach 0x3f4; -EBADMSG when it reads all ones.
 */
int iio_package_decode(const uint8_t *cfg, size_t len, unsigned int *package);

/* One mapped stack. */
struct iio_stack_root {
        unsigned int package;
        unsigned int box;
        unsigned int cpubus;
        uint32_t domain;
        uint8_t bus;
};

struct iio_stackmap {
        enum iio_layout layout;
        size_t count;
        struct iio_stack_root stacks[IIO_STACKMAP_MAX_SOCKETS * IIO_CPU_BUSES];
        size_t not_iio; /* valid CPU buses with no IIO box (UBOX, accelerator parts) */
};

/*
 * iio_stackmap_add - adds one socket's stacks (@cb of the MSM function in
 * @domain, package @package) to @map, whose layout is set. Returns 0;
 * -EINVAL for an unknown layout; -EEXIST when @package was added already
 * (two MSM functions claim one socket); -ENOSPC past
 * IIO_STACKMAP_MAX_SOCKETS sockets; -EBADMSG when two IIO CPU buses of the
 * socket have the same root bus, or a root bus is already another
 * socket's stack (inconsistent registers: nothing is added). @why gets a
 * sentence naming the CPU buses and bus numbers on error.
 */
int iio_stackmap_add(struct iio_stackmap *map, unsigned int package, uint32_t domain,
                     const struct iio_cpubus *cb, char *why, size_t whylen);

/* The stack of PMU box @box on @package, or NULL. */
const struct iio_stack_root *iio_stackmap_find(const struct iio_stackmap *map, unsigned int package,
                                               unsigned int box);

#endif /* PCIESCOPE_IIO_STACKMAP_H */
