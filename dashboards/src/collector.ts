// Collector and remote_write health: what monitoring costs (collector CPU),
// whether the PMU counts all the time (coverage), whether the PTT windows
// work, and whether the samples reach the TSDB (queue, spool, drops,
// retries, last successful send).
import * as c from "./common";

const ep = 'endpoint=~"$endpoint"';

export function collector() {
	return c
		.board(
			"pciescope-collector",
			"Collector and remote_write health",
			"pciescope: collector CPU, PMU coverage, PTT window results and the remote_write plugin's queue, spool, drops, retries and last successful send.",
		)
		.withVariable(c.queryVar("endpoint", "remote_write endpoint", `label_values(remote_write_requests_total${c.sel()}, endpoint)`))
		.withRow(c.row("Collectors"))
		.withPanel(
			c.timeSeries({
				title: "Collector CPU per thread",
				description:
					"Rate of `pcie_collector_cpu_seconds_total` per collector thread (PCIe core, PTT device or IIO socket): what monitoring costs (1 = one core).",
				unit: "percentunit",
				queries: [
					{
						expr: `sum by (instance, pmu, socket) (rate(pcie_collector_cpu_seconds_total${c.sel()}[$__rate_interval]))`,
						legend: "{{instance}} {{pmu}} {{socket}}",
					},
				],
				thresholds: [
					[0.05, "orange"],
					[0.2, "red"],
				],
			}),
		)
		.withPanel(
			c.timeSeries({
				title: "PMU coverage",
				description:
					"`pcie_pmu_coverage_ratio`, worst measurement per PCIe PMU (min by pmu): the share of time a measurement counts; below 1 the plan rotates through the 8 counters.",
				unit: "percentunit",
				queries: [{ expr: `min by (instance, pmu) (pcie_pmu_coverage_ratio${c.sel()})`, legend: "{{instance}} {{pmu}}" }],
				thresholds: [],
				min: 0,
				max: 1,
			}),
		)
		.withPanel(
			c.timeSeries({
				title: "PMU measurements planned and counting",
				description: "`pcie_pmu_measurements` (planned) and `pcie_pmu_measurements_counting` (in this interval's window) per PCIe PMU.",
				unit: "none",
				queries: [
					{ expr: `sum by (instance) (pcie_pmu_measurements${c.sel()})`, legend: "{{instance}} planned" },
					{ expr: `sum by (instance) (pcie_pmu_measurements_counting${c.sel()})`, legend: "{{instance}} counting" },
				],
			}),
		)
		.withPanel(
			c.timeSeries({
				title: "PTT window results",
				description: "Rate of `pcie_ptt_windows_total` per host and result (ok, busy, no_budget, stopped, error).",
				unit: "suffix:windows/s",
				queries: [
					{
						expr: `sum by (instance, result) (rate(pcie_ptt_windows_total${c.sel()}[$__rate_interval]))`,
						legend: "{{instance}} {{result}}",
					},
				],
			}),
		)
		.withRow(c.row("remote_write"))
		.withPanel(
			c.timeSeries({
				title: "Samples sent",
				description: "Rate of `remote_write_samples_sent_total` (samples in requests answered 2xx) per endpoint.",
				unit: "short",
				queries: [
					{
						expr: `sum by (instance, endpoint) (rate(remote_write_samples_sent_total${c.sel(ep)}[$__rate_interval]))`,
						legend: "{{instance}} {{endpoint}}",
					},
				],
				w: 8,
			}),
		)
		.withPanel(
			c.timeSeries({
				title: "Queue length",
				description: "`remote_write_queue_length`: samples waiting in memory per endpoint.",
				unit: "short",
				queries: [{ expr: `max by (instance, endpoint) (remote_write_queue_length${c.sel(ep)})`, legend: "{{instance}} {{endpoint}}" }],
				thresholds: [[10000, "orange"]],
				w: 8,
			}),
		)
		.withPanel(
			c.timeSeries({
				title: "Spool",
				description: "`remote_write_spool_bytes`: unsent bytes on disk per endpoint (grows while the receiver is away).",
				unit: "bytes",
				queries: [{ expr: `max by (instance, endpoint) (remote_write_spool_bytes${c.sel(ep)})`, legend: "{{instance}} {{endpoint}}" }],
				thresholds: [[1048576, "orange"]],
				w: 8,
			}),
		)
		.withPanel(
			c.timeSeries({
				title: "Samples dropped",
				description: "Rate of `remote_write_samples_dropped_total` per endpoint and reason (queue_full, http_4xx, spool_size, spool_age, ...).",
				unit: "short",
				queries: [
					{
						expr: `sum by (instance, endpoint, reason) (rate(remote_write_samples_dropped_total${c.sel(ep)}[$__rate_interval]))`,
						legend: "{{instance}} {{endpoint}} {{reason}}",
					},
				],
				thresholds: [[0.001, "red"]],
				w: 8,
			}),
		)
		.withPanel(
			c.timeSeries({
				title: "Retries and failed requests",
				description:
					"Rate of `remote_write_samples_retried_total` (samples sent again), `remote_write_samples_failed_total` (refused for good) and `remote_write_requests_failed_total`.",
				unit: "short",
				queries: [
					{
						expr: `sum by (instance, endpoint) (rate(remote_write_samples_retried_total${c.sel(ep)}[$__rate_interval]))`,
						legend: "{{instance}} {{endpoint}} retried",
					},
					{
						expr: `sum by (instance, endpoint) (rate(remote_write_samples_failed_total${c.sel(ep)}[$__rate_interval]))`,
						legend: "{{instance}} {{endpoint}} failed",
					},
					{
						expr: `sum by (instance, endpoint) (rate(remote_write_requests_failed_total${c.sel(ep)}[$__rate_interval]))`,
						legend: "{{instance}} {{endpoint}} requests failed",
					},
				],
				thresholds: [[0.1, "orange"]],
				w: 8,
			}),
		)
		.withPanel(
			c.timeSeries({
				title: "Time since last successful send",
				description: "time() - `remote_write_last_success_timestamp_seconds` per endpoint (0, never sent, is left out).",
				unit: "s",
				queries: [
					{
						expr: `time() - (max by (instance, endpoint) (remote_write_last_success_timestamp_seconds${c.sel(ep)}) > 0)`,
						legend: "{{instance}} {{endpoint}}",
					},
				],
				thresholds: [
					[120, "orange"],
					[600, "red"],
				],
				w: 8,
			}),
		)
		.withPanel(
			c.timeSeries({
				title: "Send latency",
				description:
					"`remote_write_last_send_duration_seconds` (the last successful request) and the mean from `remote_write_send_duration_seconds_total` / successful `remote_write_requests_total`.",
				unit: "s",
				queries: [
					{
						expr: `max by (instance, endpoint) (remote_write_last_send_duration_seconds${c.sel(ep)})`,
						legend: "{{instance}} {{endpoint}} last",
					},
					{
						expr: `sum by (instance, endpoint) (rate(remote_write_send_duration_seconds_total${c.sel(ep)}[$__rate_interval])) / (sum by (instance, endpoint) (rate(remote_write_requests_total${c.sel(ep)}[$__rate_interval])) - sum by (instance, endpoint) (rate(remote_write_requests_failed_total${c.sel(ep)}[$__rate_interval])))`,
						legend: "{{instance}} {{endpoint}} mean",
					},
				],
				thresholds: [
					[1, "orange"],
					[5, "red"],
				],
				w: 24,
			}),
		)
		.build();
}
