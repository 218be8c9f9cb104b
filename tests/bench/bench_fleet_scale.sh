#!/bin/bash
# bench_fleet_scale.sh - issue 27 item 2: `pciescope fleet` ramps of
# 100/250/500/1,000 hosts (BENCH_FLEET_HOSTS) at a 10 s interval into a
# fresh single-node VictoriaMetrics 1.79 and, separately, a fresh
# Prometheus 2.42 (--web.enable-remote-write-receiver), default receiver
# flags, on 127.0.0.1 in temp dirs, one at a time. Per step: samples/s
# accepted, samples dropped by the sender, the receiver's CPU (utime+stime
# from /proc over the steady part) and RSS at the end, its active series,
# and the sender's own CPU (its summary line). Not a test: numbers, one
# table row per step on stdout (docs/scaling.md).
#
#   bench_fleet_scale.sh BUILDDIR SRCDIR
#   BENCH_FLEET_SECONDS (180) per step, BENCH_FLEET_RECEIVERS ("vm prom"),
#   BENCH_FLEET_HOSTS ("100 250 500 1000"), BENCH_FLEET_INTERVAL (10),
#   BENCH_FLEET_FAULT_RATE (0.03), BENCH_FLEET_MIX (pciescope fleet's --mix;
#   its default mix when empty)
set -u
build=$(cd "${1:-.}" && pwd)
src=$(cd "${2:-.}" && pwd)
seconds=${BENCH_FLEET_SECONDS:-180}
interval=${BENCH_FLEET_INTERVAL:-10}
fleet="$build/cli/pciescope-fleet"
export PCIESCOPE_MACHINE_DIR="$src/sim/machines"
tmp=$(mktemp -d)
rpid=
trap '[ -n "$rpid" ] && kill "$rpid" 2>/dev/null; rm -rf "$tmp"' EXIT
[ -x "$fleet" ] || { echo "bench_fleet_scale: $fleet not built"; exit 1; }
tick=$(getconf CLK_TCK)

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
cpu_s() { awk -v t="$tick" '{ print ($14 + $15) / t }' "/proc/$1/stat"; }
rss_mib() { awk '/^VmRSS/ { printf "%.0f", $2 / 1024 }' "/proc/$1/status"; }
metric() { # URL NAME-REGEX: the sum of the matching lines of /metrics
	curl -s "$1/metrics" | awk -v re="$2" '$1 ~ re { s += $NF } END { printf "%.0f", s }'
}

start_receiver() { # vm|prom: sets rpid, rurl
	local port dir="$tmp/$1-$2"
	port=$(free_port)
	mkdir -p "$dir/data"
	if [ "$1" = vm ]; then
		victoria-metrics -httpListenAddr="127.0.0.1:$port" -storageDataPath="$dir/data" \
			-retentionPeriod=1d >"$dir/log" 2>&1 &
	else
		printf 'global:\n  scrape_interval: 1m\n' >"$dir/prometheus.yml"
		prometheus --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/data" \
			--web.listen-address="127.0.0.1:$port" --web.enable-remote-write-receiver \
			>"$dir/log" 2>&1 &
	fi
	rpid=$!
	rurl="http://127.0.0.1:$port"
	for _ in $(seq 100); do curl -sf -o /dev/null "$rurl/-/ready" 2>/dev/null || curl -sf -o /dev/null "$rurl/health" && break; sleep 0.2; done
}

echo "# $(nproc) CPUs, load average at start: $(cut -d' ' -f1-3 /proc/loadavg); $seconds s per step, interval $interval s"
echo "| receiver | hosts | active series | samples/s accepted | dropped | receiver CPU (cores) | receiver CPU per 100 k samples/s | receiver RSS (MiB) | RSS per million series (MiB) | sender CPU (cores) | send p50 / p99 (ms) | load avg |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
for r in ${BENCH_FLEET_RECEIVERS:-vm prom}; do
	for n in ${BENCH_FLEET_HOSTS:-100 250 500 1000}; do
		start_receiver "$r" "$n"
		"$fleet" --hosts "$n" --duration "$seconds" --interval "$interval" --seed 27 --fault-rate "${BENCH_FLEET_FAULT_RATE:-0.03}" \
			${BENCH_FLEET_MIX:+--mix "$BENCH_FLEET_MIX"} \
			--url "$rurl/api/v1/write" 2>"$tmp/fleet-$r-$n.err" &
		fpid=$!
		# steady part: from 2 intervals after the first send to the end
		while ! grep -q "t=" "$tmp/fleet-$r-$n.err" 2>/dev/null; do
			kill -0 $fpid 2>/dev/null || break
			sleep 1
		done
		sleep $((2 * interval))
		c0=$(cpu_s "$rpid")
		t0=$(date +%s.%N)
		if [ "$r" = vm ]; then a0=$(metric "$rurl" '^vm_rows_inserted_total\\{type="promremotewrite"\\}'); else a0=$(metric "$rurl" '^prometheus_tsdb_head_samples_appended_total'); fi
		sleep $((seconds - 4 * interval))
		c1=$(cpu_s "$rpid")
		t1=$(date +%s.%N)
		if [ "$r" = vm ]; then
			a1=$(metric "$rurl" '^vm_rows_inserted_total\\{type="promremotewrite"\\}')
			series=$(metric "$rurl" '^vm_cache_entries\\{type="storage/hour_metric_ids"\\}')
		else
			a1=$(metric "$rurl" '^prometheus_tsdb_head_samples_appended_total')
			series=$(metric "$rurl" '^prometheus_tsdb_head_series$')
		fi
		rss=$(rss_mib "$rpid")
		load=$(cut -d' ' -f1 /proc/loadavg)
		wait $fpid
		sum=$(grep "summary:" "$tmp/fleet-$r-$n.err")
		dropped=$(sed -n 's/.*dropped \([0-9]*\).*/\1/p' <<<"$sum")
		scpu=$(sed -n 's/.*(\([0-9.]*\) cores).*/\1/p' <<<"$sum")
		lat=$(sed -n 's/.*p50 \([0-9.]*\) ms, p99 \([0-9.]*\) ms.*/\1 \/ \2/p' <<<"$sum")
		kill "$rpid"
		wait "$rpid" 2>/dev/null
		rpid=
		awk -v r="$r" -v n="$n" -v s="$series" -v a0="$a0" -v a1="$a1" -v c0="$c0" -v c1="$c1" \
			-v t0="$t0" -v t1="$t1" -v rss="$rss" -v d="$dropped" -v sc="$scpu" -v lat="$lat" -v load="$load" 'BEGIN {
			dt = t1 - t0; rate = (a1 - a0) / dt; cores = (c1 - c0) / dt
			name = "Prometheus 2.42"
			if (r == "vm") name = "VictoriaMetrics 1.79"
			per = 0
			if (rate > 0) per = cores / (rate / 1e5)
			perm = 0
			if (s > 0) perm = rss / (s / 1e6)
			printf "| %s | %d | %d | %.0f | %s | %.2f | %.2f | %s | %.0f | %s | %s | %s |\n", name, n, s, rate, d, cores, per, rss, perm, sc, lat, load
		}'
		grep -v "t=[0-9]*s hosts" "$tmp/fleet-$r-$n.err" | sed 's/^/# /' >&2
	done
done
