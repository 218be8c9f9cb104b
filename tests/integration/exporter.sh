#!/bin/bash
# exporter.sh - `pciescope exporter`: the engine without collectd, scraped
# by a real Prometheus 2.42. On the simulated Kunpeng 930 every stored
# series is one the engine emits (the same count the series budget
# counts), promtool is clean on the page at every Detail level and on the
# simulated Sapphire Rapids; this VM's own (live) PCI functions are served
# without a simulated label; HTTPS with basic authentication works for
# curl and for Prometheus, over TLS 1.2 and 1.3 only; a password is
# compared over its whole length (a NUL byte does not cut it) and failed
# logins are logged, rate-limited, escaped, without the password; bad
# command lines, a taken port and a password file that is a FIFO or a
# directory are refused with a clear error (one others may read is warned
# about); SIGTERM ends it at once.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rw_lib.sh"
[ -x "$PROMETHEUS" ] || skip_all "prometheus is not installed"
command -v promtool >/dev/null || skip_all "promtool is not installed (prometheus package)"
command -v curl >/dev/null || skip_all "curl is not installed"
OPENSSL=${OPENSSL:-$(command -v openssl)}
machines="$top_srcdir/sim/machines"
trace=(--option TraceDuration=0.2 --option TracePeriod=2 --option MaxConcurrentTraces=2)

# start_exporter NAME ARGS...: sets ${NAME}_port, ${NAME}_pid, ${NAME}_url
# (http) and logs to $rw_tmp/NAME.err.
start_exporter() {
	local name=$1 port
	shift
	port=$(free_port)
	"$PCIESCOPE" exporter --listen "127.0.0.1:$port" "$@" 2>"$rw_tmp/$name.err" &
	local pid=$!
	rw_pids+=("$pid")
	printf -v "${name}_port" %s "$port"
	printf -v "${name}_pid" %s "$pid"
	printf -v "${name}_url" %s "http://127.0.0.1:$port"
}
# page URL [curl args]: the text page, once the engine has published.
page() {
	local url=$1 i
	shift
	for i in $(seq 1 60); do
		curl -sf "$@" "$url/metrics" >"$rw_tmp/page" && grep -q '^pcie_' "$rw_tmp/page" && {
			cat "$rw_tmp/page"
			return 0
		}
		sleep 0.25
	done
	return 1
}
promtool_clean() { # FILE
	promtool check metrics <"$1" >"$1.promtool" 2>&1 || {
		head -5 "$1.promtool" | sed 's/^/# /'
		return 1
	}
}

# ---- Prometheus scrapes the simulated Kunpeng 930 ----
start_exporter kp --simulate kunpeng930-2p --machine-dir "$machines" "${trace[@]}"
PROM_CONFIG="global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: pcie
    static_configs:
      - targets: ['127.0.0.1:$kp_port']" start_prometheus prom
t0=$(date +%s)
check "the exporter serves the simulated machine" eval 'page "$kp_url" >"$rw_tmp/kp.txt"'
check "it says so on stderr and in every series" eval \
	'grep -q "SIMULATED machine \"kunpeng930-2p\"" "$rw_tmp/kp.err" &&
	 ! grep "^pcie_" "$rw_tmp/kp.txt" | grep -vq "simulated=\"kunpeng930-2p\""'
check "promtool check metrics: clean (Detail default, $(grep -c '^pcie_' "$rw_tmp/kp.txt") series)" \
	promtool_clean "$rw_tmp/kp.txt"
check "no instance label by default (Prometheus adds the target's)" eval '! grep -q "instance=" "$rw_tmp/kp.txt"'
check "Prometheus is up" wait_http "$prom_url/-/ready" 30
sleep 12
t=$(date +%s)
series "$prom_url" '{__name__=~"pcie_.+"}' "$t0" "$((t + 1))" |
	sed -E 's/(^|,)(instance|job)=[^,]*//g; s/^,//' | sort -u >"$rw_tmp/prom.series"
"$top_builddir/tests/tools/golden_stream" --series-list "$machines/kunpeng930-2p.json" - 40 \
	TraceDuration=0.2 TracePeriod=2 MaxConcurrentTraces=2 | sort -u >"$rw_tmp/engine.series"
