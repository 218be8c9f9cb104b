/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pci_source.h - PCI configuration space through libpci, made safe for a
 * daemon.
 *
 * Two access methods: live (libpci's linux_sysfs method with `sysfs.path`
 * under the environment's sysfs root) and dump (libpci's dump method on an
 * `lspci -x/-xxx/-xxxx` text file). libpci reports fatal errors through a
 * callback that must not return and by default exits the process; here every
 * libpci call runs under a guard that turns such an error into -EIO with the
 * message kept for the caller, so collectd never exits because of libpci.
 */
#ifndef PCIESCOPE_PCI_SOURCE_H
#define PCIESCOPE_PCI_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "pci_addr.h"

struct hw_env;
struct pci_source;

/* Live access. @sysfs_root is the directory that holds bus/pci ("/sys"). */
int pci_source_open_live(const char *sysfs_root, struct pci_source **out);
/* Dump access: the file is parsed at each scan, so errors surface there. */
int pci_source_open_dump(const char *dump_path, struct pci_source **out);
void pci_source_close(struct pci_source *src);

/* "live" or "dump". */
const char *pci_source_method(const struct pci_source *src);

/*
 * Called once per function found. @cfg holds @cfg_len readable bytes from
 * offset 0: 4096 for PCIe with full access, 256 for conventional PCI, 64
 * when the kernel restricts config reads to the header (no CAP_SYS_ADMIN),
 * and possibly 0. Return 0 to continue, anything else stops the scan and is
 * returned by pci_source_scan().
 */
typedef int (*pci_source_visit_fn)(void *ctx, const struct pci_addr *addr, const uint8_t *cfg,
                                   size_t cfg_len);

/*
 * pci_source_scan - enumerate every function and its configuration space.
 * Returns 0, the visitor's non-zero value, or -EIO when libpci failed (the
 * reason is in pci_source_error()). Not thread-safe per source.
 */
int pci_source_scan(struct pci_source *src, pci_source_visit_fn visit, void *ctx);

/* libpci's message for the last -EIO, "" if none. */
const char *pci_source_error(const struct pci_source *src);

/*
 * Vendor and device names from the pci.ids database through libpci. Writes
 * "" when unknown. The database is loaded on first use (whole, or the part
 * pci_source_names_for() asked for) and kept.
 */
void pci_source_names(struct pci_source *src, uint16_t vendor, uint16_t device, char *vendor_name,
                      size_t vendor_size, char *device_name, size_t device_size);

/*
 * pci_source_names_for - the functions whose names are about to be looked
 * up, each as vendor << 16 | device (repeats allowed). libpci then loads
 * only their lines of pci.ids (each vendor's line and the device lines
 * asked for) instead of parsing and hashing all ~37,000 of them, which
 * took 15-30 ms and ~1.9 MB here, longer than a scan of 1,000 functions.
 * Same names: each vendor line starts a block of its own in libpci's
 * parser, and each device line is one entry. A look-up for a function not
 * given loads the whole list, as does everything where the list cannot be
 * cut here (a compressed pci.ids.gz, no /proc, a file whose lines libpci
 * would cut elsewhere). Only where libpci refuses the whole list (a parse
 * error, a duplicate entry) can the part it gets load where the whole did
 * not. Returns 0 or -ENOMEM (nothing changed).
 */
int pci_source_names_for(struct pci_source *src, const uint32_t *ids, size_t n);

/* How many functions the loaded part of pci.ids covers: 0 when the whole
 * list (or none) is loaded. For the tests, which compare part and whole. */
size_t pci_source_names_part(const struct pci_source *src);

/* The pci.ids file for names instead of libpci's default, as lspci -i;
 * NULL: the default again. Names loaded so far are dropped. 0 or -ENOMEM.
 * The tests use it (crafted lists); no front end offers it yet. */
int pci_source_set_ids_file(struct pci_source *src, const char *path);

#endif /* PCIESCOPE_PCI_SOURCE_H */
