# local_vm.sh - a VictoriaMetrics and a vmalert of one's own on 127.0.0.1
# (sourced by scripts/run and tests/integration/rw_lib.sh). Each listens on
# a port the caller picks (pciescope_free_port), keeps its data and log in
# a folder the caller owns and removes, and runs in the background: $! is
# its pid, for the caller to stop. Debian's victoria-metrics package has
# both programs.
# shellcheck shell=bash

VICTORIA_METRICS=${VICTORIA_METRICS:-$(command -v victoria-metrics)}
VMALERT=${VMALERT:-$(command -v vmalert)}

# pciescope_free_port: a TCP port on 127.0.0.1 that nothing listens on now.
pciescope_free_port() {
	"${PYTHON3:-python3}" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# pciescope_wait_http URL [SECONDS]: until the URL answers 2xx (default 20 s).
pciescope_wait_http() {
	local i
	for i in $(seq 1 $((${2:-20} * 5))); do
		curl -sfk -o /dev/null --max-time 2 "$1" && return 0
		sleep 0.2
	done
	return 1
}

# pciescope_start_vm DIR PORT: VictoriaMetrics single node on
# 127.0.0.1:PORT with its data in DIR/data and its log in DIR/log. A query
# sees a sample as soon as it is stored (no latency offset, no cache): what
# the tests and the status lines of scripts/run read back is current.
pciescope_start_vm() {
	local dir=$1 port=$2
	mkdir -p "$dir/data"
	"$VICTORIA_METRICS" -httpListenAddr="127.0.0.1:$port" -storageDataPath="$dir/data" \
		-retentionPeriod=1d -search.latencyOffset=0s -search.disableCache \
		>>"$dir/log" 2>&1 &
}

# pciescope_start_vmalert DIR PORT DATASOURCE_URL INTERVAL RULE_FILE...:
# vmalert on 127.0.0.1:PORT evaluating the rule files every INTERVAL
# against the VictoriaMetrics at DATASOURCE_URL and writing the results
# (records, ALERTS) back to it, flushed every second; its own HTTP API
# (/api/v1/alerts, /api/v1/rules, /metrics) answers on the port. No
# Alertmanager: notifications go to a closed port (logged, not sent).
pciescope_start_vmalert() {
	local dir=$1 port=$2 ds=$3 every=$4 f args=()
	shift 4
	for f in "$@"; do args+=(-rule="$f"); done
	mkdir -p "$dir"
	"$VMALERT" -httpListenAddr="127.0.0.1:$port" -datasource.url="$ds" -remoteWrite.url="$ds" \
		-remoteWrite.flushInterval=1s -evaluationInterval="$every" -notifier.url=http://127.0.0.1:1 \
		"${args[@]}" >>"$dir/log" 2>&1 &
}
