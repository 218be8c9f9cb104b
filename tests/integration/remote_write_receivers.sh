#!/bin/bash
# remote_write_receivers.sh - a real collectd with remote_write and the test
# source sends to Debian's real Prometheus 2.42 and VictoriaMetrics 1.79
# (both started here on 127.0.0.1 in a temp dir); read back through
# /api/v1/query and /api/v1/series:
#   - every series with the right name and exactly the right labels
#     (write_prometheus naming for stock values, meta names and labels for
#     meta-tagged ones, the empty label left out);
#   - every sample of the run (count per series = number of reads) with
#     the right values;
#   - histogram_quantile over the _bucket series;
#   - the stale marker after a series goes missing;
#   - the plugin's self-metrics.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rw_lib.sh"
rw_require_plugin
[ -x "$PROMETHEUS" ] || [ -x "$VICTORIA_METRICS" ] || skip_all "neither prometheus nor victoria-metrics is installed"

receivers=()
if [ -x "$PROMETHEUS" ]; then
	start_prometheus prom
	receivers+=(prom)
fi
if [ -x "$VICTORIA_METRICS" ]; then
	start_vm vm
	receivers+=(vm)
fi
conf=()
for r in "${receivers[@]}"; do
	url_var="${r}_url"
	if [ "$r" = prom ]; then ready="${!url_var}/-/ready"; else ready="${!url_var}/health"; fi
	check "$r: receiver is up" wait_http "$ready" 30
	conf+=("<Endpoint \"$r\">" "URL \"${!url_var}/api/v1/write\"" "BatchDeadline 0.5" "</Endpoint>")
done
conf+=("StaleOnShutdown false")

collectd_conf "$rw_tmp/c.conf" "$rw_tmp/c.log" "${conf[@]}"
start_collectd "$rw_tmp/c.conf"
sleep 9 # rw_testsrc's late value comes at read 7
t=$(date +%s)
stop_collectd
sleep 1
check "collectd logged no ERROR" bash -c "! grep -q '\[error\]' '$rw_tmp/c.log'"
[ -n "$vm_url" ] && curl -s "$vm_url/internal/force_flush" >/dev/null

expected_series() {
	cat <<'E'
__name__=collectd_rwtest_derive_total,instance=rwtest-host,rwtest=a,type=ops
__name__=collectd_rwtest_gauge,instance=rwtest-host,rwtest=answer
__name__=collectd_rwtest_if_octets_rx_total,instance=rwtest-host,rwtest=b
__name__=collectd_rwtest_if_octets_tx_total,instance=rwtest-host,rwtest=b
__name__=rwtest_latency_seconds_bucket,instance=rwtest-host,le=+Inf
__name__=rwtest_latency_seconds_bucket,instance=rwtest-host,le=0.001
__name__=rwtest_latency_seconds_bucket,instance=rwtest-host,le=0.01
__name__=rwtest_latency_seconds_bucket,instance=rwtest-host,le=0.1
__name__=rwtest_latency_seconds_count,instance=rwtest-host
__name__=rwtest_latency_seconds_sum,instance=rwtest-host
__name__=rwtest_sequence_total,instance=rwtest-host,seq=main
__name__=rwtest_temperature_celsius,instance=rwtest-host,sensor=s1
__name__=rwtest_late,device=queued,instance=rwtest-host
__name__=rwtest_vanishing,device=gone,instance=rwtest-host
E
}

