#!/bin/bash
# top.sh - `pciescope top` in a real terminal: tmux runs it on the simulated
# machines in a detached session of a fixed size, sends keys and reads the
# screen back (capture-pane). What the screen must show comes from other
# commands on the same simulated machine (topology --json, audit --json,
# pmu --json) and from the machine's description, never from a fixed list:
# a row for every Root Port, rates where a PMU measures traffic, DOWNTRAINED
# and MPS where the links and the audit say so, AER errors where the
# description makes them rise; then help, sort keys, expansion, resize, q,
# the signals, and the refusal without a terminal.
. "$(dirname "$0")/lib.sh"

TMUX_BIN=$(command -v tmux) || skip_all "tmux is not installed"
tmp=$(mktemp -d)
# A tmux server of its own for every session: a new session on a server
# that is still shutting down fails ("server exited unexpectedly").
servers=0
sock="$tmp/tmux.0.sock"
kill_servers() {
	local s
	for s in "$tmp"/tmux.*.sock; do [ -S "$s" ] && "$TMUX_BIN" -S "$s" kill-server 2>/dev/null; done
}
trap 'kill_servers; rm -rf "$tmp"' EXIT
T() { "$TMUX_BIN" -S "$sock" "$@"; }
# new_server: the next sessions go to a fresh server; the previous one ends.
new_server() {
	T kill-server 2>/dev/null
	servers=$((servers + 1))
	sock="$tmp/tmux.$servers.sock"
}
machines=$PCIESCOPE_MACHINE_DIR

# ---- reading the screen ----
cat >"$tmp/screen.py" <<'PY'
"""Reads a capture of `pciescope top` (tmux capture-pane -p) and checks it.

    screen.py CAPTURE what [ARGS]    prints what it found, exits 1 when a check fails
"""
import json, re, sys

def load(path):
    return open(path, encoding="utf-8", errors="replace").read().split("\n")

# Right-aligned numeric columns and their widths (cli/cmd_top.c).
RIGHT = {"RX B/s": 6, "TX B/s": 6, "rxMWr": 5, "rxMRd": 5, "rxCpl": 5, "txMWr": 5, "txMRd": 5,
         "txCpl": 5, "wrNs": 4, "rdNs": 4, "txNs": 4}
LEFT = ["PORT", "LINK", "FLAGS", "RX UTIL", "TX UTIL", "AER c/n/f", "PMU / DEVICE"]

def columns(lines):
    head = next((l for l in lines if l.startswith("  PORT ")), None)
    if head is None:
        sys.exit("no column header line on the screen")
    cols = {}
    for name in LEFT + list(RIGHT):
        at = head.find(name)
        if at < 0:
            sys.exit("column %r missing from the header" % name)
        cols[name] = at
    starts = sorted(cols[n] for n in LEFT)
    spans = {}
    for n in LEFT:
        nxt = [s for s in starts if s > cols[n]]
        spans[n] = (cols[n], nxt[0] if nxt else 10000)
    for n, w in RIGHT.items():
        end = cols[n] + len(n)
        spans[n] = (end - w, end)
    spans["PORT"] = (0, spans["LINK"][0])
    return spans

def parse(lines):
    """Rows (ports and IIO parts) and functions below them, in screen order."""
    spans = columns(lines)
    out = []
    for l in lines:
        m = re.match(r"^([ +-]) (0000:\S+|s\d+ iio\d+ p\d+)\s", l)
        f = re.match(r"^   `-(\S+)", l)
        if not m and not f:
            continue
        cell = {n: l[a:b].strip() for n, (a, b) in spans.items()}
        if m:
            cell.update(kind="row", id=m.group(2), mark=m.group(1))
        else:
            cell.update(kind="fn", id=f.group(1))
        out.append(cell)
    return out

