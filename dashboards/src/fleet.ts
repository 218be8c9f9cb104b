// PCIe fleet overview: one screen for 1,000+ hosts. Every panel is a count,
// a top-k or a table of what is wrong: no panel draws a row or a line per
// host, so the page stays fast and readable however large the fleet.
import * as c from "./common";
import { R } from "./records";

const K = 10; // rows of every top-k

// Panels that would scan a raw per-port or per-function family across the
// fleet read the recording rules of records.ts (one series per host, or one
// per wrong link) instead. What still reads raw series reads one series per
// host (pcie_functions, pcie_audit_findings, remote_write_*), only series
// that exist when something is wrong (pcie_audit_finding), or is an instant
// top-k that needs the per-port rows (12 k series at 1,000 hosts).

export function fleet() {
	return c
		.board(
			"pciescope-fleet",
			"PCIe fleet overview",
			"pciescope: the PCIe state of a fleet at a glance (counts, top-k and tables; fast at 1,000+ hosts). Alert rules: dashboards/alerts/, docs/alerts.md.",
		)
		.withRow(c.row("Fleet"))
		.withPanel(
			c.statPanel({
				title: "Hosts reporting",
				description: "Hosts whose pcie plugin sent `pcie_functions` in the last 5 minutes (count by instance).",
				unit: "none",
				queries: [{ expr: `count(count by (instance) (last_over_time(pcie_functions${c.sel()}[5m])))` }],
				thresholds: [],
			}),
		)
		.withPanel(
			c.statPanel({
				title: "Downtrained links",
				description:
					`Links running below the speed or width both partners support (\`pcie_link_downtrained\` == 1), one per link: counted at the Root Port or switch downstream port end (\`pcie_device_info\` port_type). Reads the recording rule \`${R.downtrainedCount}\`.`,
				unit: "none",
				queries: [{ expr: `sum(${R.downtrainedCount}${c.sel()}) or vector(0)` }],
				thresholds: [[1, "red"]],
			}),
		)
		.withPanel(
			c.statPanel({
				title: "Critical MPS/MRRS findings",
				description:
					"Sum of `pcie_audit_findings{severity=\"critical\"}` over the hosts: an MPS above the link partner's or above what the device supports (malformed TLPs).",
				unit: "none",
				queries: [{ expr: `sum(pcie_audit_findings${c.sel('severity="critical"')}) or vector(0)` }],
				thresholds: [[1, "red"]],
			}),
		)
		.withPanel(
			c.statPanel({
				title: "Hosts with uncorrectable AER",
				description:
					`Hosts where \`pcie_aer_device_errors_total\` of severity fatal or nonfatal rose within the dashboard's time range (or the 5 minutes before it): the recording rule \`${R.aerRate}\` above 0 at some point of the range.`,
				unit: "none",
				queries: [
					{
						expr: `count(max by (instance) (max_over_time(${R.aerRate}${c.sel('severity=~"fatal|nonfatal"')}[$__range])) > 0) or vector(0)`,
					},
				],
				thresholds: [[1, "red"]],
			}),
		)
		.withPanel(
			c.statPanel({
				title: "Worst link utilisation",
				description:
					`Highest \`pcie_port_utilization_ratio\` of effective capacity (raw × MPS/(MPS+24)) over every Root Port and direction of the fleet (the recording rule \`${R.utilMax}\`).`,
				unit: "percentunit",
				queries: [{ expr: `max(${R.utilMax}${c.sel()})` }],
				thresholds: [
					[0.7, "orange"],
					[0.9, "red"],
				],
				decimals: 1,
			}),
		)
		.withPanel(
			c.statPanel({
				title: "Samples dropped by remote_write",
				description: "Rate of `remote_write_samples_dropped_total` over the fleet (every reason).",
				unit: "short",
				queries: [{ expr: `sum(rate(remote_write_samples_dropped_total${c.sel()}[$__rate_interval])) or vector(0)` }],
				thresholds: [[0.001, "red"]],
			}),
		)
		.withRow(c.row("Links"))
		.withPanel(
			c.tablePanel({
				title: `Worst link utilisation per host (top ${K})`,
				description: `The ${K} hosts whose busiest Root Port direction uses the largest share of the link's effective capacity (\`pcie_port_utilization_ratio\`, capacity="effective", through the recording rule \`${R.utilMax}\`).`,
				unit: "percentunit",
				queries: [{ expr: `topk(${K}, max by (instance) (${R.utilMax}${c.sel()}))` }],
				thresholds: [
					[0.7, "orange"],
					[0.9, "red"],
				],
				sortBy: "Value",
				w: 8,
			}),
		)
		.withPanel(
			c.tablePanel({
				title: `Top ${K} saturated ports`,
				description: `Root Ports and directions with the highest \`pcie_port_utilization_ratio\` of effective capacity, over the fleet.`,
				unit: "percentunit",
				queries: [
					{
						expr: `topk(${K}, max by (instance, pmu, port, direction) (pcie_port_utilization_ratio${c.sel('capacity="effective"')}))`,
					},
				],
				thresholds: [
					[0.7, "orange"],
					[0.9, "red"],
				],
				sortBy: "Value",
				w: 16,
			}),
		)
		.withPanel(
			c.tablePanel({
				title: "Downtrained links",
				description:
					`Every downtrained link (\`pcie_link_downtrained\` == 1 at its Root Port or downstream port end, named by \`pcie_device_info\`): bdf is the port. Rows only for links that are wrong (the recording rule \`${R.downtrainedLinks}\`).`,
				unit: "none",
				queries: [{ expr: `${R.downtrainedLinks}${c.sel()}` }],
				thresholds: [[1, "red"]],
				w: 12,
			}),
		)
		.withPanel(
			c.tablePanel({
				title: "Critical MPS/MRRS findings",
				description:
					"Active critical audit findings (`pcie_audit_finding`, severity=\"critical\"): function, finding kind. Rows only for functions that are wrong.",
				unit: "none",
				queries: [{ expr: `pcie_audit_finding${c.sel('severity="critical"')} == 1` }],
				thresholds: [[1, "red"]],
				w: 12,
			}),
		)
		.withRow(c.row("Errors and latency"))
		.withPanel(
			c.tablePanel({
				title: `AER error rate (top ${K})`,
				description: `Hosts and severities with the highest rate of \`pcie_aer_device_errors_total\` (errors per second over 5 minutes, every function of the host: the recording rule \`${R.aerRate}\`).`,
				unit: "short",
				queries: [
					{
						expr: `topk(${K}, ${R.aerRate}${c.sel()})`,
					},
				],
				thresholds: [
					[0.01, "orange"],
					[1, "red"],
				],
				sortBy: "Value",
				w: 12,
			}),
		)
		.withPanel(
			c.tablePanel({
				title: `PTT completion latency p99 (top ${K})`,
				description: `The PTT devices (host and \`pmu\`) with the highest p99 of request-to-last-completion latency from the trace windows of the last 5 minutes: histogram_quantile(0.99) over \`pcie_ptt_completion_latency_seconds_bucket\` per device (the recording rule \`${R.pttP99}\`, which PCIePTTLatencyHigh reads too).`,
				unit: "s",
				queries: [
					{
						expr: `topk(${K}, ${R.pttP99}${c.sel()})`,
					},
				],
				thresholds: [
					[0.00001, "orange"],
					[0.0001, "red"],
				],
				sortBy: "Value",
				w: 12,
			}),
		)
		.withRow(c.row("Collector health"))
		.withPanel(
			c.tablePanel({
				title: `Collector CPU (top ${K})`,
				description: `Hosts whose pcie collector threads use the most CPU: 5-minute rate of \`pcie_collector_cpu_seconds_total\` (1 = one core; the recording rule \`${R.collectorCpu}\`).`,
				unit: "percentunit",
				queries: [{ expr: `topk(${K}, ${R.collectorCpu}${c.sel()})` }],
				thresholds: [
					[0.05, "orange"],
					[0.2, "red"],
				],
				sortBy: "Value",
				w: 8,
			}),
		)
		.withPanel(
			c.tablePanel({
				title: `Lowest PMU coverage (bottom ${K})`,
				description: `Hosts whose worst PCIe PMU counts the smallest share of the time (\`pcie_pmu_coverage_ratio\`, min by instance: the recording rule \`${R.pmuCoverageMin}\`): below 1 the counter plan rotates.`,
				unit: "percentunit",
				queries: [{ expr: `bottomk(${K}, ${R.pmuCoverageMin}${c.sel()})` }],
				thresholds: [],
				w: 8,
			}),
		)
		.withPanel(
			c.tablePanel({
				title: `Failing PTT windows (top ${K})`,
				description: `Hosts with the highest 5-minute rate of PTT trace windows that did not end ok (\`pcie_ptt_windows_total\`, result != "ok": the recording rule \`${R.pttWindowsFailed}\`).`,
				unit: "short",
				queries: [
					{
						expr: `topk(${K}, ${R.pttWindowsFailed}${c.sel()})`,
					},
				],
				thresholds: [[0.01, "orange"]],
				sortBy: "Value",
				w: 8,
			}),
		)
		.withPanel(
			c.tablePanel({
				title: `Oldest successful remote_write send (top ${K})`,
				description: `Seconds since each host's last successful remote_write request (time() - \`remote_write_last_success_timestamp_seconds\`), worst first.`,
				unit: "s",
				queries: [
					{ expr: `topk(${K}, time() - (max by (instance) (remote_write_last_success_timestamp_seconds${c.sel()}) > 0))` },
				],
				thresholds: [
					[120, "orange"],
					[600, "red"],
				],
				sortBy: "Value",
				w: 12,
			}),
		)
		.withPanel(
			c.tablePanel({
				title: `remote_write drops and retries (top ${K})`,
				description: `Hosts with the highest rate of samples dropped (\`remote_write_samples_dropped_total\`) plus retried (\`remote_write_samples_retried_total\`).`,
				unit: "short",
				queries: [
					{
						expr: `topk(${K}, sum by (instance) (rate(remote_write_samples_dropped_total${c.sel()}[$__rate_interval])) + sum by (instance) (rate(remote_write_samples_retried_total${c.sel()}[$__rate_interval])))`,
					},
				],
				thresholds: [[1, "orange"]],
				sortBy: "Value",
				w: 12,
			}),
		)
		.build();
}
