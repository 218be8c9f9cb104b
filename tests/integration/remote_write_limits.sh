#!/bin/bash
# remote_write_limits.sh - Mimir's limit answers and header tenancy (Mimir's
# X-Scope-OrgID, Thanos receive's THANOS-TENANT), through writer/'s
# endpoint (tests/tools/rw_senders: one endpoint per host, the plugin's
# sender) into tests/tools/mimir_standin.py: Mimir and Thanos do not
# install here, so the stand-in answers with their status codes and texts
# (sources cited in it) and keeps what it accepted per tenant. Checked:
#  - per-user series limit (400, err-mimir-max-series-per-user): tenant
#    "small" may have 250 series, 3 hosts send 100 each; every refused
#    request is sent once, never again, and its samples are counted as
#    dropped with reason series_limit; nothing else is dropped; the
#    tenant holds exactly 250 series;
#  - ingestion rate limit (429, err-mimir-tenant-max-ingestion-rate):
#    tenant "busy" may send 150 samples/s with bursts of 200, 2 hosts offer
#    200/s: the 429s are retried with backoff (Retry429, the default),
#    nothing is dropped and every sample is stored once, in order;
#  - tenancy by header: each tenant's series only under its own tenant,
#    every sample there; a sender without X-Scope-OrgID gets 401, counted
#    (http_4xx); THANOS-TENANT picks the tenant of Thanos receive, which
#    without it files the data under "default-tenant".
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rw_lib.sh"
senders="$top_builddir/tests/tools/rw_senders"
[ -x "$senders" ] || skip_all "tests/tools/rw_senders was not built (remote_write off at configure time)"
command -v curl >/dev/null || skip_all "curl is not installed"
standin="$top_srcdir/tests/tools/mimir_standin.py"

# standin NAME ARGS...: starts one on a free port; sets NAME_url.
standin() {
	local name=$1 port
	shift
	port=$(free_port)
	"$PYTHON3" "$standin" "$port" "$rw_tmp/$name.log" "$@" 2>"$rw_tmp/$name.err" &
	rw_pids+=($!)
	printf -v "${name}_url" %s "http://127.0.0.1:$port"
	check "$name: the stand-in is up" wait_http "http://127.0.0.1:$port/standin/series?tenant=x" 20
}
standin mimir --series-limit 250
standin mimir_rate --ingestion-rate 150 --ingestion-burst 200
standin thanos --mode thanos

# send NAME URL ARGS...: rw_senders, 1 s interval, 5 s; its last line
# (the JSON totals) in $rw_tmp/NAME.json.
send() {
	local name=$1 url=$2
	shift 2
	"$senders" --url "$url" --interval 1 --duration 5 --drain 25 --batch-deadline 0.5 \
		--max-backoff 1 --name-prefix "$name-" "$@" >"$rw_tmp/$name.out" 2>"$rw_tmp/$name.err"
	tail -n 1 "$rw_tmp/$name.out" >"$rw_tmp/$name.json"
}
send small "$mimir_url/api/v1/push" --hosts 3 --series 100 --header "X-Scope-OrgID: small" &
p1=$!
send other "$mimir_url/api/v1/push" --hosts 2 --series 20 --header "X-Scope-OrgID: other" &
p2=$!
send anon "$mimir_url/api/v1/push" --hosts 1 --series 5 &
p3=$!
send busy "$mimir_rate_url/api/v1/push" --hosts 2 --series 100 --header "X-Scope-OrgID: busy" &
p4=$!
send team "$thanos_url/api/v1/receive" --hosts 2 --series 10 --header "THANOS-TENANT: team-a" &
p5=$!
send plain "$thanos_url/api/v1/receive" --hosts 1 --series 10 &
p6=$!
wait $p1 $p2 $p3 $p4 $p5 $p6
for t in small other busy; do
	curl -sf "$mimir_url/standin/series?tenant=$t" >"$rw_tmp/mimir-$t.series"
done
curl -sf "$mimir_rate_url/standin/series?tenant=busy" >"$rw_tmp/mimir-busy.series"
for t in team-a default-tenant; do
	curl -sf "$thanos_url/standin/series?tenant=$t" >"$rw_tmp/thanos-$t.series"
done

"$PYTHON3" - "$rw_tmp" >"$rw_tmp/verdict" <<'P'
import json, os, sys
d = sys.argv[1]
def out(ok, msg):
    print(("ok " if ok else "bad ") + msg)
def js(name):
    try:
        return json.load(open(os.path.join(d, name)))
    except (OSError, ValueError) as e:
        out(False, "%s unreadable: %s" % (name, e))
        return {}
