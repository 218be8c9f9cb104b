#!/bin/bash
# remote_write_config.sh - bad configurations fail the plugin's init with
# one clear ERROR naming the option and the value (collectd -T: parse,
# init, one read, exit); a good one starts.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rw_lib.sh"
rw_require_plugin

case_n=0
# try EXPECT_REGEX DESCRIPTION <Plugin remote_write> body lines...
try() {
	local want=$1 desc=$2 conf log
	shift 2
	case_n=$((case_n + 1))
	conf="$rw_tmp/c$case_n.conf"
	log="$rw_tmp/c$case_n.log"
	collectd_conf "$conf" "$log" "$@"
	timeout 30 "$COLLECTD" -T -C "$conf" >"$conf.out" 2>&1
	if grep -Eq "$want" "$log"; then ok "$desc"; else
		not_ok "$desc"
		sed 's/^/# /' "$log" | grep -v 'plugin_load' | head -n 10
	fi
}

try '\[error\] remote_write plugin: Endpoint "e": URL "http://exa mple.com:9090/api/v1/write": cannot be parsed' \
	"unparseable URL: init fails naming URL and value" \
	'<Endpoint "e">' 'URL "http://exa mple.com:9090/api/v1/write"' '</Endpoint>'
try '\[error\] remote_write plugin: Endpoint "e": URL "ftp://example.com/write": scheme must be http or https' \
	"ftp URL refused" \
	'<Endpoint "e">' 'URL "ftp://example.com/write"' '</Endpoint>'
try "\\[error\\] remote_write plugin: Endpoint \"e\": BearerTokenFile \"$rw_tmp/missing-token\": No such file or directory" \
	"missing token file: init fails naming the file" \
	'<Endpoint "e">' 'URL "http://127.0.0.1:9/api/v1/write"' "BearerTokenFile \"$rw_tmp/missing-token\"" '</Endpoint>'
try '\[error\] remote_write plugin: Endpoint "e": option Colour "blue": unknown option' \
	"unknown option named" \
	'<Endpoint "e">' 'URL "http://127.0.0.1:9/api/v1/write"' 'Colour "blue"' '</Endpoint>'
try '\[error\] remote_write plugin: Endpoint "e": Header "User-Agent: me": User-Agent is set by the plugin' \
	"reserved header refused" \
	'<Endpoint "e">' 'URL "http://127.0.0.1:9/api/v1/write"' 'Header "User-Agent: me"' '</Endpoint>'
try '\[error\] remote_write plugin: Endpoint "e": option DropMetric "\(\[": ' \
	"bad DropMetric regex refused" \
	'<Endpoint "e">' 'URL "http://127.0.0.1:9/api/v1/write"' 'DropMetric "(["' '</Endpoint>'
try '\[error\] remote_write plugin: no <Endpoint> configured' "no endpoint refused"
try '\[error\] remote_write plugin: Endpoint "e": option MaxSamplesPerSend -3: want an integer 1..1000000' \
	"out-of-range number refused" \
	'<Endpoint "e">' 'URL "http://127.0.0.1:9/api/v1/write"' 'MaxSamplesPerSend -3' '</Endpoint>'
check "... and the plugin did not start" bash -c "! grep -q 'endpoint(s) started' '$rw_tmp/c$case_n.log'"
try 'remote_write plugin: 1 endpoint\(s\) started' "a good configuration starts" \
	'<Endpoint "e">' 'URL "https://127.0.0.1:9/api/v1/write"' 'Timeout 1' 'Header "X-Scope-OrgID: t"' \
	'ExternalLabel "cluster" "c1"' 'RenameMetric "a" "b"' 'DropLabel "x"' '</Endpoint>'
# issue 19: one ERROR line per bad option, no password in the log, file
# options checked at init, one endpoint that cannot start leaves the others.
try '\[error\] remote_write plugin: Endpoint "e": option Timeout "ten": want seconds' \
	"Timeout \"ten\" refused" \
	'<Endpoint "e">' 'URL "http://127.0.0.1:9/api/v1/write"' 'Timeout "ten"' '</Endpoint>'
