// Shared pieces of the pciescope dashboards: the variables every dashboard
// has, and small panel factories that make every panel carry a unit, a
// description naming its metrics, thresholds and the `$datasource` variable.
import * as dashboard from "@grafana/grafana-foundation-sdk/dashboard";
import * as common from "@grafana/grafana-foundation-sdk/common";
import * as prometheus from "@grafana/grafana-foundation-sdk/prometheus";
import * as timeseries from "@grafana/grafana-foundation-sdk/timeseries";
import * as stat from "@grafana/grafana-foundation-sdk/stat";
import * as table from "@grafana/grafana-foundation-sdk/table";
import * as heatmap from "@grafana/grafana-foundation-sdk/heatmap";

// Every query goes to the data source the user picks: any Prometheus-type
// data source (Prometheus, Mimir, Thanos, VictoriaMetrics).
export const DS: dashboard.DataSourceRef = { type: "prometheus", uid: "${datasource}" };

// The label selector of a panel: the hosts picked in `$instance` plus more.
export function sel(extra = ""): string {
	return extra ? `{instance=~"$instance",${extra}}` : `{instance=~"$instance"}`;
}

export function datasourceVar(): dashboard.DatasourceVariableBuilder {
	return new dashboard.DatasourceVariableBuilder("datasource").label("Data source").type("prometheus");
}

// A multi-select query variable with "All" as `.*` (a regex of 1,000 host
// names would make every query slow).
export function queryVar(name: string, label: string, query: string): dashboard.QueryVariableBuilder {
	return new dashboard.QueryVariableBuilder(name)
		.label(label)
		.query(query)
		.datasource(DS)
		.multi(true)
		.includeAll(true)
		.allValue(".*")
		.current({ selected: true, text: ["All"], value: ["$__all"] })
		.refresh(dashboard.VariableRefresh.OnTimeRangeChanged)
		.sort(dashboard.VariableSort.NaturalAsc);
}

// `instance` is collectd's Hostname (the remote_write plugin's label).
export function instanceVar(): dashboard.QueryVariableBuilder {
	return queryVar("instance", "Host", "label_values(pcie_functions, instance)");
}

export interface Step {
	value: number | null;
	color: string;
}

// Green below the first step; `steps` are [value, color] pairs upwards.
export function thresholds(...steps: [number, string][]): dashboard.ThresholdsConfigBuilder {
	const all: Step[] = [{ value: null, color: "green" }];
	for (const [value, color] of steps) all.push({ value, color });
	return new dashboard.ThresholdsConfigBuilder().mode(dashboard.ThresholdsMode.Absolute).steps(all);
}

export interface Query {
	expr: string;
	legend?: string;
	instant?: boolean;
	format?: prometheus.PromQueryFormat;
}

function target(q: Query, i: number): prometheus.DataqueryBuilder {
	const t = new prometheus.DataqueryBuilder()
		.expr(q.expr)
		.refId(String.fromCharCode(65 + i))
		.datasource(DS)
		.editorMode(prometheus.QueryEditorMode.Code)
		.legendFormat(q.legend ?? "__auto");
	if (q.instant) t.instant().format(prometheus.PromQueryFormat.Table);
	else t.range();
	if (q.format) t.format(q.format);
	return t;
}

// What every panel has: title, description, unit, thresholds, queries.
export interface PanelSpec {
	title: string;
	description: string;
	unit: string;
	queries: Query[];
	thresholds?: [number, string][];
	w?: number;
	h?: number;
	min?: number;
	max?: number;
	decimals?: number;
}

type AnyPanel = timeseries.PanelBuilder | stat.PanelBuilder | table.PanelBuilder | heatmap.PanelBuilder;

function base<P extends AnyPanel>(p: P, s: PanelSpec): P {
	p.title(s.title)
		.description(s.description)
		.datasource(DS)
		.unit(s.unit)
		.thresholds(thresholds(...(s.thresholds ?? [])))
		.span(s.w ?? 12)
		.height(s.h ?? 8);
	if (s.min !== undefined) p.min(s.min);
	if (s.max !== undefined) p.max(s.max);
	if (s.decimals !== undefined) p.decimals(s.decimals);
	s.queries.forEach((q, i) => p.withTarget(target(q, i)));
	return p;
}

