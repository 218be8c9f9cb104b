#!/bin/bash
# bench_soak.sh - the agent over a long run (make bench-soak; not part of
# make check): real collectd daemons with the pcie plugin on simulated
# machines (every source on, PTT windows every few seconds, hardware that
# changes on a schedule: the machine's `events`), remote_write to two real
# VictoriaMetrics and the openmetrics page scraped every second. In the
# middle one receiver is stopped for SOAK_OUTAGE_MINUTES and started again.
#
#   bench_soak.sh BUILDDIR SRCDIR
#
# Settings (environment):
#   SOAK_MINUTES         whole run (60)
#   SOAK_OUTAGE_MINUTES  receiver outage in the middle (5)
#   SOAK_MACHINES        machine names or files, one collectd each
#                        (kunpeng930-2p spr-2s); a machine without events
#                        of its own gets a schedule (below)
#   SOAK_OUT             folder for the figures and logs (a temp dir,
#                        removed unless given)
#   SOAK_SPEED           how many times faster than the real soak (1):
#                        collectd's Interval, the PTT windows (duration and
#                        period), remote_write's BatchDeadline, the scrape
#                        period, the hardware events' schedule, the warm-up,
#                        the resource sampling, the RSS floor's stretch and
#                        the outage (SOAK_OUTAGE_MINUTES are soak minutes)
#                        are divided by it, so one minute covers SPEED
#                        minutes of intervals, windows, scrapes, sends and
#                        events of the real soak; growth is judged per
#                        "soak hour" (3600 intervals), not per wall hour.
#                        An event period below the loader's 1 s stays 1 s.
#   SOAK_VALGRIND        memcheck: each collectd runs under valgrind's
#                        memcheck (--leak-check=full, kinds definite,
#                        indirect and possible), its report in
#                        c<i>/valgrind.txt; RSS then measures valgrind, so
#                        the resource figures are printed, not judged, and
#                        memcheck's report is judged instead
#
# The truth of what was sent: every collectd sends each value to both
# receivers, "ref" (always up, no spool) and "subj" (spooled, and the one
# stopped); afterwards every sample ref holds must be in subj, and the
# other way round (compared per series and timestamp through
# /api/v1/export). What it prints: RSS, open fds and threads of each daemon
# (first value after the warm-up, last, least-squares slope per hour), the
# scrape latencies and failures, the request rate and catch-up time after
# the outage, samples lost, and every ERROR line of the daemons with the
# event that explains it. Exit status 1 when a sample is lost, an ERROR
# line is unexplained, a daemon died, or a resource grew beyond noise.
set -u
build=$(cd "${1:-.}" && pwd)
src=$(cd "${2:-.}" && pwd)
minutes=${SOAK_MINUTES:-60}
outage=${SOAK_OUTAGE_MINUTES:-5}
speed=${SOAK_SPEED:-1}
grind=${SOAK_VALGRIND:-}
collectd=${COLLECTD:-$(command -v collectd || echo /usr/sbin/collectd)}
vm=${VICTORIA_METRICS:-$(command -v victoria-metrics)}
python3=${PYTHON3:-python3}
so_dir="$build/plugin/.libs"

die() {
	echo "bench_soak: $*" >&2
	exit 2
}
[ -x "$collectd" ] || die "collectd is not installed"
[ -n "$vm" ] && [ -x "$vm" ] || die "victoria-metrics is not installed"
for p in pcie remote_write openmetrics; do
	[ -f "$so_dir/$p.so" ] || die "$so_dir/$p.so was not built"
done
case $minutes in '' | *[!0-9]*) die "SOAK_MINUTES must be a whole number of minutes" ;; esac
case $outage in '' | *[!0-9]*) die "SOAK_OUTAGE_MINUTES must be a whole number of minutes" ;; esac
case $speed in '' | *[!0-9]* | 0) die "SOAK_SPEED must be a whole number, at least 1" ;; esac
case $grind in '' | memcheck) ;; *) die "SOAK_VALGRIND must be memcheck" ;; esac
[ -z "$grind" ] || command -v valgrind >/dev/null || die "valgrind is not installed"
[ "$minutes" -ge 2 ] || die "SOAK_MINUTES must be at least 2"
# The outage in wall seconds: soak minutes divided by the speed.
outage_s=$((outage * 60 / speed))
[ $((outage_s * 2)) -lt $((minutes * 60)) ] || die "the outage must be shorter than half the run"

# Seconds of the real soak divided by the speed (awk: fractions).
scaled() { awk -v x="$1" -v s="$speed" 'BEGIN { printf "%g", x / s }'; }
interval=$(scaled 1)
trace_duration=$(scaled 0.2)
trace_period=$(scaled 3)
batch_deadline=$(scaled 1)
scrape_every=$(scaled 1)
sample_every=$(scaled 10)

if [ -n "${SOAK_OUT:-}" ]; then
	out=$SOAK_OUT
	mkdir -p "$out" || die "cannot create $out"
	keep=1
