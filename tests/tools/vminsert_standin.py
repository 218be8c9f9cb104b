#!/usr/bin/env python3
"""vminsert_standin.py - the tenant routing of a VictoriaMetrics cluster's
vminsert, in front of single-node VictoriaMetrics (remote_write_tenancy.sh):
the cluster is not packaged for Debian, and single-node VictoriaMetrics
refuses the cluster's URL form ("unsupported path requested"), so this
takes POST /insert/<accountID>[:<projectID>]/prometheus/api/v1/write (the
cluster's form, docs/victoriametrics/Cluster-VictoriaMetrics.md "URL
format") and forwards the body and headers as they are to the single node
given for that accountID (its /api/v1/write), answering with that node's
answer. An accountID without a node gets 400, as does any other path. Each
POST is logged as one line: time, status, accountID, path.

usage: vminsert_standin.py PORT LOG ACCOUNT=URL [ACCOUNT=URL ...]
"""
import http.client
import re
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

port, log = int(sys.argv[1]), open(sys.argv[2], "a", buffering=1)
nodes = {}
for a in sys.argv[3:]:
    acc, url = a.split("=", 1)
    nodes[acc] = urllib.parse.urlsplit(url)
lock = threading.Lock()
PATH = re.compile(r"^/insert/(\d+)(?::(\d+))?/prometheus/api/v1/write$")
SKIP = {"host", "content-length", "connection", "transfer-encoding"}


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        m = PATH.match(urllib.parse.urlsplit(self.path).path)
        acc = m.group(1) if m else "-"
        if not m:
            status, answer = 400, b"unsupported path requested\n"
        elif acc not in nodes:
            status, answer = 400, b"no node for this accountID\n"
        else:
            up = nodes[acc]
            status, answer = 503, b"node down\n"
            try:
                c = http.client.HTTPConnection(up.hostname, up.port, timeout=10)
                hdrs = {k: v for k, v in self.headers.items() if k.lower() not in SKIP}
                c.request("POST", "/api/v1/write", body=body, headers=hdrs)
                r = c.getresponse()
                status, answer = r.status, r.read()
                c.close()
            except OSError:
                pass
        with lock:
            log.write("%.6f %d %s %s\n" % (time.time(), status, acc, self.path))
        self.send_response(status)
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *a):
        pass


ThreadingHTTPServer.daemon_threads = True
ThreadingHTTPServer(("127.0.0.1", port), H).serve_forever()
