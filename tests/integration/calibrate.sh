#!/bin/bash
# calibrate.sh - `pciescope calibrate` end to end: on a SIMULATED machine
# whose hidden units all differ from the defaults, every unit is recovered
# within 2 % and written to a calibration file; that file, given to the
# CLI (--calibration) and to the real collectd (CalibrationFile), turns the
# wrong default values into the machine's ground truth; explicit options
# win over it; bad input and impossible calibrations are refused with the
# reason and exit status 3.
. "$(dirname "$0")/lib.sh"

# collectd for part 3 when it and the plugin are there (not in the
# sanitizer build, which runs the rest of this script).
have_collectd=0
if [ -x "$(command -v collectd || echo /usr/sbin/collectd)" ] && [ -f "$top_builddir/plugin/.libs/pcie.so" ]; then
	sim_collectd_setup # sets $tmp
	have_collectd=1
else
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
fi
P="$PCIESCOPE"
ODD="$FIXTURES/machines/calib-odd-units.json"
export PCIESCOPE_VIRTUAL_CLOCK=1 PCIESCOPE_MACHINE_DIR="$top_srcdir/sim/machines"

# within VALUE TRUTH PERCENT
within() { awk -v v="$1" -v t="$2" -v p="$3" 'BEGIN { d = v - t; if (d < 0) d = -d; exit !(t > 0 && d <= p / 100 * t) }'; }
# field FILE EXPR: a value of the calibration file (python's json)
field() { python3 -c 'import json,re,sys; d=json.loads(re.sub(r"/[*].*?[*]/", "", open(sys.argv[1]).read(), flags=re.S)); print(eval(sys.argv[2]))' "$1" "$2"; }

# ---- 1. every hidden unit of calib-odd-units.json ---------------------------
"$P" calibrate --simulate "$ODD" --device 0000:01:00.0 --output "$tmp/odd.json" >"$tmp/odd.txt" 2>"$tmp/odd.err"
rc=$?
check "calibrate on calib-odd-units exits 0: all consistent (rc $rc; $(head -c 300 "$tmp/odd.err"))" [ "$rc" -eq 0 ]
check "stderr says the machine is SIMULATED" grep -q 'SIMULATED machine "calib-odd-units"' "$tmp/odd.err"
check "the text names the file to give as CalibrationFile" grep -q "CalibrationFile \"$tmp/odd.json\"" "$tmp/odd.txt"
while read -r key truth; do
	v=$(field "$tmp/odd.json" "d['$key']['value']")
	verdict=$(field "$tmp/odd.json" "d['$key']['verdict']")
	check "$key $v within 2 % of the machine's $truth ($verdict)" \
		eval 'within "$v" "$truth" 2 && [ "$verdict" = consistent ]'
done <<EOF
flux_unit_bytes 16
time_clock_hz 200e6
latency_clock_hz 500e6
ptt_clock_hz 250e6
EOF
check "ptt_time_mode: absolute (the machine's)" [ "$(field "$tmp/odd.json" "d['ptt_time_mode']['value']")" = absolute ]
check "outbound requests carry the Root Port's ID 00:00.0" \
	[ "$(field "$tmp/odd.json" "[r['requester'] for r in d['outbound_requesters']]")" = "['00:00.0']" ]
check "each result lists its repeats (5 by default)" \
	[ "$(field "$tmp/odd.json" "len(d['flux_unit_bytes']['samples'])")" = 5 ]

"$P" calibrate --simulate "$ODD" --device 0000:01:00.0 --repeat 3 --bytes 256M --json \
	--output "$tmp/odd2.json" >"$tmp/odd2.out" 2>/dev/null
check "--json prints what the file holds" cmp -s "$tmp/odd2.out" "$tmp/odd2.json"
check "--repeat 3 --bytes 256M: 3 loads of 256 MiB" \
	[ "$(field "$tmp/odd2.json" "(d['load']['bytes'], d['flux_unit_bytes']['repeats'])")" = "(805306368, 3)" ]

# ---- 1b. the least load and the fewest repeats a value needs ---------------
# --bytes 1: each repeat moves one byte, a fraction of a flux count. It was
# "consistent" from one usable repeat, and the file made pmu read rx_mwr
# hundreds of GB/s; now every repeat is dropped as a load too small.
for b in 1 32M; do
	"$P" calibrate --simulate "$ODD" --device 0000:01:00.0 --bytes "$b" --output "$tmp/small.json" >"$tmp/small.txt" 2>"$tmp/small.err"
	rc=$?
	check "--bytes $b: exit 1, the flux unit not measurable (rc $rc: $(grep -A1 'bytes per flux' "$tmp/small.txt" | tr -s ' ' | head -c 300))" \
		eval '[ "$rc" -eq 1 ] && grep -q "^  bytes per flux count *- *- *0/5 *not measurable" "$tmp/small.txt"'
	check "... why: load too small, under 64 MiB or 1000 flux counts per repeat" \
		grep -q "load too small: every repeat moved under 64 MiB or added under 1000 flux counts" "$tmp/small.txt"
	check "... the file says 5 of 5 repeats dropped, and why" \
		[ "$(field "$tmp/small.json" "(d['flux_unit_bytes']['verdict'], d['flux_unit_bytes']['dropped'], d['flux_unit_bytes']['asked'], [x['why'] for x in d['flux_unit_bytes']['drops']])")" = "('not measurable', 5, 5, ['load too small (under 64 MiB moved)'])" ]
