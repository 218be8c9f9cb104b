#!/bin/bash
# hotplug.sh - end to end: hardware that changes under a running collectd.
# The pcie plugin runs on tests/fixtures/machines/hotplug.json (the
# simulated kunpeng930-2p whose switch subtree below Root Port 00:10.0 is
# removed by surprise 10 s after start and rescanned 10 s later), with
# remote_write into Debian's real Prometheus and the openmetrics scrape
# page. The removed functions' series go stale (stale markers in
# Prometheus, off the page) and come back without a restart; the change is
# logged once per function; the other units go on; no value is negative
# and no utilisation is above 1. The driver of the PMU hisi_pcie1_core0 is
# unbound and bound again (a new perf type): logged once each way, and it
# counts again; CPU 0 goes offline and the PMUs on it follow their
# cpumask. About 40 s.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rw_lib.sh"
rw_require_plugin
[ -x "$PROMETHEUS" ] || skip_all "prometheus is not installed"
for so in pcie openmetrics; do
	[ -f "$top_builddir/plugin/.libs/$so.so" ] || skip_all "the $so plugin was not built"
	cp "$top_builddir/plugin/.libs/$so.so" "$rw_tmp/plugins/"
done

machine="$FIXTURES/machines/hotplug.json"
nvme3='bdf="0000:08:00.0"'
om_port=$(free_port)
om_url="http://127.0.0.1:$om_port"
start_prometheus prom
check "prometheus is up" wait_http "$prom_url/-/ready" 30
# A PTT window of 0.2 s on each of the six devices every second (longer
# windows on six devices are more than this shared machine decodes in
# time). The driver stops hisi_ptt0_0's trace at 16.1, 16.5 and 16.9 s: a
# window is open at one of them for most phases of the windows.
pcie_collectd_conf "$rw_tmp/c" rwtest-host "$machine" -e prom "$prom_url" \
	-p "TracePeriod 1" -p "MaxConcurrentTraces 6"
cat >>"$rw_tmp/c/c.conf" <<CONF
LoadPlugin openmetrics
<Plugin openmetrics>
  Listen "127.0.0.1"
  Port "$om_port"
</Plugin>
CONF
t0=$(date +%s)
start_collectd "$rw_tmp/c/c.conf"
check "the page answers" wait_http "$om_url/metrics" 30

# page_until ERE PRESENT DEADLINE: until the page has (1) or lacks (0) a
# line matching ERE, at the latest at epoch second DEADLINE.
page_until() {
	local has
	while [ "$(date +%s)" -le "$3" ]; do
		has=0
		curl -s "$om_url/metrics" | grep -Eq "$1" && has=1
		[ "$has" = "$2" ] && return 0
		sleep 0.25
	done
	return 1
}
at() { # sleep until epoch second $1
	local d=$(($1 - $(date +%s)))
	[ "$d" -gt 0 ] && sleep "$d"
	return 0
}

# The simulation's clock starts when collectd loads the plugin, a few
# seconds after t0 on a busy machine: the checks follow what the page shows.
line="^pcie_link_width_lanes\\{.*$nvme3"
check "before the removal: 08:00.0's series are on the page" page_until "$line" 1 $((t0 + 30))
t_before=$(($(date +%s) + 1)) # date +%s rounds down: the first value may be later in the second
# Removed at 10 s of the simulation; collectd calls a series missing after
# two intervals without a value.
check "the switch subtree went: 08:00.0's series left the page" \
	page_until "$line" 0 $((t_before + 25))
t_gone=$(date +%s)
# Back at 20 s of the simulation: at least 7 s after it left the page.
at $((t_gone + 2))
t_during=$(date +%s)
check "while it is gone the Root Port above it stays on the page" \
	eval 'curl -s "$om_url/metrics" | grep -q "^pcie_link_width_lanes{.*bdf=\"0000:00:10.0\""'
check "... and so does the rest of the machine (01:00.0)" \
	eval 'curl -s "$om_url/metrics" | grep -q "^pcie_link_width_lanes{.*bdf=\"0000:01:00.0\""'
check "rescanned: 08:00.0's series are back on the page, no restart" \
	page_until "$line" 1 $((t_gone + 25))