def rate(text):
    if text in ("", "-"):
        return None
    m = re.fullmatch(r"([0-9.]+)([kMGTP]?)", text)
    if not m:
        sys.exit("not a rate: %r" % text)
    return float(m.group(1)) * 1000 ** ("_kMGTP".index(m.group(2)) if m.group(2) else 0)

def latency(text):
    """Nanoseconds; "12u" is in microseconds, "3m" in milliseconds."""
    if text in ("", "-"):
        return None
    m = re.fullmatch(r"(\d+)([um]?)", text)
    if not m:
        sys.exit("not a latency: %r" % text)
    return int(m.group(1)) * {"": 1, "u": 1000, "m": 1000000}[m.group(2)]

def util(text):
    if text in ("", "-"):
        return None
    m = re.fullmatch(r"\[([#.]*?)(\d+)%\]", text)
    if not m:
        sys.exit("not a utilisation bar: %r" % text)
    return int(m.group(2)), m.group(1).count("#")

def strip_comments(text):
    """The machine descriptions are JSON with /* */ and // comments."""
    out, i, in_str = [], 0, False
    while i < len(text):
        c = text[i]
        if in_str:
            out.append(c)
            if c == "\\":
                out.append(text[i + 1]); i += 1
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True; out.append(c)
        elif text.startswith("/*", i):
            i = text.index("*/", i) + 1
        elif text.startswith("//", i):
            i = text.index("\n", i) - 1
        else:
            out.append(c)
        i += 1
    return "".join(out)

def aer_rates(machine_json):
    """Per Root Port: correctable errors per second of the port and below."""
    d = json.loads(strip_comments(open(machine_json).read()))
    def rate_of(node):
        total = 0.0
        for err in node.get("aer", {}).get("correctable", {}).values():
            if isinstance(err, dict):
                total += err.get("per_second", 0)
        return total + sum(rate_of(c) for c in node.get("children", []))
    ports = {}
    def walk(o):
        if isinstance(o, dict):
            if "root_ports" in o:
                for rp in o["root_ports"]:
                    ports[rp["bdf"]] = rate_of(rp)
            for v in o.values():
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)
    walk(d)
    return ports

def fail(msg):
    print(msg)
    sys.exit(1)

