#!/usr/bin/env python3
"""fleet_rules.py - the fleet overview dashboard and the rules on a fleet's
data in a real receiver (tests/integration/fleet.sh, make bench-fleet-dash).
TAP-style lines on stdout ("ok - ..." / "not ok - ..."), details as "# ".

  fleet_rules.py panels BOARD.json URL START END [--step S] [--repeat N] [--json FILE]
      Every query of the dashboard, as Grafana sends it: the `instance`
      variable (label values), stat panels as range queries START..END at
      step S (default 15), table panels as instant queries at END;
      $instance is All (.*), $__range END-START, $__rate_interval 1m.
      Each must answer without an error, a warning or a limit hit. With
      --repeat N each query runs N times (VictoriaMetrics with nocache=1)
      and the median time is reported; --json writes one record per query
      (title, kind, median seconds, series touched: the series its
      selectors match over the range and its longest window).
  fleet_rules.py rules URL [--json FILE] [--datasource URL]
      Every rule group and rule loaded by the rule engine at URL (Prometheus
      or vmalert: /api/v1/rules) is healthy: evaluated, no error. With
      --datasource, --json also gets the series each rule's selectors touch.
  fleet_rules.py alerts URL TRUTH [--allow NAME,...]
      The alerts firing in the rule engine at URL (/api/v1/alerts) name
      exactly the faults of `pciescope fleet --truth` (instance and port or
      link), kind by kind, and no other alert fires (names in --allow
      aside).
"""
import json
import re
import statistics
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

failed = 0

# Alert name -> (fault kind, the truth's fields that name it, the alert's labels).
KINDS = {
    "PCIeLinkSaturated": ("saturation", ("instance", "port", "direction"), ("instance", "port", "direction")),
    "PCIeLinkDowntrained": ("downtrained", ("instance", "bdf"), ("instance", "bdf")),
    "PCIeLinkFlapping": ("flapping", ("instance", "bdf"), ("instance", "bdf")),
    "PCIeMPSMisconfigured": ("mps_critical", ("instance", "bdf"), ("instance", "bdf")),
    "PCIeAERUncorrectableErrors": ("aer_uncorrectable", ("instance", "bdf"), ("instance", "bdf")),
    "PCIeAERCorrectableErrorRate": ("aer_correctable_rate", ("instance", "bdf"), ("instance", "bdf")),
}


def report(good, what):
    global failed
    if not good:
        failed += 1
    print(("ok" if good else "not ok") + " - " + what, flush=True)


def get(url, timeout=120):
    """(JSON body, seconds); HTTP errors come back as a body with status error."""
    t0 = time.perf_counter()
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            body = json.load(r)
    except urllib.error.HTTPError as e:
        body = {"status": "error", "error": "HTTP %d: %s" % (e.code, e.read()[:400].decode("utf-8", "replace"))}
    except (urllib.error.URLError, OSError, ValueError) as e:
        body = {"status": "error", "error": str(e)}
    return body, time.perf_counter() - t0


def problem(body):
    """What is wrong with an answer (None: a clean success)."""
    if body.get("status") != "success":
        return str(body.get("error", body))[:300]
    if body.get("warnings"):
        return "warnings: %s" % body["warnings"]
    if body.get("isPartial"):
        return "partial answer"
    return None


def subst(expr, start, end):
    e = expr.replace("$instance", ".*")
    e = e.replace("$__range", "%ds" % int(end - start)).replace("$__rate_interval", "1m").replace("$__interval", "15s")
    return e


SELECTOR = re.compile(r"\b((?:instance(?:_[a-z]+)?:)?(?:pcie|remote_write)_[a-z0-9_]+(?::[a-z0-9_]+)?)\s*(\{[^}]*\})?(?!\s*\()")


def windows(expr):
    """The longest range window of @expr in seconds (0: none)."""
    unit = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    w = [int(n) * unit[u] for n, u in re.findall(r"\[(\d+)([smhd])\]", expr)]
    return max(w, default=0)


def series_touched(url, expr, start, end, kind):
    """Series the selectors of @expr match over what the query reads: the
    range (or the instant) plus its longest window or the 5-minute lookback."""
    span = int((end - start) if kind == "range" else 0) + max(windows(expr), 300)
    total = 0
    for name, labels in sorted(set(SELECTOR.findall(expr))):
        q = "count(last_over_time(%s%s[%ds]))" % (name, labels, span)
        body, _ = get("%s/api/v1/query?%s" % (url, urllib.parse.urlencode({"query": q, "time": "%.3f" % end})))
        if body.get("status") == "success" and body["data"]["result"]:
            total += int(float(body["data"]["result"][0]["value"][1]))
    return total


def panels_of(board):
    out = []
    for p in board.get("panels", []):
        if p.get("type") == "row":
            out.extend(p.get("panels", []))
        else:
            out.append(p)
    return out


