#!/bin/bash
# bench_rw_fleet.sh - senders that behave in a fleet (issue 27 item 4), at
# 1,000 hosts: tests/tools/rw_senders runs BENCH_RW_HOSTS (1000) hosts, each
# one writer/ endpoint with its own spool, BENCH_RW_SERIES (50) series each
# at a 10 s interval, every host reading at the same wall-clock instant (the
# worst case), into a real VictoriaMetrics 1.79 that is stopped for
# BENCH_RW_OUTAGE (300) s after BENCH_RW_STEADY (120) s and started again on
# the same port and data. Once with the sender as it was (--legacy: no send
# phase, no jitter, no replay limit) and once as it is now (defaults:
# SendPhase on, full jitter, ReplayShare 1). Reports, per run: the receiver's
# write requests per second (vm_http_requests_total, sampled every second)
# in steady state and after the restart (peak second, peak 10 s), the
# senders' attempts per second during the outage, the time to catch up (the
# senders' backlog back to its steady size), and samples lost (every
# produced sample looked up in the receiver's export: once, in order).
# Not a test: numbers, for docs/scaling.md.
#
#   bench_rw_fleet.sh BUILDDIR SRCDIR       (make bench-rw-fleet)
set -u
build=$(cd "${1:-.}" && pwd)
src=$(cd "${2:-.}" && pwd)
hosts=${BENCH_RW_HOSTS:-1000}
series=${BENCH_RW_SERIES:-50}
outage=${BENCH_RW_OUTAGE:-300}
steady=${BENCH_RW_STEADY:-120}
modes=${BENCH_RW_MODES:-legacy paced}
interval=10
senders="$build/tests/tools/rw_senders"
vmbin=${VICTORIA_METRICS:-$(command -v victoria-metrics)}
python3=${PYTHON3:-python3}
tmp=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; [ -n "${KEEP_TMP:-}" ] || rm -rf "$tmp"' EXIT
[ -x "$senders" ] || { echo "bench_rw_fleet: build tests/tools/rw_senders first (make bench-rw-fleet does)" >&2; exit 1; }
[ -x "$vmbin" ] || { echo "bench_rw_fleet: victoria-metrics is not installed" >&2; exit 1; }
ulimit -n 65536 2>/dev/null || ulimit -n 8192 2>/dev/null || true
port=$("$python3" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
vm=http://127.0.0.1:$port
log() { echo "[$(date -u +%H:%M:%S)] $*" >&2; }

start_vm() {
	"$vmbin" -httpListenAddr="127.0.0.1:$port" -storageDataPath="$1" -retentionPeriod=1d \
		-search.latencyOffset=0s >>"$1.log" 2>&1 &
	vm_pid=$!
	pids+=("$vm_pid")
	for _ in $(seq 1 150); do curl -sf -o /dev/null "$vm/health" && return 0; sleep 0.2; done
	echo "bench_rw_fleet: VictoriaMetrics did not start" >&2
	exit 1
}

echo "# bench_rw_fleet: $hosts hosts x $series series every $interval s, outage $outage s after $steady s; $(nproc) cores; $(date -u +%FT%TZ)"
for mode in $modes; do
	d="$tmp/$mode"
	mkdir -p "$d"
	args=()
	after=$((outage + 90))
	if [ "$mode" = legacy ]; then args=(--legacy); after=90; fi
	start_vm "$d/vm"
	# The receiver's write requests, once a second.
	(while :; do
		v=$(curl -s --max-time 3 "$vm/metrics" | awk '/^vm_http_requests_total\{path="\/api\/v1\/write"/ { print $NF }')
		echo "$(date +%s.%N) ${v:-down}"
		sleep 1
	done) >"$d/vm_requests" &
	sampler=$!
	pids+=("$sampler")
	log "$mode: $hosts senders start"
	"$senders" --url "$vm/api/v1/write" --hosts "$hosts" --series "$series" --interval $interval \
		--batch-deadline 5 --duration $((steady + outage + after)) --drain 900 \
		--spool-root "$d/spool" "${args[@]}" >"$d/senders.out" 2>"$d/senders.err" &
	spid=$!
	pids+=("$spid")
	sleep "$steady"
	kill "$vm_pid"
	wait "$vm_pid" 2>/dev/null
	down_at=$(date +%s.%N)
	log "$mode: receiver stopped for $outage s"
	sleep "$outage"
	start_vm "$d/vm"
	up_at=$(date +%s.%N)
	log "$mode: receiver back; waiting for the senders to finish"
	wait "$spid"
	kill "$sampler" 2>/dev/null
	curl -s "$vm/internal/force_flush" >/dev/null
	sleep 2
	log "$mode: checking every sample in the receiver"
	curl -sfG "$vm/api/v1/export" --data-urlencode 'match[]=rwsend_seq' >"$d/export.json"
	kill "$vm_pid"
	wait "$vm_pid" 2>/dev/null
	"$python3" - "$d" "$mode" "$down_at" "$up_at" "$outage" "$steady" <<'P'
import json, sys
d, mode, down, up, outage, steady = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6])
lines = open(d + "/senders.out").read().split("\n")
final = [json.loads(l) for l in lines if l.startswith("{")][0]
prog = [dict(zip(x[0::2], map(float, x[1::2]))) for x in (l.split() for l in lines if l.startswith("t "))]
t0 = prog[0]["t"]
# Receiver side: write requests per second from the counter (it restarts
# with the receiver: a drop is a reset).
samp = [l.split() for l in open(d + "/vm_requests") if l.strip()]
samp = [(float(t), float(v)) for t, v in samp if v != "down"]
per_s = []
for (ta, va), (tb, vb) in zip(samp, samp[1:]):
    if tb - ta > 5:
        continue
    dv = vb - va if vb >= va else vb
    per_s.append((tb, dv / (tb - ta)))