def main():
    lines = load(sys.argv[1])
    what = sys.argv[2]
    args = sys.argv[3:]
    if what == "ports":  # the Root Port rows == topology --json's root ports
        topo = json.load(open(args[0]))
        want = sorted(f["bdf"] for f in topo if f.get("port_type") == "root_port")
        got = sorted(r["id"] for r in parse(lines) if r["kind"] == "row" and r["id"].startswith("0000:"))
        if got != want:
            fail("rows %s, topology's root ports %s" % (got, want))
        print("%d Root Port rows" % len(got))
    elif what == "busy":  # ports with rx traffic in `pmu --json` have rates and bars
        samples = json.load(open(args[0]))
        rx = [s for s in samples if s["metric"] == "pcie_port_bandwidth_bytes_per_second"
              and s["labels"].get("direction") == "rx" and s["labels"].get("port")]
        busy = sorted({s["labels"]["port"] for s in rx if s["value"] > 1e6})
        # Rates by TLP type where the PMU counts them apart (HiSilicon; IIO: "all").
        by_type = {s["labels"]["port"] for s in rx if s["labels"].get("tlp") != "all"}
        rows = {r["id"]: r for r in parse(lines) if r["kind"] == "row"}
        if not busy:
            fail("pmu --json shows no busy port")
        for p in busy:
            r = rows.get(p)
            if not r:
                fail("busy port %s has no row" % p)
            rx, u = rate(r["RX B/s"]), util(r["RX UTIL"])
            tlp = [rate(r[c]) for c in ("rxMWr", "rxMRd", "rxCpl")]
            if not rx or not u or u[1] == 0 or (p in by_type and not any(tlp)):
                fail("busy port %s: RX %r, bar %r, by TLP %r" % (p, r["RX B/s"], r["RX UTIL"], tlp))
        print("%d busy ports with rates and bars" % len(busy))
    elif what == "sorted":  # the column args[0] is descending (missing values last)
        col = args[0]
        rows = [r for r in parse(lines) if r["kind"] == "row"]
        if col == "latency":
            vals = [max([v for v in (latency(r[c]) for c in ("wrNs", "rdNs", "txNs")) if v is not None],
                        default=None) for r in rows]
        else:
            vals = [rate(r[col]) for r in rows]
        present = [v for v in vals if v is not None]
        if len(present) < 2:
            fail("fewer than two values in %s: %s" % (col, vals))
        if vals[:len(present)] != present or present != sorted(present, reverse=True):
            fail("%s not descending: %s" % (col, vals))
        print(" ".join(r["id"] for r in rows))
    elif what == "order":  # the row ids in screen order
        print(" ".join(r["id"] for r in parse(lines) if r["kind"] == "row"))
    elif what == "expanded":  # functions below each expanded port == topology's
        topo = json.load(open(args[0]))
        below = {}
        for f in topo:
            if f.get("root_port") and f["root_port"] != f["bdf"]:
                below.setdefault(f["root_port"], []).append(f["bdf"].split(":", 1)[1])
        items = parse(lines)
        only = args[1] if len(args) > 1 else None
        checked = 0
        for i, r in enumerate(items):
            if r["kind"] != "row" or not r["id"].startswith("0000:"):
                continue
            fns, cut = [], True
            for x in items[i + 1:]:
                if x["kind"] != "fn":
                    cut = False
                    break
                fns.append(x["id"])
            want = below.get(r["id"], [])
            if cut and fns and fns == want[:len(fns)]:
                continue  # the last port's functions run past the screen's end
            expect_open = only is None or r["id"] == only
            if expect_open and fns != want:
                fail("%s: functions %s, topology %s" % (r["id"], fns, want))
            if not expect_open and fns:
                fail("%s expanded too: %s" % (r["id"], fns))
            if want and r["mark"] != ("-" if expect_open else "+"):
                fail("%s: mark %r" % (r["id"], r["mark"]))
            checked += 1
        print("%d ports checked" % checked)
    elif what == "flags":  # DOWNTRAINED and MPS as topology and audit say
        topo = json.load(open(args[0]))
        audit = json.load(open(args[1]))
        root = {f["bdf"]: f.get("root_port") for f in topo}
        down = {f["bdf"] for f in topo if (f.get("link") or {}).get("downtrained")}
        mps = {f["bdf"] for f in audit["findings"] if f["kind"].startswith("mps_")}
        items = parse(lines)
        n = 0
        for r in items:
            bdf = r["id"] if r["kind"] == "row" else "0000:" + r["id"]
            if bdf not in root:
                continue
            flags = r["FLAGS"]
            if ("DOWNTRAINED" in flags) != (bdf in down):
                fail("%s: FLAGS %r, downtrained %s" % (bdf, flags, bdf in down))
            want_mps = bdf in mps or (r["kind"] == "row" and any(root.get(b) == bdf for b in mps))
            if ("MPS" in flags) != want_mps:
                fail("%s: FLAGS %r, MPS finding %s" % (bdf, flags, want_mps))
            n += ("DOWNTRAINED" in flags) + ("MPS" in flags)
        if not down and not mps:
            fail("the machine has neither a downtrained link nor an MPS finding")
        if n == 0:
            fail("no flag shown")
        print("%d flags as topology and audit say" % n)
    elif what == "aer":  # correctable errors where the description makes them rise
        rates = aer_rates(args[0])
        rows = {r["id"]: r for r in parse(lines) if r["kind"] == "row"}
        rising = 0
        for p, per_s in rates.items():
            m = re.fullmatch(r"(\d+)/(\d+)/(\d+)", rows[p]["AER c/n/f"])
            if not m:
                fail("%s: AER %r" % (p, rows[p]["AER c/n/f"]))
            if per_s == 0 and m.group(1) != "0":
                fail("%s counts no correctable errors but shows %s" % (p, m.group(0)))
            if per_s >= 1:
                rising += 1
                if m.group(1) == "0":
                    fail("%s: %.1f correctable errors a second, shows %s" % (p, per_s, m.group(0)))
        if not rising:
            fail("no port with rising correctable errors in the description")
        print("%d ports with rising correctable errors show them" % rising)
    elif what == "layout":  # header, column header, footer where they belong
        width, height = int(args[0]), int(args[1])
        body = lines[:height]
        if not body[0].startswith("pciescope top | SIMULATED machine "):
            fail("line 1: %r" % body[0])
        if not body[2].startswith("  PORT "):
            fail("line 3: %r" % body[2])
        if not body[height - 1].startswith("q quit"):
            fail("last line: %r" % body[height - 1])
        if any(len(l) > width for l in body):
            fail("a line is wider than %d" % width)
        rows = [l for l in body[3:height - 1] if l.strip()]
        if not rows or not all(re.match(r"^([ +-] (0000:|s\d)|   `-)", l) for l in rows):
            fail("the table's lines: %r" % rows[:3])
        print("layout of %dx%d" % (width, height))
    else:
        sys.exit("unknown check " + what)

