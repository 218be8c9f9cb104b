#!/usr/bin/env python3
"""fleet_check.py - what tests/integration/fleet.sh checks after a
`pciescope fleet` run into a real receiver, through its HTTP API (TAP lines
on stdout, one per check):

  fleet_check.py URL TRUTH GOLDEN_DIR RATE_WINDOW

- every host's series set (names and labels, instance aside) equals
  `golden_stream --series-list` of its machine (GOLDEN_DIR/<machine>.list)
  for hosts without a fault; hosts with one have every family of it;
- each planted fault of TRUTH shows in the data, and no host outside TRUTH
  shows one of its kind (the same queries over the whole fleet);
- counters never go down; utilisation = bandwidth / capacity.
"""
import json
import sys
import urllib.parse
import urllib.request

url, truth_file, golden_dir, window = sys.argv[1:5]
truth = json.load(open(truth_file))
n = 0
failed = 0


def tap(good, what):
    global n, failed
    n += 1
    if not good:
        failed += 1
    print(("ok" if good else "not ok") + " %d - %s" % (n, what))


def get(path, **params):
    q = urllib.parse.urlencode(params, doseq=True)
    with urllib.request.urlopen("%s%s?%s" % (url, path, q), timeout=60) as r:
        body = json.load(r)
    if body.get("status") != "success":
        raise RuntimeError(body)
    return body["data"]


def query(expr):
    return get("/api/v1/query", query=expr)["result"]


def key(labels):
    return ",".join(["__name__=" + labels["__name__"]] +
                    ["%s=%s" % (k, labels[k]) for k in sorted(labels) if k not in ("__name__", "instance")])


golden = {}
for m in set(truth["machines"].values()):
    golden[m] = set(l.strip() for l in open("%s/%s.list" % (golden_dir, m)) if l.strip())

faulty = {f["instance"]: f for f in truth["faults"]}
tap(truth["hosts"] == len(truth["machines"]), "truth: %d hosts named" % truth["hosts"])

# ---- names and labels, per host ----
bad = []
for host, machine in sorted(truth["machines"].items()):
    # What rule engines wrote back (records, ALERTS) is not the host's.
    got = set(key(s) for s in get("/api/v1/series", **{"match[]": '{instance="%s"}' % host})
              if ":" not in s["__name__"] and not s["__name__"].startswith("ALERTS"))
    want = golden[machine]
    if host in faulty:
        fams = set(k.split(",")[0] for k in want)
        missing = fams - set(k.split(",")[0] for k in got)
        if missing:
            bad.append("%s (%s, fault): families missing %s" % (host, machine, sorted(missing)[:3]))
    elif got != want:
        bad.append("%s (%s): %d missing (%s), %d extra (%s)" % (
            host, machine, len(want - got), sorted(want - got)[:2], len(got - want), sorted(got - want)[:2]))
for b in bad[:5]:
    print("# " + b)
tap(not bad, "every host's series are the engine's at Detail default for its machine "
    "(%d hosts, %d machine types)" % (len(truth["machines"]), len(golden)))

# ---- the planted faults, and nothing else ----
W = window
checks = {
    "saturation": ('min_over_time(pcie_port_utilization_ratio{capacity="effective"}[%s]) > 0.9' % W,
                   lambda f, l: l.get("port") == f["port"] and l.get("direction") == f["direction"]),
    "downtrained": ('(min_over_time(pcie_link_downtrained[%s]) == 1) unless on (instance, bdf) ' % W +
                    'pcie_device_info{port_type=~"root_port|downstream_port"}',
                    lambda f, l: l.get("bdf") == f["bdf"]),
    "flapping": ('(max_over_time(pcie_link_changes_total[%s]) - min_over_time(pcie_link_changes_total[%s]) >= 1) '
                 'unless on (instance, bdf) pcie_device_info{port_type=~"root_port|downstream_port"}' % (W, W),
                 lambda f, l: l.get("bdf") == f["bdf"]),
    "mps_critical": ('pcie_audit_finding{severity="critical"} == 1', lambda f, l: l.get("bdf") == f["bdf"]),
    "aer_uncorrectable": ('max_over_time(pcie_aer_device_errors_total{severity=~"fatal|nonfatal"}[%s]) - '
                          'min_over_time(pcie_aer_device_errors_total{severity=~"fatal|nonfatal"}[%s]) > 0' % (W, W),
                          lambda f, l: l.get("bdf") == f["bdf"]),
    "aer_correctable_rate": ('(max_over_time(pcie_aer_device_errors_total{severity="correctable"}[%s]) - '
                             'min_over_time(pcie_aer_device_errors_total{severity="correctable"}[%s])) '
                             '/ %g > 0.1' % (W, W, float(W.rstrip("s")) - 2 * truth["interval"]),
                             lambda f, l: l.get("bdf") == f["bdf"]),
}
kinds = set(f["kind"] for f in truth["faults"])
for kind, (expr, match) in checks.items():
    res = query(expr)
    planted = [f for f in truth["faults"] if f["kind"] == kind]
    seen = [r["metric"] for r in res]
    missing = [f for f in planted if not any(l.get("instance") == f["instance"] and match(f, l) for l in seen)]
    extra = sorted(set(l.get("instance") for l in seen) - set(f["instance"] for f in planted))
    for f in missing[:3]:
        print("# %s not visible: %s" % (kind, f))
    if extra:
        print("# %s shows on hosts without it: %s" % (kind, extra[:5]))
    tap(not missing and not extra, "%s: %d planted, all visible, no other host shows it" % (kind, len(planted)))

# ---- counters only rise ----
res = query('count(resets({__name__=~"pcie_.+_total"}[%s]) > 0)' % W)
tap(not res, "no counter goes down (%s)" % (res[0]["value"][1] if res else "0 resets"))

# ---- utilisation = bandwidth / capacity (raw), on every Kunpeng port ----
# A flapping link is left out: the engine's utilisation of an interval uses
# the width of its counting time, the capacity series the width at the read.
res = query('abs(sum by (instance, port) (pcie_port_bandwidth_bytes_per_second{direction="rx",pmu=~"hisi.*"}) '
            '/ on (instance, port) label_replace(pcie_link_capacity_bytes_per_second{state="current"}, "port", "$1", "bdf", "(.+)") '
            '- on (instance, port) pcie_port_utilization_ratio{direction="rx",capacity="raw"})')
res = [r for r in res if faulty.get(r["metric"].get("instance"), {}).get("kind") != "flapping"]
dev = max((float(r["value"][1]) for r in res), default=float("nan"))
tap(len(res) > 0 and dev < 0.01,
    "utilisation rx raw = bandwidth rx / link capacity on %d ports (max deviation %g)" % (len(res), dev))

print("1..%d" % n)
sys.exit(1 if failed else 0)