for r in "${receivers[@]}"; do
	url_var="${r}_url"
	u=${!url_var}
	got=$(series "$u" '{__name__=~"rwtest_.*|collectd_rwtest_.*"}' $((t - 600)) "$t" | sort)
	want=$(expected_series | sort)
	if [ "$got" = "$want" ]; then ok "$r: exactly the 14 expected series with their labels"; else
		not_ok "$r: series differ"
		diff <(echo "$want") <(echo "$got") | sed 's/^/# /'
	fi
	n=$(qv "$u" 'rwtest_sequence_total' "$t")
	check "$r: at least 5 reads arrived (sequence at $n)" [ "${n:-0}" -ge 5 ]
	# Every sample: each series has one sample per read.
	# (one name at a time: count_over_time drops __name__, and several
	# series differ only by it)
	counts=$(for m in collectd_rwtest_derive_total collectd_rwtest_gauge collectd_rwtest_if_octets_rx_total \
		collectd_rwtest_if_octets_tx_total rwtest_latency_seconds_bucket rwtest_latency_seconds_count \
		rwtest_latency_seconds_sum rwtest_sequence_total rwtest_temperature_celsius; do
		q "$u" "count_over_time($m[10m])" "$t" | awk '{print $NF}'
	done | sort -u)
	check "$r: every series has exactly $n samples (got: $(echo $counts))" [ "$counts" = "$n" ]
	raw=$(q "$u" 'rwtest_sequence_total[10m]' "$t" | awk '{for (i = 2; i <= NF; i++) {split($i, a, "@"); printf "%s ", a[1]}}')
	check "$r: the sequence is 1..$n in order (got: $raw)" [ "$raw" = "$(seq -s ' ' 1 "$n") " ]
	check "$r: collectd_rwtest_gauge{rwtest=\"answer\"} = 42" [ "$(qv "$u" 'collectd_rwtest_gauge{rwtest="answer"}' "$t")" = 42 ]
	check "$r: derive ops = 10 x sequence" [ "$(qv "$u" 'collectd_rwtest_derive_total{rwtest="a",type="ops"}' "$t")" = $((10 * n)) ]
	check "$r: if_octets rx = n, tx = 2n" [ "$(qv "$u" 'collectd_rwtest_if_octets_rx_total' "$t")/$(qv "$u" 'collectd_rwtest_if_octets_tx_total' "$t")" = "$n/$((2 * n))" ]
	check "$r: temperature 21.5" [ "$(qv "$u" 'rwtest_temperature_celsius' "$t")" = 21.5 ]
	check "$r: histogram _count = 100 n, _sum = 2.5 n" [ "$(qv "$u" 'rwtest_latency_seconds_count' "$t") $(qv "$u" 'rwtest_latency_seconds_sum * 2' "$t")" = "$((100 * n)) $((5 * n))" ]
	p50=$(qv "$u" 'histogram_quantile(0.5, rwtest_latency_seconds_bucket)' "$t")
	p25=$(qv "$u" 'histogram_quantile(0.25, sum by (le) (rate(rwtest_latency_seconds_bucket[1m])))' "$t")
	check "$r: histogram_quantile(0.5) = 0.028 (got $p50)" awk -v v="$p50" 'BEGIN { exit !(v > 0.02799 && v < 0.02801) }'
	check "$r: histogram_quantile(0.25) over rate = 0.0055 (got $p25)" awk -v v="$p25" 'BEGIN { exit !(v > 0.00549 && v < 0.00551) }'
	vc=$(qv "$u" 'count_over_time(rwtest_vanishing[10m])' "$t")
	check "$r: the vanishing series has its 3 samples (got $vc)" [ "$vc" = 3 ]
	# A value collectd still held in its write queue when it reported the
	# series missing: stamped before that report, yet after the stale
	# marker (1 ms after the series' last value), so it is accepted.
	lc=$(qv "$u" 'count_over_time(rwtest_late[10m])' "$t")
	check "$r: the late series has its 4 samples, the queued one too (got $lc)" [ "$lc" = 4 ]
	check "$r: self-metric samples_sent > 0" awk -v v="$(qv "$u" "remote_write_samples_sent_total{endpoint=\"$r\"}" "$t")" 'BEGIN { exit !(v > 0) }'
	dropped=$(qv "$u" "sum(remote_write_samples_dropped_total{endpoint=\"$r\"}) + sum(remote_write_samples_failed_total{endpoint=\"$r\"})" "$t")
	check "$r: nothing dropped or failed (self-metrics: $dropped)" [ "$dropped" = 0 ]
done
# The stale marker: Prometheus answers nothing for the vanished series
# after it (while the samples before it remain); VictoriaMetrics stores the
# marker as a NaN sample.
if [ -n "$prom_url" ]; then
	check "prom: the vanished series is stale (instant query is empty)" [ -z "$(q "$prom_url" 'rwtest_vanishing' "$t")" ]
fi
if [ -n "$vm_url" ]; then
	exp=$(curl -sfG "$vm_url/api/v1/export" --data-urlencode 'match[]=rwtest_vanishing')
	# VictoriaMetrics exports a NaN as null.
	check "vm: the vanished series' 3 samples are followed by the stale NaN ($exp)" \
		bash -c "echo '$exp' | grep -q '\"values\":\[1,1,1,null\]'"
fi
done_testing