st = [r for t, r in per_s if t0 + 30 <= t < down - 5]
steady_rate = sum(st) / len(st) if st else 0
steady_peak = max(st, default=0)
steady_idle = sum(1 for r in st if r < 1) / len(st) if st else 0
after = [(t, r) for t, r in per_s if t > up]
peak1 = max((r for t, r in after[:120]), default=0)
peak10 = max((sum(r for _, r in after[i:i + 10]) / 10 for i in range(max(len(after[:120]) - 9, 1))), default=0)
# Sender side: attempts per second during the outage (every host's retries).
att = [(b["t"], (b["requests"] - a["requests"]) / (b["t"] - a["t"])) for a, b in zip(prog, prog[1:]) if b["t"] > a["t"]]
out_att = [r for t, r in att if down + 30 <= t < up - 5]
# Catch-up: the backlog (produced, not yet sent) back to its steady size.
base = max([x["backlog"] for x in prog if t0 + 30 <= x["t"] < down - 1] or [0])
back = [x["t"] for x in prog if x["t"] > up and x["backlog"] <= base]
catch = back[0] - up if back else float("nan")
peak_backlog = max(x["backlog"] for x in prog)
# Every sample: stored once, in order, values 1..n per series.
stored = wrong = nseries = 0
for l in open(d + "/export.json"):
    if not l.strip():
        continue
    s = json.loads(l)
    nseries += 1
    v, ts = s["values"], s["timestamps"]
    stored += len(v)
    if v != [float(i) for i in range(1, len(v) + 1)] or ts != sorted(set(ts)) or len(v) != final["ticks"]:
        wrong += 1
lost = final["pushed"] - stored
res = dict(mode=mode, hosts=final["hosts"], series_per_host=final["series"], produced=final["pushed"],
           sent=final["sent"], dropped=final["dropped"], stored=stored, lost=lost, series_wrong=wrong,
           series=nseries, steady_req_s=round(steady_rate, 1), steady_peak_req_s=round(steady_peak),
           steady_idle_seconds=round(steady_idle, 2), peak_req_s_after=round(peak1, 1),
           peak_10s_mean_req_s_after=round(peak10, 1), outage_attempts_s=round(sum(out_att) / len(out_att), 1) if out_att else 0,
           catch_up_s=round(catch, 1), backlog_peak=int(peak_backlog), requests=final["requests"], failed=final["failed"],
           sender_cpu_s=final.get("cpu_s"))
print(json.dumps(res))
open(d + "/../results.jsonl", "a").write(json.dumps(res) + "\n")
P
	# Per-second series for docs: t since restart, receiver requests/s.
	"$python3" -c '
import sys
up = float(sys.argv[2])
s = [l.split() for l in open(sys.argv[1]) if l.strip()]
s = [(float(t), float(v)) for t, v in s if v != "down"]
for (ta, va), (tb, vb) in zip(s, s[1:]):
    if tb > up - 20 and tb < up + 60 and tb - ta < 5:
        print("#   %s t%+.0f s: %.0f req/s" % (sys.argv[3], tb - up, ((vb - va) if vb >= va else vb) / (tb - ta)))
' "$d/vm_requests" "$up_at" "$mode" | awk 'NR % 5 == 1'
	rm -rf "$d/spool" "$d/export.json"
done
cat "$tmp/results.jsonl" >"${BENCH_RW_OUT:-/dev/null}" 2>/dev/null || true
