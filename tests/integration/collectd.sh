#!/bin/bash
# collectd.sh - Debian's real collectd daemon loads the built plugin:
#   1. on a dump fixture with AER/procfs trees, values land in csv files
#      and read well through write_prometheus;
#   2. on this machine's real PCI devices;
#   3. a bad configuration fails init with one ERROR line naming key and value.
. "$(dirname "$0")/lib.sh"

COLLECTD=${COLLECTD:-$(command -v collectd || echo /usr/sbin/collectd)}
[ -x "$COLLECTD" ] || skip_all "collectd is not installed"
SO="$top_builddir/plugin/.libs/pcie.so"
[ -f "$SO" ] || skip_all "the plugin was not built (collectd-dev missing at configure time)"
SYSTEM_PLUGINS=/usr/lib/collectd

tmp=$(mktemp -d)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
[ -n "$KEEP_TMP" ] && trap - EXIT

# collectd wants plugins as regular files in one PluginDir.
mkdir -p "$tmp/plugins"
cp "$SO" "$tmp/plugins/"
for p in logfile csv write_prometheus; do
	[ -f "$SYSTEM_PLUGINS/$p.so" ] && cp "$SYSTEM_PLUGINS/$p.so" "$tmp/plugins/"
done

# A port for write_prometheus on loopback.
port=$((20000 + $$ % 20000))
have_prom=no
if [ -f "$tmp/plugins/write_prometheus.so" ] && ! ldd "$tmp/plugins/write_prometheus.so" | grep -q 'not found' &&
	command -v curl >/dev/null; then
	have_prom=yes
fi

write_conf() { # $1 = file, $2 = csv dir, $3 = log file, rest: <Plugin pcie> body lines
	local conf=$1 csv=$2 log=$3
	shift 3
	{
		echo "Hostname \"pciescope-test\""
		echo "BaseDir \"$tmp\""
		echo "PIDFile \"$tmp/collectd.pid\""
		echo "PluginDir \"$tmp/plugins\""
		echo "Interval 1"
		echo "LoadPlugin logfile"
		echo "<Plugin logfile>"
		echo "  LogLevel info"
		echo "  File \"$log\""
		echo "  PrintSeverity true"
		echo "</Plugin>"
		echo "LoadPlugin csv"
		echo "<Plugin csv>"
		echo "  DataDir \"$csv\""
		echo "  StoreRates false"
		echo "</Plugin>"
		if [ "$have_prom" = yes ] && [ "$csv" != none ]; then
			echo "LoadPlugin write_prometheus"
			echo "<Plugin write_prometheus>"
			echo "  Host \"127.0.0.1\""
			echo "  Port \"$port\""
			echo "</Plugin>"
		fi
		echo "LoadPlugin pcie"
		echo "<Plugin pcie>"
		for line in "$@"; do echo "  $line"; done
		echo "</Plugin>"
	} >"$conf"
}

# Waits until FILE exists (at most 20 s).
wait_for() {
	local i
	for i in $(seq 1 40); do
		[ -e "$1" ] && return 0
		sleep 0.5
	done
	return 1
}

last_value() { # csv file -> value column of the last line
	tail -n 1 "$1" | cut -d, -f2
}

csvfile() { # dir, instance, type-instance
	ls "$1/pciescope-test/pcie-$2/$3"-* 2>/dev/null | head -n 1
}

# ---- 1. a dump with sysfs and procfs trees --------------------------------
mkdir -p "$tmp/proc" && echo "BOOT_IMAGE=/vmlinuz pci=pcie_bus_safe quiet" >"$tmp/proc/cmdline"
write_conf "$tmp/dump.conf" "$tmp/csv" "$tmp/dump.log" \
	"PCIDump \"$FIXTURES/synthetic/switch-mps-mismatch.lspci-xxxx.txt\"" \
	"SysfsRoot \"$FIXTURES/sysfs/aer-new\"" \
	"ProcRoot \"$tmp/proc\"" \
	"IgnoreDevice \"0000:00:00.0\""
