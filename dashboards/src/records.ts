// The recording rules: one series per host (or one per wrong link) that the
// fleet overview reads instead of the raw per-port, per-function series, and
// two that the alerts of pcie.rules.yml read too (the ports with a function
// below them, PTT latency p99 per host and PTT device) so that no alert group
// joins or histograms the largest families itself.
// At 1,000 hosts a raw panel scans 10^4 to 10^5 series at every step of its
// range; the record is 1,000 series (or a handful of rows), evaluated once
// per rule interval as an instant query. generate.ts writes them to
// dashboards/alerts/pcie.records.yml, and the panels name them through the
// constants below, so a panel cannot read a record that is not generated.
//
// Names follow Prometheus' `level:metric:operations` convention; every
// record aggregates with `by (instance, ...)` over the hosts' own series and
// reads raw series only (no record reads another: vmalert writes results
// back through remote write, so a chained record would lag a rule interval;
// an alert reading a record lags one interval too, which its `for:` hides).

export interface RecordRule {
	record: string;
	expr: string;
	why: string; // the comment above the rule in the YAML
	group: string; // the rule group (RecordGroups): what the record reads
}

// The groups, in file order, each with the comment above it. A rule engine
// evaluates groups side by side and the rules of a group in turn: grouping
// the records by the families they read keeps each group's evaluation short
// at fleet scale (docs/scaling.md).
export const RecordGroups: [string, string][] = [
	[
		"pcie.records.topology",
		"Topology: the ports with a function below them, which PCIeLinkDowntrained and PCIeLinkFlapping leave out (one alert per link).",
	],
	["pcie.records.links", "Links: utilisation, trained speed/width, audit findings."],
	["pcie.records.aer", "AER error counters of every function."],
	["pcie.records.collector", "The collector: PTT trace windows, CPU, PMU coverage."],
];

// The end of a link that counts it once: every link has exactly one Root
// Port or switch downstream port above it, and both ends report
// `pcie_link_downtrained`.
const linkPortEnd = `pcie_device_info{port_type=~"root_port|downstream_port"}`;

export const R = {
	utilMax: "instance:pcie_port_utilization_ratio:max",
	downtrainedLinks: "instance_bdf:pcie_link_downtrained:port_end",
	downtrainedCount: "instance:pcie_links_downtrained:count",
	criticalFindings: "instance:pcie_audit_findings_critical:count",
	aerRate: "instance:pcie_aer_device_errors:rate5m",
	pttP99: "instance_pmu:pcie_ptt_completion_latency_seconds:p99_rate5m",
	collectorCpu: "instance:pcie_collector_cpu_seconds:rate5m",
	pmuCoverageMin: "instance:pcie_pmu_coverage_ratio:min",
	pttWindowsFailed: "instance:pcie_ptt_windows_failed:rate5m",
	portsWithFunctionBelow: "instance_bdf:pcie_device_info:ports_with_function_below",
};

