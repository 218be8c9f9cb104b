#!/bin/bash
# deb_install.sh DIR - install the Debian packages in DIR (scripts/package's
# _packages/) with apt on THIS machine, use them as a user would, upgrade over
# a changed conffile, purge, and check that nothing is left. TAP output; run
# by scripts/test after make check (root: it installs and purges packages).
# shellcheck shell=bash
set -u
dir=$(cd "${1:?usage: deb_install.sh _packages/}" && pwd)
arch=$(dpkg --print-architecture)

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
check() { local d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; fi; }
finish() { echo "1..$n"; [ "$failed" -eq 0 ]; }

if [ "$(id -u)" -ne 0 ]; then
	echo "1..0 # SKIP installing packages needs root"
	exit 0
fi
debs=("$dir"/pciescope_*_"$arch".deb "$dir"/collectd-pcie_*_"$arch".deb "$dir"/netdata-plugin-pcie_*_"$arch".deb)
for d in "${debs[@]}"; do
	[ -f "$d" ] || { not_ok "package $d was built"; finish; exit 1; }
done
version=$(dpkg-deb -f "${debs[0]}" Version)
apt=(apt-get -y -qq -o DPkg::Lock::Timeout=300 -o Dpkg::Use-Pty=0)
export DEBIAN_FRONTEND=noninteractive

tmp=$(mktemp -d)
pid=
ndconf=/etc/netdata/pcie.conf ndconf_written=
# /etc/netdata/pcie.conf as it was before the test wrote its own.
restore_ndconf() {
	[ -n "$ndconf_written" ] || return 0
	if [ -e "$tmp/pcie.conf.saved" ]; then
		mv -f "$tmp/pcie.conf.saved" $ndconf
	else
		rm -f $ndconf
	fi
	ndconf_written=
}
cleanup() {
	restore_ndconf
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$tmp"
	# Never leave our packages installed on the machine.
	dpkg-query -W pciescope collectd-pcie netdata-plugin-pcie >/dev/null 2>&1 &&
		"${apt[@]}" purge pciescope collectd-pcie netdata-plugin-pcie >/dev/null 2>&1
}
trap cleanup EXIT

# ---- install with apt (dependencies from the archive) ----
# (apt's output goes to a file; the ok/not ok line must not)
apt_check() { # apt_check DESCRIPTION LOG apt-get ARGS...
	local d=$1 log=$2
	shift 2
	if "${apt[@]}" "$@" >"$log" 2>&1; then ok "$d"; else not_ok "$d"; sed 's/^/# /' "$log"; fi
}
apt_check "apt-get install ${debs[*]##*/}" "$tmp/apt.log" install "${debs[@]}"
for p in pciescope collectd-pcie netdata-plugin-pcie; do
	check "$p $version is installed" test "$(dpkg-query -W -f='${Status} ${Version}' $p 2>/dev/null)" = \
		"install ok installed $version"
done

# ---- the command, its man pages, machines and completion ----
unset PCIESCOPE_MACHINE_DIR
out=$(pciescope --version 2>&1)
check "pciescope --version says ${version%-*} ($out)" grep -q -- "${version%-*}" <<<"$out"
check "man -w pciescope: $(man -w pciescope 2>&1)" test "$(man -w pciescope 2>/dev/null)" = /usr/share/man/man1/pciescope.1.gz
check "man -w 5 collectd-pcie" test "$(man -w 5 collectd-pcie 2>/dev/null)" = /usr/share/man/man5/collectd-pcie.5.gz
check "pciescope(1) renders without warnings" test -z "$(MANWIDTH=80 man --warnings pciescope 2>&1 >/dev/null)"
pciescope topology --simulate kunpeng930-2p >"$tmp/topo.out" 2>"$tmp/topo.err"
rc=$?
check "pciescope topology --simulate kunpeng930-2p (no --machine-dir): exit 0" test "$rc" -eq 0
check "  ... draws the simulated Root Ports with their links" grep -q 'GT/s' "$tmp/topo.out"
check "  ... says it is SIMULATED on stderr" grep -qi 'simulat' "$tmp/topo.err"
# snapshot is a program of its own in /usr/libexec/pciescope (exporter too:
# the unit below runs it), found by the installed pciescope.
check "pciescope-snapshot and pciescope-exporter are in /usr/libexec/pciescope" \
	test -x /usr/libexec/pciescope/pciescope-snapshot -a -x /usr/libexec/pciescope/pciescope-exporter