"$COLLECTD" -f -C "$tmp/dump.conf" >"$tmp/dump.out" 2>&1 &
pid=$!
wait_for "$tmp/csv/pciescope-test/pcie-0000:03:00.0"
sleep 2.5
prom=
[ "$have_prom" = yes ] && prom=$(curl -s --max-time 5 "http://127.0.0.1:$port/metrics")
kill "$pid" && wait "$pid"
check "collectd exits cleanly on SIGTERM" [ $? -eq 0 ]
pid=
d="$tmp/csv"
f=$(csvfile "$d" 0000:03:00.0 link_width_lanes-current)
check "csv: 03:00.0 current link width 4 (got $(last_value "$f" 2>/dev/null))" [ "$(last_value "$f" 2>/dev/null)" = "4.000000" ]
f=$(csvfile "$d" 0000:02:01.0 link_speed_transfers_per_second-current)
check "csv: 02:01.0 link at 8 GT/s (got $(last_value "$f" 2>/dev/null))" [ "$(last_value "$f" 2>/dev/null)" = "8000000000.000000" ]
f=$(csvfile "$d" 0000:03:00.0 max_payload_size_bytes-configured)
check "csv: 03:00.0 MPS 512 (lspci agrees)" [ "$(last_value "$f" 2>/dev/null)" = "512.000000" ]
f=$(csvfile "$d" 0000:03:00.0 audit_finding-mps_above_partner)
check "csv: 03:00.0 has the critical MPS finding" [ "$(last_value "$f" 2>/dev/null)" = "1.000000" ]
f=$(csvfile "$d" 0000:03:00.0 aer_errors-correctable_RxErr)
check "csv: 03:00.0 AER RxErr counter 3 from sysfs" [ "$(last_value "$f" 2>/dev/null)" = "3" ]
f=$(csvfile "$d" 0000:00:01.0 aer_rootport_errors-correctable)
check "csv: root port AER total present" [ -n "$f" ]
f=$(csvfile "$d" 0000:03:00.0 policy_max_payload_size_bytes-safe)
check "csv: what pci=pcie_bus_safe would set is published (128, hot-plug slot below)" \
	[ "$(last_value "$f" 2>/dev/null)" = "128.000000" ]
check "IgnoreDevice keeps 00:00.0 out" [ ! -e "$d/pciescope-test/pcie-0000:00:00.0" ]
lines=$(wc -l <"$(csvfile "$d" 0000:03:00.0 link_up)")
check "values dispatched every interval ($lines rows)" [ "$lines" -ge 3 ]
check "log: plugin says what it reads and the policy source" \
	grep -q "\[info\] pcie plugin: pciescope .* reading dumped PCI devices from .*switch-mps-mismatch.*MPS policy safe (cmdline)" "$tmp/dump.log"
check "log: no errors from the plugin" eval '! grep -q "\[error\] pcie" "$tmp/dump.log"'
if [ "$have_prom" = yes ]; then
	check "write_prometheus: link width reads well" \
		grep -q '^collectd_pcie_link_width_lanes{pcie="0000:03:00.0",type="current",instance="pciescope-test"} 4 ' <<<"$prom"
	check "write_prometheus: AER counter ends in _total" \
		grep -q '^collectd_pcie_aer_errors_total{pcie="0000:03:00.0",type="correctable_RxErr",instance="pciescope-test"} 3 ' <<<"$prom"
else
	ok "write_prometheus check # SKIP libmicrohttpd12 or curl not installed"
fi

# ---- 2. this machine's real devices ---------------------------------------
write_conf "$tmp/live.conf" "$tmp/csv-live" "$tmp/live.log"
"$COLLECTD" -f -C "$tmp/live.conf" >"$tmp/live.out" 2>&1 &
pid=$!
wait_for "$tmp/csv-live/pciescope-test/pcie/pci_functions-$(date +%Y-%m-%d)"
sleep 1.5
kill "$pid" && wait "$pid"
pid=
n_sys=$(ls /sys/bus/pci/devices | wc -l)
f="$tmp/csv-live/pciescope-test/pcie/pci_functions-$(date +%Y-%m-%d)"
check "live: pci_functions = $n_sys functions in /sys/bus/pci/devices (got $(last_value "$f" 2>/dev/null))" \
	eval '[ "$(last_value "$f" 2>/dev/null)" = "$n_sys.000000" ]'
check "live: one device_info per function" \
	[ "$(ls -d "$tmp"/csv-live/pciescope-test/pcie-* 2>/dev/null | wc -l)" -eq "$n_sys" ]
check "live: no errors logged by the plugin" eval '! grep -q "\[error\] pcie" "$tmp/live.log"'

# ---- 3. PTT tune files: applied at start, read every interval, restored ----
# A hand-made sysfs tree (SYNTHETIC) with two hisi_ptt devices and their
# tune/ files; no PCI devices.
tt="$tmp/tune-sys"
mkdir -p "$tt/bus/pci/devices"
for d in hisi_ptt0_0 hisi_ptt0_1; do
	mkdir -p "$tt/bus/event_source/devices/$d/tune"
	echo 42 >"$tt/bus/event_source/devices/$d/type"
	for k in qos_tx_cpl qos_tx_np qos_tx_p rx_alloc_buf_level tx_alloc_buf_level; do
		echo 1 >"$tt/bus/event_source/devices/$d/tune/$k"
	done
done
write_conf "$tmp/tune.conf" "$tmp/csv-tune" "$tmp/tune.log" \
	"SysfsRoot \"$tt\"" "CollectPMU false" 'Tune "qos_tx_p" 2' 'Tune "rx_alloc_buf_level" 0'