export const records: RecordRule[] = [
	{
		record: R.portsWithFunctionBelow,
		expr: `max by (instance, bdf) (${linkPortEnd} and on (instance, bdf) label_replace(max by (instance, parent) (pcie_device_info), "bdf", "$1", "parent", "(.+)"))`,
		why: "Every Root Port or switch downstream port that has a function below it, per host (value 1): the link alerts name the function below a link instead of such a port, so each link alerts once. About 15 series per host: the alerts join it instead of pcie_device_info (one series per function) twice.",
		group: "pcie.records.topology",
	},
	{
		record: R.utilMax,
		expr: `max by (instance, direction) (pcie_port_utilization_ratio{capacity="effective"})`,
		why: "Worst effective utilisation of any port of a host, per direction: the fleet overview's worst-link stat and per-host top-k.",
		group: "pcie.records.links",
	},
	{
		record: R.downtrainedLinks,
		expr: `(pcie_link_downtrained == 1) * on (instance, bdf) group_left (device_name) ${linkPortEnd}`,
		why: "Every downtrained link, once, at its Root Port or switch downstream port end (bdf is the port): the fleet overview's table. Only wrong links have a series.",
		group: "pcie.records.links",
	},
	{
		record: R.downtrainedCount,
		expr: `count by (instance) ((pcie_link_downtrained == 1) and on (instance, bdf) ${linkPortEnd})`,
		why: "Downtrained links per host, one per link (counted at the port end, as above).",
		group: "pcie.records.links",
	},
	{
		record: R.criticalFindings,
		expr: `count by (instance) (pcie_audit_finding{severity="critical"} == 1)`,
		why: "Critical MPS/MRRS findings per host.",
		group: "pcie.records.links",
	},
	{
		record: R.aerRate,
		expr: `sum by (instance, severity) (rate(pcie_aer_device_errors_total[5m]))`,
		why: "AER errors per second per host and severity (every function of the host).",
		group: "pcie.records.aer",
	},
	{
		record: R.pttP99,
		expr: `histogram_quantile(0.99, sum by (instance, pmu, le) (rate(pcie_ptt_completion_latency_seconds_bucket{completion="last"}[5m])))`,
		why: "p99 of request-to-last-completion latency per host and PTT device, from the trace windows of the last 5 minutes: the fleet overview's top-k and PCIePTTLatencyHigh.",
		group: "pcie.records.collector",
	},
	{
		record: R.collectorCpu,
		expr: `sum by (instance) (rate(pcie_collector_cpu_seconds_total[5m]))`,
		why: "CPU of all pcie collector threads of a host (1 = one core).",
		group: "pcie.records.collector",
	},
	{
		record: R.pmuCoverageMin,
		expr: `min by (instance) (pcie_pmu_coverage_ratio)`,
		why: "The worst PCIe PMU coverage of a host.",
		group: "pcie.records.collector",
	},
	{
		record: R.pttWindowsFailed,
		expr: `sum by (instance) (rate(pcie_ptt_windows_total{result!="ok"}[5m]))`,
		why: "PTT trace windows per second that did not end ok (busy, stopped, error), per host.",
		group: "pcie.records.collector",
	},
];

// The rule file, as promtool and vmalert read it. The groups have no
// `interval`: the rule engine's global one applies (Prometheus'
// evaluation_interval, vmalert's -evaluationInterval), as for pcie.rules.yml.
export function recordsYaml(): string {
	const wrap = (text: string, indent: string): string => {
		const out: string[] = [];
		let line = "";
		for (const word of text.split(" ")) {
			if (line && (indent + "# " + line + " " + word).length > 100) {
				out.push(indent + "# " + line);
				line = word;
			} else line = line ? line + " " + word : word;
		}
		if (line) out.push(indent + "# " + line);
		return out.join("\n");
	};
	const head = [
		"# GENERATED by dashboards/src/records.ts (`make dashboards`): do not edit.",
		"# Recording rules for pciescope's PCIe metrics (docs/metrics.md): one series per",
		"# host that the fleet overview dashboard reads instead of the raw per-port and",
		"# per-function series, so that it stays fast at 1,000+ hosts (docs/scaling.md),",
		"# and the two that alerts of pcie.rules.yml read (PCIeLinkDowntrained,",
		"# PCIeLinkFlapping, PCIePTTLatencyHigh need this file). Load it with",
		"# pcie.rules.yml: Prometheus (rule_files), the Mimir/Thanos rulers, or vmalert",
		"# (-rule=...); `promtool check rules` and `vmalert -dryRun` accept it.",
		"groups:",
	];
	const body: string[] = [];
	for (const [name, why] of RecordGroups) {
		const rules = records.filter((r) => r.group === name);
		if (!rules.length) throw new Error(`record group ${name} has no rule`);
		body.push(`${wrap(why, "  ")}\n  - name: ${name}\n    rules:`);
		for (const r of rules)
			body.push(`${wrap(r.why, "      ")}\n      - record: ${r.record}\n        expr: ${yamlScalar(r.expr)}`);
	}
	for (const r of records)
		if (!RecordGroups.some(([name]) => name === r.group))
			throw new Error(`record ${r.record}: no group ${r.group}`);
	return head.join("\n") + "\n" + body.join("\n") + "\n";
}

// A PromQL expression as a YAML scalar: single-quoted (no escapes but '').
function yamlScalar(s: string): string {
	return `'${s.replace(/'/g, "''")}'`;
}
