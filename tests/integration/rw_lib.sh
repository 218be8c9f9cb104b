# rw_lib.sh - helpers for the remote_write integration tests (sourced after
# lib.sh): free ports, real receivers (Debian's prometheus and
# victoria-metrics) on 127.0.0.1 in temp dirs, a collectd with the plugin,
# and queries through the receivers' HTTP API.
# shellcheck shell=bash

COLLECTD=${COLLECTD:-$(command -v collectd || echo /usr/sbin/collectd)}
PROMETHEUS=${PROMETHEUS:-$(command -v prometheus)}
# VICTORIA_METRICS, VMALERT, free ports, wait_http and the start lines of
# VictoriaMetrics and vmalert, shared with scripts/run.
. "$top_srcdir/scripts/local_vm.sh"
RW_SO="$top_builddir/plugin/.libs/remote_write.so"
RW_TESTSRC_SO="$top_builddir/tests/tools/.libs/rw_testsrc.so"

rw_tmp=$(mktemp -d)
rw_pids=()
rw_cleanup() {
	local p
	for p in "${rw_pids[@]}"; do
		kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	[ -n "$KEEP_TMP" ] || rm -rf "$rw_tmp"
}
trap rw_cleanup EXIT

# Skips the whole file unless collectd, the plugin and the test source exist.
rw_require_plugin() {
	[ -x "$COLLECTD" ] || skip_all "collectd is not installed"
	[ -f "$RW_SO" ] || skip_all "remote_write was not built (protobuf-c, snappy, libcurl or collectd-dev missing at configure time)"
	[ -f "$RW_TESTSRC_SO" ] || skip_all "tests/tools/rw_testsrc.so was not built"
	command -v curl >/dev/null || skip_all "curl is not installed"
	mkdir -p "$rw_tmp/plugins"
	cp "$RW_SO" "$RW_TESTSRC_SO" "$rw_tmp/plugins/"
	cp /usr/lib/collectd/logfile.so "$rw_tmp/plugins/"
}

free_port() {
	pciescope_free_port
}

# wait_http URL [seconds]: until the URL answers 2xx.
wait_http() {
	pciescope_wait_http "$@"
}

# start_prometheus NAME [extra args]: sets ${NAME}_port ${NAME}_pid ${NAME}_url.
# $PROM_CONFIG, if set, is the whole prometheus.yml (rules, alerting).
start_prometheus() {
	local name=$1 port dir
	shift
	port=$(free_port)
	dir="$rw_tmp/$name"
	mkdir -p "$dir/data"
	if [ -n "${PROM_CONFIG:-}" ]; then
		printf '%s\n' "$PROM_CONFIG" >"$dir/prometheus.yml"
	else
		printf 'global:\n  scrape_interval: 1m\n' >"$dir/prometheus.yml"
	fi
	"$PROMETHEUS" --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/data" \
		--web.listen-address="127.0.0.1:$port" --web.enable-remote-write-receiver \
		"$@" >"$dir/log" 2>&1 &
	local pid=$!
	rw_pids+=("$pid")
	printf -v "${name}_port" %s "$port"
	printf -v "${name}_pid" %s "$pid"
	printf -v "${name}_url" %s "http://127.0.0.1:$port"
}

# start_vm NAME [port]: VictoriaMetrics single node; same variables.
start_vm() {
	local name=$1 port=${2:-$(free_port)}
	pciescope_start_vm "$rw_tmp/$name" "$port"
	local pid=$!
	rw_pids+=("$pid")
	printf -v "${name}_port" %s "$port"
	printf -v "${name}_pid" %s "$pid"
	printf -v "${name}_url" %s "http://127.0.0.1:$port"
}