main()
PY
screen() { "$PYTHON3" "$tmp/screen.py" "$@"; }

capture() { T capture-pane -p -t top >"$tmp/screen.txt"; }
# wait_for PATTERN [SECONDS]: until the screen shows PATTERN (grep -E).
wait_for() {
	local i
	for ((i = 0; i < ${2:-20} * 10; i++)); do
		capture
		grep -qE -- "$1" "$tmp/screen.txt" && return 0
		sleep 0.1
	done
	echo "# waited for '$1'; the screen:" && sed 's/^/#   /' "$tmp/screen.txt"
	return 1
}
# settle: capture until two captures 0.2 s apart are the same. The
# terminal gets a frame in more than one write, and tmux may answer a
# capture between them: a new status line above the rows of the frame
# before (a sort key's header with the old order below it).
settle() {
	local i
	capture
	for ((i = 0; i < 25; i++)); do
		cp "$tmp/screen.txt" "$tmp/screen.prev"
		sleep 0.2
		capture
		cmp -s "$tmp/screen.txt" "$tmp/screen.prev" && return 0
	done
	return 0 # still changing: the check that reads it says what it saw
}
# keys KEYS... then wait for the screen to show PATTERN, and for the
# frame to be whole.
keys() {
	local pattern=$1
	shift
	T send-keys -t top "$@"
	wait_for "$pattern" && settle
}
# start_top WIDTH HEIGHT ARGS...: top in a fresh session, and its exit
# status printed by the shell after it.
start_top() {
	local w=$1 h=$2
	shift 2
	new_server
	T new-session -d -s top -x "$w" -y "$h" \
		"$(printf '%q ' "$PCIESCOPE" top "$@") 2>'$tmp/stderr'; echo \"top exited with status \$?\"; sleep 600"
}
top_pid() { pgrep -P "$(T list-panes -t top -F '#{pane_pid}')" -x pciescope; }

# ---- kunpeng930-2p: rows, rates, help, sort, expand, resize, q ----
m=kunpeng930-2p
"$PCIESCOPE" topology --json --simulate $m >"$tmp/topo.json" 2>/dev/null
PCIESCOPE_VIRTUAL_CLOCK=1 "$PCIESCOPE" pmu --json --count 2 --simulate $m >"$tmp/pmu.json" 2>/dev/null
start_top 160 50 --simulate $m --interval 1
wait_for "Root Ports counted by" && ok "$m: top starts and counts" || not_ok "$m: top starts and counts"
sleep 1.5 # a second interval: every PMU has rates
settle
check "$m: the header says SIMULATED machine $m" grep -q "^pciescope top | SIMULATED machine $m " "$tmp/screen.txt"
check "$m: a row for every Root Port of topology --json" screen "$tmp/screen.txt" ports "$tmp/topo.json"
check "$m: ports with traffic in pmu --json have rates, TLP rates and bars" \
	screen "$tmp/screen.txt" busy "$tmp/pmu.json"
