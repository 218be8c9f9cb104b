#!/bin/bash
# remote_write_engines.sh - the tested configurations of docs/scaling.md
# "Distributed engines": a real collectd runs the remote_write block between
# the "remote_write_engines.sh: begin/end" marks of that page (host names
# replaced by local receivers, spool and token paths by temp files), with
# the test source, against
#   vm-cluster: vmagent 1.79 (-remoteWrite.multitenantURL) -> the vminsert
#               stand-in -> a real single-node VictoriaMetrics (account 42);
#   mimir:      tests/tools/mimir_standin.py (tenant from X-Scope-OrgID);
#   thanos:     tests/tools/mimir_standin.py --mode thanos (THANOS-TENANT).
# Every read of the test source's sequence arrives at each, in its tenant.
# Then `pciescope fleet --tenant-path --tenants 2` through the same vmagent:
# each host's series in the node of its tenant (1 + rw_shard("tenant:" +
# instance, 2), computed here), none elsewhere.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rw_lib.sh"
rw_require_plugin
[ -x "$VICTORIA_METRICS" ] || skip_all "victoria-metrics is not installed"
VMAGENT=${VMAGENT:-$(command -v vmagent)}
[ -x "$VMAGENT" ] || skip_all "vmagent is not installed (Debian's victoria-metrics package has it)"
[ -x "$top_builddir/cli/pciescope-fleet" ] || skip_all "pciescope-fleet was not built"

start_vm vm_x
start_vm vm_y
check "node x: VictoriaMetrics is up" wait_http "$vm_x_url/health" 30
check "node y: VictoriaMetrics is up" wait_http "$vm_y_url/health" 30
rport=$(free_port)
"$PYTHON3" "$top_srcdir/tests/tools/vminsert_standin.py" "$rport" "$rw_tmp/vminsert.log" \
	"42=$vm_x_url" "1=$vm_x_url" "2=$vm_y_url" 2>"$rw_tmp/vminsert.err" &
rw_pids+=($!)
aport=$(free_port)
"$VMAGENT" -httpListenAddr="127.0.0.1:$aport" -remoteWrite.multitenantURL="http://127.0.0.1:$rport" \
	-remoteWrite.tmpDataPath="$rw_tmp/vmagent" -remoteWrite.flushInterval=200ms >"$rw_tmp/vmagent.log" 2>&1 &
rw_pids+=($!)
check "vmagent is up" wait_http "http://127.0.0.1:$aport/health" 20
for m in mimir thanos; do
	port=$(free_port)
	"$PYTHON3" "$top_srcdir/tests/tools/mimir_standin.py" "$port" "$rw_tmp/$m.log" --mode "$m" 2>"$rw_tmp/$m.err" &
	rw_pids+=($!)
	printf -v "${m}_url" %s "http://127.0.0.1:$port"
	check "$m: the stand-in is up" wait_http "http://127.0.0.1:$port/standin/series?tenant=x" 20
done
printf 'mimir-token\n' >"$rw_tmp/mimir.token"
chmod 600 "$rw_tmp/mimir.token"

# The block from the docs, made local.
"$PYTHON3" - "$top_srcdir/docs/scaling.md" "$rw_tmp" "http://127.0.0.1:$aport" "$mimir_url" "$thanos_url" \
	>"$rw_tmp/block" <<'P'
import re, sys
doc, tmp, vmc, mimir, thanos = sys.argv[1:]
text = open(doc).read()
block = text.split("<!-- remote_write_engines.sh: begin -->\n", 1)[1].split("<!-- remote_write_engines.sh: end -->", 1)[0]
base = {"vm-cluster": vmc, "mimir": mimir, "thanos": thanos}
ep = None
for line in block.splitlines():
    line = line[4:] if line.startswith("    ") else line
    m = re.match(r'\s*<Endpoint "([^"]+)">', line)
    if m:
        ep = m.group(1)
    line = re.sub(r'URL "https?://[^/"]+', lambda _: 'URL "%s' % base[ep], line)
    line = re.sub(r'SpoolDir "[^"]*"', lambda _: 'SpoolDir "%s/spool-%s"' % (tmp, ep), line)
    line = re.sub(r'BearerTokenFile "[^"]*"', 'BearerTokenFile "%s/mimir.token"' % tmp, line)
    if line.strip() and not line.lstrip().startswith("#"):
        print(line)
P
check "the docs' block has the three endpoints" [ "$(grep -c '<Endpoint' "$rw_tmp/block")" = 3 ]
{
	collectd_conf /dev/stdout "$rw_tmp/c.log"
} | sed '/^LoadPlugin remote_write$/,$d' >"$rw_tmp/c.conf"
cat "$rw_tmp/block" >>"$rw_tmp/c.conf"
start_collectd "$rw_tmp/c.conf"

