#!/bin/bash
# fleet_healed.sh - `pciescope fleet` heals every machine of its mix of the
# machine's own faults before templating it (docs/fleet.md "The healthy
# base"): a fleet of only the new vendors' machines (turin-2p,
# yitian710-1p, grace-gh200, each shipped with a saturated, downtrained or
# error-counting link of its own) without planted faults sends into a real
# VictoriaMetrics 1.79 while vmalert 1.79 evaluates the shipped rules (as in
# fleet.sh: every `for:` shortened to 10 intervals), and no alert fires; and
# a machine that healing cannot make quiet (a PTT completion latency above
# PCIePTTLatencyHigh's 100 us) is refused before anything is sent, with an
# error that names the alert and the series.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rw_lib.sh"
FLEET="$top_builddir/cli/pciescope-fleet"
[ -x "$FLEET" ] || skip_all "pciescope-fleet was not built (protobuf-c, snappy or libcurl missing at configure time)"
export PCIESCOPE_MACHINE_DIR="$top_srcdir/sim/machines"
interval=2
mix=turin-2p=1,yitian710-1p=1,grace-gh200=1

# ---- a machine healing cannot quiet: refused, naming the alert ----
mkdir -p "$rw_tmp/slow"
"$PYTHON3" - "$top_srcdir/sim/machines/kunpeng930-2p.json" "$rw_tmp/slow/kunpeng930-2p.json" <<'PY'
import json, re, sys
# the descriptions' comments: /* ... */ and // to the end of a line
text = re.sub(r"/\*.*?\*/|^\s*//[^\n]*", "", open(sys.argv[1]).read(), flags=re.S | re.M)
m = json.loads(text)
def walk(o):
    if isinstance(o, dict):
        w = o.get("workload")
        if isinstance(w, dict) and "dma_read" in w:
            w["dma_read"]["latency_ns"] = 500000  # 500 us to complete a read
        for v in o.values():
            walk(v)
    elif isinstance(o, list):
        for v in o:
            walk(v)
walk(m)
json.dump(m, open(sys.argv[2], "w"))
PY
"$PCIESCOPE" fleet --hosts 2 --duration 10 --interval $interval --fault-rate 0 \
	--mix kunpeng930-2p=1 --machine-dir "$rw_tmp/slow" --url http://127.0.0.1:1/api/v1/write \
	>"$rw_tmp/slow.out" 2>"$rw_tmp/slow.err"
rc=$?
grep "alert would fire" "$rw_tmp/slow.err" | sed 's/^/# /'
check "a machine whose healed base still fires an alert is refused (exit 3) with the alert and the series named" \
	eval '[ $rc -eq 3 ] && grep -q "kunpeng930-2p: an alert would fire .*PCIePTTLatencyHigh.*pcie_ptt_completion_latency_seconds_bucket" "$rw_tmp/slow.err"'

# ---- the new vendors' machines, healed, without planted faults ----
[ -x "$VICTORIA_METRICS" ] || {
	ok "no alert on a fleet of healed new-vendor hosts # SKIP victoria-metrics is not installed"
	done_testing
	exit
}
[ -x "$VMALERT" ] || {
	ok "no alert on a fleet of healed new-vendor hosts # SKIP vmalert (victoria-metrics) is not installed"
	done_testing
	exit
}
RULES="$top_srcdir/dashboards/alerts/pcie.rules.yml"
RECORDS="$top_srcdir/dashboards/alerts/pcie.records.yml"
RULECHECK="$top_srcdir/tests/tools/fleet_rules.py"
sed -E "s/^( *)for: .*/\1for: $((10 * interval))s/" "$RULES" >"$rw_tmp/rules.yml"
start_vm vm
wait_http "$vm_url/health" 30 || { not_ok "VictoriaMetrics did not start"; done_testing; exit; }
start_vmalert vmalert "$vm_url" "${interval}s" "$rw_tmp/rules.yml" "$RECORDS"
wait_http "$vmalert_url/api/v1/rules" 30 || { not_ok "vmalert did not start"; done_testing; exit; }
"$PCIESCOPE" fleet --hosts 9 --duration $((24 * interval)) --interval $interval --seed 5 \
	--fault-rate 0 --mix "$mix" --url "$vm_url/api/v1/write" --truth "$rw_tmp/truth.json" \
	2>"$rw_tmp/fleet.err" &
fleet_pid=$!
# The alerts after 22 of 24 intervals: every shortened `for:` has passed.
: >"$rw_tmp/alerts.tap"
while kill -0 $fleet_pid 2>/dev/null; do
	t_sent=$(sed -n 's/.*: t=\([0-9]*\)s hosts sending.*/\1/p' "$rw_tmp/fleet.err" | tail -1)
	if [ "${t_sent:-0}" -ge $((22 * interval)) ]; then
		"$PYTHON3" "$RULECHECK" alerts "$vmalert_url" "$rw_tmp/truth.json" >"$rw_tmp/alerts.tap"
		break
	fi
	sleep 0.5
done
wait $fleet_pid
rc=$?
grep "healed\|summary" "$rw_tmp/fleet.err" | sed 's/^/# /'
check "the fleet of healed new-vendor hosts ran and ended by itself (exit 0)" [ $rc -eq 0 ]
check "every new vendor's machine is in it, no fault planted" "$PYTHON3" -c '
import json, sys
t = json.load(open(sys.argv[1]))
sys.exit(1 if set(t["machines"].values()) != {"turin-2p", "yitian710-1p", "grace-gh200"} or t["faults"] else 0)' "$rw_tmp/truth.json"
check "the firing alerts were read while the fleet was sending" [ -s "$rw_tmp/alerts.tap" ]
# With no fault in --truth, every alert kind must have 0 firing and no
# other alert may fire: the healed hosts fire nothing.
while IFS= read -r line; do
	case $line in
	ok*) ok "${line#ok - }" ;;
	"not ok"*) not_ok "${line#not ok - }" ;;
	"#"*) echo "$line" ;;
	esac
done <"$rw_tmp/alerts.tap"
done_testing