"$COLLECTD" -f -C "$tmp/tune.conf" >"$tmp/tune.out" 2>&1 &
pid=$!
wait_for "$tmp/csv-tune/pciescope-test/pcie-hisi_ptt0_1"
sleep 1.5
knobs() { echo "$(cat "$tt/bus/event_source/devices/hisi_ptt0_1/tune/qos_tx_p") $(cat "$tt/bus/event_source/devices/hisi_ptt0_0/tune/rx_alloc_buf_level")"; }
during=$(knobs)
kill "$pid" && wait "$pid"
pid=
check "Tune: applied to every PTT device at start ($during)" [ "$during" = "2 0" ]
f=$(csvfile "$tmp/csv-tune" hisi_ptt0_0 ptt_tune-qos_tx_p)
check "Tune: the knob is published as a gauge ($(last_value "$f" 2>/dev/null))" [ "$(last_value "$f" 2>/dev/null)" = "2.000000" ]
f=$(csvfile "$tmp/csv-tune" hisi_ptt0_1 ptt_tune-qos_tx_cpl)
check "Tune: unconfigured knobs are read, not written ($(last_value "$f" 2>/dev/null))" [ "$(last_value "$f" 2>/dev/null)" = "1.000000" ]
after=$(knobs)
check "Tune: the original values are restored at shutdown ($after)" [ "$after" = "1 1" ]
check "Tune: the log says what was changed and that it will be restored" \
	grep -q 'hisi_ptt0_0: tune/qos_tx_p set to 2 (was 1; restored at shutdown)' "$tmp/tune.log"

# ---- 4. bad configuration --------------------------------------------------
bad_config() { # description, expected log text, config line
	local n rc
	write_conf "$tmp/bad.conf" none "$tmp/bad.log" "$3"
	: >"$tmp/bad.log"
	timeout 20 "$COLLECTD" -T -C "$tmp/bad.conf" >/dev/null 2>&1
	rc=$?
	n=$(grep -o "\[error\] pcie plugin: " "$tmp/bad.log" | wc -l)
	expected="[error] pcie plugin: $2"
	check "$1: one ERROR line naming key and value ($n)" \
		eval '[ "$n" -eq 1 ] && grep -qF "$expected" "$tmp/bad.log"'
	check "$1: collectd refuses the configuration (exit $rc)" [ "$rc" -ne 0 ]
	check "$1: the plugin does not start" eval '! grep -q "pcie plugin: pciescope" "$tmp/bad.log"'
}
bad_config "unknown key" 'option Frobnicate "yes": unknown option' 'Frobnicate "yes"'
bad_config "bad BDF pattern" 'option Device "0000:3g:00.0": not a BDF pattern' 'Device "0000:3g:00.0"'
bad_config "missing dump file" "option PCIDump \"$tmp/nope.txt\": No such file or directory" "PCIDump \"$tmp/nope.txt\""
bad_config "bad policy" 'option MPSPolicy "fast": not one of' 'MPSPolicy "fast"'
bad_config "wrong value type" 'option CollectAER "yes": takes exactly one boolean' 'CollectAER "yes"'
bad_config "IIOStackBus with a bad bus" 'option IIOStackBus: the root bus must be' \
	'IIOStackBus "uncore_iio_free_running_2" 0 "0000:zz"'
bad_config "IIOStackBus without a socket" 'option IIOStackBus: takes a PMU name, a socket number' \
	'IIOStackBus "uncore_iio_free_running_2" "0000:15"'
bad_config "SimulateKernel unknown" 'option SimulateKernel "7.0": not one of' 'SimulateKernel "7.0"'
bad_config "Tune above 2 is refused, not clamped" 'option Tune: qos_tx_p: 3 is not a level' 'Tune "qos_tx_p" 3'
bad_config "Tune below 0" 'option Tune: qos_tx_p: -1 is not a level' 'Tune "qos_tx_p" -1'
bad_config "Tune with the seed's wrong file name" 'option Tune: "qos_tx_dp" is not a tune file' 'Tune "qos_tx_dp" 1'

# ---- 5. the shipped example: every option it names is a real option ------
# Uncommented (paths that name other machines left out), on the simulation.
ex="$top_srcdir/plugin/pcie.conf.example"
sed -n 's/^  # \([A-Z][A-Za-z]*\) \(.*\)$/\1 \2/p' "$ex" | sed 's/  *#.*$//' |
	grep -vE '^(SysfsRoot|ProcRoot|PCIDump|Simulate|MachineDirectory|SimulateKernel|Device|IgnoreDevice|Endpoint|TraceRootPort|TraceRequester) ' >"$tmp/ex.lines"
mapfile -t ex_lines <"$tmp/ex.lines"
write_conf "$tmp/ex.conf" none "$tmp/ex.log" "Simulate \"kunpeng930-2p\"" \
	"MachineDirectory \"$top_srcdir/sim/machines\"" "${ex_lines[@]}"
timeout 60 "$COLLECTD" -T -C "$tmp/ex.conf" >/dev/null 2>&1
rc=$?
check "pcie.conf.example: ${#ex_lines[@]} options, all accepted (rc $rc, $(grep -c '\[error\]' "$tmp/ex.log") errors)" \
	eval '[ $rc -eq 0 ] && [ ${#ex_lines[@]} -ge 30 ] && ! grep -q "\[error\]" "$tmp/ex.log"'

done_testing
