#!/bin/bash
# trace_cli.sh - `pciescope trace dump|report` on perf.data files written by
# tests/tools/ptt_perfdata from the documented layout (4DW and 8DW entries,
# file and pipe mode), checked against Debian's `perf report -D` (the
# oracle: same buffers, same dword offsets, same bytes) and against what the
# generator says it wrote (counts, payload bytes, latencies). Malformed
# files must give exit 3 and a message naming the file and the byte offset.
. "$(dirname "$0")/lib.sh"

GEN="$top_builddir/tests/tools/ptt_perfdata"
PERF=${PERF:-perf}
[ -x "$GEN" ] || skip_all "tests/tools/ptt_perfdata is not built"
[ -x "$PCIESCOPE" ] || skip_all "cli/pciescope is not built"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

skip() {
	tap_n=$((tap_n + 1))
	echo "ok $tap_n # SKIP $*"
}

# Parse `perf report -D` and `pciescope trace dump` and compare, buffer by
# buffer: the AUXTRACE record's byte offset and fields, the data size after
# rounding down, and every dword line's offset and 4 bytes, in order. Labels
# are ignored (perf 6.1 mislabels 4DW DW0). Prints "<buffers> <entries>
# <dwords>" when equal.
cat >"$tmp/compare.py" <<'EOF'
import re, sys

def parse(path, head_re):
    bufs = []
    dword = re.compile(r'^\.  ([0-9a-f]{8}): ((?:[0-9a-f]{2} ){3}[0-9a-f]{2})(?:\s|$)')
    size = re.compile(r'^\. \.\.\. HISI PTT data: size (\d+) bytes')
    for line in open(path, errors='replace'):
        m = head_re.search(line)
        if m:
            bufs.append({'head': m.groups(), 'size': None, 'dwords': []})
            continue
        m = size.match(line)
        if m and bufs:
            bufs[-1]['size'] = int(m.group(1))
            continue
        m = dword.match(line)
        if m and bufs:
            bufs[-1]['dwords'].append((int(m.group(1), 16), m.group(2)))
    return bufs

fmt, mode, perf_out, ours_out = sys.argv[1:5]
# The record's byte offset, then its fields. perf counts pipe-mode offsets
# from the end of the 16-byte pipe header.
perf = parse(perf_out, re.compile(
    r'(0x[0-9a-f]+|0) \[0x[0-9a-f]+\]: PERF_RECORD_AUXTRACE size: (0x[0-9a-f]+|0)\s+'
    r'offset: (0x[0-9a-f]+|0)\s+ref: (0x[0-9a-f]+|0)\s+idx: (\d+)\s+tid: (-?\d+)\s+'
    r'cpu: (-?\d+)'))
ours = parse(ours_out, re.compile(
    r'^AUXTRACE buffer \d+ at byte (\S+): size (0x[0-9a-f]+|0)\s+offset (0x[0-9a-f]+|0)\s+'
    r'ref (0x[0-9a-f]+|0)\s+idx (\d+)\s+tid (-?\d+)\s+cpu (-?\d+)'))
pipe_skew = 16 if mode == 'pipe' else 0
if not perf:
    print('perf printed no AUXTRACE buffer'); sys.exit(2)
assert len(perf) == len(ours), ('buffers', len(perf), len(ours))
per_entry = 4 if fmt == '4dw' else 6
entries = dwords = 0
for i, (p, o) in enumerate(zip(perf, ours)):
    ph = [int(x, 0) for x in p['head']]
    ph[0] += pipe_skew
    assert ph == [int(x, 0) for x in o['head']], (i, p['head'], o['head'])
    assert p['size'] == o['size'], (i, 'size', p['size'], o['size'])
    assert p['dwords'], (i, 'no dwords from perf')
    for k, (a, b) in enumerate(zip(p['dwords'], o['dwords'])):
        assert a == b, ('buffer', i, 'dword', k, 'perf', a, 'pciescope', b)
    assert len(p['dwords']) == len(o['dwords']), (i, len(p['dwords']), len(o['dwords']))
    assert len(p['dwords']) == p['size'] // (16 if fmt == '4dw' else 32) * per_entry
    entries += len(p['dwords']) // per_entry
    dwords += len(p['dwords'])
print(len(perf), entries, dwords)
EOF

