/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sim_machine.h - the description of a simulated machine.
 *
 * A machine is read from a human-editable JSON file (json-c; C and C++
 * comments allowed) documented in docs/simulator.md: SICLs with their PCIe
 * cores, each core's Root Ports and the switches and endpoints below them,
 * other Root Complex integrated endpoints, and a workload per endpoint.
 * Nothing here touches a file system beyond reading the description; the
 * sysfs writer (sim_sysfs.h) and the PMU model (sim_hisi_pcie.h) work from
 * this struct.
 */
#ifndef PCIESCOPE_SIM_MACHINE_H
#define PCIESCOPE_SIM_MACHINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SIM_NAME_MAX    64
#define SIM_TEXT_MAX    512
#define SIM_DIST_MAX    16 /* points in one size or latency distribution */
#define SIM_PHASES_MAX  16 /* phases in one workload cycle */
#define SIM_AER_MAX     32 /* named AER counters per device */
#define SIM_MAX_DEVICES 1024
#define SIM_MAX_CORES   64

/* Kernel whose hisi_pcie driver the sysfs tree and the perf rules follow. */
enum sim_kernel {
        SIM_KERNEL_5_17, /* 3 latency pairs + 2 flux pairs with the wrong codes */
        SIM_KERNEL_6_2,  /* codes fixed, len_mode */
        SIM_KERNEL_6_9,  /* 9 pairs, BDF validation, whole-control relatedness */
        SIM_KERNEL_6_12, /* bdf_min / bdf_max */
        SIM_KERNEL_6_15, /* hisi_pcie as 6.12; Intel IIO free-running scale 32 bytes, no bw_out */
};
/* "5.17", "6.2", "6.9", "6.12", "6.15" */
const char *sim_kernel_name(enum sim_kernel k);

/* A discrete distribution: values (bytes or nanoseconds) with relative
 * weights (> 0; they need not add up to 1). */
struct sim_dist {
        size_t count;
        double value[SIM_DIST_MAX];
        double weight[SIM_DIST_MAX];
};
double sim_dist_mean(const struct sim_dist *d);

/* One stream of requests a device takes part in. */
struct sim_flow {
        double bytes_per_second; /* data moved at phase scale 1; 0 = idle */
        struct sim_dist size;    /* request size in bytes (before MPS/MRRS splitting) */
        struct sim_dist latency; /* nanoseconds: see enum sim_flow_kind */
};

enum sim_flow_kind {
        SIM_DMA_WRITE, /* device writes host memory: inbound MWr (rx_mwr); latency = RC commit delay
                        */
        SIM_DMA_READ,  /* device reads host memory: inbound MRd (rx_mrd), outbound CplD (tx_cpl);
                          latency = request to completion */
        SIM_MMIO_WRITE, /* CPU writes the device: outbound MWr (tx_mwr) */
        SIM_MMIO_READ,  /* CPU reads the device: outbound MRd (tx_mrd), inbound CplD (rx_cpl);
                           latency = request to completion */
        SIM_FLOW_KINDS,
};

/* The workload scale repeats through the phases (a cycle); with no phases
 * the scale is 1 all the time. */
struct sim_phase {
        double duration; /* seconds, > 0 */
        double scale;    /* multiplies every flow's rate, >= 0 */
};

struct sim_workload {
        struct sim_flow flow[SIM_FLOW_KINDS];
        size_t phase_count;
        struct sim_phase phases[SIM_PHASES_MAX];
        /* Back-pressure (sim_traffic_backpressure): the highest phase scale
         * the links on the way to the Root Port carry; a phase asking more
         * runs at this scale. 0: no limit (the links carry it all). */
        double scale_cap;
};

/* An AER counter: name as in the kernel's aer_dev_* files ("RxErr",
 * "BadTLP", "DLP", ...), the value at start and how fast it rises. */
struct sim_aer_counter {
        char name[SIM_NAME_MAX];
        uint64_t initial;
        double per_second;
};

enum sim_aer_class { SIM_AER_CORRECTABLE, SIM_AER_NONFATAL, SIM_AER_FATAL, SIM_AER_CLASSES };

