#!/bin/bash
# bench_remote_write.sh - `make bench` part for remote_write (not a test):
#   1. bench_remote_write: encode+compress on one core, and send throughput
#      to a local VictoriaMetrics (started here, if installed);
#   2. CPU per sample inside a real collectd: the same value stream (the
#      test source's Burst mode) written by collectd's own write_http
#      (Format JSON) and by remote_write, each to a local sink that accepts
#      any POST (python3), in the same run; collectd's CPU time (user+sys,
#      whole run including the shutdown flush) per sample, minus that of a
#      run whose only writer does nothing. Ratio goal: remote_write <= 1/3 of write_http.
set -u
: "${top_srcdir:?}" "${top_builddir:?}"
COLLECTD=${COLLECTD:-/usr/sbin/collectd}
PYTHON3=${PYTHON3:-python3}
VICTORIA_METRICS=${VICTORIA_METRICS:-$(command -v victoria-metrics)}
SECONDS_PER_RUN=${RW_BENCH_SECONDS:-10}
BURST=${RW_BENCH_BURST:-2000}
tmp=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$tmp"' EXIT
port() { "$PYTHON3" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

echo "== remote_write benchmark"
url=
if [ -x "$VICTORIA_METRICS" ]; then
	p=$(port)
	"$VICTORIA_METRICS" -httpListenAddr="127.0.0.1:$p" -storageDataPath="$tmp/vm" -retentionPeriod=1d >"$tmp/vm.log" 2>&1 &
	pids+=($!)
	for _ in $(seq 1 100); do curl -sf -o /dev/null "http://127.0.0.1:$p/health" && break; sleep 0.2; done
	url="http://127.0.0.1:$p/api/v1/write"
else
	echo "(victoria-metrics not installed: no send throughput)"
fi
"$top_builddir/tests/bench/bench_remote_write" $url

so="$top_builddir/plugin/.libs/remote_write.so"
src="$top_builddir/tests/tools/.libs/rw_testsrc.so"
if [ ! -x "$COLLECTD" ] || [ ! -f "$so" ] || [ ! -f /usr/lib/collectd/write_http.so ]; then
	echo "(collectd, remote_write.so or write_http.so missing: no comparison)"
	exit 0
fi
if [ ! -f "$src" ]; then
	make -C "$top_builddir" tests/tools/rw_testsrc.la >/dev/null || exit 1
fi
mkdir -p "$tmp/plugins"
cp "$so" "$src" /usr/lib/collectd/write_http.so /usr/lib/collectd/logfile.so "$tmp/plugins/"

# A sink for both: answers every POST with 204 and counts bodies and bytes.
sinkport=$(port)
"$PYTHON3" - "$sinkport" "$tmp/sink.count" <<'P' &
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
port, out = int(sys.argv[1]), sys.argv[2]
n = [0, 0]
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        n[0] += 1; n[1] += len(body)
        self.send_response(204); self.send_header("Content-Length", "0"); self.end_headers()
        with open(out, "w") as f: f.write("%d %d\n" % tuple(n))
    def log_message(self, *a): pass
ThreadingHTTPServer(("127.0.0.1", port), H).serve_forever()
P
pids+=($!)
sleep 1

run() { # name, plugin config lines... -> prints "cpu_seconds reads"
	local name=$1 conf="$tmp/$1.conf"
	shift
	{
		echo "Hostname \"bench-host\""
		echo "BaseDir \"$tmp\""
		echo "PIDFile \"$tmp/$name.pid\""
		echo "PluginDir \"$tmp/plugins\""
		echo "TypesDB \"/usr/share/collectd/types.db\""
		echo "Interval 0.1"
		echo "WriteQueueLimitHigh 0"
		echo "LoadPlugin logfile"
		echo "<Plugin logfile>"
		echo "  LogLevel info"
		echo "  File \"$tmp/$name.log\""
		echo "</Plugin>"
		echo "LoadPlugin rw_testsrc"
		echo "<Plugin rw_testsrc>"
		echo "  Burst $BURST"
		[ "$name" = base ] && echo "  NullWriter true"
		echo "</Plugin>"
		for l in "$@"; do echo "$l"; done
	} >"$conf"
	local before after
	rm -f "$tmp/$name.log"
	before=$(cat "$tmp/sink.count" 2>/dev/null || echo "0 0")
	"$PYTHON3" - "$COLLECTD" "$conf" "$SECONDS_PER_RUN" <<'P' >"$tmp/$name.cpu"
import resource, signal, subprocess, sys, time
p = subprocess.Popen([sys.argv[1], "-f", "-C", sys.argv[2]], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
time.sleep(float(sys.argv[3]))
p.send_signal(signal.SIGTERM)
p.wait()
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print("%.3f" % (r.ru_utime + r.ru_stime))
P
	sleep 0.5
	after=$(cat "$tmp/sink.count" 2>/dev/null || echo "0 0")
	# cpu reads sink-requests sink-bytes
	echo "$(cat "$tmp/$name.cpu") $(reads "$name") $(( ${after% *} - ${before% *} )) $(( ${after#* } - ${before#* } ))"
}

reads() { sed -n 's/.*rw_testsrc: \([0-9]*\) reads.*/\1/p' "$tmp/$1.log"; }

echo "== CPU per sample inside collectd (${SECONDS_PER_RUN} s per run, $BURST values every 0.1 s, each configuration twice, interleaved; the lower CPU per sample counts)"
WH=("LoadPlugin write_http" "<Plugin write_http>" "  <Node \"sink\">" \
	"    URL \"http://127.0.0.1:$sinkport/collectd\"" "    Format \"JSON\"" "    BufferSize 1048576" \
	"    StoreRates false" "  </Node>" "</Plugin>")
RW=("LoadPlugin remote_write" "<Plugin remote_write>" "  SelfMetrics false" "  StaleOnShutdown false" \
	"  <Endpoint \"sink\">" "    URL \"http://127.0.0.1:$sinkport/api/v1/write\"" "    QueueCapacity 1000000" \
	"  </Endpoint>" "</Plugin>")
results=()
for rep in 1 2; do
	results+=("base $(run base)")
	results+=("write_http $(run write_http "${WH[@]}")")
	results+=("remote_write $(run remote_write "${RW[@]}")")
done
printf '%s\n' "${results[@]}" >"$tmp/results"
"$PYTHON3" - "$BURST" "$tmp/results" <<'P'
import sys
burst = int(sys.argv[1])
best = {}
for line in open(sys.argv[2]):
    name, cpu, reads, reqs, nbytes = line.split()
    samples = int(reads) * burst
    per = float(cpu) / samples
    print("  run %-12s %6s s CPU, %7d samples, %8.0f ns/sample, sink: %s requests, %s bytes" % (name, cpu, samples, per * 1e9, reqs, nbytes))
    best[name] = min(best.get(name, per), per)
b, w, r = best["base"], best["write_http"], best["remote_write"]
print("baseline, a writer that does nothing (source, dispatch, write queue): %.0f ns/sample" % (b * 1e9))
print("write_http JSON: %.0f ns/sample in all, %.0f above the baseline" % (w * 1e9, (w - b) * 1e9))
print("remote_write:    %.0f ns/sample in all, %.0f above the baseline" % (r * 1e9, (r - b) * 1e9))
print("ratio remote_write / write_http, writer's own CPU per sample: %.2f (goal <= 0.33: %s); whole daemon: %.2f"
      % ((r - b) / (w - b), "met" if (r - b) / (w - b) <= 1 / 3 else "NOT met", r / w))
P
