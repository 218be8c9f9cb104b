#!/usr/bin/env python3
"""mimir_standin.py - a stand-in for the write path of Grafana Mimir 2.x (or,
with --mode thanos, of Thanos receive), for remote_write_limits.sh: neither
installs here (no Debian package), so this answers Remote-Write 1.0 pushes
with the status codes and bodies those engines use, and keeps what it
accepted per tenant for the test to read back.

Mimir (--mode mimir, POST /api/v1/push):
  - the tenant is the X-Scope-OrgID header; without it: 401 "no org id"
    (dskit's auth middleware, user.ErrNoOrgID);
  - the distributor's ingestion rate limit, a token bucket per tenant of
    --ingestion-rate items/s and --ingestion-burst items (samples plus
    metadata: Mimir counts "samples, exemplars and metadata"), checked
    before anything is stored: 429 with the text of
    grafana/mimir pkg/util/validation/errors.go IngestionRateLimitedMsgFormat
    (err-mimir-tenant-max-ingestion-rate), no Retry-After;
  - the ingester's per-user series limit (--series-limit, Mimir's default
    max_global_series_per_user is 150000): samples of series it already
    has are stored, a new series over the limit is refused, and the answer
    is 400 with the text of pkg/ingester/errors.go formatMaxSeriesPerUserError
    wrapped as "user=<tenant>: ..." (seen in grafana/mimir#3126: "rpc error:
    code = Code(400) desc = user=anonymous: per-user series limit of 150000
    exceeded (err-mimir-max-series-per-user). To adjust ...");
  - per series, a sample older than the newest stored is refused as out of
    order, one at the same time with another value as a duplicate
    (pkg/ingester/errors.go newIngestErrSampleOutOfOrder,
    newIngestErrSampleDuplicateTimestamp; 400); the same value again is
    accepted silently.
  Error ids and the "(err-mimir-<id>). To adjust the related per-tenant
  limit, configure -<flag>, or contact your service administrator." form:
  pkg/util/globalerror/errors.go (MessageWithPerTenantLimitConfig). Bodies
  are written as Go's http.Error writes them (text/plain, a final newline),
  as Mimir's push handler (pkg/util/push/push.go) does.
Thanos receive (--mode thanos, POST /api/v1/receive): the tenant is the
THANOS-TENANT header, "default-tenant" without it (Thanos' defaults for
--receive.tenant-header and --receive.default-tenant-id); no limits.

GET /standin/series?tenant=T: {"<name>{labels}": [[ts_ms, value], ...]}.
Every POST is logged as one JSON line (time, tenant, status, samples,
metadata, body sha1, reason).

usage: mimir_standin.py PORT LOG [--mode mimir|thanos] [--series-limit N]
                        [--ingestion-rate R] [--ingestion-burst B]
"""
import argparse
import hashlib
import json
import struct
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ap = argparse.ArgumentParser()
ap.add_argument("port", type=int)
ap.add_argument("log")
ap.add_argument("--mode", choices=("mimir", "thanos"), default="mimir")
ap.add_argument("--series-limit", type=int, default=150000)
ap.add_argument("--ingestion-rate", type=float, default=10000)
ap.add_argument("--ingestion-burst", type=int, default=200000)
args = ap.parse_args()

RATE_MSG = (
    "the request has been rejected because the tenant exceeded the ingestion rate limit, "
    "set to %s items/s with a maximum allowed burst of %d. This limit is applied on the total "
    "number of samples, exemplars and metadata received across all distributors "
    "(err-mimir-tenant-max-ingestion-rate). To adjust the related per-tenant limits, configure "
    "-distributor.ingestion-rate-limit and -distributor.ingestion-burst-size, or contact your "
    "service administrator.")
SERIES_MSG = (
    "user=%s: per-user series limit of %d exceeded (err-mimir-max-series-per-user). To adjust "
    "the related per-tenant limit, configure -ingester.max-global-series-per-user, or contact "
    "your service administrator.")
OOO_MSG = (
    "user=%s: the sample has been rejected because another sample with a more recent timestamp "
    "has already been ingested and out-of-order samples are not allowed "
    "(err-mimir-sample-out-of-order). The affected sample has timestamp %s and is from series %s")
DUP_MSG = (
    "user=%s: the sample has been rejected because another sample with the same timestamp, but a "
    "different value, has already been ingested (err-mimir-sample-duplicate-timestamp). The "
    "affected sample has timestamp %s and is from series %s")


def go_float(v):
    """Go's %v of a float64, as Mimir formats the rate."""
    return ("%d" % v) if v == int(v) and abs(v) < 1e21 else repr(v)


# ---- snappy block format and the WriteRequest protobuf, just enough ----

def uvarint(b, i):
    x = s = 0
    while True:
        c = b[i]
        i += 1
        x |= (c & 0x7F) << s
        if c < 0x80:
            return x, i
        s += 7


def snappy_decode(b):
    n, i = uvarint(b, 0)
    out = bytearray()
    while i < len(b):
        tag = b[i]
        i += 1
        kind = tag & 3
        if kind == 0:
            ln = tag >> 2
            if ln >= 60:
                nb = ln - 59
                ln = int.from_bytes(b[i:i + nb], "little")
                i += nb
            ln += 1
            out += b[i:i + ln]
            i += ln
            continue
        if kind == 1:
            ln = ((tag >> 2) & 7) + 4
            off = ((tag >> 5) << 8) | b[i]
            i += 1
        elif kind == 2:
            ln = (tag >> 2) + 1
            off = int.from_bytes(b[i:i + 2], "little")
            i += 2
        else:
            ln = (tag >> 2) + 1
            off = int.from_bytes(b[i:i + 4], "little")
            i += 4
        if off == 0 or off > len(out):
            raise ValueError("bad snappy offset")
        for _ in range(ln):
            out.append(out[-off])
    if len(out) != n:
        raise ValueError("snappy length mismatch")
    return bytes(out)


