#!/bin/bash
# bench_fleet_dash.sh - the fleet overview dashboard and the shipped rules at
# fleet scale (docs/scaling.md, "Dashboards and rules at 1,000 hosts"). Per
# receiver (single-node VictoriaMetrics 1.79 with vmalert 1.79 writing back to
# it; Prometheus 2.42 with the rules loaded), default receiver flags, one at a
# time, on 127.0.0.1 in temp dirs:
#   1. `pciescope fleet --hosts N --interval I --start-offset H --duration L`
#      sends H seconds of history as fast as the receiver takes it, then L
#      seconds live, while the rule engine evaluates pcie.records.yml and a
#      test copy of pcie.rules.yml (every `for:` shortened to F intervals)
#      every E seconds;
#   2. during the live part: each rule group's evaluation time (vmalert: the
#      slowest iteration of its summary window; Prometheus: the last one),
#      sampled every E seconds, with the load average;
#   3. near the end of the live part (the hosts still sending): the firing
#      alerts against --truth (tests/tools/fleet_rules.py alerts), every rule
#      healthy (rules);
#   4. after it: every query of the fleet overview, as Grafana sends it, over
#      the last hour (stat panels: range queries at a 15 s step; tables:
#      instant), 5 times each (VictoriaMetrics with nocache=1): the median, and
#      the series its selectors touch (fleet_rules.py panels --repeat 5).
# Not a test: numbers and the checks' lines on stdout, JSON in
# BENCH_DASH_OUT (a directory, default a temp dir that is removed).
#
#   bench_fleet_dash.sh BUILDDIR SRCDIR
#   BENCH_DASH_HOSTS (1000), BENCH_DASH_INTERVAL (30), BENCH_DASH_HISTORY
#   (1200), BENCH_DASH_LIVE (900), BENCH_DASH_EVAL (60: the default
#   evaluation interval of Prometheus and of vmalert, which the shipped rules'
#   windows of 5 to 30 minutes are made for),
#   BENCH_DASH_FOR_INTERVALS (7), BENCH_DASH_RECEIVERS ("vm prom"),
#   BENCH_DASH_SEED (27), BENCH_DASH_FAULT_RATE (0.03), BENCH_DASH_MIX
#   (pciescope fleet's --mix; its default mix when empty)
set -u
build=$(cd "${1:-.}" && pwd)
src=$(cd "${2:-.}" && pwd)
hosts=${BENCH_DASH_HOSTS:-1000}
interval=${BENCH_DASH_INTERVAL:-30}
history=${BENCH_DASH_HISTORY:-1200}
live=${BENCH_DASH_LIVE:-900}
eval_s=${BENCH_DASH_EVAL:-60}
for_s=$((${BENCH_DASH_FOR_INTERVALS:-7} * interval))
seed=${BENCH_DASH_SEED:-27}
fleet="$build/cli/pciescope-fleet"
check="$src/tests/tools/fleet_rules.py"
board="$src/dashboards/grafana/pcie-fleet-overview.json"
export PCIESCOPE_MACHINE_DIR="$src/sim/machines"
tmp=$(mktemp -d)
out=${BENCH_DASH_OUT:-$tmp/out}
mkdir -p "$out"
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
[ -x "$fleet" ] || { echo "bench_fleet_dash: $fleet not built"; exit 1; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
load1() { cut -d' ' -f1 /proc/loadavg; }
wait_up() { for _ in $(seq 300); do curl -sf -o /dev/null "$1" && return 0; sleep 0.2; done; return 1; }

sed -E "s/^( *)for: .*/\\1for: ${for_s}s/" "$src/dashboards/alerts/pcie.rules.yml" >"$tmp/rules.yml"
records="$src/dashboards/alerts/pcie.records.yml"

# group_durations ENGINE URL: one line per rule group, "group seconds
# iterations": vmalert's total evaluation time of the group and its number
# of evaluations so far (the summary gives the time of each iteration
# between two samples; its quantiles are maxima over a sliding window);
# Prometheus' last evaluation's duration and "-".
group_durations() {
	if [ "$1" = vm ]; then
		curl -s "$2/metrics" | sed -n 's/^vmalert_iteration_duration_seconds_\(sum\|count\){group="\([^"]*\)".*} \(.*\)/\2 \1 \3/p' |
			awk '$2 == "sum" { s[$1] = $3 } $2 == "count" { c[$1] = $3 } END { for (g in s) print g, s[g], c[g] }'
	else
		curl -s "$2/metrics" | sed -n 's/^prometheus_rule_group_last_duration_seconds{rule_group="[^"]*;\([^"]*\)"} \(.*\)/\1 \2 -/p'
	fi
}

echo "# $(nproc) CPUs, load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $hosts hosts, interval $interval s, history $history s, live $live s, rules every $eval_s s, for: ${for_s}s in the test copy"
for r in ${BENCH_DASH_RECEIVERS:-vm prom}; do
	dir="$tmp/$r"
	mkdir -p "$dir/data"
	port=$(free_port)
	url="http://127.0.0.1:$port"
	if [ "$r" = vm ]; then
		victoria-metrics -httpListenAddr="127.0.0.1:$port" -storageDataPath="$dir/data" -retentionPeriod=1d \
			>"$dir/log" 2>&1 &
		pids+=($!)
		wait_up "$url/health" || { echo "# $r did not start"; continue; }
		aport=$(free_port)
		engine="http://127.0.0.1:$aport"
		vmalert -httpListenAddr="127.0.0.1:$aport" -datasource.url="$url" -remoteWrite.url="$url" \
			-evaluationInterval="${eval_s}s" -notifier.url=http://127.0.0.1:1 \
			-rule="$tmp/rules.yml" -rule="$records" >"$dir/vmalert.log" 2>&1 &
		pids+=($!)
		wait_up "$engine/api/v1/rules" || { echo "# vmalert did not start"; continue; }
	else
		printf 'global:\n  scrape_interval: 1m\n  evaluation_interval: %ss\nrule_files: ["%s", "%s"]\n' \
			"$eval_s" "$tmp/rules.yml" "$records" >"$dir/prometheus.yml"
		prometheus --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/data" \
			--web.listen-address="127.0.0.1:$port" --web.enable-remote-write-receiver \
			>"$dir/log" 2>&1 &
		pids+=($!)
		wait_up "$url/-/ready" || { echo "# $r did not start"; continue; }
		engine=$url
	fi
	"$fleet" --hosts "$hosts" --duration "$live" --interval "$interval" --start-offset "$history" \
		--seed "$seed" --fault-rate "${BENCH_DASH_FAULT_RATE:-0.03}" --url "$url/api/v1/write" \
		${BENCH_DASH_MIX:+--mix "$BENCH_DASH_MIX"} --truth "$out/truth-$r.json" 2>"$dir/fleet.err" &
	fpid=$!
	# The live part begins when the sender's clock (t=) passes the history's
	# sending time; sample the rule groups from then on, every eval interval.
	: >"$out/groups-$r.txt"
	snap=false
	while kill -0 $fpid 2>/dev/null; do
		t_sent=$(sed -n 's/.*: t=\([0-9]*\)s hosts sending.*/\1/p' "$dir/fleet.err" | tail -1)
		if [ "${t_sent:-0}" -ge $((live - 4 * interval)) ] && ! $snap; then
			echo "# firing alerts at t=${t_sent}s of the live run (load $(load1)):"
			python3 "$check" alerts "$engine" "$out/truth-$r.json" | tee "$out/alerts-$r.tap"
			python3 "$check" rules "$engine" --json "$out/rules-$r.json" --datasource "$url" | tee "$out/rules-$r.tap"
			snap=true
		fi
		# live: every interval of the history has been sent (one progress line each)
		if [ "$(grep -c 'hosts sending' "$dir/fleet.err")" -gt $((history / interval)) ]; then
			group_durations "$r" "$engine" | while read -r g d n; do echo "$(date +%s) $g $d $n $(load1)"; done >>"$out/groups-$r.txt"
		fi
		sleep "$eval_s"
	done
	wait $fpid
	echo "# $r fleet: $(grep summary "$dir/fleet.err" | sed 's/^pciescope fleet: //')"
	$snap || echo "not ok - the live run ended before the alerts were read"
	sleep 5
	end=$(date +%s)
	echo "# $r: fleet overview queries over the last hour (load $(load1) before)"
	python3 "$check" panels "$board" "$url" $((end - 3600)) "$end" --step 15 --repeat 5 \
		--json "$out/panels-$r.json" | tee "$out/panels-$r.tap"
	echo "# load after the queries: $(load1)"
	# One row per rule group: median and max of the sampled durations.
	python3 - "$out/groups-$r.txt" "$eval_s" "$r" <<'PY'
import statistics, sys
# vmalert: the mean iteration between two samples (delta of the total time
# over delta of the count); Prometheus: the last iteration at each sample.
rows, prev = {}, {}
for line in open(sys.argv[1]):
    t, g, d, n, l = line.split()
    if n == "-":
        rows.setdefault(g, []).append((float(d), float(l)))
        continue
    if g in prev and float(n) > prev[g][1]:
        rows.setdefault(g, []).append(((float(d) - prev[g][0]) / (float(n) - prev[g][1]), float(l)))
    prev[g] = (float(d), float(n))
for g, v in sorted(rows.items()):
    ds = [d for d, _ in v]
    print("# %s rule group %s: %d samples, evaluation duration median %.3f s, max %.3f s, interval %s s (median %.1f %%, max %.1f %%), load %.1f-%.1f"
          % (sys.argv[3], g, len(ds), statistics.median(ds), max(ds), sys.argv[2],
             100 * statistics.median(ds) / float(sys.argv[2]), 100 * max(ds) / float(sys.argv[2]),
             min(l for _, l in v), max(l for _, l in v)))
PY
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	pids=()
done
