#!/bin/bash
# remote_write_retry.sh - retries against a scripted receiver
# (tests/tools/rw_fake_receiver.py; real receivers cannot be made to answer
# 503/429 on demand): 503 with Retry-After 2, 429 with Retry-After 1 (with
# Retry429 on), 500, then 204. The same request body is sent each time, the
# waits honour Retry-After and then the capped backoff, and nothing is lost
# or sent twice after the 204. A second endpoint with Retry429 false gets 429
# for ever: its requests are dropped and counted, never resent. A receiver
# that answers 503 with Retry-After 100000 pauses its endpoint RetryAfterMax
# (2 s) only: logged once, counted in remote_write_retry_after_pauses_total;
# its spool then keeps sent records on disk, which remote_write_spool_bytes
# (unsent) leaves out and remote_write_spool_disk_bytes (what du sees) counts.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rw_lib.sh"
rw_require_plugin

port=$(free_port)
"$PYTHON3" "$top_srcdir/tests/tools/rw_fake_receiver.py" "$port" "$rw_tmp/recv.log" 2>"$rw_tmp/recv.err" &
rw_pids+=($!)
# A GET (answered 501) does not use up a scripted answer.
check "the scripted receiver is up" bash -c "for i in \$(seq 1 50); do curl -s -o /dev/null 'http://127.0.0.1:$port/' && exit 0; sleep 0.2; done; exit 1"

collectd_conf "$rw_tmp/c.conf" "$rw_tmp/c.log" "StaleOnShutdown false" "SelfMetrics false" \
	'<Endpoint "retry">' "URL \"http://127.0.0.1:$port/retry\"" 'Retry429 true' 'MinBackoff 0.1' \
	'MaxBackoff 0.5' 'BatchDeadline 0.5' '</Endpoint>' \
	'<Endpoint "noretry">' "URL \"http://127.0.0.1:$port/noretry\"" 'Retry429 false' 'BatchDeadline 0.5' '</Endpoint>'
start_collectd "$rw_tmp/c.conf"
sleep 8
stop_collectd

"$PYTHON3" - "$rw_tmp/recv.log" >"$rw_tmp/verdict" <<'P'
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
r = [q for q in reqs if q["path"] == "/retry"]
n = [q for q in reqs if q["path"] == "/noretry"]
def out(ok, msg):
    print(("ok " if ok else "bad ") + msg)
out(len(r) >= 5, "retry endpoint: %d requests (503, 429, 500, 204, ...)" % len(r))
if len(r) >= 4:
    out(r[0]["sha"] == r[1]["sha"] == r[2]["sha"] == r[3]["sha"],
        "the first batch was sent 4 times, unchanged, until the 204")
    gaps = [r[i + 1]["t"] - r[i]["t"] for i in range(3)]
    out(gaps[0] >= 1.9, "after 503 + Retry-After 2 it waited %.2f s (never less, at most a tenth more)" % gaps[0])
    out(0.9 <= gaps[1] < 1.9, "after 429 + Retry-After 1 (Retry429 on) it waited %.2f s" % gaps[1])
    out(gaps[2] < 0.9, "after 500 it waited a random time below the backoff (2 x Retry-After capped at MaxBackoff 0.5, full jitter): %.2f s" % gaps[2])
    after = [q["sha"] for q in r[3:]]
    out(len(after) == len(set(after)), "after the 204 no batch was sent twice")
out(len(n) >= 3, "noretry endpoint: %d requests" % len(n))
shas = [q["sha"] for q in n]
out(len(shas) == len(set(shas)), "noretry: 429 without Retry429 is never resent")
P
rc=$?
# A verdict script that died would otherwise leave its checks out unseen.
check "the receiver's request log was read (exit $rc)" [ "$rc" = 0 ]
while read -r verdict msg; do
	if [ "$verdict" = ok ]; then ok "$msg"; else not_ok "$msg"; fi