/* Status bits of an AER class (16 correctable, 27 uncorrectable), and the
 * name the kernel's aer.c prints for @bit, or NULL for an unnamed bit. One
 * table for the description loader and the sysfs writer. */
int sim_aer_bits(enum sim_aer_class cls);
const char *sim_aer_bit_name(enum sim_aer_class cls, int bit);

enum sim_dev_kind {
        SIM_ROOT_PORT,   /* PCIe Root Port of a PCIe core */
        SIM_SWITCH_UP,   /* switch upstream port */
        SIM_SWITCH_DOWN, /* switch downstream port */
        SIM_ENDPOINT,    /* PCIe endpoint */
        SIM_RCIEP,       /* Root Complex integrated endpoint (PMU, PTT, accelerators) */
};

#define SIM_NONE ((size_t)-1)

struct sim_device {
        char name[SIM_NAME_MAX]; /* short label from the file ("nvme0"), may be "" */
        uint16_t domain;
        uint8_t bus, dev, fn;
        enum sim_dev_kind kind;
        uint16_t vendor, device, subsys_vendor, subsys_device;
        uint32_t class_code; /* 24 bits: base, sub, prog-if */
        uint8_t revision;

        /* PCIe registers (bytes, speed codes 1..6 = 2.5..64 GT/s, lanes). */
        unsigned int mpss, mps, mrrs;
        unsigned int max_speed, max_width, cur_speed, cur_width;
        /* A flapping link (on the function below it): every flap_period_s
         * the link retrains between cur_width and flap_width; 0: steady. */
        double flap_period_s;
        unsigned int flap_width;
        bool hotplug; /* ports: slot with hot-plug capability */

        uint8_t secondary, subordinate; /* bridges: computed from the children */
        size_t parent;                  /* index of the parent bridge, SIM_NONE on a root bus */
        size_t core;                    /* index into sim_machine.cores, SIM_NONE if none */
        int numa_node;

        bool has_aer;
        size_t aer_count[SIM_AER_CLASSES];
        struct sim_aer_counter aer[SIM_AER_CLASSES][SIM_AER_MAX];

        bool has_workload;
        struct sim_workload workload;
};

/* One PCIe core: one hisi_pcie PMU (and one PTT device). */
struct sim_core {
        unsigned int sicl; /* SICL id, the <sicl> of hisi_pcie<sicl>_core<core> */
        unsigned int id;   /* core id within the SICL */
        int numa_node;
        int cpu;             /* the PMU's cpumask CPU */
        uint32_t identifier; /* PMU version register (sysfs `identifier`) */
        size_t pmu_function; /* device index of the 19e5:a12d RCiEP, SIM_NONE if absent */
        size_t ptt_function; /* device index of the 19e5:a12e RCiEP, SIM_NONE if absent */
        uint16_t bdf_min;    /* lowest / highest Root Port BDF (bus << 8 | devfn) */
        uint16_t bdf_max;
        size_t port_count;
        size_t ports[16]; /* device indexes of the Root Ports */
};

/* Counter clocks of the simulated hisi_pcie hardware: these are the
 * machine's ground truth that the plugin's options must match. */
struct sim_pmu_clocks {
        double flux_unit_bytes;  /* bytes per flux count (4: one DW) */
        double time_clock_hz;    /* *_time counters tick at this rate while counting */
        double latency_clock_hz; /* *_latency counters add delay in cycles of this clock */
        /* The PTT trace devices' Time field: ticks of this clock, and
         * whether it holds the ticks since the previous entry (delta, the
         * summariser's default reading) or a free-running counter. */
        double ptt_clock_hz;
        bool ptt_time_absolute;
};

/* A fault to inject into the perf ops (from the description's "inject"). */
struct sim_injection {
        char pmu[SIM_NAME_MAX]; /* PMU name, or "" for every PMU */
        int err;                /* positive errno returned by perf_event_open */
        long count;             /* how many opens fail; -1 = all */
};

/* ---- Intel uncore (Sapphire Rapids class machines) ---- */

