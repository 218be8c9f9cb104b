#!/bin/bash
# sanitize.sh - the PTT decoder unit tests, rebuilt with AddressSanitizer and
# UndefinedBehaviorSanitizer (-fno-sanitize-recover: the first report fails
# the run), pass with no report. Built in a scratch directory from the
# sources, so the normal build is untouched.
. "$(dirname "$0")/lib.sh"

# One line per unit test: NAME COLLECTORS-SOURCES... (add a line to add one).
TESTS_AND_SOURCES='
test_tlp collectors/tlp.c
test_ptt_entry collectors/ptt_entry.c collectors/tlp.c
test_ptt_summary collectors/ptt_summary.c collectors/ptt_entry.c collectors/tlp.c
test_perf_data collectors/perf_data.c
'

CC_SAN=${CC_SAN:-$(command -v gcc || command -v clang || command -v cc)}
[ -n "$CC_SAN" ] || skip_all "no C compiler"
CMOCKA_FLAGS=$(pkg-config --cflags --libs cmocka 2>/dev/null) || CMOCKA_FLAGS=-lcmocka
work=$(mktemp -d "${TMPDIR:-/tmp}/pciescope-san.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
printf 'int main(void) { int a[2] = {0, 1}; return a[0]; }\n' >"$work/probe.c"
# shellcheck disable=SC2086
"$CC_SAN" $SAN "$work/probe.c" -o "$work/probe" 2>"$work/probe.log" ||
	skip_all "$CC_SAN lacks -fsanitize=address,undefined: $(head -1 "$work/probe.log")"
"$work/probe" >"$work/probe.out" 2>&1 ||
	skip_all "sanitized binaries cannot run here: $(head -1 "$work/probe.out")"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
while read -r name sources; do
	[ -n "$name" ] || continue
	srcs=("$top_srcdir/tests/unit/$name.c")
	for s in $sources; do srcs+=("$top_srcdir/$s"); done
	# shellcheck disable=SC2086
	if ! "$CC_SAN" -g -O1 $SAN -Wall -I"$top_srcdir/collectors" "${srcs[@]}" $CMOCKA_FLAGS \
		-o "$work/$name" 2>"$work/$name.build"; then
		not_ok "asan+ubsan build: $name"
		sed 's/^/# /' "$work/$name.build" | head -20
		continue
	fi
	# The child's own TAP must not reach the driver: plain output, captured.
	(unset CMOCKA_MESSAGE_OUTPUT; "$work/$name") >"$work/$name.log" 2>&1
	rc=$?
	if [ $rc -eq 0 ] && ! grep -qE 'runtime error|AddressSanitizer|LeakSanitizer' "$work/$name.log"; then
		ok "asan+ubsan: $name ($(grep -oE '[0-9]+ test\(s\) run' "$work/$name.log" | head -1))"
	else
		not_ok "asan+ubsan: $name (exit $rc)"
		grep -E 'runtime error|ERROR|SUMMARY|FAILED' "$work/$name.log" | head -20 | sed 's/^/# /'
	fi
done <<<"$TESTS_AND_SOURCES"
done_testing
