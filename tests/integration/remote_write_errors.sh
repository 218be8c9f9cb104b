#!/bin/bash
# remote_write_errors.sh - a request Prometheus 2.42 refuses with 400 (a
# series whose samples are two hours old: "out of bounds") is dropped and
# counted under the reason read from the answer (out_of_bounds), its answer
# logged (once a minute at most), and the queue does not stall: every other
# series keeps arriving completely.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rw_lib.sh"
rw_require_plugin
[ -x "$PROMETHEUS" ] || skip_all "prometheus is not installed"

start_prometheus prom
check "prom: receiver is up" wait_http "$prom_url/-/ready" 30
# One sample per request, so the refused series cannot take good samples
# down with it (Prometheus rolls back the whole request on an error).
RW_PAST=true collectd_conf "$rw_tmp/c.conf" "$rw_tmp/c.log" \
	"StaleOnShutdown false" \
	"<Endpoint \"prom\">" "URL \"$prom_url/api/v1/write\"" "BatchDeadline 0.2" \
	"MaxSamplesPerSend 1" "</Endpoint>"
start_collectd "$rw_tmp/c.conf"
sleep 7
t=$(date +%s)
stop_collectd
reads=$(sed -n 's/.*rw_testsrc: \([0-9]*\) reads.*/\1/p' "$rw_tmp/c.log")

check "the 400 was logged with the receiver's answer" log_has "$rw_tmp/c.log" 'endpoint "prom": HTTP 400, dropped 1 samples \(not retryable, reason out_of_bounds\): .*out of bounds'
nlog=$(grep -c 'HTTP 400' "$rw_tmp/c.log")
check "logged once, not once per refused request ($nlog)" [ "$nlog" = 1 ]
check "nothing of the refused series was stored" [ -z "$(q "$prom_url" 'count_over_time(rwtest_past[4h])' "$t")" ]
raw=$(q "$prom_url" 'rwtest_sequence_total[10m]' "$t" | awk '{for (i = 2; i <= NF; i++) {split($i, a, "@"); printf "%s ", a[1]}}')
n=$(echo $raw | awk '{print $NF}')
check "the queue did not stall: the sequence is complete 1..$n (got: $raw)" [ "$raw" = "$(seq -s ' ' 1 "$n") " ]
check "and reached the last reads (n = $n of $reads reads)" [ "${n:-0}" -ge $((reads - 1)) ]
failed=$(qv "$prom_url" 'max_over_time(remote_write_samples_failed_total[10m])' "$t")
dropped=$(qv "$prom_url" 'max_over_time(remote_write_samples_dropped_total{reason="out_of_bounds"}[10m])' "$t")
check "self-metrics count the refused samples (failed $failed, dropped{reason=\"out_of_bounds\"} $dropped)" \
	awk -v f="$failed" -v d="$dropped" -v n="$n" 'BEGIN { exit !(f >= n - 2 && f == d) }'
check "none retried" [ "$(qv "$prom_url" 'max_over_time(remote_write_samples_retried_total[10m])' "$t")" = 0 ]
done_testing
