#!/usr/bin/env python3
"""dashboards_check.py - checks of the generated Grafana dashboards.

  struct DIR                 every panel has a unit, a description naming a
                             pcie_/remote_write_ metric it queries, the
                             $datasource variable; the variables exist.
  live DIR PROM VM TIME HOST=MACHINE... [--machines MDIR]
                             every panel query (template variables
                             substituted) against a live Prometheus: data on
                             the hosts of the machines the panel is meant
                             for, none on the others; the fleet overview's
                             counts and top-k against the machine
                             descriptions and the raw series; the fleet
                             queries give the same answers on VictoriaMetrics.

Prints one "ok<TAB>description" or "not ok<TAB>description" line per check
(the shell test turns them into TAP).
"""
import json
import math
import os
import re
import sys
import urllib.error
import urllib.parse
import urllib.request

KP2, KPM, SPR, TURIN = "kunpeng930-2p", "kunpeng930-misconfig", "spr-2s", "turin-2p"
YIT = "yitian710-1p"  # Synopsys DWC PMUs (dwc_rootport_*)
GRACE = "grace-gh200"
ALL = {KP2, KPM, SPR, YIT, TURIN, GRACE}
KUNPENG = {KP2, KPM}
PORT_PMUS = KUNPENG | {GRACE}  # per Root Port PMUs with coverage and latency

# Which simulated machines each panel is meant for: the dashboard's default
# and per-panel exceptions (by title). A panel meant for a machine must
# return data for that host alone; on any other host it must return none.
APPLIES = {
    "pciescope-fleet": (ALL, {
        "Downtrained links": {KPM, YIT, TURIN, GRACE},  # the table; the stat (a count) is ALL
        "Critical MPS/MRRS findings": {KPM},
        "PTT completion latency p99 (top 10)": KUNPENG,
        "Lowest PMU coverage (bottom 10)": PORT_PMUS | {YIT, TURIN},
        "Failing PTT windows (top 10)": KUNPENG,
    }),
    "pciescope-host": (ALL, {
        "Latency per class": PORT_PMUS,
        "TLP length mix (DMA writes)": KUNPENG,
        "Busiest endpoints": KUNPENG,
        "Audit findings": {KPM, TURIN, GRACE},
    }),
    "pciescope-ptt": (KUNPENG, {}),
    "pciescope-intel-iio": ({SPR}, {}),
    "pciescope-collector": (ALL, {
        # The rotating plans: Kunpeng's hisi_pcie, Grace's ports in turn,
        # Turin's amd_df; the DesignWare PMUs alternate rx and tx
        # (coverage, no plan).
        "PMU coverage": PORT_PMUS | {YIT, TURIN},
        "PMU measurements planned and counting": PORT_PMUS | {TURIN},
        "PTT window results": KUNPENG,
    }),
}
# Stats always answer (a count, or `or vector(0)`): they are for every host.
STAT_ALL = True

VAR_APPLIES = {
    "sicl": KUNPENG, "socket": {SPR}, "stack": {SPR},
}
VAR_DASH_APPLIES = {("pciescope-ptt", "pmu"): KUNPENG}


def load(d):
    boards = []
    for f in sorted(os.listdir(d)):
        if f.endswith(".json"):
            with open(os.path.join(d, f)) as fh:
                boards.append((f, json.load(fh)))
    return boards


def panels(board):
    for p in board["panels"]:
        if p.get("type") == "row":
            for q in p.get("panels", []):
                yield q
        else:
            yield p


def report(ok, desc):
    print(("ok" if ok else "not ok") + "\t" + desc)
    return ok


