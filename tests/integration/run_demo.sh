#!/bin/bash
# run_demo.sh - `bash scripts/run` shows the product. On the simulated
# kunpeng930-misconfig (a downtrained NIC link, an MPS mismatch behind a
# switch), with this build (--build-dir: no apt, no make) and 5 s
# intervals, the live view must say the machine is SIMULATED, print status
# lines with the values sent growing, render the five dashboards into
# non-empty PNGs whose paths it prints, and list the firing alerts the
# machine should raise with their runbook links; when --duration ends it,
# and when Ctrl-C (SIGINT to its process group) stops it, no collectd,
# VictoriaMetrics or vmalert it started may be left, nor its temp folder.
# `--json` still prints the values as write_log JSON.
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/scripts/local_vm.sh"
RUN="$top_srcdir/scripts/run"
[ -x /usr/sbin/collectd ] || skip_all "collectd is not installed (/usr/sbin/collectd)"
[ -f "$top_builddir/plugin/.libs/pcie.so" ] || skip_all "the pcie plugin was not built"
[ -f "$top_builddir/plugin/.libs/remote_write.so" ] || skip_all "the remote_write plugin was not built"
[ -x "$VICTORIA_METRICS" ] || skip_all "victoria-metrics is not installed"
[ -x "$VMALERT" ] || skip_all "vmalert (victoria-metrics) is not installed"
"${MATPLOTLIB_PYTHON:-/usr/bin/python3}" -c 'import matplotlib' 2>/dev/null ||
	skip_all "python3-matplotlib is not installed (for ${MATPLOTLIB_PYTHON:-/usr/bin/python3})"

tmp=$(mktemp -d)
run_pid=
trap '[ -n "$run_pid" ] && kill -TERM -- "-$run_pid" 2>/dev/null; rm -rf "$tmp"' EXIT
export PCIESCOPE_INTERVAL=5

# processes_with STRING: the processes with STRING on their command line
# (from /proc: procps may not be installed), as "pid command" lines.
processes_with() {
	local f cmd
	for f in /proc/[0-9]*/cmdline; do
		cmd=$( { tr '\0' ' ' <"$f"; } 2>/dev/null)
		[[ $cmd == *"$1"* ]] && echo "${f//[!0-9]/} $cmd"
	done
	return 0
}

# left_behind OUT: the run's temp folder (from its output) still exists, or
# a process still has it on its command line (collectd -C, VictoriaMetrics
# -storageDataPath, vmalert -rule).
left_behind() {
	local dir procs
	dir=$(sed -nE 's|.*(/tmp/pciescope-run\.[A-Za-z0-9]+).*|\1|p' "$1" | head -n 1)
	[ -n "$dir" ] || { echo "# no temp folder in the output"; return 0; }
	procs=$(processes_with "$dir")
	if [ -e "$dir" ] || [ -n "$procs" ]; then
		echo "# left behind: $dir $(tr '\n' ';' <<<"$procs")"
		return 0
	fi
	return 1
}

# ---- 1. the live view, ended by --duration ----
out="$tmp/live.out"
bash "$RUN" --build-dir "$top_builddir" --simulate kunpeng930-misconfig --duration 40 \
	--pictures "$tmp/pictures" >"$out" 2>&1
rc=$?
check "scripts/run --duration 40 exits 0 ($rc)" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || tail -n 30 "$out" | sed 's/^/# /'
check "it says the machine is SIMULATED" grep -q '^    SIMULATED machine kunpeng930-misconfig:' "$out"
status_re='^[0-9]{2}:[0-9]{2}:[0-9]{2}  values sent [0-9,]+ \(\+[0-9,]+\)  alerts firing [0-9]+'
n=$(grep -cE "$status_re" "$out")
check "one status line per interval ($n)" [ "$n" -ge 4 ]
last=$(grep -E "$status_re" "$out" | tail -n 1)
sent=$(sed -nE 's/.*values sent ([0-9,]+).*/\1/p' <<<"$last" | tr -d ,)
check "the values sent grow to thousands ($last)" [ "${sent:-0}" -ge 1000 ]
check "the last status line names the firing alerts" grep -qE 'alerts firing [1-9][0-9]*: PCIe' <<<"$last"
pngs=$(sed -n '/^==> the dashboards, rendered/,/^==> alerts firing/p' "$out" | grep -E '^    /.*\.png$' | sed 's/^ *//')
check "five dashboard PNG paths printed ($(echo $pngs | wc -w))" [ "$(echo $pngs | wc -w)" -eq 5 ]
for p in $pngs; do
	check "$(basename "$p") is a non-empty PNG in --pictures" \
		eval "[ -s '$p' ] && [ \"\$(head -c 8 '$p' | od -An -tx1 | tr -d ' ')\" = 89504e470d0a1a0a ] &&
		      [ \"\$(dirname '$p')\" = '$tmp/pictures' ]"
done
alerts=$(sed -n '/^==> alerts firing now/,/^$/p' "$out")
for a in PCIeLinkDowntrained PCIeMPSMisconfigured; do
	anchor=$(tr 'A-Z' 'a-z' <<<"$a")
	check "$a fires, with its runbook link" \
		eval "grep -q '^  $a (' <<<\"\$alerts\" &&
		      grep -q 'runbook: https://.*/docs/alerts.md#$anchor\$' <<<\"\$alerts\""
done
check "it says it stopped by itself" grep -q '^==> stopped after 40 s' "$out"
check "after --duration: no collectd, VictoriaMetrics or vmalert of it left, no temp folder" \
	eval "! left_behind '$out'"

# ---- 2. --json: the values as write_log JSON, as before ----
out="$tmp/json.out"
PCIESCOPE_INTERVAL=1 bash "$RUN" --build-dir "$top_builddir" --simulate kunpeng930-misconfig --json \
	--duration 4 >"$out" 2>&1
rc=$?
check "scripts/run --json --duration 4 exits 0 ($rc)" [ "$rc" -eq 0 ]
n=$(grep -c '"plugin":"pcie"' "$out")
check "--json prints the pcie values as write_log JSON ($n lines)" [ "$n" -ge 1 ]
check "--json starts no VictoriaMetrics" eval "! grep -q VictoriaMetrics '$out'"
check "after --json: no collectd left, no temp folder" eval "! left_behind '$out'"

# ---- 3. Ctrl-C: SIGINT to its process group, as a terminal sends it ----
out="$tmp/int.out"
# Its own process group (set -m), with SIGINT at its default even when
# this test was started with it ignored (a background job of a script
# is): a shell cannot trap a signal ignored when it started.
set -m
python3 -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execvp(sys.argv[1], sys.argv[1:])' \
	bash "$RUN" --build-dir "$top_builddir" --simulate kunpeng930-misconfig --duration 300 \
	--pictures "$tmp/pictures2" >"$out" 2>&1 &
run_pid=$!
set +m
for _ in $(seq 1 120); do
	grep -qE "$status_re" "$out" && break
	sleep 0.5
done
check "a status line within 60 s" grep -qE "$status_re" "$out"
kill -INT -- "-$run_pid"
wait "$run_pid"
rc=$?
run_pid=
check "Ctrl-C: it exits 130 ($rc)" [ "$rc" -eq 130 ]
[ "$rc" -eq 130 ] || tail -n 20 "$out" | sed 's/^/# /'
check "Ctrl-C: it says what it stops" grep -q '^==> stopping: collectd, VictoriaMetrics and vmalert' "$out"
check "after Ctrl-C: no collectd, VictoriaMetrics or vmalert of it left, no temp folder" \
	eval "! left_behind '$out'"
done_testing