else
	out=$(mktemp -d)
	keep=
fi
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
	[ -n "$keep" ] || rm -rf "$out"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- the machines: each shipped one with a schedule of hardware events ----
# A machine that has no `events` of its own gets a five-minute cycle drawn
# from its topology (pciescope topology --json) and its PMUs: an endpoint
# removed by surprise and rescanned, a whole switch subtree the same way, a
# hisi_pcie PMU driver unbound and bound again, a CPU of a PMU's cpumask
# taken offline and back, a PTT trace stopped by the driver. Kinds the
# simulator's loader refuses (not simulated in this build) are left out,
# and the run says so.
read -r -a machines <<<"${SOAK_MACHINES:-kunpeng930-2p spr-2s}"
machine_files=()
for m in "${machines[@]}"; do
	case $m in
	*/* | *.json) f=$m ;;
	*) f="$src/sim/machines/$m.json" ;;
	esac
	[ -f "$f" ] || die "no machine file $f"
	g="$out/machine-$(basename "$f" .json).json"
	"$build/cli/pciescope" topology --json --simulate "$f" >"$out/topology.json" 2>"$out/topology.err" ||
		die "pciescope topology --simulate $f failed: $(head -c 300 "$out/topology.err")"
	"$python3" - "$f" "$out/topology.json" "$g" "$build/cli/pciescope" "$speed" <<'PY' | tee -a "$out/events.log" || die "cannot add events to $f"
import json, subprocess, sys
src, topo, dst, pciescope = sys.argv[1:5]
speed = int(sys.argv[5])

def strip_comments(text):
    # /* */ and // outside strings (the machine files allow both)
    out, i, n, in_str = [], 0, len(text), False
    while i < n:
        c = text[i]
        if in_str:
            out.append(c)
            if c == "\\":
                out.append(text[i + 1]); i += 1
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True; out.append(c)
        elif text.startswith("/*", i):
            i = text.index("*/", i + 2) + 1
        elif text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
            continue
        else:
            out.append(c)
        i += 1
    return "".join(out)

m = json.loads(strip_comments(open(src).read()))
name = m["machine"]
if m.get("events"):
    json.dump(m, open(dst, "w"), indent=1)
    print(f"{name}: its own {len(m['events'])} events")
    sys.exit(0)
funcs = json.load(open(topo))
byparent = {}
for f in funcs:
    byparent.setdefault(f.get("parent"), []).append(f)
switch = next((f for f in funcs if f["port_type"] == "upstream_port"), None)
endpoints = [f for f in funcs if f["port_type"] == "endpoint" and f.get("parent")
             and f["parent"] != (switch or {}).get("bdf")
             and not (switch and f.get("root_port") == switch.get("root_port"))]
nvme = [f for f in endpoints if f["class"].startswith("0x0108")]
device = (nvme or endpoints or [None])[0]
pmus = [f"hisi_pcie{s['id']}_core{c['id']}" for s in m.get("sicls", []) for c in s.get("cores", [])]
ptts = [f"hisi_ptt{s['id']}_{c['id']}" for s in m.get("sicls", []) for c in s.get("cores", []) if c.get("ptt")]
# The CPU in a PMU's cpumask: the core's "cpu", else its SICL's first CPU.
cpu = None
for s in m.get("sicls", []):
    for c in s.get("cores", []):
        if "cpu" in c:
            cpu = c["cpu"]
        elif s.get("cpus"):
            cpu = int(str(s["cpus"]).split(",")[0].split("-")[0])
cand = []
P = 300
if device:
    cand += [("device", [{"at_s": 60, "every_s": P, "kind": "remove", "bdf": device["bdf"]},
                         {"at_s": 90, "every_s": P, "kind": "add", "bdf": device["bdf"]}])]
if switch:
    cand += [("switch subtree", [{"at_s": 120, "every_s": P, "kind": "remove", "bdf": switch["bdf"]},
                                 {"at_s": 150, "every_s": P, "kind": "add", "bdf": switch["bdf"]}])]
if pmus:
    cand += [("PMU driver", [{"at_s": 180, "every_s": P, "kind": "pmu_unbind", "pmu": pmus[-1]},
                             {"at_s": 210, "every_s": P, "kind": "pmu_bind", "pmu": pmus[-1]}])]
if ptts:
    # A stop only cuts a window open at that instant (0.2 s of every few
    # seconds per device): every 7 s, so that some land inside one.
    cand += [("PTT stop", [{"at_s": 45, "every_s": 7, "kind": "ptt_stop", "pmu": ptts[0]}])]
    # The PTT driver unbound and bound again (a new perf type): its windows
    # are skipped while it is gone, then open with the new type.
    cand += [("PTT driver", [{"at_s": 200, "every_s": P, "kind": "pmu_unbind", "pmu": ptts[-1]},
                             {"at_s": 230, "every_s": P, "kind": "pmu_bind", "pmu": ptts[-1]}])]
