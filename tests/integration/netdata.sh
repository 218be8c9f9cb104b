#!/bin/bash
# netdata.sh - Debian's real Netdata (1.37) runs the built pcie.plugin from a
# private configuration (temp dirs, 127.0.0.1, a free port, no other
# collector) on the simulated machines:
#   kunpeng930-2p    the charts exist with their units and chart labels, the
#                    PMU bandwidth and latency match the model's ground
#                    truth within 1 %, every alarm is evaluated and none is
#                    raised (a healthy machine);
#   kunpeng930-misconfig  the downtrained-link alarm is raised, one per link,
#                    on exactly the links whose chart says downtrained; the
#                    MPS mismatch and the correctable AER rate raise theirs;
#   alert-scenarios  the link saturation alarm (its window shortened in a
#                    test copy) is raised on the saturated port alone, not
#                    on an 8 s burst nor on a flapping link;
#   yitian710-1p     the same saturation alarm on a DesignWare Root Port
#                    (dwc_rootport PMU, rx and tx taking turns on one
#                    counter): raised on the saturated E810 port's rx alone;
#   spr-2s           IIO bandwidth per stack within 1 % of the truth;
#   a bad option     one clear line in error.log, DISABLE, never restarted.
# Netdata is stopped at the end, failure or not.
. "$(dirname "$0")/lib.sh"

NETDATA=${NETDATA:-$(command -v netdata || echo /usr/sbin/netdata)}
[ -x "$NETDATA" ] || skip_all "netdata is not installed (apt-get install netdata)"
PLUGIN="$top_builddir/netdata/pcie.plugin"
[ -x "$PLUGIN" ] || skip_all "pcie.plugin was not built"
command -v curl >/dev/null || skip_all "curl is not installed"
TRUTH="$top_builddir/tests/tools/sim_truth"
MACHINES="$top_srcdir/sim/machines"

tmp=$(mktemp -d)
nd_pid=
# Netdata stops its plugins when it exits; a plugin of ours left behind
# (Netdata killed hard) is stopped by its path, which only this run uses.
stop_netdata() {
	local i
	if [ -n "$nd_pid" ]; then
		kill "$nd_pid" 2>/dev/null
		for i in $(seq 1 100); do kill -0 "$nd_pid" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$nd_pid" 2>/dev/null
		wait "$nd_pid" 2>/dev/null
	fi
	nd_pid=
	for i in $(pgrep -f "^$tmp/[a-z0-9]*/plugins/pcie.plugin" 2>/dev/null); do kill "$i" 2>/dev/null; done
}
trap 'stop_netdata; rm -rf "$tmp"' EXIT