at $(($(date +%s) + 3))
t_after=$(date +%s)
sleep 1
log="$rw_tmp/c/c.log"
# hisi_ptt1_1's driver is unbound at 26.1 s and bound again at 29 s of the
# simulation: wait for the engine to see it back (a window after 29 s).
log_until() { # log_until TEXT SECONDS: until the log has TEXT
	local i
	for i in $(seq 1 $(($2 * 4))); do
		grep -q "$1" "$log" && return 0
		sleep 0.25
	done
	return 1
}
check "log: hisi_ptt1_1 is back before the end" log_until "hisi_ptt1_1: PTT device back" 25
sleep 2
stop_collectd
t_end=$(date +%s)

grep -E "\[error\]|hisi_ptt.*(moved|stopped|whole|gone|back)" "$log" | head -20 | sed 's/^/# /'
check "log: no errors" eval '! grep -q "\[error\]" "$log"'
for f in 06:00.0 07:00.0 07:03.0 08:00.0 0b:00.0; do
	check "log: 0000:$f gone once ($(grep -c "0000:$f: PCI function gone" "$log"))" \
		[ "$(grep -c "0000:$f: PCI function gone" "$log")" = 1 ]
	check "log: 0000:$f appeared once ($(grep -c "0000:$f: PCI function appeared" "$log"))" \
		[ "$(grep -c "0000:$f: PCI function appeared" "$log")" = 1 ]
done
check "log: the Root Port 00:10.0 never went" eval '! grep -q "0000:00:10.0: PCI function" "$log"'
# The driver of hisi_pcie1_core0 is unbound at 5 s and bound again at 8 s.
check "log: hisi_pcie1_core0's PMU gone once" \
	[ "$(grep -c "hisi_pcie1_core0: PMU gone (its driver was unbound)" "$log")" = 1 ]
check "log: ... and back once, with its new perf type" \
	[ "$(grep -c "hisi_pcie1_core0: PMU back (perf type 28739)" "$log")" = 1 ]
# CPU 0, where SICL 0's three PMUs count, goes offline at 12 s.
# With them its three PTT devices: their windows open on CPU 1 from then on.
check "log: each PMU on CPU 0 moved its cpumask once ($(grep -c "hisi_pcie0_core[0-2]: cpumask moved from CPU 0 to CPU 1" "$log"))" \
	[ "$(grep -c "hisi_pcie0_core[0-2]: cpumask moved from CPU 0 to CPU 1" "$log")" = 3 ]
check "log: ... and each PTT device on it once ($(grep -c "hisi_ptt0_[0-2]: cpumask moved from CPU 0 to CPU 1 (a CPU went offline); trace windows open there" "$log"))" \
	[ "$(grep -c "hisi_ptt0_[0-2]: cpumask moved from CPU 0 to CPU 1 (a CPU went offline); trace windows open there" "$log")" = 3 ]
check "log: nothing else moved" [ "$(grep -c "cpumask moved" "$log")" = 6 ]
check "log: no PTT window failed" eval '! grep -q "trace window failed" "$log"'
# The PTT driver stops hisi_ptt0_0's trace at 16.1, 16.5 and 16.9 s: a
# window open then (in real time its phase is not ours to choose; and the
# device may have stopped already on a full buffer, which is not a driver
# stop) is logged once, and the next window is whole again. The unit test
# (test_hotplug, under a fake clock) requires the stop to be seen.
stops=$(grep -c "hisi_ptt0_0: the driver stopped the trace before the window ended" "$log")
echo "# hisi_ptt0_0's driver stop seen in $stops window episode(s)"
check "log: hisi_ptt0_0's stopped trace logged at most once ($stops)" [ "$stops" -le 1 ]
check "log: ... and, if so, its next window is whole ($(grep -c "hisi_ptt0_0: trace windows whole again" "$log"))" \
	[ "$(grep -c "hisi_ptt0_0: trace windows whole again" "$log")" = "$stops" ]
check "log: no other device's trace was stopped but by hisi_ptt1_1's unbind" \
	eval '! grep "the driver stopped the trace" "$log" | grep -qv "hisi_ptt0_0\|hisi_ptt1_1"'
# hisi_ptt1_1's driver is unbound at 26.1 s and bound again at 29 s.
check "log: hisi_ptt1_1 gone once" \
	[ "$(grep -c "hisi_ptt1_1: PTT device gone (its driver was unbound)" "$log")" = 1 ]
