#!/bin/bash
# fleet.sh - `pciescope fleet` (issue 27 items 1 and 6), CI-sized: bad
# options are refused with a clear message; then FLEET_HOSTS (50) simulated
# hosts of the default mix (every vendor's machine, healed of its own
# faults) with a fault rate that plants every fault kind send for one whole
# template cycle into a real VictoriaMetrics 1.79 started here on
# 127.0.0.1; tests/integration/fleet_check.py reads it back: every host's
# series equal `golden_stream --series-list` of its healed machine
# description (instance aside), the --truth faults show in the data and no other host shows
# them, counters never go down, utilisation = bandwidth / capacity.
# The shipped rules run in vmalert 1.79 during the run, every interval,
# writing back to the same VictoriaMetrics (a test copy of the alerts with
# every `for:` shortened to 10 intervals: longer than a flapping link stays
# narrow, 5 intervals, so that it is not also a downtrained one): every rule
# group loads and evaluates without an error, every query of the fleet
# overview dashboard answers (tests/tools/fleet_rules.py), and near the end
# of the run the firing alerts name exactly the faults of --truth (instance
# and port or link) and no other alert fires.
# Healing leaves kunpeng930-2p and spr-2s as shipped (golden_stream's
# values on the healed and the shipped description are the same).
# FLEET_SEED picks another fleet (default 27).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rw_lib.sh"
FLEET="$top_builddir/cli/pciescope-fleet"
GOLDEN="$top_builddir/tests/tools/golden_stream"
[ -x "$FLEET" ] || skip_all "pciescope-fleet was not built (protobuf-c, snappy or libcurl missing at configure time)"
[ -x "$GOLDEN" ] || skip_all "tests/tools/golden_stream was not built"
[ -x "$VICTORIA_METRICS" ] || skip_all "victoria-metrics is not installed"
export PCIESCOPE_MACHINE_DIR="$top_srcdir/sim/machines"
hosts=${FLEET_HOSTS:-50}
seed=${FLEET_SEED:-27}
interval=2

# ---- bad options: exit 3 and a message that names the option ----
refuses() { # PATTERN ARGS...: exit status 3 and PATTERN on stderr
	local pattern=$1 rc
	shift
	"$PCIESCOPE" fleet "$@" >"$rw_tmp/out" 2>"$rw_tmp/err"
	rc=$?
	[ $rc -eq 3 ] && grep -q -- "$pattern" "$rw_tmp/err" || {
		echo "# rc $rc: $(cat "$rw_tmp/err")"
		return 1
	}
}
u=(--url http://127.0.0.1:1/api/v1/write)
check "no --url: refused" refuses "are required" --hosts 5 --duration 10
check "--hosts 0: refused" refuses "^pciescope fleet: --hosts 0: a number from 1" --hosts 0 --duration 10 "${u[@]}"
check "--hosts 2.5: refused" refuses "--hosts 2.5" --hosts 2.5 --duration 10 "${u[@]}"
check "--fault-rate 2: refused" refuses "--fault-rate 2: a number from 0 to 1" --hosts 5 --duration 10 --fault-rate 2 "${u[@]}"
check "--interval 0: refused" refuses "--interval 0" --hosts 5 --duration 10 --interval 0 "${u[@]}"
check "--url ftp://: refused" refuses "--url ftp://x: an http" --hosts 5 --duration 10 --url ftp://x
check "--header without a colon: refused" refuses "--header X-Foo" --hosts 5 --duration 10 --header X-Foo "${u[@]}"
check "--tenants without --tenant-path: refused" refuses "goes with --tenant-path" --hosts 5 --duration 10 --tenants 3 "${u[@]}"
check "an unknown machine in --mix: refused" refuses "--mix nosuch" --hosts 5 --duration 10 --mix nosuch=1 "${u[@]}"
check "--seed -1: refused" refuses "--seed -1" --hosts 5 --duration 10 --seed -1 "${u[@]}"

# ---- a small fleet into VictoriaMetrics: one whole cycle (30 intervals) ----
RULES="$top_srcdir/dashboards/alerts/pcie.rules.yml"
RECORDS="$top_srcdir/dashboards/alerts/pcie.records.yml"
BOARD="$top_srcdir/dashboards/grafana/pcie-fleet-overview.json"
RULECHECK="$top_srcdir/tests/tools/fleet_rules.py"
sed -E "s/^( *)for: .*/\1for: $((10 * interval))s/" "$RULES" >"$rw_tmp/rules.yml"
start_vm vm
wait_http "$vm_url/health" 30 || { not_ok "VictoriaMetrics did not start"; done_testing; exit; }
have_vmalert=false
if [ -x "$VMALERT" ]; then
	start_vmalert vmalert "$vm_url" "${interval}s" "$rw_tmp/rules.yml" "$RECORDS"
	wait_http "$vmalert_url/api/v1/rules" 30 && have_vmalert=true
fi
t_start=$(date +%s)
"$PCIESCOPE" fleet --hosts "$hosts" --duration $((32 * interval)) --interval $interval \
	--seed "$seed" --fault-rate 0.12 --url "$vm_url/api/v1/write" --truth "$rw_tmp/truth.json" \
	--healed-dir "$rw_tmp" 2>"$rw_tmp/fleet.err" &
fleet_pid=$!
# The firing alerts while the hosts still send (after 28 of 32 intervals):
# once the data stop, a flapping link frozen narrow would turn downtrained.
: >"$rw_tmp/alerts.tap"
if $have_vmalert; then
	while kill -0 $fleet_pid 2>/dev/null; do
		t_sent=$(sed -n 's/.*: t=\([0-9]*\)s hosts sending.*/\1/p' "$rw_tmp/fleet.err" | tail -1)
		if [ "${t_sent:-0}" -ge $((28 * interval)) ]; then
			"$PYTHON3" "$RULECHECK" alerts "$vmalert_url" "$rw_tmp/truth.json" >"$rw_tmp/alerts.tap"
			break
		fi
		sleep 0.5
	done
fi
wait $fleet_pid
rc=$?
sed 's/^/# /' "$rw_tmp/fleet.err" | grep -v "t=[0-9]*s hosts" | tail -12
check "the fleet ran and ended by itself with 0 samples dropped (exit 0)" [ $rc -eq 0 ]
check "progress once per interval on stderr" [ "$(grep -c 'hosts sending' "$rw_tmp/fleet.err")" -ge 30 ]
check "a summary with samples sent, dropped, retried and latency p50/p99" \
	grep -q "summary: .*samples sent [1-9][0-9]*, dropped 0.*retried .*p50 .*p99" "$rw_tmp/fleet.err"
check "--truth names every fault kind at a fault rate of 0.12" \
	"$PYTHON3" -c 'import json,sys; t=json.load(open(sys.argv[1])); k=set(f["kind"] for f in t["faults"]); sys.exit(len(k) != 6 or t["seed"] != int(sys.argv[2]))' "$rw_tmp/truth.json" "$seed"
check "the default mix has hosts of every shipped vendor's machine and a fault on a new vendor's" \
	"$PYTHON3" -c '
import json, sys
t = json.load(open(sys.argv[1]))
types = set(t["machines"].values())
new = {"turin-2p", "yitian710-1p", "grace-gh200"}
print("# machines: %s; faults on %s" % (sorted(types), sorted(f["machine"] for f in t["faults"])))
sys.exit(types != new | {"kunpeng930-2p", "spr-2s"} or not any(f["machine"] in new for f in t["faults"]))' "$rw_tmp/truth.json"
# ---- the golden series lists: the engine on each healed description ----
# (what the hosts without a fault run; --healed-dir wrote them)
for m in $("$PYTHON3" -c 'import json,sys; print(" ".join(sorted(set(json.load(open(sys.argv[1]))["machines"].values()))))' "$rw_tmp/truth.json"); do
	"$GOLDEN" --series-list "$rw_tmp/$m.json" - 40 Detail=default >"$rw_tmp/$m.list"
done
# Machines without faults of their own are left as shipped: the engine's
# series and values on the healed description are the shipped one's.
for m in kunpeng930-2p spr-2s; do
	"$GOLDEN" "$top_srcdir/sim/machines/$m.json" - 5 Detail=default >"$rw_tmp/$m.shipped.stream"
	"$GOLDEN" "$rw_tmp/$m.json" - 5 Detail=default >"$rw_tmp/$m.healed.stream"
	check "healing leaves $m as shipped (golden_stream, 5 intervals: the same series and values)" \
		cmp "$rw_tmp/$m.shipped.stream" "$rw_tmp/$m.healed.stream"
done
curl -s "$vm_url/internal/force_flush" >/dev/null
sleep 2
"$PYTHON3" "$top_srcdir/tests/integration/fleet_check.py" "$vm_url" "$rw_tmp/truth.json" "$rw_tmp" \
	"$((40 * interval))s" >"$rw_tmp/check.tap"
while IFS= read -r line; do
	case $line in
	ok*) ok "${line#ok [0-9]* - }" ;;
	"not ok"*) not_ok "${line#not ok [0-9]* - }" ;;
	"#"*) echo "$line" ;;
	esac
