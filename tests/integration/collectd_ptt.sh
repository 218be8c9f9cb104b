#!/bin/bash
# collectd_ptt.sh - Debian's real collectd runs the plugin on the simulated
# Kunpeng 930 with PTT trace windows: every hisi_ptt device gets windows
# (staggered, at most MaxConcurrentTraces at once), its TLP mix, requesters
# and request->completion latency histograms reach csv and write_log with
# their Prometheus names (histogram series with le labels, cumulative,
# +Inf = _count), tune knobs are set and read; bad trace options fail the
# configuration with one clear line.
. "$(dirname "$0")/lib.sh"

sim_collectd_setup

write_conf() { # conf, csv, log, pcie lines...
	local conf=$1 csv=$2 log=$3
	shift 3
	sim_collectd_conf "$conf" "$csv" "$log" sim "Simulate \"kunpeng930-2p\"" \
		"MachineDirectory \"$top_srcdir/sim/machines\"" "CollectPMU true" "$@"
}
last_value() { tail -n 1 "$1" | cut -d, -f2; }
csvfile() { ls "$1/sim/pcie-$2/$3"-* 2>/dev/null | head -n 1; }

# ---- 1. windows on every device ----------------------------------------------
write_conf "$tmp/a.conf" "$tmp/csv" "$tmp/a.log" \
	"TraceDuration 0.2" "TracePeriod 2" "MaxConcurrentTraces 2" 'Tune "qos_tx_np" 0'
"$COLLECTD" -f -C "$tmp/a.conf" >"$tmp/a.out" 2>&1 &
pid=$!
sleep 7
kill "$pid" && wait "$pid"
rc=$?
pid=
check "collectd exits cleanly (rc $rc)" [ "$rc" -eq 0 ]
check "log: no errors" eval '! grep -q "\[error\]" "$tmp/a.log"'
check "log: the windows are announced" grep -q 'PTT trace windows of 0.2 s every 2 s on 6 device(s), at most 2 at once' "$tmp/a.log"
for d in hisi_ptt0_0 hisi_ptt0_1 hisi_ptt0_2 hisi_ptt1_0 hisi_ptt1_1 hisi_ptt1_2; do
	ok_w=$(last_value "$(csvfile "$tmp/csv" $d ptt_windows-windows-ok)" 2>/dev/null)
	entries=$(last_value "$(csvfile "$tmp/csv" $d ptt_entries-entries)" 2>/dev/null)
	check "$d: at least 2 windows ran ($ok_w) and decoded entries ($entries)" \
		eval '[ "${ok_w:-0}" -ge 2 ] && [ "${entries:-0}" -gt 0 ]'
done
d=hisi_ptt0_0
f=$(csvfile "$tmp/csv" $d ptt_windows-windows-no_budget)
check "staggered windows never wanted more than the budget ($(last_value "$f" 2>/dev/null) skipped)" \
	[ "$(last_value "$f" 2>/dev/null)" = "0" ]
# The histogram: cumulative buckets, +Inf equal to _count.
prev=0 mono=yes nb=0
for f in $(ls "$tmp/csv/sim/pcie-$d/" | grep '^ptt_latency-last-le-' | grep -v Inf | sed 's/^ptt_latency-last-le-//; s/-[0-9]\{4\}-[0-9]\{2\}-[0-9]\{2\}$//' | sort -g); do
	v=$(last_value "$(csvfile "$tmp/csv" $d "ptt_latency-last-le-$f")")
	awk -v a="$prev" -v b="$v" 'BEGIN { exit !(b + 0 >= a + 0) }' || mono=no
	prev=$v
	nb=$((nb + 1))
done
inf=$(last_value "$(csvfile "$tmp/csv" $d ptt_latency-last-le-+Inf)")
count=$(last_value "$(csvfile "$tmp/csv" $d ptt_latency-last-count)")
check "latency histogram: $nb buckets cumulative ($mono), +Inf = _count ($inf = $count), requests matched" \
	eval '[ "$nb" -ge 20 ] && [ "$mono" = yes ] && [ "$inf" = "$count" ] && awk -v c="$count" "BEGIN { exit !(c > 0) }"'
