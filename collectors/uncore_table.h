/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * uncore_table.h - Intel uncore PMON self-discovery (Sapphire Rapids on):
 * the pure decoders.
 *
 * From the 4th generation Xeon on, every uncore PMON unit is listed in a
 * table that a PCI function publishes behind a DVSEC extended capability
 * (capability 0x23, DVSEC vendor 0x8086, DVSEC id 1). The DVSEC names a BAR
 * (BIR); at the BAR's base lies a global entry (type, stride, number of
 * units, access type) followed by one entry per unit: box type and id,
 * access type (MSR, MMIO or PCI config), box control address, counter count
 * and width, register offsets (kernel-facts §5.1-5.3).
 *
 * Bytes in, struct out, bounded (a table is never trusted): the DVSEC in a
 * config space image, the BAR address, the global entry, one unit entry, a
 * whole table image; the CPU identity from modalias/cpuinfo text; names of
 * box types per platform. No PCI or sysfs access here: uncore_discovery.h
 * scans the machine through the seam and uses these.
 */
#ifndef PCIESCOPE_UNCORE_TABLE_H
#define PCIESCOPE_UNCORE_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pci_addr.h"

#define UNCORE_DVSEC_CAP_ID    0x0023 /* PCIe extended capability: DVSEC */
#define UNCORE_INTEL_VENDOR    0x8086
#define UNCORE_DVSEC_PMON_ID   1                   /* DVSEC id of the PMON discovery table */
#define UNCORE_ENTRY_BYTES     24                  /* three u64 words per entry */
#define UNCORE_TABLE_MAX_BYTES (1024u * 255u * 8u) /* max_units (10 bits) x stride */

/* One DVSEC found in extended configuration space. */
struct uncore_dvsec {
        uint16_t offset;   /* of the capability header */
        uint16_t vendor;   /* DVSEC vendor id */
        uint16_t id;       /* DVSEC id */
        uint8_t revision;  /* DVSEC revision */
        uint16_t length;   /* DVSEC length in bytes */
        uint8_t bir;       /* PMON discovery: the BAR holding the table */
        uint32_t bir_word; /* the whole dword at +0xc, for messages */
};

/*
 * uncore_find_pmon_dvsec - walk every extended capability of @cfg (@len
 * readable bytes) and return the PMON discovery DVSEC (vendor 0x8086, id 1).
 * Other DVSECs (CXL, DSA, vendor 0 on other platforms...) are passed over;
 * *@others counts them when not NULL. The walk is bounded (each offset
 * once, pointers below 0x100 or past @len end it).
 * Returns 0, -ENODATA when @len does not reach extended space (config reads
 * restricted to 256 bytes or fewer), -ENOENT when there is no PMON DVSEC,
 * -EBADMSG when the DVSEC's BIR dword has bits other than BIR[2:0] set or a
 * BIR above 5, or the capability is too short to hold it.
 */
int uncore_find_pmon_dvsec(const uint8_t *cfg, size_t len, struct uncore_dvsec *out,
                           unsigned int *others);

/*
 * uncore_bar_address - the memory address BAR @bir of the type-0 header in
 * @cfg decodes to (a 64-bit BAR takes the next dword too), low 4 KiB bits
 * cleared as the kernel and Intel PCM do.
 * Returns 0, -EINVAL (@bir > 5, an I/O BAR, a 64-bit BAR in slot 5, or a
 * type-1 header), -ENODATA (header not readable) or -ENXIO (BAR unassigned:
 * address 0).
 */
int uncore_bar_address(const uint8_t *cfg, size_t len, unsigned int bir, uint64_t *addr);

enum uncore_access { UNCORE_ACCESS_MSR, UNCORE_ACCESS_MMIO, UNCORE_ACCESS_PCI, UNCORE_ACCESS_NONE };
/* "MSR", "MMIO", "PCI", "-" */
const char *uncore_access_name(enum uncore_access a);

