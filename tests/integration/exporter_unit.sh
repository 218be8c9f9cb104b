#!/bin/bash
# exporter_unit.sh - the shipped pciescope-exporter.service, as systemd
# judges it without running it: `systemd-analyze security --offline` scores
# its exposure at 2.0 or less ("OK"), it grants CAP_PERFMON and CAP_IPC_LOCK
# but not CAP_SYS_ADMIN, filters system calls, and listens on loopback.
. "$(dirname "$0")/lib.sh"

unit=$top_srcdir/packaging/systemd/pciescope-exporter.service
command -v systemd-analyze >/dev/null || skip_all "systemd-analyze is not installed"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# systemd-analyze names the unit after the file: a copy under its own name.
cp "$unit" "$tmp/pciescope-exporter.service"
(cd "$tmp" && systemd-analyze security --offline=yes pciescope-exporter.service) >"$tmp/out" 2>&1 ||
	skip_all "systemd-analyze security --offline is not supported here (systemd 250 or later): $(head -n 1 "$tmp/out")"
score=$(sed -n 's/.*Overall exposure level for pciescope-exporter.service: \([0-9.]*\) .*/\1/p' "$tmp/out")
grep '✗' "$tmp/out" | sed 's/  */ /g; s/^/# /'
check "systemd-analyze security: exposure ${score:-unknown} (2.0 or less)" \
	awk -v s="${score:-99}" 'BEGIN { exit !(s <= 2.0) }'
check "  ... and --threshold=20 agrees" \
	bash -c "cd '$tmp' && systemd-analyze security --offline=yes --threshold=20 pciescope-exporter.service >/dev/null 2>&1"
caps() { sed -n "s/^$1=//p" "$unit" | tr ' ' '\n' | sort | tr '\n' ' '; }
check "ambient capabilities: CAP_IPC_LOCK CAP_PERFMON only ($(caps AmbientCapabilities))" \
	test "$(caps AmbientCapabilities)" = "CAP_IPC_LOCK CAP_PERFMON "
check "bounding set: CAP_IPC_LOCK CAP_PERFMON only ($(caps CapabilityBoundingSet))" \
	test "$(caps CapabilityBoundingSet)" = "CAP_IPC_LOCK CAP_PERFMON "
check "system calls: @system-service and perf_event_open, native architecture only" \
	eval 'grep -q "^SystemCallFilter=@system-service perf_event_open$" "$unit" &&
	      grep -q "^SystemCallArchitectures=native$" "$unit"'
check "it listens on loopback unless /etc/default says otherwise" \
	grep -q '^Environment=PCIESCOPE_EXPORTER_ARGS=--listen=127.0.0.1:9943$' "$unit"
check "systemd-analyze verify finds nothing wrong but the absent binary and man page" \
	bash -c "systemd-analyze verify '$tmp/pciescope-exporter.service' 2>&1 |
		grep -v 'is not executable: No such file\|man pciescope(1)' | grep -q . && exit 1 || exit 0"
done_testing
