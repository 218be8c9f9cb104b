#!/bin/bash
# arm64_compare.sh [--smoke] PACKAGES BUILDDIR - run the arm64 pciescope
# from the cross-built package under qemu-user-static and the amd64 one from
# the amd64 package on the same inputs, and compare stdout, stderr and exit
# status byte for byte: PTT trace dump/report on perf.data files written by
# the native tests/tools/ptt_perfdata (4DW, 8DW, pipe mode, raw AUX, both
# time modes), topology and audit on every lspci dump fixture, and the
# simulated machines under each kernel, pmu and iio on the virtual clock.
# TAP output, one line per case; the last line says how many cases were
# identical. (scripts/package --arm64)
# --smoke: a few cases of each kind, about 10 s under qemu (scripts/package
# --arm64-smoke, which scripts/test runs).
# shellcheck shell=bash
set -u
smoke=
[ "${1-}" = --smoke ] && { smoke=yes; shift; }
pkgs=$(cd "${1:?usage: arm64_compare.sh [--smoke] _packages/ _build/}" && pwd)
build=$(cd "${2:?usage: arm64_compare.sh [--smoke] _packages/ _build/}" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
qemu=$(command -v qemu-aarch64-static) || { echo "1..0 # SKIP qemu-user-static is not installed"; exit 0; }
gen=$build/tests/tools/ptt_perfdata
if [ ! -x "$gen" ]; then
	make -C "$build" tests/tools/ptt_perfdata >/dev/null || { echo "1..0 # SKIP cannot build ptt_perfdata"; exit 0; }
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for a in amd64 arm64; do
	deb=$(ls "$pkgs"/pciescope_*_"$a".deb 2>/dev/null | head -n 1)
	[ -n "$deb" ] || { echo "1..0 # SKIP no pciescope_*_$a.deb in $pkgs"; exit 0; }
	dpkg-deb -x "$deb" "$tmp/$a"
done
file "$tmp/arm64/usr/bin/pciescope" | grep -q 'ARM aarch64' || { echo "not ok 1 - the arm64 package holds an aarch64 binary"; echo "1..1"; exit 1; }
export PCIESCOPE_MACHINE_DIR=$tmp/amd64/usr/share/pciescope/machines
amd64() { "$tmp/amd64/usr/bin/pciescope" "$@"; }
arm64() { "$qemu" "$tmp/arm64/usr/bin/pciescope" "$@"; }

n=0 same=0 failed=0
# cpu_time_masked: stdin to stdout, the value of pcie_collector_cpu_seconds_total
# (the collector's own CPU time, which differs between two runs on one
# machine too) replaced by a mark; every other byte as it is.
cpu_time_masked() {
	awk '/"metric":"pcie_collector_cpu_seconds_total"/ { cpu = 1 }
		cpu && /"value":/ { sub(/"value":.*/, "\"value\":(CPU time, not compared)"); cpu = 0 }
		{ print }'
}
# compare NAME ARGS...: both builds, stdout/stderr/status identical.
compare() {
	local name=$1
	shift
	n=$((n + 1))
	amd64 "$@" 2>"$tmp/e.amd64" | cpu_time_masked >"$tmp/o.amd64"
	echo "status ${PIPESTATUS[0]}" >>"$tmp/e.amd64"
	arm64 "$@" 2>"$tmp/e.arm64" | cpu_time_masked >"$tmp/o.arm64"
	echo "status ${PIPESTATUS[0]}" >>"$tmp/e.arm64"
	if cmp -s "$tmp/o.amd64" "$tmp/o.arm64" && cmp -s "$tmp/e.amd64" "$tmp/e.arm64"; then
		same=$((same + 1))
		echo "ok $n - $name ($(wc -c <"$tmp/o.amd64") bytes, $(tail -n 1 "$tmp/e.amd64"))"
	else
		failed=$((failed + 1))
		echo "not ok $n - $name: arm64 output differs from amd64"
		diff "$tmp/o.amd64" "$tmp/o.arm64" | head -n 10 | sed 's/^/# /'
		diff "$tmp/e.amd64" "$tmp/e.arm64" | head -n 10 | sed 's/^/# /'
	fi
}

d=$tmp/traces
mkdir -p "$d"
if [ -n "$smoke" ]; then
	m=$src/tests/fixtures/pcidump/pciutils-whole-machine-x58-asus-p6t6.lspci-xxxx.txt
	compare "topology --json --simulate kunpeng930-2p" topology --json --simulate kunpeng930-2p
	compare "audit --json --simulate kunpeng930-misconfig" audit --json --simulate kunpeng930-misconfig
	compare "uncore --json --simulate spr-2s" uncore --json --simulate spr-2s
	PCIESCOPE_VIRTUAL_CLOCK=1 compare "pmu --json --count 2 --simulate kunpeng930-2p (virtual clock)" \
		pmu --json --count 2 --simulate kunpeng930-2p
	compare "topology --pci-dump ${m##*/}" topology --pci-dump "$m"
	compare "audit --json --pci-dump ${m##*/}" audit --json --pci-dump "$m"
	"$gen" --format 8dw --buffers 20 --requests 400 --seed 9 "$d/t.data" >/dev/null 2>&1 ||
		echo "# ptt_perfdata failed"
	compare "trace report --json (8dw)" trace report --json "$d/t.data"
	echo "1..$n"
	echo "# arm64 vs amd64 (smoke): $same of $n cases byte-identical, $failed differ"
	[ "$failed" -eq 0 ]
	exit
fi

# ---- PTT trace decoder and summaries ----
i=0
for spec in "--format 4dw" "--format 8dw" "--format 4dw --pipe" "--format 8dw --pipe" \
	"--format 4dw --time-mode absolute" "--format 4dw --buffers 20 --requests 400 --seed 7" \
	"--format 8dw --buffers 20 --requests 400 --seed 9" "--format 4dw --tail-bytes 8 --aux-flags 5" \
	"--format 4dw --index" "--format 4dw --corrupt size-past-eof" "--format 8dw --corrupt info-type"; do
	i=$((i + 1))
	# shellcheck disable=SC2086
	"$gen" $spec "$d/t$i.data" >/dev/null 2>&1 || { echo "# ptt_perfdata $spec failed"; continue; }
	compare "trace dump ($spec)" trace dump "$d/t$i.data"
	compare "trace report ($spec)" trace report "$d/t$i.data"
	compare "trace report --json ($spec)" trace report --json "$d/t$i.data"
done
"$gen" --format 4dw --time-mode absolute "$d/abs.data" >/dev/null 2>&1
compare "trace report --time-mode absolute --clock-hz 100000000 --top 2" \
	trace report --time-mode absolute --clock-hz 100000000 --top 2 --json "$d/abs.data"
for f in 4dw 8dw; do
	"$gen" --format $f --raw "$d/raw$f.bin" >/dev/null 2>&1
	compare "trace dump --raw ($f)" trace dump --raw "$d/raw$f.bin"
	compare "trace report --raw ($f)" trace report --raw "$d/raw$f.bin"
done

# ---- topology and audit on lspci dumps ----
for f in "$src"/tests/fixtures/pcidump/*.txt "$src"/tests/fixtures/synthetic/*.txt "$src"/tests/fixtures/malformed/*.txt; do
	[ -f "$f" ] || continue
	b=${f#"$src"/tests/fixtures/}
	compare "topology --pci-dump $b" topology --pci-dump "$f"
	compare "topology --json --pci-dump $b" topology --json --pci-dump "$f"
	compare "audit --json --pci-dump $b" audit --json --pci-dump "$f"
	compare "audit --policy performance --pci-dump $b" audit --policy performance --pci-dump "$f"
done

# ---- the simulated machines ----
for m in kunpeng930-2p kunpeng930-misconfig spr-2s; do
	for k in "" 5.17 6.2 6.12 6.15; do
		compare "topology --simulate $m${k:+ --kernel $k}" topology --simulate "$m" ${k:+--kernel "$k"}
	done
	compare "topology --json --simulate $m" topology --json --simulate "$m"
	compare "audit --json --simulate $m" audit --json --simulate "$m"
	compare "uncore --json --simulate $m" uncore --json --simulate "$m"
	# Counters need time: on the virtual clock it moves only when pciescope waits.
	PCIESCOPE_VIRTUAL_CLOCK=1 compare "pmu --json --count 2 --simulate $m (virtual clock)" \
		pmu --json --count 2 --simulate "$m"
	PCIESCOPE_VIRTUAL_CLOCK=1 compare "iio --json --count 2 --simulate $m (virtual clock)" \
		iio --json --count 2 --simulate "$m"
done

echo "1..$n"
echo "# arm64 vs amd64: $same of $n cases byte-identical, $failed differ"
[ "$failed" -eq 0 ]
