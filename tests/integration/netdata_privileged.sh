#!/bin/bash
# netdata_privileged.sh - pcie.plugin with raised privileges, as the package
# installs it (file capabilities, run by a user that is not root): the
# configuration directories in its environment are ignored, Netdata's fixed
# ones are read, and a NOTICE says so; without the capabilities the same
# environment is honoured.
. "$(dirname "$0")/lib.sh"

PLUGIN="$top_builddir/netdata/pcie.plugin"
[ -x "$PLUGIN" ] || skip_all "pcie.plugin was not built"
[ "$(id -u)" -eq 0 ] || skip_all "needs root (setcap, and to run as nobody)"
command -v setcap >/dev/null && command -v setpriv >/dev/null ||
	skip_all "needs setcap (libcap2-bin) and setpriv (util-linux)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/conf"
cp "$PLUGIN" "$tmp/bin/pcie.plugin"
# A configuration only the environment points at: a bad option that would
# disable the plugin, and a name the error would carry.
echo 'TraceClock 0' >"$tmp/conf/pcie.conf"
chmod -R a+rX "$tmp"
as_nobody() {
	NETDATA_USER_CONFIG_DIR=$tmp/conf timeout 3 setpriv --reuid=nobody --regid=nogroup \
		--clear-groups "$@" "$tmp/bin/pcie.plugin" 1 >"$tmp/out" 2>"$tmp/err"
}

# Without capabilities the environment is trusted: its file is read.
as_nobody --inh-caps=-all
check "without capabilities: the environment's pcie.conf is read (its bad option disables)" \
	eval 'grep -q "^DISABLE" "$tmp/out" && grep -q "$tmp/conf/pcie.conf:1: option TraceClock 0" "$tmp/err"'

if ! setcap cap_perfmon+ep "$tmp/bin/pcie.plugin" 2>"$tmp/setcap.err"; then
	ok "# SKIP file capabilities: setcap failed here ($(head -n 1 "$tmp/setcap.err"))"
	done_testing
	exit
fi
as_nobody
sed 's/^/# /' "$tmp/err" | head -n 5
check "with a file capability: the environment's pcie.conf is not read" \
	eval '! grep -q "$tmp/conf" "$tmp/err" "$tmp/out"'
check "  ... and a NOTICE names the variable ignored and the file read instead" \
	grep -Eq 'NOTICE: running with raised privileges: NETDATA_USER_CONFIG_DIR is ignored, the configuration is (/etc/netdata|/usr/lib/netdata/conf.d)/pcie.conf$' "$tmp/err"
done_testing
