#!/bin/bash
# openmetrics.sh - the collectd `openmetrics` write plugin end to end: a real
# collectd with the pcie plugin on the simulated Kunpeng 930, the test
# source, remote_write into one Prometheus 2.42 and the openmetrics page
# scraped by another. The scraped series are the series remote_write
# delivers; the page passes promtool in the text format and is served as
# OpenMetrics to a scraper that asks; HELP/UNIT reach Prometheus' metadata;
# a value list collectd reports missing leaves the page; bad requests, idle
# half-requests and 100 concurrent scrapes neither block collection nor
# each other; a client that drips its request a byte at a time is dropped
# at Timeout, floods from one address or past MaxConnections are closed at
# once while a real scrape is answered within 1 s; framing headers a proxy
# could read otherwise are answered 400 at once; a password file that is a
# directory is named.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rw_lib.sh"
rw_require_plugin
[ -x "$PROMETHEUS" ] || skip_all "prometheus is not installed"
command -v promtool >/dev/null || skip_all "promtool is not installed (prometheus package)"
for so in pcie openmetrics; do
	[ -f "$top_builddir/plugin/.libs/$so.so" ] || skip_all "the $so plugin was not built"
	cp "$top_builddir/plugin/.libs/$so.so" "$rw_tmp/plugins/"
done

om_port=$(free_port)
om_url="http://127.0.0.1:$om_port"
start_prometheus rw
PROM_CONFIG="global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: om
    honor_labels: true
    static_configs:
      - targets: ['127.0.0.1:$om_port']" start_prometheus scrape
check "both Prometheus servers are up" eval 'wait_http "$rw_url/-/ready" 30 && wait_http "$scrape_url/-/ready" 30'
# Prometheus applies its targets a few seconds after start: wait for that,
# so that it scrapes from the page's first second on.
has_target() {
	local i
	for i in $(seq 1 60); do
		curl -s "$scrape_url/api/v1/targets" | grep -q '"scrapeUrl"' && return 0
		sleep 0.25
	done
	return 1
}
check "the scraper has its target" has_target

pcie_collectd_conf "$rw_tmp/c" rwtest-host kunpeng930-2p -e prom "$rw_url"
cat >>"$rw_tmp/c/c.conf" <<CONF
LoadPlugin rw_testsrc
<Plugin rw_testsrc>
  Vanish 6
</Plugin>
LoadPlugin openmetrics
<Plugin openmetrics>
  Listen "127.0.0.1"
  Port "$om_port"
  Timeout 3
</Plugin>
CONF
t0=$(date +%s)
start_collectd "$rw_tmp/c/c.conf"
check "the page answers" wait_http "$om_url/metrics" 30
on_page() { # ERE: until a line of the page matches (10 s)
	local i
	for i in $(seq 1 40); do
		curl -s "$om_url/metrics" | grep -Eq "$1" && return 0
		sleep 0.25
	done
	return 1
}
check "a value list the test source still sends is on the page" on_page '^rwtest_vanishing\{'

# ---- the page itself ----
curl -s -D "$rw_tmp/h.txt" "$om_url/metrics" >"$rw_tmp/page.txt"
check "text format by default (Content-Type text/plain; version=0.0.4)" \
	grep -qi '^Content-Type: text/plain; version=0.0.4' "$rw_tmp/h.txt"
# Our families (pcie_*, remote_write_*) pass promtool's parser and linter;
# the whole page parses, and what the linter says of it is about other
# plugins' names (collectd's own naming, e.g. collectd_rwtest_gauge).
grep -E '^(# (HELP|TYPE) )?(pcie|remote_write)_' "$rw_tmp/page.txt" >"$rw_tmp/ours.txt"
promtool check metrics <"$rw_tmp/ours.txt" >"$rw_tmp/promtool.out" 2>&1
rc=$?
check "promtool check metrics: our $(grep -c '^[a-z]' "$rw_tmp/ours.txt") series clean" [ "$rc" = 0 ]
[ "$rc" = 0 ] || head -20 "$rw_tmp/promtool.out" | sed 's/^/# /'
promtool check metrics <"$rw_tmp/page.txt" >"$rw_tmp/promtool.all" 2>&1
rc=$?
check "promtool check metrics: the whole page parses (lint only on other plugins' names)" eval \
	'[ "$rc" = 0 ] || { [ "$rc" = 3 ] && ! grep -Eq "^(pcie|remote_write)_|error" "$rw_tmp/promtool.all"; }'
