// PTT traces: what the HiSilicon PCIe Tune and Trace windows saw. TLP mix,
// top requesters, the completion latency histogram (heatmap of its buckets
// and p50/p90/p99 by histogram_quantile) and the health of the windows.
import * as c from "./common";

const dev = 'pmu=~"$pmu"';
const bucket = `pcie_ptt_completion_latency_seconds_bucket${c.sel(`${dev},completion="last"`)}`;

function quantile(q: string) {
	return {
		expr: `histogram_quantile(${q}, sum by (instance, le) (rate(${bucket}[$__rate_interval])))`,
		legend: `{{instance}} p${Math.round(parseFloat(q) * 100)}`,
	};
}

export function ptt() {
	return c
		.board(
			"pciescope-ptt",
			"PTT traces",
			"pciescope: HiSilicon PTT trace windows (Kunpeng 930): TLP mix, requesters, completion latency, window health. Latency ticks are divided by TraceClock.",
		)
		.withVariable(c.queryVar("sicl", "SICL", `label_values(pcie_pmu_info${c.sel()}, sicl)`))
		.withVariable(
			c.queryVar("pmu", "PTT device", `label_values(pcie_ptt_windows_total{instance=~"$instance",pmu=~"hisi_ptt($sicl)_.*"}, pmu)`),
		)
		.withRow(c.row("Traffic"))
		.withPanel(
			c.timeSeries({
				title: "TLP mix by direction and kind",
				description: "Rate of `pcie_ptt_tlps_total` per direction (inbound, outbound, unknown) and TLP kind, over the trace windows.",
				unit: "suffix:TLP/s",
				queries: [
					{
						expr: `sum by (direction, kind) (rate(pcie_ptt_tlps_total${c.sel(dev)}[$__rate_interval]))`,
						legend: "{{direction}} {{kind}}",
					},
				],
				stack: true,
			}),
		)
		.withPanel(
			c.timeSeries({
				title: "Payload by direction and kind",
				description: "Rate of `pcie_ptt_payload_bytes_total` (Length × 4 of TLPs with data) per direction and kind.",
				unit: "Bps",
				queries: [
					{
						expr: `sum by (direction, kind) (rate(pcie_ptt_payload_bytes_total${c.sel(dev)}[$__rate_interval]))`,
						legend: "{{direction}} {{kind}}",
					},
				],
				stack: true,
			}),
		)
		.withPanel(
			c.tablePanel({
				title: "Top requesters",
				description:
					"Requesters with the most TLPs per second (`pcie_ptt_requester_tlps_total`; `other` sums those past TraceTopRequesters).",
				unit: "suffix:TLP/s",
				queries: [
					{
						expr: `topk(15, sum by (instance, requester, direction) (rate(pcie_ptt_requester_tlps_total${c.sel(dev)}[$__rate_interval])))`,
					},
				],
				sortBy: "Value",
				w: 24,
			}),
		)
		.withRow(c.row("Completion latency"))
		.withPanel(
			c.heatmapPanel({
				title: "Completion latency (histogram buckets)",
				description:
					"Rate of each `pcie_ptt_completion_latency_seconds_bucket` (completion=\"last\": request to the completion that ends it) as a heatmap, bucket by bucket.",
				unit: "s",
				queries: [{ expr: `sum by (le) (rate(${bucket}[$__rate_interval]))` }],
			}),
		)
		.withPanel(
			c.timeSeries({
				title: "Completion latency p50 / p90 / p99",
				description:
					"histogram_quantile over `pcie_ptt_completion_latency_seconds_bucket` (completion=\"last\"); the threshold that matters depends on TraceClock (a tick is 10 ns at 100 MHz).",
				unit: "s",
				queries: [quantile("0.5"), quantile("0.9"), quantile("0.99")],
				thresholds: [
					[0.00001, "orange"],
					[0.0001, "red"],
				],
			}),
		)
		.withPanel(
			c.timeSeries({
				title: "Latency quantiles of the last window (plugin)",
				description:
					"`pcie_ptt_completion_latency_quantile_seconds` (completion=\"last\"): the plugin's nearest-rank p50/p90/p99 of the last window with matches, per device.",
				unit: "s",
				queries: [
					{
						expr: `pcie_ptt_completion_latency_quantile_seconds${c.sel(`${dev},completion="last"`)}`,
						legend: "{{instance}} {{pmu}} p{{percentile}}",
					},
				],
				thresholds: [
					[0.00001, "orange"],
					[0.0001, "red"],
				],
			}),
		)
		.withPanel(
			c.timeSeries({
				title: "Unmatched and tag reuse",
				description:
					"Rate of `pcie_ptt_unmatched_total` (requests never completed within the window, completions without a request) and `pcie_ptt_tag_reuse_total`.",
				unit: "suffix:TLP/s",
				queries: [
					{
						expr: `sum by (instance, side) (rate(pcie_ptt_unmatched_total${c.sel(dev)}[$__rate_interval]))`,
						legend: "{{instance}} unmatched {{side}}",
					},
					{
						expr: `sum by (instance) (rate(pcie_ptt_tag_reuse_total${c.sel(dev)}[$__rate_interval]))`,
						legend: "{{instance}} tag reuse",
					},
				],
			}),
		)
		.withRow(c.row("Windows"))
		.withPanel(
			c.timeSeries({
				title: "Window results",
				description:
					"Rate of `pcie_ptt_windows_total` per result: ok, busy (another perf user), no_budget (MaxConcurrentTraces), stopped (silent driver stop), error.",
				unit: "suffix:windows/s",
				queries: [
					{
						expr: `sum by (result) (rate(pcie_ptt_windows_total${c.sel(dev)}[$__rate_interval]))`,
						legend: "{{result}}",
					},
				],
				stack: true,
			}),
		)
		.withPanel(
			c.timeSeries({
				title: "Restarts, truncation, malformed entries",
				description:
					"Rates of `pcie_ptt_restarts_total` (restarted after a silent stop), `pcie_ptt_truncated_total` (AUX records flagged TRUNCATED) and `pcie_ptt_malformed_total` (entries that did not decode).",
				unit: "short",
				queries: [
					{ expr: `sum by (instance) (rate(pcie_ptt_restarts_total${c.sel(dev)}[$__rate_interval]))`, legend: "{{instance}} restarts" },
					{ expr: `sum by (instance) (rate(pcie_ptt_truncated_total${c.sel(dev)}[$__rate_interval]))`, legend: "{{instance}} truncated" },
					{ expr: `sum by (instance) (rate(pcie_ptt_malformed_total${c.sel(dev)}[$__rate_interval]))`, legend: "{{instance}} malformed" },
				],
				thresholds: [[0.1, "orange"]],
			}),
		)
		.withPanel(
			c.timeSeries({
				title: "Trace volume",
				description: "Rate of `pcie_ptt_trace_bytes_total`: AUX bytes the windows read.",
				unit: "Bps",
				queries: [
					{ expr: `sum by (instance) (rate(pcie_ptt_trace_bytes_total${c.sel(dev)}[$__rate_interval]))`, legend: "{{instance}} bytes/s" },
				],
				w: 24,
			}),
		)
		.build();
}