def reqs(name):
    return [json.loads(l) for l in open(os.path.join(d, name + ".log")) if l.strip()]
def complete(store, prefix, hosts, nseries, ticks, what):
    """Every series of the sender in the store, samples 1..ticks once, in time order."""
    want = {'rwsend_seq{instance="%s%04d", series="%03d"}' % (prefix, h, s)
            for h in range(hosts) for s in range(nseries)}
    missing = want - set(store)
    bad = [k for k in want & set(store)
           if [v for _, v in store[k]] != [float(i + 1) for i in range(ticks)]
           or [t for t, _ in store[k]] != sorted(t for t, _ in store[k])]
    out(not missing and not bad, "%s: all %d series with samples 1..%d once, in order (missing %d, wrong %d)"
        % (what, len(want), ticks, len(missing), len(bad)))

# 1. series limit
small, log = js("small.json"), [r for r in reqs("mimir") if r["tenant"] == "small"]
refused = [r for r in log if r["status"] == 400]
st = js("mimir-small.series")
out(small.get("pushed") == 3 * 100 * small.get("ticks", -1), "small: the senders pushed %s samples" % small.get("pushed"))
out(len(st) == 250, "small: the tenant holds exactly its limit of 250 series (%d)" % len(st))
out(len(refused) > 0 and all(r["reason"] == "series_limit" for r in refused),
    "small: %d requests refused with 400 per-user series limit" % len(refused))
shas = [r["sha"] for r in refused]
out(len(shas) == len(set(shas)), "small: no refused request was sent again (%d refused, %d distinct)" % (len(shas), len(set(shas))))
n_refused = sum(r["samples"] for r in refused)
out(small.get("dropped_series_limit") == n_refused,
    "small: dropped{reason=series_limit} %s = the samples of the refused requests %d" % (small.get("dropped_series_limit"), n_refused))
out(small.get("dropped") == small.get("dropped_series_limit") and small.get("retried") == 0,
    "small: nothing else dropped (dropped %s), nothing retried (%s)" % (small.get("dropped"), small.get("retried")))
out(small.get("sent", 0) + small.get("dropped", 0) == small.get("pushed"), "small: every pushed sample sent or dropped")

# 2. ingestion rate limit
busy, blog = js("busy.json"), reqs("mimir_rate")
n429 = sum(1 for r in blog if r["status"] == 429)
out(n429 > 0, "busy: %d answers 429 ingestion rate limit" % n429)
out(busy.get("retried", 0) > 0 and busy.get("dropped") == 0,
    "busy: the 429s were retried (%s samples) and nothing was dropped (%s)" % (busy.get("retried"), busy.get("dropped")))
out(all(r["status"] in (200, 429) for r in blog), "busy: no other answer (no out-of-order or duplicate from the retries)")
complete(js("mimir-busy.series"), "busy-", 2, 100, busy.get("ticks", -1), "busy")

# 3. tenancy by header
other = js("other.json")
so = js("mimir-other.series")
complete(so, "other-", 2, 20, other.get("ticks", -1), "other (X-Scope-OrgID: other)")
out(all('instance="other-' in k for k in so) and all('instance="small-' in k for k in st),
    "each Mimir tenant holds only its own senders' series")
anon = js("anon.json")
alog = [r for r in reqs("mimir") if not r["tenant"]]
out(alog and all(r["status"] == 401 for r in alog), "no X-Scope-OrgID: every request refused with 401 (%d)" % len(alog))
out(anon.get("dropped_http_4xx") == anon.get("pushed") and anon.get("retried") == 0,
    "no X-Scope-OrgID: all %s samples dropped as http_4xx, none retried" % anon.get("pushed"))
team, plain = js("team.json"), js("plain.json")
ta, dt = js("thanos-team-a.series"), js("thanos-default-tenant.series")
complete(ta, "team-", 2, 10, team.get("ticks", -1), "Thanos tenant team-a (THANOS-TENANT)")
complete(dt, "plain-", 1, 10, plain.get("ticks", -1), "Thanos default-tenant (no header)")
out(all('instance="team-' in k for k in ta) and all('instance="plain-' in k for k in dt),
    "each Thanos tenant holds only its own senders' series")
P
rc=$?
check "the checks ran (exit $rc)" [ "$rc" = 0 ]
while read -r verdict msg; do
	if [ "$verdict" = ok ]; then ok "$msg"; else not_ok "$msg"; fi
done <"$rw_tmp/verdict"
done_testing
