#!/bin/bash
# sim_machines.sh - every machine description reads as it did: the parsed
# struct sim_machine of each shipped (sim/machines) and fixture
# (tests/fixtures/machines) machine, dumped field by field by
# tests/tools/sim_machine_dump, and the error message for each broken one
# (tests/fixtures/machines-bad), compared byte for byte with
# tests/golden/sim_machines/.
#
#   sim_machines.sh            compare (a test of make check)
#   sim_machines.sh --update   record again (only for an intended change to
#                              what a machine reads as: say why in the commit)
set -u
top=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${top_builddir:-$top/_build}
golden=$top/tests/golden/sim_machines
dump=$build/tests/tools/sim_machine_dump
update=false
[ "${1:-}" = --update ] && update=true
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ ! -x "$dump" ]; then
	echo "1..0 # SKIP tests/tools/sim_machine_dump is not built (make check builds it)"
	exit 0
fi

n=0 fail=0
for dir in sim/machines tests/fixtures/machines tests/fixtures/machines-bad; do
	for f in "$top/$dir"/*.json; do
		name=$(basename "$f" .json)
		out=$golden/$(basename "$dir")-$name.txt
		n=$((n + 1))
		# Relative names: the messages quote the file as given.
		(cd "$top/$dir" && "$dump" "$name.json") >"$tmp/out" 2>&1
		if $update; then
			mkdir -p "$golden"
			cp "$tmp/out" "$out"
			echo "ok $n - $dir/$name.json recorded"
		elif cmp -s "$tmp/out" "$out"; then
			echo "ok $n - $dir/$name.json reads as recorded"
		else
			fail=$((fail + 1))
			echo "not ok $n - $dir/$name.json reads differently"
			diff -u "$out" "$tmp/out" | head -20 | sed 's/^/# /'
		fi
	done
done
# Every shipped machine is installed (`--simulate NAME` finds it in the
# package's machine directory): Makefile.am lists it in dist_machines_DATA.
if ! $update; then
	# The variable's words, continuation lines joined.
	installed=$(awk '/^dist_machines_DATA[ +]*=/ { on = 1 } on { print } on && !/\\$/ { on = 0 }' \
		"$top/Makefile.am" | tr -s ' \t\\' '\n' | grep '^sim/machines/')
	for f in "$top"/sim/machines/*.json; do
		n=$((n + 1))
		if printf '%s\n' "$installed" | grep -qx "sim/machines/$(basename "$f")"; then
			echo "ok $n - sim/machines/$(basename "$f") is installed (dist_machines_DATA)"
		else
			fail=$((fail + 1))
			echo "not ok $n - sim/machines/$(basename "$f") is not in Makefile.am's dist_machines_DATA"
		fi
	done
fi
echo "1..$n"
[ "$fail" -eq 0 ]
