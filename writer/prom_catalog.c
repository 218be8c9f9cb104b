// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * prom_catalog.c - HELP and UNIT of pciescope's metric families (see the
 * header). Sorted by name: prom_catalog_find() searches it by bisection,
 * and test_om checks the order.
 */
#include "prom_catalog.h"

#include <stdlib.h>
#include <string.h>

static const struct prom_family_doc catalog[] = {
    {"pcie_aer_device_errors_total", "",
     "AER errors of the function by severity (TOTAL_ERR_* of sysfs aer_dev_*)"},
    {"pcie_aer_errors_total", "",
     "AER errors of the function by severity and error type (sysfs aer_dev_*)"},
    {"pcie_aer_rootport_errors_total", "",
     "AER errors reported to this Root Port or Event Collector by severity "
     "(sysfs aer_rootport_total_err_*)"},
    {"pcie_audit_finding", "", "1 while the MPS/MRRS audit finding is present on the function"},
    {"pcie_audit_findings", "", "Number of MPS/MRRS audit findings by severity"},
    {"pcie_collector_cpu_seconds_total", "seconds",
     "CPU time used by the collector thread (what monitoring costs)"},
    {"pcie_device_bandwidth_bytes_per_second", "bytes_per_second",
     "Bandwidth of one endpoint through its Root Port, per direction and TLP type "
     "(PMU requester filter)"},
    {"pcie_device_info", "",
     "PCI function: IDs, class, port type, parent, Root Port, NUMA node and names"},
    {"pcie_df_beats_total", "",
     "Raw count of AMD data fabric upstream DMA beats (64 bytes) of an IO root complex"},
    {"pcie_df_root_complex_info", "",
     "AMD IO root complex of the data fabric PMU: socket, root buses and mapping"},
    {"pcie_functions", "", "PCI functions reported after Device/IgnoreDevice"},
    {"pcie_iio_bw_out_estimate_bytes_per_second", "bytes_per_second",
     "Estimated outbound bandwidth of an IIO stack part (bw_out counters, kernels before "
     "6.15)"},
    {"pcie_iio_counts_total", "", "Raw count of an IIO free-running counter"},
    {"pcie_iio_stack_info", "", "Intel IIO stack: socket, stack, bus and mapping"},
    {"pcie_link_capacity_bytes_per_second", "bytes_per_second",
     "Link capacity per direction after line encoding (speed x width)"},
    {"pcie_link_changes_total", "", "Link speed or width changes seen (flaps, retrains)"},
    {"pcie_link_downtrained", "",
     "1 when the link runs below the speed or width both partners support"},
    {"pcie_link_speed_transfers_per_second", "transfers_per_second",
     "Link speed per lane: current (LNKSTA) or max (LNKCAP/LNKCAP2)"},
    {"pcie_link_up", "", "1 when the link is up (width > 0 and a known speed)"},
    {"pcie_link_width_lanes", "lanes", "Link width: current (LNKSTA) or max (LNKCAP)"},
    {"pcie_max_payload_size_bytes", "bytes",
     "Max Payload Size: configured (DEVCTL), supported (DEVCAP) or path_best"},
    {"pcie_max_read_request_size_bytes", "bytes", "Max Read Request Size (DEVCTL)"},
    {"pcie_mps_policy_info", "",
     "The kernel's MPS policy (pcie_bus_*) in force and where it comes from"},
    {"pcie_payload_efficiency_ratio", "ratio",
     "Payload / (payload + TLP overhead) at the current MPS or the path's best"},
    {"pcie_pmu_counting_seconds_total", "seconds",
     "Time the PMU measurement was counting (perf time_running)"},
    {"pcie_pmu_coverage_ratio", "ratio",
     "Counting time / time since the collector started (PMU counter sharing)"},
    {"pcie_pmu_flux_total", "", "Raw *_flux counts of the PMU measurement"},
    {"pcie_pmu_info", "", "HiSilicon PCIe PMU: SICL, core, identifier, ports"},
    {"pcie_pmu_latency_cycles_total", "cycles", "Raw *_latency cycles of the PMU measurement"},
    {"pcie_pmu_measurements", "", "Measurements in the PMU's counter plan"},
    {"pcie_pmu_measurements_counting", "", "Measurements counting in this interval's window"},
    {"pcie_pmu_time_total", "", "Raw *_time counts of the PMU measurement"},
    {"pcie_pmu_tlps_total", "", "Raw *_cnt TLP counts of the PMU latency measurement"},
    {"pcie_policy_max_payload_size_bytes", "bytes",
     "The MPS the kernel would set under each pcie_bus_config policy"},
    {"pcie_port_bandwidth_bytes_per_second", "bytes_per_second",
     "Bandwidth through the Root Port (or IIO stack part) per direction and TLP type"},
    {"pcie_port_latency_cycles", "cycles", "Mean TLP latency at the Root Port in PMU cycles"},
    {"pcie_port_latency_seconds", "seconds", "Mean TLP latency at the Root Port"},
    {"pcie_port_tlp_length_bytes_per_second", "bytes_per_second",
     "Inbound write bandwidth of TLPs shorter than a length (cumulative buckets)"},
    {"pcie_port_utilization_ratio", "ratio",
     "Bandwidth of one direction / link capacity (current or max), 0..1"},
    {"pcie_ptt_completion_latency_quantile_seconds", "seconds",
     "Request to completion latency quantile in the last PTT window"},
    {"pcie_ptt_completion_latency_seconds", "seconds",
     "Request to completion latency of traced non-posted requests (PTT)"},
    {"pcie_ptt_entries_total", "", "PTT trace entries seen"},
    {"pcie_ptt_malformed_total", "", "PTT trace entries that did not decode (skipped)"},
    {"pcie_ptt_payload_bytes_total", "bytes", "Payload bytes of traced TLPs by kind"},
    {"pcie_ptt_requester_tlps_total", "", "Traced TLPs of the busiest requesters"},
    {"pcie_ptt_restarts_total", "", "PTT traces restarted after a silent stop"},
    {"pcie_ptt_tag_reuse_total", "",
     "Requests seen while one with the same requester and tag was pending"},
    {"pcie_ptt_tlps_total", "", "Traced TLPs by direction and kind"},
    {"pcie_ptt_trace_bytes_total", "bytes", "PTT trace (AUX) bytes read"},
    {"pcie_ptt_truncated_total", "", "PTT AUX records flagged truncated"},
    {"pcie_ptt_tune", "", "PTT tune knob level (QoS and buffer tuning)"},
    {"pcie_ptt_unmatched_total", "",
     "Traced requests without completion and completions without request"},
    {"pcie_ptt_windows_total", "", "PTT trace windows by result"},
    {"pcie_simulation_info", "",
     "Present only when the values come from a SIMULATED machine, never a real one"},
    {"pcie_uncore_discovery_info", "", "Intel uncore PMON discovery table (DVSEC 0x23, id 1)"},
    {"pcie_uncore_units", "", "Valid unit entries of the uncore discovery table by type"},
    {"remote_write_last_send_duration_seconds", "seconds",
     "Latency of the last successful remote-write request"},
    {"remote_write_last_success_timestamp_seconds", "seconds",
     "When the last remote-write request succeeded (0: never)"},
    {"remote_write_queue_length", "", "Samples waiting in memory for the endpoint"},
    {"remote_write_requests_failed_total", "", "Remote-write requests without a 2xx answer"},
    {"remote_write_requests_total", "", "Remote-write requests made"},
    {"remote_write_retry_after_pauses_total", "",
     "Pauses a receiver's Retry-After asked for (each at most RetryAfterMax)"},
    {"remote_write_samples_dropped_total", "", "Samples given up, by reason"},
    {"remote_write_samples_failed_total", "", "Samples in requests refused for good"},
    {"remote_write_samples_retried_total", "", "Samples in requests that had to be sent again"},
    {"remote_write_samples_sent_total", "", "Samples in requests answered 2xx"},
    {"remote_write_send_duration_seconds_total", "seconds",
     "Sum of the latencies of successful remote-write requests"},
    {"remote_write_spool_bytes", "bytes", "Unsent bytes in the endpoint's spool"},
    {"remote_write_spool_disk_bytes", "bytes",
     "Disk space of the endpoint's spool segments, sent records not yet removed included"},
    {"remote_write_spool_errors_total", "",
     "Spool opens and appends that failed (the endpoint went on without the spool)"},
};

static int by_name(const void *key, const void *elem)
{
        return strcmp(key, ((const struct prom_family_doc *)elem)->name);
}

const struct prom_family_doc *prom_catalog_find(const char *name)
{
        return bsearch(name, catalog, sizeof(catalog) / sizeof(catalog[0]), sizeof(catalog[0]),
                       by_name);
}

const struct prom_family_doc *prom_catalog_all(size_t *n)
{
        *n = sizeof(catalog) / sizeof(catalog[0]);
        return catalog;
}