# start_vmalert NAME URL INTERVAL RULE_FILE... : vmalert 1.79 evaluating the
# rule files every INTERVAL against the VictoriaMetrics at URL and writing
# the results (records, ALERTS) back to it; sets ${NAME}_port ${NAME}_pid
# ${NAME}_url (its own HTTP API: /api/v1/alerts, /api/v1/groups, /metrics).
start_vmalert() {
	local name=$1 port
	port=$(free_port)
	pciescope_start_vmalert "$rw_tmp/$name" "$port" "${@:2}"
	local pid=$!
	rw_pids+=("$pid")
	printf -v "${name}_port" %s "$port"
	printf -v "${name}_pid" %s "$pid"
	printf -v "${name}_url" %s "http://127.0.0.1:$port"
}

# collectd_conf FILE LOG [lines...]: collectd with logfile, the test source
# and remote_write; the arguments are the body of <Plugin remote_write>.
collectd_conf() {
	local conf=$1 log=$2
	shift 2
	{
		echo "Hostname \"rwtest-host\""
		echo "BaseDir \"$rw_tmp\""
		echo "PIDFile \"$rw_tmp/collectd.pid\""
		echo "PluginDir \"$rw_tmp/plugins\""
		echo "TypesDB \"/usr/share/collectd/types.db\""
		echo "Interval 1"
		echo "LoadPlugin logfile"
		echo "<Plugin logfile>"
		echo "  LogLevel info"
		echo "  File \"$log\""
		echo "  PrintSeverity true"
		echo "</Plugin>"
		echo "LoadPlugin rw_testsrc"
		echo "<Plugin rw_testsrc>"
		echo "  Vanish ${RW_VANISH:-3}"
		echo "  PastSeries ${RW_PAST:-false}"
		echo "</Plugin>"
		echo "LoadPlugin remote_write"
		echo "<Plugin remote_write>"
		for line in "$@"; do echo "  $line"; done
		echo "</Plugin>"
	} >"$conf"
}

