#!/bin/bash
# remote_write_spoolfail.sh - spool failure drills on small tmpfs file
# systems (root: they are mounted in a mount namespace of this script's own,
# gone when it ends), counting every sample at a real receiver
# (VictoriaMetrics):
#  1. three endpoints in one collectd: a spool on a file system full at
#     start, a spool directory on a read-only file system, a good spool. The
#     plugin starts, each broken spool is logged once and counted, and every
#     endpoint delivers every sample (the broken ones without a spool).
#  2. the spool file system fills up during an outage: ENOSPC, logged once
#     (rate-limited), samples wait in memory; once the receiver is back every
#     sample arrives, in order, nothing dropped.
if [ "$(id -u)" = 0 ] && [ -z "${RW_IN_MOUNT_NS:-}" ] && command -v unshare >/dev/null &&
	unshare --mount --propagation private true 2>/dev/null; then
	RW_IN_MOUNT_NS=1 exec unshare --mount --propagation private bash "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rw_lib.sh"
rw_require_plugin
[ -x "$VICTORIA_METRICS" ] || skip_all "victoria-metrics is not installed"
[ -n "${RW_IN_MOUNT_NS:-}" ] || skip_all "needs root and unshare(1) to mount small tmpfs file systems privately"

# small_fs DIR SIZE [ro]
small_fs() {
	mkdir -p "$1" && mount -t tmpfs -o "size=$2${3:+,$3}" tmpfs "$1"
}

# export_seq SELECTOR: "n gaps dups" of rwtest_sequence_total{SELECTOR}.
export_seq() {
	curl -sfG "$vm_url/api/v1/export" --data-urlencode "match[]=rwtest_sequence_total{$1}" |
		"$PYTHON3" -c '
import json, sys
vals = []
for line in sys.stdin:
    vals += [int(v) for v in json.loads(line)["values"]]
gaps = sum(1 for i, v in enumerate(vals) if v != i + 1)
print(len(vals), gaps, len(vals) - len(set(vals)))
'
}

start_vm vm
check "vm: receiver is up" wait_http "$vm_url/health" 30

# ---- drill 1: full at start, read-only, good: side by side ---------------
small_fs "$rw_tmp/full" 64k
mkdir -p "$rw_tmp/full/spool"
dd if=/dev/zero of="$rw_tmp/full/filler" bs=4k 2>/dev/null
small_fs "$rw_tmp/ro" 64k ro
collectd_conf "$rw_tmp/a.conf" "$rw_tmp/a.log" "StaleOnShutdown false" \
	"<Endpoint \"full\">" "URL \"$vm_url/api/v1/write\"" "BatchDeadline 1" \
	"ExternalLabel \"ep\" \"full\"" "SpoolDir \"$rw_tmp/full/spool\"" "</Endpoint>" \
	"<Endpoint \"ro\">" "URL \"$vm_url/api/v1/write\"" "BatchDeadline 1" \
	"ExternalLabel \"ep\" \"ro\"" "SpoolDir \"$rw_tmp/ro/spool\"" "</Endpoint>" \
	"<Endpoint \"ok\">" "URL \"$vm_url/api/v1/write\"" "BatchDeadline 1" \
	"ExternalLabel \"ep\" \"ok\"" "SpoolDir \"$rw_tmp/spool-ok\"" "</Endpoint>"
start_collectd "$rw_tmp/a.conf"
sleep 12
t=$(date +%s)
stop_collectd
curl -s "$vm_url/internal/force_flush" >/dev/null
sleep 2
check "the plugin started all three endpoints" log_has "$rw_tmp/a.log" 'remote_write plugin: 3 endpoint\(s\) started'
reads=$(sed -n 's/.*rw_testsrc: \([0-9]*\) reads.*/\1/p' "$rw_tmp/a.log")
for e in full ro ok; do
	read -r n gaps dups <<<"$(export_seq "ep=\"$e\"")"
	check "endpoint $e: every read arrived ($n of $reads), in order ($gaps out of place), once ($dups twice)" \
		[ "$n" = "$reads" -a "$gaps" = 0 -a "$dups" = 0 ]
done
n_full=$(grep -c 'endpoint "full": spool .*No space left on device' "$rw_tmp/a.log")
check "full at start: ENOSPC logged, at most twice in 12 s ($n_full)" [ "$n_full" -ge 1 -a "$n_full" -le 2 ]
n_ro=$(grep -c '\[error\].*endpoint "ro": spool .*Read-only file system' "$rw_tmp/a.log")
check "read-only: logged once ($n_ro)" [ "$n_ro" = 1 ]
check "the good endpoint logged no error" bash -c "! grep -q 'endpoint \"ok\".*error\|\[error\].*endpoint \"ok\"' '$rw_tmp/a.log'"
check "no cursor.tmp left on the full file system" [ ! -e "$rw_tmp/full/spool/cursor.tmp" ]
errs=$(qv "$vm_url" 'max_over_time(remote_write_spool_errors_total{endpoint="ro",ep="ok"}[10m])' "$t")
check "self-metric: the read-only spool's errors are counted ($errs)" awk -v v="$errs" 'BEGIN { exit !(v >= 1) }'
errs=$(qv "$vm_url" 'max_over_time(remote_write_spool_errors_total{endpoint="ok",ep="ok"}[10m])' "$t")
check "self-metric: the good spool has none ($errs)" [ "$errs" = 0 ]

# ---- drill 2: the spool fills up during an outage ------------------------
small_fs "$rw_tmp/small" 16k
collectd_conf "$rw_tmp/b.conf" "$rw_tmp/b.log" "StaleOnShutdown false" \
	"<Endpoint \"small\">" "URL \"$vm_url/api/v1/write\"" "BatchDeadline 1" \
	"MinBackoff 0.2" "MaxBackoff 1" "Timeout 3" \
	"ExternalLabel \"ep\" \"small\"" "SpoolDir \"$rw_tmp/small/spool\"" "</Endpoint>"
kill "$vm_pid" && wait "$vm_pid" 2>/dev/null
start_collectd "$rw_tmp/b.conf"
sleep 30
full=$(df --output=avail -k "$rw_tmp/small" | tail -1 | tr -d ' ')
start_vm vm "$vm_port"
check "vm: receiver is up again" wait_http "$vm_url/health" 30
sleep 10
t=$(date +%s)
stop_collectd
curl -s "$vm_url/internal/force_flush" >/dev/null
sleep 2
check "the spool file system filled up (${full} KiB left)" [ "$full" -le 4 ]
n_err=$(grep -c '\[error\].*endpoint "small": spool' "$rw_tmp/b.log")
check "ENOSPC logged at most twice in 30 s of refused batches ($n_err)" [ "$n_err" -ge 1 -a "$n_err" -le 2 ]
check "... as ENOSPC, not EIO" log_has "$rw_tmp/b.log" 'endpoint "small": spool .*No space left on device'
reads=$(sed -n 's/.*rw_testsrc: \([0-9]*\) reads.*/\1/p' "$rw_tmp/b.log")
read -r n gaps dups <<<"$(export_seq 'ep="small"')"
check "every read arrived ($n of $reads), in order ($gaps out of place), once ($dups twice)" \
	[ "$n" = "$reads" -a "$gaps" = 0 -a "$dups" = 0 ]
dropped=$(qv "$vm_url" 'sum(max_over_time(remote_write_samples_dropped_total{endpoint="small"}[10m]))' "$t")
check "self-metric: nothing dropped ($dropped)" [ "$dropped" = 0 ]
done_testing