free_port() {
	"$PYTHON3" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# start_netdata NAME LINES...: Netdata with only pcie.plugin (LINES are its
# pcie.conf) and only pcie's alarms; sets $dir, $url.
start_netdata() {
	local name=$1 port line
	shift
	dir=$tmp/$name
	mkdir -p "$dir/etc/health.d" "$dir/health" "$dir/plugins" "$dir/log" "$dir/cache" "$dir/lib"
	cp "$PLUGIN" "$dir/plugins/"
	cp "${health_src:-$top_srcdir/netdata/health.d/pcie.conf}" "$dir/health/pcie.conf"
	for line in "$@"; do echo "$line"; done >"$dir/etc/pcie.conf"
	port=$(free_port)
	url=http://127.0.0.1:$port
	cat >"$dir/netdata.conf" <<CONF
[global]
  run as user = $(id -un)
  hostname = pciescope-$name
  memory mode = ram
  update every = 1
  history = 600
[directories]
  config = $dir/etc
  stock config = $top_srcdir/netdata/conf.d
  log = $dir/log
  plugins = "$dir/plugins"
  cache = $dir/cache
  lib = $dir/lib
  home = $dir
  health config = $dir/etc/health.d
  stock health config = $dir/health
  web = /usr/share/netdata/web
[logs]
  debug log = $dir/log/debug.log
  error log = $dir/log/error.log
  access log = none
[web]
  bind to = 127.0.0.1:$port
[plugins]
  enable running new plugins = no
  proc = no
  diskspace = no
  cgroups = no
  tc = no
  idlejitter = no
  timex = no
  checks = no
  apps = no
  statsd = no
  charts.d = no
  python.d = no
  fping = no
  perf = no
  slabinfo = no
  ioping = no
  nfacct = no
  cups = no
  pcie = yes
[health]
  enabled = yes
  script to execute on alarm = /bin/true
[ml]
  enabled = no
[registry]
  enabled = no
[statsd]
  enabled = no
CONF
	DO_NOT_TRACK=1 "$NETDATA" -D -c "$dir/netdata.conf" >"$dir/stdout" 2>&1 &
	nd_pid=$!
}

api() { curl -sf --max-time 5 "$url/api/v1/$1"; }
api_up() { api info >/dev/null; }

# wait_for SECONDS COMMAND...: polls every 0.5 s.
wait_for() {
	local t=$1 i
	shift
	for i in $(seq 1 $((t * 2))); do "$@" && return 0; sleep 0.5; done
	return 1
}

charts_json() { api charts >"$dir/charts.json"; }
has_chart() { api "chart?chart=$1" >/dev/null; }

# chart_info CHART FIELD: units, family, context, or label.<name>
chart_info() {
	"$PYTHON3" - "$dir/charts.json" "$1" "$2" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["charts"].get(sys.argv[2], {})
f = sys.argv[3]
print(c.get("chart_labels", {}).get(f[6:], "") if f.startswith("label.") else c.get(f, ""))
PY
}

# value CHART DIM: the average of the last 3 s, in the chart's units.
value() {
	api "data?chart=$1&dimensions=$2&after=-3&points=1&group=average&format=json" |
		"$PYTHON3" -c 'import json, sys; print(json.load(sys.stdin)["data"][0][1])' 2>/dev/null
}

# alarms [all]: "<alarm> <chart> <status>" per pcie alarm.
alarms() {
	api "alarms${1:+?all}" | "$PYTHON3" -c '
import json, sys
for a in json.load(sys.stdin)["alarms"].values():
    if a["chart"].startswith("pcie."):
        print(a["name"], a["chart"], a["status"])'
}

# charts_of CONTEXT: the ids of the charts of a context (charts.json).
charts_of() {
	"$PYTHON3" - "$dir/charts.json" "$1" <<'PY'
import json, sys
for k, c in sorted(json.load(open(sys.argv[1]))["charts"].items()):
    if c["context"] == sys.argv[2]:
        print(k)
PY
}
# alarm_value ALARM CHART: the value of that alarm at its last evaluation.
alarm_value() {
	api "alarms?all" | "$PYTHON3" -c '
import json, sys
for a in json.load(sys.stdin)["alarms"].values():
    if a["name"] == sys.argv[1] and a["chart"] == sys.argv[2]:
        print(a["value"])' "$1" "$2"
}

# no_plugin NAME: the pcie.plugin of that Netdata has exited.
no_plugin() { ! pgrep -f "^$tmp/$1/plugins/pcie.plugin" >/dev/null; }

# steady_truth MACHINE: sim_truth's lines whose rate is the same (1e-6) in
# one-second windows from 0 to 60 s: the test reads a value at a time it
# does not control (later under load), so only steady rates are compared.
steady_truth() {
	local t
	for t in 0 4 9 13 18 22 27 31 36 40 45 50 55 60; do "$TRUTH" "$1" "$t" $((t + 1)); done |
		awk -v runs=14 '
		{ v = ($1 == "iio") ? $6 : $3; key = ($1 == "iio") ? $1 " " $2 " " $3 " " $4 " " $5 : $1 " " $2
		  if ($1 == "iio" && $7 != 1) bad[key] = 1
		  if (!(key in lo) || v < lo[key]) lo[key] = v
		  if (!(key in hi) || v > hi[key]) hi[key] = v
		  n[key]++; line[key] = $0 }
		END { for (k in n) if (n[k] == runs && !(k in bad) && hi[k] - lo[k] <= 1e-6 * (hi[k] + 1)) print line[k] }' |
		sort
}

within() { awk -v v="$1" -v t="$2" 'BEGIN { d = v - t; if (d < 0) d = -d; exit !(t > 0 && d <= 0.01 * t) }'; }
id_of() { echo "$1" | tr -c 'A-Za-z0-9\n' _; }

# ---- 1. a healthy Kunpeng 930: charts, units, labels, truth, no alarm ------
start_netdata healthy 'Simulate "kunpeng930-2p"' "MachineDirectory \"$MACHINES\"" \
	'PMUTLPLength false' 'PMUEndpoints false'
check "healthy: Netdata serves on 127.0.0.1" wait_for 30 api_up
check "healthy: the PMU charts appear" wait_for 30 has_chart pcie.port_bandwidth_0000_00_00_0
sleep 4 # a few intervals of every collector
charts_json
log=$dir/log/error.log
check "healthy: error.log says the simulation plainly" \
	grep -q 'pcie.plugin: NOTICE: SIMULATED machine "kunpeng930-2p"' "$log"
check "healthy: no ERROR from the plugin" eval '! grep -q "pcie.plugin: ERROR" "$log"'
for spec in "port_bandwidth_0000_00_00_0 KiB/s pcie.port_bandwidth port 0000:00:00.0" \
	"port_utilization_0000_00_00_0 percentage pcie.port_utilization pmu hisi_pcie0_core0" \
	"port_latency_0000_00_08_0 nanoseconds pcie.port_latency core 1" \
	"link_speed_0000_00_00_0 GT/s pcie.link_speed bdf 0000:00:00.0" \
	"link_width_0000_00_00_0 lanes pcie.link_width simulated kunpeng930-2p" \
	"link_downtrained_0000_00_00_0 boolean pcie.link_downtrained bdf 0000:00:00.0" \
	"collector_cpu percentage pcie.collector_cpu simulated kunpeng930-2p"; do
	read -r c u ctx l lv <<<"$spec"
	check "healthy: pcie.$c in $u, context $ctx, label $l=$lv" eval \
		'[ "$(chart_info "pcie.$c" units)" = "$u" ] && [ "$(chart_info "pcie.$c" context)" = "$ctx" ] &&
		 [ "$(chart_info "pcie.$c" "label.$l")" = "$lv" ]'
done
check "healthy: the sicl label of a PMU chart" [ "$(chart_info pcie.port_bandwidth_0000_00_00_0 label.sicl)" = 0 ]
n=$(charts_of pcie.aer_errors | wc -l)
check "healthy: AER charts per function ($n)" [ "$n" -gt 0 ]
n=$(charts_of pcie.ptt_tlps | wc -l)
check "healthy: PTT TLP mix charts per PTT device ($n)" [ "$n" -gt 0 ]

steady_truth "$MACHINES/kunpeng930-2p.json" >"$tmp/truth"
n=0
while read -r port cls bytes lat; do
	case $port in 0000:00:00.0 | 0000:00:08.0) ;; *) continue ;; esac
	awk -v b="$bytes" 'BEGIN { exit !(b > 0) }' || continue
	v=$(value "pcie.port_bandwidth_$(id_of "$port")" "$cls")
	b=$(awk -v v="${v:-0}" 'BEGIN { printf "%.3f", v * 1024 }')
	check "healthy: $port $cls ${v:-none} KiB/s = $b B/s within 1% of truth $bytes" within "$b" "$bytes"
	n=$((n + 1))
	case $cls in rx_mwr | rx_mrd | tx_mrd) ;; *) continue ;; esac
	awk -v l="$lat" 'BEGIN { exit !(l > 0) }' || continue
	v=$(value "pcie.port_latency_$(id_of "$port")" "$cls")
	ns=$(awk -v l="$lat" 'BEGIN { printf "%.6f", l * 1e9 }')
	check "healthy: $port $cls latency ${v:-none} ns within 1% of truth $ns ns" within "${v:-0}" "$ns"
