#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""slow_clients.py - clients that hold a scrape endpoint's connections.

    slow_clients.py PORT --count N [--source A,B,...] [--every S] [--for S]

opens N connections to 127.0.0.1:PORT, from the source addresses given in
turn (127.0.0.0/8 is all this host's on Linux), and on each sends one byte
of a request that never ends every S seconds ("drip"; --every 0: nothing
at all, an idle connect). It watches each until the server closes it or
--for seconds pass, and prints one line:

    connected N refused R dropped D open O refuse_max T1 drop_min T2 drop_max T3 answered A

refused: closed by the server within --refuse-within seconds (default 1) of
the connect, before the client's first byte could matter; dropped: closed
later; open: still open at the end; answered: connections on which the
server sent any bytes (a refusal is a close without an answer). The times
are seconds from each connection's connect. Exit status 0 unless a connect
itself failed.
"""
import argparse
import selectors
import socket
import sys
import time

REQUEST = b"GET /metrics HTTP/1.1\r\nHost: x\r\n"
PAD = b"X-Slow: a\r\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("port", type=int)
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--source", default="127.0.0.1")
    ap.add_argument("--every", type=float, default=2.0)
    ap.add_argument("--for", dest="duration", type=float, default=10.0)
    ap.add_argument("--refuse-within", type=float, default=1.0)
    a = ap.parse_args()
    sources = a.source.split(",")
    sel = selectors.DefaultSelector()
    conns = []
    for i in range(a.count):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind((sources[i % len(sources)], 0))
        try:
            s.connect(("127.0.0.1", a.port))
        except OSError as e:
            print("connect %d failed: %s" % (i, e), file=sys.stderr)
            return 1
        s.setblocking(False)
        c = {"s": s, "t0": time.monotonic(), "sent": 0, "closed": None,
             "answered": False, "next": time.monotonic() + (a.every or 1e9)}
        # A drip client's first byte right away, the rest every --every.
        if a.every:
            c["next"] = c["t0"]
        conns.append(c)
        sel.register(s, selectors.EVENT_READ, c)
    end = time.monotonic() + a.duration
    stream = REQUEST + PAD * 100000
    while time.monotonic() < end and any(c["closed"] is None for c in conns):
        now = time.monotonic()
        for c in conns:
            if c["closed"] is None and a.every and now >= c["next"]:
                try:
                    c["s"].send(stream[c["sent"]:c["sent"] + 1])
                    c["sent"] += 1
                except OSError:
                    pass  # the read side says when it closed
                c["next"] = now + a.every
        for key, _ in sel.select(timeout=0.05):
            c = key.data
            try:
                data = c["s"].recv(4096)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            if data:
                c["answered"] = True
                continue
            c["closed"] = time.monotonic() - c["t0"]
            sel.unregister(c["s"])
    refused = [c["closed"] for c in conns
               if c["closed"] is not None and c["closed"] <= a.refuse_within and not c["answered"]]
    dropped = [c["closed"] for c in conns
               if c["closed"] is not None and (c["closed"] > a.refuse_within or c["answered"])]
    still = sum(c["closed"] is None for c in conns)
    print("connected %d refused %d dropped %d open %d refuse_max %.2f drop_min %.2f drop_max %.2f answered %d" % (
        len(conns), len(refused), len(dropped), still, max(refused, default=0),
        min(dropped, default=0), max(dropped, default=0), sum(c["answered"] for c in conns)))
    sys.stdout.flush()
    for c in conns:
        c["s"].close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