check "$m: the layout at 160x50" screen "$tmp/screen.txt" layout 160 50
port_order=$(screen "$tmp/screen.txt" order)

keys "this help; any key closes it" '?' && ok "$m: ? shows the help" || not_ok "$m: ? shows the help"
T send-keys -t top x
sleep 0.5
settle
check "$m: any key closes the help" bash -c "! grep -q 'this help; any key closes it' '$tmp/screen.txt'"

for row in "r rx RX?B/s" "t tx TX?B/s" "l latency latency"; do
	set -- $row
	col=${3/\?/ }
	if keys "sort: $2 " "$1"; then
		check "$m: '$1' sorts by $2 (the column descends)" screen "$tmp/screen.txt" sorted "$col"
	else
		not_ok "$m: '$1' sorts by $2"
	fi
done
keys "sort: tx " t
tx_order=$(screen "$tmp/screen.txt" order)
check "$m: the tx order differs from the port order" eval '[ -n "$tx_order" ] && [ "$tx_order" != "$port_order" ]'
keys "sort: latency " s && keys "sort: errors " s && keys "sort: port " s &&
	ok "$m: s cycles tx, latency, errors, port" || not_ok "$m: s cycles tx, latency, errors, port"
capture
check "$m: back in port order" [ "$(screen "$tmp/screen.txt" order)" = "$port_order" ]

# Enter expands the selected (first) port only; e expands every port.
first=${port_order%% *}
T send-keys -t top Enter
sleep 0.5
settle
check "$m: Enter shows the functions below $first only" screen "$tmp/screen.txt" expanded "$tmp/topo.json" "$first"
T send-keys -t top Enter
wait_for "^\+ $first"
keys "^- $first" e
sleep 0.5
settle
check "$m: e shows the functions below every port (as topology --json)" screen "$tmp/screen.txt" expanded "$tmp/topo.json"
T send-keys -t top e
sleep 0.5
settle
check "$m: e again hides them" bash -c "! grep -q '^   \`-' '$tmp/screen.txt'"

# Resize: smaller, then back.
T resize-window -t top -x 100 -y 20
sleep 1
settle
check "$m: the layout after a resize to 100x20" screen "$tmp/screen.txt" layout 100 20
T resize-window -t top -x 160 -y 50
sleep 1
settle
check "$m: the layout after a resize back to 160x50" screen "$tmp/screen.txt" layout 160 50
check "$m: every Root Port again after the resize" screen "$tmp/screen.txt" ports "$tmp/topo.json"

T send-keys -t top q
if wait_for "top exited with status" 10; then
	check "$m: q exits with status 0" grep -q "top exited with status 0" "$tmp/screen.txt"
	check "$m: the terminal is restored (the view is gone, the shell's screen is back)" \
		bash -c "! grep -q '^pciescope top |' '$tmp/screen.txt'"
	check "$m: stderr said SIMULATED" grep -q "SIMULATED machine \"$m\"" "$tmp/stderr"
else
	not_ok "$m: q exits"
fi

# SIGTERM and Ctrl-C end it like q, with the status a shell expects.
start_top 160 50 --simulate $m --interval 1
wait_for "Root Ports counted by|counting"
pid=$(top_pid)
[ -n "$pid" ] && kill -TERM "$pid"
wait_for "top exited with status" 10
check "$m: SIGTERM: exit status 143, terminal restored" \
	bash -c "grep -q 'top exited with status 143' '$tmp/screen.txt' && ! grep -q '^pciescope top |' '$tmp/screen.txt'"