done <"$tmp/truth"
check "healthy: ground truth compared for $n port/class pairs" [ "$n" -ge 6 ]
v=$(value pcie.link_width_0000_00_00_0 current)
check "healthy: the link width is a whole number of lanes ($v)" eval '[ "${v%.0*}" -gt 0 ] 2>/dev/null'

# Alarms are evaluated every 10 s: wait until each template has run.
evaluated() { [ "$(alarms all | grep -c '^pcie_link_downtrained .* CLEAR$')" -ge "$1" ]; }
nlinks=$(charts_of pcie.link_downtrained | wc -l)
check "healthy: all $nlinks downtrained-link alarms evaluated" wait_for 30 evaluated "$nlinks"
raised=$(alarms | grep -E ' (WARNING|CRITICAL)$')
check "healthy: no alarm raised${raised:+: $raised}" [ -z "$raised" ]
stop_netdata
check "healthy: Netdata stopped, and pcie.plugin with it" wait_for 5 no_plugin healthy

# ---- 2. the misconfigured Kunpeng 930: the downtrained-link alarm ----------
start_netdata misconfig 'Simulate "kunpeng930-misconfig"' "MachineDirectory \"$MACHINES\""
raised_on() { alarms | grep -q "^pcie_link_downtrained pcie.link_downtrained_$1 WARNING$"; }
check "misconfig: the NIC's downtrained link (0000:01:00.0) raises its alarm" \
	wait_for 40 raised_on 0000_01_00_0