# `trace report --json` against the generator's --expect: entries, every
# (kind, requester) count and payload (summed over directions), matched
# requests, and p50/p90/p99 of both latencies within one log-linear bucket
# (<= 25 %) above the true nearest-rank value, never above the max. The
# generator records direction 2: for 4DW that is inbound requests with
# outbound completions (matched); for 8DW inbound only (no matching; the
# raw 8DW dump below, with no config, checks 8DW latencies).
cat >"$tmp/report.py" <<'EOF'
import json, math, sys
exp = json.load(open(sys.argv[1])); rep = json.load(open(sys.argv[2]))
scale = float(sys.argv[3]) if len(sys.argv) > 3 else 1.0
# 'no': the recorded direction setting sees one side only, so no matching.
match = sys.argv[4] if len(sys.argv) > 4 else 'yes'
assert rep['entries'] == exp['entries'], ('entries', rep['entries'], exp['entries'])
got = {}
for t in rep['tlps']:
    k = (t['kind'], t['requester'])
    c, b = got.get(k, (0, 0))
    got[k] = (c + t['count'], b + t['payload_bytes'])
want = {(t['kind'], t['requester']): (t['count'], t['payload_bytes']) for t in exp['tlps']}
assert got == want, ('tlps', got, want)
lat = rep['latency']
assert lat['unit'] == ('ticks' if scale == 1.0 else 'ns'), lat['unit']
assert lat['enabled'] == (match == 'yes'), ('matching', lat['enabled'], match)
for which in ('first', 'last'):
    h = lat[which]; vals = sorted(exp['latency_ticks_' + which])
    if match != 'yes':
        assert h['matched'] == 0 and lat['matched'] == 0, (which, h['matched'])
        continue
    assert h['matched'] == exp['matched'] == len(vals), (which, h['matched'], exp['matched'])
    assert h['buckets'][-1]['le'] == '+Inf' and h['buckets'][-1]['count'] == len(vals)
    cum = [b['count'] for b in h['buckets']]
    assert cum == sorted(cum), ('buckets not cumulative', cum)
    for q in (0.5, 0.9, 0.99):
        true = vals[max(0, math.ceil(q * len(vals)) - 1)] * scale
        r = h['p%d' % round(q * 100)]
        assert true <= r <= max(true * 1.25 + 4 * scale, true), (which, q, true, r)
        assert r <= vals[-1] * scale + 1e-9, (which, q, r, vals[-1])
print(exp['entries'], len(exp['tlps']), exp['matched'])
EOF

have_perf=yes
command -v "$PERF" >/dev/null 2>&1 || have_perf="no: $PERF is not installed"

# perf wants HOME for its config and build-id cache; keep both out of ~.
export HOME="$tmp"

# perf_dump MODE FILE OUT: pipe mode goes through a real pipe, because perf
# 6.1 reads AUXTRACE data 16 bytes early when stdin is a seekable file
# (`-i - < FILE`: it lseek()s to a stream offset that leaves out the pipe
# header).
perf_dump() {
	if [ "$1" = pipe ]; then
		# shellcheck disable=SC2002 # the pipe is the point
		cat "$2" | timeout 60 "$PERF" report -D -i - >"$3" 2>"$3.err"
	else
		timeout 60 "$PERF" report -D -i "$2" >"$3" 2>"$3.err"
	fi
}