/* The global entry at the table base. */
struct uncore_global {
        uint8_t type;
        uint8_t stride; /* in 8-byte units */
        uint16_t max_units;
        enum uncore_access access;
        uint64_t ctl; /* global control address */
        uint8_t status_offset;
        uint16_t num_status;
};

/*
 * uncore_global_decode - decode the first 24 bytes of a table.
 * Returns 0, or -EBADMSG when the entry reads all ones or all zeros (no
 * table there), the stride is below 3 words (entries would overlap; the
 * kernel gives up on a zero stride) or max_units is 0.
 */
int uncore_global_decode(const uint8_t *entry, struct uncore_global *out);

struct uncore_unit {
        uint16_t type; /* box type */
        uint16_t box_id;
        enum uncore_access access;
        uint64_t ctl; /* box control address (PCI: encoded, see below) */
        uint8_t num_regs;
        uint8_t width; /* counter bits */
        uint8_t ctl_offset, ctr_offset, status_offset;
};

enum uncore_unit_verdict {
        UNCORE_UNIT_OK,
        UNCORE_UNIT_INVALID, /* table1 or ctl 0 / all ones, or table3 all ones */
        UNCORE_UNIT_SKIPPED, /* ctl, ctl_offset or ctr_offset 0: the kernel skips it */
};

/* Decodes one 24-byte unit entry; @out is filled in every case. Pure. */
enum uncore_unit_verdict uncore_unit_decode(const uint8_t *entry, struct uncore_unit *out);

/* A PCI-access unit's control address: domain [30:28], bus [27:20], devfn
 * [19:12], register offset [11:0]. */
void uncore_unit_pci_location(const struct uncore_unit *u, struct pci_addr *addr,
                              unsigned int *offset);

/* A parsed table. */
struct uncore_table {
        struct uncore_global global;
        size_t unit_count; /* valid units, in table order */
        struct uncore_unit *units;
        size_t invalid;   /* entries dropped as invalid */
        size_t skipped;   /* entries skipped as the kernel skips them */
        size_t truncated; /* entries max_units promises that lie past the image */
};

/*
 * uncore_table_parse - parse a table image of @len bytes (what could be
 * read of the BAR). Entries past @len are counted in ->truncated, not read.
 * Returns 0, -EBADMSG (no valid global entry; @len < 24), or -ENOMEM.
 * Free with uncore_table_clear().
 */
int uncore_table_parse(const uint8_t *image, size_t len, struct uncore_table *out);
void uncore_table_clear(struct uncore_table *t);

/* Bytes the table says it occupies: (max_units + 1) * stride * 8. */
size_t uncore_table_bytes(const struct uncore_global *g);

/* ---- platforms and box type names ---- */

enum uncore_platform {
        UNCORE_PLATFORM_UNKNOWN,
        UNCORE_PLATFORM_SPR, /* Sapphire Rapids, Emerald Rapids */
        UNCORE_PLATFORM_GNR, /* Granite Rapids, Sierra Forest, Clearwater Forest */
};

/* From the x86 family/model (family 6 only). */
enum uncore_platform uncore_platform_of(unsigned int family, unsigned int model);
/*
 * uncore_cpu_id_parse - family and model from the text of
 * /sys/devices/system/cpu/modalias ("cpu:type:x86,ven0000fam0006mod008F:...")
 * or of /proc/cpuinfo (the first "cpu family" and "model" lines).
 * Returns 0 or -EBADMSG.
 */
int uncore_cpu_id_parse(const char *text, unsigned int *family, unsigned int *model);

/* "SPR/EMR", "GNR/SRF", "unknown" */
const char *uncore_platform_name(enum uncore_platform p);

/* The kernel's name of box type @type on @p ("CHA", "IIO", "IMC"...), or
 * NULL for a type without a name (the kernel calls it uncore_type_<type>). */
const char *uncore_box_type_name(enum uncore_platform p, unsigned int type);

#endif /* PCIESCOPE_UNCORE_TABLE_H */
