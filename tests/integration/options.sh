#!/bin/bash
# options.sh - one option table for every front end: docs/configuration.md's
# configuration reference is exactly what `pciescope options --markdown`
# prints from the engine's table, and every option the table knows is
# accepted by the plugin's parser (a real collectd reads pcie.conf.example
# in collectd.sh) and by the CLI's checks alike.
set -u
top=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${top_builddir:-$top/_build}
P="$build/cli/pciescope"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 fail=0
check() { local d=$1; shift; n=$((n + 1)); if "$@"; then echo "ok $n - $d"; else fail=$((fail + 1)); echo "not ok $n - $d"; fi; }

"$P" options --markdown >"$tmp/generated" 2>"$tmp/err"
check "pciescope options --markdown runs ($(head -c 200 "$tmp/err"))" [ -s "$tmp/generated" ]
# The page's block: from the table header under "## Configuration reference"
# to the first line that is not a table row.
awk '/^## Configuration reference/ { on = 1; next }
     on && /^\| option \| argument/ { t = 1 }
     t && !/^\|/ { exit }
     t { print }' "$top/docs/configuration.md" >"$tmp/readme"
check "docs/configuration.md has the reference table ($(wc -l <"$tmp/readme") lines)" [ -s "$tmp/readme" ]
if cmp -s "$tmp/generated" "$tmp/readme"; then
	check "docs/configuration.md's configuration reference == the engine's option table" true
else
	check "docs/configuration.md's configuration reference == the engine's option table (regenerate: pciescope options --markdown)" false
	diff "$tmp/readme" "$tmp/generated" | head -20 | sed 's/^/# /'
fi
rows=$(grep -c '^| `' "$tmp/generated")
check "every option has a row with argument, default and meaning ($rows)" \
	eval '[ "$rows" -ge 40 ] && ! grep -qE "^\| \`[A-Za-z]+\` \|  *\|" "$tmp/generated"'

# The CLI checks with the same table: the plugin's ranges, the flag's name.
"$P" trace report --top 5000 /dev/null >/dev/null 2>"$tmp/e1"
check "--top 5000 is refused with TraceTopRequesters' range ($(cat "$tmp/e1"))" \
	grep -q -- "--top 5000: must be a whole number from 0 to 4096" "$tmp/e1"
"$P" trace report --clock-hz 1e300 /dev/null >/dev/null 2>"$tmp/e2"
check "--clock-hz 1e300 is refused with TraceClock's range ($(cat "$tmp/e2"))" \
	grep -q -- "--clock-hz 1e300: must be a whole number from 1e+06 to 1e+10" "$tmp/e2"
"$P" topology --kernel 6.12 >/dev/null 2>"$tmp/e3"
check "--kernel without --simulate is refused ($(cat "$tmp/e3"))" grep -q "SimulateKernel: only with Simulate" "$tmp/e3"
"$P" topology --simulate kunpeng930-2p --kernel 7.0 >/dev/null 2>"$tmp/e4"
check "--kernel 7.0 lists the simulated kernels ($(cat "$tmp/e4"))" grep -q "7.0: not one of 5.17, 6.2, 6.9, 6.12, 6.15" "$tmp/e4"

echo "1..$n"
[ "$fail" -eq 0 ]
