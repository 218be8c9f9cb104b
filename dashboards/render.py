"""render.py - draw every dashboard of dashboards/grafana/ from a live
Prometheus into one PNG per dashboard, without Grafana (matplotlib, from
Debian's python3-matplotlib).

    python3 render.py BOARDS_DIR PROMETHEUS_URL START END OUT_DIR

Each panel sits where its gridPos puts it on Grafana's 24-column grid: time
series as lines (query_range), stats as big numbers coloured by their
thresholds, tables as text (instant queries, merged on their common labels
like Grafana's "merge" transformation), heatmaps as an image of the
histogram buckets. Template variables are "All": $instance and the others
match everything, $__rate_interval is a quarter of the range (at most 1m).
`make pictures` runs it on the simulated fleet (tests/integration/
dashboards_live.sh with DASHBOARDS_PICTURES).
"""
import json
import math
import os
import re
import sys
import urllib.error
import urllib.parse
import urllib.request

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.gridspec import GridSpec  # noqa: E402

COLORS = {"green": "#56a64b", "orange": "#ff9830", "red": "#e02f44", "yellow": "#fade2a"}


def get(url):
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return json.load(r)
    except urllib.error.HTTPError as e:
        raise RuntimeError("HTTP %d: %s" % (e.code, e.read()[:200].decode("utf-8", "replace"))) from None


class Prom:
    def __init__(self, url, start, end):
        self.url, self.start, self.end = url, float(start), float(end)
        span = self.end - self.start
        self.step = max(1.0, span / 150)
        self.rate = "%ds" % max(10, min(60, int(span / 4)))
        self.range = "%ds" % max(10, int(span))

    def subst(self, e):
        e = e.replace("$__rate_interval", self.rate).replace("$__interval", "%ds" % self.step)
        e = e.replace("$__range", self.range)
        return re.sub(r"\$\{?(\w+)\}?", ".*", e)

    def instant(self, expr):
        qs = urllib.parse.urlencode({"query": self.subst(expr), "time": "%.3f" % self.end})
        d = get("%s/api/v1/query?%s" % (self.url, qs))["data"]
        if d["resultType"] == "scalar":
            return [({}, float(d["result"][1]))]
        return [(r["metric"], float(r["value"][1])) for r in d["result"]]

    def series(self, expr):
        qs = urllib.parse.urlencode({"query": self.subst(expr), "start": "%.3f" % self.start,
                                     "end": "%.3f" % self.end, "step": "%.3f" % self.step})
        d = get("%s/api/v1/query_range?%s" % (self.url, qs))["data"]
        return [(r["metric"], [(float(t), float(v)) for t, v in r["values"]]) for r in d["result"]]