n=0
for fmt in 4dw 8dw; do
	for mode in file pipe; do
		for variant in plain extra large; do
			[ "$variant" = large ] && [ "$mode" = pipe ] && continue
			n=$((n + 1))
			f="$tmp/$fmt-$mode-$variant.data"
			args=(--format "$fmt" --buffers 4 --requests 60 --seed "$n")
			# large: two buffers of about 0.5 MiB (4DW) or 1 MiB (8DW),
			# offsets past 0xffff.
			[ "$variant" = large ] && args=(--format "$fmt" --buffers 2 --requests 12000 --seed "$n")
			[ "$mode" = pipe ] && args+=(--pipe)
			# extra: bytes that are not a whole entry, AUX records with
			# flags, and in file mode the auxtrace index.
			if [ "$variant" = extra ]; then
				args+=(--tail-bytes 8 --aux-flags 5)
				[ "$mode" = file ] && args+=(--index)
			fi
			"$GEN" "${args[@]}" --expect "$f" >"$f.expect"
			timeout 60 "$PCIESCOPE" trace dump "$f" >"$f.ours" 2>"$f.ours.err"
			rc=$?
			check "trace dump $fmt $mode $variant: exit 0, nothing on stderr (rc $rc: $(head -c 200 "$f.ours.err"))" \
				eval '[ $rc -eq 0 ] && [ ! -s "$f.ours.err" ]'
			if [ "$have_perf" != yes ]; then
				skip "perf oracle $fmt $mode $variant: $have_perf"
			elif ! perf_dump "$mode" "$f" "$f.perf" || ! grep -q 'HISI PTT data' "$f.perf"; then
				skip "perf oracle $fmt $mode $variant: perf cannot read the file: $(grep -v '^$' "$f.perf.err" | tail -n 2 | tr '\n' ' ' | head -c 200)"
			else
				res=$("$PYTHON3" "$tmp/compare.py" "$fmt" "$mode" "$f.perf" "$f.ours" 2>&1)
				check "perf report -D and trace dump agree on $fmt $mode $variant (buffers entries dwords: $(echo "$res" | tail -n 1 | head -c 300))" \
					eval '[ -n "$res" ] && [ "$(echo "$res" | wc -l)" -eq 1 ] && [ "$(echo "$res" | wc -w)" -eq 3 ]'
				echo "$res" >>"$tmp/oracle-totals"
			fi
			timeout 60 "$PCIESCOPE" trace report --json "$f" >"$f.json" 2>"$f.json.err"
			rc=$?
			match=$([ "$fmt" = 4dw ] && echo yes || echo no)
			res=$("$PYTHON3" "$tmp/report.py" "$f.expect" "$f.json" 1 "$match" 2>&1)
			check "trace report --json $fmt $mode $variant matches the generator (rc $rc; entries kinds matched: $(echo "$res" | tail -n 1 | head -c 300))" \
				eval '[ $rc -eq 0 ] && [ "$(echo "$res" | wc -w)" -eq 3 ]'
		done
	done
done
if [ -s "$tmp/oracle-totals" ]; then
	# Informational: how much the oracle compared.
	awk '{b += $1; e += $2; d += $3} END {printf "# perf oracle compared %d buffers, %d entries, %d dwords\n", b, e, d}' "$tmp/oracle-totals"
fi

# The time field read as a counter: the same latencies.
f="$tmp/abs.data"
"$GEN" --time-mode absolute --format 4dw --buffers 3 --requests 80 --seed 7 --expect "$f" >"$f.expect"
"$PCIESCOPE" trace report --json --time-mode absolute "$f" >"$f.json" 2>/dev/null
res=$("$PYTHON3" "$tmp/report.py" "$f.expect" "$f.json" 2>&1)
check "report --time-mode absolute on an absolute-time trace ($(echo "$res" | tail -n 1 | head -c 200))" \
	eval '[ "$(echo "$res" | wc -w)" -eq 3 ]'
"$PCIESCOPE" trace report --json "$f" >"$f.delta.json" 2>/dev/null
check "the same trace read as deltas gives other latencies (the mode matters)" \
	eval '! "$PYTHON3" "$tmp/report.py" "$f.expect" "$f.delta.json" >/dev/null 2>&1'

# --clock-hz: 500 MHz makes one tick 2 ns.
f="$tmp/4dw-file-plain.data"
"$PCIESCOPE" trace report --json --clock-hz 500000000 "$f" >"$tmp/ns.json" 2>/dev/null
res=$("$PYTHON3" "$tmp/report.py" "$f.expect" "$tmp/ns.json" 2 2>&1)
check "report --clock-hz 500000000 reports ns, twice the ticks ($(echo "$res" | tail -n 1 | head -c 200))" \
	eval '[ "$(echo "$res" | wc -w)" -eq 3 ]'

# A calibration file's PTT clock counts like --clock-hz (issue 18).
printf '{"pciescope_calibration": 1, "ptt_clock_hz": {"value": 5e8, "verdict": "consistent"}}\n' >"$tmp/cal.json"
"$PCIESCOPE" trace report --json --calibration "$tmp/cal.json" "$f" >"$tmp/cal-ns.json" 2>/dev/null
check "report --calibration (ptt_clock_hz 5e8) = report --clock-hz 500000000" cmp -s "$tmp/ns.json" "$tmp/cal-ns.json"
"$PCIESCOPE" trace report --json --calibration "$tmp/cal.json" --clock-hz 100000000 "$f" >"$tmp/cal-100.json" 2>/dev/null
check "an explicit --clock-hz wins over the calibration file" eval '! cmp -s "$tmp/ns.json" "$tmp/cal-100.json"'

