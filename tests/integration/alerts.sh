#!/bin/bash
# alerts.sh - the shipped alert rules (dashboards/alerts/pcie.rules.yml):
# 1. promtool check rules, vmalert -dryRun, and promtool test rules on
#    tests/alerts/pcie.rules.test.yml (firing and non-firing cases);
# 2. live: collectd with pcie + remote_write on every simulated machine
#    (kunpeng930-2p, kunpeng930-misconfig, spr-2s, yitian710-1p with the
#    DesignWare PMUs and a saturated E810 port, turin-2p with its root
#    complexes mapped, grace-gh200, and the synthetic alert-scenarios
#    machine with a saturated link and a short burst), each
#    under its own Hostname, into one real Prometheus 2.42 that evaluates a
#    test copy of the rules (every `for:` 0s). Every alert expression must
#    return exactly the series the machine descriptions say are wrong
#    (tests/alerts/expected.py works them out from the descriptions and the
#    simulator's ground truth) and nothing else;
# 3. end to end: Prometheus sends the saturation alert to a real
#    Alertmanager 0.25, which posts it to a webhook on 127.0.0.1 that the
#    test reads.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rw_lib.sh"
RULES="$top_srcdir/dashboards/alerts/pcie.rules.yml"
RECORDS="$top_srcdir/dashboards/alerts/pcie.records.yml"
PROMTOOL=${PROMTOOL:-$(command -v promtool)}
VMALERT=${VMALERT:-$(command -v vmalert)}
ALERTMANAGER=${ALERTMANAGER:-$(command -v prometheus-alertmanager || command -v alertmanager)}
RUN_SECONDS=${ALERTS_RUN_SECONDS:-50}

# ---- 1. the rules as the ecosystem's tools see them ----
[ -x "$PROMTOOL" ] || skip_all "promtool (Debian's prometheus) is not installed"
check "promtool check rules accepts the rules" "$PROMTOOL" check rules "$RULES" "$RECORDS"
if [ -x "$VMALERT" ]; then
	check "vmalert -dryRun accepts the rules" "$VMALERT" -dryRun -rule="$RULES" -rule="$RECORDS" -loggerLevel=ERROR
else
	ok "vmalert -dryRun # SKIP vmalert (victoria-metrics) is not installed"
fi
"$PROMTOOL" test rules "$top_srcdir/tests/alerts/pcie.rules.test.yml" >"$rw_tmp/unit.out" 2>&1
check "promtool test rules: every alert's firing and non-firing cases" grep -q SUCCESS "$rw_tmp/unit.out"
grep -q SUCCESS "$rw_tmp/unit.out" || sed 's/^/# /' "$rw_tmp/unit.out" | head -40
# Every alert has a test case and a runbook section.
for a in $(sed -n 's/^ *- alert: *//p' "$RULES"); do
	check "$a has promtool cases and a docs/alerts.md section" \
		eval "grep -q 'alertname: $a\$' '$top_srcdir/tests/alerts/pcie.rules.test.yml' &&
		      grep -q '^## $a\$' '$top_srcdir/docs/alerts.md'"
done

# ---- 2. live ----
rw_require_plugin
[ -x "$PROMETHEUS" ] || skip_all "prometheus is not installed"
SO="$top_builddir/plugin/.libs/pcie.so"
[ -f "$SO" ] || skip_all "the pcie plugin was not built"
cp "$SO" "$rw_tmp/plugins/"
TRUTH="$top_builddir/tests/tools/sim_truth"
[ -x "$TRUTH" ] || skip_all "tests/tools/sim_truth was not built"

# The webhook Alertmanager posts to: one JSON body a line.
hook_port=$(free_port)
"$PYTHON3" - "$hook_port" "$rw_tmp/hook.jsonl" >"$rw_tmp/hook.log" 2>&1 <<'PY' &
import http.server, sys
port, out = int(sys.argv[1]), sys.argv[2]
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with open(out, "ab") as f:
            f.write(body.replace(b"\n", b" ") + b"\n")
        self.send_response(200)
        self.end_headers()
    def log_message(self, *a):
        pass
http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
PY
rw_pids+=($!)
am_available=false
if [ -x "$ALERTMANAGER" ]; then
	am_port=$(free_port)
	mkdir -p "$rw_tmp/am"
	cat >"$rw_tmp/am/am.yml" <<YML
route:
  receiver: hook
  group_by: [alertname, instance]
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: hook
    webhook_configs:
      - url: http://127.0.0.1:$hook_port/