start_top 160 50 --simulate $m --interval 1
wait_for "Root Ports counted by|counting"
T send-keys -t top C-c
wait_for "top exited with status" 10
check "$m: Ctrl-C: exit status 130, terminal restored" \
	bash -c "grep -q 'top exited with status 130' '$tmp/screen.txt' && ! grep -q '^pciescope top |' '$tmp/screen.txt'"

# ---- kunpeng930-misconfig: DOWNTRAINED, MPS and AER where they are ----
m=kunpeng930-misconfig
"$PCIESCOPE" topology --json --simulate $m >"$tmp/topo.json" 2>/dev/null
"$PCIESCOPE" audit --json --simulate $m >"$tmp/audit.json" 2>/dev/null
start_top 160 50 --simulate $m --interval 1
wait_for "Root Ports counted by"
sleep 2.5
keys "^- " e
capture
check "$m: a row for every Root Port" screen "$tmp/screen.txt" ports "$tmp/topo.json"
check "$m: DOWNTRAINED and MPS flags on the ports and functions topology and audit name" \
	screen "$tmp/screen.txt" flags "$tmp/topo.json" "$tmp/audit.json"
check "$m: AER deltas where the description makes correctable errors rise, 0 elsewhere" \
	screen "$tmp/screen.txt" aer "$machines/$m.json"
T send-keys -t top q
wait_for "top exited with status" 10
check "$m: q exits with status 0" grep -q "top exited with status 0" "$tmp/screen.txt"

# ---- spr-2s: Intel IIO, unmapped stacks and mapped ones ----
m=spr-2s
# Without the uncore's CPU bus registers (a copy of spr-2s that does not
# write them) nothing maps the stacks: their busy parts are rows of their own.
noregs="$tmp/spr-2s-noregs.json"
sed 's/"stack_registers": true/"stack_registers": false/' "$top_srcdir/sim/machines/$m.json" >"$noregs"
"$PCIESCOPE" topology --json --simulate $m >"$tmp/topo.json" 2>/dev/null
start_top 160 50 --simulate "$noregs" --interval 1
wait_for "IIO stack parts" && ok "$m without the registers: the status line says the IIO stacks are not mapped" ||
	not_ok "$m without the registers: the status line says the IIO stacks are not mapped"
sleep 1.5
settle
check "$m: the header says SIMULATED machine $m" grep -q "^pciescope top | SIMULATED machine $m " "$tmp/screen.txt"
check "$m: a row for every Root Port" screen "$tmp/screen.txt" ports "$tmp/topo.json"
check "$m: the unmapped IIO parts with traffic are rows with rates" \
	bash -c "grep -E '^  s[0-9]+ iio[0-9]+ p[0-9]+ .* [0-9.]+[kMG] ' '$tmp/screen.txt' | grep -q ."
keys "sort: rx " r
check "$m: r sorts the IIO parts by rx" screen "$tmp/screen.txt" sorted "RX B/s"
T send-keys -t top q
wait_for "top exited with status" 10
# Stack 2 of socket 0 serves the Root Port of bus 0x15 (docs/configuration.md,
# "Intel IIO stack mapping"): as shipped the registers map it, and
# --iio-stack-bus does on the copy without them; its rates are on the port's row.
bus_port=$("$PYTHON3" -c 'import json,sys; print(next(f["bdf"] for f in json.load(open(sys.argv[1])) if f.get("port_type")=="root_port" and f["bdf"].startswith("0000:15:")))' "$tmp/topo.json")
# (stack 2 of socket 0 only: its ConnectX-7 runs at a constant rate, where
# other stacks have phases that top's real clock and iio's virtual one
# would see at different points)
PCIESCOPE_VIRTUAL_CLOCK=1 "$PCIESCOPE" iio --json --count 2 --simulate $m 2>/dev/null |
	"$PYTHON3" -c 'import json, sys
d = json.load(sys.stdin)
print(json.dumps([x for x in d if x.get("labels", {}).get("socket") == "0" and x.get("labels", {}).get("stack") == "2"]))' >"$tmp/iio.json"
start_top 160 50 --simulate $m --interval 1
wait_for "Root Ports counted by"
sleep 2.5
settle
check "$m as shipped: the port $bus_port has the stack's rates and a bar (as iio --json)" \
	screen "$tmp/screen.txt" busy "$tmp/iio.json"