check "every pcie family has HELP" eval '[ -z "$(grep -o "^pcie_[a-z_]*" "$rw_tmp/page.txt" | sed -E "s/_(bucket|sum|count)$//" | sort -u | while read -r f; do grep -q "^# HELP $f " "$rw_tmp/page.txt" || echo "$f"; done)" ]'
check "labels kept: port bandwidth has pmu, port, direction, tlp" \
	on_page '^pcie_port_bandwidth_bytes_per_second\{direction="rx",instance="rwtest-host",pmu="hisi_pcie0_core0",port="0000:00:00.0",simulated="kunpeng930-2p",tlp="mwr"\} [0-9.e+]+$'
check "another plugin's values are there too, named as write_prometheus names them" \
	grep -q '^collectd_rwtest_gauge{rwtest="answer",instance="rwtest-host"} 42$\|^collectd_rwtest_gauge{instance="rwtest-host",rwtest="answer"} 42$' "$rw_tmp/page.txt"
curl -s -D "$rw_tmp/h.om" -H 'Accept: application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5' \
	"$om_url/metrics" >"$rw_tmp/page.om"
check "OpenMetrics when asked (Content-Type application/openmetrics-text)" \
	grep -qi '^Content-Type: application/openmetrics-text; version=1.0.0' "$rw_tmp/h.om"
check "OpenMetrics: counter family without _total, UNIT lines, # EOF last" eval \
	'grep -q "^# TYPE pcie_link_changes counter$" "$rw_tmp/page.om" &&
	 grep -q "^# UNIT pcie_port_bandwidth_bytes_per_second bytes_per_second$" "$rw_tmp/page.om" &&
	 [ "$(tail -n 1 "$rw_tmp/page.om")" = "# EOF" ]'
curl -s -D "$rw_tmp/h.gz" -H 'Accept-Encoding: gzip' "$om_url/metrics" | gzip -dc >"$rw_tmp/page.gz.txt"
check "gzip when asked (Content-Encoding: gzip): the page, compressed, promtool clean" eval \
	'grep -qi "^Content-Encoding: gzip" "$rw_tmp/h.gz" && grep -q "^pcie_link_width_lanes{" "$rw_tmp/page.gz.txt" &&
	 grep -E "^(# (HELP|TYPE) )?(pcie|remote_write)_" "$rw_tmp/page.gz.txt" | promtool check metrics'
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
check "HEAD /metrics: 200" [ "$(code -I "$om_url/metrics")" = 200 ]
check "unknown path: 404" [ "$(code "$om_url/metrics/x")" = 404 ]
check "POST: 405 with Allow: GET, HEAD" eval \
	'[ "$(code -X POST -d x "$om_url/metrics")" = 405 ] && curl -s -D - -o /dev/null -X PUT "$om_url/metrics" | grep -qi "^Allow: GET, HEAD"'
check "/ links to /metrics" eval 'curl -s "$om_url/" | grep -q "href=\"/metrics\""'

# ---- clients that misbehave ----
# 20 connections that send half a request and wait: the server drops them
# after Timeout (3 s); meanwhile 100 concurrent scrapes (10 from each of 10
# addresses: under MaxConnectionsPerClient) are answered and collection
# goes on.
"$PYTHON3" - "$om_port" >"$rw_tmp/slow.out" 2>&1 <<'PY' &
import socket, sys, time
socks = []
for i in range(20):
    # 10 each from two addresses: under MaxConnectionsPerClient (16)
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])),
                                 source_address=("127.0.0.%d" % (20 + i % 2), 0))
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")  # never finished
    socks.append(s)
start = time.time()
closed = 0
for s in socks:
    s.settimeout(max(0.1, 15 - (time.time() - start)))
    try:
        closed += s.recv(1) == b""
    except OSError:
        closed += 1