n=$(wc -l <"$rw_tmp/prom.series")
m=$(wc -l <"$rw_tmp/engine.series")
extra=$(comm -23 <(series_shape "$rw_tmp/prom.series") <(series_shape "$rw_tmp/engine.series") | head -5)
check "Prometheus stores $n pcie_* series, each one the engine emits (a PTT window's top requesters: any function)" \
	eval '[ "$n" -gt 1000 ] && [ -z "$extra" ]'
[ -n "$extra" ] && echo "$extra" | sed 's/^/# not emitted by the engine: /'
stranger=$(comm -23 <(series_requesters "$rw_tmp/prom.series") <(machine_bdfs kunpeng930-2p) | head -5)
check "every PTT top requester is a function of the machine" [ -z "$stranger" ]
[ -n "$stranger" ] && echo "$stranger" | sed 's/^/# not a function of kunpeng930-2p: /'
# Over 40 s the engine emits a few series that 12 s cannot show (AER
# types that count later): within 5 % of the budget's count.
known=$(comm -12 "$rw_tmp/prom.series" "$rw_tmp/engine.series" | wc -l)
check "and nearly all of the $m the series budget counts for 40 s ($known)" \
	awk -v k="$known" -v m="$m" 'BEGIN { exit !(k >= 0.95 * m && k <= m) }'