boxes = [st["box_id"] for so in m.get("intel", {}).get("sockets", []) for st in so.get("iio_stacks", []) if "box_id" in st]
if boxes:
    # An Intel IIO PMU's driver unbound and bound again: new perf type, its
    # counters from 0.
    iio = f"uncore_iio_free_running_{boxes[0]}"
    cand += [("IIO PMU driver", [{"at_s": 180, "every_s": P, "kind": "pmu_unbind", "pmu": iio},
                                 {"at_s": 210, "every_s": P, "kind": "pmu_bind", "pmu": iio}])]
if cpu is not None:
    cand += [("CPU offline", [{"at_s": 240, "every_s": P, "kind": "cpu_offline", "cpu": cpu},
                              {"at_s": 270, "every_s": P, "kind": "cpu_online", "cpu": cpu}])]
# SOAK_SPEED: the schedule runs that many times faster (a period stays at
# least the loader's 1 s).
for _, evs in cand:
    for e in evs:
        e["at_s"] = e["at_s"] / speed
        e["every_s"] = max(1.0, e["every_s"] / speed)
events = []
for what, evs in cand:
    m["events"] = events + evs
    json.dump(m, open(dst, "w"), indent=1)
    r = subprocess.run([pciescope, "topology", "--simulate", dst], capture_output=True, text=True)
    if r.returncode == 0:
        events += evs
        print(f"{name}: {what}: " + ", ".join(f"{e['kind']} {e.get('bdf') or e.get('pmu') or e.get('cpu')} at {e['at_s']:g} s every {e['every_s']:g} s" for e in evs))
    else:
        print(f"{name}: {what}: not simulated in this build ({r.stderr.strip()[:200]})")
m["events"] = events
json.dump(m, open(dst, "w"), indent=1)
PY
	machine_files+=("$g")
done

free_port() {
	"$python3" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
wait_http() { # URL SECONDS
	local i
	for i in $(seq 1 $(($2 * 5))); do
		curl -sf -o /dev/null --max-time 2 "$1" && return 0
		sleep 0.2
	done
	return 1
}
now() { date +%s; }
log() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$out/events.log"; }

# ---- receivers ----
start_vm() { # NAME PORT
	mkdir -p "$out/$1"
	"$vm" -httpListenAddr="127.0.0.1:$2" -storageDataPath="$out/$1/data" -retentionPeriod=1d \
		-search.latencyOffset=0s -search.disableCache >>"$out/$1/log" 2>&1 &
	eval "${1}_pid=$!"
	pids+=($!)
	wait_http "http://127.0.0.1:$2/health" 30 || die "VictoriaMetrics $1 did not start (see $out/$1/log)"
}
ref_port=$(free_port)
subj_port=$(free_port)
start_vm ref "$ref_port"
start_vm subj "$subj_port"

# ---- one collectd per machine ----
# Each runs with tests/bench/malloc_stats.c preloaded: glibc's mallinfo2
# every sampling period into c<i>/mallinfo.txt (live heap against what the
# arenas keep), malloc_info's XML into c<i>/mallinfo.txt.xml. It adds one
# thread (and the arena it allocates from) to each daemon.
mkdir -p "$out/plugins"
cc -O2 -shared -fPIC -pthread -o "$out/malloc_stats.so" "$src/tests/bench/malloc_stats.c" 2>"$out/malloc_stats.err" ||
	die "cannot build tests/bench/malloc_stats.c: $(head -c 300 "$out/malloc_stats.err")"
cp "$so_dir/pcie.so" "$so_dir/remote_write.so" "$so_dir/openmetrics.so" \
	/usr/lib/collectd/logfile.so "$out/plugins/"
cd_pids=()
om_ports=()
hosts=()
i=0
for m in "${machine_files[@]}"; do
	i=$((i + 1))
	host="soak$i-$(basename "$m" .json | sed 's/^machine-//')"
	dir="$out/c$i"
	mkdir -p "$dir"
	om_port=$(free_port)
	cat >"$dir/c.conf" <<CONF
Hostname "$host"
BaseDir "$dir"
PIDFile "$dir/collectd.pid"
PluginDir "$out/plugins"
TypesDB "/usr/share/collectd/types.db"
Interval $interval
WriteThreads 1
# collectd's own figures (its write queue: values dispatched, not yet
# written; its value cache: series it knows) go to the receivers like any
# value, so the export shows whether a daemon kept up.
CollectInternalStats true
LoadPlugin logfile
<Plugin logfile>
  LogLevel info
  File "$dir/c.log"
  PrintSeverity true
</Plugin>
LoadPlugin pcie
<Plugin pcie>
  Simulate "$m"
  MachineDirectory "$src/sim/machines"
  TraceDuration $trace_duration
  TracePeriod $trace_period
  MaxConcurrentTraces 2
</Plugin>
LoadPlugin remote_write
<Plugin remote_write>
  <Endpoint "ref">
    URL "http://127.0.0.1:$ref_port/api/v1/write"
    BatchDeadline $batch_deadline
  </Endpoint>
  <Endpoint "subj">
    URL "http://127.0.0.1:$subj_port/api/v1/write"
    BatchDeadline $batch_deadline
    SpoolDir "$dir/spool"
  </Endpoint>
</Plugin>
LoadPlugin openmetrics
<Plugin openmetrics>
  Listen "127.0.0.1"
  Port "$om_port"
  Timeout 3
</Plugin>
CONF
	case $grind in
	memcheck)
		valgrind --tool=memcheck --leak-check=full --show-leak-kinds=definite,indirect,possible \
			--errors-for-leak-kinds=definite,indirect --num-callers=30 --log-file="$dir/valgrind.txt" \
			"$collectd" -f -C "$dir/c.conf" >"$dir/c.out" 2>&1 &
		;;
	*)
		MALLOC_STATS_FILE="$dir/mallinfo.txt" MALLOC_STATS_PERIOD=$sample_every LD_PRELOAD="$out/malloc_stats.so" \
			"$collectd" -f -C "$dir/c.conf" >"$dir/c.out" 2>&1 &
		;;
	esac
	cd_pids+=($!)
	pids+=($!)
	om_ports+=("$om_port")
	hosts+=("$host")
	wait_http "http://127.0.0.1:$om_port/metrics" $([ -n "$grind" ] && echo 600 || echo 60) || die "collectd on $m did not start (see $dir/c.log, $dir/c.out)"
	log "collectd $host on $m: pid $!, openmetrics :$om_port"