def fmt(v, unit):
    """A value the way Grafana's unit would show it (roughly)."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "NaN"
    if unit == "percentunit":
        return ("%.1f%%" if abs(v) >= 0.01 or v == 0 else "%.2g%%") % (100 * v)
    if unit in ("Bps", "bytes"):
        suffix = "/s" if unit == "Bps" else ""
        for div, p in ((1e9, "GB"), (1e6, "MB"), (1e3, "kB")):
            if abs(v) >= div:
                return "%.3g %s%s" % (v / div, p, suffix)
        return "%.3g B%s" % (v, suffix)
    if unit == "s":
        for mul, p in ((1, "s"), (1e3, "ms"), (1e6, "µs"), (1e9, "ns")):
            if abs(v) * mul >= 1 or p == "ns":
                return "%.3g %s" % (v * mul, p)
    if unit.startswith("suffix:"):
        return "%.3g %s" % (v, unit[7:])
    if v == int(v) and abs(v) < 1e6:
        return "%d" % v
    return "%.3g" % v


def column_config(p, *names):
    """The panel's field defaults with the overrides of one column (byName,
    by its query name or the name the organize transformation gives it)."""
    fc = dict(p["fieldConfig"]["defaults"])
    for o in p["fieldConfig"].get("overrides", []):
        if o["matcher"].get("id") == "byName" and o["matcher"].get("options") in names:
            for prop in o["properties"]:
                fc[prop["id"]] = prop["value"]
    return fc


def color_for(v, fc):
    c = "green"
    for s in fc.get("thresholds", {}).get("steps", []):
        if s["value"] is None or (v is not None and not math.isnan(v) and v >= s["value"]):
            c = s["color"]
    return COLORS.get(c, c)


def legend(fmt_, metric):
    if not fmt_ or fmt_ == "__auto":
        return ",".join("%s=%s" % kv for kv in sorted(metric.items()) if kv[0] != "__name__") or "value"
    return re.sub(r"\{\{\s*(\w+)\s*\}\}", lambda m: metric.get(m.group(1), ""), fmt_).strip()


def draw_timeseries(ax, p, prom):
    unit = p["fieldConfig"]["defaults"].get("unit", "")
    lines = []
    for t in p["targets"]:
        for m, vals in prom.series(t["expr"]):
            vals = [(x, y) for x, y in vals if not math.isnan(y)]
            if vals:
                lines.append((max(y for _, y in vals), legend(t.get("legendFormat"), m), vals))
    lines.sort(key=lambda x: -x[0])
    for i, (_, name, vals) in enumerate(lines):
        xs = [(x - prom.end) for x, _ in vals]
        ax.plot(xs, [y for _, y in vals], lw=1, label=name if i < 8 else None)
    if not lines:
        ax.text(0.5, 0.5, "No data", ha="center", va="center", transform=ax.transAxes, color="grey")
    ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: fmt(v, unit)))
    ax.set_xlabel("seconds before the end", fontsize=6)
    ax.tick_params(labelsize=6)
    ax.grid(alpha=0.3)
    if lines:
        more = " (+%d more)" % (len(lines) - 8) if len(lines) > 8 else ""
        ax.legend(fontsize=5, loc="upper left", title="%d series%s" % (len(lines), more), title_fontsize=5,
                  framealpha=0.6)


def draw_stat(ax, p, prom):
    fc = p["fieldConfig"]["defaults"]
    res = prom.instant(p["targets"][0]["expr"])
    v = res[0][1] if res else None
    ax.set_facecolor(color_for(v, fc) if v is not None else "#cccccc")
    ax.text(0.5, 0.45, fmt(v, fc.get("unit", "")) if v is not None else "No data", ha="center", va="center",
            fontsize=22, color="white", weight="bold", transform=ax.transAxes)
    ax.set_xticks([])
    ax.set_yticks([])


def table_rows(p, prom):
    hidden = set()
    rename = {}
    for tr in p.get("transformations", []):
        if tr["id"] == "organize":
            hidden |= {k for k, v in tr["options"].get("excludeByName", {}).items() if v}
            rename = tr["options"].get("renameByName", {})
    rows = {}
    cols = []
    multi = len(p["targets"]) > 1
    for t in p["targets"]:
        vcol = "Value #%s" % t["refId"] if multi else "Value"
        for m, v in prom.instant(t["expr"]):
            m = {k: x for k, x in m.items() if k != "__name__"}
            key = tuple(sorted(m.items()))
            # merge: rows with the same labels (a subset of another row's
            # labels joins that row, as Grafana's merge does for tables)
            target = None
            for k in rows:
                if set(key) <= set(k) or set(k) <= set(key):
                    target = k
                    break
            if target is None:
                rows[key] = dict(m)
                target = key
            elif len(key) > len(target):
                rows[key] = {**rows.pop(target), **m}
                target = key
            rows[target][vcol] = v
            for c in list(m) + [vcol]:
                if c not in cols:
                    cols.append(c)
    cols = [c for c in cols if c not in hidden and c != "Time"]
    vals = sorted(rows.values(), key=lambda r: -max([r[c] for c in r if c.startswith("Value")] or [0]))
    return cols, vals, rename


def draw_table(ax, p, prom):
    fc = p["fieldConfig"]["defaults"]
    unit = fc.get("unit", "")
    cols, rows, rename = table_rows(p, prom)
    ax.axis("off")
    if not rows:
        ax.text(0.5, 0.5, "No data", ha="center", va="center", transform=ax.transAxes, color="grey")
        return
    maxrows = 14
    cells, colors = [], []
    for r in rows[:maxrows]:
        line, cl = [], []
        for c in cols:
            v = r.get(c, "")
            if c.startswith("Value"):
                line.append(fmt(v, unit) if isinstance(v, float) else "")
                cl.append(color_for(v, column_config(p, c, rename.get(c))) if isinstance(v, float) else "white")
            else:
                line.append(str(v)[:28])
                cl.append("white")
        cells.append(line)
        colors.append(cl)
    tb = ax.table(cellText=cells, colLabels=[rename.get(c, c) for c in cols], loc="upper center",
                  cellLoc="left", colLoc="left")
    tb.auto_set_font_size(False)
    tb.set_fontsize(5.5)
    tb.scale(1, 0.9)
    for (i, j), cell in tb.get_celld().items():
        cell.set_linewidth(0.2)
        if i == 0:
            cell.set_facecolor("#e8e8e8")
        elif cols[j].startswith("Value") and colors[i - 1][j] != "white":
            cell.get_text().set_color(colors[i - 1][j])
            cell.get_text().set_weight("bold")
    if len(rows) > maxrows:
        ax.text(1, 0, "%d more rows" % (len(rows) - maxrows), ha="right", va="bottom", fontsize=6,
                transform=ax.transAxes, color="grey")


def draw_heatmap(ax, p, prom):
    res = prom.series(p["targets"][0]["expr"])
    buckets = sorted(((float(m["le"]), vals) for m, vals in res if "le" in m), key=lambda x: x[0])
    if not buckets:
        ax.text(0.5, 0.5, "No data", ha="center", va="center", transform=ax.transAxes, color="grey")
        return
    times = sorted({t for _, vals in buckets for t, _ in vals})
    idx = {t: i for i, t in enumerate(times)}
    cum = [[0.0] * len(times) for _ in buckets]
    for b, (_, vals) in enumerate(buckets):
        for t, v in vals:
            cum[b][idx[t]] = 0.0 if math.isnan(v) else v
    # the buckets are cumulative: each cell is its bucket minus the one below
    cells = [[cum[b][i] - (cum[b - 1][i] if b else 0.0) for i in range(len(times))] for b in range(len(buckets))]
    rows = [i for i, r in enumerate(cells) if any(x > 0 for x in r)]
    lo, hi = (min(rows), max(rows)) if rows else (0, len(cells) - 1)
    cells = cells[lo:hi + 1]
    labels = [fmt(le, "s") if not math.isinf(le) else "+Inf" for le, _ in buckets[lo:hi + 1]]
    ax.imshow(cells, aspect="auto", origin="lower", cmap="Oranges", interpolation="nearest",
              extent=(times[0] - prom.end, times[-1] - prom.end, -0.5, len(cells) - 0.5))
    ax.set_yticks(range(len(labels)))
    ax.set_yticklabels(["≤ " + x for x in labels], fontsize=5)
    ax.set_xlabel("seconds before the end", fontsize=6)
    ax.tick_params(labelsize=6)


DRAW = {"timeseries": draw_timeseries, "stat": draw_stat, "table": draw_table, "heatmap": draw_heatmap}


def render(board, prom, out):
    items = board["panels"]
    height = max(p["gridPos"]["y"] + p["gridPos"]["h"] for p in items)
    fig = plt.figure(figsize=(20, height * 0.33 + 0.6), dpi=72)
    gs = GridSpec(height, 24, figure=fig, left=0.04, right=0.99, top=1 - 0.6 / (height * 0.33 + 0.6),
                  bottom=0.02, hspace=2.5, wspace=1.2)
    fig.suptitle("%s  (pciescope, simulated fleet; rendered by dashboards/render.py)" % board["title"],
                 fontsize=13, weight="bold", x=0.01, ha="left")
    for p in items:
        g = p["gridPos"]
        if p["type"] == "row":
            ax = fig.add_subplot(gs[g["y"]:g["y"] + 1, 0:24])
            ax.axis("off")
            ax.text(0, 0.2, p["title"], fontsize=11, weight="bold", transform=ax.transAxes)
            continue
        ax = fig.add_subplot(gs[g["y"] + 1 if g["h"] > 2 else g["y"]:g["y"] + g["h"], g["x"]:g["x"] + g["w"]])
        ax.set_title(p["title"], fontsize=8, loc="left")
        try:
            DRAW[p["type"]](ax, p, prom)
        except Exception as ex:  # noqa: BLE001 - drawn into the picture
            ax.text(0.5, 0.5, "error: %s" % ex, ha="center", va="center", fontsize=6, wrap=True,
                    transform=ax.transAxes, color="red")
    fig.savefig(out)
    plt.close(fig)


def main():
    if len(sys.argv) != 6:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    boards, url, start, end, out = sys.argv[1:]
    prom = Prom(url, start, end)
    os.makedirs(out, exist_ok=True)
    for f in sorted(os.listdir(boards)):
        if not f.endswith(".json"):
            continue
        with open(os.path.join(boards, f)) as fh:
            board = json.load(fh)
        png = os.path.join(out, "dashboard-" + f[:-5].replace("pcie-", "pcie-", 1) + ".png")
        render(board, prom, png)
        print("wrote %s" % png)


if __name__ == "__main__":
    main()