check "... in one ERROR line (not a second one from collectd's helper)" \
	[ "$(grep -c 'Timeout' "$rw_tmp/c$case_n.log")" = 1 ]
try '\[error\] remote_write plugin: Endpoint "e": URL "https://\*\*\*@exa mple.com/api/v1/write": cannot be parsed' \
	"a bad URL is logged with its password hidden" \
	'<Endpoint "e">' 'URL "https://alice:s3cr3t@exa mple.com/api/v1/write"' '</Endpoint>'
check "... and the password is nowhere in the log" bash -c "! grep -q s3cr3t '$rw_tmp/c$case_n.log'"
try '\[error\] remote_write plugin: Endpoint "e": option URL "https://\*\*\*@h/w": want a string' \
	"a URL option with a wrong value count hides the password too" \
	'<Endpoint "e">' 'URL "https://alice:s3cr3t@h/w" 3' '</Endpoint>'
check "... and the password is nowhere in the log" bash -c "! grep -q s3cr3t '$rw_tmp/c$case_n.log'"
try "\\[error\\] remote_write plugin: Endpoint \"e\": BearerTokenFile \"$rw_tmp\": is a directory" \
	"a directory as BearerTokenFile refused as such" \
	'<Endpoint "e">' 'URL "http://127.0.0.1:9/api/v1/write"' "BearerTokenFile \"$rw_tmp\"" '</Endpoint>'
mkfifo "$rw_tmp/token.fifo"
try "\\[error\\] remote_write plugin: Endpoint \"e\": BearerTokenFile \"$rw_tmp/token.fifo\": is a FIFO, not a regular file" \
	"a FIFO as BearerTokenFile refused at once, named as one" \
	'<Endpoint "e">' 'URL "http://127.0.0.1:9/api/v1/write"' "BearerTokenFile \"$rw_tmp/token.fifo\"" '</Endpoint>'
printf 'tok\n' >"$rw_tmp/token.644"
chmod 644 "$rw_tmp/token.644"
try "\\[warning\\] remote_write plugin: endpoint \"e\": BearerTokenFile: permissions 0644 for \"$rw_tmp/token.644\" are too open" \
	"a BearerTokenFile others may read: started, with a warning naming its mode" \
	'<Endpoint "e">' 'URL "http://127.0.0.1:9/api/v1/write"' "BearerTokenFile \"$rw_tmp/token.644\"" '</Endpoint>'
printf 'pw\n' >"$rw_tmp/pw.640"
chmod 640 "$rw_tmp/pw.640"
try "\\[warning\\] remote_write plugin: endpoint \"e\": BasicAuth password file: permissions 0640 for \"$rw_tmp/pw.640\" are too open" \
	"a BasicAuth password file group may read: a warning naming its mode" \
	'<Endpoint "e">' 'URL "http://127.0.0.1:9/api/v1/write"' "BasicAuth \"u\" \"$rw_tmp/pw.640\"" '</Endpoint>'
try '\[error\] remote_write plugin: Endpoint "e": CACert "/etc/passwd": no PEM CERTIFICATE' \
	"a CACert that is no PEM certificate refused at init" \
	'<Endpoint "e">' 'URL "https://127.0.0.1:9/api/v1/write"' 'CACert "/etc/passwd"' '</Endpoint>'
try 'remote_write plugin: 1 endpoint\(s\) started, 1 could not' \
	"an endpoint that cannot start leaves the other one running" \
	'<Endpoint "bad">' 'URL "http://127.0.0.1:9/api/v1/write"' "BearerTokenFile \"$rw_tmp/missing-token\"" '</Endpoint>' \
	'<Endpoint "good">' 'URL "http://127.0.0.1:9/api/v1/write"' '</Endpoint>'
done_testing
