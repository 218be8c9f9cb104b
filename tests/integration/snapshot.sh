#!/bin/bash
# snapshot.sh - `pciescope snapshot` (issue 18 item 3).
#
# 1. Every shipped simulated machine: snapshot it, simulate the snapshot's
#    machine description, and `topology --json` and `audit --json` of both
#    are identical byte for byte. Fields removed before comparing: none.
#    Neither JSON names the simulated machine (only the stderr line "SIMULATED
#    machine ..." does, and stderr is not compared). The PMU directories of
#    a snapshot of the re-simulation equal the first snapshot's, and the
#    archive's audit.json equals `audit --json`.
# 2. Outside oracle: the real `lspci -F` reads the archive's lspci-xxxx.txt,
#    and its LnkSta speed/width and DevCtl MaxPayload/MaxReadReq agree with
#    our topology on every function with an up link.
# 3. This machine (live, read-only, as root where it can): the snapshot
#    works, the manifest says which PMUs are missing, lspci -F lists as many
#    functions as lspci does; a secret on the command line is redacted; the
#    archive holds only files of the documented list.
# 4. Bad input: an unwritable -o, a missing sysfs root, an unwritable
#    --description: exit status 3 and a message naming the path.
# 5. --trace on a simulated Kunpeng: a PTT window per device.
# 6. Debian's collectd with Simulate "<snapshot>.json": the same series and
#    link/MPS values as on the original (series that need traffic aside: the
#    description's workloads are idle).
# 7. Privacy: a dump with a planted Device Serial Number and VPD data and a
#    command line planted with every form of secret and address (ip=,
#    BOOTIF=, nfsroot= quoted, rootpw=, inst.rootpw=, ks= with user and
#    password, --password VALUE, --password=VALUE, init's arguments after
#    "--"): none of them is in any file of the archive or the description;
#    lspci -F still sees the capabilities; the manifest lists what is kept
#    and what is removed, with counts.
# 8. Writing: symbolic links planted at the old fixed temporary name, at
#    "<out>.tmp", at -o and --description themselves are not followed (their
#    target is untouched, the names become the files); a run that fails
#    while writing (a file size limit, as an error and as a signal) leaves
#    no temporary file.
. "$(dirname "$0")/lib.sh"