check "log: ... and back once, with its new perf type" \
	[ "$(grep -c "hisi_ptt1_1: PTT device back (perf type 31300)" "$log")" = 1 ]
# cx7-p1 (01:00.1) is absent when collectd starts (removed at 0 s) and
# added at 18 s: the monitor's rescan makes hisi_pcie0_core0 count it, no
# restart, logged once.
check "log: 0000:01:00.1 appeared once" \
	[ "$(grep -c "0000:01:00.1: PCI function appeared" "$log")" = 1 ]
check "log: ... and hisi_pcie0_core0 counts it from then on, said once" \
	[ "$(grep -c "hisi_pcie0_core0: 0000:01:00.1 appeared below Root Port 0000:00:00.0; its bandwidth is counted from now on" "$log")" = 1 ]
late='pcie_device_bandwidth_bytes_per_second{device="0000:01:00.1",direction="rx",tlp="mwr"}'
v=$(qv "$prom_url" "$late" "$t_before")
check "Prometheus: no per-device series of 01:00.1 while it was absent ('$v')" [ -z "$v" ]
v=$(qv "$prom_url" "$late" "$((t_end - 3))")
check "Prometheus: 01:00.1's DMA writes after it was added ($v B/s)" \
	awk -v v="${v:-0}" 'BEGIN { exit !(v > 1e9) }'
v=$(qv "$prom_url" 'sum(pcie_port_bandwidth_bytes_per_second{pmu="hisi_pcie1_core0",direction="rx",tlp="mwr"})' "$t_after")
check "Prometheus: hisi_pcie1_core0 counts again after its rebind ($v B/s)" \
	awk -v v="${v:-0}" 'BEGIN { exit !(v > 1e9) }'

lw="pcie_link_width_lanes{$nvme3,state=\"current\"}"
v=$(qv "$prom_url" "$lw" "$t_before")
check "Prometheus: 08:00.0's link width before ($v lanes)" [ "$v" = 4 ]
v=$(qv "$prom_url" "$lw" "$t_during")
check "Prometheus: stale while it is gone (no value at the removal's +7 s: '$v')" [ -z "$v" ]
v=$(qv "$prom_url" "$lw" "$t_after")
check "Prometheus: back after the rescan ($v lanes)" [ "$v" = 4 ]
bw='sum(pcie_port_bandwidth_bytes_per_second{port="0000:00:10.0",direction="rx",tlp="mwr"})'
# Just before the removal (the series leave the page 2-3 s after it).
before=$(qv "$prom_url" "$bw" "$((t_gone - 4))")
during=$(qv "$prom_url" "$bw" "$t_during")
after=$(qv "$prom_url" "$bw" "$t_after")
check "the PMU of 00:10.0 counts on: DMA writes $before B/s, $during B/s without the switch, $after B/s back" \
	awk -v b="${before:-0}" -v d="${during:--1}" -v a="${after:-0}" \
	'BEGIN { exit !(b > 1e9 && d >= 0 && d < 1e6 && a > 1e9) }'
other=$(qv "$prom_url" 'sum(pcie_port_bandwidth_bytes_per_second{port="0000:00:00.0",direction="rx",tlp="mwr"})' "$t_during")
check "the other units keep counting (00:00.0: $other B/s while the switch is gone)" \
	awk -v v="${other:-0}" 'BEGIN { exit !(v > 1e9) }'
range=$((t_end - t0 + 5))
# Each series keeps its name in a label, so that the _over_time functions
# (which drop __name__) never see two series with the same labels.
all="label_replace({__name__=~\"pcie_.+\"}, \"name\", \"\$1\", \"__name__\", \"(.+)\")"
n=$(qv "$prom_url" "count(min_over_time(${all}[${range}s:1s]))" "$t_end")
neg=$(qv "$prom_url" "count(min_over_time(${all}[${range}s:1s]) < 0)" "$t_end")
check "no value of the $n pcie series was ever negative (${neg:-0} series)" \
	eval '[ "${n:-0}" -gt 500 ] && [ -z "$neg" ]'
util=$(qv "$prom_url" "max(max_over_time(pcie_port_utilization_ratio[${range}s]))" "$t_end")
check "no utilisation above 1 (max $util)" awk -v v="${util:-2}" 'BEGIN { exit !(v > 0 && v <= 1) }'
done_testing