def struct(d):
    boards = load(d)
    report(len(boards) == 5, "five dashboards in %s (%d)" % (d, len(boards)))
    npanels = 0
    for f, b in boards:
        names = [v["name"] for v in b["templating"]["list"]]
        ds = [v for v in b["templating"]["list"] if v["name"] == "datasource"]
        report(ds and ds[0]["type"] == "datasource" and ds[0]["query"] == "prometheus",
               "%s: a datasource variable of type prometheus" % f)
        inst = [v for v in b["templating"]["list"] if v["name"] == "instance"]
        report(inst and inst[0].get("multi") is True and inst[0]["type"] == "query",
               "%s: a multi-select instance variable" % f)
        for v in b["templating"]["list"]:
            if v["type"] == "query":
                report(v.get("datasource", {}).get("uid") == "${datasource}",
                       "%s: variable %s queries $datasource" % (f, v["name"]))
        report(b.get("uid", "").startswith("pciescope-") and b.get("title"), "%s: uid and title" % f)
        bad = []
        for p in panels(b):
            npanels += 1
            t = p.get("title", "?")
            fc = p.get("fieldConfig", {}).get("defaults", {})
            exprs = [x.get("expr", "") for x in p.get("targets", [])]
            metrics = set(re.findall(r"\b((?:pcie|remote_write)_[a-z_]+)", " ".join(exprs)))
            desc = p.get("description", "")
            named = [m for m in metrics if m in desc]
            if not fc.get("unit"):
                bad.append("%s: no unit" % t)
            if not exprs:
                bad.append("%s: no query" % t)
            if not named:
                bad.append("%s: description names none of %s" % (t, sorted(metrics)))
            if p.get("datasource", {}).get("uid") != "${datasource}" or any(
                    x.get("datasource", {}).get("uid") != "${datasource}" for x in p.get("targets", [])):
                bad.append("%s: datasource is not $datasource" % t)
            steps = fc.get("thresholds", {}).get("steps", [])
            if not steps or steps[0].get("value") is not None:
                bad.append("%s: no thresholds" % t)
            for e in exprs:
                for var in re.findall(r"\$(\w+)", e):
                    if var not in names and not var.startswith("__"):
                        bad.append("%s: unknown variable $%s" % (t, var))
        report(not bad, "%s: every panel has a unit, thresholds, a description naming its metric, "
               "$datasource and known variables%s" % (f, "" if not bad else ": " + "; ".join(bad)))
    report(npanels >= 40, "%d panels in all" % npanels)


# ---- live ----

def rx(host):
    """A host name as a PromQL regex literal (inside a double-quoted string)."""
    return re.sub(r"([.+*?()\[\]{}|^$])", r"\\\\\1", host)


def subst(expr, host_re):
    e = expr.replace("$instance", host_re)
    e = e.replace("$__rate_interval", "1m").replace("$__interval", "15s").replace("$__range", "5m")
    e = re.sub(r"\$\{?(pmu|port|sicl|socket|stack|endpoint)\}?", ".*", e)
    return e


def get(url):
    try:
        with urllib.request.urlopen(url, timeout=20) as r:
            return json.load(r)
    except urllib.error.HTTPError as e:
        raise RuntimeError("HTTP %d: %s" % (e.code, e.read()[:300].decode("utf-8", "replace"))) from None


def query(url, expr, t):
    qs = urllib.parse.urlencode({"query": expr, "time": "%.3f" % t})
    d = get("%s/api/v1/query?%s" % (url, qs))
    if d.get("status") != "success":
        raise RuntimeError(d)
    res = d["data"]["result"]
    if d["data"]["resultType"] == "scalar":
        return [({}, float(res[1]))]
    return [(r["metric"], float(r["value"][1])) for r in res]


def has_data(res):
    return any(not math.isnan(v) for _, v in res)


def label_values(url, label, match, t):
    qs = urllib.parse.urlencode({"match[]": match, "start": "%.3f" % (t - 600), "end": "%.3f" % t})
    return get("%s/api/v1/label/%s/values?%s" % (url, label, qs))["data"]


def strip_comments(text):
    # The machine descriptions are JSON with // and /* */ comments.
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"(^|[^:\"])//[^\n]*", r"\1", text)


def gts(s):
    return float(s.replace("GT/s", "")) if isinstance(s, str) else float(s)


def downtrained_links(machine_file):
    """(port bdf) of every link the description trains below what both ends
    support: a child's explicit speed/width below the smaller maximum."""
    with open(machine_file) as fh:
        m = json.loads(strip_comments(fh.read()))
    out = set()

    def walk(node, parent):
        if isinstance(node, dict):
            if parent is not None and "link" in node and "link" in parent:
                a, b = parent["link"], node["link"]
                sp = min(gts(a["max_speed"]), gts(b["max_speed"]))
                wd = min(a["max_width"], b["max_width"])
                cs = gts(b.get("speed", a.get("speed", sp)))
                cw = b.get("width", a.get("width", wd))
                if cw > 0 and (cs < sp or cw < wd):
                    out.add(parent["bdf"])
            for k, v in node.items():
                if k == "children":
                    for ch in v:
                        walk(ch, node)
                else:
                    walk(v, None)
        elif isinstance(node, list):
            for x in node:
                walk(x, None)

    walk(m, None)
    return out