pciescope snapshot --simulate kunpeng930-2p -o "$tmp/snap.tar.gz" >"$tmp/snap.out" 2>&1
rc=$?
check "the installed pciescope snapshot runs it (rc $rc)" \
	eval '[ $rc -eq 0 ] && tar -tzf "$tmp/snap.tar.gz" | grep -q machine.json'
for m in kunpeng930-2p kunpeng930-misconfig spr-2s; do
	check "machine $m is in /usr/share/pciescope/machines" test -f "/usr/share/pciescope/machines/$m.json"
done
check "types file /usr/share/pciescope/pcie_types.db" grep -q '^link_speed_transfers_per_second ' /usr/share/pciescope/pcie_types.db
check "dashboards dir /usr/share/pciescope/dashboards is there" test -d /usr/share/pciescope/dashboards
check "the Grafana dashboards and the alert rules are installed" \
	eval 'ls /usr/share/pciescope/dashboards/grafana/*.json >/dev/null &&
	      test -f /usr/share/pciescope/dashboards/alerts/pcie.rules.yml &&
	      ! test -e /usr/share/pciescope/dashboards/node_modules'
if command -v promtool >/dev/null; then
	check "promtool accepts the installed rules" promtool check rules /usr/share/pciescope/dashboards/alerts/pcie.rules.yml
fi
complete_words() { # complete_words WORDS...: what bash completion offers for the last word
	bash -c '. /usr/share/bash-completion/bash_completion
		. /usr/share/bash-completion/completions/pciescope
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
		_pciescope pciescope "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
		printf "%s\n" "${COMPREPLY[@]}"' _ "$@"
}
check "bash completion: pciescope topo<TAB> -> topology" test "$(complete_words pciescope topo)" = topology
check "bash completion: pciescope to<TAB> -> topology, top" \
	test "$(complete_words pciescope to | sort | tr '\n' ' ')" = "top topology "
check "bash completion: top --int<TAB> -> --interval" test "$(complete_words pciescope top --int)" = --interval
check "bash completion: --simulate <TAB> lists the installed machines" \
	eval 'test -n "$(ls /usr/share/pciescope/machines/*.json 2>/dev/null)" &&
		test "$(complete_words pciescope topology --simulate "" | sort | tr "\n" " ")" = \
			"$(cd /usr/share/pciescope/machines && ls -- *.json | sed "s/\.json$//" | sort | tr "\n" " ")"'
check "bash completion: audit --pol<TAB> -> --policy" test "$(complete_words pciescope audit --pol)" = --policy

# ---- Debian's collectd, default plugin directory, the installed snippet ----
conf=/etc/collectd/collectd.conf.d/pcie.conf
check "snippet $conf is a conffile of collectd-pcie" grep -q "^ $conf " <(dpkg-query -W -f='${Conffiles}\n' collectd-pcie)
check "snippet writes nothing to hardware (no Tune line)" bash -c "! grep -qiE '^[[:space:]]*Tune[[:space:]]' $conf"
check "snippet leaves remote_write commented out" bash -c "! grep -qE '^[[:space:]]*LoadPlugin[[:space:]]+remote_write' $conf"
for so in pcie remote_write openmetrics; do
	check "/usr/lib/collectd/$so.so is installed" test -f /usr/lib/collectd/$so.so
done
collectd=/usr/sbin/collectd
cat >"$tmp/collectd.conf" <<CONF
Hostname "pkgtest"
BaseDir "$tmp"
PIDFile "$tmp/collectd.pid"
Interval 1
LoadPlugin logfile
<Plugin logfile>
  LogLevel info
  File "$tmp/collectd.log"
  PrintSeverity true
</Plugin>
LoadPlugin csv
<Plugin csv>
  DataDir "$tmp/csv"
</Plugin>
Include "$conf"
<Plugin pcie>
  Simulate "kunpeng930-2p"
</Plugin>
CONF
check "collectd -t accepts the installed snippet" "$collectd" -t -C "$tmp/collectd.conf"
"$collectd" -f -C "$tmp/collectd.conf" >"$tmp/collectd.out" 2>&1 &
pid=$!
values=
for _ in $(seq 1 40); do
	sleep 0.5
	values=$(find "$tmp/csv/pkgtest" -path '*/pcie-*' -type f 2>/dev/null | wc -l)
	ls "$tmp"/csv/pkgtest/pcie-*/link_speed_transfers_per_second* >/dev/null 2>&1 && [ "$values" -ge 10 ] && break
