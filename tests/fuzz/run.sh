#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# run.sh - build the libFuzzer targets listed in tests/fuzz/targets with
# clang -fsanitize=fuzzer,address,undefined and run each for a bounded time
# on a scratch copy of its seed corpus (the tree is never written).
#
# usage: run.sh [-t SECONDS | -n RUNS] [-j JOBS] [-w WORKDIR] [-b] [TARGET...]
#   -t  seconds per target (default 20)   -w  scratch directory (default: mktemp)
#   -n  executions per target instead of a time (make fuzz-long: 10 M)
#   -j  targets run at once (default 1)   -b  build only
#   TARGET: names from the list (default: all)
# Env: CLANG (default clang, then clang-14), FUZZ_CFLAGS (extra flags),
# FUZZ_ARGS (extra libFuzzer flags for every target, e.g. -runs=N),
# ASAN_OPTIONS (default detect_leaks=1:quarantine_size_mb=64: freed memory
# stays poisoned for the next 64 MiB of frees, hundreds of inputs here,
# instead of 256 MiB, whose cycling through fresh pages cost up to 60 % of
# the time of the allocating targets).
# In tests/fuzz/targets a word starting with '-' is a compiler or linker
# flag (@top@ stands for the top source directory), @collectors links all of
# collectors/*.c, built once with the same instrumentation, and a word
# max_len=N sets the target's -max_len (default 4096); FUZZ_MAX_LEN="name=N
# ..." overrides it (a slow target runs faster on smaller inputs).
# Prints one "PASS|FAIL NAME ..." line per target with libFuzzer's execs and
# time; exits 0 only when every target built and ran without a finding.
# SIGTERM or SIGINT stops the runs (libFuzzer is interrupted and prints its
# stats): each target stopped so far gets a "STOP NAME execs N in S s" line
# with what it did, and the exit status is 1.
# Exit 77 when clang cannot build a libFuzzer binary here.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
secs=20 runs= jobs=1 work= build_only=0 failed=0
names=() max_lens=()
while getopts "t:n:j:w:b" opt; do
	case $opt in
	t) secs=$OPTARG ;;
	n) runs=$OPTARG ;;
	j) jobs=$OPTARG ;;
	w) work=$OPTARG ;;
	b) build_only=1 ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))

CLANG=${CLANG:-$(command -v clang || command -v clang-14)}
[ -n "$CLANG" ] || { echo "SKIP clang is not installed"; exit 77; }
if [ -z "$work" ]; then
	work=$(mktemp -d "${TMPDIR:-/tmp}/pciescope-fuzz.XXXXXX") || exit 1
	# Kept when something failed: the crashing inputs are in it.
	trap '[ "$failed" -eq 0 ] && rm -rf "$work"' EXIT
fi
mkdir -p "$work" || exit 1

# Can this clang link libFuzzer with ASan and UBSan at all?
printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' >"$work/probe.c"
if ! "$CLANG" -fsanitize=fuzzer,address,undefined "$work/probe.c" -o "$work/probe" 2>"$work/probe.log"; then
	echo "SKIP $CLANG cannot build libFuzzer targets: $(head -1 "$work/probe.log")"
	exit 77
fi

# The family table and the catalog a build makes from metrics/families.spec
# (the catalog joins every target that builds writer/prom_catalog.c).
mkdir -p "$work/gen" || exit 1
for out in table:pcie_families.c catalog:prom_catalog_table.c; do
	awk -v out="${out%%:*}" -f "$top/metrics/gen_families.awk" "$top/metrics/families.spec" \
		>"$work/gen/${out#*:}" || { echo "FAIL metrics/families.spec does not generate"; exit 1; }
done

CFLAGS="-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -I$top/collectors ${FUZZ_CFLAGS:-}"