def uncorrectable_aer(machine_file):
    """Whether the description has fatal or nonfatal AER counts that rise."""
    with open(machine_file) as fh:
        m = json.loads(strip_comments(fh.read()))
    found = []

    def walk(node):
        if isinstance(node, dict):
            aer = node.get("aer")
            if isinstance(aer, dict):
                for sev in ("fatal", "nonfatal"):
                    for err in (aer.get(sev) or {}).values():
                        if isinstance(err, dict) and err.get("per_second", 0) > 0:
                            found.append(node.get("bdf"))
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for x in node:
                walk(x)

    walk(m)
    return bool(found)


def live(d, prom, vm, t, hosts, mdir):
    boards = load(d)
    host_of = {mach: h for h, mach in hosts.items()}
    allre = "|".join(rx(h) for h in hosts)
    nq = 0
    for f, b in boards:
        default, exc = APPLIES[b["uid"]]
        for v in b["templating"]["list"]:
            if v["type"] != "query":
                continue
            m = re.match(r"label_values\((.*),\s*(\w+)\)$", v["query"])
            if not m:
                report(False, "%s: variable %s: not a label_values query" % (f, v["name"]))
                continue
            want = VAR_DASH_APPLIES.get((b["uid"], v["name"]), VAR_APPLIES.get(v["name"], default if v["name"] != "instance" else ALL))
            if v["name"] in ("pmu", "port") and b["uid"] == "pciescope-host":
                want = ALL
            if v["name"] == "port" and b["uid"] == "pciescope-host":
                want = ALL - {TURIN}  # root complexes (root_complex), no Root Port
            for mach, h in sorted(host_of.items()):
                try:
                    vals = label_values(prom, m.group(2), subst(m.group(1), rx(h)), t)
                except RuntimeError as ex:
                    report(False, "%s: variable %s on %s: %s" % (f, v["name"], mach, ex))
                    continue
                got = bool(vals)
                report(got == (mach in want), "%s: variable %s on %s: %s" % (
                    f, v["name"], mach, ("%d values" % len(vals)) if got else "none"))
        for p in panels(b):
            title = p["title"]
            want = exc.get(title, default)
            if p["type"] == "stat" and STAT_ALL:
                want = ALL
            for tg in p["targets"]:
                for mach, h in sorted(host_of.items()):
                    e = subst(tg["expr"], rx(h))
                    try:
                        res = query(prom, e, t)
                    except Exception as ex:  # noqa: BLE001 - reported as a failure
                        report(False, "%s: %s [%s] on %s: %s" % (f, title, tg["refId"], mach, ex))
                        continue
                    nq += 1
                    got = has_data(res)
                    insts = {r[0].get("instance") for r in res} - {None}
                    right = got == (mach in want) and insts <= {h}
                    report(right, "%s: %s [%s] on %s: %s" % (
                        f, title, tg["refId"], mach, ("%d series" % len(res)) if got else "no data"))
    report(True, "%d panel queries run on Prometheus" % nq)

    try:
        fleet_run(boards, prom, vm, t, hosts, host_of, allre, mdir)
    except Exception as ex:  # noqa: BLE001 - reported as a failure
        report(False, "fleet run: %s" % ex)