charts_json
down=$(for c in $(charts_of pcie.link_downtrained); do
	v=$(value "$c" downtrained)
	[ "${v%.*}" = 1 ] && echo "$c"
done)
raised=$(alarms | awk '$1 == "pcie_link_downtrained" && $3 == "WARNING" { print $2 }' | sort)
check "misconfig: raised on exactly the downtrained links ($(echo $raised))" \
	eval '[ -n "$raised" ] && [ "$raised" = "$(echo "$down" | sort)" ]'
n=$(alarms all | grep -c '^pcie_link_downtrained ')
m=$(charts_of pcie.link_downtrained | wc -l)
check "misconfig: one downtrained alarm per link ($n alarms, $m links)" [ "$n" -eq "$m" ]
raised_alarm() { alarms | grep -qE "^$1 pcie\.$2 $3\$"; }
check "misconfig: the MPS mismatch behind the switch raises pcie_mps_critical" \
	wait_for 20 raised_alarm pcie_mps_critical 'mps_mrrs_findings_[0-9a-f_]*' CRITICAL
# The alarm averages a minute of an incremental dimension, evaluated every
# 10 s: give it a minute's data (20 s raised it in most runs, not all).
check "misconfig: the NIC's rising correctable AER count (2/s) raises pcie_aer_correctable_rate" \
	wait_for 75 raised_alarm pcie_aer_correctable_rate aer_errors_0000_01_00_0 WARNING
v=$(value pcie.link_width_0000_01_00_0 current)
w=$(value pcie.link_width_0000_01_00_0 max)
check "misconfig: the NIC's link is x${v%.*} of x${w%.*} (the description's 8 of 16)" \
	[ "${v%.*}/${w%.*}" = 8/16 ]
stop_netdata

# ---- 2b. a saturated Root Port link: the saturation alarms -----------------
# alert-scenarios: 0000:00:00.0 carries close to what its link can at MPS
# 256 (rx) all the time; 0000:00:04.0 does the same for 8 s, then 5 %; the
# link of 0000:00:02.0 flaps. The shipped alarms average 5 minutes, and
# Netdata examines a lookup alarm only once the chart holds the whole
# window, so a test copy shortens the window to 20 s (as alerts.sh shortens
# `for:`); everything else is the shipped file. 20 s also proves the burst
# is not raised: no 20 s window holds more than 8 s of it.
sed 's/lookup: average -5m unaligned of /lookup: average -20s unaligned of /' \
	"$top_srcdir/netdata/health.d/pcie.conf" >"$tmp/pcie-short.conf"
n=$(diff "$top_srcdir/netdata/health.d/pcie.conf" "$tmp/pcie-short.conf" | grep -c '^>')
check "saturated: the test copy differs in the three saturation windows only ($n lines)" [ "$n" -eq 3 ]
health_src=$tmp/pcie-short.conf start_netdata saturated 'Simulate "alert-scenarios"' \
	"MachineDirectory \"$FIXTURES/machines\""
check "saturated: the saturated port's inbound alarm (0000:00:00.0 rx) is raised" \
	wait_for 90 raised_alarm pcie_link_saturation_rx port_utilization_0000_00_00_0 '(WARNING|CRITICAL)'
