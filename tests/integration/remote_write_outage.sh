#!/bin/bash
# remote_write_outage.sh - the receiver (VictoriaMetrics 1.79, which stores
# duplicates as they come, so a resent sample would show) is stopped for
# 30 s while collectd keeps producing, then started again on the same port
# and data directory. With a spool, every sample of the run arrives exactly
# once and in order: no loss, no duplicate; the self-metrics show the
# retries and the spool in use and nothing dropped. (ReplayShare 0: the
# backlog goes at once, so the test need not wait 30 s more for a paced
# replay; remote_write_fleet.sh tests the pace.)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rw_lib.sh"
rw_require_plugin
[ -x "$VICTORIA_METRICS" ] || skip_all "victoria-metrics is not installed"

start_vm vm
check "vm: receiver is up" wait_http "$vm_url/health" 30
collectd_conf "$rw_tmp/c.conf" "$rw_tmp/c.log" \
	"StaleOnShutdown false" \
	"<Endpoint \"vm\">" "URL \"$vm_url/api/v1/write\"" "BatchDeadline 0.5" \
	"MaxSamplesPerSend 500" "MaxBackoff 1" "Timeout 3" "ReplayShare 0" \
	"SpoolDir \"$rw_tmp/spool\"" "</Endpoint>"
start_collectd "$rw_tmp/c.conf"
sleep 5
kill "$vm_pid" && wait "$vm_pid" 2>/dev/null
down_at=$(date +%s)
sleep 30
# Samples piled up on disk meanwhile.
spooled=$(du -sb "$rw_tmp/spool" | cut -f1)
start_vm vm "$vm_port"
check "vm: receiver is up again after 30 s" wait_http "$vm_url/health" 30
sleep 8
t=$(date +%s)
stop_collectd
curl -s "$vm_url/internal/force_flush" >/dev/null
sleep 1

check "the spool grew while the receiver was down ($spooled bytes)" [ "$spooled" -gt 4096 ]
check "the plugin logged the failure and retried" log_has "$rw_tmp/c.log" 'endpoint "vm": no answer: .*retrying'
check "collectd logged no ERROR" bash -c "! grep -q '\[error\]' '$rw_tmp/c.log'"
# Raw samples straight from storage: 1..n, each once (n: the last read
# that reached the receiver before collectd stopped).
vals=$(curl -sfG "$vm_url/api/v1/export" --data-urlencode 'match[]=rwtest_sequence_total' |
	"$PYTHON3" -c 'import json,sys; print(" ".join(str(int(v)) for v in json.loads(sys.stdin.readline())["values"]))')
n=${vals##* }
reads=$(sed -n 's/.*rw_testsrc: \([0-9]*\) reads.*/\1/p' "$rw_tmp/c.log")
check "reads before, during and after the outage ($n >= 40)" [ "${n:-0}" -ge 40 ]
check "the last read arrived too (collectd made $reads reads, $n arrived)" [ "$reads" = "$n" ]
check "every sequence sample arrived exactly once, in order (1..$n)" [ "$vals" = "$(seq -s ' ' 1 "$n")" ]
if [ "$vals" != "$(seq -s ' ' 1 "$n")" ]; then echo "# got: $vals"; fi
for m in collectd_rwtest_gauge collectd_rwtest_if_octets_tx_total rwtest_latency_seconds_bucket; do
	c=$(curl -sfG "$vm_url/api/v1/export" --data-urlencode "match[]=$m" |
		"$PYTHON3" -c 'import json,sys
c = set()
for line in sys.stdin:
    c.add(len(json.loads(line)["timestamps"]))
print(" ".join(map(str, sorted(c))))')
	check "$m: $n samples per series, no more, no less (got $c)" [ "$c" = "$n" ]
done
retried=$(qv "$vm_url" 'max_over_time(remote_write_samples_retried_total[10m])' "$t")
check "self-metric: samples were retried ($retried)" awk -v v="$retried" 'BEGIN { exit !(v > 0) }'
spool_max=$(qv "$vm_url" 'max_over_time(remote_write_spool_bytes[10m])' "$t")
check "self-metric: the spool was used ($spool_max bytes at most)" awk -v v="$spool_max" 'BEGIN { exit !(v > 0) }'
dropped=$(qv "$vm_url" 'sum(max_over_time(remote_write_samples_dropped_total[10m]))' "$t")
check "self-metric: nothing dropped ($dropped)" [ "$dropped" = 0 ]
check "the spool is empty again" [ "$(qv "$vm_url" 'remote_write_spool_bytes' "$t")" = 0 ]
echo "# receiver down at $down_at for 30 s; sequence reached $n"
done_testing
