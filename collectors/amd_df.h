/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * amd_df.h - upstream DMA bandwidth per IO root complex on AMD EPYC 9005
 * (Turin, Zen 5, family 1Ah) through the kernel's data fabric PMU,
 * `amd_df` (arch/x86/events/amd/uncore.c).
 *
 * The PMU is programmable and counts per package: its `cpumask` holds one
 * CPU per socket, and an event opened on that CPU counts that socket's
 * fabric. The kernel publishes no named events for it; perf's own event
 * list (tools/perf/pmu-events/arch/x86/amdzen5/data-fabric.json, from
 * AMD's PPR for family 1Ah model 02h) names
 * `{local,remote}_socket_upstream_{read,write}_data_beats_io_<n>`: 64-byte
 * beats of DMA data between IO root complex n (0..7) and local or remote
 * memory, event code 0x81f + 0x40 * n, unit mask 0x7fe / 0x7ff (local
 * read / write), 0xbfe / 0xbff (remote), 0xffe / 0xfff (either). The
 * collector encodes them through the PMU's `format/event` and
 * `format/umask` files (with PerfMonV2: config:0-7,32-37 and
 * config:8-15,24-27); a kernel whose umask field is 8 bits wide cannot
 * express them and the PMU is left alone.
 *
 * "Upstream read" is a device reading memory: the data goes towards the
 * device (tx); "upstream write" is a device writing memory (rx). The
 * counters count data only (64-byte lines), no TLP headers; peer-to-peer
 * and MMIO are not counted.
 *
 * Scope: an IO root complex, not a Root Port, and which PCI root bus
 * belongs to which root complex index is not published. Root complexes are
 * labelled `root_complex` ("io0".."io7"); configuration (AMDDFRootComplexBus)
 * or a calibration file (`pciescope calibrate` finds the root complex whose
 * rate rises by a known load through a device: amd_df_identify_rc) maps
 * them to root buses, and only then is a utilisation published: the bytes
 * against the sum of the current capacities of the Root Port links on
 * those buses (what the root complex's links can carry together). A
 * configuration line for a root bus wins over a calibrated one (a
 * disagreement is logged); `pcie_df_root_complex_info{mapping}` says
 * which mapped each root complex.
 *
 * The fabric has few counters, shared with DRAM and xGMI tools. Each
 * measurement is one perf group of two events (read and write beats of one
 * root complex and locality); the collector enables as many groups as
 * AMDDFCounters allows and rotates them every interval, as the hisi_pcie
 * collector does, reporting coverage (counting time over elapsed time).
 * Rates come from the perf counting time, so the kernel's own multiplexing
 * (another tool holding counters) is accounted for too.
 */
#ifndef PCIESCOPE_AMD_DF_H
#define PCIESCOPE_AMD_DF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sample.h"

struct hw_env;
struct pcie_topo;
struct perf_event_attr;
struct perf_pmu;
struct sample_set;

#define AMD_DF_ROOT_COMPLEXES 8  /* io_0 .. io_7 in perf's Zen 5 list */
#define AMD_DF_BEAT_BYTES     64 /* one data beat */
#define AMD_DF_MAX_MAPS       64
#define AMD_DF_MAX_SOCKETS    8    /* sockets the collector follows */
#define AMD_DF_FAMILY         0x1a /* Zen 5: the only family with these event codes */

enum amd_df_locality {
        AMD_DF_LOCAL,  /* memory of the root complex's own socket */
        AMD_DF_REMOTE, /* memory of the other socket */
        AMD_DF_ANY,    /* either (one counter pair instead of two) */
};

enum amd_df_dir {
        AMD_DF_READ,  /* upstream read: the device reads memory (tx) */
        AMD_DF_WRITE, /* upstream write: the device writes memory (rx) */
};

/* AMDDFRootComplexBus <socket> <rc> "dddd:bb" from the configuration, or
 * the same from a calibration file (@calibrated). */
struct amd_df_map {
        unsigned int socket, rc;
        uint32_t domain;
        uint8_t bus;
        bool calibrated;
};

struct amd_df_opts {
        /* Counters the collector may use per socket (AMDDFCounters): each
         * measurement takes two. */
        unsigned int counters;
        bool split_locality; /* local and remote apart (AMDDFLocality split) */
        size_t map_count;
        struct amd_df_map maps[AMD_DF_MAX_MAPS];
        enum pcie_detail detail;
};
void amd_df_opts_default(struct amd_df_opts *opts);
/* Appends @m (an identical one already there is not repeated). 0, -EINVAL
 * (socket over 255 or rc out of range) or -ENOSPC (AMD_DF_MAX_MAPS). */
int amd_df_opts_add_map(struct amd_df_opts *opts, const struct amd_df_map *m);

/* "local", "remote", "any"; "read"/"write"; NULL out of range. */
const char *amd_df_locality_name(enum amd_df_locality loc);

/* The event code of root complex @rc (0..7): 0x81f + 0x40 * rc. */
uint64_t amd_df_event_code(unsigned int rc);
/* The unit mask of @loc and @dir (0x7fe ... 0xfff). */
uint64_t amd_df_umask(enum amd_df_locality loc, enum amd_df_dir dir);

/*
 * amd_df_event_attr - fill @attr (zeroed first) for the beats of @rc, @loc
 * and @dir on @pmu, through its `event` and `umask` format fields.
 * Returns 0, -ENOENT (a field is missing), -ERANGE (a field is too narrow:
 * a kernel or CPU without PerfMonV2's wide DF fields) or -EINVAL (@rc out
 * of range).
 */
int amd_df_event_attr(const struct perf_pmu *pmu, unsigned int rc, enum amd_df_locality loc,
                      enum amd_df_dir dir, struct perf_event_attr *attr);

/*
 * amd_df_plan_window - choose the measurements of the next window: @window
 * of @count (all when they fit), round-robin from *@cursor, written to
 * @chosen in ascending order; *@cursor moves on so every measurement gets
 * its turn. Returns how many were chosen. Pure.
 */
size_t amd_df_plan_window(size_t count, size_t window, size_t *cursor, size_t *chosen);

/* Parses "<socket> <rc> dddd:bb" pieces: the bus text as "dddd:bb" or
 * "bb" (hex). 0 or -EINVAL. */
int amd_df_parse_bus(const char *text, uint32_t *domain, uint8_t *bus);

/* ---- calibration: which root complex carries a device's root bus ---- */

/* One root complex's upstream bytes per second over an idle window and
 * over a window with a known load through the device. */
struct amd_df_rc_rates {
        unsigned int socket, rc;
        double idle[2], load[2]; /* [AMD_DF_READ], [AMD_DF_WRITE] */
};

/* What amd_df_identify_rc() found. */
struct amd_df_rc_match {
        size_t index;        /* into the rates: the root complex (see the return) */
        enum amd_df_dir dir; /* which of its rates rose */
        double rise;         /* load - idle of that rate, bytes/s */
        size_t matches;      /* root complexes that rose by the load */
        size_t other;        /* -ENOTUNIQ: the second of them */
        enum amd_df_dir other_dir;
        double other_rise;
};

/*
 * amd_df_identify_rc - which of @n root complexes carried a load of
 * @expected bytes/s: the one whose read or write rate rose by @expected
 * within @tolerance (relative). Other traffic may come and go on other
 * root complexes; only a rise the size of the load's is taken for it.
 * Returns 0 (@out->index, dir, rise), -ENOENT (none did: @out->index, dir
 * and rise name the largest rise, for the message), -ENOTUNIQ (several:
 * @out->index and other name the first two) or -EINVAL (@n 0, @expected
 * or @tolerance not > 0, a rate not finite). Pure.
 */
int amd_df_identify_rc(const struct amd_df_rc_rates *rates, size_t n, double expected,
                       double tolerance, struct amd_df_rc_match *out);

/*
 * One root complex's upstream bytes for calibration: amd_df_probe_open
 * counts read and write beats of root complex @rc (either memory) on CPU
 * @cpu (a cpumask CPU: its socket); amd_df_probe_read gives bytes per
 * second of each since the previous read (from the counting time), and
 * -EBUSY when the counters did not count all that time (another perf user
 * holds the fabric's counters: the rates would be guesses).
 */
struct amd_df_probe;
int amd_df_probe_open(const struct hw_env *env, int cpu, unsigned int rc,
                      struct amd_df_probe **out);
int amd_df_probe_read(struct amd_df_probe *p, double bytes_per_second[2]);
void amd_df_probe_close(struct amd_df_probe *p);

struct amd_df;        /* everything found */
struct amd_df_socket; /* one socket's collector */

/*
 * amd_df_discover - find the amd_df PMU, check the CPU family (1Ah) and the
 * format fields, one collector per cpumask CPU (socket = its
 * physical_package_id), and apply the configured root bus mappings with
 * the links @topo shows (may be NULL). Returns 0 with *@out NULL when there
 * is nothing to count (no PMU, another family, narrow fields: logged once),
 * 0 with a result, or -ENOMEM.
 */
int amd_df_discover(const struct hw_env *env, const struct pcie_topo *topo,
                    const struct amd_df_opts *opts, struct amd_df **out);
void amd_df_free(struct amd_df *df);

size_t amd_df_socket_count(const struct amd_df *df);
struct amd_df_socket *amd_df_socket_at(struct amd_df *df, size_t i);

/* "amd_df-socket0" */
const char *amd_df_socket_name(const struct amd_df_socket *s);
unsigned int amd_df_socket_id(const struct amd_df_socket *s);
/* The cpumask CPU that counts the socket's fabric. */
int amd_df_socket_cpu(const struct amd_df_socket *s);

/*
 * The PMU's perf type now (its `type` file): 0, or -ENOENT when the PMU is
 * gone (its driver unbound). A driver bound again gives the PMU a new
 * type: amd_df_socket_set_type() puts it into a stopped socket's events
 * before amd_df_socket_start() opens them again.
 */
int amd_df_pmu_type(const struct hw_env *env, uint32_t *type);
uint32_t amd_df_socket_type(const struct amd_df_socket *s);
void amd_df_socket_set_type(struct amd_df_socket *s, uint32_t type);
/* Measurements planned, and how many count at once. */
size_t amd_df_socket_measurements(const struct amd_df_socket *s);
size_t amd_df_socket_window(const struct amd_df_socket *s);

/* Opens every measurement's group (stopped) and enables the first window.
 * On failure everything is closed, the reason is logged once, and the
 * perf_event_open errno is returned. */
int amd_df_socket_start(struct amd_df_socket *s, double now);

/* One interval: read the enabled groups, rotate, append the socket's
 * samples. Returns 0 or the first read error. */
int amd_df_socket_tick(struct amd_df_socket *s, double now, struct sample_set *out);

void amd_df_socket_stop(struct amd_df_socket *s);
double amd_df_socket_cpu_seconds(const struct amd_df_socket *s);

#endif /* PCIESCOPE_AMD_DF_H */
