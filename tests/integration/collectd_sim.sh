#!/bin/bash
# collectd_sim.sh - Debian's real collectd runs the plugin on a simulated
# Kunpeng 930 (Simulate): per-core collector threads count through the
# simulated hisi_pcie PMUs, and the values in csv match the model's ground
# truth; the simulation is said in the log and in every value; an injected
# EACCES on one core gives one clear ERROR line while the other cores go on;
# collectd stops promptly (threads joined).
. "$(dirname "$0")/lib.sh"

sim_collectd_setup
TRUTH="$top_builddir/tests/tools/sim_truth"
MACHINE="$FIXTURES/machines/pmu-test.json"

# Detail "full": the latency in PMU cycles too (the csv's 6 decimals lose a
# latency in seconds; the cycles at 1 GHz are nanoseconds).
write_conf() { # conf, csv dir, log, machine
	sim_collectd_conf "$1" "$2" "$3" sim "Simulate \"$4\"" "PMULatency true" \
		"PMUTLPLength false" "PMUEndpoints false" "Detail \"full\""
}

last_value() { tail -n 1 "$1" | cut -d, -f2; }
csvfile() { ls "$1/sim/pcie-$2/$3"-* 2>/dev/null | head -n 1; }

# within VALUE TRUTH: |value - truth| <= 1 % of truth
within() { awk -v v="$1" -v t="$2" 'BEGIN { d = v - t; if (d < 0) d = -d; exit !(t > 0 && d <= 0.01 * t) }'; }

# ---- 1. values against ground truth ----------------------------------------
write_conf "$tmp/a.conf" "$tmp/csv" "$tmp/a.log" "$MACHINE"
"$COLLECTD" -f -C "$tmp/a.conf" >"$tmp/a.out" 2>&1 &
pid=$!
sleep 6
start=$(date +%s.%N)
kill "$pid" && wait "$pid"
rc=$?
stop=$(date +%s.%N)
pid=
check "collectd exits cleanly on SIGTERM (rc $rc)" [ "$rc" -eq 0 ]
took=$(awk -v a="$start" -v b="$stop" 'BEGIN { printf "%.3f", b - a }')
check "shutdown (SIGTERM to exit, collector threads joined) within 1 s: $took s" \
	awk -v t="$took" 'BEGIN { exit !(t < 1) }'
check "log: the simulation is said plainly" \
	grep -q 'pcie plugin: SIMULATED machine "pmu-test"' "$tmp/a.log"
check "log: no errors" eval '! grep -q "\[error\]" "$tmp/a.log"'
check "log: each core reports its plan" grep -q 'hisi_pcie0_core1: counting' "$tmp/a.log"
# write_log logs every value list with its meta data (to the logfile)
check "every value carries simulated=\"pmu-test\" (meta prom.label.simulated)" \
	eval '[ "$(grep -c "\"plugin\":\"pcie\"" "$tmp/a.log")" -gt 100 ] &&
	      [ "$(grep "\"plugin\":\"pcie\"" "$tmp/a.log" | grep -vc "\"prom.label.simulated\":\"pmu-test\"")" -eq 0 ]'
check "write_log: port bandwidth carries its Prometheus name and labels" \
	grep -q '"prom.name":"pcie_port_bandwidth_bytes_per_second".*"prom.label.pmu":"hisi_pcie0_core0".*"prom.label.port":"0000:00:00.0","prom.label.direction":"rx","prom.label.tlp":"mwr"' "$tmp/a.log"

"$TRUTH" "$MACHINE" 0 1 >"$tmp/truth"
n=0
while read -r port cls bytes lat; do
	case $port in 0000:00:00.0 | 0000:00:08.0) ;; *) continue ;; esac # constant workloads
	f=$(csvfile "$tmp/csv" "$port" "pmu_bandwidth-$cls")
	if awk -v b="$bytes" 'BEGIN { exit !(b > 0) }'; then
		v=$(last_value "$f" 2>/dev/null)
		check "csv: $port $cls bandwidth $v B/s within 1% of truth $bytes" within "${v:-0}" "$bytes"
		n=$((n + 1))
	fi
	case $cls in rx_mwr | rx_mrd | tx_mrd) ;; *) continue ;; esac
	if awk -v l="$lat" 'BEGIN { exit !(l > 0) }'; then
		# csv prints 6 decimals: compare the cycles (LatencyClock 1 GHz: ns)
		f=$(csvfile "$tmp/csv" "$port" "pmu_latency_average_cycles-$cls")
		v=$(last_value "$f" 2>/dev/null)
		ns=$(awk -v l="$lat" 'BEGIN { printf "%.6f", l * 1e9 }')
		check "csv: $port $cls latency $v cycles within 1% of truth $ns ns at 1 GHz" within "${v:-0}" "$ns"
	fi
done <"$tmp/truth"
check "ground truth compared for $n port/class pairs" [ "$n" -ge 6 ]
f=$(csvfile "$tmp/csv" hisi_pcie0_core0 collector_cpu_seconds)
check "collector CPU time is published ($(last_value "$f" 2>/dev/null) s)" \
	awk -v v="$(last_value "$f" 2>/dev/null)" 'BEGIN { exit !(v > 0 && v < 1) }'
f=$(csvfile "$tmp/csv" simulated simulation_info-pmu-test)
check "pcie_simulation_info is published" [ "$(last_value "$f" 2>/dev/null)" = "1.000000" ]
f=$(csvfile "$tmp/csv" 0000:00:00.0 pmu_utilization-rx-raw)
check "utilisation of the raw link capacity is a ratio ($(last_value "$f" 2>/dev/null))" \
	awk -v v="$(last_value "$f" 2>/dev/null)" 'BEGIN { exit !(v > 0 && v < 1) }'

# ---- 2. EACCES on one core -------------------------------------------------
sed 's/"kernel": "6.12",/"kernel": "6.12", "inject": [{"pmu": "hisi_pcie0_core1", "errno": "EACCES", "count": -1}],/' \
	"$MACHINE" >"$tmp/inject.json"
write_conf "$tmp/b.conf" "$tmp/csv-b" "$tmp/b.log" "$tmp/inject.json"
"$COLLECTD" -f -C "$tmp/b.conf" >"$tmp/b.out" 2>&1 &
pid=$!
sleep 4
kill "$pid" && wait "$pid"
pid=
n=$(grep -c '\[error\] pcie plugin: hisi_pcie0_core1: perf_event_open' "$tmp/b.log")
check "EACCES: exactly one ERROR line for the core ($n)" [ "$n" -eq 1 ]
check "EACCES: the line says what to do" grep -q 'perf_event_paranoid' "$tmp/b.log"
check "EACCES: that core's values are absent" [ -z "$(csvfile "$tmp/csv-b" 0000:00:08.0 pmu_bandwidth-rx_mwr)" ]
check "EACCES: the other cores go on" [ -n "$(csvfile "$tmp/csv-b" 0000:00:00.0 pmu_bandwidth-rx_mwr)" ]
check "EACCES: the rest of the plugin goes on (link values)" \
	[ -n "$(csvfile "$tmp/csv-b" 0000:00:08.0 link_width_lanes-current)" ]

done_testing