q50=$(last_value "$(csvfile "$tmp/csv" $d ptt_latency-last-q0.5)")
q99=$(last_value "$(csvfile "$tmp/csv" $d ptt_latency-last-q0.99)")
check "latency quantiles: 0 < p50 ($q50 s) <= p99 ($q99 s) < 1 ms" \
	awk -v a="$q50" -v b="$q99" 'BEGIN { exit !(a > 0 && a <= b && b < 0.001) }'
check "write_log: histogram series carry prom.type histogram and an le label" \
	grep -q '"prom.name":"pcie_ptt_completion_latency_seconds_bucket","prom.type":"histogram",.*"prom.label.le":"+Inf"' "$tmp/a.log"
check "write_log: TLP counters by direction and kind" \
	grep -q '"prom.name":"pcie_ptt_tlps_total","prom.type":"counter",.*"prom.label.kind":"MRd"' "$tmp/a.log"
check "write_log: requesters are BDFs or other" \
	grep -q '"prom.name":"pcie_ptt_requester_tlps_total",.*"prom.label.requester":"0000:01:00.0"' "$tmp/a.log"
f=$(csvfile "$tmp/csv" $d ptt_tune-qos_tx_np)
check "Tune: set on the simulated device and read back ($(last_value "$f" 2>/dev/null))" [ "$(last_value "$f" 2>/dev/null)" = "0.000000" ]

# ---- 2. bad trace options ------------------------------------------------------
bad() { # description, expected, lines...
	local desc=$1 want=$2 n rc
	shift 2
	write_conf "$tmp/bad.conf" "$tmp/csv-bad" "$tmp/bad.log" "$@"
	: >"$tmp/bad.log"
	timeout 20 "$COLLECTD" -T -C "$tmp/bad.conf" >/dev/null 2>&1
	rc=$?
	n=$(grep -c "\[error\] pcie plugin: " "$tmp/bad.log")
	check "$desc: one ERROR line ($n) saying '$want', collectd refuses (rc $rc)" \
		eval '[ "$n" -eq 1 ] && [ "$rc" -ne 0 ] && grep -qF "$want" "$tmp/bad.log"'
}
bad "direction 4" 'option TraceDirection 4: must be 0, 1, 2 or 3' "TraceDirection 4"
bad "16DW format" 'option TraceFormat "16DW": takes "4DW" or "8DW"' 'TraceFormat "16DW"'
bad "AUX not a power of two" 'PTT trace options:' "TraceBufferSize 25165824"
bad "two requesters" 'PTT trace options:' 'TraceRequester "0000:01:00.0"' 'TraceRequester "0000:01:00.1"'
bad "duration longer than the period" 'PTT trace options:' "TraceDuration 5" "TracePeriod 2"
bad "unknown type" 'option TraceType "urgent": takes "posted", "non-posted" and/or "completion"' 'TraceType "urgent"'

# A port no device covers: that device says so, the others go on.
write_conf "$tmp/c.conf" "$tmp/csv-c" "$tmp/c.log" "TraceRootPort \"0000:00:08.0\"" "TracePeriod 2" "TraceDuration 0.2"
"$COLLECTD" -f -C "$tmp/c.conf" >"$tmp/c.out" 2>&1 &
pid=$!
sleep 4
kill "$pid" && wait "$pid"
pid=
n=$(grep -c '\[error\] pcie plugin: hisi_ptt.*: no trace windows' "$tmp/c.log")
check "a Root Port only one device covers: the other 5 say why ($n ERROR lines)" [ "$n" -eq 5 ]
f=$(csvfile "$tmp/csv-c" hisi_ptt0_1 ptt_windows-windows-ok)
check "...and the device with that port traces ($(last_value "$f" 2>/dev/null) windows)" \
	eval '[ "$(last_value "$f" 2>/dev/null)" -ge 1 ]'

done_testing