#define SIM_MAX_SOCKETS      8
#define SIM_MAX_IIO_STACKS   16
#define SIM_MAX_UNCORE_UNITS 1024

/* Access types of the discovery table (kernel-facts §5.2). */
enum sim_uncore_access { SIM_ACCESS_MSR = 0, SIM_ACCESS_MMIO = 1, SIM_ACCESS_PCI = 2 };

/* One unit entry of the PMON discovery table, as the table holds it. */
struct sim_uncore_unit {
        uint16_t type; /* box type: 0 CHA, 1 IIO, ... 6 IMC ... */
        uint16_t box_id;
        enum sim_uncore_access access;
        uint64_t ctl; /* box control address */
        uint8_t num_regs, width, ctl_offset, ctr_offset, status_offset;
};

/* An IIO stack: its box id (= the N of uncore_iio_free_running_<N>), its
 * root bus, and its Root Ports at devices 1..8 of that bus (part = device
 * - 1, as Intel PCM maps SPR PCIe stacks). */
struct sim_iio_stack {
        unsigned int box_id;
        uint16_t domain;
        uint8_t bus;
        size_t port_count;
        size_t ports[8]; /* device indexes of the Root Ports */
};

struct sim_socket {
        unsigned int id;
        int numa_node;
        unsigned int first_cpu, cpu_count; /* CPUs first_cpu .. first_cpu + cpu_count - 1 */
        /* The PMON discovery function (8086:09a7) and its BAR 0 (64-bit
         * memory) holding the table; device index into sim_machine.devices. */
        size_t discovery_function;
        uint64_t bar, bar_size;
        unsigned int stride;      /* table stride in 8-byte units (>= 3) */
        size_t other_dvsec_count; /* Intel DVSECs with other ids before the PMON one */
        uint16_t other_dvsec_ids[4];
        size_t unit_count;
        struct sim_uncore_unit *units; /* table order */
        size_t stack_count;
        struct sim_iio_stack stacks[SIM_MAX_IIO_STACKS];
        /* The uncore's CPU bus registers (intel.stack_registers; device
         * indexes, SIM_NONE when not written): the MSM function 8086:09a6
         * at 03.0 and the PCU CR3 function 8086:325b at 1e.3 of the
         * discovery function's bus, and 8086:09a2 at 00.0 of each stack's
         * root bus (SAD_CONTROL_CFG), as collectors/iio_stackmap.h reads. */
        size_t msm_function, pcu_function;
        size_t sad_function[SIM_MAX_IIO_STACKS];
        unsigned int cpubus[SIM_MAX_IIO_STACKS]; /* each stack's CPU bus id */
};

struct sim_intel {
        bool present;
        unsigned int cpu_model;         /* /proc/cpuinfo "model" (SPR 143) */
        double iio_in_bytes_per_count;  /* hardware truth: 32 on SPR */
        double iio_out_bytes_per_count; /* model assumption: 4 */
        double ioclk_hz;                /* IIO clock, e.g. 1e9 (assumption) */
        bool die_files;                 /* write die<N> in uncore_iio_<box> (SPR kernels do not) */
        bool stack_registers;           /* write the CPU bus registers (Intel PCM's mapping) */
        unsigned int chop;              /* SPR die chop in CAPID4: 3 XCC, 1 MCC */
        size_t socket_count;
        struct sim_socket sockets[SIM_MAX_SOCKETS];
};

/* ---- AMD EPYC (Turin class machines): the data fabric PMU ---- */

#define SIM_AMD_ROOT_COMPLEXES 8 /* io_0 .. io_7 of the amd_df events */

/* An IO root complex: its index n of the amd_df events (io_<n>), its PCI
 * root bus and Root Ports, and the share of its DMA that goes to the other
 * socket's memory (the rest is local). Which bus is which index is the
 * machine's ground truth; the kernel does not publish it. */
struct sim_amd_rc {
        unsigned int index;
        uint16_t domain;
        uint8_t bus;
        double remote_share;
        size_t port_count;
        size_t ports[16]; /* device indexes of the Root Ports */
};

