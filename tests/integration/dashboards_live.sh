#!/bin/bash
# dashboards_live.sh - the dashboards on live data (issue 13), also the
# fleet run: collectd daemons with the pcie plugin on the simulated
# machines (Kunpeng x2, Sapphire Rapids, Yitian 710 with DWC PMUs, Turin
# with the data fabric PMU, Grace) (distinct Hostnames) write through remote_write into
# ONE real Prometheus 2.42 and one VictoriaMetrics 1.79. Then every panel
# query of the committed dashboards/grafana/*.json (template variables
# substituted) must return data for the host of each machine it is meant for
# and none for the others, the fleet overview's counts and top-k must match
# the machine descriptions and the raw series, and VictoriaMetrics must
# answer the fleet queries like Prometheus.
#
# DASHBOARDS_PICTURES=DIR also renders every dashboard into DIR/*.png
# (dashboards/render.py, `make pictures`); DASHBOARDS_RUN_SECONDS sets how
# long the daemons run (default 35).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rw_lib.sh"
[ -x "$COLLECTD" ] || skip_all "collectd is not installed"
[ -x "$PROMETHEUS" ] || skip_all "prometheus is not installed"
[ -x "$VICTORIA_METRICS" ] || skip_all "victoria-metrics is not installed"
[ -x "$VMALERT" ] || skip_all "vmalert (victoria-metrics) is not installed"
command -v curl >/dev/null || skip_all "curl is not installed"
for so in pcie remote_write; do
	[ -f "$top_builddir/plugin/.libs/$so.so" ] || skip_all "the $so plugin was not built"
done
mkdir -p "$rw_tmp/plugins"
cp "$top_builddir/plugin/.libs/pcie.so" "$top_builddir/plugin/.libs/remote_write.so" \
	/usr/lib/collectd/logfile.so "$rw_tmp/plugins/"
RUN=${DASHBOARDS_RUN_SECONDS:-35}
CHECK="$top_srcdir/tests/tools/dashboards_check.py"
BOARDS="$top_srcdir/dashboards/grafana"

RECORDS="$top_srcdir/dashboards/alerts/pcie.records.yml"
PROM_CONFIG="global:
  scrape_interval: 1m
  evaluation_interval: 2s
rule_files: [\"$RECORDS\"]" start_prometheus prom
start_vm vm
start_vmalert vmalert "$vm_url" 2s "$RECORDS"
check "prometheus is up" wait_http "$prom_url/-/ready" 30
check "victoria-metrics is up" wait_http "$vm_url/health" 30
check "vmalert is up with the recording rules" wait_http "$vmalert_url/api/v1/rules" 30

# conf MACHINE HOST [pcie lines...]: remote_write to both receivers.
conf() {
	local machine=$1 host=$2 line args=()
	shift 2
	for line in "$@"; do args+=(-p "$line"); done
	pcie_collectd_conf "$rw_tmp/$host" "$host" "$machine" "${args[@]}" -e prom "$prom_url" -e vm "$vm_url"
}

# The Sapphire Rapids host runs as shipped, with no IIOStackBus: its IIO
# stacks reach their Root Ports through the uncore's CPU bus registers
# (docs/configuration.md, "Intel IIO stack mapping"), so the utilisation
# panels have mapped stacks to show on both sockets.
conf kunpeng930-2p kp-2p-01
conf kunpeng930-misconfig kp-misconfig-01
conf spr-2s spr-01
conf yitian710-1p yt-01
# The Turin host maps its root complexes as docs/metrics.md tells a user to
# (AMDDFRootComplexBus), so that its utilisation panels have data.
conf turin-2p turin-01 \
	'AMDDFRootComplexBus 0 0 "0000:00"' 'AMDDFRootComplexBus 0 2 "0000:20"' \
	'AMDDFRootComplexBus 0 1 "0000:40"' 'AMDDFRootComplexBus 0 3 "0000:60"' \
	'AMDDFRootComplexBus 1 0 "0000:80"' 'AMDDFRootComplexBus 1 1 "0000:a0"'
conf grace-gh200 grace-01
pids=()
for h in kp-2p-01 kp-misconfig-01 spr-01 yt-01 turin-01 grace-01; do
	"$COLLECTD" -f -C "$rw_tmp/$h/c.conf" >"$rw_tmp/$h/out" 2>&1 &
	pids+=("$!")
	rw_pids+=("$!")
done
t0=$(date +%s)
sleep "$RUN"
t=$(date +%s)
for p in "${pids[@]}"; do
	kill "$p" 2>/dev/null
	wait "$p" 2>/dev/null
done
for h in kp-2p-01 kp-misconfig-01 spr-01 yt-01 turin-01 grace-01; do
	check "$h: collectd logged no errors" eval "! grep -q '\\[error\\]' '$rw_tmp/$h/c.log'"
	grep '\[error\]' "$rw_tmp/$h/c.log" | head -3 | sed 's/^/# /'
done
sleep 4 # vmalert's last records reach VictoriaMetrics (flushed every 1 s) and are searchable

while IFS=$'\t' read -r st desc; do
	check "$desc" [ "$st" = ok ]
done < <("$PYTHON3" "$CHECK" live "$BOARDS" "$prom_url" "$vm_url" "$t" \
	kp-2p-01=kunpeng930-2p kp-misconfig-01=kunpeng930-misconfig spr-01=spr-2s yt-01=yitian710-1p \
	turin-01=turin-2p grace-01=grace-gh200 \
	--machines "$top_srcdir/sim/machines" || echo "not ok	dashboards_check.py live exited $?")

# The IIO dashboard's utilisation panel on spr-2s as shipped: every stack
# mapped by the CPU bus registers, Root Ports with utilisation on both
# sockets (5 links up on socket 0, 3 on socket 1; raw and effective).
by_socket() {
	curl -s --get "$prom_url/api/v1/query" --data-urlencode "query=$1" --data-urlencode "time=$t" |
		"$PYTHON3" -c 'import json, sys
r = json.load(sys.stdin)["data"]["result"]
print(" ".join(sorted(x["metric"].get("socket", "") + "=" + x["value"][1] for x in r)))'
}
got=$(by_socket 'count by (socket) (pcie_iio_stack_info{mapping="registers"})')
check "spr-01: the IIO stacks are mapped by the CPU bus registers, no IIOStackBus ($got)" [ "$got" = "0=3 1=2" ]
got=$(by_socket 'count by (socket) (pcie_port_utilization_ratio{pmu=~"uncore_iio.*"})')
check "spr-01: utilisation of the mapped stacks' Root Ports on both sockets ($got)" [ "$got" = "0=10 1=6" ]

if [ -n "$DASHBOARDS_PICTURES" ]; then
	check "render the dashboards into $DASHBOARDS_PICTURES" \
		"${MATPLOTLIB_PYTHON:-/usr/bin/python3}" "$top_srcdir/dashboards/render.py" \
		"$BOARDS" "$prom_url" "$t0" "$t" "$DASHBOARDS_PICTURES"
fi
done_testing
