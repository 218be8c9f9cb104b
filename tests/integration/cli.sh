#!/bin/bash
# cli.sh - the pciescope command on dump fixtures: audit exit statuses,
# downtraining in the JSON, and clear errors (never a crash or a hang) for
# bad input.
. "$(dirname "$0")/lib.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
syn="$FIXTURES/synthetic"

# Exit statuses: 0 ok, 1 warnings, 2 critical (hand-checked against each
# scenario's README in tests/fixtures/synthetic).
for row in "switch-mps-mismatch 2" "rciep-and-multifunction 2" "domain-0001 2" \
	"legacy-bridge 1" "downtrained 0"; do
	set -- $row
	timeout 20 "$PCIESCOPE" audit --pci-dump "$syn/$1.lspci-xxxx.txt" >"$tmp/out" 2>&1
	rc=$?
	check "audit $1 exits $2 (got $rc)" [ "$rc" -eq "$2" ]
done
check "audit report names the critical mismatch" \
	grep -q "critical 0000:03:00.0  MPS 512 larger than link partner 0000:02:00.0's MPS 256" \
	<(timeout 20 "$PCIESCOPE" audit --pci-dump "$syn/switch-mps-mismatch.lspci-xxxx.txt")

# The policy comes from --policy, else from the proc tree's cmdline.
mkdir -p "$tmp/proc" && echo "quiet pci=noaer,pcie_bus_perf" >"$tmp/proc/cmdline"
"$PCIESCOPE" audit --json --pci-dump "$syn/switch-mps-mismatch.lspci-xxxx.txt" \
	--proc-root "$tmp/proc" >"$tmp/a.json" 2>/dev/null
check "audit reads pci=pcie_bus_perf from the proc root" \
	"$PYTHON3" -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(d["policy"]!="performance")' "$tmp/a.json"
"$PCIESCOPE" audit --json --policy peer2peer --pci-dump "$syn/switch-mps-mismatch.lspci-xxxx.txt" >"$tmp/b.json" 2>/dev/null
check "audit --policy overrides and every function lists all five policies" \
	"$PYTHON3" -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["policy"] == "peer2peer" and d["policy_source"] == "--policy"
for f in d["functions"]:
    assert set(f["policies"]) == {"tune_off", "default", "safe", "performance", "peer2peer"}, f
    assert f["policies"]["peer2peer"]["mps_bytes"] == 128, f
assert d["exit_status"] == 2 and d["summary"]["critical"] >= 1
' "$tmp/b.json"

# Downtraining as the JSON interface reports it.
"$PCIESCOPE" topology --json --pci-dump "$syn/downtrained.lspci-xxxx.txt" >"$tmp/t.json"
check "topology --json: 05:00.0 and its root port downtrained, 06:00.0 not, 00:04.0 down" \
	"$PYTHON3" -c '
import json, sys
d = {f["bdf"]: f for f in json.load(open(sys.argv[1]))}
assert d["0000:05:00.0"]["link"]["downtrained"] is True
assert d["0000:00:02.0"]["link"]["downtrained"] is True
assert d["0000:06:00.0"]["link"]["downtrained"] is False
assert d["0000:00:04.0"]["link"]["up"] is False and d["0000:00:04.0"]["link"]["downtrained"] is False
assert d["0000:05:00.0"]["parent"] == "0000:00:02.0" and d["0000:05:00.0"]["root_port"] == "0000:00:02.0"
assert d["0000:05:00.0"]["link"]["partner"] == "0000:00:02.0"
' "$tmp/t.json"
check "topology text marks the downtrained link" \
	grep -q "05:00.0 endpoint .*DOWNTRAINED" <("$PCIESCOPE" topology --no-names --pci-dump "$syn/downtrained.lspci-xxxx.txt")

