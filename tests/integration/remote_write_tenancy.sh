#!/bin/bash
# remote_write_tenancy.sh - the distributed engines' conventions with the
# real VictoriaMetrics 1.79 tools (three single-node VictoriaMetrics,
# vmagent and vmauth, all started here on 127.0.0.1 in temp dirs), through
# writer/'s endpoint (tests/tools/rw_senders) and `pciescope fleet`:
#  1. VictoriaMetrics cluster URL form: hosts send to
#     vmagent/insert/<accountID>[:<projectID>]/prometheus/api/v1/write;
#     vmagent (-remoteWrite.multitenantURL) forwards each tenant to
#     <base>/insert/<accountID>/..., where tests/tools/vminsert_standin.py
#     (the cluster's vminsert is not packaged) hands accountID 1 to node a
#     and 2 to node b: each tenant's samples are all in its node and in no
#     other;
#  2. vmauth routes two tenants (by their bearer token: vmauth 1.79 routes
#     by credential only) to two nodes and adds X-Scope-OrgID, the
#     authenticating gateway Mimir's docs ask for: each tenant's samples
#     all in its node, none in the other; no token: 401, counted; a third
#     tenant through vmauth to the Mimir stand-in (mimir_standin.py): the
#     sender sends no X-Scope-OrgID, vmauth's is the one Mimir files the
#     samples under;
#  3. `pciescope fleet` with three --url spreads its hosts over the three
#     nodes by rw_shard (jump consistent hash of instance): each host's
#     series all in the node the hash names (computed here independently)
#     and in no other, and the spread within the binomial bound.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rw_lib.sh"
[ -x "$VICTORIA_METRICS" ] || skip_all "victoria-metrics is not installed"
VMAGENT=${VMAGENT:-$(command -v vmagent)}
VMAUTH=${VMAUTH:-$(command -v vmauth)}
[ -x "$VMAGENT" ] && [ -x "$VMAUTH" ] || skip_all "vmagent or vmauth is not installed (Debian's victoria-metrics package has both)"
senders="$top_builddir/tests/tools/rw_senders"
[ -x "$senders" ] || skip_all "tests/tools/rw_senders was not built (remote_write off at configure time)"
[ -x "$top_builddir/cli/pciescope-fleet" ] || skip_all "pciescope-fleet was not built (remote_write off at configure time)"
command -v curl >/dev/null || skip_all "curl is not installed"

for n in a b c; do start_vm "vm_$n"; done
for n in a b c; do
	u="vm_${n}_url"
	check "node $n: VictoriaMetrics is up" wait_http "${!u}/health" 30
done

# The vminsert stand-in and vmagent in front of it.
rport=$(free_port)
"$PYTHON3" "$top_srcdir/tests/tools/vminsert_standin.py" "$rport" "$rw_tmp/vminsert.log" \
	"1=$vm_a_url" "2=$vm_b_url" 2>"$rw_tmp/vminsert.err" &
rw_pids+=($!)
aport=$(free_port)
"$VMAGENT" -httpListenAddr="127.0.0.1:$aport" -remoteWrite.multitenantURL="http://127.0.0.1:$rport" \
	-remoteWrite.tmpDataPath="$rw_tmp/vmagent" -remoteWrite.flushInterval=200ms >"$rw_tmp/vmagent.log" 2>&1 &
rw_pids+=($!)
check "vmagent is up" wait_http "http://127.0.0.1:$aport/health" 20

# The Mimir stand-in behind vmauth for the third tenant.
mport=$(free_port)
"$PYTHON3" "$top_srcdir/tests/tools/mimir_standin.py" "$mport" "$rw_tmp/mimir.log" 2>"$rw_tmp/mimir.err" &
rw_pids+=($!)
mimir_url="http://127.0.0.1:$mport"
check "the Mimir stand-in is up" wait_http "$mimir_url/standin/series?tenant=x" 20
# vmauth: one bearer token per tenant, each to its own store.
printf 'tenant-a-token\n' >"$rw_tmp/tok-a"
printf 'tenant-b-token\n' >"$rw_tmp/tok-b"
printf 'tenant-c-token\n' >"$rw_tmp/tok-c"
chmod 600 "$rw_tmp/tok-a" "$rw_tmp/tok-b" "$rw_tmp/tok-c"
cat >"$rw_tmp/auth.yml" <<EOF
users:
- bearer_token: "tenant-a-token"
  url_prefix: "$vm_a_url"
  headers:
  - "X-Scope-OrgID: tenant-a"
