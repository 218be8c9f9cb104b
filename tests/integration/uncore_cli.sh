#!/bin/bash
# uncore_cli.sh - `pciescope uncore` and `pciescope iio`.
#
# Outside oracle: pciutils' lspci decodes the same configuration spaces. On
# every real dump the number of DVSECs lspci shows must equal the number our
# walk passed over (none of them is a PMON discovery DVSEC: CXL, DSA id 5),
# and on the simulated spr-2s tree lspci must show the PMON DVSEC (id 1) at
# the offset and the BAR at the address and size we report. The listing
# follows the seed's "PMU type 6 (8 boxes)" style with its IMC addresses.
# On this (virtual) machine both commands must cope without the hardware.
. "$(dirname "$0")/lib.sh"

LSPCI=${LSPCI:-$(command -v lspci)}
[ -x "$LSPCI" ] || skip_all "lspci (pciutils) is not installed"
SIM_WRITE="$top_builddir/tests/tools/sim_write"
export PCIESCOPE_MACHINE_DIR="$top_srcdir/sim/machines"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
json() { "$PYTHON3" -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

# ---- 1. real dumps: DVSECs passed over, as many as lspci decodes ----------
for f in "$FIXTURES"/pcidump/*.txt; do
	name=$(basename "$f")
	"$PCIESCOPE" uncore --json --pci-dump "$f" >"$tmp/u.json" 2>"$tmp/err"
	rc=$?
	want=$("$LSPCI" -F "$f" -vv 2>/dev/null | grep -c 'Designated Vendor-Specific')
	got=$(json "$tmp/u.json" 'd["other_dvsecs"], len(d["sources"])' 2>/dev/null)
	check "$name: $want DVSEC(s) as lspci decodes, no discovery table (got rc $rc: $got)" \
		[ "$rc $got" = "0 $want 0" ]
done

# ---- 2. the simulated spr-2s against lspci ----------------------------------
"$PCIESCOPE" uncore --json --simulate spr-2s >"$tmp/spr.json" 2>"$tmp/spr.err"
rc=$?
check "spr-2s: uncore --json runs and says it is simulated (rc $rc)" \
	eval '[ $rc -eq 0 ] && grep -q "SIMULATED machine \"spr-2s\"" "$tmp/spr.err"'
check "spr-2s: two discovery functions, tables read, platform SPR/EMR" \
	[ "$(json "$tmp/spr.json" 'len(d["sources"]), [s["error"] for s in d["sources"]], d["platform"]')" = "2 [None, None] SPR/EMR" ]
mkdir "$tmp/tree"
if "$SIM_WRITE" "$top_srcdir/sim/machines/spr-2s.json" "$tmp/tree" >/dev/null 2>"$tmp/err"; then
	for i in 0 1; do
		bdf=$(json "$tmp/spr.json" "d['sources'][$i]['discovery']")
		"$LSPCI" -A linux-sysfs -O "sysfs.path=$tmp/tree/sys/bus/pci" -s "$bdf" -vv >"$tmp/l.txt" 2>/dev/null
		off=$(json "$tmp/spr.json" "'%x' % d['sources'][$i]['dvsec_offset']")
		bar=$(json "$tmp/spr.json" "d['sources'][$i]['bar'][2:]")
		size=$(json "$tmp/spr.json" "d['sources'][$i]['bar_size'] // 1024")
		check "lspci: $bdf has the PMON DVSEC (8086, id 1) at [$off]" \
			grep -q "Capabilities: \[$off v1\] Designated Vendor-Specific: Vendor=8086 ID=0001" "$tmp/l.txt"
		check "lspci: $bdf BAR 0 at $bar, ${size}K, 64-bit" \
			grep -q "Region 0: Memory at $bar (64-bit, non-prefetchable) \[size=${size}K\]" "$tmp/l.txt"
	done
else
	not_ok "sim_write spr-2s: $(cat "$tmp/err")"
fi
"$PCIESCOPE" uncore --simulate spr-2s >"$tmp/spr.txt" 2>/dev/null
check "listing: \"PMU type 6 IMC (8 boxes)\" per socket" [ "$(grep -c '^PMU type 6 IMC (8 boxes)$' "$tmp/spr.txt")" -eq 2 ]
check "listing: the seed's IMC box 0 line" \
	grep -q '^    unit PMU IMC of type 6 ID 0 box ctrl: 0xc8aa2800 (-) with access type MMIO width 48 numRegs 4 ctrlOffset 64 ctrOffset 8$' "$tmp/spr.txt"
check "listing: the seed's IMC box 7 address" grep -q 'ID 7 box ctrl: 0xc8c2a800 ' "$tmp/spr.txt"
check "listing: PCI-access units show their config location" grep -q 'with access type PCI' "$tmp/spr.txt"

# ---- 3. iio on the simulation ---------------------------------------------------
"$PCIESCOPE" iio --simulate spr-2s --json --count 1 --interval 0.2 \
	--iio-stack-bus uncore_iio_free_running_2,0,0000:15 >"$tmp/iio.json" 2>/dev/null
check "iio --json: valid JSON with inbound bandwidth per part" \
	[ "$(json "$tmp/iio.json" 'sum(1 for s in d if s["metric"] == "pcie_port_bandwidth_bytes_per_second") > 0')" = True ]
check "iio --iio-stack-bus: socket 0 stack 2 part 0 is Root Port 0000:15:01.0" \
	[ "$(json "$tmp/iio.json" '[s["labels"].get("port") for s in d if s["metric"] == "pcie_port_bandwidth_bytes_per_second" and s["labels"]["socket"] == "0" and s["labels"]["stack"] == "2" and s["labels"]["part"] == "0"]')" = "['0000:15:01.0']" ]
"$PCIESCOPE" iio --simulate spr-2s --count 1 --interval 0.2 >"$tmp/iio.txt" 2>/dev/null
check "iio text: stacks per socket with their mapping" \
	eval 'grep -q "^socket 1:" "$tmp/iio.txt" && grep -q "uncore_iio_free_running_4: root bus 0000:a8 (registers)" "$tmp/iio.txt"'
# As shipped (no --iio-stack-bus) every stack is mapped from the uncore's CPU
# bus registers: each busy part names its Root Port and its link utilisation.
check "iio text: out of the box, socket 1 stack 2 part 0 is Root Port 0000:97:01.0 with utilisation" \
	grep -Eq "part 0 0000:97:01\.0 +in +[0-9.]+ GB/s +util +[0-9.]+%" "$tmp/iio.txt"
check "iio text: no stack left unmapped" eval '! grep -q "(unmapped)" "$tmp/iio.txt"'
check "iio --iio-stack-bus: the configuration wins over the registers" \
	[ "$(json "$tmp/iio.json" '[s["labels"]["mapping"] for s in d if s["metric"] == "pcie_iio_stack_info" and s["labels"]["socket"] == "0" and s["labels"]["stack"] == "2"]')" = "['config']" ]
"$PCIESCOPE" iio --simulate spr-2s --iio-stack-bus nonsense 2>"$tmp/err"
rc=$?
check "iio: a bad --iio-stack-bus is refused with an example (rc $rc)" \
	eval '[ $rc -eq 3 ] && grep -q "expected PMU,SOCKET,BUS" "$tmp/err"'
"$PCIESCOPE" iio --simulate kunpeng930-2p 2>"$tmp/err"
rc=$?
check "iio on a Kunpeng machine: exit 3, says there is no IIO PMU (rc $rc)" \
	eval '[ $rc -eq 3 ] && grep -q "no usable Intel IIO" "$tmp/err"'

# ---- 4. this machine: no discovery table, no IIO PMU -------------------------
timeout 20 "$PCIESCOPE" uncore --json >"$tmp/live.json" 2>"$tmp/err"
rc=$?
check "live: uncore --json runs (no discovery device here is not an error; rc $rc)" \
	eval '[ $rc -eq 0 ] && "$PYTHON3" -m json.tool "$tmp/live.json" >/dev/null'
if ls /sys/bus/event_source/devices/ 2>/dev/null | grep -q '^uncore_iio_free_running'; then
	ok "# SKIP live iio: this machine has IIO PMUs (the no-PMU path is not reachable here)"
else
	timeout 20 "$PCIESCOPE" iio --count 1 2>"$tmp/err"
	rc=$?
	check "live: iio without IIO PMUs exits 3 with a clear message (rc $rc)" \
		eval '[ $rc -eq 3 ] && grep -q "no usable Intel IIO free-running PMU" "$tmp/err"'
fi

done_testing
