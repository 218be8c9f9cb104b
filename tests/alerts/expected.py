#!/usr/bin/env python3
"""expected.py - which alerts a simulated machine must raise, from its
description alone (and the simulator's ground truth for traffic), for
tests/integration/alerts.sh.

    expected.py MACHINE.json INSTANCE T_FIRST T_END TRUTH_FILE

prints one line per expected alert series, "ALERTNAME KEY", and one per
series that may or may not fire because the description puts it within a
margin of a threshold, "maybe ALERTNAME KEY". KEY names the alert's series:
"instance=...,bdf=..." or "instance=...,port=...,direction=...".

The rules it applies are the alerts' definitions (docs/alerts.md) worked out
on the description's own terms (docs/simulator.md): a link's trained speed
and width are the best both ends support unless `speed`/`width` say less; a
function's MPS is its `mps`, else (Root Port, RCiEP) its `mpss`, else
min(`mpss`, the parent's MPS); AER counts are initial + floor(per_second *
t). Nothing here reads what pciescope computes.
"""
import json
import math
import re
import sys

SPEEDS = {"2.5": 2.5, "5": 5.0, "8": 8.0, "16": 16.0, "32": 32.0, "64": 64.0}


def strip_comments(text):
    """JSON with // and /* */ comments (outside strings) -> JSON."""
    out, i, n, in_str = [], 0, len(text), False
    while i < n:
        c = text[i]
        if in_str:
            out.append(c)
            if c == "\\":
                out.append(text[i + 1])
                i += 1
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
            out.append(c)
        elif text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
            continue
        elif text.startswith("/*", i):
            i = text.index("*/", i) + 2
            continue
        else:
            out.append(c)
        i += 1
    return "".join(out)


def gts(text):
    m = re.match(r"\s*([0-9.]+)\s*GT/s", text)
    v = float(m.group(1))
    return v


def lane_bytes(speed):
    """Bytes per second one lane carries after encoding (as the kernel)."""
    if speed <= 5:
        return speed * 1e9 * 8 / 10 / 8
    if speed < 64:
        return speed * 1e9 * 128 / 130 / 8
    return speed * 1e9 / 8


class Fn:
    def __init__(self, d, parent, kind):
        self.d, self.parent, self.kind = d, parent, kind
        self.bdf = d["bdf"]
        self.children = []
        self.mpss = d.get("mpss", 256)
        if "mps" in d:
            self.mps = d["mps"]
        elif kind in ("root_port", "rciep") or parent is None:
            self.mps = self.mpss
        else:
            self.mps = min(self.mpss, parent.mps)


def walk(machine):
    fns = []

    def add(d, parent, kind):
        f = Fn(d, parent, kind)
        fns.append(f)
        if parent:
            parent.children.append(f)
        for c in d.get("children", []):
            add(c, f, c.get("kind", "endpoint"))
        for c in d.get("downstream", []):
            add(c, f, "downstream_port")
        return f

    for sicl in machine.get("sicls", []):
        for core in sicl.get("cores", []):
            for rp in core.get("root_ports", []):
                add(rp, None, "root_port")
        for r in sicl.get("rcieps", []):
            add(r, None, "rciep")
    amd = machine.get("amd") if isinstance(machine.get("amd"), dict) else {}
    for sock in amd.get("sockets", []):
        for rc in sock.get("root_complexes", []):
            for rp in rc.get("root_ports", []):
                add(rp, None, "root_port")
    for rc in machine.get("root_complexes", []):
        for rp in rc.get("root_ports", []):
            add(rp, None, "root_port")
    intel = machine.get("intel") if isinstance(machine.get("intel"), dict) else {}
    for sock in intel.get("sockets", []):
        for stack in sock.get("iio_stacks", []):
            for rp in stack.get("root_ports", []):
                add(rp, None, "root_port")
    nvidia = machine.get("nvidia") if isinstance(machine.get("nvidia"), dict) else {}
    for sock in nvidia.get("sockets", []):
        for rp in sock.get("root_ports", []):
            add(rp, None, "root_port")
    return fns


def link_of(child):
    """(trained speed, trained width, best speed, best width) of the link
    above @child."""
    p = child.parent
    lc, lp = child.d.get("link", {}), p.d.get("link", {})
    best_s = min(gts(lc["max_speed"]), gts(lp["max_speed"]))
    best_w = min(lc["max_width"], lp["max_width"])
    sp = lc.get("speed", lp.get("speed"))
    wd = lc.get("width", lp.get("width"))
    return (gts(sp) if sp else best_s, wd if wd is not None else best_w, best_s, best_w)


def below(f, port):
    """Whether function @f sits below @port."""
    p = f.parent
    while p is not None:
        if p is port:
            return True
        p = p.parent
    return False


