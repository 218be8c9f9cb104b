#!/bin/bash
# remote_write_tls.sh - TLS with a CA made here by openssl:
#   - "direct": Prometheus 2.42 itself serves HTTPS (web config
#     tls_server_config); the plugin verifies it with CACert;
#   - "front": Prometheus cannot check bearer tokens, so a small python3
#     HTTPS front (tests/tools/rw_tls_front.py) checks the token, records
#     the request headers and forwards to Prometheus: samples arrive, and
#     the headers are exactly the spec's plus ours;
#   - "badtoken": the front answers 401: dropped and counted, never stored;
#   - "untrusted": no CACert, VerifyPeer on (the default): the TLS handshake
#     fails, nothing is sent, the error is logged.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rw_lib.sh"
rw_require_plugin
[ -x "$PROMETHEUS" ] || skip_all "prometheus is not installed"
OPENSSL=${OPENSSL:-$(command -v openssl)}
[ -x "$OPENSSL" ] || skip_all "openssl is not installed"
"$PYTHON3" -c 'import ssl, http.server' 2>/dev/null || skip_all "python3 with ssl is needed for the bearer-token front"

d="$rw_tmp/pki"
make_pki "$d"
check "openssl made a CA and a server certificate" [ -s "$d/server.crt" ]
printf 'tls_server_config:\n  cert_file: %s\n  key_file: %s\n' "$d/server.crt" "$d/server.key" >"$rw_tmp/web.yml"
start_prometheus prom --web.config.file="$rw_tmp/web.yml"
https="https://127.0.0.1:$prom_port"
check "prom serves HTTPS with our certificate" bash -c "for i in \$(seq 1 100); do curl -sf --cacert '$d/ca.crt' -o /dev/null '$https/-/ready' && exit 0; sleep 0.2; done; exit 1"
check "... and plain HTTP is refused" bash -c "! curl -sf -o /dev/null --max-time 3 'http://127.0.0.1:$prom_port/-/ready'"

echo "tok-$$-secret" >"$rw_tmp/token"
echo "wrong-token" >"$rw_tmp/badtoken"
front_port=$(free_port)
"$PYTHON3" "$top_srcdir/tests/tools/rw_tls_front.py" "$front_port" "$d/server.crt" "$d/server.key" \
	"$rw_tmp/token" "$https/api/v1/write" "$d/ca.crt" "$rw_tmp/front.log" 2>"$rw_tmp/front.err" &
rw_pids+=($!)
check "the bearer-token front is up" bash -c "for i in \$(seq 1 50); do curl -s --cacert '$d/ca.crt' -o /dev/null -X POST 'https://127.0.0.1:$front_port/' && exit 0; sleep 0.2; done; exit 1"
: >"$rw_tmp/front.log"

collectd_conf "$rw_tmp/c.conf" "$rw_tmp/c.log" "StaleOnShutdown false" \
	'<Endpoint "direct">' "URL \"$https/api/v1/write\"" "CACert \"$d/ca.crt\"" 'ExternalLabel "via" "direct"' 'BatchDeadline 0.5' '</Endpoint>' \
	'<Endpoint "front">' "URL \"https://127.0.0.1:$front_port/api/v1/write\"" "CACert \"$d/ca.crt\"" \
	"BearerTokenFile \"$rw_tmp/token\"" 'Header "X-Scope-OrgID: tenant-1"' 'ExternalLabel "via" "front"' 'BatchDeadline 0.5' '</Endpoint>' \
	'<Endpoint "badtoken">' "URL \"https://127.0.0.1:$front_port/api/v1/write\"" "CACert \"$d/ca.crt\"" \
	"BearerTokenFile \"$rw_tmp/badtoken\"" 'ExternalLabel "via" "badtoken"' 'BatchDeadline 0.5' '</Endpoint>' \
	'<Endpoint "untrusted">' "URL \"$https/api/v1/write\"" 'ExternalLabel "via" "untrusted"' 'BatchDeadline 0.5' 'Timeout 2' '</Endpoint>'
start_collectd "$rw_tmp/c.conf"
sleep 6
t=$(date +%s)
stop_collectd

q1() { curl -sfG --cacert "$d/ca.crt" "$https/api/v1/query" --data-urlencode "query=$1" --data-urlencode "time=$t" |
	"$PYTHON3" -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")'; }
check "direct (TLS, verified): samples stored" [ "$(q1 'rwtest_temperature_celsius{via="direct"}')" = 21.5 ]
check "front (TLS + bearer token): samples stored" [ "$(q1 'rwtest_temperature_celsius{via="front"}')" = 21.5 ]
check "badtoken: nothing stored" [ -z "$(q1 'count(rwtest_temperature_celsius{via="badtoken"})')" ]
check "untrusted: nothing stored" [ -z "$(q1 'count(rwtest_temperature_celsius{via="untrusted"})')" ]
check "badtoken: the 401 is logged with its body" log_has "$rw_tmp/c.log" 'endpoint "badtoken": HTTP 401, dropped .*bad or missing bearer token'
check "badtoken: counted as failed" awk -v v="$(q1 'max_over_time(remote_write_samples_failed_total{endpoint="badtoken",via="direct"}[5m])')" 'BEGIN { exit !(v > 0) }'
check "untrusted: the certificate problem is logged" log_has "$rw_tmp/c.log" 'endpoint "untrusted": no answer: .*(certificate|SSL)'
check "untrusted: retried, not dropped" awk -v v="$(q1 'max_over_time(remote_write_samples_retried_total{endpoint="untrusted",via="direct"}[5m])')" 'BEGIN { exit !(v > 0) }'
hdr() { # key value: every request from the front endpoint carried it
	"$PYTHON3" - "$rw_tmp/front.log" "$1" "$2" <<'P'
import json, sys
log, key, want = sys.argv[1:4]
reqs = [json.loads(l) for l in open(log) if l.strip()]
mine = [r for r in reqs if r.get("X-Scope-OrgID") == "tenant-1"]
sys.exit(0 if mine and all(r.get(key) == want for r in mine) else 1)
P
}
check "headers: Content-Encoding: snappy" hdr Content-Encoding snappy
check "headers: Content-Type: application/x-protobuf" hdr Content-Type application/x-protobuf
check "headers: X-Prometheus-Remote-Write-Version: 0.1.0" hdr X-Prometheus-Remote-Write-Version 0.1.0
check "headers: User-Agent: pciescope-remote-write/<version>" hdr User-Agent "pciescope-remote-write/$(sed -n 's/^AC_INIT(\[pciescope\], \[\([^]]*\)\].*/\1/p' "$top_srcdir/configure.ac")"
check "headers: Authorization: Bearer <token from the file>" hdr Authorization "Bearer tok-$$-secret"
done_testing