done <"$rw_tmp/verdict"
check "noretry: the 429 is logged with its body" log_has "$rw_tmp/c.log" 'endpoint "noretry": HTTP 429, dropped .*scripted answer 429'
check "retry: the 503 is logged once with its body" [ "$(grep -c 'endpoint "retry": HTTP 503: scripted answer 503; retrying' "$rw_tmp/c.log")" = 1 ]

# ---- Retry-After 100000: paused RetryAfterMax, logged once, counted ----
# The endpoint's self-metrics are read from the openmetrics plugin's page.
om_port=$(free_port)
cp "$top_builddir/plugin/.libs/openmetrics.so" "$rw_tmp/plugins/"
collectd_conf "$rw_tmp/h.conf" "$rw_tmp/h.log" "StaleOnShutdown false" "SelfMetrics true" \
	'<Endpoint "huge">' "URL \"http://127.0.0.1:$port/huge\"" 'RetryAfterMax 2' 'MinBackoff 0.1' \
	"SpoolDir \"$rw_tmp/spool-huge\"" 'SpoolFsync false' \
	'MaxBackoff 0.5' 'BatchDeadline 0.5' '</Endpoint>'
printf 'LoadPlugin openmetrics\n<Plugin openmetrics>\n  Listen "127.0.0.1"\n  Port "%s"\n</Plugin>\n' \
	"$om_port" >>"$rw_tmp/h.conf"
start_collectd "$rw_tmp/h.conf"
pauses() {
	curl -sf "http://127.0.0.1:$om_port/metrics" |
		awk '/^remote_write_retry_after_pauses_total\{.*endpoint="huge"/ { print $2 }'
}
for _ in $(seq 1 40); do
	[ "$(pauses)" = 1 ] && break
	sleep 0.25
done
seen=$(pauses)
sleep 5
curl -sf "http://127.0.0.1:$om_port/metrics" >"$rw_tmp/h.page"
du_bytes=$(cat "$rw_tmp"/spool-huge/*.spool 2>/dev/null | wc -c)
stop_collectd
gauge() { awk -v m="$1" '$1 ~ "^"m"\\{.*endpoint=\"huge\"" { print $2 }' "$rw_tmp/h.page"; }
read -r gap after <<<"$("$PYTHON3" -c '
import json, sys
r = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
r = [q for q in r if q["path"] == "/huge"]
print("%.2f %d" % (r[1]["t"] - r[0]["t"], sum(q["status"] == 204 for q in r)) if len(r) > 1 else "none 0")
' "$rw_tmp/recv.log")"
check "huge: after 503 + Retry-After 100000 it sent again after $gap s (RetryAfterMax 2)" \
	awk -v g="$gap" 'BEGIN { exit !(g + 0 >= 1.9 && g + 0 < 4) }'
check "huge: and the receiver took the next requests ($after answered 204)" [ "$after" -ge 2 ]
check "huge: the pause is logged once, with the receiver's value and the one used" \
	[ "$(grep -c 'endpoint "huge": HTTP 503 with Retry-After 100000 s: pausing 2 s (RetryAfterMax)' "$rw_tmp/h.log")" = 1 ]
check "huge: remote_write_retry_after_pauses_total{endpoint=\"huge\"} counts it (${seen:-absent})" [ "$seen" = 1 ]
unsent=$(gauge remote_write_spool_bytes)
ondisk=$(gauge remote_write_spool_disk_bytes)
check "huge: once sending again, sent records stay on disk: remote_write_spool_bytes ${unsent:-absent} (unsent) below remote_write_spool_disk_bytes ${ondisk:-absent}" \
	awk -v u="${unsent:-x}" -v d="${ondisk:-0}" 'BEGIN { exit !(u ~ /^[0-9]+$/ && u + 0 < d + 0) }'
check "huge: remote_write_spool_disk_bytes ${ondisk:-absent} is what the segments hold on disk ($du_bytes; within one interval's batch)" \
	awk -v a="${ondisk:-0}" -v b="$du_bytes" 'BEGIN { exit !(a > 0 && b > 0 && a <= b && b - a < 65536) }'
done_testing
