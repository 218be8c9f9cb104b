#!/bin/bash
# fuzz.sh - every libFuzzer target in tests/fuzz/targets builds with
# clang -fsanitize=fuzzer,address,undefined and runs FUZZ_SECONDS (10) from
# its seed corpus without a crash, leak, UBSan report or broken invariant.
. "$(dirname "$0")/lib.sh"

FUZZ_SECONDS=${FUZZ_SECONDS:-10}
log=$(mktemp "${TMPDIR:-/tmp}/pciescope-fuzz-log.XXXXXX") || exit 1
trap 'rm -f "$log"' EXIT
"$top_srcdir/tests/fuzz/run.sh" -t "$FUZZ_SECONDS" >"$log" 2>&1
rc=$?
if [ $rc -eq 77 ]; then
	skip_all "$(sed -n 's/^SKIP //p' "$log" | head -1)"
fi
while read -r verdict name rest; do
	case $verdict in
	PASS) ok "fuzz $name: $rest" ;;
	FAIL) not_ok "fuzz $name: $rest" ;;
	*) echo "# $verdict $name $rest" ;;
	esac
done <"$log"
# run.sh failing without naming a target is a failure too.
[ $rc -eq 0 ] || [ $tap_failed -gt 0 ] || not_ok "tests/fuzz/run.sh exited $rc"
[ $tap_n -gt 0 ] || not_ok "no fuzz target ran"
done_testing
