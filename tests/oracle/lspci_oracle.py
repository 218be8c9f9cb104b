#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Outside-oracle test: compare `pciescope topology --json` with pciutils' `lspci -vv`.

pciescope decodes PCI config space itself (libpci access + its own register decoding).
This script checks that decoding against an independent implementation: pciutils'
`lspci -vv`, run on the very same config space (a libpci dump file via `-F FILE`, or
the live machine).  It only uses the Python standard library.

Usage
-----
    lspci_oracle.py --pciescope PATH [--lspci PATH] [--dump FILE ...] [--live]
    lspci_oracle.py --self-test [-v] [--lspci PATH] [--dump FILE ...]

  --dump FILE   a config-space dump in libpci's dump format (`lspci -xxxx` output,
                optionally with the -vv text lines in it).  Runs
                `pciescope topology --json --pci-dump FILE` and `lspci -F FILE -vv -D`.
                May be given several times and/or with several files.
  --live        the machine's real devices: `pciescope topology --json` and
                `lspci -vv -D`.  Run it as root: unprivileged lspci (and sysfs) only
                see the first 64 bytes of config space, lspci then prints
                `Capabilities: <access denied>` and every function is "not comparable".
  --self-test   no pciescope needed: run lspci on the dumps (default: every *.txt in
                the shared fixture directory) and print what the parser extracted, so the
                parser can be sanity-checked on its own.  Exits 1 if a dump yields a
                block the parser does not understand.

Output is TAP (version 13, readable by TAP 12 consumers such as `prove`):
  * one line per source (dump file or "live"): the set of BDFs must be identical, with
    no duplicates and in the documented "dddd:bb:dd.f" form;
  * one line per (source, function present on both sides) listing the fields compared,
    or, when something differs, `not ok` with every mismatching field:
    `field expected X got Y`;
  * functions whose PCIe capability lspci could not read (config space too short:
    `<access denied>`, header-only Express capability, broken chain) are reported as
    `ok N - ... # SKIP not comparable: <why>`.
Exit status: 0 if every test line is ok (skips included), 1 otherwise, 2 on usage error.

What is compared (see docs/topology-json.md for the JSON keys)
------------------------------------------------------------------
For a function whose lspci block has `Capabilities: [xx] Express (vN) <Type>`:
  port_type                 <- the <Type> string (mapping in PORT_TYPES below)
  mpss_bytes                <- `DevCap: MaxPayload N bytes`
  mps_bytes, mrrs_bytes     <- `DevCtl: ... MaxPayload N bytes, MaxReadReq N bytes`
  link.max_speed_gts/width  <- `LnkCap: Port #N, Speed X, Width xN`
  link.current_speed_gts/.. <- `LnkSta: Speed X, Width xN`
  link.supported_speeds_gts <- `LnkCap2: Supported Link Speeds: A-BGT/s` (only when
                               lspci prints that line with a parseable range)
  `link` must be absent when lspci prints no LnkCap (RC integrated endpoints and
  RC event collectors: pciutils does not print link registers for them).
For a function without an Express capability: port_type must be "pci" and the
PCIe-only keys (mpss_bytes, mps_bytes, mrrs_bytes, link) must be absent.
Speeds are compared as floats with tolerance 1e-9; lspci's "unknown" speed means the
JSON value must be null.

lspci 3.9 output facts this parser relies on (checked on the pciutils test dumps):
  * `lspci -D` always prints the domain: "0000:00:02.0 PCI bridge: ...".  Without -D
    the domain is printed only when some device has a non-zero one; both are accepted.
  * Speeds are printed as "2.5GT/s", "5GT/s", "8GT/s", "16GT/s", "32GT/s", "64GT/s",
    or "unknown" (reserved encodings).  LnkSta may append " (downgraded)" or
    " (overdriven)" after the speed and the width (older pciutils: " (ok)").
  * DevCtl spans three lines; MaxPayload/MaxReadReq are on the third:
        DevCtl: CorrErr- NonFatalErr- FatalErr- UnsupReq-
                RlxdOrd+ ExtTag+ PhantFunc- AuxPwr- NoSnoop+
                MaxPayload 256 bytes, MaxReadReq 512 bytes
    so each register's continuation lines are joined before matching.
  * RC integrated endpoints and event collectors: no LnkCap/LnkSta/LnkCap2 lines.
  * Capability version 1: no DevCap2/DevCtl2/LnkCap2/LnkCtl2/LnkSta2 lines at all.
  * LnkCap2 is printed only when the register is non-zero, and never for
    (legacy) endpoints that are not device 0 function 0.  Its speed text is a range
    derived from the highest set bit of the vector ("2.5-8GT/s", "2.5GT/s"), or
    "RsvdP" (3.9: any of bits 5-6, i.e. 64 GT/s or reserved), or "Unknown" (vector 0).
  * Config space too short: `Capabilities: <access denied>` instead of a capability;
    an Express capability may be printed as a header line without any register lines.