export function timeSeries(s: PanelSpec & { stack?: boolean }): timeseries.PanelBuilder {
	const p = base(new timeseries.PanelBuilder(), s)
		.lineWidth(1)
		.fillOpacity(s.stack ? 30 : 5)
		.showPoints(common.VisibilityMode.Never)
		.legend(
			new common.VizLegendOptionsBuilder()
				.showLegend(true)
				.displayMode(common.LegendDisplayMode.Table)
				.placement(common.LegendPlacement.Right)
				.calcs(["lastNotNull", "max"])
				.sortBy("Max")
				.sortDesc(true),
		);
	if (s.thresholds && s.thresholds.length > 0)
		p.thresholdsStyle(new common.GraphThresholdsStyleConfigBuilder().mode(common.GraphThresholdsStyleMode.Dashed));
	if (s.stack) p.stacking(new common.StackingConfigBuilder().mode(common.StackingMode.Normal));
	return p;
}

export function statPanel(s: PanelSpec): stat.PanelBuilder {
	return base(new stat.PanelBuilder(), { w: 4, h: 4, ...s })
		.colorMode(common.BigValueColorMode.Background)
		.graphMode(common.BigValueGraphMode.None)
		.reduceOptions(new common.ReduceDataOptionsBuilder().calcs(["lastNotNull"]).values(false));
}

// Instant queries as a table: one row per series, the labels as columns;
// several queries are merged on their common labels.
export function tablePanel(
	s: PanelSpec & {
		sortBy?: string;
		hide?: string[];
		rename?: Record<string, string>;
		// thresholds of single columns (by the query's column name, "Value #E")
		columnThresholds?: Record<string, [number, string][]>;
	},
): table.PanelBuilder {
	const qs = s.queries.map((q) => ({ ...q, instant: true, legend: q.legend ?? "" }));
	const p = base(new table.PanelBuilder(), { ...s, queries: qs })
		.cellOptions({ type: common.TableCellDisplayMode.ColorText })
		.filterable(true);
	if (qs.length > 1) p.withTransformation({ id: "merge", options: {} });
	const exclude: Record<string, boolean> = { Time: true };
	for (const h of s.hide ?? []) exclude[h] = true;
	p.withTransformation({ id: "organize", options: { excludeByName: exclude, renameByName: s.rename ?? {} } });
	for (const [col, steps] of Object.entries(s.columnThresholds ?? {}))
		// by the name the table shows (after the organize rename)
		p.overrideByName(s.rename?.[col] ?? col, [{ id: "thresholds", value: thresholds(...steps).build() }]);
	if (s.sortBy) p.sortBy([new common.TableSortByFieldStateBuilder().displayName(s.sortBy).desc(true)]);
	return p;
}

// The buckets of a classic histogram as a heatmap (no re-bucketing).
export function heatmapPanel(s: PanelSpec): heatmap.PanelBuilder {
	const qs = s.queries.map((q) => ({ ...q, format: prometheus.PromQueryFormat.Heatmap, legend: "{{le}}" }));
	return base(new heatmap.PanelBuilder(), { ...s, queries: qs })
		.calculate(false)
		.yAxis(new heatmap.YAxisConfigBuilder().unit(s.unit))
		.rowsFrame(new heatmap.RowsHeatmapOptionsBuilder().layout(common.HeatmapCellLayout.Le))
		.color(
			new heatmap.HeatmapColorOptionsBuilder()
				.mode(heatmap.HeatmapColorMode.Scheme)
				.scheme("Oranges")
				.scale(heatmap.HeatmapColorScale.Exponential)
				.exponent(0.5)
				.steps(64)
				.fill("dark-orange")
				.reverse(false),
		)
		.cellGap(1);
}

export function row(title: string): dashboard.RowBuilder {
	return new dashboard.RowBuilder(title);
}

// The frame of every dashboard: tags, time, refresh, datasource + instance.
export function board(uid: string, title: string, description: string): dashboard.DashboardBuilder {
	return new dashboard.DashboardBuilder(title)
		.uid(uid)
		.description(description)
		.tags(["pciescope", "pcie"])
		.editable()
		.tooltip(dashboard.DashboardCursorSync.Crosshair)
		.refresh("1m")
		.time({ from: "now-1h", to: "now" })
		.timezone("browser")
		.withVariable(datasourceVar())
		.withVariable(instanceVar());
}
