// Intel IIO: inbound PCIe bandwidth per socket, IIO stack and part from the
// uncore IIO free-running counters, utilisation where a stack is mapped to
// its Root Ports (IIOStackBus, kernel die files or the uncore's CPU bus
// registers), and the PMON discovery inventory.
import * as c from "./common";

const stacks = 'pmu=~"uncore_iio.*",socket=~"$socket",stack=~"$stack"';
const iio = `tlp="all",${stacks}`;

export function intelIio() {
	return c
		.board(
			"pciescope-intel-iio",
			"Intel IIO",
			"pciescope: Intel uncore IIO bandwidth per socket/stack/part, utilisation on mapped stacks, PMON discovery inventory.",
		)
		.withVariable(c.queryVar("socket", "Socket", `label_values(pcie_iio_stack_info${c.sel()}, socket)`))
		.withVariable(c.queryVar("stack", "IIO stack", `label_values(pcie_iio_stack_info{instance=~"$instance",socket=~"$socket"}, stack)`))
		.withRow(c.row("Bandwidth"))
		.withPanel(
			c.timeSeries({
				title: "Inbound bandwidth per socket",
				description: "`pcie_port_bandwidth_bytes_per_second` (tlp=\"all\": IIO bw_in) summed per socket.",
				unit: "Bps",
				queries: [
					{ expr: `sum by (instance, socket) (pcie_port_bandwidth_bytes_per_second${c.sel(iio)})`, legend: "{{instance}} socket {{socket}}" },
				],
				stack: true,
			}),
		)
		.withPanel(
			c.timeSeries({
				title: "Inbound bandwidth per stack and part",
				description:
					"`pcie_port_bandwidth_bytes_per_second` (tlp=\"all\") per socket, IIO stack and part; `port` names the Root Port on mapped stacks.",
				unit: "Bps",
				queries: [
					{
						expr: `sum by (instance, socket, stack, part, port) (pcie_port_bandwidth_bytes_per_second${c.sel(iio)})`,
						legend: "{{instance}} s{{socket}} stack {{stack}} part {{part}} {{port}}",
					},
				],
			}),
		)
		.withPanel(
			c.timeSeries({
				title: "Outbound bandwidth estimate",
				description:
					"`pcie_iio_bw_out_estimate_bytes_per_second` per stack and part: only kernels before 6.15 offer bw_out, and its step depends on the request size (an estimate).",
				unit: "Bps",
				queries: [
					{
						expr: `sum by (instance, socket, stack, part) (pcie_iio_bw_out_estimate_bytes_per_second${c.sel(stacks)})`,
						legend: "{{instance}} s{{socket}} stack {{stack}} part {{part}}",
					},
				],
			}),
		)
		.withPanel(
			c.timeSeries({
				title: "Utilisation (mapped stacks)",
				description:
					"`pcie_port_utilization_ratio` of the Root Ports of mapped IIO stacks (raw and effective capacity). IIOStackBus, the kernel's die files or, on Sapphire Rapids and later, the uncore's CPU bus registers map a stack; an unmapped stack has none.",
				unit: "percentunit",
				queries: [
					{
						expr: `max by (instance, socket, stack, port, capacity) (pcie_port_utilization_ratio${c.sel(stacks)})`,
						legend: "{{instance}} s{{socket}} stack {{stack}} {{port}} {{capacity}}",
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
		.withRow(c.row("Inventory"))
		.withPanel(
			c.tablePanel({
				title: "IIO stacks",
				description:
					"`pcie_iio_stack_info`: each IIO stack's PMU, root bus, how it is mapped (kernel, config, unmapped), bytes per count and whether the scale was corrected.",
				unit: "none",
				queries: [{ expr: `pcie_iio_stack_info${c.sel(stacks)}` }],
				hide: ["__name__", "Value"],
				w: 24,
			}),
		)
		.withPanel(
			c.tablePanel({
				title: "PMON discovery",
				description:
					"`pcie_uncore_discovery_info`: the PMON discovery tables (platform, BAR, valid/invalid/skipped units, truncation).",
				unit: "none",
				queries: [{ expr: `pcie_uncore_discovery_info${c.sel()}` }],
				hide: ["__name__", "Value"],
			}),
		)
		.withPanel(
			c.tablePanel({
				title: "Uncore units by type",
				description: "`pcie_uncore_units`: valid unit entries of the discovery table per unit type and access method.",
				unit: "none",
				queries: [{ expr: `sum by (instance, type, access) (pcie_uncore_units${c.sel()})` }],
				sortBy: "Value",
			}),
		)
		.withPanel(
			c.timeSeries({
				title: "IIO collector CPU",
				description: "Rate of `pcie_collector_cpu_seconds_total` of the IIO collector threads (one per socket; 1 = one core).",
				unit: "percentunit",
				queries: [
					{
						expr: `sum by (instance, socket) (rate(pcie_collector_cpu_seconds_total${c.sel('pmu="uncore_iio_free_running"')}[$__rate_interval]))`,
						legend: "{{instance}} socket {{socket}}",
					},
				],
				thresholds: [[0.05, "orange"]],
				w: 24,
			}),
		)
		.build();
}