struct sim_amd_socket {
        unsigned int id;
        int numa_node;
        unsigned int first_cpu, cpu_count;
        size_t rc_count;
        struct sim_amd_rc rcs[SIM_AMD_ROOT_COMPLEXES];
};

struct sim_amd {
        bool present;
        unsigned int cpu_family, cpu_model; /* 0x1a, 0x02: EPYC 9005 (Turin) */
        unsigned int df_counters;           /* counters of the fabric PMU per socket */
        bool narrow_umask; /* format/umask of kernels without PerfMonV2 DF fields (8 bits) */
        size_t socket_count;
        struct sim_amd_socket sockets[SIM_MAX_SOCKETS];
};

/* ---- Synopsys DesignWare PCIe (Alibaba Yitian 710 class machines) ---- */

#define SIM_MAX_DWC_RCS   8
#define SIM_MAX_DWC_PORTS 64

/* A root complex of DesignWare Root Ports: each port of a vendor the
 * kernel's dwc_pcie_pmu driver knows (Alibaba 0x1ded, Qualcomm 0x17cb;
 * Ampere 0x1def from Linux 6.13) has the RAS D.E.S. capability and gets a
 * dwc_rootport_<sbdf> PMU (from Linux 6.8). */
struct sim_dwc_rc {
        unsigned int id;
        int numa_node;
        int cpu; /* the PMUs' cpumask CPU: cpumask_local_spread(0, node) */
};
struct sim_dwc_desc {
        size_t rc_count;
        struct sim_dwc_rc rcs[SIM_MAX_DWC_RCS];
        size_t port_count;                 /* every Root Port of the root complexes */
        size_t ports[SIM_MAX_DWC_PORTS];   /* device indexes */
        size_t port_rc[SIM_MAX_DWC_PORTS]; /* index into rcs */
};

/* ---- NVIDIA Grace (Tegra241) PCIe PMU ---- */

#define SIM_NV_PORT_BITS 10 /* root_port = config1:0-9 */

/* One socket's nvidia_pcie_pmu_<node>: its Root Ports and, for each, the
 * bit of the root_port filter that selects it in the simulated hardware
 * (the truth; the driver does not publish it). */
struct sim_nv_socket {
        unsigned int node; /* the <node> of nvidia_pcie_pmu_<node> */
        unsigned int first_cpu, cpu_count;
        double remote_share; /* share of DMA to the other socket's memory (rem events) */
        size_t port_count;
        size_t ports[SIM_NV_PORT_BITS];      /* device indexes of the Root Ports */
        unsigned int bits[SIM_NV_PORT_BITS]; /* root_port bit of ports[i] */
};

struct sim_nvidia {
        bool present;
        uint32_t identifier;   /* PMIIDR, sysfs `identifier` */
        double cycles_hz;      /* the PMU's cycle counter */
        unsigned int counters; /* event counters besides the cycle counter (PMCFGR.N + 1) */
        size_t socket_count;
        struct sim_nv_socket sockets[SIM_MAX_SOCKETS];
};

/* Changes of the hardware while the machine runs (sim_events.h): the
 * description's `events` schedule, then what callers add at run time. */
#define SIM_MAX_EVENTS 64  /* `events` entries in a description */
#define SIM_EVENT_LOG  256 /* the schedule plus changes made at run time */

enum sim_event_kind {
        SIM_EV_REMOVE,      /* surprise removal of a function and everything below it */
        SIM_EV_ADD,         /* rescan: the function and everything below it come back */
        SIM_EV_CPU_OFFLINE, /* a CPU goes offline: PMUs on it move their cpumask */
        SIM_EV_CPU_ONLINE,
        SIM_EV_PMU_UNBIND, /* the PMU's driver is unbound: its directory goes away */
        SIM_EV_PMU_BIND,   /* bound again: a new perf type, a fresh directory */
        SIM_EV_PTT_STOP,   /* the PTT driver stops the trace in progress */
        SIM_EV_KINDS,
};

