#!/bin/bash
# sanitize.sh - every unit test, rebuilt with AddressSanitizer (with leak
# detection) and UndefinedBehaviorSanitizer (-fno-sanitize-recover: the first
# report fails the run), passes with no report; so do the CLI integration
# tests (cli.sh, trace_cli.sh, uncore_cli.sh) run against the sanitized
# pciescope. The tree is configured and built a second time in a scratch
# directory with the sanitizer flags, so the normal build is untouched; each
# tests/unit/test_* binary found there is one result, each CLI script one.
. "$(dirname "$0")/lib.sh"

CC_SAN=${CC_SAN:-$(command -v gcc || command -v clang || command -v cc)}
[ -n "$CC_SAN" ] || skip_all "no C compiler"
[ -x "$top_srcdir/configure" ] || skip_all "no configure script in $top_srcdir (run autoreconf -fi)"
work=$(mktemp -d "${TMPDIR:-/tmp}/pciescope-san.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
printf 'int main(void) { int a[2] = {0, 1}; return a[0]; }\n' >"$work/probe.c"
# shellcheck disable=SC2086
"$CC_SAN" $SAN "$work/probe.c" -o "$work/probe" 2>"$work/probe.log" ||
	skip_all "$CC_SAN lacks -fsanitize=address,undefined: $(head -1 "$work/probe.log")"
"$work/probe" >"$work/probe.out" 2>&1 ||
	skip_all "sanitized binaries cannot run here: $(head -1 "$work/probe.out")"

mkdir "$work/build"
cd "$work/build" || exit 1
# A make of its own: not the flags, jobserver or TESTS of the make check
# that runs this script.
unset MAKEFLAGS MFLAGS MAKELEVEL TESTS
if ! "$top_srcdir/configure" CC="$CC_SAN" CFLAGS="-g -O1 $SAN" LDFLAGS="$SAN" >configure.log 2>&1; then
	not_ok "configure with sanitizers"
	tail -20 configure.log | sed 's/^/# /'
	done_testing
	exit 1
fi
# The CLI and the tools the CLI scripts use, too.
cli_progs="cli/pciescope cli/pciescope-exporter cli/pciescope-snapshot tests/tools/ptt_perfdata tests/tools/sim_write packaging/bash-completion/pciescope"
if ! progs=$(make -s print-check-programs 2>build.log) ||
	! make -j"$(nproc)" $progs $cli_progs >>build.log 2>&1; then
	not_ok "build with sanitizers"
	grep -E 'error|Error' build.log | head -20 | sed 's/^/# /'
	done_testing
	exit 1
fi

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export PCIESCOPE_MACHINE_DIR="$top_srcdir/sim/machines"
n=0
for t in tests/unit/test_*; do
	[ -x "$t" ] && [ -f "$t" ] || continue
	case $t in *.o | *.log | *.trs) continue ;; esac
	name=$(basename "$t")
	n=$((n + 1))
	# The child's own TAP must not reach the driver: plain output, captured.
	(unset CMOCKA_MESSAGE_OUTPUT; cd "$top_srcdir" && "$work/build/$t") >"$work/$name.log" 2>&1
	rc=$?
	if [ $rc -eq 0 ] && ! grep -qE 'runtime error|AddressSanitizer|LeakSanitizer' "$work/$name.log"; then
		ok "asan+ubsan: $name ($(grep -oE '[0-9]+ test\(s\) run' "$work/$name.log" | tail -1))"
	else
		not_ok "asan+ubsan: $name (exit $rc)"
		grep -E 'runtime error|ERROR|SUMMARY|FAILED' "$work/$name.log" | head -20 | sed 's/^/# /'
	fi
done
check "sanitized unit tests found ($n)" [ "$n" -ge 20 ]

# The CLI scripts against the sanitized build: each passes, and no
# sanitizer report was seen. The scripts run with a top_builddir whose
# cli/pciescope is a wrapper that keeps a copy of every report, so that one
# cannot be lost in a script that discards the CLI's stderr or expects it
# to fail (log_path is not honoured by gcc's UBSan next to ASan).
mkdir -p "$work/reports" "$work/shim/cli"
ln -s "$work/build/tests" "$work/shim/tests"
ln -s "$work/build/plugin" "$work/shim/plugin"
ln -s "$work/build/packaging" "$work/shim/packaging"
cat >"$work/shim/cli/pciescope" <<EOF
#!/bin/bash
# a terminal stays a terminal (progress bars): reports show there
[ -t 2 ] && exec "$work/build/cli/pciescope" "\$@"
err=\$(mktemp)
"$work/build/cli/pciescope" "\$@" 2>"\$err"
rc=\$?
cat "\$err" >&2
grep -qE 'runtime error|AddressSanitizer|LeakSanitizer' "\$err" && cp "\$err" "$work/reports/report.\$\$"
rm -f "\$err"
exit \$rc
EOF
chmod +x "$work/shim/cli/pciescope"
for script in cli.sh trace_cli.sh uncore_cli.sh calibrate.sh; do
	out="$work/$script.out"
	rm -f "$work/reports/"*
	(cd "$work/build" && unset CMOCKA_MESSAGE_OUTPUT &&
		top_srcdir="$top_srcdir" top_builddir="$work/shim" \
		PCIESCOPE_BINARY="$work/build/cli/pciescope" \
		bash "$top_srcdir/tests/integration/$script") >"$out" 2>&1
	rc=$?
	fails=$(grep -c '^not ok' "$out")
	passes=$(grep -c '^ok' "$out")
	reports=$(find "$work/reports" -type f | wc -l)
	if [ $rc -eq 0 ] && [ "$fails" = 0 ] && [ "$reports" = 0 ] && [ "$passes" -gt 0 ]; then
		ok "asan+ubsan: $script ($passes checks)"
	elif grep -q '^1\.\.0 # SKIP' "$out"; then
		ok "asan+ubsan: $script # SKIP $(sed -n 's/^1\.\.0 # SKIP //p' "$out")"
	else
		not_ok "asan+ubsan: $script (exit $rc, $fails failed checks, $reports sanitizer reports)"
		grep '^not ok' "$out" | head -10 | sed 's/^/# /'
		cat "$work/reports/"* 2>/dev/null | grep -E 'runtime error|ERROR|SUMMARY|#[0-9] ' | head -20 | sed 's/^/# /'
	fi
done
done_testing