LSPCI=${LSPCI:-$(command -v lspci)}
export PCIESCOPE_MACHINE_DIR="$(cd "$top_srcdir/sim/machines" && pwd)" # collectd cds
PCIESCOPE="$(cd "$(dirname "$PCIESCOPE")" && pwd)/pciescope" # the tests cd
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
json() { "$PYTHON3" -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

# ---- 1. round trip on the simulated machines --------------------------------
for m in kunpeng930-2p kunpeng930-misconfig spr-2s; do
	d="$tmp/$m"
	mkdir -p "$d/a" "$d/b"
	"$PCIESCOPE" snapshot --simulate "$m" -o "$d/snap.tar.gz" --description "$d/$m-snap.json" \
		2>"$d/err"
	rc=$?
	check "$m: snapshot runs (rc $rc: $(tail -n 1 "$d/err"))" [ "$rc" -eq 0 ]
	tar -xzf "$d/snap.tar.gz" -C "$d/a" 2>/dev/null
	check "$m: the archive holds MANIFEST.json, machine.json, lspci-xxxx.txt, audit.json" \
		eval '[ -s "$d/a/MANIFEST.json" ] && [ -s "$d/a/machine.json" ] && [ -s "$d/a/lspci-xxxx.txt" ] && [ -s "$d/a/audit.json" ]'
	check "$m: --description wrote the archive's machine.json" cmp -s "$d/a/machine.json" "$d/$m-snap.json"
	check "$m: the manifest says it is simulated and names the description" \
		[ "$(json "$d/a/MANIFEST.json" 'd["simulated"], d["machine_description"]["file"]')" = "True machine.json" ]
	for c in topology audit; do
		"$PCIESCOPE" "$c" --json --simulate "$m" >"$d/$c-orig.json" 2>/dev/null
		# A bare NAME.json (no '/') is a path too: run from its directory.
		(cd "$d" && "$PCIESCOPE" "$c" --json --simulate "$m-snap.json") >"$d/$c-snap.json" 2>"$d/$c.err"
		check "$m: $c --json of the snapshot's description is identical ($(diff "$d/$c-orig.json" "$d/$c-snap.json" | wc -l) diff lines; $(head -c 200 "$d/$c.err"))" \
			eval '[ -s "$d/$c-orig.json" ] && cmp -s "$d/$c-orig.json" "$d/$c-snap.json"'
	done
	check "$m: the archive's audit.json is audit --json (in-process)" cmp -s "$d/a/audit.json" "$d/audit-orig.json"
	(cd "$d" && "$PCIESCOPE" snapshot --simulate "$m-snap.json" -o "$d/again.tar.gz" 2>/dev/null)
	tar -xzf "$d/again.tar.gz" -C "$d/b" 2>/dev/null
	check "$m: the re-simulated machine has the same PMU directories" \
		eval '[ -d "$d/a/sys" ] && diff -r "$d/a/sys/bus/event_source" "$d/b/sys/bus/event_source" >/dev/null 2>&1 || { [ ! -d "$d/a/sys/bus/event_source" ] && [ ! -d "$d/b/sys/bus/event_source" ]; }'
	check "$m: the re-simulated machine has the same NUMA nodes and AER counters" \
		diff -r "$d/a/sys/bus/pci" "$d/b/sys/bus/pci"
done
check "spr-2s: the IIO stacks' buses come from the CPU bus registers, kept in the description, no guess" \
	eval 'grep -q "\"stack_registers\": true" "$tmp/spr-2s/a/machine.json" && ! grep -q "which root bus each IIO stack owns" "$tmp/spr-2s/a/MANIFEST.json"'

# ---- 2. lspci -F reads the archive and agrees with our topology -------------
if [ -x "$LSPCI" ]; then
	for m in kunpeng930-misconfig spr-2s; do
		d="$tmp/$m"
		"$LSPCI" -F "$d/a/lspci-xxxx.txt" -vv >"$d/lspci.txt" 2>/dev/null
		out=$("$PYTHON3" - "$d/lspci.txt" "$d/topology-orig.json" <<'EOF'
import json, re, sys
blocks = re.split(r'\n(?=[0-9a-f]{2}:[0-9a-f]{2}\.[0-7] )', open(sys.argv[1]).read())
ours = {f["bdf"][5:]: f for f in json.load(open(sys.argv[2]))}
checked, bad = 0, []
for b in blocks:
    bdf = b[:7]
    f = ours.get(bdf)
    sta = re.search(r'LnkSta:\s+Speed ([0-9.]+)GT/s[^,]*, Width x(\d+)', b)
    ctl = re.search(r'DevCtl:.*?\n\s+MaxPayload (\d+) bytes, MaxReadReq (\d+) bytes', b, re.S)
    if not f or not ctl:
        continue
    if int(ctl.group(1)) != f["mps_bytes"] or int(ctl.group(2)) != f["mrrs_bytes"]:
        bad.append(bdf + " MPS/MRRS")
    if sta and f.get("link", {}).get("up"):
        if float(sta.group(1)) != f["link"]["current_speed_gts"] or int(sta.group(2)) != f["link"]["current_width"]:
            bad.append(bdf + " link")
    checked += 1
print(checked, len(ours), " ".join(bad) or "none")
EOF
)
		read -r checked total wrong <<<"$out"
		check "$m: lspci -F on the snapshot agrees with topology on MPS/MRRS and links ($checked of $total functions checked; wrong: $wrong)" \
			eval '[ "${checked:-0}" -ge 10 ] && [ "$checked" = "$total" ] && [ "$wrong" = none ]'
	done
else
	ok "# SKIP lspci (pciutils) is not installed"
fi
"$PCIESCOPE" topology --json --pci-dump "$tmp/kunpeng930-misconfig/a/lspci-xxxx.txt" --no-names >"$tmp/dump.json" 2>/dev/null
"$PCIESCOPE" topology --json --simulate kunpeng930-misconfig --no-names >"$tmp/sim.json" 2>/dev/null
# numa_node comes from sysfs, which a dump does not have: the one field removed.
strip='import json,sys; t=json.load(open(sys.argv[1])); [f.pop("numa_node") for f in t]; print(json.dumps(t, sort_keys=True))'
check "--pci-dump of the archive's lspci-xxxx.txt: the same topology (numa_node aside: not in a dump)" \
	eval '[ -s "$tmp/dump.json" ] && [ "$("$PYTHON3" -c "$strip" "$tmp/dump.json")" = "$("$PYTHON3" -c "$strip" "$tmp/sim.json")" ]'

# ---- 3. this machine, live, read-only ----------------------------------------
if [ -d /sys/bus/pci/devices ] && [ -n "$(ls /sys/bus/pci/devices 2>/dev/null)" ]; then
	mkdir -p "$tmp/proc/sys/kernel" "$tmp/live"
	echo "BOOT_IMAGE=/vmlinuz ro root=/dev/sda1 password=hunter2 api_token=s3cr3t quiet" >"$tmp/proc/cmdline"
	cat /proc/sys/kernel/osrelease >"$tmp/proc/sys/kernel/osrelease"
	cp /proc/cpuinfo "$tmp/proc/cpuinfo"
	"$PCIESCOPE" snapshot --proc-root "$tmp/proc" -o "$tmp/live.tar.gz" 2>"$tmp/live.err"
	rc=$?
	check "live: snapshot runs (rc $rc: $(tail -n 1 "$tmp/live.err"))" [ "$rc" -eq 0 ]
	tar -xzf "$tmp/live.tar.gz" -C "$tmp/live" 2>/dev/null
	if [ -x "$LSPCI" ]; then
		want=$("$LSPCI" 2>/dev/null | wc -l)
		got=$("$LSPCI" -F "$tmp/live/lspci-xxxx.txt" 2>/dev/null | wc -l)
		check "live: lspci -F lists the archive's $got functions, lspci this machine's $want" [ "$got" -eq "$want" ]
	fi
	for p in hisi_pcie hisi_ptt uncore_iio; do
		if ls /sys/bus/event_source/devices/ 2>/dev/null | grep -q "^$p"; then
			check "live: $p PMUs are in the archive" test -d "$tmp/live/sys/bus/event_source/devices"
		else
			check "live: the manifest says there is no $p PMU" \
				eval "json '$tmp/live/MANIFEST.json' '[m[\"what\"] for m in d[\"missing\"]]' | grep -q \"'$p'\""
		fi
	done
	check "live: the command line's secrets are redacted" \
		eval 'grep -q "password=<redacted> api_token=<redacted> quiet" "$tmp/live/proc/cmdline" && ! grep -rq "hunter2\|s3cr3t" "$tmp/live"'
	host=$(hostname 2>/dev/null)
	if [ "${#host}" -ge 6 ]; then
		check "live: the host name ($host) is nowhere in the archive" eval '! grep -rqF "$host" "$tmp/live"'
	fi
	stray=$(cd "$tmp/live" && find . -type f | sed 's|^\./||' | grep -Ev '^(MANIFEST\.json|machine\.json|audit\.json|lspci-xxxx\.txt|cpuinfo-model\.txt|proc/cmdline|proc/sys/kernel/osrelease|sys/devices/system/cpu/online|sys/devices/system/node/node[0-9]+/cpulist|sys/bus/pci/devices/[0-9a-f:.]+/(numa_node|aer_dev_(correctable|fatal|nonfatal))|sys/bus/event_source/devices/(hisi_pcie|hisi_ptt|uncore_iio)[^/]*/.*|ptt/hisi_ptt[0-9_]+\.json)$')
	check "live: the archive holds only files of the documented list${stray:+ (not: $stray)}" [ -z "$stray" ]
	check "live: the CPU lines only, not the whole of /proc/cpuinfo" \
		eval '! grep -q "^flags\|^processor\|^bogomips" "$tmp/live/cpuinfo-model.txt"'
else
	ok "# SKIP no /sys/bus/pci/devices here (a container without PCI)"
fi

# ---- 4. bad input --------------------------------------------------------------
"$PCIESCOPE" snapshot --simulate kunpeng930-misconfig -o "$tmp/no/such/dir/x.tar.gz" 2>"$tmp/err"
rc=$?
check "an unwritable -o: exit 3, the path named ($(tail -n 1 "$tmp/err" | head -c 160))" \
	eval '[ $rc -eq 3 ] && grep -q "no/such/dir/x.tar.gz" "$tmp/err" && [ ! -e "$tmp/no" ]'
"$PCIESCOPE" snapshot --sysfs-root "$tmp/missing-sysfs" -o "$tmp/y.tar.gz" 2>"$tmp/err"
rc=$?
check "a missing sysfs root: exit 3, the root named, no archive ($(head -c 160 "$tmp/err"))" \
	eval '[ $rc -eq 3 ] && grep -q "missing-sysfs" "$tmp/err" && [ ! -e "$tmp/y.tar.gz" ]'
"$PCIESCOPE" snapshot --simulate kunpeng930-misconfig -o "$tmp/z.tar.gz" --description "$tmp/no/d.json" 2>"$tmp/err"
rc=$?
check "an unwritable --description: exit 3, the path named, the archive still written" \
	eval '[ $rc -eq 3 ] && grep -q "no/d.json" "$tmp/err" && tar -tzf "$tmp/z.tar.gz" >/dev/null 2>&1'
"$PCIESCOPE" snapshot --simulate kunpeng930-misconfig -o "$tmp/s.tar.gz" stray 2>"$tmp/err"
rc=$?
check "a stray argument: exit 3" eval '[ $rc -eq 3 ] && grep -q stray "$tmp/err"'

# ---- 6. collectd: Simulate "<path>.json" ------------------------------------------
# Debian's real collectd runs the plugin on the original and on the snapshot's
# description: the same series (file names in csv: functions, PMUs, metrics)
# and the same link, MPS and AER-class values.
COLLECTD=${COLLECTD:-$(command -v collectd || echo /usr/sbin/collectd)}
SO="$top_builddir/plugin/.libs/pcie.so"
if [ -x "$COLLECTD" ] && [ -f "$SO" ]; then
	cd_run() { # NAME SIMULATE
		local dir="$tmp/cd-$1"
		mkdir -p "$dir/plugins"
		cp "$SO" /usr/lib/collectd/logfile.so /usr/lib/collectd/csv.so "$dir/plugins/"
		cat >"$dir/c.conf" <<CONF
Hostname "h"
BaseDir "$dir"
PIDFile "$dir/collectd.pid"
PluginDir "$dir/plugins"
Interval 1
LoadPlugin logfile
<Plugin logfile>
  LogLevel info
  File "$dir/log"
</Plugin>
LoadPlugin csv
<Plugin csv>
  DataDir "$dir/csv"
  StoreRates false
</Plugin>
LoadPlugin pcie
<Plugin pcie>
  Simulate "$2"
</Plugin>
CONF
		"$COLLECTD" -f -C "$dir/c.conf" >"$dir/out" 2>&1 &
		local p=$!
		# 30 measurements of hisi_pcie0_core1 rotate through 8 counters:
		# every one has had its turn after 4 intervals (+1 at start), with
		# room for a loaded machine.
		sleep 7
		kill "$p" && wait "$p"
		# Left out: series that exist only with traffic (the description's
		# workloads are idle: latency needs requests, PTT TLP/byte/latency
		# series need traced TLPs) and simulation_info, named by machine.
		(cd "$dir/csv/h" && find . -type f | sed 's/-[0-9-]*$//' |
			grep -Ev '/(pmu_latency_seconds-|ptt_(tlps|bytes|latency)-|simulation_info-)' | sort) >"$dir/series"
		(cd "$dir/csv/h" && for f in */link_width_lanes-* */link_downtrained-* */max_payload_size_bytes-* */max_read_request_size_bytes-*; do
			[ -f "$f" ] && echo "${f%-*} $(tail -n 1 "$f" | cut -d, -f2)"
		done | sort) >"$dir/values"
	}
	cd_run orig kunpeng930-misconfig
	cd_run snap "$tmp/kunpeng930-misconfig/kunpeng930-misconfig-snap.json"
	check "collectd: Simulate \"<snapshot>.json\" is said in the log" \
		grep -q 'pcie plugin: SIMULATED machine "snapshot-' "$tmp/cd-snap/log"
	cddiff=$(diff "$tmp/cd-orig/series" "$tmp/cd-snap/series" | head -3 | tr '\n' ' ')
	check "collectd: the same $(wc -l <"$tmp/cd-orig/series") series files on the original and the snapshot${cddiff:+ (not: $cddiff)}" \
		eval '[ -s "$tmp/cd-orig/series" ] && cmp -s "$tmp/cd-orig/series" "$tmp/cd-snap/series"'
	check "collectd: the same PMU plans (measurements per core) on both" \
		eval 'cmp -s <(grep -o "hisi_pcie[0-9]*_core[0-9]*: counting [0-9]* measurements" "$tmp/cd-orig/log" | sort) \
			<(grep -o "hisi_pcie[0-9]*_core[0-9]*: counting [0-9]* measurements" "$tmp/cd-snap/log" | sort) &&
		      grep -q "counting [0-9]* measurements" "$tmp/cd-orig/log"'
	check "collectd: the same link widths, downtraining, MPS and MRRS ($(wc -l <"$tmp/cd-orig/values") values)" \
		eval '[ -s "$tmp/cd-orig/values" ] && cmp -s "$tmp/cd-orig/values" "$tmp/cd-snap/values"'
else
	ok "# SKIP collectd or the plugin is not built"
fi

# ---- 5. --trace ------------------------------------------------------------------
mkdir "$tmp/t"
"$PCIESCOPE" snapshot --simulate kunpeng930-misconfig --trace -o "$tmp/t.tar.gz" 2>/dev/null
tar -xzf "$tmp/t.tar.gz" -C "$tmp/t" 2>/dev/null
check "--trace: a PTT window of each of the 2 devices, with TLPs counted" \
	eval '[ "$(ls "$tmp/t/ptt" 2>/dev/null | wc -l)" -eq 2 ] && [ "$(json "$tmp/t/ptt/hisi_ptt0_0.json" "sum(s[\"value\"] for s in d if s[\"metric\"] == \"pcie_ptt_tlps_total\") > 0")" = True ]'

# ---- 7. privacy: serial numbers and command-line secrets ----------------------
d="$tmp/priv"
mkdir -p "$d/proc/sys/kernel" "$d/a"
echo "6.1.0-planted" >"$d/proc/sys/kernel/osrelease"
# The 82576 NIC's dump: its DSN (0x140) gets a planted serial; a VPD
# capability with planted data is chained after the PCIe one (0xa0 -> 0xe0).
"$PYTHON3" - "$top_srcdir/tests/fixtures/pcidump/pciutils-intel-82576-nic.lspci-vvxxxx.txt" "$d/dump.txt" <<'EOF2'
import re, sys
cfg = bytearray(4096)
for line in open(sys.argv[1]):
    m = re.match(r'^([0-9a-f]{2,3}): ((?:[0-9a-f]{2} ?){16})$', line.strip())
    if m:
        cfg[int(m.group(1), 16):int(m.group(1), 16) + 16] = bytes.fromhex(m.group(2))
assert cfg[0x140] == 0x03 and cfg[0xa0] == 0x10 and cfg[0xa1] == 0
cfg[0x144:0x14c] = bytes.fromhex("5ec7e751a1b2c3d4")
cfg[0xa1] = 0xe0
cfg[0xe0:0xe8] = bytes.fromhex("0300 0480 9a8b7c6d".replace(" ", ""))
with open(sys.argv[2], "w") as f:
    f.write("01:00.0 Ethernet controller: Intel Corporation 82576 Gigabit Network Connection (rev 01)\n")
    for off in range(0, 4096, 16):
        f.write("%02x: %s\n" % (off, " ".join("%02x" % b for b in cfg[off:off + 16])))
EOF2
cat >"$d/proc/cmdline" <<'EOF2'
BOOT_IMAGE=/vmlinuz-6.1 ip=192.0.2.77::192.0.2.1:255.255.255.0:plantedhostq7:eth0:none ro BOOTIF=01-52-54-00-c0-ff-ee "nfsroot=198.51.100.9:/srv/planted nfs root" rootpw=PlantedRootPw1 inst.rootpw=PlantedInstPw2 ks=http://planteduser:PlantedKsPw3@deploy.plantedcorp.example/ks.cfg pci=pcie_bus_safe --password PlantedFlagPw4 --password=PlantedEqPw5 quiet -- PlantedInitArg6 single
EOF2
secrets=(5e-c7-e7-51 a1-b2-c3-d4 d4-c3-b2-a1 51-e7-c7-5e "5e c7 e7 51" "a1 b2 c3 d4" "9a 8b 7c 6d"
	192.0.2.77 plantedhostq7 52-54-00-c0-ff-ee 198.51.100.9 /srv/planted PlantedRootPw1 PlantedInstPw2
	planteduser PlantedKsPw3 plantedcorp PlantedFlagPw4 PlantedEqPw5 PlantedInitArg6)
if [ -x "$LSPCI" ]; then
	dsn=$("$LSPCI" -F "$d/dump.txt" -vv 2>/dev/null | sed -n 's/.*Device Serial Number //p')
	check "privacy: lspci -F reads the planted serial in the dump ($dsn)" eval '[ -n "$dsn" ] && [ "$dsn" != 00-00-00-00-00-00-00-00 ]'
	secrets+=("$dsn")
fi
"$PCIESCOPE" snapshot --pci-dump "$d/dump.txt" --proc-root "$d/proc" -o "$d/snap.tar.gz" --description "$d/desc.json" 2>"$d/err"
rc=$?
# No description: a lone NIC is nothing the simulator holds (rc 3 for
# --description alone); the archive is what matters here.
check "privacy: snapshot of the planted dump and command line runs ($(tail -n 1 "$d/err" | head -c 160))" \
	eval 'tar -xzf "$d/snap.tar.gz" -C "$d/a" && [ -s "$d/a/lspci-xxxx.txt" ] && [ -s "$d/a/proc/cmdline" ]'
found=""
for x in "${secrets[@]}"; do
	if grep -rqiF -e "$x" "$d/a" "$d/err" $( [ -f "$d/desc.json" ] && echo "$d/desc.json"); then found+=" $x"; fi
done
check "privacy: none of ${#secrets[@]} planted secrets is in any of $(find "$d/a" -type f | wc -l) files${found:+ (found:$found)}" [ -z "$found" ]
check "privacy: the command line keeps the rest, each secret replaced by <redacted>" \
	eval '[ "$(cat "$d/a/proc/cmdline")" = "BOOT_IMAGE=/vmlinuz-6.1 ip=<redacted> ro BOOTIF=<redacted> nfsroot=<redacted> rootpw=<redacted> inst.rootpw=<redacted> ks=<redacted> pci=pcie_bus_safe --password <redacted> --password=<redacted> quiet -- <redacted>" ]'
if [ -x "$LSPCI" ]; then
	"$LSPCI" -F "$d/a/lspci-xxxx.txt" -vv >"$d/lspci.txt" 2>/dev/null
	check "privacy: lspci -F on the archive still sees the DSN (zeroed) and the VPD capability" \
		eval 'grep -q "Device Serial Number 00-00-00-00-00-00-00-00" "$d/lspci.txt" && grep -q "Capabilities: \[e0\] Vital Product Data" "$d/lspci.txt"'
fi
check "privacy: the archive's dump differs from the planted one in the 12 serial and VPD data bytes only" \
	eval '[ "$("$PYTHON3" - "$d/dump.txt" "$d/a/lspci-xxxx.txt" <<EOF2
import re, sys
def load(p):
    c = {}
    for line in open(p):
        m = re.match(r"^([0-9a-f]{2,3}): ((?:[0-9a-f]{2} ?){16})$", line.strip())
        if m:
            for i, b in enumerate(bytes.fromhex(m.group(2))):
                c[int(m.group(1), 16) + i] = b
    return c
a, b = load(sys.argv[1]), load(sys.argv[2])
diff = sorted(k for k in a if a[k] != b.get(k))
print(len(a), len(b), ",".join("%x" % k for k in diff), all(b[k] == 0 for k in diff))
EOF2
)" = "4096 4096 e4,e5,e6,e7,144,145,146,147,148,149,14a,14b True" ]'
check "privacy: the manifest counts 1 serial, 1 VPD data register and 9 command-line values removed" \
	[ "$(json "$d/a/MANIFEST.json" 'd["device_serial_numbers_zeroed"], d["vpd_data_registers_zeroed"], d["cmdline_values_redacted"]')" = "1 1 9" ]