# Every synthetic and real dump gives valid JSON.
for f in "$syn"/*.lspci-xxxx.txt "$FIXTURES"/pcidump/*.txt; do
	timeout 20 "$PCIESCOPE" topology --json --pci-dump "$f" >"$tmp/j.json" 2>/dev/null &&
		"$PYTHON3" -m json.tool "$tmp/j.json" >/dev/null
	check "valid topology JSON for $(basename "$f")" [ $? -eq 0 ]
done

# Bad input: a clear error naming the file, exit 3, never a signal or a hang.
for f in line-too-long non-hex-bytes offset-4096; do
	timeout 20 "$PCIESCOPE" topology --pci-dump "$FIXTURES/malformed/$f.lspci-xxxx.txt" >/dev/null 2>"$tmp/err"
	rc=$?
	check "malformed $f: exit 3 with a message naming the file (got $rc: $(head -c 160 "$tmp/err"))" \
		eval '[ $rc -eq 3 ] && grep -q "$f.lspci-xxxx.txt: .*dump: " "$tmp/err"'
done
for f in "$FIXTURES"/malformed/*; do
	case $f in *.md) continue ;; esac
	for cmd in topology audit; do
		timeout 20 "$PCIESCOPE" $cmd --pci-dump "$f" >/dev/null 2>"$tmp/err"
		rc=$?
		check "$cmd on malformed $(basename "$f") ends cleanly (rc $rc)" \
			eval '[ $rc -le 3 ] && { [ $rc -lt 3 ] || [ -s "$tmp/err" ]; }'
	done
done
timeout 20 "$PCIESCOPE" topology --pci-dump "$tmp/missing.txt" 2>"$tmp/err"
rc=$?
check "missing dump file: exit 3 naming it" eval '[ $rc -eq 3 ] && grep -q "missing.txt: No such file" "$tmp/err"'
"$PCIESCOPE" audit --policy fast 2>"$tmp/err"
rc=$?
check "unknown --policy is refused" eval '[ $rc -eq 3 ] && grep -q "policy fast" "$tmp/err"'
"$PCIESCOPE" frobnicate 2>/dev/null
check "unknown command exits 3" [ $? -eq 3 ]

# The live machine: works with or without PCIe functions.
timeout 20 "$PCIESCOPE" topology --json >"$tmp/live.json" 2>"$tmp/err"
check "live topology --json runs on this machine" eval '[ $? -eq 0 ] && "$PYTHON3" -m json.tool "$tmp/live.json" >/dev/null'
n_sys=$(ls /sys/bus/pci/devices 2>/dev/null | wc -l)
n_json=$("$PYTHON3" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$tmp/live.json")
check "live topology lists every function in /sys/bus/pci/devices ($n_json of $n_sys)" [ "$n_sys" = "$n_json" ]

# exporter and snapshot are programs of their own (pciescope-exporter,
# pciescope-snapshot beside pciescope in the build tree, $(pkglibexecdir)
# installed): the other commands start without libmicrohttpd, libarchive
# and what they load (GnuTLS, ICU: ~15 ms of start-up each time).
# PCIESCOPE_BINARY: the program itself where $PCIESCOPE is a wrapper
# script (sanitize.sh's, which keeps the sanitizer reports).
bin=${PCIESCOPE_BINARY:-$PCIESCOPE}
cli_dir=$(dirname "$bin")
libs=$(ldd "$bin" 2>/dev/null)
check "pciescope itself links neither libmicrohttpd nor libarchive" \
	eval '[ -n "$libs" ] && ! grep -q "libmicrohttpd\|libarchive\|libgnutls" <<<"$libs"'
check "pciescope-exporter and pciescope-snapshot are built beside it" \
	test -x "$cli_dir/pciescope-exporter" -a -x "$cli_dir/pciescope-snapshot"
"$PCIESCOPE" snapshot --pci-dump "$syn/downtrained.lspci-xxxx.txt" -o "$tmp/s.tar.gz" >"$tmp/out" 2>&1
rc=$?
check "snapshot runs through its helper, arguments in the user's order (rc $rc)" \
	eval '[ $rc -eq 0 ] && tar -tzf "$tmp/s.tar.gz" | grep -q lspci-xxxx.txt'
PCIESCOPE_EXEC_PATH=$tmp/nowhere "$PCIESCOPE" exporter --listen 127.0.0.1:1 >"$tmp/out" 2>&1
rc=$?
check "a missing helper: exit 3 naming it and PCIESCOPE_EXEC_PATH (rc $rc)" \
	eval '[ $rc -eq 3 ] && grep -q "no program pciescope-exporter in $tmp/nowhere (PCIESCOPE_EXEC_PATH)" "$tmp/out"'
"$PCIESCOPE" exporter --listen nonsense >"$tmp/out" 2>&1
rc=$?
check "exporter's own errors still come from the helper (rc $rc)" \
	eval '[ $rc -eq 3 ] && grep -q "nonsense" "$tmp/out"'

done_testing