done <"$rw_tmp/check.tap"

# ---- the rules and the fleet overview on the fleet's data ----
tap_lines() { # FILE: its ok / not ok lines as checks here, comments as is
	while IFS= read -r line; do
		case $line in
		ok*) ok "${line#ok - }" ;;
		"not ok"*) not_ok "${line#not ok - }" ;;
		"#"*) echo "$line" ;;
		esac
	done <"$1"
}
if $have_vmalert; then
	check "the firing alerts were read while the fleet was sending" [ -s "$rw_tmp/alerts.tap" ]
	tap_lines "$rw_tmp/alerts.tap"
	"$PYTHON3" "$RULECHECK" rules "$vmalert_url" >"$rw_tmp/rules.tap"
	tap_lines "$rw_tmp/rules.tap"
	"$PYTHON3" "$RULECHECK" panels "$BOARD" "$vm_url" "$t_start" "$(date +%s)" --step "$interval" >"$rw_tmp/panels.tap"
	tap_lines "$rw_tmp/panels.tap"
	# One record per host and direction its machine has a utilisation for
	# (the golden series list of its machine says which directions).
	want_records=$("$PYTHON3" -c '
import json, re, sys
hosts = json.load(open(sys.argv[1]))["machines"]
dirs = {}
for m in set(hosts.values()):
    dirs[m] = {re.search(r"direction=([a-z]+)", l).group(1)
               for l in open("%s/%s.list" % (sys.argv[2], m))
               if l.startswith("__name__=pcie_port_utilization_ratio,")}
print(sum(len(dirs[m]) for m in hosts.values()))' "$rw_tmp/truth.json" "$rw_tmp")
	got_records=$(qv "$vm_url" 'count(last_over_time(instance:pcie_port_utilization_ratio:max[1m]))' "$(date +%s)")
	check "the recording rules wrote back to VictoriaMetrics: one worst utilisation per host and direction ($got_records, want $want_records)" \
		eval '[ -n "$want_records" ] && [ "$want_records" -gt 0 ] && [ "$got_records" = "$want_records" ]'
else
	ok "rules, alerts and dashboard queries on the fleet # SKIP vmalert (victoria-metrics) is not installed"
fi
done_testing