v=$(qv "$prom_url" 'pcie_port_bandwidth_bytes_per_second{port="0000:00:00.0",direction="rx",tlp="mwr"}' "$t")
check "port bandwidth with its labels ($v B/s)" awk -v v="${v:-0}" 'BEGIN { exit !(v > 1e9) }'
hq=$(qv "$prom_url" 'histogram_quantile(0.5, pcie_ptt_completion_latency_seconds_bucket{pmu="hisi_ptt0_0",completion="last"})' "$t")
check "the PTT histogram answers histogram_quantile ($hq s)" awk -v v="${hq:-0}" 'BEGIN { exit !(v > 0 && v < 0.001) }'
kill -TERM "$kp_pid"
t1=$(date +%s.%N)
wait "$kp_pid"
rc=$?
t1=$(awk -v a="$t1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
check "SIGTERM: exit status 0 after $t1 s, pages counted" eval \
	'[ "$rc" = 0 ] && awk -v t="$t1" "BEGIN { exit !(t < 5) }" && grep -q "SIGTERM: stopping" "$rw_tmp/kp.err" &&
	 grep -Eq "served [1-9][0-9]* pages" "$rw_tmp/kp.err"'

# ---- every Detail level, Sapphire Rapids, this VM ----
for detail in basic full; do
	start_exporter kp_$detail --simulate kunpeng930-2p --machine-dir "$machines" --detail $detail "${trace[@]}"
	eval "url=\$kp_${detail}_url pid=\$kp_${detail}_pid"
	sleep 3
	page "$url" >"$rw_tmp/kp_$detail.txt"
	check "promtool clean at Detail $detail ($(grep -c '^pcie_' "$rw_tmp/kp_$detail.txt") series)" \
		promtool_clean "$rw_tmp/kp_$detail.txt"
	kill "$pid"
	wait "$pid"
done
start_exporter spr --simulate spr-2s --machine-dir "$machines"
# The IIO sockets publish from their first tick, which a loaded machine may
# reach after the other sources: wait for it (15 s at most).
for i in $(seq 1 60); do
	page "$spr_url" >"$rw_tmp/spr.txt"
	grep -q "^pcie_port_bandwidth_bytes_per_second{.*stack=" "$rw_tmp/spr.txt" && break
	sleep 0.25
done
check "spr-2s: IIO bandwidth served, promtool clean" eval \
	'grep -q "^pcie_port_bandwidth_bytes_per_second{.*stack=" "$rw_tmp/spr.txt" && promtool_clean "$rw_tmp/spr.txt"'
kill "$spr_pid"
wait "$spr_pid"
start_exporter live --instance "$(hostname)"
page "$live_url" >"$rw_tmp/live.txt"
check "this VM (live, no PMU): its PCI functions served, nothing marked simulated" eval \
	'grep -q "^pcie_functions{instance=\"$(hostname)\"} [1-9]" "$rw_tmp/live.txt" && ! grep -q simulated= "$rw_tmp/live.txt"'
check "this VM: promtool clean" promtool_clean "$rw_tmp/live.txt"
kill "$live_pid"
wait "$live_pid"
# As the systemd unit runs it: a user of its own with CAP_PERFMON and
# CAP_IPC_LOCK only (no CAP_SYS_ADMIN): the functions are served all the
# same, and a notice says what configuration space it could not read.
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null &&
	setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all,+perfmon,+ipc_lock \
		--ambient-caps=-all,+perfmon,+ipc_lock --bounding-set=-all,+perfmon,+ipc_lock true 2>/dev/null; then
	port=$(free_port)
	setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all,+perfmon,+ipc_lock \
		--ambient-caps=-all,+perfmon,+ipc_lock --bounding-set=-all,+perfmon,+ipc_lock \
		"$PCIESCOPE" exporter --listen "127.0.0.1:$port" 2>"$rw_tmp/unit.err" &
	rw_pids+=($!)
	unit_pid=$!
	page "http://127.0.0.1:$port" >"$rw_tmp/unit.txt"
	kill "$unit_pid"
	wait "$unit_pid"
	check "with the unit's capabilities only (CAP_PERFMON, CAP_IPC_LOCK): this VM's PCI functions served" \
		grep -q '^pcie_functions [1-9]' "$rw_tmp/unit.txt"
	check "  ... no error, and a notice says reading more configuration space needs CAP_SYS_ADMIN" \
		eval '! grep -qi "error" "$rw_tmp/unit.err" && grep -q "needs CAP_SYS_ADMIN" "$rw_tmp/unit.err"'
else
	ok "# SKIP the unit's capabilities: needs root and a setpriv that sets ambient capabilities"
fi

# ---- HTTPS and basic authentication ----
if [ -x "$OPENSSL" ]; then
	d="$rw_tmp/pki"
	make_pki "$d"
	printf 's3cret pass\n' >"$rw_tmp/pw"
	chmod 644 "$rw_tmp/pw"
	start_exporter tls --simulate kunpeng930-misconfig --machine-dir "$machines" \
		--tls-cert "$d/server.crt" --tls-key "$d/server.key" \
		--basic-auth-user scraper --basic-auth-password-file "$rw_tmp/pw"
	https="https://127.0.0.1:$tls_port"
	check "HTTPS with the right credentials: the page" eval \
		'page "$https" --cacert "$d/ca.crt" -u "scraper:s3cret pass" >"$rw_tmp/tls.txt" && promtool_clean "$rw_tmp/tls.txt"'
	check "a password file others may read: warned about, with its mode" \
		grep -q "warning: --basic-auth-password-file: permissions 0644 for \"$rw_tmp/pw\" are too open" "$rw_tmp/tls.err"
	code() { curl -s -o /dev/null -w '%{http_code}' --cacert "$d/ca.crt" "$@"; }
	# The first failure is logged (the user escaped, never the password);
	# the next ones within 10 s are only counted.
	check "a user with control characters: 401" [ "$(code -u $'ev\x1b[31mil:s3cret pass' "$https/metrics")" = 401 ]
	for _ in $(seq 1 20); do code -u "scraper:wrong-pass-$_" "$https/metrics" >/dev/null; done
	sleep 0.5
	check "the failure logged with the client's address and the user, escaped" \
		grep -q 'authentication failed from 127.0.0.1: user "ev\\x1b\[31mil"' "$rw_tmp/tls.err"
	check "20 more failures within 10 s: no more lines, no password in the log ($(grep -c 'authentication failed' "$rw_tmp/tls.err") line)" \
		eval '[ "$(grep -c "authentication failed" "$rw_tmp/tls.err")" = 1 ] && ! grep -q "wrong-pass\|s3cret" "$rw_tmp/tls.err"'
	# base64 of "scraper:s3cret pass" with a NUL and "x" after the password
	nul=$(printf 'scraper:s3cret pass\0x' | base64)
	check "the right password followed by a NUL byte and more: 401" \
		[ "$(code -H "Authorization: Basic $nul" "$https/metrics")" = 401 ]
	check "the right user with a wrong password of the same length: 401" [ "$(code -u "scraper:s3cret pasS" "$https/metrics")" = 401 ]
	check "a wrong user with the right password: 401" [ "$(code -u "scrapeR:s3cret pass" "$https/metrics")" = 401 ]
	# TLS 1.0 and 1.1 refused by the server: the client is told to allow
	# them (security level 0), so only the server can say no.
	# The protocol of the session (TLS 1.3 prints no session before the
	# first read: then the version on "New, TLSv1.3, Cipher is ...").
	tls_version() { # OPENSSL-FLAG: the protocol negotiated, or "none"
		local p
		p=$(timeout 10 "$OPENSSL" s_client -connect "127.0.0.1:$tls_port" "$1" -cipher 'DEFAULT@SECLEVEL=0' \
			-CAfile "$d/ca.crt" </dev/null 2>/dev/null | awk '/^New, \(NONE\)/ { failed = 1 }
			/^New, TLSv/ { sub(/,$/, "", $2); cipher_v = $2 } /^ *Protocol *:/ { p = $3 }
			END { if (!failed) print (p != "" ? p : cipher_v) }')
		echo "${p:-none}"
	}
	for v in tls1 tls1_1; do
		got=$(tls_version -$v)
		check "TLS: -$v refused by the server (negotiated: $got)" [ "$got" = none ]
	done
	got=$(tls_version -tls1_2)
	check "TLS: 1.2 negotiated ($got)" [ "$got" = TLSv1.2 ]
	got=$(tls_version -tls1_3)
	check "TLS: 1.3 negotiated ($got)" [ "$got" = TLSv1.3 ]
	check "no credentials: 401 with WWW-Authenticate" eval \
		'[ "$(code "$https/metrics")" = 401 ] && curl -s -D - -o /dev/null --cacert "$d/ca.crt" "$https/metrics" | grep -qi "^WWW-Authenticate: Basic"'
	check "a wrong password: 401" [ "$(code -u "scraper:s3cret" "$https/metrics")" = 401 ]
	check "plain HTTP to the HTTPS port: no page" eval '! curl -sf --max-time 5 -o /dev/null "http://127.0.0.1:$tls_port/metrics"'
	PROM_CONFIG="global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: pcie-tls
    scheme: https
    tls_config:
      ca_file: $d/ca.crt
    basic_auth:
      username: scraper
      password: 's3cret pass'
    static_configs:
      - targets: ['127.0.0.1:$tls_port']" start_prometheus prom_tls
	wait_http "$prom_tls_url/-/ready" 30
	up_tls() {
		local i
		for i in $(seq 1 60); do
			[ "$(qv "$prom_tls_url" 'up{job="pcie-tls"}')" = 1 ] &&
				[ -n "$(qv "$prom_tls_url" 'pcie_audit_finding')" ] && return 0
			sleep 0.5
		done
		return 1
	}
	check "Prometheus scrapes it over HTTPS with basic auth" up_tls
	kill "$tls_pid"
	wait "$tls_pid"
else
	ok "# SKIP HTTPS: openssl is not installed"
fi

# ---- where it listens: loopback unless told, a warning when open to all ----
# The default port may be taken by another program: either way stderr names
# the address it tried.
timeout 6 "$PCIESCOPE" exporter --simulate kunpeng930-2p --machine-dir "$machines" \
	>/dev/null 2>"$rw_tmp/default.err"
check "without --listen it serves on 127.0.0.1 port 9943 only" \
	grep -Eq 'serving /metrics on 127\.0\.0\.1 port 9943$|cannot serve on 127\.0\.0\.1 port 9943' "$rw_tmp/default.err"
check "  ... and says no warning about it" eval '! grep -q warning "$rw_tmp/default.err"'
open_port=$(free_port)
timeout 6 "$PCIESCOPE" exporter --listen ":$open_port" --simulate kunpeng930-2p --machine-dir "$machines" \
	>/dev/null 2>"$rw_tmp/open.err"
check "--listen :PORT without authentication: a warning says who can read it" \
	grep -q "warning: serving on every address port $open_port without authentication" "$rw_tmp/open.err"
(umask 077 && printf 'secret\n' >"$rw_tmp/pw-private")
timeout 6 "$PCIESCOPE" exporter --listen ":$open_port" --basic-auth-user u --basic-auth-password-file "$rw_tmp/pw-private" \
	--simulate kunpeng930-2p --machine-dir "$machines" >/dev/null 2>"$rw_tmp/auth.err"
check "  ... no warning with basic authentication" \
	eval 'grep -q "serving /metrics on \* port $open_port" "$rw_tmp/auth.err" && ! grep -q warning "$rw_tmp/auth.err"'

# ---- the server's limits from the command line ----
start_exporter lim --simulate kunpeng930-2p --machine-dir "$machines" \
	--max-connections-per-client 2 --timeout 2 --max-connections 50
page "$lim_url" >/dev/null
"$PYTHON3" "$top_srcdir/tests/tools/slow_clients.py" "$lim_port" --count 5 --source 127.0.0.40 \
	--every 0.5 --for 6 >"$rw_tmp/lim.out"
check "--max-connections-per-client 2 --timeout 2: 2 drip clients let in and dropped at 2 s, 3 closed at once: $(cat "$rw_tmp/lim.out")" \
	awk '{ exit !($4 == 3 && $6 == 2 && $10 < 1 && $12 >= 1.8 && $14 <= 2.6) }' "$rw_tmp/lim.out"
kill "$lim_pid"
wait "$lim_pid"

# ---- refused at once, with the reason ----
refused() { # EXPECTED-REGEX ARGS...
	local want=$1 rc
	shift
	timeout 20 "$PCIESCOPE" exporter "$@" >/dev/null 2>"$rw_tmp/refused.err"
	rc=$?
	[ "$rc" = 3 ] && grep -Eq -- "$want" "$rw_tmp/refused.err" || {
		echo "# exit $rc: $(head -c 300 "$rw_tmp/refused.err")"
		return 1
	}
}
check "--listen without a port" refused '--listen 127.0.0.1: want ADDRESS:PORT' --listen 127.0.0.1
check "--listen with port 0" refused 'port 1..65535' --listen :0
check "--listen on an address not this host's" refused 'cannot serve on 192.0.2.1 port' \
	--listen 192.0.2.1:9943 --simulate kunpeng930-2p --machine-dir "$machines"
busy=$(free_port)
"$PYTHON3" -c 'import socket, sys, time; s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(); time.sleep(30)' "$busy" &
rw_pids+=($!)
for _ in $(seq 1 50); do (: </dev/tcp/127.0.0.1/"$busy") 2>/dev/null && break; sleep 0.2; done
check "a port that is taken" refused "cannot serve on 127.0.0.1 port $busy" \
	--listen "127.0.0.1:$busy" --simulate kunpeng930-2p --machine-dir "$machines"
check "a certificate file that is not there" refused 'TLS certificate "/nonexistent.pem": No such file' \
	--listen 127.0.0.1:1 --tls-cert /nonexistent.pem --tls-key /nonexistent.pem
check "a certificate without its key" refused 'TLS needs both a certificate and a key' \
	--listen "127.0.0.1:$(free_port)" --tls-cert /etc/hostname
check "a password file without a user" refused '--basic-auth-user and --basic-auth-password-file go together' \
	--basic-auth-password-file /etc/hostname
mkfifo "$rw_tmp/pw.fifo"
check "a password file that is a FIFO: refused at once, named" refused \
	"--basic-auth-password-file \"$rw_tmp/pw.fifo\": is a FIFO, not a regular file" \
	--listen "127.0.0.1:$(free_port)" --basic-auth-user u --basic-auth-password-file "$rw_tmp/pw.fifo"
check "a password file that is a directory: named as one" refused \
	"--basic-auth-password-file \"$rw_tmp\": is a directory, not a regular file" \
	--listen "127.0.0.1:$(free_port)" --basic-auth-user u --basic-auth-password-file "$rw_tmp"
check "--timeout 0: refused with the range" refused '--timeout 0: a whole number from 1 to 3600' --timeout 0
check "--max-connections-per-client x: refused with the range" refused \
	'--max-connections-per-client x: a whole number from 1 to 10000' --max-connections-per-client x
check "an engine option out of range" refused '--option TraceClock 0: ' --option TraceClock=0
check "an unknown engine option" refused '--option NoSuchOption' --option NoSuchOption=1
done_testing
