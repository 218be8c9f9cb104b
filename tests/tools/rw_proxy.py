#!/usr/bin/env python3
"""rw_proxy.py - a logging pass-through in front of a remote_write receiver
(remote_write_fleet.sh): every POST is forwarded to UPSTREAM with its body
and headers; the answer goes back as it came, or 503 when the upstream does
not answer (a load balancer in front of a stopped receiver). Each request
is logged as one line: arrival time (unix s), status, path.

usage: rw_proxy.py PORT UPSTREAM_BASE_URL LOG
"""
import http.client
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

port, upstream, log = int(sys.argv[1]), sys.argv[2], sys.argv[3]
up = urllib.parse.urlsplit(upstream)
lock = threading.Lock()
out = open(log, "a", buffering=1)
SKIP = {"host", "content-length", "connection", "transfer-encoding"}


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        t = time.time()
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        status, answer = 503, b"upstream down"
        try:
            c = http.client.HTTPConnection(up.hostname, up.port, timeout=5)
            hdrs = {k: v for k, v in self.headers.items() if k.lower() not in SKIP}
            c.request("POST", self.path, body=body, headers=hdrs)
            r = c.getresponse()
            status, answer = r.status, r.read()
            c.close()
        except OSError:
            pass
        with lock:
            out.write("%.6f %d %s\n" % (t, status, self.path))
        self.send_response(status)
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args):
        pass


ThreadingHTTPServer.daemon_threads = True
ThreadingHTTPServer.request_queue_size = 1024
ThreadingHTTPServer(("127.0.0.1", port), H).serve_forever()