def fields(b):
    i = 0
    while i < len(b):
        key, i = uvarint(b, i)
        f, wt = key >> 3, key & 7
        if wt == 0:
            v, i = uvarint(b, i)
        elif wt == 1:
            v = b[i:i + 8]
            i += 8
        elif wt == 2:
            ln, i = uvarint(b, i)
            v = b[i:i + ln]
            i += ln
        elif wt == 5:
            v = b[i:i + 4]
            i += 4
        else:
            raise ValueError("wire type %d" % wt)
        yield f, wt, v


def parse_write_request(b):
    series, metadata = [], 0
    for f, wt, v in fields(b):
        if f == 1 and wt == 2:
            labels, samples = [], []
            for g, _, w in fields(v):
                if g == 1:
                    kv = {h: x.decode() for h, _, x in fields(w)}
                    labels.append((kv.get(1, ""), kv.get(2, "")))
                elif g == 2:
                    val, ts = 0.0, 0
                    for h, hwt, x in fields(w):
                        if h == 1 and hwt == 1:
                            val = struct.unpack("<d", x)[0]
                        elif h == 2:
                            ts = x - (1 << 64) if x >= 1 << 63 else x
                    samples.append((ts, val))
            series.append((tuple(sorted(labels)), samples))
        elif f == 3:
            metadata += 1
    return series, metadata


def series_text(labels):
    d = dict(labels)
    name = d.pop("__name__", "")
    return "%s{%s}" % (name, ", ".join('%s="%s"' % kv for kv in sorted(d.items())))


# ---- state ----

lock = threading.Lock()
tenants = {}  # tenant -> {"series": {labels: [(ts, v)]}, "tokens": float, "t": float}
log = open(args.log, "a", buffering=1)


def tenant_state(t):
    st = tenants.get(t)
    if st is None:
        st = tenants[t] = {"series": {}, "tokens": float(args.ingestion_burst), "t": time.monotonic()}
    return st


def allow(st, n):
    """golang.org/x/time/rate AllowN: a bucket of burst tokens refilled at rate."""
    now = time.monotonic()
    st["tokens"] = min(float(args.ingestion_burst), st["tokens"] + (now - st["t"]) * args.ingestion_rate)
    st["t"] = now
    if st["tokens"] >= n:
        st["tokens"] -= n
        return True
    return False


def ingest(tenant, series):
    """The ingester: returns (status, body); stores what it accepts."""
    st = tenant_state(tenant)
    first_err = None
    for labels, samples in series:
        stored = st["series"].get(labels)
        if stored is None:
            if args.mode == "mimir" and len(st["series"]) >= args.series_limit:
                first_err = first_err or (400, SERIES_MSG % (tenant, args.series_limit), "series_limit")
                continue
            stored = st["series"][labels] = []
        for ts, v in samples:
            when = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ts / 1000)) + ".%03dZ" % (ts % 1000)
            if stored and ts < stored[-1][0]:
                first_err = first_err or (400, OOO_MSG % (tenant, when, series_text(labels)), "out_of_order")
            elif stored and ts == stored[-1][0]:
                if struct.pack("<d", v) != struct.pack("<d", stored[-1][1]):  # bit for bit, as the TSDB
                    first_err = first_err or (400, DUP_MSG % (tenant, when, series_text(labels)), "duplicate")
            else:
                stored.append((ts, v))
    return first_err or (200, "", "")


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def answer(self, status, text, ctype="text/plain; charset=utf-8"):
        body = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        u = urllib.parse.urlsplit(self.path)
        if u.path != "/standin/series":
            return self.answer(404, "404 page not found\n")
        t = urllib.parse.parse_qs(u.query).get("tenant", [""])[0]
        with lock:
            st = tenants.get(t, {"series": {}})
            out = {series_text(k): v for k, v in st["series"].items()}
        self.answer(200, json.dumps(out), "application/json")

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        path = "/api/v1/push" if args.mode == "mimir" else "/api/v1/receive"
        samples = metadata = 0
        if urllib.parse.urlsplit(self.path).path != path:
            status, text, why = 404, "404 page not found", "path"
        else:
            if args.mode == "mimir":
                tenant = self.headers.get("X-Scope-OrgID", "")
            else:
                tenant = self.headers.get("THANOS-TENANT", "") or "default-tenant"
            try:
                series, metadata = parse_write_request(snappy_decode(raw))
                samples = sum(len(s) for _, s in series)
            except (ValueError, IndexError, UnicodeDecodeError) as e:
                series = None
                status, text, why = 400, "error decoding the request: %s" % e, "decode"
            if series is None:
                pass
            elif not tenant:
                status, text, why = 401, "no org id", "no_org_id"
            else:
                with lock:
                    st = tenant_state(tenant)
                    if args.mode == "mimir" and not allow(st, samples + metadata):
                        status, text, why = 429, RATE_MSG % (go_float(args.ingestion_rate), args.ingestion_burst), "rate_limit"
                    else:
                        status, text, why = ingest(tenant, series)
        with lock:
            log.write(json.dumps({"t": time.time(), "tenant": self.headers.get("X-Scope-OrgID") or self.headers.get("THANOS-TENANT"),
                                  "status": status, "samples": samples, "metadata": metadata,
                                  "sha": hashlib.sha1(raw).hexdigest(), "reason": why}) + "\n")
        if status == 200:
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            self.answer(status, text + "\n")

    def log_message(self, *a):
        pass


ThreadingHTTPServer.daemon_threads = True
ThreadingHTTPServer.request_queue_size = 256
ThreadingHTTPServer(("127.0.0.1", args.port), H).serve_forever()