"$PCIESCOPE" fleet --hosts 6 --duration 4 --interval 2 --fault-rate 0 --mix spr-2s=1 --seed 27 \
	--machine-dir "$top_srcdir/sim/machines" --url "http://127.0.0.1:$aport" --tenant-path --tenants 2 \
	>"$rw_tmp/fleet.out" 2>"$rw_tmp/fleet.err"
frc=$?
check "pciescope fleet --tenant-path through vmagent ended with 0 (got $frc)" [ "$frc" = 0 ]
sleep 2
stop_collectd
reads=$(sed -n 's/.*rw_testsrc: \([0-9]*\) reads.*/\1/p' "$rw_tmp/c.log")
check "collectd read the test source ($reads reads) and logged no ERROR" \
	bash -c "[ '${reads:-0}' -ge 4 ] && ! grep -q '\[error\]' '$rw_tmp/c.log'"
sleep 1.5 # vmagent's last flush
for n in x y; do
	u="vm_${n}_url"
	curl -s "${!u}/internal/force_flush" >/dev/null
	curl -sf "${!u}/api/v1/export" -d 'match[]={__name__="rwtest_sequence_total"}' >"$rw_tmp/seq-$n.jsonl"
	curl -sf "${!u}/api/v1/query" --data-urlencode 'query=count by (instance) ({instance=~"fleet-.*"})' \
		>"$rw_tmp/fleet-$n.json"
done
curl -sf "$mimir_url/standin/series?tenant=fleet" >"$rw_tmp/mimir.series"
curl -sf "$thanos_url/standin/series?tenant=fleet" >"$rw_tmp/thanos.series"

# What one spr-2s host sends at Detail default: the engine's own series list.
series_per_host=$("$top_builddir/tests/tools/golden_stream" --series-list \
	"$top_srcdir/sim/machines/spr-2s.json" - 40 Detail=default 2>/dev/null | grep -c .)
"$PYTHON3" - "$rw_tmp" "${reads:-0}" "${series_per_host:-0}" >"$rw_tmp/verdict" <<'P'
import json, os, sys
d, reads, per_host = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def out(ok, msg):
    print(("ok " if ok else "bad ") + msg)
def seq_ok(values, what):
    v = [x for x in values if x is not None and x == x]  # the stale marker (NaN, null in JSON) aside
    out(v and v == [float(i) for i in range(1, len(v) + 1)] and len(v) >= reads - 1,
        "%s: the sequence 1..%d complete (of %d reads)" % (what, len(v), reads))
vm = [json.loads(l) for l in open(os.path.join(d, "seq-x.jsonl")) if l.strip()]
vm = [r for r in vm if r["metric"].get("instance") == "rwtest-host"]
seq_ok([v for _, v in sorted(zip(vm[0]["timestamps"], vm[0]["values"]))] if len(vm) == 1 else [],
       "vm-cluster (account 42 via vmagent)")
vy = [l for l in open(os.path.join(d, "seq-y.jsonl")) if "rwtest-host" in l]
out(not vy, "vm-cluster: nothing of account 42 in the other node")
for m in ("mimir", "thanos"):
    st = json.load(open(os.path.join(d, m + ".series")))
    k = [k for k in st if k.startswith("rwtest_sequence_total{") and 'instance="rwtest-host"' in k]
    seq_ok([v for _, v in st[k[0]]] if len(k) == 1 else [], "%s (tenant fleet)" % m)
routed = {l.split()[2] for l in open(os.path.join(d, "vminsert.log")) if l.strip()}
out(routed == {"42", "1", "2"}, "vmagent forwarded accounts %s (want 1, 2, 42)" % sorted(routed))
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
hosts = ["fleet-%05d" % i for i in range(1, 7)]
where = {}
for n in "xy":
    res = json.load(open(os.path.join(d, "fleet-%s.json" % n)))["data"]["result"]
    for r in res:
        where.setdefault(r["metric"]["instance"], []).append((n, int(r["value"][1])))
want = {h: [("x" if 1 + shard("tenant:" + h, 2) == 1 else "y", per_host)] for h in hosts}
out(per_host > 0 and where == want,
    "fleet --tenant-path: each host's %d series (golden_stream's list) in its tenant's node only (%s)"
    % (per_host, ", ".join("%s:%s" % (h, where.get(h)) for h in hosts)))
P
rc=$?
check "the checks ran (exit $rc)" [ "$rc" = 0 ]
while read -r verdict msg; do
	if [ "$verdict" = ok ]; then ok "$msg"; else not_ok "$msg"; fi
done <"$rw_tmp/verdict"
done_testing