check "privacy: the manifest lists what is kept and what is removed" \
	eval '[ "$(json "$d/a/MANIFEST.json" "len(d[\"kept\"]) >= 5 and any(\"Device Serial Number\" in r for r in d[\"removed\"][\"configuration_space\"]) and all(any(w in r for r in d[\"removed\"][\"kernel_command_line\"]) for w in (\"ip=\", \"BOOTIF=\", \"nfsroot=\", \"rootpw=\", \"inst.rootpw=\", \"ks=\", \"--password\", \"after a standalone --\"))")" = True ]'

# ---- 8. writing: planted links, failures ----------------------------------------
d="$tmp/w"
mkdir -p "$d"
echo precious >"$d/victim"
# The old fixed names: "<out>.partial-<pid>" (the helper is exec'd: this
# shell's pid, and the next ones in case of a fork), "<out>.tmp", and the
# names -o and --description give.
bash -c 'for i in $(seq $$ $(($$ + 40))); do ln -s "$1/victim" "$1/out.tar.gz.partial-$i"; done
	ln -s "$1/victim" "$1/out.tar.gz.tmp"; ln -s "$1/victim" "$1/out.tar.gz"; ln -s "$1/victim" "$1/desc.json"
	exec "$2" snapshot --simulate kunpeng930-misconfig -o "$1/out.tar.gz" --description "$1/desc.json"' _ "$d" "$PCIESCOPE" 2>"$d/err"