done

# ---- the scraper: every daemon's page once a second ----
watchers=()
for k in "${!om_ports[@]}"; do
	(
		while :; do
			t0=$(date +%s%N)
			code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "http://127.0.0.1:${om_ports[k]}/metrics")
			t1=$(date +%s%N)
			echo "$((t0 / 1000000)) $code $(((t1 - t0) / 1000))"
			sleep "$scrape_every"
		done
	) >"$out/scrape$k.txt" 2>/dev/null &
	pids+=($!)
	watchers+=($!)
done

# ---- resources every 10 s (divided by SOAK_SPEED): time daemon rss_kib
# fds threads anon_kib file_kib heap_kib (anonymous and file-backed from
# smaps_rollup, the main arena's [heap] from smaps) ----
(
	while :; do
		t=$(now)
		for k in "${!cd_pids[@]}"; do
			p=${cd_pids[k]}
			[ -d "/proc/$p" ] || { echo "$t $k dead"; continue; }
			rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$p/status")
			thr=$(awk '/^Threads:/ { print $2 }' "/proc/$p/status")
			fds=$(find "/proc/$p/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
			read -r anon file < <(awk '/^Rss:/ { r = $2 } /^Anonymous:/ { a = $2 } END { print a + 0, r - a }' "/proc/$p/smaps_rollup")
			heap=$(awk '/ \[heap\]$/ { h = 1; next } /^[0-9a-f]+-/ { h = 0 } h && /^Rss:/ { s += $2 } END { print s + 0 }' "/proc/$p/smaps")
			echo "$t $k $rss $fds $thr $anon $file $heap"
		done
		sleep "$sample_every"
	done
) >"$out/resources.txt" &
pids+=($!)
watchers+=($!)

# ---- the run, with the outage in the middle ----
t_start=$(now)
t_out=$((t_start + (minutes * 60 - outage_s) / 2))
t_end=$((t_start + minutes * 60))
log "soak: ${minutes} min on ${#machines[@]} machine(s), outage of ${outage_s} s at +$(((t_out - t_start) / 60)) min, speed $speed (Interval $interval s, PTT windows of $trace_duration s every $trace_period s, a scrape every $scrape_every s)"
while [ "$(now)" -lt "$t_out" ]; do sleep 5; done
log "outage: stopping VictoriaMetrics subj (pid $subj_pid)"
kill "$subj_pid"
wait "$subj_pid" 2>/dev/null
sleep "$outage_s"
start_vm subj "$subj_port"
t_back=$(now)
log "outage over: VictoriaMetrics subj back (pid $subj_pid)"

# Catch-up: until every daemon's subj spool and queue are empty.
# (The memory queue is never empty while values flow: each batch is
# spooled before it is sent, so an empty spool means caught up.)
spool_left() { # the sum of subj's remote_write_spool_bytes over the daemons
	local p sum=0 v
	for p in "${om_ports[@]}"; do
		v=$(curl -s --max-time 5 "http://127.0.0.1:$p/metrics" |
			awk '/^remote_write_spool_bytes\{/ && /endpoint="subj"/ { s += $2 } END { print s + 0 }')
		sum=$(awk -v a="$sum" -v b="${v:-0}" 'BEGIN { print a + b }')
	done
	echo "$sum"
}
t_caught=
while [ "$(now)" -lt "$t_end" ]; do
	if [ -z "$t_caught" ] && [ "$(spool_left)" = 0 ]; then
		t_caught=$(now)
		log "caught up: subj's spools and queues empty $((t_caught - t_back)) s after the restart"
	fi
	sleep 2
done
[ -n "$t_caught" ] || log "not caught up by the end of the run"

# ---- stop: the watchers, the daemons (stale markers, flush), then the
# receivers ----
for p in "${watchers[@]}"; do kill "$p" 2>/dev/null; done
for p in "${watchers[@]}"; do wait "$p" 2>/dev/null; done
dead=0
for k in "${!cd_pids[@]}"; do
	p=${cd_pids[k]}
	if ! kill -0 "$p" 2>/dev/null; then
		log "collectd ${hosts[k]} DIED during the run (see $out/c$((k + 1))/c.out)"
		dead=$((dead + 1))
	fi
done
for p in "${cd_pids[@]}"; do kill "$p" 2>/dev/null; done
for p in "${cd_pids[@]}"; do wait "$p" 2>/dev/null; done
log "collectd stopped"
for n in ref subj; do
	curl -s "http://127.0.0.1:$([ $n = ref ] && echo "$ref_port" || echo "$subj_port")/internal/force_flush" >/dev/null
done
sleep 2
for n in ref subj; do
	port=$([ $n = ref ] && echo "$ref_port" || echo "$subj_port")
	curl -s --max-time 600 "http://127.0.0.1:$port/api/v1/export" \
		--data-urlencode 'match[]={__name__!=""}' --data-urlencode "start=$((t_start - 60))" \
		--data-urlencode "end=$(($(now) + 60))" >"$out/$n.export.jsonl" ||
		log "export from $n failed"
done

# ---- the figures ----
SOAK_T_OUT=$t_out SOAK_SPEED=$speed SOAK_VALGRIND=$grind SOAK_SRC=$src "$python3" - "$out" "$t_start" "$t_back" "${t_caught:-}" "$dead" "${#cd_pids[@]}" \
	"${hosts[@]}" "${machine_files[@]}" <<'PY'
import json, os, re, sys
out, t_start, t_back, t_caught, dead, ndaemons = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5]), int(sys.argv[6])
hosts = sys.argv[7:7 + ndaemons]
machine_files = sys.argv[7 + ndaemons:]
verdict = 0
lines = []
def say(s=""):
    print(s)
    lines.append(s)

