#!/bin/bash
# remote_write_crash.sh - crash drills with a spool, counting every sample at
# a real receiver (VictoriaMetrics, which keeps duplicates, so a resend
# shows): collectd is killed with SIGKILL (1) during an outage and (2) in the
# middle of a slow replay, then started again on the same spool. Expected
# (docs/remote_write.md, "What a crash can cost"): of the killed run, every sample read
# more than BatchDeadline + 1 s before the kill arrives, the sequence has no
# gap, and a sample that arrived twice is an exact resend (same timestamp,
# same value); the next run loses nothing.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rw_lib.sh"
rw_require_plugin
[ -x "$VICTORIA_METRICS" ] || skip_all "victoria-metrics is not installed"

BATCH_DEADLINE=1
# The bound, plus one collection interval (a read is timestamped when it
# starts) and 1 s of slack for a loaded machine.
BOUND_MS=$(((BATCH_DEADLINE + 1 + 1 + 1) * 1000))

# A proxy in front of the receiver: answers 503 while $rw_tmp/proxy.down
# exists, and otherwise forwards each request after $rw_tmp/proxy.delay
# seconds (a slow receiver).
start_proxy() {
	proxy_port=$(free_port)
	"$PYTHON3" - "$proxy_port" "$vm_url" "$rw_tmp" >"$rw_tmp/proxy.log" 2>&1 <<'EOF' &
import http.server, os, sys, time, urllib.request
port, target, ctl = int(sys.argv[1]), sys.argv[2], sys.argv[3]
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers()
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if os.path.exists(ctl + "/proxy.down"):
            self.send_response(503); self.end_headers(); return
        try:
            time.sleep(float(open(ctl + "/proxy.delay").read()))
        except OSError:
            pass
        req = urllib.request.Request(target + self.path, data=body, method="POST")
        for k in ("Content-Encoding", "Content-Type", "X-Prometheus-Remote-Write-Version"):
            if self.headers.get(k):
                req.add_header(k, self.headers[k])
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                code = r.status
        except urllib.error.HTTPError as e:
            code = e.code
        except Exception:
            code = 503
        self.send_response(code); self.end_headers()
    def log_message(self, *a):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", port), H).serve_forever()
EOF
	rw_pids+=($!)
	wait_http "http://127.0.0.1:$proxy_port/" 10 || true
}

now_ms() { date +%s%3N; }

# check_run NAME FROM_MS TO_MS [KILLED_AT_MS]: the sequence samples with a
# timestamp in [FROM, TO): 1..k without a gap, duplicates exact; with
# KILLED_AT, the last one is within the bound of it.
check_run() {
	local name=$1 from=$2 to=$3 killed=${4:-} out
	out=$(curl -sfG "$vm_url/api/v1/export" --data-urlencode 'match[]=rwtest_sequence_total' |
		"$PYTHON3" -c '
import json, sys
lo, hi = int(sys.argv[1]), int(sys.argv[2])
seen = {}
dups = bad_dups = 0
for line in sys.stdin:
    d = json.loads(line)
    for v, t in zip(d["values"], d["timestamps"]):
        if lo <= t < hi:
            if t in seen:
                dups += 1
                bad_dups += seen[t] != v
            seen[t] = v
ts = sorted(seen)
vals = [int(seen[t]) for t in ts]
gaps = sum(1 for i, v in enumerate(vals) if v != i + 1)
print(len(vals), gaps, dups, bad_dups, ts[-1] if ts else 0)
' "$from" "$to")
	read -r n gaps dups bad_dups last <<<"$out"
	check "$name: samples arrived ($n)" [ "${n:-0}" -ge 5 ]
	check "$name: the sequence 1..$n has no gap ($gaps out of place)" [ "$gaps" = 0 ]
	check "$name: duplicates ($dups) are exact resends ($bad_dups differ)" [ "$bad_dups" = 0 ]
	if [ -n "$killed" ]; then
		check "$name: lost at most the last $BOUND_MS ms before the kill (last sample $((killed - last)) ms before)" \
			[ $((killed - last)) -le $BOUND_MS ]
	fi
	run_n=$n
}

conf() {
	collectd_conf "$rw_tmp/$1.conf" "$rw_tmp/$1.log" "StaleOnShutdown false" \
		"<Endpoint \"vm\">" "URL \"$2\"" "BatchDeadline $BATCH_DEADLINE" \
		"MaxSamplesPerSend ${3:-500}" "MinBackoff 0.2" "MaxBackoff 1" "Timeout 5" \
		"SpoolDir \"$rw_tmp/spool\"" "</Endpoint>"
}

start_vm vm
check "vm: receiver is up" wait_http "$vm_url/health" 30

# ---- drill 1: kill -9 while the receiver is down -------------------------
conf a "$vm_url/api/v1/write"
t0=$(now_ms)
start_collectd "$rw_tmp/a.conf"
sleep 4
kill "$vm_pid" && wait "$vm_pid" 2>/dev/null
sleep 15
kill -9 "$collectd_pid"
wait "$collectd_pid" 2>/dev/null
killed=$(now_ms)
start_vm vm "$vm_port"
check "vm: receiver is up again" wait_http "$vm_url/health" 30
conf b "$vm_url/api/v1/write"
start_collectd "$rw_tmp/b.conf"
sleep 6
stop_collectd
t1=$(now_ms)
curl -s "$vm_url/internal/force_flush" >/dev/null
sleep 2
check_run "kill -9 during an outage, killed run" "$t0" "$killed" "$killed"
check_run "kill -9 during an outage, next run" "$killed" "$t1"
reads=$(sed -n 's/.*rw_testsrc: \([0-9]*\) reads.*/\1/p' "$rw_tmp/b.log")
check "next run: every read arrived ($reads reads, $run_n arrived)" [ "$reads" = "$run_n" ]
check "the restart replayed the spool" log_has "$rw_tmp/b.log" 'spool .* holds [0-9]+ bytes to replay'

# ---- drill 2: kill -9 in the middle of a slow replay ---------------------
rm -rf "$rw_tmp/spool"
start_proxy
touch "$rw_tmp/proxy.down"
echo 0 >"$rw_tmp/proxy.delay"
# Small batches: the outage leaves many records, replayed one a second.
conf c "http://127.0.0.1:$proxy_port/api/v1/write" 20
t2=$(now_ms)
start_collectd "$rw_tmp/c.conf"
sleep 20
echo 1 >"$rw_tmp/proxy.delay"
rm -f "$rw_tmp/proxy.down"
sleep 8
kill -9 "$collectd_pid"
wait "$collectd_pid" 2>/dev/null
killed=$(now_ms)
segs=$(find "$rw_tmp/spool" -name '*.spool' -size +0 | wc -l)
check "the replay was still going when killed (spool not empty)" [ "$segs" -ge 1 ]
echo 0 >"$rw_tmp/proxy.delay"
conf d "http://127.0.0.1:$proxy_port/api/v1/write" 20
start_collectd "$rw_tmp/d.conf"
sleep 10
stop_collectd
t3=$(now_ms)
curl -s "$vm_url/internal/force_flush" >/dev/null
sleep 2
check_run "kill -9 during a slow replay, killed run" "$t2" "$killed" "$killed"
check_run "kill -9 during a slow replay, next run" "$killed" "$t3"
reads=$(sed -n 's/.*rw_testsrc: \([0-9]*\) reads.*/\1/p' "$rw_tmp/d.log")
check "next run: every read arrived ($reads reads, $run_n arrived)" [ "$reads" = "$run_n" ]
done_testing