- bearer_token: "tenant-b-token"
  url_prefix: "$vm_b_url"
  headers:
  - "X-Scope-OrgID: tenant-b"
- bearer_token: "tenant-c-token"
  url_prefix: "$mimir_url"
  headers:
  - "X-Scope-OrgID: tenant-c"
EOF
uport=$(free_port)
"$VMAUTH" -httpListenAddr="127.0.0.1:$uport" -auth.config="$rw_tmp/auth.yml" >"$rw_tmp/vmauth.log" 2>&1 &
rw_pids+=($!)
check "vmauth is up" bash -c "for i in \$(seq 1 50); do curl -s -o /dev/null 'http://127.0.0.1:$uport/' && exit 0; sleep 0.2; done; exit 1"

send() {
	local name=$1 url=$2
	shift 2
	"$senders" --url "$url" --interval 1 --duration 4 --drain 20 --batch-deadline 0.5 \
		--max-backoff 1 --name-prefix "$name-" --hosts 2 --series 10 "$@" \
		>"$rw_tmp/$name.out" 2>"$rw_tmp/$name.err"
	tail -n 1 "$rw_tmp/$name.out" >"$rw_tmp/$name.json"
}
fleet_out="$rw_tmp/fleet.err"
"$PCIESCOPE" fleet --hosts 90 --duration 4 --interval 2 --fault-rate 0 --mix spr-2s=1 --seed 27 \
	--machine-dir "$top_srcdir/sim/machines" \
	--url "$vm_a_url/api/v1/write" --url "$vm_b_url/api/v1/write" --url "$vm_c_url/api/v1/write" \
	>"$rw_tmp/fleet.out" 2>"$fleet_out" &
fpid=$!
send t1 "http://127.0.0.1:$aport/insert/1/prometheus/api/v1/write" &
s1=$!
send t2 "http://127.0.0.1:$aport/insert/2:0/prometheus/api/v1/write" &
s2=$!
send ua "http://127.0.0.1:$uport/api/v1/write" --bearer-token-file "$rw_tmp/tok-a" &
s3=$!
send ub "http://127.0.0.1:$uport/api/v1/write" --bearer-token-file "$rw_tmp/tok-b" &
s4=$!
send un "http://127.0.0.1:$uport/api/v1/write" --hosts 1 &
s5=$!
send uc "http://127.0.0.1:$uport/api/v1/push" --bearer-token-file "$rw_tmp/tok-c" &
s6=$!
wait $s1 $s2 $s3 $s4 $s5 $s6
curl -sf "$mimir_url/standin/series?tenant=tenant-c" >"$rw_tmp/mimir-c.series"
wait $fpid
frc=$?
check "pciescope fleet ended with 0 (every sample accepted; got $frc)" [ "$frc" = 0 ]
sleep 1.5 # vmagent's last flush
for n in a b c; do
	u="vm_${n}_url"
	curl -s "${!u}/internal/force_flush" >/dev/null
	curl -sf "${!u}/api/v1/export" -d 'match[]={__name__="rwsend_seq"}' >"$rw_tmp/export-$n.jsonl"
	curl -sf "${!u}/api/v1/query" --data-urlencode 'query=count by (instance) ({instance=~"fleet-.*"})' \
		>"$rw_tmp/fleet-$n.json"
done

"$PYTHON3" - "$rw_tmp" >"$rw_tmp/verdict" <<'P'
import json, math, os, sys
d = sys.argv[1]
def out(ok, msg):
    print(("ok " if ok else "bad ") + msg)
def js(name):
    try:
        return json.load(open(os.path.join(d, name)))
    except (OSError, ValueError) as e:
        out(False, "%s unreadable: %s" % (name, e))
        return {}
nodes = {}
for n in "abc":
    store = {}
    for line in open(os.path.join(d, "export-%s.jsonl" % n)):
        if line.strip():
            r = json.loads(line)
            k = (r["metric"]["instance"], r["metric"]["series"])
            store.setdefault(k, []).extend(zip(r["timestamps"], r["values"]))
    nodes[n] = store