done
check "collectd loaded pcie from its default directory /usr/lib/collectd" grep -q ' /usr/lib/collectd/pcie.so$' "/proc/$pid/maps"
check "values of the simulated machine arrive ($values pcie csv files)" test "$values" -ge 10
speed=$(tail -q -n 1 "$tmp"/csv/pkgtest/pcie-*/link_speed_transfers_per_second* 2>/dev/null | cut -d, -f2 | sort -g | tail -n 1)
check "link speed values arrive (highest ${speed:-none} transfers/s)" awk -v v="${speed:-0}" 'BEGIN { exit !(v >= 2.5e9) }'

check "no ERROR in collectd's log" bash -c "! grep -q 'ERROR' '$tmp/collectd.log'"
grep 'ERROR' "$tmp/collectd.log" | head -n 5 | sed 's/^/# /'
kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
pid=
# remote_write.so loads (with an endpoint nobody listens on: only the load is checked).
sed 's/^#\(LoadPlugin remote_write\|<Plugin remote_write>\|  <Endpoint\|    URL\|  <\/Endpoint>\|<\/Plugin>$\)/\1/' "$conf" |
	sed 's#http://prometheus.example.net:9090#http://127.0.0.1:9#' >"$tmp/rw.conf"
sed -i "s#^Include .*#Include \"$tmp/rw.conf\"#" "$tmp/collectd.conf"
check "the commented remote_write example, uncommented, is a valid configuration" "$collectd" -t -C "$tmp/collectd.conf"
sed '/^#LoadPlugin openmetrics/,/^#<\/Plugin>/ s/^#//' "$conf" >"$tmp/om.conf"
sed -i "s#^Include .*#Include \"$tmp/om.conf\"#" "$tmp/collectd.conf"
check "the commented openmetrics example, uncommented, is a valid configuration" "$collectd" -t -C "$tmp/collectd.conf"

# ---- pciescope exporter: the unit is installed, disabled; the command serves ----
unit=/lib/systemd/system/pciescope-exporter.service
check "the exporter's unit is installed" test -f $unit
if systemd-analyze security --offline=yes $unit >"$tmp/security.txt" 2>&1; then
	check "systemd-analyze security: the installed unit's exposure is 2.0 or less ($(grep -o 'exposure level.*' "$tmp/security.txt"))" \
		systemd-analyze security --offline=yes --threshold=20 $unit
fi
if command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then
	check "... and not enabled" bash -c "! systemctl is-enabled --quiet pciescope-exporter"
fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
/usr/bin/pciescope exporter --simulate kunpeng930-2p --listen "127.0.0.1:$port" 2>"$tmp/exporter.err" &
epid=$!
for _ in $(seq 1 40); do
	sleep 0.25
	curl -sf "http://127.0.0.1:$port/metrics" 2>/dev/null | grep -q '^pcie_link_width_lanes' && break
done
check "the installed pciescope exporter serves the simulated machine" \
	bash -c "curl -sf http://127.0.0.1:$port/metrics | grep -q '^pcie_link_width_lanes{bdf='"
kill $epid 2>/dev/null && wait $epid 2>/dev/null

# ---- netdata-plugin-pcie: Netdata's conventions for a privileged plugin ----
nplugin=/usr/lib/netdata/plugins.d/pcie.plugin
check "pcie.plugin is root:netdata 0750 ($(stat -c '%U:%G %a' $nplugin 2>&1))" \
	test "$(stat -c '%U:%G %a' $nplugin 2>/dev/null)" = "root:netdata 750"
caps=$(getcap $nplugin 2>/dev/null)
check "pcie.plugin carries its file capabilities (${caps:-none})" \
	bash -c "grep -q cap_perfmon <<<'$caps' && grep -q cap_sys_admin <<<'$caps' && grep -q cap_ipc_lock <<<'$caps'"
dropin=/lib/systemd/system/netdata.service.d/pcie-plugin.conf
check "the netdata.service drop-in adds the three to the bounding set" \
	grep -q '^CapabilityBoundingSet=CAP_PERFMON CAP_SYS_ADMIN CAP_IPC_LOCK$' $dropin
