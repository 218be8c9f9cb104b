#!/bin/bash
# golden.sh - no behaviour change a user can see: the value stream the
# plugin's engine dispatches on each simulated machine under a fake clock
# (tests/tools/golden_stream), and `pciescope pmu/iio` (text and --json)
# under the CLI's virtual clock, compared byte for byte with the streams
# recorded in tests/golden/ (xz-compressed).
#
#   golden.sh            compare (a test of make check)
#   golden.sh --update   record again (only for an intended change: say
#                        what changed and why in the commit message)
set -u
top=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${top_builddir:-$top/_build}
golden=$top/tests/golden
machines=$top/sim/machines
update=false
[ "${1:-}" = --update ] && update=true
export PCIESCOPE_VIRTUAL_CLOCK=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

pass=0 fail=0
n=0
ok() { n=$((n + 1)); pass=$((pass + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; }

# The collectors' own CPU time differs run to run: masked.
mask_cpu_json() {
	python3 -c '
import json, sys
d = json.load(sys.stdin)
for s in d:
    if s["metric"].endswith("cpu_seconds_total"):
        s["value"] = "cpu"
print(json.dumps(d, indent=1, sort_keys=False))'
}

check() { # NAME, then the command producing the stream on stdout
	local name=$1
	shift
	if ! "$@" >"$tmp/$name" 2>"$tmp/$name.err"; then
		not_ok "$name: the command failed: $(head -c 300 "$tmp/$name.err")"
		return
	fi
	if $update; then
		xz -9 -c "$tmp/$name" >"$golden/$name.xz"
		ok "$name: recorded ($(wc -l <"$tmp/$name") lines)"
		return
	fi
	if [ ! -f "$golden/$name.xz" ]; then
		not_ok "$name: no golden file $golden/$name.xz"
		return
	fi
	if xz -dc "$golden/$name.xz" | cmp -s - "$tmp/$name"; then
		ok "$name: byte-identical ($(wc -l <"$tmp/$name") lines)"
	else
		not_ok "$name: differs from the golden stream:"
		xz -dc "$golden/$name.xz" | diff - "$tmp/$name" | head -20 | sed 's/^/# /'
	fi
}

stream() { "$build/tests/tools/golden_stream" "$machines/$1.json" "$2" 12 "${@:3}"; }
cli() { "$build/cli/pciescope" "$@" --machine-dir "$machines"; }
cli_json() { cli "$@" | mask_cpu_json; }

# Detail "full" is the value set from before the series budget (issue 12),
# recorded then: unchanged byte for byte. The default and basic levels are
# subsets of it (docs/metrics.md, "Series budget").
check plugin-kunpeng930-2p-full stream kunpeng930-2p - Detail=full
check plugin-kunpeng930-2p-5.17-full stream kunpeng930-2p 5.17 Detail=full
check plugin-kunpeng930-misconfig-full stream kunpeng930-misconfig - Detail=full
check plugin-spr-2s-full stream spr-2s - Detail=full
check plugin-spr-2s-6.15-full stream spr-2s 6.15 Detail=full
check plugin-kunpeng930-2p stream kunpeng930-2p -
check plugin-kunpeng930-2p-basic stream kunpeng930-2p - Detail=basic
check plugin-kunpeng930-misconfig stream kunpeng930-misconfig -
check plugin-spr-2s stream spr-2s -
check plugin-yitian710-1p-full stream yitian710-1p - Detail=full
check plugin-yitian710-1p-6.9-full stream yitian710-1p 6.9 Detail=full
check plugin-yitian710-1p stream yitian710-1p -
check plugin-yitian710-1p-basic stream yitian710-1p - Detail=basic
check plugin-turin-2p-full stream turin-2p - Detail=full AMDDFRootComplexBus=0,3,0000:60
check plugin-turin-2p stream turin-2p - AMDDFRootComplexBus=0,3,0000:60
check plugin-turin-2p-basic stream turin-2p - Detail=basic AMDDFRootComplexBus=0,3,0000:60
check plugin-grace-gh200-full stream grace-gh200 - Detail=full
check plugin-grace-gh200-6.15-full stream grace-gh200 6.15 Detail=full
check plugin-grace-gh200 stream grace-gh200 -
check plugin-grace-gh200-basic stream grace-gh200 - Detail=basic
# The default detail publishes a subset of the full one, value for value
# (the same measurements run), plus two aggregates: the machine's finding
# counts and each PMU's worst coverage.
if ! $update; then
	extra=$(comm -23 <(xz -dc "$golden/plugin-kunpeng930-2p.xz" | sort) \
		<(xz -dc "$golden/plugin-kunpeng930-2p-full.xz" | sort) |
		grep -v -e '^[0-9]* pcie//audit_findings/[a-z]* pcie_audit_findings gauge ' \
			-e '^[0-9]* pcie/hisi_pcie[0-9]*_core[0-9]*/pmu_coverage/ pcie_pmu_coverage_ratio ')
	if [ -z "$extra" ]; then
		ok "default detail: a subset of full, value for value, plus the two aggregates"
	else
		not_ok "default detail has values the full detail has not:"
		echo "$extra" | head -5 | sed 's/^/# /'
	fi
fi
# Every value has a collectd identity by the spec's rules, none twice in
# one interval (collectd would take the second for the first's next value).
if ! $update; then
	for m in "$machines"/*.json; do
		name=$(basename "$m" .json)
		if out=$("$build/tests/tools/golden_stream" --identity-check "$m" - 12 Detail=full 2>&1); then
			ok "$name: $(tail -1 <<<"$out")"
		else
			not_ok "$name: collectd identities:"
			tail -5 <<<"$out" | sed 's/^/# /'
		fi
	done
fi
check pmu-kunpeng930-2p.json cli_json pmu --json --simulate kunpeng930-2p
check pmu-kunpeng930-2p-5.17.json cli_json pmu --json --simulate kunpeng930-2p --kernel 5.17
check pmu-kunpeng930-misconfig.json cli_json pmu --json --simulate kunpeng930-misconfig
check pmu-kunpeng930-2p.txt cli pmu --simulate kunpeng930-2p --count 2
check pmu-turin-2p.json cli_json pmu --json --simulate turin-2p
check pmu-turin-2p.txt cli pmu --simulate turin-2p --count 2
check iio-spr-2s.json cli_json iio --json --simulate spr-2s
check iio-spr-2s-6.15.json cli_json iio --json --simulate spr-2s --kernel 6.15
check iio-spr-2s.txt cli iio --simulate spr-2s --count 2
check pmu-yitian710-1p.json cli_json pmu --json --simulate yitian710-1p
check pmu-yitian710-1p.txt cli pmu --simulate yitian710-1p --count 2
check pmu-grace-gh200.json cli_json pmu --json --simulate grace-gh200
check pmu-grace-gh200.txt cli pmu --simulate grace-gh200 --count 2

echo "1..$n"
[ "$fail" -eq 0 ]