def fleet_run(boards, prom, vm, t, hosts, host_of, allre, mdir):
    # ---- the fleet run: counts and top-k over all hosts ----
    fleet = [b for _, b in boards if b["uid"] == "pciescope-fleet"][0]
    fq = {p["title"] + ("/stat" if p["type"] == "stat" else ""): p["targets"][0]["expr"] for p in panels(fleet)}

    def fleet_q(url, title):
        return query(url, subst(fq[title], allre), t)

    v = fleet_q(prom, "Hosts reporting/stat")
    report(v and v[0][1] == len(hosts), "fleet: hosts reporting = %s (%d collectd instances)" % (v and v[0][1], len(hosts)))
    want_dt = set()
    for mach, h in host_of.items():
        for bdf in downtrained_links(os.path.join(mdir, mach + ".json")):
            want_dt.add((h, bdf))
    v = fleet_q(prom, "Downtrained links/stat")
    report(v and v[0][1] == len(want_dt), "fleet: downtrained links = %s, the machine descriptions train %d link(s) low: %s" % (
        v and v[0][1], len(want_dt), sorted(want_dt)))
    rows = {(m.get("instance"), m.get("bdf")) for m, _ in fleet_q(prom, "Downtrained links")}
    report(rows == want_dt, "fleet: the downtrained links table names them (%s)" % sorted(rows))
    want_aer = sorted(h for mach, h in host_of.items() if uncorrectable_aer(os.path.join(mdir, mach + ".json")))
    v = fleet_q(prom, "Hosts with uncorrectable AER/stat")
    report(v and v[0][1] == len(want_aer), "fleet: hosts with uncorrectable AER = %s, the descriptions make %s count" % (
        v and v[0][1], want_aer))
    crit = fleet_q(prom, "Critical MPS/MRRS findings/stat")
    rows = fleet_q(prom, "Critical MPS/MRRS findings")
    report(crit and crit[0][1] == len(rows) and len(rows) > 0 and {m["instance"] for m, _ in rows} == {host_of[KPM]},
           "fleet: %s critical findings, one table row each, all on %s" % (crit and crit[0][1], KPM))
    # top-k against the raw series
    raw = query(prom, 'pcie_port_utilization_ratio{capacity="effective"}', t)
    best = {}
    for m, val in raw:
        k = (m["instance"], m.get("pmu"), m.get("port"), m.get("direction"))
        best[k] = max(best.get(k, -1), val)
    top = sorted(best.values(), reverse=True)[:10]
    got = sorted((val for _, val in fleet_q(prom, "Top 10 saturated ports")), reverse=True)
    report(got == top, "fleet: top 10 saturated ports = the 10 largest of %d port directions (%s)" % (
        len(best), ", ".join("%.3f" % x for x in got[:3])))
    # The per-host panel reads a recording rule: compare each host's value
    # with the raw maximum at the instant the rule was evaluated. A sample
    # written remotely can arrive a little after that instant with an
    # earlier timestamp (the rule then saw the one before it), so the raw
    # maximum a few seconds earlier counts too.
    got = {m["instance"]: val for m, val in fleet_q(prom, "Worst link utilisation per host (top 10)")}
    wrong = []
    evaluated = query(prom, "max by (instance) (timestamp(instance:pcie_port_utilization_ratio:max))", t)
    for m, ts in evaluated:
        h = m["instance"]
        seen = []
        for lag in (0, 1, 2, 5, 10):
            r = query(prom, 'max by (instance) (pcie_port_utilization_ratio{capacity="effective",instance="%s"})'
                      % h, ts - lag)
            if r:
                seen.append(r[0][1])
        if h not in got or not any(abs(got[h] - v) < 1e-9 for v in seen):
            wrong.append("%s: record %s, raw maxima %s" % (h, got.get(h), ", ".join("%.6f" % v for v in seen)))
    report(not wrong and len(got) > 0 and len(got) == len(evaluated),
           "fleet: worst utilisation per host = the raw maxima at the rule's evaluation (%s)%s" % (
               ", ".join("%s %.3f" % kv for kv in sorted(got.items())),
               "; " + "; ".join(wrong) if wrong else ""))

    # ---- the same fleet queries on VictoriaMetrics ----
    if vm:
        for p in panels(fleet):
            e = subst(p["targets"][0]["expr"], allre)
            try:
                a, bb = query(prom, e, t), query(vm, e, t)
            except RuntimeError as ex:
                report(False, "VictoriaMetrics answers %s: %s" % (p["title"], ex))
                continue
            ka = sorted(json.dumps({k: v for k, v in m.items() if k != "__name__"}, sort_keys=True) for m, _ in a)
            kb = sorted(json.dumps({k: v for k, v in m.items() if k != "__name__"}, sort_keys=True) for m, _ in bb)
            uses_rate = "rate(" in e or "increase(" in e
            # A recording rule is evaluated by each engine at its own
            # instants (Prometheus; vmalert for VictoriaMetrics).
            uses_record = re.search(r"\binstance(_bdf)?:pcie_", e) is not None
            if uses_rate or uses_record:
                # VictoriaMetrics does not extrapolate rate(): the same
                # series must answer, the values may differ.
                same = (len(a) > 0) == (len(bb) > 0)
                if not ("topk" in e or "bottomk" in e):
                    same = same and ka == kb
            else:
                va = sorted(round(v, 6) for _, v in a)
                vb = sorted(round(v, 6) for _, v in bb)
                same = ka == kb and va == vb
            report(same, "VictoriaMetrics answers %s like Prometheus (%d/%d series)" % (p["title"], len(a), len(bb)))


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "struct":
        struct(sys.argv[2])
    elif len(sys.argv) >= 6 and sys.argv[1] == "live":
        args = sys.argv[2:]
        mdir = "."
        if "--machines" in args:
            i = args.index("--machines")
            mdir = args[i + 1]
            del args[i:i + 2]
        d, prom, vm, t = args[0], args[1], args[2], float(args[3])
        hosts = dict(a.split("=", 1) for a in args[4:])
        live(d, prom, vm if vm != "-" else None, t, hosts, mdir)
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