# Resources: the first 10 minutes (or a fifth of a short run) are warm-up.
# RSS swings with the PTT windows (each maps and touches its trace
# buffers, TraceBufferSize per window, and frees them), so a sample's RSS
# depends on whether a window was open at that instant; a leak shows in the
# floor: the least RSS of each 10-minute stretch (of each fifth of a short
# run). Its least-squares slope is the figure judged; the slope of every
# sample is reported beside it. With SOAK_SPEED every time here (warm-up,
# stretch) is divided by the speed and a slope is given per soak hour
# (3600 intervals of the real soak's 1 s): a leak costs per interval,
# window, scrape or send, not per second of the wall clock.
speed = int(os.environ.get("SOAK_SPEED", "1"))
grind = os.environ.get("SOAK_VALGRIND", "")
if grind:
    say(f"under valgrind {grind}: RSS, anon and heap figures are valgrind's own, and scrape failures and samples lost "
        "follow from its slowness: printed, not judged")
rows = {}
for ln in open(os.path.join(out, "resources.txt")):
    f = ln.split()
    if len(f) >= 5 and f[2] != "dead":
        rows.setdefault(int(f[1]), []).append(tuple(int(x) for x in [f[0]] + f[2:]))
# mallinfo2 of each daemon (tests/bench/malloc_stats.c): time arena hblkhd
# uordblks fordblks keepcost arenas, bytes.
minfo = {}
for k in range(ndaemons):
    try:
        for ln in open(os.path.join(out, f"c{k + 1}", "mallinfo.txt")):
            f = ln.split()
            if len(f) == 7:
                minfo.setdefault(k, []).append(tuple(int(x) for x in f))
    except OSError:
        pass
def slope(pts):
    n = len(pts)
    if n < 2:
        return 0.0
    mx = sum(p[0] for p in pts) / n
    my = sum(p[1] for p in pts) / n
    den = sum((p[0] - mx) ** 2 for p in pts)
    return 0.0 if den == 0 else sum((p[0] - mx) * (p[1] - my) for p in pts) / den * 3600 / speed