/* Which driver a `pmu_unbind` / `pmu_bind` names. */
enum sim_pmu_kind {
        SIM_PMUK_HISI_PCIE, /* hisi_pcie<s>_core<c>: core index */
        SIM_PMUK_HISI_PTT,  /* hisi_ptt<s>_<c>: core index */
        SIM_PMUK_IIO,       /* uncore_iio_free_running_<box>: box id */
        SIM_PMUK_AMD_DF,    /* amd_df: index 0 */
};

struct sim_event {
        enum sim_event_kind kind;
        enum sim_pmu_kind pmu; /* SIM_EV_PMU_UNBIND / SIM_EV_PMU_BIND */
        double at_s;           /* seconds after the machine started */
        double every_s;        /* > 0: repeats with this period; 0: once */
        size_t dev;            /* SIM_EV_REMOVE / SIM_EV_ADD: device index */
        unsigned int cpu;
        size_t core; /* PMU events: core index or IIO box (by pmu); SIM_EV_PTT_STOP: core
                      * index (SIM_NONE: every PTT) */
};

struct sim_machine {
        char name[SIM_NAME_MAX];
        char description[SIM_TEXT_MAX];
        enum sim_kernel kernel;
        unsigned int cpus; /* online CPUs, 0..cpus-1 */
        char cmdline[SIM_TEXT_MAX];
        struct sim_pmu_clocks clocks;

        size_t core_count;
        struct sim_core cores[SIM_MAX_CORES];

        /* Parents come before their children. */
        size_t device_count;
        struct sim_device *devices;

        size_t injection_count;
        struct sim_injection injections[8];

        struct sim_intel intel;  /* present only on Intel machines */
        struct sim_amd amd;      /* present only on AMD machines */
        struct sim_dwc_desc dwc; /* root complexes with DesignWare Root Ports */
        /* present only on NVIDIA Grace machines */
        struct sim_nvidia nvidia;

        /* The first schedule_count come from the description; the rest
         * were made at run time (sim_events.h). Only appended to: readers
         * load event_count with acquire, writers store it with release. */
        /* Per CPU: 1 + the index of the SICL whose `cpus` list it (its
         * die's CPUs, where a PMU's cpumask moves when its CPU goes
         * offline), 0 for none. */
        unsigned char cpu_sicl[4096];

        size_t schedule_count;
        size_t event_count;
        struct sim_event events[SIM_EVENT_LOG];
};

/*
 * sim_machine_load - read and validate a description.
 * @path: a file; @errbuf receives a message naming the file, the JSON path
 * of the offending element ("sicls[0].cores[1].root_ports[0].bdf") and the
 * problem. Returns 0, -ENOENT (no file), -EINVAL (syntax or validation), or
 * -ENOMEM.
 */
int sim_machine_load(const char *path, struct sim_machine **out, char *errbuf, size_t errlen);

/* Same from a string (@origin names it in messages). */
int sim_machine_parse(const char *json, const char *origin, struct sim_machine **out, char *errbuf,
                      size_t errlen);

void sim_machine_free(struct sim_machine *m);

/* Index of the device at domain:bus:dev.fn, or SIM_NONE. */
size_t sim_machine_find(const struct sim_machine *m, uint16_t domain, uint8_t bus, uint8_t dev,
                        uint8_t fn);

/* "0000:01:00.0" into @buf (at least 13 bytes). */
void sim_device_bdf(const struct sim_device *d, char *buf, size_t size);

/* Requester ID: bus << 8 | dev << 3 | fn. */
static inline uint16_t sim_device_rid(const struct sim_device *d)
{
        return (uint16_t)(d->bus << 8 | d->dev << 3 | d->fn);
}

/* Whether Root Port @i of m->dwc has a dwc_rootport PMU under @m's kernel
 * (the driver is there from 6.8, here 6.9; its vendor list grew). */
bool sim_dwc_has_pmu(const struct sim_machine *m, size_t i);

/* Index of the Root Port above @dev (itself for a Root Port), or SIM_NONE. */
size_t sim_machine_root_port(const struct sim_machine *m, size_t dev);

#endif /* PCIESCOPE_SIM_MACHINE_H */