def check_tenant(prefix, node, what):
    s = js(prefix + ".json")
    ticks = s.get("ticks", -1)
    want = {("%s-%04d" % (prefix, h), "%03d" % i) for h in range(2) for i in range(10)}
    store = nodes[node]
    got = {k for k in store if k[0].startswith(prefix + "-")}
    bad = [k for k in want & got if sorted(v for _, v in sorted(store[k])) != [float(i + 1) for i in range(ticks)]]
    out(got == want and not bad and s.get("dropped") == 0,
        "%s: node %s holds all %d series, samples 1..%d once each (missing %d, wrong %d, dropped %s)"
        % (what, node, len(want), ticks, len(want - got), len(bad), s.get("dropped")))
    others = [m for m in "abc" if m != node and any(k[0].startswith(prefix + "-") for k in nodes[m])]
    out(not others, "%s: no sample in any other node (%s)" % (what, ",".join(others) or "none"))
check_tenant("t1", "a", "cluster URL /insert/1/... via vmagent")
check_tenant("t2", "b", "cluster URL /insert/2:0/... via vmagent")
check_tenant("ua", "a", "vmauth tenant-a")
check_tenant("ub", "b", "vmauth tenant-b")
un = js("un.json")
out(un.get("pushed", 0) > 0 and un.get("dropped_http_4xx") == un.get("pushed")
    and not any(k[0].startswith("un-") for m in "abc" for k in nodes[m]),
    "vmauth without a token: all %s samples refused (401), counted as http_4xx, stored nowhere" % un.get("pushed"))
uc, mc = js("uc.json"), js("mimir-c.series")
want = {'rwsend_seq{instance="uc-%04d", series="%03d"}' % (h, i) for h in range(2) for i in range(10)}
good = [k for k in want if [v for _, v in mc.get(k, [])] == [float(i + 1) for i in range(uc.get("ticks", -1))]]
out(set(mc) == want and len(good) == len(want) and uc.get("dropped") == 0,
    "vmauth tenant-c to the Mimir stand-in: all %d series filed under vmauth's X-Scope-OrgID tenant-c, every sample once (%d good)"
    % (len(want), len(good)))
routed = [l.split() for l in open(os.path.join(d, "vminsert.log")) if l.strip()]
out(routed and {r[2] for r in routed} == {"1", "2"} and all(r[1] == "204" for r in routed),
    "vmagent forwarded to /insert/<accountID>/prometheus/api/v1/write for accounts 1 and 2, all answered 204 (%d requests)" % len(routed))

# The spread: rw_shard, computed independently.
M = (1 << 64) - 1
def fmix(k):
    k ^= k >> 33; k = (k * 0xff51afd7ed558ccd) & M; k ^= k >> 33
    k = (k * 0xc4ceb9fe1a85ec53) & M; return k ^ (k >> 33)
def shard(name, n):
    h = 0xcbf29ce484222325
    for c in name.encode():
        h = ((h ^ c) * 0x100000001b3) & M
    k, b, j = fmix(fmix(h) ^ 0x5ca1ab1e0ddba11), 0, 0
    while j < n:
        b = j
        k = (k * 2862933555777941757 + 1) & M
        j = int((b + 1) * ((1 << 31) / ((k >> 33) + 1)))
    return b
hosts = ["fleet-%05d" % i for i in range(1, 91)]
seen, series = {}, {}
for i, n in enumerate("abc"):
    res = js("fleet-%s.json" % n).get("data", {}).get("result", [])
    series[n] = sum(int(r["value"][1]) for r in res)
    for r in res:
        seen.setdefault(r["metric"]["instance"], []).append(i)
wrong = [h for h in hosts if seen.get(h) != [shard(h, 3)]]
out(not wrong, "fleet: each of the 90 hosts in exactly the node rw_shard names (wrong or missing: %d)" % len(wrong))
per_host = {int(r["value"][1]) for n in "abc" for r in js("fleet-%s.json" % n).get("data", {}).get("result", [])}
out(len(per_host) == 1, "fleet: every host has the same series count (spr-2s): %s" % sorted(per_host))
cnt = [series[n] for n in "abc"]
mean = sum(cnt) / 3.0
# hosts per node ~ Binomial(90, 1/3): 3 standard deviations of hosts
sd = math.sqrt(90 * (1 / 3.0) * (2 / 3.0)) * (cnt[0] / max(1, len([h for h in hosts if shard(h, 3) == 0])))
out(min(cnt) > 0 and all(abs(c - mean) <= 3 * sd for c in cnt),
    "fleet: series per node %s, max/min %.2f, within 3 standard deviations of an even split" % (cnt, max(cnt) / max(1, min(cnt))))
P
rc=$?
check "the checks ran (exit $rc)" [ "$rc" = 0 ]
while read -r verdict msg; do
	if [ "$verdict" = ok ]; then ok "$msg"; else not_ok "$msg"; fi
done <"$rw_tmp/verdict"
done_testing