def floors(pts, stretch):
    """The least value of each stretch (a short tail joins the last)."""
    fl = {}
    whole = max(1, (pts[-1][0] - pts[0][0]) // stretch)
    for t, v in pts:
        b = min((t - pts[0][0]) // stretch, whole - 1)
        fl[b] = min(v, fl.get(b, v))
    return [(pts[0][0] + b * stretch, v) for b, v in sorted(fl.items())]
per = "soak h" if speed > 1 else "h"
say(f"resources after warm-up (first, last, min, max; slope per {per} by least squares)")
if speed > 1:
    say(f"  speed {speed}: every figure per soak hour = 3600 intervals of 1 s, {3600 // speed} s of this run")
for k, r in sorted(rows.items()):
    span = r[-1][0] - r[0][0]
    t0 = r[0][0]
    warm = t0 + min(600 // speed, span // 5)
    r = [x for x in r if x[0] >= warm]
    rss_floor = ([(0, 0)], 0.0)
    stretch = max(60 // speed, min(600 // speed, (r[-1][0] - r[0][0]) // 5)) if r else 600 // speed
    say(f"  {hosts[k]}: {r[-1][0] - t0} s sampled, {(r[-1][0] - t0) * speed} intervals; warm-up {(warm - t0) * speed} intervals; floors per {stretch} s ({stretch * speed} intervals)")
    for i, name, unit in ((1, "RSS", " KiB"), (2, "fds", ""), (3, "threads", ""),
                          (4, "anon", " KiB"), (5, "file", " KiB"), (6, "[heap]", " KiB")):
        pts = [(x[0], x[i]) for x in r if len(x) > i]
        if not pts:
            continue
        vals = [p[1] for p in pts]
        line = f"  {hosts[k]:<28} {name:<8} first {vals[0]} last {vals[-1]} min {min(vals)} max {max(vals)}{unit}, slope {slope(pts):+.1f}/{per}"
        if name in ("RSS", "anon", "[heap]"):
            fl = floors(pts, stretch)
            fs = slope(fl)
            line += f"; floor: " + " ".join(str(v) for _, v in fl) + f", slope {fs:+.1f} KiB/{per}"
            say(line)
            # Flat: a floor that grows by more than 2 % of its level an
            # hour. Judged on RSS only where mallinfo2 is missing (no
            # glibc, the shim not loaded); else live heap is judged below.
            if name == "RSS" and fs > 0.02 * fl[0][1] and not grind and not minfo.get(k):
                say(f"  LEAK? {hosts[k]} RSS floor grows {fs:.0f} KiB/{per}")
                verdict = 1
            if name == "RSS":
                rss_floor = (fl, fs)
        else:
            say(line)
            # fds and threads: never above the first half's maximum + 2.
            if name in ("fds", "threads") and vals[-1] > max(vals[: max(1, len(vals) // 2)]) + 2:
                say(f"  LEAK? {hosts[k]} {name} {vals[-1]} above the first half's maximum")
                verdict = 1
    # Up to the last sample of /proc (the shim goes on writing while
    # collectd shuts down and frees its queues).
    m = [x for x in minfo.get(k, []) if warm <= x[0] <= r[-1][0]]
    if m:
        live = [(x[0], (x[3] + x[2]) // 1024) for x in m]
        kept = [(x[0], x[1] // 1024) for x in m]
        free = [(x[0], x[4] // 1024) for x in m]
        lfl = None
        for name, pts in (("live heap", live), ("arenas", kept), ("free in arenas", free)):
            vals = [p[1] for p in pts]
            fl = floors(pts, stretch)
            say(f"  {hosts[k]:<28} {name:<8} first {vals[0]} last {vals[-1]} min {min(vals)} max {max(vals)} KiB, slope {slope(pts):+.1f}/{per}; floor: " + " ".join(str(v) for _, v in fl) + f", slope {slope(fl):+.1f} KiB/{per}")
            if name == "live heap":
                lfl = (fl, slope(fl))
        say(f"  {hosts[k]:<28} arenas   {m[0][6]} at warm-up, {m[-1][6]} at the end (malloc_info)")
        # The memory verdict: live heap (what the program holds: a leak or
        # an unbounded cache grows it, whatever the allocator does) by its
        # floor, against the same bar RSS had: 2 % of its level an hour.
        # RSS also counts what glibc keeps in its arenas after a peak
        # (freed chunks it cannot return: fragmentation over the collector
        # threads' arenas), which settles at the level of the worst peak
        # rather than with the number of intervals (docs/soak.md, the
        # accelerated runs): its floor is printed, and named allocator
        # retention when it grows while live heap does not.
        if lfl and not grind:
            if lfl[1] > 0.02 * lfl[0][0][1]:
                say(f"  LEAK? {hosts[k]} live heap floor grows {lfl[1]:.0f} KiB/{per}")
                verdict = 1
            elif rss_floor[1] > 0.02 * rss_floor[0][0][1]:
                say(f"  note: {hosts[k]} RSS floor grows {rss_floor[1]:.0f} KiB/{per} while live heap does not "
                    f"({lfl[1]:+.0f} KiB/{per}): allocator retention, {free[-1][1]} KiB free in the arenas at the end")

# Valgrind's memcheck: its leak summary at exit, each loss record (definite,
# indirect, possible) whose stack names a pciescope module (pcie.so,
# remote_write.so, openmetrics.so, or a source file of this tree), and
# every error that is not a leak (invalid read or write, uninitialised
# value, bad free). Those fail the run; a loss record of collectd or a
# library alone (glibc's dlopen keeps 40 bytes of collectd's plugin_load)
# is printed, not judged.
if grind == "memcheck":
    ours_c = set()
    for d in ("collectors", "engine", "writer", "plugin", "sim"):
        try:
            ours_c.update(f for f in os.listdir(os.path.join(os.environ.get("SOAK_SRC", "."), d)) if f.endswith(".c"))
        except OSError:
            pass
    def ours(where):
        m = re.match(r"(?:in )?(.*)", where).group(1)
        return re.search(r"(?:^|/)(?:pcie|remote_write|openmetrics)\.so$", m) or m.split(":")[0] in ours_c
    say("memcheck (at exit)")
    for k in range(ndaemons):
        try:
            text = open(os.path.join(out, f"c{k + 1}", "valgrind.txt"), errors="replace").read()
        except OSError:
            say(f"  {hosts[k]}: no valgrind.txt")
            verdict = 1
            continue
        text = re.sub(r"(?m)^==\d+== ?", "", text)
        summ = {}
        for kind in ("definitely lost", "indirectly lost", "possibly lost", "still reachable"):
            m = re.search(kind + r": ([\d,]+) bytes in ([\d,]+) blocks", text)
            summ[kind] = (int(m.group(1).replace(",", "")), int(m.group(2).replace(",", ""))) if m else (0, 0)
        m = re.search(r"total heap usage: ([\d,]+) allocs, ([\d,]+) frees", text)
        say(f"  {hosts[k]}: " + (f"{m.group(1)} allocations, {m.group(2)} frees; " if m else "") +
            ", ".join(f"{kind} {b} bytes in {n} blocks" for kind, (b, n) in summ.items()))
        other = 0
        for rec in re.split(r"\n\s*\n", text):
            frames = re.findall(r"(?:at|by) 0x[0-9A-F]+: (\S+) \(([^)]*)\)", rec)
            mine = [f"{fn} ({where})" for fn, where in frames if ours(where)]
            lost = re.search(r"([\d,]+ (?:\([\d,]+ direct, [\d,]+ indirect\) )?bytes in [\d,]+ blocks are (?:definitely|indirectly|possibly) lost)", rec)
            if lost:
                say(f"    {lost.group(1)}: " + " <- ".join((mine or [f"{fn} ({where})" for fn, where in frames])[:4]) +
                    ("" if mine else "  (no pciescope frame: not judged)"))
                if mine:
                    verdict = 1
            elif re.search(r"^(Invalid (read|write|free)|Conditional jump|Use of uninitialised|Syscall param|Mismatched free|Source and destination overlap)", rec, re.M):
                other += 1
                say("    " + rec.strip().splitlines()[0] + ": " + " <- ".join([f"{fn} ({where})" for fn, where in frames][:4]))
        say(f"  {hosts[k]}: {other} error(s) other than leaks")
        if other:
            verdict = 1

# Scrapes.
say(f"scrapes (every {1 / speed:g} s, each daemon)")
for k in range(ndaemons):
    lat, bad = [], 0
    for ln in open(os.path.join(out, f"scrape{k}.txt")):
        f = ln.split()
        if len(f) != 3:
            continue
        if f[1] != "200":
            bad += 1
        else:
            lat.append(int(f[2]) / 1000.0)
    lat.sort()
    q = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))] if lat else float("nan")
    say(f"  {hosts[k]:<28} {len(lat) + bad} scrapes, {bad} failed, latency p50 {q(0.5):.1f} ms p99 {q(0.99):.1f} ms max {q(1.0):.1f} ms")
    if bad and not grind:
        verdict = 1

# Samples: every (series, timestamp) ref holds must be in subj and back.
def load(name):
    d = {}
    with open(os.path.join(out, f"{name}.export.jsonl")) as f:
        for ln in f:
            if not ln.strip():
                continue
            o = json.loads(ln)
            key = tuple(sorted(o["metric"].items()))
            d.setdefault(key, set()).update(o["timestamps"])
    return d
ref, subj = load("ref"), load("subj")
nref = sum(len(v) for v in ref.values())
nsubj = sum(len(v) for v in subj.values())
lost = sum(len(v - subj.get(k, set())) for k, v in ref.items())
extra = sum(len(v - ref.get(k, set())) for k, v in subj.items())
say(f"samples: ref {nref} in {len(ref)} series, subj {nsubj} in {len(subj)} series; in ref, not in subj: {lost}; in subj, not in ref: {extra}")
# Intervals each daemon delivered: the most timestamps of one of its series
# (a daemon that falls behind its Interval delivers fewer than wall / Interval),
# and collectd's own figures (CollectInternalStats): its write queue (values
# dispatched and not yet written: a daemon that falls behind grows it, and
# its memory with it) and its value cache (the series it knows: those of
# removed devices leave it when they time out).
internal = {}
with open(os.path.join(out, "ref.export.jsonl")) as f:
    for ln in f:
        if "queue_length" in ln or "cache_size" in ln:
            o = json.loads(ln)
            n = o["metric"].get("__name__", "")
            kind = {"collectd_collectd_queue_length": "write queue",
                    "collectd_collectd_cache_size": "value cache"}.get(n)
            if kind:
                internal.setdefault((o["metric"].get("instance"), kind), []).extend(
                    zip(o["timestamps"], [v for v in o["values"] if v is not None]))
for k in range(ndaemons):
    mine = [len(v) for key, v in ref.items() if ("instance", hosts[k]) in key]
    if mine:
        say(f"  {hosts[k]}: {max(mine)} intervals delivered (the most samples of one series)")
    for kind in ("write queue", "value cache"):
        pts = sorted(internal.get((hosts[k], kind), []))
        if pts:
            vals = [v for _, v in pts]
            half = vals[len(vals) // 2:]
            say(f"  {hosts[k]}: collectd {kind}: first {vals[0]:.0f} last {vals[-1]:.0f} max {max(vals):.0f}, max of the second half {max(half):.0f} (values)")
            # A daemon whose write queue holds more than two intervals of
            # values most of the second half (its median) fell behind its
            # Interval (the machine lacks the CPU for this speed): its
            # memory holds the backlog, so the run cannot judge a leak. A
            # peak of a few intervals when the machine is busy is not that.
            cache = [v for _, v in sorted(internal.get((hosts[k], "value cache"), []))]
            med = sorted(half)[len(half) // 2]
            if kind == "write queue" and cache and med > 2 * max(cache) and not grind:
                say(f"  FELL BEHIND: {hosts[k]}'s write queue held {med:.0f} values (median of the second half: more than two intervals); lower SOAK_SPEED")
                verdict = 1
# Under valgrind the daemon runs tens of times slower: collectd times out
# series between late intervals (stale markers that differ between the
# receivers) and scrapes time out, so those two figures are printed, not
# judged, there.
if (lost or extra) and not grind or nref == 0:
    verdict = 1

# The outage: how long after the restart the spools were empty.
if t_caught:
    say(f"outage: subj back at +{(t_back - t_start) // 60} min, caught up {int(t_caught) - t_back} s later")
else:
    say("outage: NOT caught up by the end of the run")
    verdict = 1

# ERROR lines, each explained by an event of the run: the outage (a line
# naming endpoint "subj" while it was down or catching up), or one of the
# machine's scheduled hardware events (a line naming the event's device,
# PMU or CPU). Anything else is unexplained.
import datetime
def events_of(path):
    text = open(path).read()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"(?m)^\s*//.*$", "", text)
    try:
        return json.loads(text).get("events", [])
    except ValueError:
        return []
def tokens(ev):
    t = []
    for key in ("bdf", "pmu"):
        if ev.get(key):
            t.append(re.escape(str(ev[key])))
    if "cpu" in ev:
        t.append(r"\bCPU %d\b|\bcpu%d\b" % (int(ev["cpu"]), int(ev["cpu"])))
    if ev.get("kind") == "ptt_stop":
        t.append(r"hisi_ptt")
    return t
def stamp(ln):
    m = re.match(r"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\]", ln)
    return int(datetime.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S").timestamp()) if m else None
t_out_s = int(os.environ.get("SOAK_T_OUT", "0"))
t_catch = int(t_caught) if t_caught else 1 << 62
say("ERROR lines")
nerr = 0
for k in range(ndaemons):
    toks = []
    for ev in events_of(machine_files[k]):
        toks.extend((tok, ev.get("kind", "?")) for tok in tokens(ev))
    counts = {}
    for ln in open(os.path.join(out, f"c{k + 1}", "c.log"), errors="replace"):
        if "[error]" not in ln:
            continue
        nerr += 1
        msg = ln.split("[error]", 1)[1].strip()
        t = stamp(ln)
        why = None
        if 'endpoint "subj"' in msg and t is not None and t_out_s <= t <= t_catch + 60:
            why = "the receiver outage"
        # collectd 5.12 itself, once at start-up with CollectInternalStats
        # (the bench's setting): it registers its own statistics reader
        # outside a plugin context (a bare collectd logs it too).
        if msg == "UNKNOWN plugin: plugin_get_interval: Unable to determine Interval from context." and \
                t is not None and t <= t_start + 120:
            why = "collectd's CollectInternalStats at start-up"
        for tok, kind in toks:
            if why is None and re.search(tok, msg):
                why = f"the machine's {kind} event"
        shape = re.sub(r"\d+", "N", msg)[:160]
        counts[(shape, why)] = counts.get((shape, why), 0) + 1
    for (shape, why), n in sorted(counts.items(), key=lambda x: (x[0][0], x[0][1] or "")):
        say(f"  {hosts[k]}: {n}x {shape}  <- {why or 'UNEXPLAINED'}")
        if why is None:
            verdict = 1
if nerr == 0:
    say("  none")
if dead:
    say(f"{dead} daemon(s) died during the run")
    verdict = 1
say("verdict: " + ("PASS" if verdict == 0 else "FAIL"))
open(os.path.join(out, "summary.txt"), "w").write("\n".join(lines) + "\n")
sys.exit(verdict)
PY
rc=$?
[ -n "$keep" ] && echo "bench_soak: logs and figures in $out"
exit $rc