a=$(alarm_value pcie_link_saturation_rx pcie.port_utilization_0000_00_00_0)
v=$(api "data?chart=pcie.port_utilization_0000_00_00_0&dimensions=rx_effective&after=-20&points=1&group=average&format=json" |
	"$PYTHON3" -c 'import json, sys; print(json.load(sys.stdin)["data"][0][1])' 2>/dev/null)
check "saturated: its value ($a %) is the chart's 20 s average of rx_effective ($v %), above 90" \
	eval 'awk -v a="${a:-0}" -v v="${v:-0}" "BEGIN { d = a - v; if (d < 0) d = -d; exit !(a > 90 && d <= 0.02 * v) }"'
evaluated_sat() { [ "$(alarms all | grep -c '^pcie_link_saturation_[rt]x .* \(CLEAR\|WARNING\|CRITICAL\)$')" -eq 6 ]; }
check "saturated: all six saturation alarms (3 ports x rx, tx) evaluated" wait_for 40 evaluated_sat
raised=$(alarms | awk '$1 ~ /^pcie_link_saturation_/ && ($3 == "WARNING" || $3 == "CRITICAL") { print $1, $2 }')
check "saturated: raised on the saturated port's rx alone, not the 8 s burst nor the flapping link (${raised:-none})" \
	[ "$raised" = "pcie_link_saturation_rx pcie.port_utilization_0000_00_00_0" ]
stop_netdata

# ---- 2c. the saturation alarm on a DesignWare Root Port --------------------
# yitian710-1p: the E810 in an x8 slot (0001:30:05.0) receives more than its
# link carries all the time (rx effective about 0.98); its other ports are
# at 60 % or less. The same 20 s test copy of the alarms; the PMU counts rx
# and tx in turns, so each value is a half-interval's rate.
health_src=$tmp/pcie-short.conf start_netdata yitian 'Simulate "yitian710-1p"' \
	"MachineDirectory \"$MACHINES\"" 'CollectAER false'
check "yitian: the DesignWare PMU's utilisation chart appears" \
	wait_for 30 has_chart pcie.port_utilization_0001_30_05_0
check "yitian: the E810 port's inbound alarm (0001:30:05.0 rx) is raised" \
	wait_for 90 raised_alarm pcie_link_saturation_rx port_utilization_0001_30_05_0 '(WARNING|CRITICAL)'
evaluated_yt() { [ "$(alarms all | grep -c '^pcie_link_saturation_[rt]x .* \(CLEAR\|WARNING\|CRITICAL\)$')" -eq 12 ]; }
check "yitian: all twelve saturation alarms (6 ports with a link x rx, tx) evaluated" \
	wait_for 40 evaluated_yt
raised=$(alarms | awk '$1 ~ /^pcie_link_saturation_/ && ($3 == "WARNING" || $3 == "CRITICAL") { print $1, $2 }')
check "yitian: raised on the E810 port's rx alone (${raised:-none})" \
	[ "$raised" = "pcie_link_saturation_rx pcie.port_utilization_0001_30_05_0" ]
stop_netdata

# ---- 3. Intel: IIO bandwidth per stack ---------------------------------------
start_netdata spr 'Simulate "spr-2s"' "MachineDirectory \"$MACHINES\"" 'CollectAER false' \
	'IIOStackBus "uncore_iio_free_running_2" 0 "0000:15"' \
	'IIOStackBus "uncore_iio_free_running_4" 0 "0000:26"' \
	'IIOStackBus "uncore_iio_6" 0 "0000:37"'
check "spr: the IIO charts appear" wait_for 30 has_chart pcie.iio_bandwidth_0_2
sleep 3
charts_json
check "spr: pcie.iio_bandwidth in KiB/s, labels socket and stack" eval \
	'[ "$(chart_info pcie.iio_bandwidth_0_2 units)" = KiB/s ] &&
	 [ "$(chart_info pcie.iio_bandwidth_0_2 label.stack)" = 2 ]'
