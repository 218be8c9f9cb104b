#!/bin/bash
# collectd_iio.sh - Debian's real collectd runs the plugin on the simulated
# Sapphire Rapids (Simulate "spr-2s"): one collector thread per socket counts
# the uncore_iio_free_running_* PMUs; per-part inbound bandwidth in csv
# matches the model's ground truth within 1 % on both kernel scale variants
# (6.15: 32 bytes per count; 6.12: the pre-fix 4-byte scale, corrected);
# stacks named by IIOStackBus carry their Root Ports and utilisation, and so
# do the others, mapped from the uncore's CPU bus registers; the PMON
# discovery inventory is published; names and labels travel as meta.
. "$(dirname "$0")/lib.sh"

sim_collectd_setup
TRUTH="$top_builddir/tests/tools/sim_truth"
MACHINE="$top_srcdir/sim/machines/spr-2s.json"

write_conf() { # conf, csv dir, log, kernel
	# SPR kernels do not map IIO stacks to buses: the stacks of socket 0 are
	# named here (the configuration wins), those of socket 1 are mapped from
	# the CPU bus registers the simulator writes.
	sim_collectd_conf "$1" "$2" "$3" spr "Simulate \"$MACHINE\"" "SimulateKernel \"$4\"" \
		"CollectAER false" \
		'IIOStackBus "uncore_iio_free_running_2" 0 "0000:15"' \
		'IIOStackBus "uncore_iio_free_running_4" 0 "0000:26"' \
		'IIOStackBus "uncore_iio_6" 0 "0000:37"'
}

last_value() { tail -n 1 "$1" | cut -d, -f2; }
csvfile() { ls "$1/spr/pcie-$2/$3"-* 2>/dev/null | head -n 1; }
within() { awk -v v="$1" -v t="$2" 'BEGIN { d = v - t; if (d < 0) d = -d; exit !(t > 0 && d <= 0.01 * t) }'; }

"$TRUTH" "$MACHINE" 0 1 >"$tmp/truth"

for kernel in 6.15 6.12; do
	write_conf "$tmp/$kernel.conf" "$tmp/csv-$kernel" "$tmp/$kernel.log" "$kernel"
	"$COLLECTD" -f -C "$tmp/$kernel.conf" >"$tmp/$kernel.out" 2>&1 &
	pid=$!
	sleep 5
	kill "$pid" && wait "$pid"
	rc=$?
	pid=
	log="$tmp/$kernel.log"
	csv="$tmp/csv-$kernel"
	check "$kernel: collectd exits cleanly (rc $rc)" [ "$rc" -eq 0 ]
	check "$kernel: log says the simulation" grep -q 'SIMULATED machine "spr-2s" (kernel '"$kernel"')' "$log"
	check "$kernel: log: no errors" eval '! grep -q "\[error\]" "$log"'
	check "$kernel: one collector thread per socket" \
		eval 'grep -q "iio-socket0: counting 3 measurements" "$log" && grep -q "iio-socket1: counting 2 measurements" "$log"'
	if [ "$kernel" = 6.12 ]; then
		check "6.12: the pre-fix 4-byte scale is corrected, and said" grep -q '506f981ab40f' "$log"
	else
		check "6.15: the kernel's scale is used as it is" eval '! grep -q "506f981ab40f" "$log"'
	fi
	n=0
	while read -r tag socket box part port bytes constant; do
		[ "$tag" = iio ] && [ "$constant" = 1 ] || continue
		awk -v b="$bytes" 'BEGIN { exit !(b > 0) }' || continue
		f=$(csvfile "$csv" "s$socket-iio$box" "pmu_bandwidth-part$part-rx")
		v=$(last_value "$f" 2>/dev/null)
		check "$kernel: socket $socket stack $box part $part ($port) inbound $v B/s within 1% of truth $bytes" \
			within "${v:-0}" "$bytes"
		n=$((n + 1))
	done <"$tmp/truth"
	check "$kernel: ground truth compared for $n parts" [ "$n" -ge 5 ]
done

csv="$tmp/csv-6.15"
log="$tmp/6.15.log"
f=$(csvfile "$csv" s0-iio2 pmu_utilization-part0-rx-raw)
check "mapped stack: utilisation of 0000:15:01.0's link is a ratio ($(last_value "$f" 2>/dev/null))" \
	awk -v v="$(last_value "$f" 2>/dev/null)" 'BEGIN { exit !(v > 0 && v < 1) }'
f=$(csvfile "$csv" s1-iio2 pmu_utilization-part0-rx-raw)
check "stack mapped by the CPU bus registers: utilisation of 0000:97:01.0's link ($(last_value "$f" 2>/dev/null))" \
	awk -v v="$(last_value "$f" 2>/dev/null)" 'BEGIN { exit !(v > 0 && v < 1) }'
check "write_log: a part mapped by the registers carries its Root Port" \
	grep -q '"prom.name":"pcie_port_bandwidth_bytes_per_second".*"prom.label.pmu":"uncore_iio_free_running_2","prom.label.socket":"1".*"prom.label.port":"0000:97:01.0","prom.label.direction":"rx"' "$log"
check "write_log: a mapped part carries its Root Port as port label" \
	grep -q '"prom.name":"pcie_port_bandwidth_bytes_per_second".*"prom.label.pmu":"uncore_iio_free_running_2","prom.label.socket":"0".*"prom.label.port":"0000:15:01.0","prom.label.direction":"rx"' "$log"
check "write_log: stack info says how each stack was mapped" \
	eval 'grep -q "\"prom.label.mapping\":\"config\"" "$log" && grep -q "\"prom.label.mapping\":\"registers\"" "$log" && ! grep -q "\"prom.label.mapping\":\"unmapped\"" "$log"'
f=$(csvfile "$csv" 0000:7e:00.1 uncore_units-IMC-MMIO)
check "inventory: 8 IMC boxes on socket 0's discovery table ($(last_value "$f" 2>/dev/null))" \
	[ "$(last_value "$f" 2>/dev/null)" = "8.000000" ]
f=$(csvfile "$csv" 0000:fe:00.1 uncore_info-discovery)
check "inventory: socket 1's discovery function is published" [ "$(last_value "$f" 2>/dev/null)" = "1.000000" ]
check "6.15: no bw_out estimate (the kernel removed bw_out)" \
	eval '! grep -q "pcie_iio_bw_out_estimate_bytes_per_second" "$log"'
check "6.12: bw_out estimates where the kernel still offers them" \
	grep -q '"prom.name":"pcie_iio_bw_out_estimate_bytes_per_second"' "$tmp/6.12.log"
f=$(csvfile "$csv" iio-socket0 collector_cpu_seconds)
check "collector CPU time is published ($(last_value "$f" 2>/dev/null) s)" \
	awk -v v="$(last_value "$f" 2>/dev/null)" 'BEGIN { exit !(v > 0 && v < 1) }'

# The first interval has rates: the plugin reads the free-running counters
# once at start, so the socket's first tick publishes bandwidth together
# with its CPU time (without that baseline, bandwidth began a tick later).
first_time() { sed -n 2p "$1" 2>/dev/null | cut -d, -f1; }
t_bw=$(first_time "$(csvfile "$csv" s0-iio2 pmu_bandwidth-part0-rx)")
t_cpu=$(first_time "$(csvfile "$csv" iio-socket0 collector_cpu_seconds)")
check "first interval has IIO rates (first bandwidth at ${t_bw:-none}, first tick at ${t_cpu:-none})" \
	awk -v a="$t_bw" -v b="$t_cpu" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a > 0 && b > 0 && d < 0.5) }'

done_testing
