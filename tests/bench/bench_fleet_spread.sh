#!/bin/bash
# bench_fleet_spread.sh - how evenly `pciescope fleet` spreads a fleet over
# several single-node VictoriaMetrics 1.79 (rw_shard of instance), at
# BENCH_SPREAD_HOSTS (1000) hosts over BENCH_SPREAD_NODES (3) nodes, each
# started here on 127.0.0.1 in a temp dir with its default flags. Prints one
# JSON line: per node the hosts (series of pcie_functions, one per host),
# the series it created (vm_new_timeseries_created_total), the samples it
# took (vm_rows_inserted_total{type="promremotewrite"}) and its CPU seconds
# (/proc/PID/stat), and the max/min ratio of each. Not part of make check:
# `make bench-fleet-spread`. BENCH_SPREAD_SECONDS (60) of sending at
# BENCH_SPREAD_INTERVAL (30) s: the spread does not depend on the rate.
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$PWD}
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/rw_lib.sh"
hosts=${BENCH_SPREAD_HOSTS:-1000}
nodes=${BENCH_SPREAD_NODES:-3}
seconds=${BENCH_SPREAD_SECONDS:-60}
interval=${BENCH_SPREAD_INTERVAL:-30}
[ -x "$VICTORIA_METRICS" ] || { echo "victoria-metrics is not installed" >&2; exit 77; }

urls=() pids=()
for i in $(seq 1 "$nodes"); do
	start_vm "n$i"
	u="n${i}_url" p="n${i}_pid"
	wait_http "${!u}/health" 30 || { echo "node $i did not start" >&2; exit 1; }
	urls+=(--url "${!u}/api/v1/write")
	pids+=("${!p}")
done
cpu() { awk '{print ($14 + $15) / 100}' "/proc/$1/stat"; }
"$PCIESCOPE" fleet --hosts "$hosts" --duration "$seconds" --interval "$interval" --fault-rate 0 \
	--seed 27 --machine-dir "$top_srcdir/sim/machines" "${urls[@]}" 2>"$rw_tmp/fleet.err"
echo "fleet exit $?: $(tail -n 1 "$rw_tmp/fleet.err")" >&2
{
	for i in $(seq 1 "$nodes"); do
		u="n${i}_url"
		curl -s "${!u}/internal/force_flush" >/dev/null
		h=$(curl -sf "${!u}/api/v1/query" --data-urlencode 'query=count(count by (instance) (last_over_time(pcie_functions[1h])))' |
			"$PYTHON3" -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else 0)')
		m=$(curl -sf "${!u}/metrics")
		s=$(echo "$m" | awk '/^vm_new_timeseries_created_total /{print $2}')
		r=$(echo "$m" | awk '/^vm_rows_inserted_total\{type="promremotewrite"\} /{print $2}')
		echo "$i $h $s $r $(cpu "${pids[i - 1]}")"
	done
} | "$PYTHON3" -c '
import json, sys
rows = [l.split() for l in sys.stdin if l.strip()]
def col(k):
    return [float(r[k]) for r in rows]
def ratio(v):
    return round(max(v) / min(v), 3) if v and min(v) > 0 else None
out = {"hosts": int(sys.argv[1]), "nodes": len(rows)}
for k, name in ((1, "hosts_per_node"), (2, "series_per_node"), (3, "samples_per_node"), (4, "cpu_s_per_node")):
    v = col(k)
    out[name] = [int(x) if k < 4 else round(x, 1) for x in v]
    out[name.replace("_per_node", "_max_min")] = ratio(v)
print(json.dumps(out))
' "$hosts"