done
bw_small=$("$P" pmu --simulate "$ODD" --count 1 --json --calibration "$tmp/small.json" 2>/dev/null | python3 -c '
import json, sys
for r in reversed(json.load(sys.stdin)):
    l = r["labels"]
    if r["metric"] == "pcie_port_bandwidth_bytes_per_second" and l.get("port") == "0000:00:00.0" and l.get("tlp") == "mwr" and l.get("direction", "rx") == "rx":
        print(r["value"]); break')
bw_def=$("$P" pmu --simulate "$ODD" --count 1 --json 2>/dev/null | python3 -c '
import json, sys
for r in reversed(json.load(sys.stdin)):
    l = r["labels"]
    if r["metric"] == "pcie_port_bandwidth_bytes_per_second" and l.get("port") == "0000:00:00.0" and l.get("tlp") == "mwr" and l.get("direction", "rx") == "rx":
        print(r["value"]); break')
check "... and pmu with that file keeps the default flux unit: rx_mwr $bw_small = $bw_def B/s" \
	within "${bw_small:-0}" "${bw_def:-1}" 0.5

# A machine whose units are outside what is physically plausible (a flux
# count of a thousandth of a byte, a 100 GHz latency clock): measured,
# printed in the table's columns, not applied.
ABS="$FIXTURES/machines/calib-absurd-units.json"
"$P" calibrate --simulate "$ABS" --device 0000:01:00.0 --bytes 256M --output "$tmp/abs.json" >"$tmp/abs.txt" 2>/dev/null
rc=$?
check "implausible units: exit 1 (rc $rc)" [ "$rc" -eq 1 ]
check "... the flux unit 0.001 B is not measurable: outside the plausible range 1..4096 bytes per count" \
	eval 'grep -q "^  bytes per flux count *0.001 B .*not measurable" "$tmp/abs.txt" &&
	      grep -q "0.001 is outside the plausible range 1..4096 bytes per count" "$tmp/abs.txt"'
check "... the latency clock 1e11 Hz likewise (1e+06..1e+10 Hz)" \
	eval 'grep -q "^  latency clock *1.000[0-9]*e+11 Hz .*not measurable" "$tmp/abs.txt" &&
	      grep -q "e+11 is outside the plausible range 1e+06..1e+10 Hz" "$tmp/abs.txt"'
# Every row's columns start where the header's do.
check "... every column of every row starts under its header" \
	awk '/^  unit  / { v = index($0, " value "); s = index($0, " spread "); r = index($0, " repeats "); d = index($0, " verdict "); hdr = 1; next }
	     hdr && /^  (bytes per flux count|\*_time clock|PTT Time clock|latency clock|PTT Time field) / {
	         n++; if (substr($0, v, 1) != " " || substr($0, v + 1, 1) == " " || substr($0, s, 1) != " " || substr($0, s + 1, 1) == " " ||
	                  substr($0, r, 1) != " " || substr($0, r + 1, 1) == " " || substr($0, d + 1, 1) !~ /[cin]/) bad++ }
	     END { exit !(n == 5 && bad == 0) }' "$tmp/abs.txt"
"$P" pmu --simulate "$ABS" --count 1 --calibration "$tmp/abs.json" >/dev/null 2>"$tmp/abs-pmu.err"
rc=$?
check "... the file it wrote is readable: pmu --calibration exits 0 (rc $rc: $(head -c 200 "$tmp/abs-pmu.err"))" [ "$rc" -eq 0 ]

# ---- 2. the defaults, and a port other functions read through --------------
"$P" calibrate --simulate kunpeng930-2p --device 0000:02:00.0 --repeat 3 --output "$tmp/k.json" >/dev/null 2>&1
rc=$?
check "kunpeng930-2p: exit 0 (rc $rc)" [ "$rc" -eq 0 ]
check "kunpeng930-2p: the assumed defaults hold: 4 B, 100 MHz, 1 GHz, delta" \
	eval 'within "$(field "$tmp/k.json" "d[\"flux_unit_bytes\"][\"value\"]")" 4 2 &&
	      within "$(field "$tmp/k.json" "d[\"ptt_clock_hz\"][\"value\"]")" 100e6 2 &&
	      within "$(field "$tmp/k.json" "d[\"latency_clock_hz\"][\"value\"]")" 1e9 2 &&
	      [ "$(field "$tmp/k.json" "d[\"ptt_time_mode\"][\"value\"]")" = delta ]'
"$P" calibrate --simulate kunpeng930-misconfig --device 0000:04:00.0 --repeat 3 --output "$tmp/m.json" >"$tmp/m.txt" 2>&1
rc=$?
check "a port shared with another reader: exit 1, some not consistent (rc $rc)" [ "$rc" -eq 1 ]
check "... the latency clock is not measurable, and says why" \
	grep -q 'other functions below 0000:00:08.0 made' "$tmp/m.txt"
check "... and is left out of what the file applies" \
	[ "$(field "$tmp/m.json" "d['latency_clock_hz']['verdict']")" = "not measurable" ]
check "... its 3 repeats were dropped, and the file says why" \
	[ "$(field "$tmp/m.json" "(d['latency_clock_hz']['dropped'], [(x['why'], x['repeats']) for x in d['latency_clock_hz']['drops']])")" = "(3, [('other functions below the Root Port read too', 3)])" ]

"$P" calibrate --simulate kunpeng930-2p --kernel 6.2 --device 0000:02:00.0 --repeat 3 --output "$tmp/k62.json" >"$tmp/k62.txt" 2>&1
rc=$?
check "Linux 6.2 (no rx_mwr_flux pair): exit 1, the flux unit not measurable and why (rc $rc)" \
	eval '[ "$rc" -eq 1 ] && grep -q "offers no rx_mwr_flux/rx_mwr_time pair (Linux 6.9 or later does)" "$tmp/k62.txt"'
check "... the PTT and latency clocks still measured" \
	eval 'within "$(field "$tmp/k62.json" "d[\"latency_clock_hz\"][\"value\"]")" 1e9 2 &&
	      [ "$(field "$tmp/k62.json" "d[\"ptt_clock_hz\"][\"verdict\"]")" = consistent ]'

# ---- 3. the file changes the published values ------------------------------
# rx_mwr bandwidth and latency of port 0000:00:00.0 (the NVMe's port).
pmu_value() { # metric event|tlp [options...]
	local metric=$1 sel=$2
	shift 2
	"$P" pmu --simulate "$ODD" --count 1 --json "$@" 2>/dev/null | python3 -c '
import json, sys
metric, sel = sys.argv[1], sys.argv[2]
for r in reversed(json.load(sys.stdin)):  # the last interval first
    l = r["labels"]
    if r["metric"] == metric and l.get("port") == "0000:00:00.0" and sel in (l.get("tlp"), l.get("event")) and l.get("direction", "rx") == "rx":
        print(r["value"]); break' "$metric" "$sel"
}
bw0=$(pmu_value pcie_port_bandwidth_bytes_per_second mwr)
bw1=$(pmu_value pcie_port_bandwidth_bytes_per_second mwr --calibration "$tmp/odd.json")
bwx=$(pmu_value pcie_port_bandwidth_bytes_per_second mwr --calibration "$tmp/odd.json" --option FluxUnit=4)
lat0=$(pmu_value pcie_port_latency_seconds rx_mwr)
lat1=$(pmu_value pcie_port_latency_seconds rx_mwr --calibration "$tmp/odd.json")
"$top_builddir/tests/tools/sim_truth" "$ODD" 0 1 >"$tmp/truth"
truth=$(awk '$1 == "0000:00:00.0" && $2 == "rx_mwr" { print $3 }' "$tmp/truth")
check "without calibration rx_mwr is 4x too low: $bw0 vs truth $truth B/s" \
	within "$(awk -v a="$bw0" -v b="$truth" 'BEGIN { print a ? b / a : 0 }')" 4 2
check "--calibration: rx_mwr bandwidth $bw1 B/s within 1 % of the truth $truth" within "${bw1:-0}" "$truth" 1
check "an explicit --option FluxUnit=4 wins over the file ($bwx = $bw0)" within "${bwx:-0}" "${bw0:-1}" 0.5
check "--calibration: latency doubles (500 MHz cycles, not 1 GHz): $lat0 -> $lat1 s" \
	within "$(awk -v a="$lat0" -v b="$lat1" 'BEGIN { print a ? b / a : 0 }')" 2 2

if [ $have_collectd -eq 1 ]; then
	# The real collectd: CalibrationFile in <Plugin pcie>.
	sim_collectd_conf "$tmp/c.conf" "$tmp/csv" "$tmp/c.log" sim "Simulate \"$ODD\"" \
		"CalibrationFile \"$tmp/odd.json\"" "PMUTLPLength false" "PMUEndpoints false"
	"$COLLECTD" -f -C "$tmp/c.conf" >"$tmp/c.out" 2>&1 &
	pid=$!
	sleep 5
	kill "$pid" && wait "$pid"
	pid=
	f=$(ls "$tmp/csv/sim/pcie-0000:00:00.0/pmu_bandwidth-rx_mwr"-* 2>/dev/null | head -n 1)
	v=$(tail -n 1 "$f" 2>/dev/null | cut -d, -f2)
	check "collectd with CalibrationFile: rx_mwr $v B/s within 1 % of the truth $truth" within "${v:-0}" "$truth" 1
	check "collectd: no errors in the log" eval '! grep -q "\[error\]" "$tmp/c.log"'
	printf '{"pciescope_calibration": 1, "flux_unit_bytes": 4}\n' >"$tmp/bad.json"
	sim_collectd_conf "$tmp/d.conf" "$tmp/csv-d" "$tmp/d.log" sim "Simulate \"$ODD\"" \
		"CalibrationFile \"$tmp/bad.json\""
	timeout 20 "$COLLECTD" -f -C "$tmp/d.conf" >"$tmp/d.out" 2>&1
	rc=$?
	check "collectd: a broken CalibrationFile stops it at start (rc $rc) naming the option, file and key" \
		eval '[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] &&
		      cat "$tmp/d.out" "$tmp/d.log" 2>/dev/null | grep -q "option CalibrationFile .*bad.json: flux_unit_bytes: not an object"'
else
	check "collectd part # SKIP no collectd or no plugin build here" true
fi

# ---- 4. snapshot --device: the calibration goes with the machine -----------
"$P" snapshot --simulate "$ODD" --device 0000:01:00.0 --repeat 3 -o "$tmp/snap.tar.gz" \
	--description "$tmp/snap.json" >/dev/null 2>"$tmp/snap.err"
rc=$?
check "snapshot --device: exit 0 (rc $rc; $(tail -n 1 "$tmp/snap.err" | head -c 200))" [ "$rc" -eq 0 ]
check "... the archive holds calibration.json" eval 'tar tzf "$tmp/snap.tar.gz" | grep -qx calibration.json'
check "... the description carries the calibrated units (16 B, 200 MHz, 500 MHz, 250 MHz, absolute)" \
	eval 'within "$(field "$tmp/snap.json" "d[\"hisi_pcie\"][\"flux_unit_bytes\"]")" 16 2 &&
	      within "$(field "$tmp/snap.json" "d[\"hisi_pcie\"][\"time_clock_hz\"]")" 200e6 2 &&
	      within "$(field "$tmp/snap.json" "d[\"hisi_pcie\"][\"latency_clock_hz\"]")" 500e6 2 &&
	      within "$(field "$tmp/snap.json" "d[\"hisi_pcie\"][\"ptt_clock_hz\"]")" 250e6 2 &&
	      [ "$(field "$tmp/snap.json" "d[\"hisi_pcie\"][\"ptt_time\"]")" = absolute ]'
"$P" calibrate --simulate "$tmp/snap.json" --device 0000:01:00.0 --repeat 3 -o "$tmp/again.json" >"$tmp/again.txt" 2>/dev/null
check "calibrate on the snapshot's simulated copy finds the same flux unit and time clock" \
	eval 'within "$(field "$tmp/again.json" "d[\"flux_unit_bytes\"][\"value\"]")" 16 2 &&
	      within "$(field "$tmp/again.json" "d[\"time_clock_hz\"][\"value\"]")" 200e6 2'
check "... and says why its trace phases measure nothing (the copy is idle)" \
	grep -q "held no outbound TLPs at 0000:00:00.0" "$tmp/again.txt"

# ---- 4b. the file is written through a fresh temporary name ----------------
# A symlink planted at the name a predictable temporary file would take
# (FILE.tmp) and one at a likely mkstemp-style name must not be followed.
echo "victim's own text" >"$tmp/victim"
mkdir "$tmp/out"
ln -s "$tmp/victim" "$tmp/out/cal.json.tmp"
"$P" calibrate --simulate "$ODD" --device 0000:01:00.0 --repeat 3 --bytes 256M \
	--output "$tmp/out/cal.json" >/dev/null 2>"$tmp/sym.err"
rc=$?
check "calibrate with a symlink planted at cal.json.tmp: exit 0 (rc $rc; $(head -c 200 "$tmp/sym.err"))" [ "$rc" -eq 0 ]
check "... the symlink's target is untouched" [ "$(cat "$tmp/victim")" = "victim's own text" ]
check "... the symlink is still a symlink, to the same target" \
	eval '[ -L "$tmp/out/cal.json.tmp" ] && [ "$(readlink "$tmp/out/cal.json.tmp")" = "$tmp/victim" ]'
check "... cal.json is a regular file holding the calibration" \
	eval '[ -f "$tmp/out/cal.json" ] && [ ! -L "$tmp/out/cal.json" ] && [ "$(field "$tmp/out/cal.json" "d[\"pciescope_calibration\"]")" = 1 ]'
check "... readable by others (0644, like a configuration file)" \
	[ "$(stat -c %a "$tmp/out/cal.json")" = 644 ]
check "... and no temporary file is left behind" \
	[ "$(ls -A "$tmp/out" | sort | tr '\n' ' ')" = "cal.json cal.json.tmp " ]

# ---- 4c. --run: the command's process group and its time limit -------------
# The simulated machine runs the command for real; the device carries the
# bytes --bytes states.
"$P" calibrate --simulate "$ODD" --device 0000:01:00.0 --repeat 3 --run true --bytes 256M \
	--output "$tmp/run.json" >"$tmp/run.txt" 2>"$tmp/run.err"
rc=$?
check "--run true --bytes 256M: exit 0, the flux unit 16 B (rc $rc; $(head -c 200 "$tmp/run.err"))" \
	eval '[ "$rc" -eq 0 ] && within "$(field "$tmp/run.json" "d[\"flux_unit_bytes\"][\"value\"]")" 16 2'
# alive MARKER: processes whose command line holds MARKER (zombies, this
# awk and pciescope itself, which has it in its --run, left out)
alive() { ps -eo stat=,args= | awk -v m="$1" '$1 !~ /^Z/ && index($0, m) && !index($0, "awk") && !index($0, "pciescope") { n++ } END { print n + 0 }'; }
mark=$$$RANDOM # digits: sleep 1000.$mark is a number
for how in "a command that ignores SIGTERM|trap '' TERM; sleep 1000.$mark; :" \
	"a child that forks a grandchild ignoring SIGTERM|sh -c \"trap '' TERM; sleep 1001.$mark & wait\"; :"; do
	what=${how%%|*}
	cmd=${how#*|}
	t0=$(date +%s.%N)
	"$P" calibrate --simulate "$ODD" --device 0000:01:00.0 --repeat 3 --run "$cmd" --bytes 256M \
		--run-timeout 1 --output "$tmp/hang.json" >"$tmp/hang.txt" 2>"$tmp/hang.err"
	rc=$?
	took=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
	check "--run-timeout 1, $what: exit 1 after $took s (the 1 s limit, 2 s grace, at most 3 s more; rc $rc)" \
		eval '[ "$rc" -eq 1 ] && awk -v t="$took" "BEGIN { exit !(t >= 1 && t < 6) }"'
	check "... it says the command ran past its time limit" \
		grep -q "the load failed: the command ran past its time limit of 1 s (--run-timeout): its process group was stopped" "$tmp/hang.txt"
	check "... and no process of it is left ($(ps -eo pid,stat,args | grep "100[01]\.$mark" | grep -v grep | head -c 200))" \
		[ "$(alive "1000.$mark")$(alive "1001.$mark")" = 00 ]
done
# calibrate itself stopped (SIGTERM, as a service manager or kill would):
# the command is not in its process group, and is killed with it. The
# program itself gets the signal (PCIESCOPE_BINARY: where $P is a wrapper
# script, sanitize.sh's).
"${PCIESCOPE_BINARY:-$P}" calibrate --simulate "$ODD" --device 0000:01:00.0 --repeat 3 --run "sleep 1002.$mark" --bytes 256M \
	--output "$tmp/term.json" >/dev/null 2>&1 &
cpid=$!
for _ in $(seq 50); do # until the command runs (a sanitized build starts slowly)
	before=$(alive "1002.$mark")
	[ "$before" -ge 1 ] && break
	sleep 0.2
done
kill -TERM "$cpid"
wait "$cpid"
rc=$?
sleep 0.5
check "calibrate stopped by SIGTERM during --run: ends by it (rc $rc), the command (running before: $before) killed too" \
	eval '[ "$rc" -eq 143 ] && [ "$before" -ge 1 ] && [ "$(alive "1002.$mark")" -eq 0 ]'
refused "--run-timeout 0" "--run-timeout 0: seconds from 0.1 to 86400" \
	"$P" calibrate --simulate "$ODD" --device 0000:01:00.0 --run true --bytes 1G --run-timeout 0 --output "$tmp/x.json"
refused "--run-timeout without --run" "--run-timeout is the time limit of a --run command" \
	"$P" calibrate --simulate "$ODD" --device 0000:01:00.0 --run-timeout 5 --output "$tmp/x.json"

# ---- 5. refusals ------------------------------------------------------------
refused() { # description, expected text, command...
	local what=$1 text=$2
	shift 2
	"$@" >"$tmp/r.out" 2>"$tmp/r.err"
	local rc=$?
	check "$what: exit 3 and \"$text\" (rc $rc: $(tail -n 1 "$tmp/r.err" | head -c 200))" \
		eval '[ "$rc" -eq 3 ] && grep -q -- "$text" "$tmp/r.err"'
}
refused "no --device" "--device BDF is required" "$P" calibrate --simulate "$ODD"
refused "no such function" "0000:09:00.0: no such PCI function" "$P" calibrate --simulate "$ODD" --device 0000:09:00.0 --output "$tmp/x.json"
refused "a Root Port" "is not below a Root Port" "$P" calibrate --simulate "$ODD" --device 0000:00:00.0 --output "$tmp/x.json"
refused "an Intel machine" "no hisi_pcie PMU covers" "$P" calibrate --simulate spr-2s --device 0000:16:00.0 --output "$tmp/x.json"
refused "an lspci dump" "no load can be made on this machine view (an lspci dump" "$P" calibrate --pci-dump "$(ls "$FIXTURES"/pcidump/*.txt | head -n 1)" --device 0000:00:00.0 --output "$tmp/x.json"
refused "--repeat 0" "--repeat 0: a number from 3 to 32" "$P" calibrate --simulate "$ODD" --device 0000:01:00.0 --repeat 0
refused "--repeat 1: one repeat has no spread" "--repeat 1: a number from 3 to 32 (a value needs at least 3 repeats that agree)" \
	"$P" calibrate --simulate "$ODD" --device 0000:01:00.0 --repeat 1 --output "$tmp/x.json"
refused "--repeat 2" "--repeat 2: a number from 3 to 32" "$P" calibrate --simulate "$ODD" --device 0000:01:00.0 --repeat 2 --output "$tmp/x.json"
refused "snapshot --device --repeat 2" "--repeat 2: a number from 3 to 32" "$P" snapshot --simulate "$ODD" --device 0000:01:00.0 --repeat 2 -o "$tmp/x.tar.gz"
refused "--run without --bytes" "--run needs --bytes" "$P" calibrate --simulate "$ODD" --device 0000:01:00.0 --run true
refused "--bytes 12Q" "--bytes 12Q" "$P" calibrate --simulate "$ODD" --device 0000:01:00.0 --bytes 12Q
refused "an unwritable --output" "cannot write the calibration file" "$P" calibrate --simulate "$ODD" --device 0000:01:00.0 --repeat 3 --bytes 64M --output /nonexistent/dir/c.json
refused "an --output in a missing directory, checked before measuring" \
	"cannot write the calibration file: $tmp/none/c.json" \
	"$P" calibrate --simulate "$ODD" --device 0000:09:00.0 --output "$tmp/none/c.json"
mkdir "$tmp/adir"
refused "an --output that is a directory" "$tmp/adir: Is a directory" \
	"$P" calibrate --simulate "$ODD" --device 0000:01:00.0 --output "$tmp/adir"
printf '{"pciescope_calibration": 1, "flux_unit_bytes": {"value": 4, "verdict": "consistent"},}' >"$tmp/comma.json"
refused "--calibration with a JSON error" "comma.json: byte" "$P" pmu --simulate "$ODD" --calibration "$tmp/comma.json"
# Units outside the plausible ranges, from a file or an option.
printf '{"pciescope_calibration": 1, "flux_unit_bytes": {"value": 1e-300, "verdict": "consistent"}}' >"$tmp/tiny.json"
refused "--calibration with a flux unit of 1e-300 bytes" \
	"tiny.json: flux_unit_bytes: value 1e-300 is outside the plausible range 1..4096 bytes per count" \
	"$P" pmu --simulate "$ODD" --calibration "$tmp/tiny.json"
printf '{"pciescope_calibration": 1, "latency_clock_hz": {"value": 5e12, "verdict": "consistent"}}' >"$tmp/fast.json"
refused "--calibration with a 5 THz latency clock" \
	"fast.json: latency_clock_hz: value 5000000000000 is outside the plausible range 1e+06..1e+10 Hz" \
	"$P" pmu --simulate "$ODD" --calibration "$tmp/fast.json"
printf '{"pciescope_calibration": 1, "ptt_clock_hz": {"value": 1000, "verdict": "consistent"}}' >"$tmp/slow.json"
refused "--calibration with a 1 kHz PTT clock" \
	"slow.json: ptt_clock_hz: value 1000 is outside the plausible range 1e+06..1e+10 Hz" \
	"$P" pmu --simulate "$ODD" --calibration "$tmp/slow.json"
refused "--option FluxUnit=1e-300" "--option FluxUnit 1e-300: must be from 1 to 4096" \
	"$P" pmu --simulate "$ODD" --count 1 --option FluxUnit=1e-300
refused "--option LatencyClock=1e12" "--option LatencyClock 1e12: must be from 1e+06 to 1e+10" \
	"$P" pmu --simulate "$ODD" --count 1 --option LatencyClock=1e12
refused "--clock-hz 1000" "--clock-hz 1000: must be a whole number from 1e+06 to 1e+10" \
	"$P" trace report --clock-hz 1000 /dev/null
refused "--calibration of a missing file" "--calibration $tmp/none.json" "$P" pmu --simulate "$ODD" --calibration "$tmp/none.json"
# ---- NVIDIA Grace: the root_port bit of a device's Root Port ----------------
# grace-remap's true bit table is not the collector's default: C0 (the NVMe
# at 0000:01:00.0) answers bit 3, and the default reads nothing on it.
REMAP="$FIXTURES/machines/grace-remap.json"
"$P" calibrate --simulate "$REMAP" --device 0000:01:00.0 --repeat 3 --output "$tmp/g.json" >"$tmp/g.out" 2>&1
rc=$?
check "grace-remap: calibrate names bit 3 of nvidia_pcie_pmu_0 for 0000:00:00.0, consistent (rc $rc)" \
	eval '[ "$rc" -eq 0 ] && [ "$(field "$tmp/g.json" "d[\"nvidia_port_map\"][\"bit\"]")" = 3 ] &&
	      [ "$(field "$tmp/g.json" "d[\"nvidia_port_map\"][\"verdict\"]")" = consistent ] &&
	      [ "$(field "$tmp/g.json" "d[\"pmu\"]")" = nvidia_pcie_pmu_0 ] &&
	      grep -q "NvidiaPCIeRootPort 0 3 \"0000:00:00.0\"" "$tmp/g.out"'
# C0's DMA writes: the NVMe's 1.2 GB/s (the description's dma_write).
c0() { "$P" pmu --simulate "$REMAP" --count 4 --json "$@" 2>/dev/null | python3 -c '
import json, sys
v = m = None
for s in json.load(sys.stdin):
    l = s["labels"]
    if l.get("port") != "0000:00:00.0":
        continue
    if s["metric"] == "pcie_port_bandwidth_bytes_per_second" and l["tlp"] == "mwr":
        v = s["value"]
    if s["metric"] == "pcie_pmu_port_info":
        m = l["mapping"]
print(v, m)'; }
read -r bw map < <(c0)
check "grace-remap without calibration: 0000:00:00.0 by the default map reads $bw B/s (truth 1.2e9)" \
	eval '[ "$map" = default ] && ! within "$bw" 1.2e9 2'
read -r bw map < <(c0 --calibration "$tmp/g.json")
check "... with the calibration file: mapping $map, $bw B/s, within 1 % of 1.2e9" \
	eval '[ "$map" = calibrated ] && within "$bw" 1.2e9 1'
read -r bw map < <(c0 --calibration "$tmp/g.json" --option 'NvidiaPCIeRootPort=0 0 "0000:00:00.0"')
check "... a NvidiaPCIeRootPort line for the same Root Port wins over the file: $map" \
	[ "$map" = configured ]

# ---- AMD Turin: the IO root complex of a device's root bus -----------------
# turin-2p's true root bus -> root complex map is not in bus order: 0000:40
# (nvme0..2 at 0000:41-43) is io1, 0000:20 is io2. The load through nvme0
# must rise on socket 0 io1 only.
"$P" calibrate --simulate turin-2p --device 0000:41:00.0 --repeat 3 --output "$tmp/t.json" >"$tmp/t.out" 2>&1
rc=$?
check "turin-2p: calibrate names socket 0 io1 for root bus 0000:40, consistent (rc $rc; $(head -c 300 "$tmp/t.out"))" \
	eval '[ "$rc" -eq 0 ] && [ "$(field "$tmp/t.json" "d[\"amd_df_root_complex\"][\"socket\"]")" = 0 ] &&
	      [ "$(field "$tmp/t.json" "d[\"amd_df_root_complex\"][\"root_complex\"]")" = 1 ] &&
	      [ "$(field "$tmp/t.json" "d[\"amd_df_root_complex\"][\"root_bus\"]")" = 0000:40 ] &&
	      [ "$(field "$tmp/t.json" "d[\"amd_df_root_complex\"][\"verdict\"]")" = consistent ] &&
	      grep -q "AMDDFRootComplexBus 0 1 \"0000:40\"" "$tmp/t.out" &&
	      grep -q "maps root bus 0000:40 only" "$tmp/t.out"'
rise=$(field "$tmp/t.json" "d['amd_df_root_complex']['rise_bytes_per_second']")
lrate=$(field "$tmp/t.json" "d['amd_df_root_complex']['load_bytes_per_second']")
check "... the write rate rose by $rise B/s, the load's $lrate B/s (within 2 %)" \
	eval 'within "$rise" "$lrate" 2 && [ "$(field "$tmp/t.json" "d[\"amd_df_root_complex\"][\"direction\"]")" = write ]'
# io1 of socket 0: mapping, rx bytes/s (both localities) and raw rx utilisation.
io1() { "$P" pmu --simulate turin-2p --count 4 --json "$@" 2>"$tmp/io1.err" | python3 -c '
import json, sys
m, bw, util = "-", 0.0, "-"
for s in json.load(sys.stdin):
    l = s["labels"]
    if l.get("pmu") != "amd_df" or l.get("socket") != "0" or l.get("root_complex") != "io1":
        continue
    if s["metric"] == "pcie_df_root_complex_info":
        m = l["mapping"]
    if s["metric"] == "pcie_port_bandwidth_bytes_per_second" and l["direction"] == "rx":
        bw += s["value"]
    if s["metric"] == "pcie_port_utilization_ratio" and l["direction"] == "rx" and l["capacity"] == "raw":
        util = s["value"]
print(m, bw, util)'; }
# The truth: io1's DMA writes; its capacity: three Gen5 x4 links up on bus
# 0x40 (32 GT/s x 4 lanes / 8 x 128/130 = 15.75 GB/s each).
wr=$(awk '$1 == "df" && $2 == 0 && $3 == 1 { print $5 }' <("$top_builddir/tests/tools/sim_truth" "$top_srcdir/sim/machines/turin-2p.json" 0 1))
cap=$(awk 'BEGIN { printf "%.6f", 3 * 32e9 * 4 / 8 * 128 / 130 }')
read -r map bw util < <(io1)
check "turin-2p without calibration: io1 mapping $map, no utilisation ($util)" \
	eval '[ "$map" = none ] && [ "$util" = - ]'
read -r map bw util < <(io1 --calibration "$tmp/t.json")
truth_util=$(awk -v w="$wr" -v c="$cap" 'BEGIN { print w / c }')
check "... with the calibration file: mapping $map, rx $bw B/s within 1 % of the truth $wr, utilisation $util within 1 % of $truth_util" \
	eval '[ "$map" = calibrated ] && within "$bw" "$wr" 1 && within "$util" "$truth_util" 1'
read -r map bw util < <(io1 --calibration "$tmp/t.json" --option 'AMDDFRootComplexBus=0,2,0000:40')
n=$(grep -c "root bus 0000:40: the calibration file says socket 0 io1, AMDDFRootComplexBus says socket 0 io2; the configuration wins" "$tmp/io1.err")
check "... an AMDDFRootComplexBus line for the same bus wins over the file: io1 $map, said $n time(s)" \
	eval '[ "$map" = none ] && [ "$util" = - ] && [ "$n" -eq 1 ]'
read -r map bw util < <(io1 --calibration "$tmp/t.json" --option 'AMDDFRootComplexBus=0,1,0000:40')
check "... and one that agrees: io1 $map" [ "$map" = configured ]
# One run maps one root bus: the GPU behind the switch on 0000:20 (io2)
# takes a run of its own; both files together map both.
"$P" calibrate --simulate turin-2p --device 0000:23:00.0 --repeat 3 --output "$tmp/t2.json" >"$tmp/t2.out" 2>&1
maps=$("$P" pmu --simulate turin-2p --count 1 --json --calibration "$tmp/t.json" --calibration "$tmp/t2.json" 2>/dev/null |
	python3 -c '
import json, sys
print(" ".join(sorted("%s/%s=%s:%s" % (l["socket"], l["root_complex"], l["root_buses"], l["mapping"])
      for l in (s["labels"] for s in json.load(sys.stdin) if s["metric"] == "pcie_df_root_complex_info")
      if l["mapping"] != "none")))')
check "a second run for 0000:23:00.0 (behind a switch) maps 0000:20 to io2; the two files map both: $maps" \
	[ "$maps" = "0/io1=0000:40:calibrated 0/io2=0000:20:calibrated" ]

live=$(ls /sys/bus/pci/devices 2>/dev/null | tail -n 1)
if [ -n "$live" ]; then
	env -u PCIESCOPE_VIRTUAL_CLOCK "$P" calibrate --device "$live" --output "$tmp/x.json" >"$tmp/l.out" 2>"$tmp/l.err"
	rc=$?
	check "this machine ($live, no hisi_pcie PMU): exit 3 with the reason (rc $rc: $(head -c 200 "$tmp/l.err"))" \
		eval '[ "$rc" -eq 3 ] && grep -q "no hisi_pcie PMU covers\|is not below a Root Port" "$tmp/l.err"'
fi
check "nothing was written by the refused runs" [ ! -e "$tmp/x.json" ]

done_testing