# collectors/*.c as one instrumented archive, for targets that need the
# rest of the library around the parser they fuzz (built on first use).
collectors_lib() {
	local lib="$work/collectors/libcollectors.a" src obj objs=()
	[ -f "$lib" ] && { echo "$lib"; return 0; }
	mkdir -p "$work/collectors"
	for src in "$top"/collectors/*.c "$work/gen/pcie_families.c"; do
		obj="$work/collectors/$(basename "$src" .c).o"
		# shellcheck disable=SC2086
		"$CLANG" ${CFLAGS/-fsanitize=fuzzer,/-fsanitize=fuzzer-no-link,} -c "$src" -o "$obj" \
			2>>"$work/collectors/build.log" || return 1
		objs+=("$obj")
	done
	ar rcs "$lib" "${objs[@]}" || return 1
	echo "$lib"
}
while read -r name sources; do
	case $name in '#'* | '') continue ;; esac
	if [ $# -gt 0 ]; then
		want=0
		for t in "$@"; do [ "$t" = "$name" ] && want=1; done
		[ $want -eq 1 ] || continue
	fi
	srcs=("$here/$name.c")
	flags=()
	max_len=4096
	for s in $sources; do
		case $s in
		-*) flags+=("${s//@top@/$top}") ;;
		max_len=*) max_len=${s#max_len=} ;;
		@collectors)
			if ! lib=$(collectors_lib); then
				echo "FAIL $name build (collectors/*.c)"
				head -20 "$work/collectors/build.log" | sed 's/^/    /'
				failed=1
				continue 2
			fi
			flags+=("$lib")
			;;
		writer/prom_catalog.c) srcs+=("$top/$s" "$work/gen/prom_catalog_table.c") ;;
		*) srcs+=("$top/$s") ;;
		esac
	done
	# shellcheck disable=SC2086 # CFLAGS is a list of flags
	if ! "$CLANG" $CFLAGS "${srcs[@]}" "${flags[@]}" -o "$work/$name" 2>"$work/$name.build.log"; then
		echo "FAIL $name build"
		sed 's/^/    /' "$work/$name.build.log" | head -20
		failed=1
		continue
	fi
	for o in ${FUZZ_MAX_LEN:-}; do
		[ "${o%%=*}" = "$name" ] && max_len=${o#*=}
	done
	if [ $build_only -eq 1 ]; then
		echo "PASS $name built"
		continue
	fi
	names+=("$name")
	max_lens+=("$max_len")
	rm -f "$work/$name.result"
done <"$here/targets"

# One target: its verdict line goes to $work/NAME.result.
run_one() {
	local name=$1 max_len=$2 seeds=() limit rc execs done_line cov secs_run rate pid start
	local stopped=0
	rm -rf "$work/$name.corpus" && mkdir -p "$work/$name.corpus" "$work/$name.crash"
	[ -d "$here/corpus/$name" ] && seeds=("$here/corpus/$name")
	if [ -n "$runs" ]; then limit=(-runs="$runs"); else limit=(-max_total_time="$secs"); fi
	start=$(date +%s)
	# shellcheck disable=SC2086 # FUZZ_ARGS is a list of flags
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:quarantine_size_mb=64} UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
		"$work/$name" "${limit[@]}" -timeout=10 -rss_limit_mb=2048 -max_len="$max_len" \
		-print_final_stats=1 -artifact_prefix="$work/$name.crash/" ${FUZZ_ARGS:-} \
		"$work/$name.corpus" "${seeds[@]}" >"$work/$name.log" 2>&1 &
	pid=$!
	# Stopped: stop libFuzzer (it catches SIGTERM and prints its stats; SIGINT
# is ignored in a background job) and report them.
	trap 'stopped=1; kill -TERM $pid 2>/dev/null' TERM INT
	wait $pid
	rc=$?
	[ $stopped -eq 1 ] && { wait $pid; rc=$?; }
	trap - TERM INT
	secs_run=$(($(date +%s) - start))
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$name.log" | tail -1)
	# No final stats (killed hard): the last status line's count.
	[ -n "$execs" ] || execs=$(sed -n 's/^#\([0-9]*\)[[:space:]].*/\1/p' "$work/$name.log" | tail -1)
	done_line=$(grep -E '^Done [0-9]+ runs in' "$work/$name.log" | tail -1)
	cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+' "$work/$name.log" | tail -1)
	if [ $stopped -eq 1 ] && ! grep -qE 'ERROR|runtime error|deadly signal' "$work/$name.log"; then
		rate=$((${execs:-0} / (secs_run > 0 ? secs_run : 1)))
		echo "STOP $name execs ${execs:-?} in $secs_run s ($rate/s, max_len $max_len, stopped before the end) $cov"
	elif [ $rc -eq 0 ] && [ -n "$done_line" ]; then
		secs_run=$(echo "$done_line" | sed -n 's/.* in \([0-9]*\) second.*/\1/p')
		rate=$((${execs:-0} / (${secs_run:-0} > 0 ? secs_run : 1)))
		echo "PASS $name execs ${execs:-?} (${done_line#Done }, $rate/s, max_len $max_len) $cov"
	else
		echo "FAIL $name rc $rc execs ${execs:-?}; artifacts in $work/$name.crash"
		grep -E 'ERROR|SUMMARY|runtime error|deadly signal' "$work/$name.log" | head -10 | sed 's/^/    /'
	fi >"$work/$name.result"
}

# Stopped: pass it on to the targets running, wait for their verdicts,
# start no more.
stop=0
trap 'stop=1; kill -TERM $(jobs -rp) 2>/dev/null' TERM INT
for i in "${!names[@]}"; do
	while [ $stop -eq 0 ] && [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
		wait -n
	done
	[ $stop -eq 0 ] || break
	run_one "${names[$i]}" "${max_lens[$i]}" &
done
while [ -n "$(jobs -rp)" ]; do
	wait
done
for name in "${names[@]}"; do
	[ -f "$work/$name.result" ] || continue
	cat "$work/$name.result"
	grep -q '^PASS' "$work/$name.result" || failed=1
done
[ $stop -eq 0 ] || failed=1
exit $failed