def main():
    path, inst, t_first, t_end, truth_path = sys.argv[1:6]
    t_first, t_end = float(t_first), float(t_end)
    machine = json.loads(strip_comments(open(path).read()))
    fns = walk(machine)
    by_bdf = {f.bdf: f for f in fns}
    out = []

    # Downtrained: the lower end of every link trained below its best. A
    # flapping link is downtrained half of the time (maybe), and flaps when
    # it retrains at least 3 times within the run (margin: one period).
    for f in fns:
        if f.parent is None or "link" not in f.d:
            continue
        s, w, bs, bw = link_of(f)
        period = f.d["link"].get("flap_period_s", 0)
        if period:
            flips = math.floor(t_end / period) - math.floor(t_first / period)
            if flips - 1 >= 3:
                out.append(f"PCIeLinkFlapping instance={inst},bdf={f.bdf}")
            elif flips + 1 >= 3:
                out.append(f"maybe PCIeLinkFlapping instance={inst},bdf={f.bdf}")
            out.append(f"maybe PCIeLinkDowntrained instance={inst},bdf={f.bdf}")
        elif w > 0 and (s < bs or w < bw):
            out.append(f"PCIeLinkDowntrained instance={inst},bdf={f.bdf}")

    # MPS above the link partner's: on the side whose MPS is larger.
    for f in fns:
        if f.parent is None:
            continue
        if f.mps > f.parent.mps:
            out.append(f"PCIeMPSMisconfigured instance={inst},bdf={f.bdf}")
        elif f.parent.mps > f.mps:
            out.append(f"PCIeMPSMisconfigured instance={inst},bdf={f.parent.bdf}")

    # AER: an uncorrectable count that moves within the run; a correctable
    # rate above 0.1/s. Within a margin of either: maybe.
    margin = 3.0
    for f in fns:
        aer = f.d.get("aer")
        if not isinstance(aer, dict):
            continue
        for sev in ("fatal", "nonfatal"):
            moves, maybe = False, False
            for c in aer.get(sev, {}).values():
                r = c.get("per_second", 0) if isinstance(c, dict) else 0
                if r <= 0:
                    continue
                lo = math.floor(r * (t_first + margin))
                hi_min = math.floor(r * (t_end - margin))
                hi_max = math.floor(r * (t_end + margin))
                lo_min = math.floor(r * max(t_first - margin, 0))
                if hi_min > lo:
                    moves = True
                elif hi_max > lo_min:
                    maybe = True
            if moves:
                out.append(f"PCIeAERUncorrectableErrors instance={inst},bdf={f.bdf},aer_severity={sev}")
            elif maybe:
                out.append(f"maybe PCIeAERUncorrectableErrors instance={inst},bdf={f.bdf},aer_severity={sev}")
        # rate(...[10m]) divides the increase it sees by the 600 s of its
        # range: a host that has run for less sees that share of the rate.
        rate = sum(c.get("per_second", 0) for c in aer.get("correctable", {}).values() if isinstance(c, dict))
        rate *= min(t_end - t_first, 600.0) / 600.0
        if rate > 0.15:
            out.append(f"PCIeAERCorrectableErrorRate instance={inst},bdf={f.bdf},aer_severity=correctable")
        elif rate > 0.05:
            out.append(f"maybe PCIeAERCorrectableErrorRate instance={inst},bdf={f.bdf},aer_severity=correctable")

    # Saturation: a Root Port's true payload per direction over the run
    # (what its link carried: `sim_truth ... payload`) against what the
    # link carries of payload at its MPS, per kind of TLP: 24 bytes of
    # overhead for a 4DW request, 20 for a completion (docs/metrics.md).
    # The MPS is the largest on the link: the port's or one below it.
    by_dir = {}
    for line in open(truth_path):
        parts = line.split()
        if len(parts) != 4 or parts[0] == "iio":
            continue
        port, cls, payload = parts[0], parts[1], float(parts[2])
        rp = by_bdf.get(port)
        if rp is None:
            continue
        mps = max([rp.mps] + [f.mps for f in fns if below(f, rp)])
        overhead = 20 if cls.endswith("cpl") else 24
        by_dir[(port, cls[:2])] = by_dir.get((port, cls[:2]), 0) + payload * (mps + overhead) / mps
    for (port, d), wire in sorted(by_dir.items()):
        rp = by_bdf.get(port)
        if rp is None or not rp.children:
            continue
        s, w, _, _ = link_of(rp.children[0])
        cap = lane_bytes(s) * w
        util = wire / cap if cap else 0
        key = f"instance={inst},port={port},direction={d}"
        if util > 0.95:
            out.append(f"PCIeLinkSaturated {key}")
        elif util > 0.85:
            out.append(f"maybe PCIeLinkSaturated {key}")

    # AMD data fabric: per IO root complex (mapped to its root bus by the
    # test's configuration), its DMA (`sim_truth` "df" lines) against the
    # links of its Root Ports together, at the smallest MPS among them:
    # writes as 4DW requests (rx), read data as completions (tx).
    amd = machine.get("amd") if isinstance(machine.get("amd"), dict) else {}
    rcs = {}
    for sock in amd.get("sockets", []):
        for rc in sock.get("root_complexes", []):
            rcs[(str(sock["id"]), str(rc["index"]))] = [by_bdf[p["bdf"]] for p in rc.get("root_ports", [])]
    for line in open(truth_path):
        parts = line.split()
        if len(parts) != 5 or parts[0] != "df" or (parts[1], parts[2]) not in rcs:
            continue
        ports = [p for p in rcs[(parts[1], parts[2])] if p.children]
        if not ports:
            continue
        cap = sum(lane_bytes(link_of(p.children[0])[0]) * link_of(p.children[0])[1] for p in ports)
        mps = min(max([p.mps] + [f.mps for f in fns if below(f, p)]) for p in ports)
        for d, payload, overhead in (("tx", float(parts[3]), 20), ("rx", float(parts[4]), 24)):
            util = payload * (mps + overhead) / mps / cap if cap else 0
            key = f"instance={inst},socket={parts[1]},root_complex=io{parts[2]},direction={d}"
            if util > 0.95:
                out.append(f"PCIeLinkSaturated {key}")
            elif util > 0.85:
                out.append(f"maybe PCIeLinkSaturated {key}")

    for line in out:
        print(line)


if __name__ == "__main__":
    main()