"""

import argparse
import glob
import json
import math
import os
import re
import shutil
import subprocess
import sys

SHARED_DUMP_DIR = "/work/shared/fixtures/pcidump"
SPEED_TOL = 1e-9
# Every speed a PCIe link can run at, GT/s; a LnkCap2 range "A-B" is the subset A..B.
SPEED_LADDER = (2.5, 5.0, 8.0, 16.0, 32.0, 64.0)
CMD_TIMEOUT_S = 120

# lspci's Express device/port type text (ls-caps.c: cap_express) -> our port_type.
# The "(Slot+)"/"(Slot-)" suffix is stripped before the lookup.
PORT_TYPES = {
    "Endpoint": "endpoint",
    "Legacy Endpoint": "legacy_endpoint",
    "Root Port": "root_port",
    "Upstream Port": "upstream_port",
    "Downstream Port": "downstream_port",
    "PCI-Express to PCI/PCI-X Bridge": "pcie_to_pci_bridge",
    "PCI/PCI-X to PCI-Express Bridge": "pci_to_pcie_bridge",
    "Root Complex Integrated Endpoint": "rc_integrated_endpoint",
    "Root Complex Event Collector": "rc_event_collector",
}
# lspci prints "Unknown type N" for reserved type codes.
UNKNOWN_TYPE_RE = re.compile(r"^Unknown type \d+$")

# ---------------------------------------------------------------------------
# BDF helpers
# ---------------------------------------------------------------------------

# A device header line of `lspci -vv`: BDF at column 0, then a space.
# Domain optional (lspci without -D omits it when all domains are 0).
HDR_RE = re.compile(r"^(?:([0-9a-fA-F]{4,}):)?([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-7])\s")
# The documented JSON form: "dddd:bb:dd.f", lower-case hex, domain 4+ digits.
CANON_BDF_RE = re.compile(r"^[0-9a-f]{4,}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")
LOOSE_BDF_RE = re.compile(r"^(?:([0-9a-fA-F]+):)?([0-9a-fA-F]{1,2}):([0-9a-fA-F]{1,2})\.([0-7])$")


def fmt_bdf(dom, bus, dev, fn):
    return "%04x:%02x:%02x.%x" % (dom, bus, dev, fn)


def norm_bdf(text):
    """Canonical "dddd:bb:dd.f" for a loosely written BDF, or None."""
    m = LOOSE_BDF_RE.match(text.strip())
    if not m:
        return None
    dom = int(m.group(1), 16) if m.group(1) else 0
    return fmt_bdf(dom, int(m.group(2), 16), int(m.group(3), 16), int(m.group(4)))


def bdf_key(bdf):
    m = LOOSE_BDF_RE.match(bdf)
    return tuple(int(m.group(i), 16) if m.group(i) else 0 for i in (1, 2, 3, 4))


# ---------------------------------------------------------------------------
# lspci -vv parser
# ---------------------------------------------------------------------------

CAP_LINE_RE = re.compile(r"^\tCapabilities: (.*)$")
# Standard-space Express capability.  Extended caps print "[100 v1]", so "Secondary PCI
# Express" etc. never match "\[hex\] Express".  "(vN) " is printed only with -vv.
EXPRESS_RE = re.compile(r"^\[([0-9a-fA-F]+)\] Express (?:\(v(\d+)\) )?(.+?), MSI [0-9a-fA-F]+$")
# A register line inside a capability body: exactly two tabs, then "Name:".
REG_LINE_RE = re.compile(r"^\t\t([A-Za-z][A-Za-z0-9]*):\s?(.*)$")

DEVCAP_RE = re.compile(r"MaxPayload (\d+) bytes")
DEVCTL_RE = re.compile(r"MaxPayload (\d+) bytes, MaxReadReq (\d+) bytes")
LNKCAP_RE = re.compile(r"Port #(\d+), Speed ([^,\s]+), Width x(\d+)")
# LnkSta: "Speed 16GT/s (downgraded), Width x2"; older pciutils: "Speed 2.5GT/s (ok), Width x1 (ok)"
LNKSTA_RE = re.compile(r"Speed ([^,\s]+)(?: \([^)]*\))?, Width x(\d+)")
LNKCAP2_RE = re.compile(r"Supported Link Speeds: ([^,]+),")
SPEED_RE = re.compile(r"^(\d+(?:\.\d+)?)GT/s$")
RANGE_RE = re.compile(r"^(\d+(?:\.\d+)?)(?:-(\d+(?:\.\d+)?))?GT/s$")


class ParseError(Exception):
    pass


def parse_speed(text):
    """lspci speed text -> (ok, value).  "8GT/s" -> 8.0; "unknown" -> None."""
    m = SPEED_RE.match(text)
    if m:
        return True, float(m.group(1))
    if text.lower() == "unknown":
        return True, None
    return False, None


def parse_speed_range(text):
    """LnkCap2 "2.5-8GT/s" -> [2.5, 5.0, 8.0]; "2.5GT/s" -> [2.5]; RsvdP/Unknown -> None."""
    m = RANGE_RE.match(text.strip())
    if not m:
        return None
    lo = float(m.group(1))
    hi = float(m.group(2)) if m.group(2) else lo
    return [s for s in SPEED_LADDER if lo - SPEED_TOL <= s <= hi + SPEED_TOL]


def split_blocks(text):
    """Split `lspci -vv` output into [(bdf, [lines of the block])]."""
    blocks = []
    cur = None
    for line in text.splitlines():
        m = HDR_RE.match(line)
        if m:
            dom = int(m.group(1), 16) if m.group(1) else 0
            bdf = fmt_bdf(dom, int(m.group(2), 16), int(m.group(3), 16), int(m.group(4)))
            cur = (bdf, [line])
            blocks.append(cur)
        elif cur is not None:
            cur[1].append(line)
        elif line.strip():
            raise ParseError("text before the first device header: %r" % line)
    return blocks


def parse_registers(body):
    """Express capability body lines -> {register name: joined text}.

    A register starts on a line with exactly two leading tabs ("\\t\\tDevCtl:\\t...");
    lines with three tabs are its continuation and are appended (space-separated),
    so multi-line registers such as DevCtl can be matched as one string."""
    regs = {}
    last = None
    for line in body:
        m = REG_LINE_RE.match(line)
        if m:
            last = m.group(1)
            # Keep the first occurrence if a name repeats (it does not in 3.9).
            if last not in regs:
                regs[last] = m.group(2).strip()
            else:
                last = None
        elif line.startswith("\t\t\t") and last is not None:
            regs[last] += " " + line.strip()
    return regs


def parse_block(bdf, lines):
    """One device block -> dict describing what lspci showed.

    Keys: bdf, express (bool), comparable (bool), why (reason if not comparable),
    notes (list), and for Express functions: cap_offset, cap_version, type_text,
    port_type, mpss, mps, mrrs, lnkcap (dict or None), lnksta (dict or None),
    lnkcap2_text (str or None), supported (list or None)."""
    f = {"bdf": bdf, "express": False, "comparable": True, "why": None, "notes": []}
    access_denied = False
    chain_problem = None
    express_body = None
    n_express = 0
    i = 1
    while i < len(lines):
        line = lines[i]
        m = CAP_LINE_RE.match(line)
        if not m:
            i += 1
            continue
        content = m.group(1)
        if content.startswith("<access denied>"):
            access_denied = True
        elif "<chain broken>" in content or "<chain looped>" in content:
            chain_problem = content
        em = EXPRESS_RE.match(content)
        # Collect this capability's body: following lines with 2+ leading tabs.
        j = i + 1
        while j < len(lines) and lines[j].startswith("\t\t"):
            j += 1
        if em:
            n_express += 1
            if n_express == 1:
                f["express"] = True
                f["cap_offset"] = int(em.group(1), 16)
                f["cap_version"] = int(em.group(2)) if em.group(2) else None
                type_text = re.sub(r" \(Slot[+-]\)$", "", em.group(3))
                f["type_text"] = type_text
                if type_text in PORT_TYPES:
                    f["port_type"] = PORT_TYPES[type_text]
                elif UNKNOWN_TYPE_RE.match(type_text):
                    f["port_type"] = "unknown"
                else:
                    raise ParseError("%s: unrecognised Express type %r" % (bdf, em.group(3)))
                express_body = lines[i + 1:j]
            else:
                f["notes"].append("more than one Express capability; the first is used")
        i = j

    if not f["express"]:
        if access_denied:
            f["comparable"] = False
            f["why"] = "lspci: Capabilities <access denied> (config space too short)"
        elif chain_problem:
            f["comparable"] = False
            f["why"] = "lspci: capability list %s" % chain_problem
        return f

    regs = parse_registers(express_body)
    if "DevCap" not in regs:
        # pciutils printed only the header: config_fetch of the registers failed.
        f["comparable"] = False
        f["why"] = "lspci shows an Express header but no registers (config space too short)"
        return f

    m = DEVCAP_RE.search(regs["DevCap"])
    if not m:
        raise ParseError("%s: cannot parse DevCap %r" % (bdf, regs["DevCap"]))
    f["mpss"] = int(m.group(1))
    m = DEVCTL_RE.search(regs.get("DevCtl", ""))
    if not m:
        raise ParseError("%s: cannot parse DevCtl %r" % (bdf, regs.get("DevCtl")))
    f["mps"], f["mrrs"] = int(m.group(1)), int(m.group(2))

    f["lnkcap"] = None
    if "LnkCap" in regs:
        m = LNKCAP_RE.search(regs["LnkCap"])
        ok, speed = parse_speed(m.group(2)) if m else (False, None)
        if not ok:
            raise ParseError("%s: cannot parse LnkCap %r" % (bdf, regs["LnkCap"]))
        f["lnkcap"] = {"port": int(m.group(1)), "speed": speed, "speed_text": m.group(2),
                       "width": int(m.group(3))}
    f["lnksta"] = None
    if "LnkSta" in regs:
        m = LNKSTA_RE.search(regs["LnkSta"])
        ok, speed = parse_speed(m.group(1)) if m else (False, None)
        if not ok:
            raise ParseError("%s: cannot parse LnkSta %r" % (bdf, regs["LnkSta"]))
        f["lnksta"] = {"speed": speed, "speed_text": m.group(1), "width": int(m.group(2))}
    f["lnkcap2_text"] = None
    f["supported"] = None
    if "LnkCap2" in regs:
        m = LNKCAP2_RE.search(regs["LnkCap2"])
        if not m:
            raise ParseError("%s: cannot parse LnkCap2 %r" % (bdf, regs["LnkCap2"]))
        f["lnkcap2_text"] = m.group(1).strip()
        f["supported"] = parse_speed_range(f["lnkcap2_text"])
        if f["supported"] is None:
            f["notes"].append("LnkCap2 speeds %r not a range: supported_speeds_gts not compared"
                              % f["lnkcap2_text"])
    return f


def parse_lspci(text):
    """Whole `lspci -vv` output -> ordered list of function dicts (see parse_block)."""
    funcs = []
    seen = set()
    for bdf, lines in split_blocks(text):
        if bdf in seen:
            raise ParseError("lspci printed %s twice" % bdf)
        seen.add(bdf)
        funcs.append(parse_block(bdf, lines))
    return funcs


# ---------------------------------------------------------------------------
# Running the tools
# ---------------------------------------------------------------------------

def run(cmd):
    """Run cmd -> (rc, stdout, stderr); rc is None with stderr = reason if it could not run."""
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=CMD_TIMEOUT_S, env=dict(os.environ, LC_ALL="C"))
    except (OSError, subprocess.SubprocessError) as e:
        return None, "", "%s: %s" % (cmd[0], e)
    return (p.returncode, p.stdout.decode("utf-8", "replace"),
            p.stderr.decode("utf-8", "replace"))


def find_lspci(path):
    if path:
        return path
    for cand in (shutil.which("lspci"), "/usr/bin/lspci", "/usr/sbin/lspci", "/sbin/lspci"):
        if cand and os.access(cand, os.X_OK):
            return cand
    return "lspci"


def run_lspci(lspci, dump):
    """-> (list of parsed functions, None) or (None, error text)."""
    cmd = [lspci] + (["-F", dump] if dump else []) + ["-vv", "-D"]
    rc, out, err = run(cmd)
    if rc is None:
        return None, err
    if rc != 0:
        return None, "%s exited %d: %s" % (" ".join(cmd), rc, tail(err))
    try:
        return parse_lspci(out), None
    except ParseError as e:
        return None, "cannot parse lspci output: %s" % e


def tail(text, n=300):
    text = " ".join(text.split())
    return text if len(text) <= n else "..." + text[-n:]


# ---------------------------------------------------------------------------
# Comparison
# ---------------------------------------------------------------------------

MISSING = object()  # marks a key absent from the JSON object


def show(v):
    return "absent" if v is MISSING else json.dumps(v)


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def same_speed(exp, got):
    """exp: float or None (lspci "unknown" -> JSON null)."""
    if exp is None:
        return got is None
    return is_num(got) and math.isfinite(got) and abs(float(got) - exp) <= SPEED_TOL


def same_speed_set(exp, got):
    if not isinstance(got, list) or not all(is_num(x) for x in got) or len(got) != len(exp):
        return False
    return all(abs(float(a) - b) <= SPEED_TOL for a, b in zip(sorted(got), sorted(exp)))


def compare_function(f, obj):
    """lspci function f vs JSON object obj -> (list of compared field names, list of mismatches)."""
    fields, bad = [], []

    def check(name, exp, got, same, exp_text=None):
        fields.append(name)
        if not same(exp, got):
            bad.append("%s expected %s got %s"
                       % (name, exp_text if exp_text is not None else show(exp), show(got)))

    eq_int = lambda e, g: is_int(g) and g == e
    eq_str = lambda e, g: isinstance(g, str) and g == e
    absent = lambda e, g: g is MISSING
    get = lambda o, k: o.get(k, MISSING) if isinstance(o, dict) else MISSING

    if not f["express"]:
        check("port_type", "pci", get(obj, "port_type"), eq_str)
        for k in ("mpss_bytes", "mps_bytes", "mrrs_bytes", "link"):
            check(k, MISSING, get(obj, k), absent, "absent")
        return fields, bad

    check("port_type", f["port_type"], get(obj, "port_type"), eq_str)
    check("mpss_bytes", f["mpss"], get(obj, "mpss_bytes"), eq_int)
    check("mps_bytes", f["mps"], get(obj, "mps_bytes"), eq_int)
    check("mrrs_bytes", f["mrrs"], get(obj, "mrrs_bytes"), eq_int)

    link = get(obj, "link")
    if f["lnkcap"] is None and f["lnksta"] is None:
        # No link registers shown (RCiEP / RCEC): the JSON must have no link object.
        check("link", MISSING, link, absent, "absent")
        return fields, bad
    if not isinstance(link, dict):
        fields.append("link")
        bad.append("link expected an object got %s" % show(link))
        return fields, bad
    if f["lnkcap"] is not None:
        c = f["lnkcap"]
        check("link.max_speed_gts", c["speed"], get(link, "max_speed_gts"), same_speed,
              "%s (lspci %s)" % (show(c["speed"]), c["speed_text"]))
        check("link.max_width", c["width"], get(link, "max_width"), eq_int)
    if f["lnksta"] is not None:
        s = f["lnksta"]
        check("link.current_speed_gts", s["speed"], get(link, "current_speed_gts"), same_speed,
              "%s (lspci %s)" % (show(s["speed"]), s["speed_text"]))
        check("link.current_width", s["width"], get(link, "current_width"), eq_int)
    if f["supported"] is not None:
        check("link.supported_speeds_gts", f["supported"], get(link, "supported_speeds_gts"),
              same_speed_set, "%s (lspci %s)" % (show(f["supported"]), f["lnkcap2_text"]))
    return fields, bad


class Tap:
    """Collects TAP lines; the plan is printed first, so results are buffered."""

    def __init__(self):
        self.lines = []  # (ok, description, directive or None, [diagnostic lines])

    def add(self, ok, desc, diag=(), skip=None):
        self.lines.append((ok, desc, skip, list(diag)))

    @staticmethod
    def escape(desc):
        # TAP: "#" starts a directive; a literal one in a description is written "\#".
        return " ".join(desc.split()).replace("\\", "\\\\").replace("#", "\\#")

    def emit(self, header=()):
        print("TAP version 13")
        print("1..%d" % len(self.lines))
        for h in header:
            print("# " + h)
        for n, (ok, desc, skip, diag) in enumerate(self.lines, 1):
            line = "%s %d - %s" % ("ok" if ok else "not ok", n, self.escape(desc))
            if skip:
                line += " # SKIP " + " ".join(skip.split())
            print(line)
            for d in diag:
                print("# " + d)
        failed = sum(1 for ok, _, _, _ in self.lines if not ok)
        skipped = sum(1 for _, _, skip, _ in self.lines if skip)
        print("# %d tests, %d failed, %d skipped" % (len(self.lines), failed, skipped))
        return failed


def check_source(tap, name, pciescope, lspci, dump):
    """Add the TAP lines of one source (a dump file, or the live machine if dump is None)."""
    funcs, err = run_lspci(lspci, dump)
    if funcs is None:
        tap.add(False, "%s BDF set: oracle failed: %s" % (name, err))
        return

    cmd = [pciescope, "topology", "--json"] + (["--pci-dump", dump] if dump else [])
    rc, out, perr = run(cmd)
    problems = []
    data = None
    if rc is None:
        problems.append("cannot run pciescope: %s" % perr)
    else:
        if rc != 0:
            problems.append("pciescope exited %d (stderr: %s)" % (rc, tail(perr) or "empty"))
        try:
            data = json.loads(out)
        except ValueError as e:
            problems.append("pciescope output is not valid JSON: %s (stdout starts %r)"
                            % (e, out[:80]))
        if data is not None and not isinstance(data, list):
            problems.append("pciescope JSON is a %s, not an array" % type(data).__name__)
            data = None

    # Index the JSON objects by canonical BDF.
    objs = {}
    if data is not None:
        for k, o in enumerate(data):
            b = o.get("bdf") if isinstance(o, dict) else None
            if not isinstance(b, str) or norm_bdf(b) is None:
                problems.append("element %d has no valid \"bdf\": %s" % (k, tail(json.dumps(o), 80)))
                continue
            if not CANON_BDF_RE.match(b):
                problems.append("bdf %r is not in the documented dddd:bb:dd.f form" % b)
            nb = norm_bdf(b)
            if nb in objs:
                problems.append("bdf %s appears twice" % nb)
                continue
            objs[nb] = o

    lspci_bdfs = [f["bdf"] for f in funcs]
    n_pcie = sum(1 for f in funcs if f["express"])
    desc = "%s BDF set (%d functions, %d with an Express capability in lspci)" % (
        name, len(funcs), n_pcie)
    if data is not None:
        missing = [b for b in lspci_bdfs if b not in objs]
        extra = sorted((b for b in objs if b not in set(lspci_bdfs)), key=bdf_key)
        if missing:
            problems.append("missing from pciescope: %s" % " ".join(missing))
        if extra:
            problems.append("not in lspci: %s" % " ".join(extra))
    diag = [] if funcs else ["lspci printed no function for %s" % name]
    if problems:
        tap.add(False, "%s: %s" % (desc, "; ".join(problems)), diag)
    else:
        tap.add(True, desc, diag)
    if data is None:
        return

    for f in funcs:
        obj = objs.get(f["bdf"])
        if obj is None:
            continue  # already reported in the BDF set line
        head = "%s %s" % (name, f["bdf"])
        diag = ["%s: %s" % (f["bdf"], n) for n in f["notes"]]
        if not f["comparable"]:
            tap.add(True, head, diag, skip="not comparable: %s" % f["why"])
            continue
        fields, bad = compare_function(f, obj)
        kind = f["port_type"] if f["express"] else "no Express cap"
        if bad:
            tap.add(False, "%s (%s): %s" % (head, kind, "; ".join(bad)), diag)
        else:
            tap.add(True, "%s (%s): %s" % (head, kind, ",".join(fields)), diag)


# ---------------------------------------------------------------------------
# --self-test
# ---------------------------------------------------------------------------

def fmt_speed(v):
    return "?" if v is None else ("%g" % v)


def self_test(lspci, dumps, verbose):
    """Parse lspci's output of every dump and print per-dump counts (no pciescope needed)."""
    failures = 0
    print("# lspci: %s (%s)" % (lspci, lspci_version(lspci)))
    print("# %-64s %5s %4s %4s %6s %6s %7s %5s" % (
        "dump", "funcs", "pcie", "skip", "lnkcap", "lnksta", "lnkcap2", "v1"))
    for d in dumps:
        funcs, err = run_lspci(lspci, d)
        name = os.path.basename(d)
        if funcs is None:
            print("FAIL %s: %s" % (name, err))
            failures += 1
            continue
        if not funcs:
            print("FAIL %s: lspci printed no device" % name)
            failures += 1
            continue
        pcie = [f for f in funcs if f["express"]]
        comp = [f for f in pcie if f["comparable"]]
        skip = [f for f in funcs if not f["comparable"]]
        print("  %-64s %5d %4d %4d %6d %6d %7d %5d" % (
            name, len(funcs), len(pcie), len(skip),
            sum(1 for f in comp if f["lnkcap"]), sum(1 for f in comp if f["lnksta"]),
            sum(1 for f in comp if f["supported"] is not None),
            sum(1 for f in pcie if f.get("cap_version") == 1)))
        # Internal consistency: every link-bearing type must have shown LnkCap and LnkSta.
        for f in comp:
            has_link = f["port_type"] not in ("rc_integrated_endpoint", "rc_event_collector")
            if has_link != (f["lnkcap"] is not None) or has_link != (f["lnksta"] is not None):
                print("FAIL %s %s: %s with lnkcap=%s lnksta=%s" % (
                    name, f["bdf"], f["port_type"], f["lnkcap"] is not None,
                    f["lnksta"] is not None))
                failures += 1
        if verbose:
            for f in funcs:
                if not f["comparable"]:
                    print("    %s SKIP %s" % (f["bdf"], f["why"]))
                elif not f["express"]:
                    print("    %s pci" % f["bdf"])
                else:
                    s = "    %s v%s %-22s mpss=%d mps=%d mrrs=%d" % (
                        f["bdf"], f["cap_version"], f["port_type"], f["mpss"], f["mps"], f["mrrs"])
                    if f["lnkcap"]:
                        s += " cap=%sGT/s x%d" % (fmt_speed(f["lnkcap"]["speed"]), f["lnkcap"]["width"])
                    if f["lnksta"]:
                        s += " sta=%sGT/s x%d" % (fmt_speed(f["lnksta"]["speed"]), f["lnksta"]["width"])
                    if f["lnkcap2_text"]:
                        s += " cap2=%s->%s" % (f["lnkcap2_text"], f["supported"])
                    print(s)
                for n in f["notes"]:
                    print("    %s note: %s" % (f["bdf"], n))
    print("# self-test %s (%d dumps, %d failures)" % (
        "passed" if not failures else "FAILED", len(dumps), failures))
    return 1 if failures else 0