steady_truth "$MACHINES/spr-2s.json" >"$tmp/truth-spr"
n=0
while read -r tag socket box part port bytes constant; do
	[ "$tag" = iio ] && [ "$constant" = 1 ] || continue
	awk -v b="$bytes" 'BEGIN { exit !(b > 0) }' || continue
	v=$(value "pcie.iio_bandwidth_${socket}_$box" "part${part}_rx")
	b=$(awk -v v="${v:-0}" 'BEGIN { printf "%.3f", v * 1024 }')
	check "spr: socket $socket stack $box part $part ($port) $b B/s within 1% of truth $bytes" \
		within "$b" "$bytes"
	n=$((n + 1))
done <"$tmp/truth-spr"
check "spr: ground truth compared for $n parts (those with a steady rate)" [ "$n" -ge 2 ]
stop_netdata

# ---- 4. a bad option: one line, DISABLE, not restarted ---------------------
out=$(NETDATA_USER_CONFIG_DIR=$tmp/none "$PLUGIN" 0 2>"$tmp/direct.err")
rc=$?
check "direct: a bad interval argument says DISABLE and exits 1 (rc $rc)" \
	eval '[ "$out" = DISABLE ] && [ "$rc" -eq 1 ] && grep -q "update interval \"0\"" "$tmp/direct.err"'
start_netdata bad 'Simulate "kunpeng930-2p"' 'TraceClock 0'
log=$dir/log/error.log
line() { grep 'pcie.plugin: ERROR' "$log"; }
check "bad: the plugin's one ERROR line" wait_for 20 line
check "bad: it names the file, line, option and value" \
	grep -q "pcie.plugin: ERROR: $dir/etc/pcie.conf:2: option TraceClock 0: .*plugin disabled" "$log"
sleep 3
n=$(grep -c 'pcie.plugin: ERROR' "$log")
check "bad: one line only, the plugin is not started again ($n)" [ "$n" -eq 1 ]
check "bad: Netdata goes on without it" api_up
check "bad: no pcie chart" eval '! api charts | grep -q "\"pcie\."'
check "bad: no pcie.plugin process left" no_plugin bad
stop_netdata

# ---- 5. unprivileged on a live machine: one line says what is missing ----
# A simulated machine's tree read as a live one (SysfsRoot), by a user
# without capabilities: the plugin says once what it cannot do, and charts
# the rest.
if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null; then
	ok "# SKIP unprivileged run: needs root (to drop to nobody) and setpriv"
else
	mkdir -p "$tmp/live" "$tmp/unpriv"
	"$top_builddir/tests/tools/sim_write" "$MACHINES/kunpeng930-2p.json" "$tmp/live" >/dev/null
	printf 'SysfsRoot "%s"\nProcRoot "%s"\n' "$tmp/live/sys" "$tmp/live/proc" >"$tmp/unpriv/pcie.conf"
	chmod -R a+rX "$tmp"
	NETDATA_USER_CONFIG_DIR=$tmp/unpriv timeout 4 setpriv --reuid=nobody --regid=nogroup \
		--clear-groups --inh-caps=-all --bounding-set=-all "$PLUGIN" 1 >"$tmp/unpriv.out" 2>"$tmp/unpriv.err"
	rc=$?
	n=$(grep -c 'without CAP_PERFMON' "$tmp/unpriv.err")
	check "unprivileged: one line names the missing capabilities and what they cost ($n)" \
		eval '[ "$n" -eq 1 ] && grep -q "CAP_SYS_ADMIN (config space" "$tmp/unpriv.err"'
	if [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 0 ]; then
		n=$(grep -cE 'pcie.plugin: (WARNING|ERROR)' "$tmp/unpriv.err")
		check "unprivileged, perf closed (perf_event_paranoid > 0): that line is the only warning or error ($n), the PMU sources are off" \
			eval '[ "$n" -eq 1 ] && grep -q "CollectPMU, CollectIIO and CollectTrace are off" "$tmp/unpriv.err"'
	fi
	check "unprivileged: runs until stopped (rc $rc: timeout's SIGTERM)" [ "$rc" -eq 124 ]
	n=$(grep -c '^CHART pcie.link_width_' "$tmp/unpriv.out")
	check "unprivileged: the links are charted all the same ($n)" [ "$n" -gt 0 ]
	check "unprivileged: no DISABLE" eval '! grep -q DISABLE "$tmp/unpriv.out"'
fi

done_testing
