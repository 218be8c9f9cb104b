# lib.sh - TAP helpers for the shell tests (sourced). Each test file prints
# "ok N - ..." / "not ok N - ..." lines and a final plan; automake's
# tap-driver.sh counts every line, so the totals are real test results.
# shellcheck shell=bash

tap_n=0
tap_failed=0

ok() {
	tap_n=$((tap_n + 1))
	echo "ok $tap_n - $*"
}

not_ok() {
	tap_n=$((tap_n + 1))
	tap_failed=$((tap_failed + 1))
	echo "not ok $tap_n - $*"
}

# check DESCRIPTION COMMAND... : ok if the command succeeds.
check() {
	local desc=$1
	shift
	if "$@"; then ok "$desc"; else not_ok "$desc"; fi
}

# A test file that cannot run here at all (exit status 77 under TAP).
skip_all() {
	echo "1..0 # SKIP $*"
	exit 0
}

done_testing() {
	echo "1..$tap_n"
	[ "$tap_failed" -eq 0 ]
}

: "${top_srcdir:?run through make check}"
: "${top_builddir:?run through make check}"
PCIESCOPE="$top_builddir/cli/pciescope"
FIXTURES="$top_srcdir/tests/fixtures"
PYTHON3=${PYTHON3:-python3}