# A raw AUX dump of the same buffers reads like the perf.data.
for fmt in 4dw 8dw; do
	f="$tmp/raw-$fmt.bin"
	"$GEN" --raw --format "$fmt" --buffers 2 --requests 50 --seed 11 --expect "$f" >"$f.expect"
	"$PCIESCOPE" trace report --json --raw "$f" >"$f.json" 2>/dev/null
	res=$("$PYTHON3" "$tmp/report.py" "$f.expect" "$f.json" 2>&1)
	check "report --raw on a raw $fmt AUX dump ($(echo "$res" | tail -n 1 | head -c 200))" \
		eval '[ "$(echo "$res" | wc -w)" -eq 3 ]'
	"$PCIESCOPE" trace dump --raw "$f" >"$f.dump" 2>/dev/null
	per=$([ "$fmt" = 4dw ] && echo 4 || echo 6)
	entries=$("$PYTHON3" -c 'import json,sys; print(json.load(open(sys.argv[1]))["entries"])' "$f.expect")
	check "dump --raw $fmt shows every entry's dwords ($entries entries)" \
		[ "$(grep -c '^\.  [0-9a-f]\{8\}: ' "$f.dump")" -eq $((entries * per)) ]
done

# The text report has the sections a reader looks for.
"$PCIESCOPE" trace report --top 2 "$tmp/4dw-file-plain.data" >"$tmp/report.txt" 2>&1
check "text report: TLP mix, payload histogram, top requesters with other, both latencies" \
	eval 'grep -q "^TLPs by direction and kind" "$tmp/report.txt" && grep -q "^payload sizes" "$tmp/report.txt" &&
		grep -q "^  other " "$tmp/report.txt" && grep -q "^latency to the first completion (ticks): matched [1-9]" "$tmp/report.txt" &&
		grep -q "^latency to the last completion" "$tmp/report.txt" && grep -q "|#" "$tmp/report.txt"'

# Malformed files: exit 3, the file and the byte offset named, for dump and
# report, never a signal or a hang.
for mode in file pipe; do
	for kind in bad-magic short-header zero-size size-past-eof payload-past-eof info-type no-info truncate; do
		f="$tmp/bad-$mode-$kind.data"
		args=(--buffers 2 --requests 10 --corrupt "$kind")
		[ "$mode" = pipe ] && args+=(--pipe)
		"$GEN" "${args[@]}" --expect "$f" >"$f.expect"
		at=$("$PYTHON3" -c 'import json,sys; print(json.load(open(sys.argv[1]))["error_offset"])' "$f.expect")
		for cmd in dump report; do
			timeout 20 "$PCIESCOPE" trace $cmd "$f" >/dev/null 2>"$f.err"
			rc=$?
			check "trace $cmd on $mode $kind: exit 3 naming the file and byte offset $at (rc $rc: $(head -c 200 "$f.err"))" \
				eval '[ $rc -eq 3 ] && grep -q "^pciescope: $f: byte offset $at " "$f.err"'
		done
	done
done
f="$tmp/bad-file-info-type.data"
check "another trace type is named (Intel PT)" grep -q "type 1 (intel_pt), not hisi_ptt" "$f.err"

# A perf.data of something else (cpu-clock samples): no AUXTRACE_INFO.
if [ "$have_perf" = yes ] && timeout 60 "$PERF" record -q -e cpu-clock -o "$tmp/clock.data" -- sleep 0.1 >/dev/null 2>&1; then
	for cmd in dump report; do
		"$PCIESCOPE" trace $cmd "$tmp/clock.data" >"$tmp/out" 2>"$tmp/err"
		rc=$?
		check "trace $cmd on a cpu-clock perf.data: exit 3, not a trace recording (rc $rc: $(head -c 160 "$tmp/err"))" \
			eval '[ $rc -eq 3 ] && grep -q "clock.data: not a PCIe trace recording: no AUXTRACE_INFO" "$tmp/err"'
	done
else
	skip "a cpu-clock perf.data: perf record cannot run here ($have_perf)"
fi

# A device or pipe is read into memory only up to --max-size (issue 19
# item 10: /dev/zero used to be read until the memory ran out).
for cmd in dump report; do
	timeout 20 "$PCIESCOPE" trace $cmd --max-size 1M /dev/zero >/dev/null 2>"$tmp/err"
	rc=$?
	check "trace $cmd --max-size 1M /dev/zero: exit 3 naming the limit (rc $rc: $(head -c 200 "$tmp/err"))" \
		eval '[ $rc -eq 3 ] && grep -q "^pciescope: /dev/zero: more than 1048576 bytes from a pipe, device or stdin (--max-size" "$tmp/err"'