rc=$?
check "planted links: the snapshot runs (rc $rc: $(tail -n 1 "$d/err" | head -c 160))" [ "$rc" -eq 0 ]
check "planted links: the link's target is untouched" eval '[ "$(cat "$d/victim")" = precious ]'
check "planted links: -o and --description became files (not links) holding the archive and the description" \
	eval '[ -f "$d/out.tar.gz" ] && [ ! -L "$d/out.tar.gz" ] && tar -tzf "$d/out.tar.gz" | grep -qx MANIFEST.json && [ ! -L "$d/desc.json" ] && cmp -s "$d/desc.json" <(tar -xzOf "$d/out.tar.gz" machine.json)'
left=$(find "$d" -type l ! -lname "$d/victim" | wc -l)
check "planted links: the 42 links at the temporary names are still there, as they were" \
	eval '[ "$(find "$d" -type l -lname "$d/victim" | wc -l)" -eq 42 ] && [ "$left" -eq 0 ]'
check "planted links: no temporary file is left" eval '[ -z "$(find "$d" -type f ! -name victim ! -name out.tar.gz ! -name desc.json ! -name err)" ]'
check "the archive's mode follows the umask like any new file's (umask 027: 0640)" \
	eval '(umask 027 && "$PCIESCOPE" snapshot --simulate kunpeng930-misconfig -o "$d/mode.tar.gz" 2>/dev/null) && [ "$(stat -c %a "$d/mode.tar.gz")" = 640 ]'
