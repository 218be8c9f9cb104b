#!/bin/bash
# remote_write_pcie.sh - end to end: the pcie plugin on the simulated
# Kunpeng 930 (PMU counters and PTT trace windows) with remote_write into
# Debian's real Prometheus 2.42. Every pcie value arrives under its
# Prometheus name with its labels (from the prom.* meta data), and the PTT
# latency histogram answers histogram_quantile() consistently with the
# plugin's own quantile gauge.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rw_lib.sh"
rw_require_plugin
[ -x "$PROMETHEUS" ] || skip_all "prometheus is not installed"
SO="$top_builddir/plugin/.libs/pcie.so"
[ -f "$SO" ] || skip_all "the pcie plugin was not built"
cp "$SO" "$rw_tmp/plugins/"

start_prometheus prom
check "prometheus is up" wait_http "$prom_url/-/ready" 30
pcie_collectd_conf "$rw_tmp/c" rwtest-host kunpeng930-2p -e prom "$prom_url"
t0=$(date +%s)
start_collectd "$rw_tmp/c/c.conf"
sleep 9
t=$(date +%s)
stop_collectd
check "log: no errors" eval '! grep -q "\[error\]" "$rw_tmp/c/c.log"'

v=$(qv "$prom_url" 'pcie_port_bandwidth_bytes_per_second{port="0000:00:00.0",direction="rx",tlp="mwr",pmu="hisi_pcie0_core0",simulated="kunpeng930-2p"}' "$t")
check "port bandwidth arrives with its labels ($v B/s)" awk -v v="${v:-0}" 'BEGIN { exit !(v > 1e9) }'
v=$(qv "$prom_url" 'pcie_link_width_lanes{bdf="0000:01:00.0",state="current"}' "$t")
check "link width of 01:00.0 ($v lanes)" [ "$v" = "16" ]
v=$(qv "$prom_url" 'count(pcie_ptt_completion_latency_seconds_bucket{pmu="hisi_ptt0_0",completion="last"})' "$t")
check "the PTT latency histogram has its buckets ($v series)" [ "${v:-0}" -ge 20 ]
hq=$(qv "$prom_url" 'histogram_quantile(0.5, sum by (le) (pcie_ptt_completion_latency_seconds_bucket{pmu="hisi_ptt0_0",completion="last"}))' "$t")
p50=$(qv "$prom_url" 'pcie_ptt_completion_latency_quantile_seconds{pmu="hisi_ptt0_0",completion="last",percentile="50"}' "$t")
check "histogram_quantile(0.5) = $hq s agrees with the plugin's p50 $p50 s within a bucket (x2)" \
	awk -v a="${hq:-0}" -v b="${p50:-0}" 'BEGIN { exit !(a > 0 && b > 0 && a <= 2 * b && b <= 2 * a) }'
c=$(qv "$prom_url" 'pcie_ptt_completion_latency_seconds_count{pmu="hisi_ptt0_0",completion="last"}' "$t")
inf=$(qv "$prom_url" 'pcie_ptt_completion_latency_seconds_bucket{pmu="hisi_ptt0_0",completion="last",le="+Inf"}' "$t")
check "_count ($c) = the +Inf bucket ($inf)" eval '[ -n "$c" ] && [ "$c" = "$inf" ]'
v=$(qv "$prom_url" 'sum(pcie_ptt_tlps_total{pmu="hisi_ptt0_0"})' "$t")
check "PTT TLP counters arrive ($v TLPs)" awk -v v="${v:-0}" 'BEGIN { exit !(v > 0) }'
v=$(qv "$prom_url" 'pcie_simulation_info{machine="kunpeng930-2p"}' "$t")
check "the simulation is said in the data too (pcie_simulation_info $v)" [ "$v" = "1" ]
# The series budget (docs/metrics.md) counts what the engine emits; what
# Prometheus stores must be the same series: every one of them among those
# the engine emits over 40 s with the same options, and at most 1,500.
series "$prom_url" '{__name__=~"pcie_.+"}' "$t0" "$((t + 1))" |
	sed -E 's/(^|,)instance=[^,]*//; s/^,//' | sort -u >"$rw_tmp/prom.series"
"$top_builddir/tests/tools/golden_stream" --series-list "$top_srcdir/sim/machines/kunpeng930-2p.json" - 40 \
	TraceDuration=0.2 TracePeriod=2 MaxConcurrentTraces=2 | sort -u >"$rw_tmp/engine.series"
n=$(wc -l <"$rw_tmp/prom.series")
check "Prometheus stores $n pcie_* series: at most 1500 (the default Detail)" eval '[ "$n" -gt 500 ] && [ "$n" -le 1500 ]'
extra=$(comm -23 <(series_shape "$rw_tmp/prom.series") <(series_shape "$rw_tmp/engine.series") | head -5)
check "every stored series is one the engine emits (budget counted as stored; a PTT window's top requesters: any function)" [ -z "$extra" ]
[ -n "$extra" ] && echo "$extra" | sed 's/^/# not emitted by the engine: /'
stranger=$(comm -23 <(series_requesters "$rw_tmp/prom.series") <(machine_bdfs kunpeng930-2p) | head -5)
check "every PTT top requester is a function of the machine" [ -z "$stranger" ]
[ -n "$stranger" ] && echo "$stranger" | sed 's/^/# not a function of kunpeng930-2p: /'
done_testing