check "the alarms are in Netdata's stock health.d" grep -q 'template: pcie_link_downtrained' /usr/lib/netdata/conf.d/health.d/pcie.conf
check "the stock pcie.conf is in Netdata's stock config dir" test -f /usr/lib/netdata/conf.d/pcie.conf
mkdir -p "$tmp/nd" && chmod 755 "$tmp" "$tmp/nd"
echo 'TraceClock 0' >"$tmp/nd/pcie.conf"
# As Netdata runs it: user netdata, the interval as argument, a config dir in
# the environment. With its file capabilities the plugin ignores that dir (a
# bad option there) and reads Netdata's fixed /etc/netdata/pcie.conf, which
# this test replaces for the run and puts back.
mkdir -p /etc/netdata
[ -e $ndconf ] && cp -p $ndconf "$tmp/pcie.conf.saved"
ndconf_written=yes
echo 'Simulate "kunpeng930-2p"' >$ndconf
runuser -u netdata -- env NETDATA_USER_CONFIG_DIR="$tmp/nd" timeout 4 $nplugin 1 >"$tmp/nd.out" 2>"$tmp/nd.err"
restore_ndconf
check "  ... it reads /etc/netdata/pcie.conf and says it ignores NETDATA_USER_CONFIG_DIR" \
	grep -q "NOTICE: running with raised privileges: NETDATA_USER_CONFIG_DIR is ignored, the configuration is $ndconf" "$tmp/nd.err"
charts=$(grep -c '^CHART pcie\.' "$tmp/nd.out")
check "user netdata runs the installed plugin: $charts charts of the simulated machine (machines found without MachineDirectory)" \
	test "$charts" -gt 10
check "  ... and it says SIMULATED on stderr" grep -q 'SIMULATED machine "kunpeng930-2p"' "$tmp/nd.err"
check "a user outside the netdata group cannot run it" \
	bash -c "! runuser -u nobody -- $nplugin 1 </dev/null >/dev/null 2>&1"

# ---- upgrade: a changed conffile survives ----
echo "# local change $$" >>"$conf"
up=$tmp/up
for d in "${debs[@]}"; do
	p=$(dpkg-deb -f "$d" Package)
	rm -rf "$up/$p" && mkdir -p "$up" && dpkg-deb -R "$d" "$up/$p"
	sed -i "s/^Version: .*/Version: $version+up1/; s/(= $version)/(= $version+up1)/" "$up/$p/DEBIAN/control"
	dpkg-deb -b "$up/$p" "$up/${p}_up1.deb" >/dev/null
done
apt_check "apt-get install the upgrade ($version+up1)" "$tmp/apt2.log" install "$up"/pciescope_up1.deb "$up"/collectd-pcie_up1.deb "$up"/netdata-plugin-pcie_up1.deb
check "collectd-pcie is now $version+up1" test "$(dpkg-query -W -f='${Version}' collectd-pcie)" = "$version+up1"
check "the local change to $conf survived the upgrade" grep -q "^# local change $$\$" "$conf"
check "pcie.plugin is still root:netdata 0750 after the upgrade" \
	test "$(stat -c '%U:%G %a' $nplugin 2>/dev/null)" = "root:netdata 750"

# ---- purge: nothing left ----
apt_check "apt-get purge pciescope collectd-pcie netdata-plugin-pcie" "$tmp/apt3.log" purge pciescope collectd-pcie netdata-plugin-pcie
check "dpkg knows none of the packages any more" bash -c '! dpkg-query -W pciescope collectd-pcie netdata-plugin-pcie 2>/dev/null | grep -q .'
left=
for f in /usr/bin/pciescope /usr/lib/collectd/pcie.so /usr/lib/collectd/remote_write.so "$conf" \
	/usr/lib/collectd/openmetrics.so $unit \
	/usr/share/pciescope /usr/share/man/man1/pciescope.1.gz /usr/share/man/man5/collectd-pcie.5.gz \
	/usr/share/bash-completion/completions/pciescope /usr/share/doc/pciescope /usr/share/doc/collectd-pcie \
	/var/spool/collectd/remote_write $nplugin /usr/lib/netdata/conf.d/pcie.conf \
	/usr/lib/netdata/conf.d/health.d/pcie.conf $dropin /usr/share/doc/netdata-plugin-pcie; do
	[ -e "$f" ] && left+=" $f"
done
check "purge left nothing behind${left:+:$left}" test -z "$left"
finish
