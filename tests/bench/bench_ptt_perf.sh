#!/bin/bash
# bench_ptt_perf.sh - the off-line path on a large recording: a perf.data of
# about 64 MiB of synthetic PTT trace (tests/tools/ptt_perfdata; 4DW and
# 8DW) read by `pciescope trace report` (decode + summaries),
# `pciescope trace dump` (every dword) and, as the reference, Debian's
# `perf report -D` on the same file. Wall-clock seconds and MB/s; ratios
# against perf. Not a test: numbers only.
#   bench_ptt_perf.sh BUILDDIR
set -u
build=${1:-.}
gen="$build/tests/tools/ptt_perfdata"
cli="$build/cli/pciescope"
[ -x "$gen" ] || { echo "bench_ptt_perf: build tests/tools/ptt_perfdata first (make check builds it)"; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
secs() { # command... -> wall seconds
	local t0 t1
	t0=$(date +%s.%N)
	"$@" >/dev/null 2>&1
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'
}
echo "off-line PTT analysis on one core (SYNTHETIC perf.data, file mode)"
for fmt in 4dw 8dw; do
	req=110000
	[ $fmt = 8dw ] && req=55000
	"$gen" --format $fmt --buffers 16 --requests $req "$tmp/$fmt.data" || exit 0
	mb=$(awk -v s="$(stat -c %s "$tmp/$fmt.data")" 'BEGIN { printf "%.1f", s / 1e6 }')
	# report takes a tenth of a second: the best of 3 (start-up included).
	rep=$(for _ in 1 2 3; do secs "$cli" trace report "$tmp/$fmt.data"; echo; done | sort -n | head -n 1)
	dump=$(secs "$cli" trace dump "$tmp/$fmt.data")
	if command -v perf >/dev/null; then
		ref=$(secs perf report -D -i "$tmp/$fmt.data")
	else
		ref=0
	fi
	awk -v f=$fmt -v mb="$mb" -v r="$rep" -v d="$dump" -v p="$ref" 'BEGIN {
		printf "%s: %s MB  trace report %.3f s (%.0f MB/s)  trace dump %.3f s  perf report -D %.3f s", f, mb, r, mb / r, d, p
		if (p > 0) printf "  (report %.1fx, dump %.2fx faster than perf; goals >= 100x: %s, >= 5x: %s)", p / r, p / d, (p / r >= 100 ? "met" : "NOT met"), (p / d >= 5 ? "met" : "NOT met")
		printf "\n"
	}'
done