def lspci_version(lspci):
    rc, out, err = run([lspci, "--version"])
    text = (out or err).strip() if rc is not None else err
    return text.splitlines()[0] if text else "version unknown"


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Compare `pciescope topology --json` with `lspci -vv` (TAP output).")
    ap.add_argument("--pciescope", metavar="PATH", help="the pciescope CLI binary")
    ap.add_argument("--lspci", metavar="PATH", help="lspci binary (default: from PATH)")
    ap.add_argument("--dump", metavar="FILE", nargs="+", action="extend", default=[],
                    help="libpci config-space dump(s) to compare on")
    ap.add_argument("--live", action="store_true", help="compare on this machine's devices")
    ap.add_argument("--self-test", action="store_true",
                    help="only run the lspci parser over the dumps and print what it found "
                         "(default dumps: %s/*.txt)" % SHARED_DUMP_DIR)
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="with --self-test: print every parsed function")
    args = ap.parse_args(argv)
    lspci = find_lspci(args.lspci)

    if args.self_test:
        dumps = args.dump or sorted(glob.glob(os.path.join(SHARED_DUMP_DIR, "*.txt")))
        if not dumps:
            ap.error("--self-test: no dumps given and none in %s" % SHARED_DUMP_DIR)
        return self_test(lspci, dumps, args.verbose)

    if not args.pciescope:
        ap.error("--pciescope PATH is required (or use --self-test)")
    if not args.dump and not args.live:
        ap.error("give --dump FILE ... and/or --live")

    tap = Tap()
    for d in args.dump:
        check_source(tap, os.path.basename(d), args.pciescope, lspci, d)
    if args.live:
        check_source(tap, "live", args.pciescope, lspci, None)
    header = ["lspci: %s (%s)" % (lspci, lspci_version(lspci)), "pciescope: %s" % args.pciescope]
    if args.live and hasattr(os, "geteuid") and os.geteuid() != 0:
        header.append("--live as non-root: lspci and sysfs see 64 bytes of config space; "
                      "functions will be SKIPped as not comparable")
    return 1 if tap.emit(header) else 0


if __name__ == "__main__":
    sys.exit(main())
