// PCIe host: one or a few hosts in detail. Root Port bandwidth and
// utilisation (Kunpeng hisi_pcie PMU; Intel IIO where the stack is mapped),
// latency, TLP length mix, busiest endpoints, the link state, the MPS/MRRS
// audit and AER per device.
import * as c from "./common";

const port = 'pmu=~"$pmu",port=~"$port"';

export function host() {
	return c
		.board(
			"pciescope-host",
			"PCIe host",
			"pciescope: one host's PCIe bandwidth, utilisation, latency, links, MPS/MRRS audit and AER. Pick hosts with the Host variable.",
		)
		.withVariable(c.queryVar("pmu", "PMU", `label_values(pcie_port_bandwidth_bytes_per_second${c.sel()}, pmu)`))
		.withVariable(
			c.queryVar("port", "Root Port", `label_values(pcie_port_bandwidth_bytes_per_second${c.sel('pmu=~"$pmu"')}, port)`),
		)
		.withRow(c.row("Root Port traffic"))
		.withPanel(
			c.timeSeries({
				title: "Bandwidth per Root Port (rx/tx by TLP type)",
				description:
					"`pcie_port_bandwidth_bytes_per_second` per Root Port, direction (rx: towards the host) and TLP type (mwr, mrd, cpl; `all` on Intel IIO).",
				unit: "Bps",
				queries: [
					{
						expr: `sum by (instance, port, direction, tlp) (pcie_port_bandwidth_bytes_per_second${c.sel(port)})`,
						legend: "{{instance}} {{port}} {{direction}} {{tlp}}",
					},
				],
				stack: true,
				w: 24,
			}),
		)
		.withPanel(
			c.timeSeries({
				title: "Utilisation of raw and effective capacity",
				description:
					"`pcie_port_utilization_ratio`: a direction's bandwidth over the link's raw capacity (speed × width after encoding) and effective capacity (raw × MPS/(MPS+24)).",
				unit: "percentunit",
				queries: [
					{
						expr: `max by (instance, port, direction, capacity) (pcie_port_utilization_ratio${c.sel(port)})`,
						legend: "{{instance}} {{port}} {{direction}} {{capacity}}",
					},
				],
				thresholds: [
					[0.7, "orange"],
					[0.9, "red"],
				],
				min: 0,
				max: 1,
			}),
		)
		.withPanel(
			c.timeSeries({
				title: "Latency per class",
				description:
					"`pcie_port_latency_seconds`: mean latency of the Root Port's rx_mwr, rx_mrd and tx_mrd transactions (hisi_pcie PMU).",
				unit: "s",
				queries: [
					{
						expr: `max by (instance, port, event) (pcie_port_latency_seconds${c.sel(port)})`,
						legend: "{{instance}} {{port}} {{event}}",
					},
				],
				thresholds: [
					[0.000002, "orange"],
					[0.00001, "red"],
				],
			}),
		)
		.withPanel(
			c.timeSeries({
				title: "TLP length mix (DMA writes)",
				description:
					"`pcie_port_tlp_length_bytes_per_second`: rx_mwr bandwidth carried by TLPs shorter than 64/128/256/512 bytes (cumulative buckets). Much traffic in short TLPs wastes the link.",
				unit: "Bps",
				queries: [
					{
						expr: `sum by (instance, port, shorter_than_bytes) (pcie_port_tlp_length_bytes_per_second${c.sel(port)})`,
						legend: "{{instance}} {{port}} < {{shorter_than_bytes}} B",
					},
				],
			}),
		)
		.withPanel(
			c.tablePanel({
				title: "Busiest endpoints",
				description:
					"`pcie_device_bandwidth_bytes_per_second` of the endpoints the PMU measures (the `TopTalkers` busiest per core): DMA writes (rx) and the data returned for their DMA reads.",
				unit: "Bps",
				queries: [
					{
						expr: `topk(20, sum by (instance, device, port, direction) (pcie_device_bandwidth_bytes_per_second${c.sel(port)}))`,
					},
				],
				sortBy: "Value",
			}),
		)
		.withRow(c.row("Links"))
		.withPanel(
			c.tablePanel({
				title: "Link state (port → endpoint)",
				description:
					"Per function with a link: `pcie_link_speed_transfers_per_second` and `pcie_link_width_lanes` (current and max), `pcie_link_downtrained`, `pcie_link_changes_total` since the plugin started, and the function's parent port and name from `pcie_device_info`.",
				unit: "none",
				queries: [
					{ expr: `max by (instance, bdf) (pcie_link_speed_transfers_per_second${c.sel('state="current"')}) / 1e9` },
					{ expr: `max by (instance, bdf) (pcie_link_speed_transfers_per_second${c.sel('state="max"')}) / 1e9` },
					{ expr: `max by (instance, bdf) (pcie_link_width_lanes${c.sel('state="current"')})` },
					{ expr: `max by (instance, bdf) (pcie_link_width_lanes${c.sel('state="max"')})` },
					{ expr: `max by (instance, bdf) (pcie_link_downtrained${c.sel()})` },
					{ expr: `max by (instance, bdf) (pcie_link_changes_total${c.sel()})` },
					{
						expr: `max by (instance, bdf, parent, port_type, device_name) (pcie_device_info${c.sel()}) and on (instance, bdf) pcie_link_up`,
					},
				],
				columnThresholds: { "Value #E": [[1, "red"]], "Value #F": [[1, "orange"]] },
				hide: ["Value #G"],
				rename: {
					"Value #A": "speed GT/s",
					"Value #B": "max GT/s",
					"Value #C": "width",
					"Value #D": "max width",
					"Value #E": "downtrained",
					"Value #F": "changes",
				},
				w: 24,
				h: 10,
			}),
		)
		.withRow(c.row("MPS / MRRS audit"))
		.withPanel(
			c.tablePanel({
				title: "Audit findings",
				description:
					"Active findings (`pcie_audit_finding`): MPS above the link partner or the device's support (critical), MPS below the path, MRRS small or below MPS (warning), MRRS above MPS (info).",
				unit: "none",
				queries: [{ expr: `pcie_audit_finding${c.sel()} == 1` }],
				thresholds: [[1, "orange"]],
				w: 12,
			}),
		)
		.withPanel(
			c.tablePanel({
				title: "Findings per severity",
				description: "`pcie_audit_findings` summed per host and severity (the same at every Detail level).",
				unit: "none",
				queries: [{ expr: `sum by (instance, severity) (pcie_audit_findings${c.sel()})` }],
				thresholds: [[1, "orange"]],
				w: 12,
			}),
		)
		.withPanel(
			c.tablePanel({
				title: "MPS and MRRS per function",
				description:
					"Configured Max Payload Size (`pcie_max_payload_size_bytes`, setting=\"configured\") and Max Read Request Size (`pcie_max_read_request_size_bytes`) of every PCIe function.",
				unit: "bytes",
				queries: [
					{ expr: `max by (instance, bdf) (pcie_max_payload_size_bytes${c.sel('setting="configured"')})` },
					{ expr: `max by (instance, bdf) (pcie_max_read_request_size_bytes${c.sel()})` },
				],
				rename: { "Value #A": "MPS", "Value #B": "MRRS" },
				w: 12,
			}),
		)
		.withPanel(
			c.tablePanel({
				title: "What each kernel policy would set",
				description:
					"`pcie_policy_max_payload_size_bytes`: the MPS the kernel would set under each pcie_bus_config policy, for the functions where it differs from the configured MPS (`pcie_mps_policy_info` says which policy runs).",
				unit: "bytes",
				queries: [{ expr: `max by (instance, bdf, policy) (pcie_policy_max_payload_size_bytes${c.sel()})` }],
				w: 12,
			}),
		)
		.withRow(c.row("AER"))
		.withPanel(
			c.timeSeries({
				title: "AER errors per device",
				description: "Rate of `pcie_aer_device_errors_total` per function and severity (correctable, nonfatal, fatal).",
				unit: "short",
				queries: [
					{
						expr: `sum by (instance, bdf, severity) (rate(pcie_aer_device_errors_total${c.sel()}[$__rate_interval]))`,
						legend: "{{instance}} {{bdf}} {{severity}}",
					},
				],
				thresholds: [[1, "red"]],
			}),
		)
		.withPanel(
			c.tablePanel({
				title: "AER errors by type",
				description:
					"Increase of `pcie_aer_errors_total` per function, severity and error type over the dashboard's time range (types appear when they first count).",
				unit: "short",
				queries: [{ expr: `sum by (instance, bdf, severity, error) (increase(pcie_aer_errors_total${c.sel()}[$__range]))` }],
				thresholds: [[1, "orange"]],
				sortBy: "Value",
			}),
		)
		.build();
}