print("closed %d of 20 after %.1f s" % (closed, time.time() - start))
PY
slow_pid=$!
sleep 0.5
seq_before=$(curl -s "$om_url/metrics" | awk '/^rwtest_sequence_total/ {print $2}')
t=$(date +%s.%N)
ok_count=$(seq 1 100 | xargs -P 100 -I{} sh -c 'curl -s -o /dev/null -w "%{http_code}\n" --max-time 10 --interface "127.0.0.$(({} % 10 + 1))" "$0/metrics"' "$om_url" | grep -c '^200$')
t=$(awk -v a="$t" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
check "100 concurrent scrapes beside 20 idle half-requests: $ok_count answered 200 in $t s" \
	[ "$ok_count" = 100 ]
sleep 2
seq_after=$(curl -s "$om_url/metrics" | awk '/^rwtest_sequence_total/ {print $2}')
check "collection went on meanwhile (sequence $seq_before -> $seq_after)" \
	awk -v a="${seq_before:-0}" -v b="${seq_after:-0}" 'BEGIN { exit !(b >= a + 2) }'
wait "$slow_pid"
check "idle half-requests dropped by the server: $(cat "$rw_tmp/slow.out")" \
	grep -q '^closed 20 of 20 after [0-9]\.' "$rw_tmp/slow.out"

# ---- slow clients and floods (Timeout 3, MaxConnections 128, 16 a client) ----
slow="$top_srcdir/tests/tools/slow_clients.py"
# A client that sends one byte of its request every second is never idle
# for Timeout: it is dropped at Timeout from its connect all the same.
"$PYTHON3" "$slow" "$om_port" --count 1 --source 127.0.0.30 --every 1 --for 10 >"$rw_tmp/drip1.out"
check "a drip client (a byte a second) is dropped at Timeout: $(cat "$rw_tmp/drip1.out")" \
	awk '{ exit !($6 == 1 && $8 == 0 && $14 >= 2.8 && $14 <= 3.6) }' "$rw_tmp/drip1.out"
# scrapes_during SECONDS: a scrape from 127.0.0.1 every 0.5 s, each with 1 s
# to answer; prints "N of M answered, slowest T s".
scrapes_during() {
	local end=$(($(date +%s) + $1)) n=0 good=0 slowest=0 out
	while [ "$(date +%s)" -lt "$end" ]; do
		out=$(curl -s -o /dev/null -w '%{http_code} %{time_total}' --max-time 1 "$om_url/metrics")
		n=$((n + 1))
		[ "${out% *}" = 200 ] && good=$((good + 1))
		slowest=$(awk -v a="$slowest" -v b="${out#* }" 'BEGIN { print (b > a ? b : a) }')
		sleep 0.5
	done
	echo "$good of $n answered, slowest $slowest s"
}
# 200 drip clients from one address: 16 let in (dropped at Timeout), 184
# closed at once; a real scrape beside them answers within 1 s.
"$PYTHON3" "$slow" "$om_port" --count 200 --source 127.0.0.31 --every 2 --for 8 >"$rw_tmp/drip200.out" &
drip_pid=$!
sleep 0.5
during=$(scrapes_during 4)
wait "$drip_pid"
check "200 drip clients from one address: 16 let in and dropped at Timeout, the rest closed at once: $(cat "$rw_tmp/drip200.out")" \
	awk '{ exit !($2 == 200 && $4 == 184 && $6 == 16 && $8 == 0 && $10 < 1 && $14 <= 3.6 && $16 == 0) }' "$rw_tmp/drip200.out"
check "meanwhile every scrape from another address answered 200 within 1 s: $during" \
	eval '[[ "$during" =~ ^([0-9]+)\ of\ ([0-9]+)\  ]] && [ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ] && [ "${BASH_REMATCH[2]}" -ge 5 ]'
# 500 idle connects from 50 addresses (10 each): MaxConnections (128) let
# in, the rest closed at once (not left waiting in the kernel's backlog);
# a scrape while it is full is refused at once too, and answered again
# once Timeout has dropped the idle ones.
srcs=$(seq -f '127.0.1.%g' 10 59 | paste -sd,)
"$PYTHON3" "$slow" "$om_port" --count 500 --source "$srcs" --every 0 --for 8 >"$rw_tmp/idle500.out" &
idle_pid=$!
sleep 1
full=$(curl -s -o /dev/null -w '%{http_code} %{time_total}' --max-time 5 "$om_url/metrics")
sleep 3
after=$(curl -s -o /dev/null -w '%{http_code} %{time_total}' --max-time 1 "$om_url/metrics")
wait "$idle_pid"
check "500 idle connects: at most 128 let in and dropped at Timeout, the rest closed within 1 s: $(cat "$rw_tmp/idle500.out")" \
	awk '{ exit !($2 == 500 && $4 >= 372 && $4 + $6 == 500 && $8 == 0 && $10 < 1 && $14 <= 3.6) }' "$rw_tmp/idle500.out"
check "a scrape while all 128 are taken is refused at once ($full), one after Timeout answered ($after)" \
	eval '[ "${full% *}" = 000 ] && awk -v t="${full#* }" "BEGIN { exit !(t < 1) }" && [ "${after% *}" = 200 ]'

# ---- framing headers an HTTP proxy could read otherwise: 400 at once ----
raw() { # REQUEST (printf escapes): "STATUS-LINE SECONDS" of the answer
	"$PYTHON3" - "$om_port" "$1" <<'PY'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.settimeout(10)
t = time.monotonic()
s.sendall(sys.argv[2].encode().decode("unicode_escape").encode("latin1"))
data = b""
try:
    while b"\r\n" not in data:
        d = s.recv(4096)
        if not d:
            break
        data += d
except OSError:
    pass
print("%s %.2f" % (data.split(b"\r\n")[0].decode("latin1").replace(" ", "_") or "none", time.monotonic() - t))
PY
}
for hdrs in 'Content-Length: 0\r\nContent-Length: 0' 'Content-Length: 0\r\nContent-Length: 5' \
	'Transfer-Encoding: chunked\r\nContent-Length: 5' 'Transfer-Encoding: gzip' \
	'Transfer-Encoding: gzip, chunked' 'Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked' \
	'Transfer-Encoding : gzip' 'Content-Length\t: 5'; do
	got=$(raw "GET /metrics HTTP/1.1\r\nHost: x\r\n$hdrs\r\n\r\n")
	check "400 at once for \"$hdrs\" ($got)" \
		eval '[ "${got% *}" = HTTP/1.1_400_Bad_Request ] && awk -v t="${got#* }" "BEGIN { exit !(t < 1) }"'
done
got=$(raw 'GET /metrics HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n')
check "one chunked Transfer-Encoding is fine ($got)" [ "${got% *}" = HTTP/1.1_200_OK ]
got=$(raw 'GET /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n')
check "HTTP/1.1 without Host: 400 ($got)" [ "${got% *}" = HTTP/1.1_400_Bad_Request ]

# ---- what Prometheus stores ----
sleep 4
curl -s "$om_url/metrics" >"$rw_tmp/late.txt"
check "a value list collectd reported missing left the page" eval '! grep -q "^rwtest_vanishing{" "$rw_tmp/late.txt"'
t_cut=$(date +%s)
sleep 3
t=$(date +%s)
stop_collectd
check "collectd log: no errors" eval '! grep -q "\[error\]" "$rw_tmp/c/c.log"'
grep "\[error\]" "$rw_tmp/c/c.log" | head -5 | sed 's/^/# /'
check "collectd log: pages served counted at shutdown" grep -Eq 'openmetrics plugin: served [1-9][0-9]* pages; refused [1-9][0-9]* unknown paths, [1-9][0-9]* other methods' "$rw_tmp/c/c.log"
# Every series remote_write delivered up to a few seconds before the end was
# scraped, and nothing was scraped that remote_write did not deliver (the
# scraper's own job label and synthetic series aside; the test source's
# backdated series and the remote_write plugin's self-metrics go both ways).
strip='s/(^|,)job=om//; s/^,//'
series "$rw_url" '{__name__=~".+"}' "$t0" "$t_cut" | sed -E "$strip" | sort -u >"$rw_tmp/rw.early"
series "$rw_url" '{__name__=~".+"}' "$t0" "$((t + 1))" | sed -E "$strip" | sort -u >"$rw_tmp/rw.all"
series "$scrape_url" '{job="om"}' "$t0" "$((t + 1))" | sed -E "$strip" |
	grep -Ev '__name__=(up|scrape_[a-z_]+)(,|$)' | sort -u >"$rw_tmp/scrape.all"
n_rw=$(wc -l <"$rw_tmp/rw.early")
n_sc=$(wc -l <"$rw_tmp/scrape.all")
missing=$(comm -23 "$rw_tmp/rw.early" "$rw_tmp/scrape.all")
extra=$(comm -13 "$rw_tmp/rw.all" "$rw_tmp/scrape.all")
check "Prometheus scraped $n_sc series; each of the $n_rw remote_write delivered is among them" \
	eval '[ "$n_rw" -gt 1000 ] && [ -z "$missing" ]'
[ -n "$missing" ] && echo "$missing" | head -5 | sed 's/^/# not scraped: /'
check "and it scraped none that remote_write did not deliver" [ -z "$extra" ]
[ -n "$extra" ] && echo "$extra" | head -5 | sed 's/^/# not delivered: /'
# ---- bad configurations: init fails with one ERROR naming option and value ----
n=0
om_try() { # EXPECT-REGEX DESCRIPTION <Plugin openmetrics> lines...
	local want=$1 desc=$2 line
	shift 2
	n=$((n + 1))
	{
		printf 'BaseDir "%s"\nPluginDir "%s"\nLoadPlugin logfile\n' "$rw_tmp" "$rw_tmp/plugins"
		printf '<Plugin logfile>\n  File "%s"\n  PrintSeverity true\n</Plugin>\n' "$rw_tmp/bad$n.log"
		printf 'LoadPlugin openmetrics\n<Plugin openmetrics>\n'
		for line in "$@"; do echo "  $line"; done
		printf '</Plugin>\n'
	} >"$rw_tmp/bad$n.conf"
	timeout 30 "$COLLECTD" -T -C "$rw_tmp/bad$n.conf" >/dev/null 2>&1
	if grep -Eq "$want" "$rw_tmp/bad$n.log"; then ok "$desc"; else
		not_ok "$desc"
		sed 's/^/# /' "$rw_tmp/bad$n.log" | grep -v plugin_load | head -5
	fi
}
om_try '\[error\] openmetrics plugin: option Port 70000: want a whole number in 1\.\.65535' \
	"config: a port out of range" 'Port 70000'
om_try '\[error\] openmetrics plugin: option Port "http": not a number' "config: a port that is not a number" 'Port "http"'
om_try '\[error\] openmetrics plugin: option Colour "blue": unknown option' "config: an unknown option" 'Colour "blue"'
om_try 'TLSCertFile and TLSKeyFile go together' "config: a certificate without its key" 'TLSCertFile "/etc/hostname"'
mkdir -p "$rw_tmp/pwdir"
om_try "\\[error\\] openmetrics plugin: option BasicAuthPasswordFile \"$rw_tmp/pwdir\": is a directory, not a regular file" \
	"config: a password file that is a directory is named as one" 'BasicAuthUser "u"' "BasicAuthPasswordFile \"$rw_tmp/pwdir\""
mkfifo "$rw_tmp/pwfifo"
om_try "\\[error\\] openmetrics plugin: option BasicAuthPasswordFile \"$rw_tmp/pwfifo\": is a FIFO" \
	"config: a password file that is a FIFO is refused, not waited on" 'BasicAuthUser "u"' "BasicAuthPasswordFile \"$rw_tmp/pwfifo\""
printf 's3cret\n' >"$rw_tmp/pw644"
chmod 644 "$rw_tmp/pw644"
om_try "\\[warning\\] openmetrics plugin: option BasicAuthPasswordFile: permissions 0644 for \"$rw_tmp/pw644\" are too open" \
	"config: a password file others may read is warned about" "Port \"$(free_port)\"" 'BasicAuthUser "u"' "BasicAuthPasswordFile \"$rw_tmp/pw644\""
om_try '\[error\] openmetrics plugin: option BasicAuthPassword \(hidden\): want a string' \
	"config: a bad password is not shown" 'BasicAuthPassword 12345'
om_try "\\[error\\] openmetrics plugin: not started: TLS certificate \"$rw_tmp/none.pem\": No such file" \
	"init: a missing certificate file named" "Port \"$(free_port)\"" "TLSCertFile \"$rw_tmp/none.pem\"" \
	"TLSKeyFile \"$rw_tmp/none.pem\""
om_try '\[error\] openmetrics plugin: not started: TLS certificate "/etc/hostname": not PEM' \
	"init: a certificate that is not PEM" "Port \"$(free_port)\"" 'TLSCertFile "/etc/hostname"' 'TLSKeyFile "/etc/hostname"'
md=$(curl -s "$scrape_url/api/v1/metadata?metric=pcie_port_bandwidth_bytes_per_second")
check "HELP and UNIT reach Prometheus' metadata" eval \
	'echo "$md" | grep -q "\"unit\":\"bytes_per_second\"" && echo "$md" | grep -q "\"help\":\"Bandwidth through the Root Port"'
done_testing
