#!/usr/bin/env python3
"""rw_fake_receiver.py - a scripted HTTP receiver for the retry test.

POSTs to /retry get, in turn: 503 with "Retry-After: 2", 429 with
"Retry-After: 1", 500 without it, then 204 for ever. POSTs to /noretry
always get 429 with "Retry-After: 1". POSTs to /huge get 503 with
"Retry-After: 100000" (a day and more) once, then 204. Each request is logged as one JSON
line: time, path, status answered, SHA-256 of the body, headers.

usage: rw_fake_receiver.py PORT LOG
"""
import hashlib
import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

port, log = int(sys.argv[1]), sys.argv[2]
script = [(503, "2"), (429, "1"), (500, None)]
huge = [(503, "100000")]


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path.startswith("/noretry"):
            status, ra = 429, "1"
        elif self.path.startswith("/huge"):
            status, ra = huge.pop(0) if huge else (204, None)
        elif script:
            status, ra = script.pop(0)
        else:
            status, ra = 204, None
        with open(log, "a") as f:
            f.write(json.dumps({"t": time.time(), "path": self.path, "status": status,
                                "sha": hashlib.sha256(body).hexdigest()}) + "\n")
        self.send_response(status)
        if ra:
            self.send_header("Retry-After", ra)
        answer = b"" if status == 204 else b"scripted answer %d" % status
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args):
        pass


ThreadingHTTPServer(("127.0.0.1", port), H).serve_forever()