mkdir -p "$d/f1" "$d/f2"
# An archive larger than 1 KiB (6 KB): with SIGXFSZ ignored a write fails
# (EFBIG)...
# (a dump: the simulator would write its sysfs tree under the limit too)
big="$tmp/kunpeng930-misconfig/a/lspci-xxxx.txt"
(trap '' XFSZ; ulimit -f 1; exec "$PCIESCOPE" snapshot --pci-dump "$big" -o "$d/f1/x.tar.gz") 2>"$d/f1.err"
rc=$?
check "a write that fails (file size limit): exit 3, the path named, nothing left ($(tail -n 1 "$d/f1.err" | head -c 160))" \
	eval '[ $rc -eq 3 ] && grep -q "f1/x.tar.gz" "$d/f1.err" && [ -z "$(ls -A "$d/f1")" ]'
# ... and by default the signal ends the run: the temporary file goes first.
(ulimit -f 1; exec "$PCIESCOPE" snapshot --pci-dump "$big" -o "$d/f2/x.tar.gz") 2>"$d/f2.err"
rc=$?
check "a run killed by SIGXFSZ while writing (rc $rc) leaves no temporary file ($(ls -A "$d/f2" | head -c 100))" \
	eval '[ $rc -eq $((128 + $(kill -l XFSZ))) ] && [ -z "$(ls -A "$d/f2")" ]'

done_testing