YML
	"$ALERTMANAGER" --config.file="$rw_tmp/am/am.yml" --storage.path="$rw_tmp/am" \
		--web.listen-address="127.0.0.1:$am_port" --cluster.listen-address= >"$rw_tmp/am/log" 2>&1 &
	rw_pids+=($!)
	am_available=true
fi

# The rules as shipped, but every alert fires as soon as its expression
# does (the run lasts seconds, not the minutes of the for: clauses).
sed -E 's/^( *)for: .*/\1for: 0s/' "$RULES" >"$rw_tmp/rules.yml"
PROM_CONFIG="global:
  scrape_interval: 1m
  evaluation_interval: 2s
rule_files: [\"$rw_tmp/rules.yml\", \"$RECORDS\"]"
$am_available && PROM_CONFIG="$PROM_CONFIG
alerting:
  alertmanagers:
    - static_configs:
        - targets: [\"127.0.0.1:$am_port\"]"
PROM_CONFIG=$PROM_CONFIG start_prometheus prom
check "prometheus is up with the rules" wait_http "$prom_url/-/ready" 30
$am_available && check "alertmanager is up" wait_http "http://127.0.0.1:$am_port/-/ready" 30

machines=("$top_srcdir/sim/machines/kunpeng930-2p.json" "$top_srcdir/sim/machines/kunpeng930-misconfig.json"
	"$top_srcdir/sim/machines/spr-2s.json" "$top_srcdir/tests/fixtures/machines/alert-scenarios.json"
	"$top_srcdir/sim/machines/yitian710-1p.json" "$top_srcdir/sim/machines/turin-2p.json"
	"$top_srcdir/sim/machines/grace-gh200.json")
hosts=(h-2p h-misconfig h-spr h-scenarios h-yitian h-turin h-grace)
# turin-2p: every IO root complex mapped to its root bus (AMD publishes no
# map), so the saturated one (io3 of socket 0) has a utilisation.
turin_maps=(-p 'AMDDFRootComplexBus 0 0 "0000:00"' -p 'AMDDFRootComplexBus 0 2 "0000:20"'
	-p 'AMDDFRootComplexBus 0 1 "0000:40"' -p 'AMDDFRootComplexBus 0 3 "0000:60"'
	-p 'AMDDFRootComplexBus 1 0 "0000:80"' -p 'AMDDFRootComplexBus 1 1 "0000:a0"')
cpids=()
t0=$(date +%s)
for i in "${!machines[@]}"; do
	h=${hosts[$i]}
	extra=()
	[ "$h" = h-turin ] && extra=("${turin_maps[@]}")
	pcie_collectd_conf "$rw_tmp/$h" "$h" "${machines[$i]}" -e prom "$prom_url" "${extra[@]}"
	"$COLLECTD" -f -C "$rw_tmp/$h/c.conf" >"$rw_tmp/$h/out" 2>&1 &
	cpids+=($!)
	rw_pids+=($!)
done
sleep "$RUN_SECONDS"
t=$(date +%s)
# The simulations started with their daemons: the run is [~2 s, t - t0] of
# simulated time (the first values come after the first interval).
elapsed=$((t - t0))
for i in "${!hosts[@]}"; do
	check "${hosts[$i]}: collectd runs without errors" \
		eval "kill -0 ${cpids[$i]} && ! grep -q '\\[error\\]' '$rw_tmp/${hosts[$i]}/c.log'"
done

# What every alert expression returns now, as "ALERTNAME KEY" lines with
# the key labels of expected.py.
"$PYTHON3" - "$rw_tmp/rules.yml" "$prom_url" "$t" >"$rw_tmp/got" 2>"$rw_tmp/got.err" <<'PY'
import json, sys, urllib.error, urllib.parse, urllib.request
import yaml
rules, url, t = sys.argv[1], sys.argv[2], sys.argv[3]
# The labels that name an alert's series (as expected.py writes them).
def keys(alert):
    if alert == "PCIeLinkSaturated":
        return ("instance", "port", "direction")
    if alert.startswith("PCIeAER"):
        return ("instance", "bdf", "aer_severity")
    if alert.startswith("PCIeLink") or alert == "PCIeMPSMisconfigured":
        return ("instance", "bdf")
    if alert.startswith("PCIeRemoteWrite"):
        return ("instance", "endpoint", "reason")
    return ("instance", "pmu")
for group in yaml.safe_load(open(rules))["groups"]:
    for r in group["rules"]:
        if "alert" not in r:
            continue
        q = urllib.parse.urlencode({"query": r["expr"], "time": t})
        try:
            d = json.load(urllib.request.urlopen(f"{url}/api/v1/query?{q}", timeout=20))
        except urllib.error.HTTPError as e:
            d = {"status": "error", "error": e.read().decode(errors="replace")[:300]}
        if d.get("status") != "success":
            print(f"ERROR {r['alert']} {d}", file=sys.stderr)
            continue
        for s in d["data"]["result"]:
            m = s["metric"]
            if r["alert"].startswith("PCIeAER"):
                m = dict(m, aer_severity=m.get("aer_severity", m.get("severity", "")))
            k = keys(r["alert"])
            if "root_complex" in m:  # AMD: a root complex, not a port
                k = ("instance", "socket", "root_complex", "direction")
            key = ",".join(f"{x}={m[x]}" for x in k if x in m)
            print(f"{r['alert']} {key}")
PY
check "every alert expression runs ($(head -c 200 "$rw_tmp/got.err"))" [ ! -s "$rw_tmp/got.err" ]
sort -u "$rw_tmp/got" -o "$rw_tmp/got"

: >"$rw_tmp/want"
: >"$rw_tmp/maybe"
for i in "${!machines[@]}"; do
	"$TRUTH" "${machines[$i]}" 2 "$elapsed" payload >"$rw_tmp/truth.$i"
	"$PYTHON3" "$top_srcdir/tests/alerts/expected.py" "${machines[$i]}" "${hosts[$i]}" 2 "$elapsed" \
		"$rw_tmp/truth.$i" >"$rw_tmp/exp.$i"
	grep -v '^maybe ' "$rw_tmp/exp.$i" >>"$rw_tmp/want"
	sed -n 's/^maybe //p' "$rw_tmp/exp.$i" >>"$rw_tmp/maybe"
done
sort -u "$rw_tmp/want" -o "$rw_tmp/want"
sort -u "$rw_tmp/maybe" -o "$rw_tmp/maybe"
missing=$(comm -23 "$rw_tmp/want" "$rw_tmp/got")
extra=$(comm -13 "$rw_tmp/want" "$rw_tmp/got" | comm -23 - "$rw_tmp/maybe")
for a in $(sed -n 's/^ *- alert: *//p' "$RULES"); do
	w=$(grep -c "^$a " "$rw_tmp/want")
	g=$(grep -c "^$a " "$rw_tmp/got")
	m=$(echo "$missing" | grep -c "^$a ")
	x=$(echo "$extra" | grep -c "^$a ")
	check "$a: $g series on the simulated machines, $w expected from their descriptions ($m missing, $x unexpected)" \
		eval '[ "$m" -eq 0 ] && [ "$x" -eq 0 ]'
	{ echo "$missing" | grep "^$a " | sed 's/^/# missing: /'; echo "$extra" | grep "^$a " | sed 's/^/# unexpected: /'; } || true
done
check "the descriptions name wrong things at all ($(wc -l <"$rw_tmp/want") expected series)" \
	[ "$(wc -l <"$rw_tmp/want")" -ge 5 ]
v=$(qv "$prom_url" 'instance:pcie_links_downtrained:count{instance="h-misconfig"}' "$t")
check "recording rule: one downtrained link on h-misconfig (got ${v:-none})" [ "$v" = 1 ]
v=$(qv "$prom_url" 'count(instance:pcie_port_utilization_ratio:max)' "$t")
check "recording rule: worst utilisation per host and direction ($v series: 3 Kunpeng hosts, the Yitian, turin and a Grace host x 2, h-spr rx: its IIO stacks mapped by the CPU bus registers)" [ "$v" = 13 ]

# ---- 3. Alertmanager to a webhook ----
if $am_available; then
	for _ in $(seq 1 60); do
		grep -q '"alertname":"PCIeLinkSaturated"' "$rw_tmp/hook.jsonl" 2>/dev/null && break
		sleep 0.5
	done
	check "Alertmanager posted PCIeLinkSaturated for h-scenarios to the webhook" \
		eval "grep '\"alertname\":\"PCIeLinkSaturated\"' '$rw_tmp/hook.jsonl' | grep -q '\"instance\":\"h-scenarios\"'"
	check "the webhook's alert carries its runbook_url and severity" \
		eval "grep '\"alertname\":\"PCIeLinkSaturated\"' '$rw_tmp/hook.jsonl' | grep -q 'docs/alerts.md#pcielinksaturated' &&
		      grep '\"alertname\":\"PCIeLinkSaturated\"' '$rw_tmp/hook.jsonl' | grep -q '\"severity\":\"warning\"'"
else
	ok "Alertmanager end to end # SKIP prometheus-alertmanager is not installed"
fi
done_testing
