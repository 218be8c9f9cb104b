/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sim_sysfs.h - write the sysfs (and procfs) tree of a simulated machine.
 *
 * The tree is what the unchanged discovery code reads on a real machine:
 *   <root>/sys/bus/pci/devices/<dddd:bb:dd.f>/  config (4096 bytes libpci reads),
 *       vendor, device, class, revision, numa_node, current_link_speed,
 *       current_link_width, max_link_speed, max_link_width, and for devices
 *       with AER: aer_dev_correctable, aer_dev_nonfatal, aer_dev_fatal (and
 *       aer_rootport_total_err_* on Root Ports)
 *   <root>/sys/bus/event_source/devices/hisi_pcie<sicl>_core<core>/  type,
 *       cpumask, identifier, bus, bdf_min, bdf_max (v6.12 on), format/ files,
 *       events/ files exactly as the hisi_pcie driver of the machine's kernel
 *       publishes them
 *   <root>/sys/devices/system/cpu/online
 *   <root>/proc/cmdline
 * and on Intel machines (docs/simulator.md, "Intel"): the PMON discovery
 * function's BAR 0 in `resource` and its table in `resource0`,
 *   <root>/sys/bus/event_source/devices/uncore_iio_free_running_<box>/ and
 *       uncore_iio_<box>/ per IIO stack box id,
 *   <root>/sys/devices/system/cpu/cpu<N>/topology/{physical_package_id,die_id}
 *   <root>/proc/cpuinfo
 * so a hw_env with sysfs_root = <root>/sys and proc_root = <root>/proc sees
 * the machine.
 */
#ifndef PCIESCOPE_SIM_SYSFS_H
#define PCIESCOPE_SIM_SYSFS_H

#include <stddef.h>
#include <stdint.h>

struct sim_machine;

/*
 * sim_sysfs_write - create the tree under @root (an existing, empty
 * directory). @pmu_type_base: perf type number of the first hisi_pcie PMU;
 * the others follow in core order (the simulated perf ops accept exactly
 * these numbers). Returns 0 or a negative errno; @errbuf names the path that
 * failed.
 */
int sim_sysfs_write(const struct sim_machine *m, const char *root, uint32_t pmu_type_base,
                    char *errbuf, size_t errlen);

/*
 * sim_sysfs_update_aer - rewrite the AER files of every device with AER so
 * they show the counts @elapsed seconds after start (initial + per_second *
 * elapsed, rounded down). Files are replaced atomically (write + rename), so
 * a concurrent reader sees the old or the new file, never half of one.
 * @written (NULL: rewrite every file) remembers what each file holds:
 * SIM_AER_WRITTEN_SLOTS entries per device, zeroed before the first call;
 * a file whose counts did not move is left alone (most never move, and
 * rewriting them every interval was most of the simulator's CPU time).
 */
#define SIM_AER_WRITTEN_SLOTS 6
int sim_sysfs_update_aer(const struct sim_machine *m, const char *root, double elapsed,
                         uint64_t *written);

/*
 * sim_sysfs_set_link_width - show device @idx's link (up, not an RCiEP)
 * trained at @width lanes (1..its max_width): its `config` (LNKSTA) and
 * `current_link_width`, replaced atomically. The other end of the link is
 * the caller's to change too. 0, -EINVAL, or the errno of writing.
 */
int sim_sysfs_set_link_width(const struct sim_machine *m, const char *root, size_t idx,
                             unsigned int width);

/*
 * sim_sysfs_device_write / sim_sysfs_device_remove - write device @idx's
 * directory again (a rescan: its files as at start, AER files by the next
 * sim_sysfs_update_aer) or remove it (a surprise removal; gone already is
 * fine). 0, -EINVAL or the errno of writing or removing.
 */
int sim_sysfs_device_write(const struct sim_machine *m, const char *root, size_t idx);
int sim_sysfs_device_remove(const struct sim_machine *m, const char *root, size_t idx);

/* sim_sysfs_pmu_write / sim_sysfs_pmu_remove - core @core's hisi_pcie
 * PMU directory written afresh with perf type @type (a driver bound
 * again), or removed (unbound). 0, -EINVAL or the errno. */
int sim_sysfs_pmu_write(const struct sim_machine *m, const char *root, size_t core, uint32_t type);
int sim_sysfs_pmu_remove(const struct sim_machine *m, const char *root, size_t core);
/* The directory of PMU @name under bus/event_source/devices goes (its
 * driver was unbound). 0 also when it was not there. */
int sim_sysfs_pmu_dir_remove(const char *root, const char *name);
/* uncore_iio_free_running_<box> afresh, with perf type @type (bound again). */
int sim_sysfs_iio_pmu_write(const struct sim_machine *m, const char *root, unsigned int box,
                            uint32_t type);

/* Replaces @root/@dir/@name by @text atomically (write + rename): what
 * changes at run time (`cpumask`, the online CPUs). 0 or the errno. */
int sim_sysfs_put(const char *root, const char *dir, const char *name, const char *text);

/* sim_sysfs_iio_cpumasks - rewrite the cpumask of every Intel IIO PMU
 * (uncore_iio_free_running_<box>, uncore_iio_<box>) in the tree: for each
 * socket with the box, the CPU @socket_cpu[socket] (< 0: none online, left
 * out), as uncore_change_context() moves it when a CPU goes offline. */
int sim_sysfs_iio_cpumasks(const struct sim_machine *m, const char *root, const int *socket_cpu);

/* The `config` image of one device (4096 bytes): header, PCI Express
 * capability (type, MPSS, MPS, MRRS, link capabilities/status/LNKCAP2) and
 * an AER extended capability when the device has AER. Pure. */
void sim_config_image(const struct sim_machine *m, size_t dev, uint8_t cfg[4096]);

/*
 * sim_discovery_image - the BAR 0 image of socket @socket's PMON discovery
 * function (what its `resource0` holds): the global entry at 0 and unit i
 * at (i + 1) * stride * 8, little-endian u64s, the rest zero. @size must be
 * at least the BAR size. Returns 0, -EINVAL or -ENOSPC. Pure.
 */
int sim_discovery_image(const struct sim_machine *m, size_t socket, uint8_t *buf, size_t size);

/* The global control address the simulated table states: the last 4 KiB
 * page of the BAR (an arbitrary, documented choice). */
#define sim_discovery_global_ctl(s) ((s)->bar + (s)->bar_size - 0x1000)

/* Name of the PMU of core @i: "hisi_pcie<sicl>_core<core>". */
void sim_pmu_name(const struct sim_machine *m, size_t core, char *buf, size_t size);

/* rm -rf @root (only what sim_sysfs_write could have created below it). */
int sim_sysfs_remove(const char *root);

#endif /* PCIESCOPE_SIM_SYSFS_H */
