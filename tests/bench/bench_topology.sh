#!/bin/bash
# bench_topology.sh - `pciescope topology --json` on an `lspci -xxxx` dump of
# 1,060 functions (the 53-function X58 machine of the fixtures repeated in
# 20 PCI domains) against `lspci -vv -F` on the same file, the reference.
# Wall clock, best of 10 runs each, alternating. Goal (issue 17): ratio
# <= 0.3. Not a test: numbers only.
#   bench_topology.sh BUILDDIR SRCDIR
set -u
build=${1:-.}
src=${2:-.}
cli="$build/cli/pciescope"
x58="$src/tests/fixtures/pcidump/pciutils-whole-machine-x58-asus-p6t6.lspci-xxxx.txt"
[ -f "$x58" ] || x58=/work/shared/fixtures/pcidump/pciutils-whole-machine-x58-asus-p6t6.lspci-xxxx.txt
[ -f "$x58" ] || { echo "bench_topology: no X58 dump"; exit 0; }
command -v lspci >/dev/null || { echo "bench_topology: no lspci (pciutils): no reference"; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Domain d prefixed to every function line ("bb:dd.f " -> "dddd:bb:dd.f ").
for d in $(seq 0 19); do
	awk -v d="$d" '/^[0-9a-f][0-9a-f]:[0-9a-f][0-9a-f]\.[0-7] / { printf "%04x:", d } { print }' "$x58"
done >"$tmp/dump.txt"
n=$(grep -c '^[0-9a-f]\{4\}:[0-9a-f][0-9a-f]:' "$tmp/dump.txt")
# Bash's own clock ($EPOCHREALTIME, microseconds), not date(1): a date
# process before and after each run added its fork and exec (5-10 ms in a
# VM) to both sides and pulled the ratio towards 1.
ns() { # command... -> wall nanoseconds
	local t0 t1
	t0=${EPOCHREALTIME/[.,]/}
	"$@" >/dev/null 2>&1
	t1=${EPOCHREALTIME/[.,]/}
	echo $(((10#$t1 - 10#$t0) * 1000))
}
best_ours=0 best_ref=0
for _ in 1 2 3 4 5 6 7 8 9 10; do
	a=$(ns "$cli" topology --json --pci-dump "$tmp/dump.txt")
	b=$(ns lspci -vv -F "$tmp/dump.txt")
	[ $best_ours -eq 0 ] || [ "$a" -lt $best_ours ] && best_ours=$a
	[ $best_ref -eq 0 ] || [ "$b" -lt $best_ref ] && best_ref=$b
done
awk -v n="$n" -v a="$best_ours" -v b="$best_ref" 'BEGIN {
	r = a / b
	printf "topology --json on a %d-function dump: %.1f ms, lspci -vv %.1f ms (best of 10): ratio %.2f of lspci, goal <= 0.30: %s\n", n, a / 1e6, b / 1e6, r, r <= 0.30 ? "met" : "NOT met"
}'