check "$m as shipped: no unmapped IIO part rows" \
	bash -c "! grep -Eq '^  s[0-9]+ iio[0-9]+ p[0-9]+ ' '$tmp/screen.txt'"
T send-keys -t top q
wait_for "top exited with status" 10
PCIESCOPE_VIRTUAL_CLOCK=1 "$PCIESCOPE" iio --json --count 2 --simulate "$noregs" \
	--iio-stack-bus uncore_iio_free_running_2,0,0000:15 >"$tmp/iio.json" 2>/dev/null
start_top 160 50 --simulate "$noregs" --interval 1 --iio-stack-bus uncore_iio_free_running_2,0,0000:15
wait_for "IIO stack parts"
sleep 1.5
settle
check "$m without the registers: with --iio-stack-bus the port $bus_port has the stack's rates and a bar (as iio --json)" \
	screen "$tmp/screen.txt" busy "$tmp/iio.json"
T send-keys -t top q
wait_for "top exited with status" 10
check "$m: q exits with status 0" grep -q "top exited with status 0" "$tmp/screen.txt"

# ---- no PMU: an lspci dump (as a VM would be): links, flags, and why no rates ----
dump="$FIXTURES/synthetic/downtrained.lspci-xxxx.txt"
"$PCIESCOPE" topology --json --pci-dump "$dump" >"$tmp/topo.json" 2>/dev/null
"$PCIESCOPE" audit --json --pci-dump "$dump" >"$tmp/audit.json" 2>/dev/null
start_top 160 30 --pci-dump "$dump" --interval 1
wait_for "no bandwidth, utilisation or latency: an lspci dump has no PMU" &&
	ok "a dump: the second line says why there is no bandwidth" ||
	not_ok "a dump: the second line says why there is no bandwidth"
keys "^- " e
capture
check "a dump: the header names the dump, not SIMULATED" \
	bash -c "grep -q '^pciescope top | $dump |' '$tmp/screen.txt' && ! grep -q SIMULATED '$tmp/screen.txt'"
check "a dump: a row for every Root Port" screen "$tmp/screen.txt" ports "$tmp/topo.json"
check "a dump: DOWNTRAINED where topology --json says so" \
	screen "$tmp/screen.txt" flags "$tmp/topo.json" "$tmp/audit.json"
check "a dump: the functions below every port" screen "$tmp/screen.txt" expanded "$tmp/topo.json"
T send-keys -t top q
wait_for "top exited with status" 10
check "a dump: q exits with status 0" grep -q "top exited with status 0" "$tmp/screen.txt"

# ---- no terminal ----
"$PCIESCOPE" top --simulate kunpeng930-2p </dev/null >"$tmp/out" 2>"$tmp/err"
rc=$?
check "stdout not a terminal: exit status 3 (got $rc)" [ "$rc" -eq 3 ]
check "stdout not a terminal: the error says so and names the text commands" \
	grep -q "pciescope: top: stdout is not a terminal; use \`pciescope pmu\`" "$tmp/err"
check "stdout not a terminal: nothing on stdout, no SIMULATED engine started" \
	bash -c "[ ! -s '$tmp/out' ] && ! grep -q SIMULATED '$tmp/err'"
new_server
T new-session -d -s top -x 100 -y 10 \
	"$(printf '%q ' "$PCIESCOPE") top --simulate kunpeng930-2p </dev/null 2>&1; echo \"top exited with status \$?\"; sleep 600"
wait_for "top exited with status" 10
check "stdin not a terminal: exit status 3 and the error" \
	bash -c "grep -q 'top exited with status 3' '$tmp/screen.txt' && grep -q 'stdin is not a terminal' '$tmp/screen.txt'"
done_testing
