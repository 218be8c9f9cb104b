#!/usr/bin/env python3
"""rw_tls_front.py - a TLS front for the remote_write TLS test.

Prometheus cannot check bearer tokens itself, so this small HTTPS server
stands in front of it: it answers 401 unless the request carries
"Authorization: Bearer <token>", records every request's headers (one JSON
object per line) and forwards accepted bodies unchanged to the upstream
write URL, answering with the upstream's status and body.

usage: rw_tls_front.py PORT CERT KEY TOKEN_FILE UPSTREAM_URL CA_FILE LOG
"""
import json
import ssl
import sys
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

port, cert, key, token_file, upstream, ca, log = sys.argv[1:8]
with open(token_file) as f:
    token = f.read().strip()
upstream_ctx = ssl.create_default_context(cafile=ca)


class Front(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with open(log, "a") as f:
            f.write(json.dumps(dict(self.headers.items())) + "\n")
        if self.headers.get("Authorization") != "Bearer " + token:
            self.send_response(401)
            self.end_headers()
            self.wfile.write(b"bad or missing bearer token")
            return
        req = urllib.request.Request(upstream, data=body, method="POST")
        for h in ("Content-Encoding", "Content-Type", "X-Prometheus-Remote-Write-Version",
                  "User-Agent"):
            if self.headers.get(h):
                req.add_header(h, self.headers[h])
        try:
            with urllib.request.urlopen(req, context=upstream_ctx, timeout=10) as r:
                status, answer = r.status, r.read()
        except urllib.error.HTTPError as e:
            status, answer = e.code, e.read()
        except OSError as e:
            status, answer = 502, str(e).encode()
        self.send_response(status)
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args):
        pass


srv = ThreadingHTTPServer(("127.0.0.1", int(port)), Front)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
srv.serve_forever()
