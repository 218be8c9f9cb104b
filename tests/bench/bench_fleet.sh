#!/bin/bash
# bench_fleet.sh - what one host costs a fleet (issue 12), on the simulated
# machines: series per machine and Detail level against the budget of
# 1,500; collectd's RSS after BENCH_FLEET_SECONDS (60) with the pcie plugin
# on kunpeng930-2p, default options, against the goal of 48 MiB, built up
# component by component; and the daemon's CPU, split into the collector
# threads, the simulation inside them, and the rest. Not a test: numbers.
#
#   bench_fleet.sh BUILDDIR SRCDIR
#
# The four daemons run at the same time (same clock, two cores): RSS does
# not depend on it; CPU seconds are each process's own.
set -u
build=$(cd "${1:-.}" && pwd)
src=$(cd "${2:-.}" && pwd)
seconds=${BENCH_FLEET_SECONDS:-60}
budget_series=1500
budget_mib=48
tool="$build/tests/tools/golden_stream"
so="$build/plugin/.libs/pcie.so"
collectd=${COLLECTD:-$(command -v collectd || echo /usr/sbin/collectd)}
tmp=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT

# ---- series ----
if [ -x "$tool" ]; then
	for m in kunpeng930-2p kunpeng930-misconfig spr-2s; do
		line="series on $m over 40 s:"
		for d in basic default full; do
			n=$("$tool" --series "$src/sim/machines/$m.json" - 40 "Detail=$d" | awk '$1 == "total" { print $2 }')
			line="$line $d $n"
			[ "$d" = default ] && def=$n
		done
		echo "$line; default/budget $(awk -v a="$def" -v b=$budget_series 'BEGIN { printf "%.2f", a / b }') (budget $budget_series)"
	done
else
	echo "bench_fleet: $tool not built (make check builds it): no series counts"
fi

# ---- memory and CPU ----
[ -x "$collectd" ] || { echo "bench_fleet: collectd is not installed: no memory or CPU numbers"; exit 0; }
[ -f "$so" ] || { echo "bench_fleet: the pcie plugin was not built: no memory or CPU numbers"; exit 0; }
mkdir -p "$tmp/plugins"
cp "$so" /usr/lib/collectd/logfile.so /usr/lib/collectd/network.so "$tmp/plugins/"

conf() { # NAME, then the <Plugin pcie> lines ("none": no pcie plugin)
	local name=$1 line
	shift
	{
		cat <<CONF
Hostname "bench"
BaseDir "$tmp"
PIDFile "$tmp/$name.pid"
PluginDir "$tmp/plugins"
Interval 1
LoadPlugin logfile
<Plugin logfile>
  LogLevel info
  File "$tmp/$name.log"
</Plugin>
# A write plugin that costs little: UDP to a port nobody reads.
LoadPlugin network
<Plugin network>
  Server "127.0.0.1" "25826"
</Plugin>
CONF
		if [ "${1:-}" != none ]; then
			echo "LoadPlugin pcie"
			echo "<Plugin pcie>"
			echo "  Simulate \"kunpeng930-2p\""
			echo "  MachineDirectory \"$src/sim/machines\""
			for line; do echo "  $line"; done
			echo "</Plugin>"
		fi
	} >"$tmp/$name.conf"
}
conf alone none
conf monitor "CollectPMU false" "CollectTrace false" "CollectTune false"
conf pmu "CollectTrace false"
conf all
names=(alone monitor pmu all)
for name in "${names[@]}"; do
	TMPDIR="$tmp" "$collectd" -f -C "$tmp/$name.conf" >"$tmp/$name.out" 2>&1 &
	pids+=($!)
done
sleep "$seconds"
declare -A rss hwm cpu
for i in "${!names[@]}"; do
	p=${pids[$i]} name=${names[$i]}
	if [ ! -r "/proc/$p/status" ]; then
		echo "bench_fleet: collectd ($name) died: $(tail -c 300 "$tmp/$name.out")"
		exit 0
	fi
	rss[$name]=$(awk '/^VmRSS:/ { print $2 }' "/proc/$p/status")
	hwm[$name]=$(awk '/^VmHWM:/ { print $2 }' "/proc/$p/status")
	cpu[$name]=$(awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$p/stat")
done
for name in monitor pmu all; do
	if grep -q "Initialization of plugin .pcie. failed" "$tmp/$name.log"; then
		echo "bench_fleet: the pcie plugin did not start ($name): $(grep 'pcie plugin' "$tmp/$name.log" | head -n 1)"
		exit 0
	fi
done
# The "all" daemon's simulated tree: files and their bytes.
tree_dir=$(ls -d "$tmp/pciescope-sim-${pids[3]}-"* 2>/dev/null | head -n 1)
tree_files=$(find "$tree_dir" -type f 2>/dev/null | wc -l)
tree=$(du -sk --apparent-size "$tree_dir" 2>/dev/null | awk '{ print $1 + 0 }')
for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
pids=()
# "... N collector threads used X s of CPU, Y s of it inside the simulated
# perf calls; refreshing the simulated tree took Z s"
read -r th sim refresh < <(sed -n 's/.*collector threads used \([0-9.]*\) s of CPU, \([0-9.]*\) s of it inside the simulated perf calls; refreshing the simulated tree took \([0-9.]*\) s.*/\1 \2 \3/p' "$tmp/all.log" | tail -n 1)

awk -v a="${rss[alone]}" -v m="${rss[monitor]}" -v p="${rss[pmu]}" -v t="${rss[all]}" \
	-v peak="${hwm[all]}" -v ppeak="${hwm[pmu]}" -v s="$seconds" -v goal="$budget_mib" -v tree="${tree:-0}" -v files="${tree_files:-0}" 'BEGIN {
	mib = 1024
	printf "RSS after %d s on kunpeng930-2p (default options): collectd alone %.1f MiB; + pcie topology/audit/AER %.1f MiB; + PMU collectors %.1f MiB (PMU only: %.1f MiB, peak %.1f); + PTT windows %.1f MiB: %.1f MiB in all, peak %.1f MiB while a window maps its 16 MiB AUX area; goal <= %d MiB: ratio %.2f (%s); the simulated tree: %d files, %.2f MiB (on disk, outside the RSS)\n",
		s, a / mib, (m - a) / mib, (p - m) / mib, p / mib, ppeak / mib, (t - p) / mib, t / mib, peak / mib, goal, t / mib / goal, t / mib <= goal ? "met" : "NOT met", files, tree / mib
}'
awk -v a="${cpu[alone]}" -v m="${cpu[monitor]}" -v p="${cpu[pmu]}" -v t="${cpu[all]}" -v s="$seconds" \
	-v th="${th:-0}" -v sim="${sim:-0}" -v refresh="${refresh:-0}" 'BEGIN {
	printf "CPU over %d s, %% of one core: collectd alone %.1f %%; with pcie (PMU + PTT) %.1f %% = collector threads %.1f %% (the simulated perf calls in them %.1f %%, the collectors themselves %.1f %%) + the read thread and the rest %.1f %% (collectd, network, topology/audit/AER: %.1f %% with PMU and PTT off, %.1f %% of it refreshing the simulated AER files); PMU only %.1f %%; simulator in all %.1f %%, collectors %.1f %%\n",
		s, 100 * a / s, 100 * t / s, 100 * th / s, 100 * sim / s, 100 * (th - sim) / s, 100 * (t - th) / s, 100 * (m - a) / s, 100 * refresh / s, 100 * p / s, 100 * (sim + refresh) / s, 100 * (t - a - sim - refresh) / s
}'
