# lib.sh - TAP helpers for the shell tests (sourced). Each test file prints
# "ok N - ..." / "not ok N - ..." lines and a final plan; automake's
# tap-driver.sh counts every line, so the totals are real test results.
# shellcheck shell=bash

tap_n=0
tap_failed=0

ok() {
	tap_n=$((tap_n + 1))
	echo "ok $tap_n - $*"
}

not_ok() {
	tap_n=$((tap_n + 1))
	tap_failed=$((tap_failed + 1))
	echo "not ok $tap_n - $*"
}

# check DESCRIPTION COMMAND... : ok if the command succeeds.
check() {
	local desc=$1
	shift
	if "$@"; then ok "$desc"; else not_ok "$desc"; fi
}

# A test file that cannot run here at all (exit status 77 under TAP).
skip_all() {
	echo "1..0 # SKIP $*"
	exit 0
}

done_testing() {
	echo "1..$tap_n"
	[ "$tap_failed" -eq 0 ]
}

: "${top_srcdir:?run through make check}"
: "${top_builddir:?run through make check}"
PCIESCOPE="$top_builddir/cli/pciescope"
FIXTURES="$top_srcdir/tests/fixtures"
PYTHON3=${PYTHON3:-python3}

# ---- a real collectd with the built pcie plugin (the simulation tests) ----
# sim_collectd_setup: skips unless collectd and the plugin exist; sets $tmp
# (removed at exit, with any collectd left in $pid) and copies the plugins.
sim_collectd_setup() {
	COLLECTD=${COLLECTD:-$(command -v collectd || echo /usr/sbin/collectd)}
	[ -x "$COLLECTD" ] || skip_all "collectd is not installed"
	SO="$top_builddir/plugin/.libs/pcie.so"
	[ -f "$SO" ] || skip_all "the plugin was not built (collectd-dev missing at configure time)"
	tmp=$(mktemp -d)
	pid=
	trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
	mkdir -p "$tmp/plugins"
	cp "$SO" /usr/lib/collectd/logfile.so /usr/lib/collectd/csv.so /usr/lib/collectd/write_log.so "$tmp/plugins/"
}

# sim_collectd_conf CONF CSVDIR LOG HOST LINES...: Interval 1, logfile (info),
# csv (raw counters), write_log (JSON, with the meta data) and the pcie
# plugin with LINES as its block.
sim_collectd_conf() {
	local conf=$1 csv=$2 log=$3 host=$4 line
	shift 4
	{
		cat <<CONF
Hostname "$host"
BaseDir "$tmp"
PIDFile "$tmp/collectd.pid"
PluginDir "$tmp/plugins"
Interval 1
LoadPlugin logfile
<Plugin logfile>
  LogLevel info
  File "$log"
  PrintSeverity true
</Plugin>
LoadPlugin csv
<Plugin csv>
  DataDir "$csv"
  StoreRates false
</Plugin>
LoadPlugin write_log
<Plugin write_log>
  Format JSON
</Plugin>
LoadPlugin pcie
<Plugin pcie>
CONF
		for line in "$@"; do echo "  $line"; done
		echo "</Plugin>"
	} >"$conf"
}
