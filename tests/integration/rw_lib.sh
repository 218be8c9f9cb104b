# rw_lib.sh - helpers for the remote_write integration tests (sourced after
# lib.sh): free ports, real receivers (Debian's prometheus and
# victoria-metrics) on 127.0.0.1 in temp dirs, a collectd with the plugin,
# and queries through the receivers' HTTP API.
# shellcheck shell=bash

COLLECTD=${COLLECTD:-$(command -v collectd || echo /usr/sbin/collectd)}
PROMETHEUS=${PROMETHEUS:-$(command -v prometheus)}
VICTORIA_METRICS=${VICTORIA_METRICS:-$(command -v victoria-metrics)}
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
	"$PYTHON3" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# wait_http URL [seconds]: until the URL answers 2xx.
wait_http() {
	local i
	for i in $(seq 1 $((${2:-20} * 5))); do
		curl -sfk -o /dev/null --max-time 2 "$1" && return 0
		sleep 0.2
	done
	return 1
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
	local name=$1 port=${2:-$(free_port)} dir
	dir="$rw_tmp/$name"
	mkdir -p "$dir/data"
	"$VICTORIA_METRICS" -httpListenAddr="127.0.0.1:$port" -storageDataPath="$dir/data" \
		-retentionPeriod=1d -search.latencyOffset=0s -search.disableCache \
		>>"$dir/log" 2>&1 &
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
