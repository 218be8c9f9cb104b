"""run_live.py - what scripts/run prints while collectd sends to its own
VictoriaMetrics and vmalert evaluates the alert rules (standard library only).

    python3 run_live.py status VM_URL VMALERT_URL STATE_FILE
        one line: the time, the values the remote_write plugin has had
        accepted (its own remote_write_samples_sent_total, read back from
        VictoriaMetrics) with the increase since the last line (kept in
        STATE_FILE), and the firing alerts by name
    python3 run_live.py sent VM_URL
        the values sent so far (0 before the first self-metrics arrive)
    python3 run_live.py alerts VMALERT_URL
        every firing alert, grouped by name: severity, where, summary and
        runbook link
"""
import json
import sys
import time
import urllib.parse
import urllib.request


def get(url):
    with urllib.request.urlopen(url, timeout=5) as r:
        return json.load(r)


def values_sent(vm):
    qs = urllib.parse.urlencode({"query": "sum(remote_write_samples_sent_total)"})
    result = get("%s/api/v1/query?%s" % (vm, qs))["data"]["result"]
    return int(float(result[0]["value"][1])) if result else 0


def firing(vmalert):
    alerts = get("%s/api/v1/alerts" % vmalert)["data"]["alerts"] or []
    return [a for a in alerts if a.get("state") == "firing"]


def by_name(alerts):
    names = {}
    for a in alerts:
        names.setdefault(a["name"], []).append(a)
    return dict(sorted(names.items()))


def status(vm, vmalert, state_file):
    line = time.strftime("%H:%M:%S")
    try:
        sent = values_sent(vm)
        try:
            with open(state_file) as f:
                prev = int(f.read())
        except (OSError, ValueError):
            prev = 0
        with open(state_file, "w") as f:
            f.write("%d" % sent)
        line += "  values sent {:,} (+{:,})".format(sent, sent - prev)
    except (OSError, ValueError, KeyError, TypeError) as e:
        line += "  values sent ? (VictoriaMetrics: %s)" % e
    try:
        names = by_name(firing(vmalert))
        n = sum(len(v) for v in names.values())
        shown = ", ".join(k if len(v) == 1 else "%s x%d" % (k, len(v)) for k, v in names.items())
        line += "  alerts firing %d%s" % (n, ": " + shown if shown else "")
    except (OSError, ValueError, KeyError, TypeError) as e:
        line += "  alerts ? (vmalert: %s)" % e
    print(line, flush=True)


def where(labels):
    parts = [labels.get(k) for k in ("instance", "bdf", "port", "endpoint") if labels.get(k)]
    return " ".join(parts) or "-"


def alerts(vmalert):
    names = by_name(firing(vmalert))
    if not names:
        print("    none is firing")
    for name, group in names.items():
        first = group[0]
        sev = first.get("labels", {}).get("severity", "")
        print("  %s (%s): %s" % (name, sev, first.get("annotations", {}).get("summary", "")))
        for a in sorted(group, key=lambda a: where(a.get("labels", {}))):
            print("      %s" % where(a.get("labels", {})))
        print("      runbook: %s" % first.get("annotations", {}).get("runbook_url", "(none)"))


def main():
    cmd, args = (sys.argv[1], sys.argv[2:]) if len(sys.argv) > 1 else ("", [])
    if cmd == "status" and len(args) == 3:
        status(*args)
    elif cmd == "sent" and len(args) == 1:
        try:
            print(values_sent(args[0]))
        except (OSError, ValueError, KeyError):
            print(0)
    elif cmd == "alerts" and len(args) == 1:
        alerts(args[0])
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