done
f="$tmp/4dw-file-plain.data"
size=$(stat -c %s "$f")
"$PCIESCOPE" trace report --json --max-size $((size - 1)) - <"$f" >/dev/null 2>"$tmp/err"
rc=$?
check "stdin one byte over --max-size: exit 3 (rc $rc)" eval '[ $rc -eq 3 ] && grep -q "more than $((size - 1)) bytes" "$tmp/err"'
"$PCIESCOPE" trace report --json --max-size "$size" - <"$f" >"$tmp/stdin.json" 2>"$tmp/err"
rc=$?
check "stdin of exactly --max-size bytes is read (rc $rc)" eval '[ $rc -eq 0 ] && [ -s "$tmp/stdin.json" ]'
"$PCIESCOPE" trace report --max-size 1 "$f" >/dev/null 2>&1
rc=$?
check "--max-size does not limit a regular file (rc $rc)" [ $rc -eq 0 ]
"$PCIESCOPE" trace report --max-size 10Q "$f" >/dev/null 2>"$tmp/err"
rc=$?
check "--max-size 10Q: exit 3, the value named (rc $rc)" eval '[ $rc -eq 3 ] && grep -q -- "--max-size 10Q" "$tmp/err"'

# Usage and file errors.
usage_case() { # DESCRIPTION PATTERN ARGS...
	local desc=$1 pat=$2 rc
	shift 2
	"$PCIESCOPE" "$@" >/dev/null 2>"$tmp/err"
	rc=$?
	check "$desc (rc $rc: $(head -c 160 "$tmp/err"))" eval '[ $rc -eq 3 ] && grep -q "$pat" "$tmp/err"'
}
usage_case "trace without a subcommand: exit 3 with usage" "usage: pciescope trace" trace
usage_case "trace with an unknown subcommand: exit 3" "usage: pciescope trace" trace show "$tmp/4dw-file-plain.data"
usage_case "trace with two files: exit 3" "usage: pciescope trace" trace dump "$tmp/4dw-file-plain.data" "$tmp/4dw-file-plain.data"
usage_case "a missing file: exit 3 naming it" "nonexistent.data: No such file" trace dump "$tmp/nonexistent.data"
usage_case "a directory: exit 3" "Is a directory" trace dump "$tmp"
usage_case "--time-mode sometimes is refused" "delta or absolute" trace report --time-mode sometimes "$tmp/4dw-file-plain.data"
usage_case "--clock-hz 0 is refused" "clock-hz 0" trace report --clock-hz 0 "$tmp/4dw-file-plain.data"
: >"$tmp/empty.data"
usage_case "an empty file: exit 3, truncated header at byte 0" "byte offset 0 .*truncated header" trace report "$tmp/empty.data"

# The progress bar goes to a terminal only: stderr is a file here.
"$GEN" --format 4dw --buffers 8 --requests 120000 --seed 3 --expect "$tmp/big.data" >"$tmp/big.expect"
# Buffers of about 4.6 MiB, like the driver's 4 MiB chunks: the report
# feeds them in 1 MiB slices, which must not break the time base or matching.
"$PCIESCOPE" trace report --json "$tmp/big.data" >"$tmp/big.json" 2>/dev/null
res=$("$PYTHON3" "$tmp/report.py" "$tmp/big.expect" "$tmp/big.json" 2>&1)
check "report on 8 buffers of ~4.6 MiB matches the generator ($(echo "$res" | tail -n 1 | head -c 200))" \
	eval '[ "$(echo "$res" | wc -w)" -eq 3 ]'
timeout 120 "$PCIESCOPE" trace dump "$tmp/big.data" >/dev/null 2>"$tmp/big.err"
check "a $(($(stat -c %s "$tmp/big.data") >> 20)) MiB dump prints no progress bar when stderr is not a terminal" \
	eval '[ $? -eq 0 ] && [ ! -s "$tmp/big.err" ]'
if command -v script >/dev/null 2>&1; then
	script -qec "$PCIESCOPE trace dump $tmp/big.data >/dev/null" /dev/null >"$tmp/tty.out" 2>&1
	check "... and a progress bar on a terminal" grep -q '[0-9]% \[#' "$tmp/tty.out"
else
	skip "progress bar on a terminal: script(1) is not installed"
fi

done_testing