def cmd_panels(argv):
    board_file, url, start, end = argv[0], argv[1], float(argv[2]), float(argv[3])
    opts = dict(zip(argv[4::2], argv[5::2]))
    step = opts.get("--step", "15")
    repeat = int(opts.get("--repeat", "1"))
    board = json.load(open(board_file))
    vm = "victoria" in (get(url + "/api/v1/status/buildinfo")[0].get("data", {}).get("version", "") or "")
    queries = []
    for v in board.get("templating", {}).get("list", []):
        m = re.match(r"label_values\((.*),\s*(\w+)\)$", v.get("query", "") if isinstance(v.get("query"), str) else "")
        if v.get("type") == "query" and m:
            path = "/api/v1/label/%s/values?%s" % (m.group(2), urllib.parse.urlencode(
                {"match[]": m.group(1), "start": "%.3f" % start, "end": "%.3f" % end}))
            queries.append(("variable $%s" % v["name"], "labels", m.group(1), path))
    for p in panels_of(board):
        for tg in p.get("targets", []):
            e = subst(tg["expr"], start, end)
            if tg.get("instant"):
                params = {"query": e, "time": "%.3f" % end}
                kind, path = "instant", "/api/v1/query?"
            else:
                params = {"query": e, "start": "%.3f" % start, "end": "%.3f" % end, "step": step}
                kind, path = "range", "/api/v1/query_range?"
            queries.append(("%s [%s]" % (p["title"], tg.get("refId", "A")), kind, e, path + urllib.parse.urlencode(params)))
    records = []
    for title, kind, expr, path in queries:
        times, bad, n = [], None, 0
        for _ in range(repeat):
            body, secs = get(url + path + ("&nocache=1" if vm else ""))
            bad = bad or problem(body)
            times.append(secs)
            if not bad:
                d = body["data"]
                n = len(d) if kind == "labels" else len(d["result"]) if isinstance(d.get("result"), list) else 1
        med = statistics.median(times)
        rec = {"query": title, "kind": kind, "expr": expr, "median_s": round(med, 4),
               "times_s": [round(t, 4) for t in times], "result_series": n, "error": bad}
        if repeat > 1 and kind != "labels":
            rec["series_touched"] = series_touched(url, expr, start, end, kind)
        records.append(rec)
        report(bad is None, "%s (%s): answers without an error or a limit hit: %d series%s%s" % (
            title, kind, n, ", median %.3f s of %d" % (med, repeat) if repeat > 1 else "",
            "" if bad is None else ": " + bad))
    if "--json" in opts:
        json.dump(records, open(opts["--json"], "w"), indent=1)


def cmd_rules(argv):
    url = argv[0]
    opts = dict(zip(argv[1::2], argv[2::2]))
    body, _ = get(url + "/api/v1/rules")
    if problem(body):
        report(False, "rules of %s: %s" % (url, problem(body)))
        return
    groups = body["data"]["groups"]
    out = []
    for g in groups:
        bad = [(r.get("name"), r.get("lastError")) for r in g["rules"]
               if r.get("lastError") or r.get("health") not in ("ok",)]
        rec = {"group": g["name"], "rules": len(g["rules"]), "interval_s": g.get("interval"),
               "evaluation_s": g.get("evaluationTime"),
               "rule_evaluation_s": {r["name"]: r.get("evaluationTime") for r in g["rules"]}}
        if "--datasource" in opts:
            now = time.time()
            rec["series_touched"] = {r["name"]: series_touched(opts["--datasource"], r["query"], now, now, "instant")
                                     for r in g["rules"]}
        out.append(rec)
        report(not bad and len(g["rules"]) > 0, "rule group %s: %d rules loaded, every one evaluated without an error%s" % (
            g["name"], len(g["rules"]), "" if not bad else ": %s" % bad[:3]))
    report(len(groups) > 0, "%d rule groups loaded" % len(groups))
    if "--json" in opts:
        json.dump(out, open(opts["--json"], "w"), indent=1)


def cmd_alerts(argv):
    url, truth_file = argv[0], argv[1]
    opts = dict(zip(argv[2::2], argv[3::2]))
    allow = set(filter(None, opts.get("--allow", "").split(",")))
    truth = json.load(open(truth_file))
    body, _ = get(url + "/api/v1/alerts")
    if problem(body):
        report(False, "alerts of %s: %s" % (url, problem(body)))
        return
    firing = [a for a in (body["data"]["alerts"] or []) if a.get("state") == "firing"]
    for name, (kind, tkeys, akeys) in sorted(KINDS.items()):
        want = {tuple(f.get(k) for k in tkeys) for f in truth["faults"] if f["kind"] == kind}
        got = {tuple(a["labels"].get(k) for k in akeys) for a in firing if a["labels"].get("alertname") == name}
        for x in sorted(want - got)[:5]:
            print("# %s missing: %s" % (name, dict(zip(tkeys, x))))
        for x in sorted(got - want)[:5]:
            print("# %s not planted: %s" % (name, dict(zip(akeys, x))))
        report(want == got, "%s names exactly the planted %s faults (%d planted, %d firing, %d missing, %d not planted)" % (
            name, kind, len(want), len(got), len(want - got), len(got - want)))
    other = sorted({a["labels"].get("alertname") for a in firing} - set(KINDS) - allow)
    report(not other, "no other alert fires (%s)" % (", ".join(other) or "none"))


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("panels", "rules", "alerts"):
        print(__doc__, file=sys.stderr)
        return 2
    {"panels": cmd_panels, "rules": cmd_rules, "alerts": cmd_alerts}[sys.argv[1]](sys.argv[2:])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
