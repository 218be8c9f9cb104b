#!/bin/bash
# deps.sh - install what pciescope needs to build, test and run on Debian 12
# (sourced by scripts/run and scripts/test; needs root for apt-get).
PCIESCOPE_DEPS=(
	build-essential autoconf automake libtool pkg-config   # build
	libpci-dev pci.ids libjson-c-dev                      # collectors, CLI
	collectd-core collectd-dev                            # the plugin and the daemon
	libcmocka-dev pciutils python3 clang-format           # tests and oracles
	clang libclang-rt-14-dev                              # fuzz.sh (libFuzzer), sanitize.sh
	libmicrohttpd12 libprotobuf-c1 curl                   # write_prometheus in tests
	libmicrohttpd-dev zlib1g-dev                          # openmetrics plugin, pciescope exporter
	libyajl2                                              # write_log JSON in scripts/run --json
	protobuf-c-compiler libprotobuf-c-dev                 # remote_write: protoc-c, protobuf-c
	libsnappy-dev libcurl4-openssl-dev                    # remote_write: snappy, libcurl
	prometheus victoria-metrics openssl                   # remote_write tests: real receivers, TLS;
	                                                      # scripts/run: VictoriaMetrics, vmalert
	prometheus-alertmanager python3-yaml                  # alert rules: end-to-end test
	netdata                                               # pcie.plugin tests: Debian's Netdata 1.37
	python3-matplotlib                                    # dashboards/render.py (docs/img, scripts/run)
	libncurses-dev tmux                                   # pciescope top; its test under tmux
	libarchive-dev                                        # pciescope snapshot (tar.gz)
)
# The prometheus package may start its own service on :9090; the tests never
# use it: they start their own receivers on free loopback ports in temp dirs.

pciescope_install_deps() {
	local missing=() p
	for p in "${PCIESCOPE_DEPS[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
	done
	if [ ${#missing[@]} -eq 0 ]; then
		echo "==> all build and test dependencies are installed"
		return 0
	fi
	echo "==> installing with apt-get: ${missing[*]}"
	if [ "$(id -u)" -ne 0 ]; then
		echo "pciescope: run as root to install packages (or install them yourself)" >&2
		return 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
		return 1
	# Only a netdata this step installed: an admin's own service stays.
	case " ${missing[*]} " in *" netdata "*) pciescope_stop_netdata_service ;; esac
}

# Debian's netdata package starts netdata.service on install (port 19999, a
# collector of the whole machine). The tests start their own Netdata on a
# free loopback port in a temp dir: stop and disable the system one.
pciescope_stop_netdata_service() {
	[ -e /usr/lib/systemd/system/netdata.service ] || [ -e /etc/init.d/netdata ] || return 0
	if [ -d /run/systemd/system ]; then
		systemctl disable --now netdata.service >/dev/null 2>&1
	else
		invoke-rc.d netdata stop >/dev/null 2>&1
		update-rc.d netdata disable >/dev/null 2>&1
	fi
	return 0
}

# Configure and build in _build/ (out of tree), reconfiguring when needed.
pciescope_build() {
	local top
	top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
	cd "$top" || return 1
	if [ ! -x configure ] || [ configure.ac -nt configure ] || [ Makefile.am -nt Makefile.in ]; then
		echo "==> autoreconf"
		autoreconf -fi >/dev/null || return 1
	fi
	mkdir -p _build && cd _build || return 1
	if [ ! -f Makefile ] || [ ../configure -nt Makefile ]; then
		echo "==> configure"
		../configure --enable-werror >configure.out 2>&1 || { cat configure.out; return 1; }
	fi
	echo "==> make"
	make -j"$(nproc)" >make.out 2>&1 || { cat make.out; return 1; }
}
