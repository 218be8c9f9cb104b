#!/bin/bash
# families.sh - the checked-in artefacts of metrics/families.spec are what
# metrics/gen_families.awk makes of it: collectors/pcie_families.h,
# plugin/pcie_types.db, the family tables of docs/metrics.md and the chart
# table of docs/netdata.md (and that the identity rules of the pcie plugin
# and pcie.plugin's chart table are made). After
# changing the spec, run `make update-families` (in the build directory)
# and commit them with it.
set -u
top=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
AWK=${AWK:-awk}
gen=$top/metrics/gen_families.awk
spec=$top/metrics/families.spec
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

n=0 fail=0
check() { # NAME, GENERATED, CHECKED-IN
	n=$((n + 1))
	if diff -u "$3" "$2" >"$tmp/diff"; then
		echo "ok $n - $1 is what the spec makes"
	else
		fail=$((fail + 1))
		echo "not ok $n - $1 drifted from metrics/families.spec (make update-families)"
		head -40 "$tmp/diff" | sed 's/^/# /'
	fi
}

for out in header table catalog types identity netdata; do
	n=$((n + 1))
	if "$AWK" -v out=$out -f "$gen" "$spec" >"$tmp/$out" 2>"$tmp/err"; then
		echo "ok $n - the spec makes out=$out"
	else
		fail=$((fail + 1))
		echo "not ok $n - the spec makes out=$out: $(head -3 "$tmp/err")"
	fi
done
check collectors/pcie_families.h "$tmp/header" "$top/collectors/pcie_families.h"
check plugin/pcie_types.db "$tmp/types" "$top/plugin/pcie_types.db"
"$AWK" -v out=docs -v docs="$top/docs/metrics.md" -f "$gen" "$spec" >"$tmp/metrics.md" 2>"$tmp/err" ||
	echo "# $(head -3 "$tmp/err")"
check "docs/metrics.md's family tables" "$tmp/metrics.md" "$top/docs/metrics.md"
"$AWK" -v out=netdata-docs -v docs="$top/docs/netdata.md" -f "$gen" "$spec" >"$tmp/netdata.md" 2>"$tmp/err" ||
	echo "# $(head -3 "$tmp/err")"
check "docs/netdata.md's chart table" "$tmp/netdata.md" "$top/docs/netdata.md"

# A broken spec is refused with the line that breaks it, never half made.
refused() { # WHAT, OUT, PATTERN of the message, then the spec's text
	printf '%b' "$4" >"$tmp/bad.spec"
	n=$((n + 1))
	if "$AWK" -v out="$2" -f "$gen" "$tmp/bad.spec" >/dev/null 2>"$tmp/err"; then
		fail=$((fail + 1))
		echo "not ok $n - $1 is refused"
	elif grep -q "bad.spec:.*$3" "$tmp/err"; then
		echo "ok $n - $1 is refused, naming the line"
	else
		fail=$((fail + 1))
		echo "not ok $n - the refusal names the file and line: $(cat "$tmp/err")"
	fi
}
refused "a unit that is not a suffix of the name" table 'unit seconds is not a suffix' \
	'section x\ntitle t\nheader h\n\nfamily pcie_bad_bytes\nsection x\ntype gauge\nunit seconds\nhelp h\n'
refused "a collectd-identity reference the plugin cannot read" identity 'not a reference: {state-x}' \
	'section x\ntitle t\nheader h\n\nfamily pcie_bad_bytes\nsection x\ntype gauge\nunit bytes\nhelp h\ncollectd bad value:GAUGE:0:U\ncollectd-identity {bdf} {state-x}\n'
nd_family='section x\ntitle t\nheader h\n\nfamily pcie_bad_bytes\nsection x\ntype gauge\nunit bytes\nhelp h\ndoc-row no\n'
refused "a family's netdata context without its chart" netdata 'netdata pcie.bad has no chart stanza' \
	"${nd_family}netdata pcie.bad\n"
refused "a chart of a family that does not give its context" netdata 'does not give netdata pcie.bad' \
	"${nd_family}\nchart bad\nfamily pcie_bad_bytes\ntitle t\nunits bandwidth\nnetdata-family f\ntype line\ndim-name v\ndoc-dimensions d\n"
refused "a chart with a misspelt key" netdata 'no key dim-bi in a chart stanza' \
	"${nd_family}netdata pcie.bad\n\nchart bad\nfamily pcie_bad_bytes\ndim-bi x\n"
refused "a chart whose dimensions have no name" netdata 'named by dim-by labels or one dim-name' \
	"${nd_family}netdata pcie.bad\n\nchart bad\nfamily pcie_bad_bytes\ntitle t\nunits bandwidth\nnetdata-family f\ntype line\ndoc-dimensions d\n"
echo "1..$n"
[ "$fail" -eq 0 ]