# pcie_collectd_conf DIR HOST MACHINE [-p "pcie line"]... [-e NAME URL]...:
# writes DIR/c.conf: collectd as HOST (Interval 1, log DIR/c.log at info)
# with the pcie plugin on the simulated MACHINE (a name or a file; PTT
# windows of 0.2 s every 2 s, two at once, plus the -p lines) and
# remote_write to each -e endpoint (URL/api/v1/write, BatchDeadline 0.5).
# A caller appends what else it needs (cat >>DIR/c.conf).
pcie_collectd_conf() {
	local dir=$1 host=$2 machine=$3 pcie=() eps=()
	shift 3
	while [ $# -gt 0 ]; do
		case $1 in
		-p) pcie+=("$2"); shift 2 ;;
		-e) eps+=("$2" "$3"); shift 3 ;;
		*) echo "pcie_collectd_conf: unknown argument $1" >&2; return 1 ;;
		esac
	done
	mkdir -p "$dir"
	{
		cat <<CONF
Hostname "$host"
BaseDir "$dir"
PIDFile "$dir/collectd.pid"
PluginDir "$rw_tmp/plugins"
TypesDB "/usr/share/collectd/types.db"
Interval 1
# One write thread: collectd's five may hand two value lists of a series
# to remote_write out of order on a busy machine (docs/remote_write.md).
WriteThreads 1
LoadPlugin logfile
<Plugin logfile>
  LogLevel info
  File "$dir/c.log"
  PrintSeverity true
</Plugin>
LoadPlugin pcie
<Plugin pcie>
  Simulate "$machine"
  MachineDirectory "$top_srcdir/sim/machines"
  TraceDuration 0.2
  TracePeriod 2
  MaxConcurrentTraces 2
CONF
		for line in "${pcie[@]}"; do echo "  $line"; done
		echo "</Plugin>"
		if [ ${#eps[@]} -gt 0 ]; then
			echo "LoadPlugin remote_write"
			echo "<Plugin remote_write>"
			for ((i = 0; i < ${#eps[@]}; i += 2)); do
				printf '  <Endpoint "%s">\n    URL "%s/api/v1/write"\n    BatchDeadline 0.5\n  </Endpoint>\n' \
					"${eps[i]}" "${eps[i + 1]}"
			done
			echo "</Plugin>"
		fi
	} >"$dir/c.conf"
}

# make_pki DIR: a CA (DIR/ca.crt) and a server certificate for 127.0.0.1
# signed by it (DIR/server.crt, DIR/server.key), made with openssl; the
# log goes to DIR/openssl.log.
make_pki() {
	local d=$1 openssl=${OPENSSL:-$(command -v openssl)}
	mkdir -p "$d"
	(
		cd "$d" &&
			"$openssl" req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 2 -subj "/CN=pciescope test CA" &&
			"$openssl" req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj "/CN=127.0.0.1" &&
			printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n' >ext.cnf &&
			"$openssl" x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out server.crt -days 2 -extfile ext.cnf
	) >"$d/openssl.log" 2>&1
}

# start_collectd CONF: sets collectd_pid.
start_collectd() {
	"$COLLECTD" -f -C "$1" >"$1.out" 2>&1 &
	collectd_pid=$!
	rw_pids+=("$collectd_pid")
}

stop_collectd() {
	kill "$collectd_pid" 2>/dev/null
	wait "$collectd_pid" 2>/dev/null
}

# q URL PROMQL [TIME]: the instant query's result as lines
# "<metric labels as k=v,... sorted> <value>".
q() {
	local args=(--data-urlencode "query=$2")
	[ -n "$3" ] && args+=(--data-urlencode "time=$3")
	curl -sfG --max-time 10 "$1/api/v1/query" "${args[@]}" | "$PYTHON3" -c '
import json, sys
d = json.load(sys.stdin)
for r in d["data"]["result"]:
    m = r["metric"]
    labels = ",".join("%s=%s" % (k, m[k]) for k in sorted(m))
    if d["data"]["resultType"] == "matrix":
        print(labels, " ".join("%s@%s" % (v[1], v[0]) for v in r["values"]))
    else:
        print(labels, r["value"][1])
'
}

# qv URL PROMQL [TIME]: the value of a one-element instant result.
qv() {
	q "$@" | head -n 1 | awk '{print $NF}'
}

# series URL MATCH START END: the label sets, one line each.
series() {
	curl -sfG --max-time 10 "$1/api/v1/series" --data-urlencode "match[]=$2" \
		--data-urlencode "start=$3" --data-urlencode "end=$4" | "$PYTHON3" -c '
import json, sys
for m in json.load(sys.stdin)["data"]:
    print(",".join("%s=%s" % (k, m[k]) for k in sorted(m)))
'
}

# log_has FILE REGEX
log_has() {
	grep -Eq "$2" "$1"
}

# series_shape FILE: FILE's series list (one label set a line, as `series`
# prints it) with the requester of pcie_ptt_requester_tlps_total as "*".
# Which functions are a PTT window's top requesters depends on the phase of
# each device's workload the window lands in: the engine's fake-clock list
# (golden_stream) lands its windows at fixed times, a real-time run drifts,
# so a device busy one second in ten (kunpeng930-2p's 0000:0b:00.0) can be
# a top requester in one and not in the other. The label's values are
# bounded all the same: functions of the machine (machine_bdfs), at most
# TraceTopRequesters per PTT device.
series_shape() {
	sed -E '/(^|,)__name__=pcie_ptt_requester_tlps_total(,|$)/ s/(^|,)requester=[^,]*/\1requester=*/' "$1" | sort -u
}

# series_requesters FILE: the requester values of FILE's
# pcie_ptt_requester_tlps_total series, one a line.
series_requesters() {
	grep -E '(^|,)__name__=pcie_ptt_requester_tlps_total(,|$)' "$1" |
		sed -nE 's/(^|.*,)requester=([^,]*).*/\2/p' | sort -u
}

# machine_bdfs MACHINE: every function of the simulated MACHINE, one a line.
machine_bdfs() {
	"$PCIESCOPE" topology --json --simulate "$1" --machine-dir "$top_srcdir/sim/machines" 2>/dev/null |
		"$PYTHON3" -c 'import json, sys; print("\n".join(f["bdf"] for f in json.load(sys.stdin)))' | sort -u
}
