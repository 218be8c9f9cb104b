#!/bin/bash
# series_budget.sh - the series budget of docs/metrics.md: how many distinct
# series each metric family has on every simulated machine at every
# `Detail` level over 40 s (PTT windows included), counted by the engine
# the plugin runs on (tests/tools/golden_stream --series). Fails when a
# count drifts from the table, when a family is emitted without a row (or a
# row names a family nobody emits), or when the default on kunpeng930-2p
# goes over the budget of 1,500 series. The machines of the other vendors
# (one line each in `per_machine` below) have one row each in the
# per-machine table: their totals at every level, the default within the
# budget too.
#
#   series_budget.sh            compare (a test of make check)
#   series_budget.sh --update   write the counts into docs/metrics.md (after
#                               an intended change; new families get a row
#                               whose "?" cells a person must fill in)
set -u
top=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${top_builddir:-$top/_build}
tool=$build/tests/tools/golden_stream
budget=1500
mode=check
[ "${1:-}" = --update ] && mode=update
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

[ -x "$tool" ] || {
	echo "1..0 # SKIP $tool was not built"
	exit 77
}
# Options a machine is counted with beyond the detail: turin-2p with every
# root complex mapped, as a user who maps them sees it (utilisation too).
extra_opts() {
	case $1 in
	turin-2p) echo AMDDFRootComplexBus=0,0,0000:00 AMDDFRootComplexBus=0,2,0000:20 \
		AMDDFRootComplexBus=0,1,0000:40 AMDDFRootComplexBus=0,3,0000:60 \
		AMDDFRootComplexBus=1,0,0000:80 AMDDFRootComplexBus=1,1,0000:a0 ;;
	esac
}
# Machines with a row of totals of their own (one line per machine).
per_machine=(
	yitian710-1p
)
for machine in kunpeng930-2p kunpeng930-misconfig spr-2s turin-2p grace-gh200 "${per_machine[@]}"; do
	for detail in basic default full; do
		# shellcheck disable=SC2046
		if ! "$tool" --series "$top/sim/machines/$machine.json" - 40 "Detail=$detail" \
			$(extra_opts "$machine") >"$tmp/$machine.$detail" 2>"$tmp/err"; then
			echo "not ok 1 - golden_stream --series $machine Detail=$detail failed: $(head -c 300 "$tmp/err")"
			echo "1..1"
			exit 1
		fi
	done
done

python3 - "$mode" "$tmp" "$top/docs/metrics.md" "$budget" "${per_machine[@]}" <<'PY'
import re
import sys

mode, tmp, doc_path, budget = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
per_machine = sys.argv[5:]
machines = ["kunpeng930-2p", "kunpeng930-misconfig", "spr-2s", "turin-2p", "grace-gh200"]
levels = ["basic", "default", "full"]

counts = {}  # family -> {(machine, level): n}
totals = {}
for m in machines:
    for d in levels:
        for line in open(f"{tmp}/{m}.{d}"):
            name, n = line.split()
            if name == "total":
                totals[(m, d)] = int(n)
            else:
                counts.setdefault(name, {})[(m, d)] = int(n)


def cells(get):
    return ["/".join(str(get(m, d)) for d in levels) for m in machines]


doc = open(doc_path).read()
begin, end = "<!-- budget:begin -->\n", "<!-- budget:end -->"
if begin not in doc or end not in doc:
    print(f"not ok 1 - {doc_path}: no budget table between the budget markers\n1..1")
    sys.exit(1)
head, rest = doc.split(begin, 1)
table, tail = rest.split(end, 1)
lines = table.rstrip("\n").split("\n")
rows = {}  # family -> (labels, per, level, [cells])
order = []
for line in lines[2:]:
    parts = [p.strip() for p in line.strip().strip("|").split("|")]
    if len(parts) != 4 + len(machines):
        print(f"not ok 1 - {doc_path}: budget row with {len(parts)} cells: {line}\n1..1")
        sys.exit(1)
    m = re.fullmatch(r"`([a-z_]+)`", parts[0])
    if m:
        rows[m.group(1)] = parts[1:4] + [parts[4:]]
        order.append(m.group(1))
    elif parts[0] != "**total**":
        print(f"not ok 1 - {doc_path}: budget row without a family: {line}\n1..1")
        sys.exit(1)

def machine_totals(m):
    out = []
    for d in levels:
        for line in open(f"{tmp}/{m}.{d}"):
            name, n = line.split()
            if name == "total":
                out.append(int(n))
    return out


mbegin, mend = "<!-- budget-machines:begin -->\n", "<!-- budget-machines:end -->"
if mbegin not in doc or mend not in doc:
    print(f"not ok 1 - {doc_path}: no per-machine table between the budget-machines markers\n1..1")
    sys.exit(1)
mhead, mrest = doc.split(mbegin, 1)
mtable, mtail = mrest.split(mend, 1)
mlines = mtable.rstrip("\n").split("\n")
mrows = {}
for line in mlines[2:]:
    parts = [p.strip() for p in line.strip().strip("|").split("|")]
    mm = re.fullmatch(r"`([a-z0-9._-]+)`", parts[0])
    if mm and len(parts) == 4:
        mrows[mm.group(1)] = parts[1:]

if mode == "update":
    out = mlines[:2]
    for m in per_machine:
        t = machine_totals(m)
        out.append(f"| `{m}` | " + " | ".join(str(x) for x in t) + " |")
    doc = mhead + mbegin + "\n".join(out) + "\n" + mend + mtail
    head, rest = doc.split(begin, 1)
    table, tail = rest.split(end, 1)
    for fam in sorted(counts):
        if fam not in rows:
            rows[fam] = ["?", "?", "?", []]
            order.append(fam)
    out = lines[:2]
    for fam in order:
        if fam not in counts:
            continue  # nobody emits it any more
        labels, per, level, _ = rows[fam]
        c = cells(lambda m, d: counts[fam].get((m, d), 0))
        out.append(f"| `{fam}` | {labels} | {per} | {level} | " + " | ".join(c) + " |")
    out.append("| **total** | | | | " + " | ".join(cells(lambda m, d: totals[(m, d)])) + " |")
    open(doc_path, "w").write(head + begin + "\n".join(out) + "\n" + end + tail)
    print(f"# wrote {len(out) - 3} families into {doc_path}")
    sys.exit(0)

n = 0
fails = 0


def check(ok, what, detail=()):
    global n, fails
    n += 1
    fails += not ok
    print(("ok" if ok else "not ok") + f" {n} - {what}")
    for d in detail:
        print(f"# {d}")


missing = sorted(set(counts) - set(rows))
check(not missing, "every emitted family has a budget row", [f"no row: {f}" for f in missing])
unused = sorted(set(rows) - set(counts))
check(not unused, "every budget row names an emitted family", [f"emitted nowhere: {f}" for f in unused])
unfilled = sorted(f for f in rows if "?" in rows[f][:3])
check(not unfilled, "every budget row says its labels, formula and level",
      [f"unfilled: {f}" for f in unfilled])
drift = []
for fam in sorted(set(counts) & set(rows)):
    want = cells(lambda m, d: counts[fam].get((m, d), 0))
    if rows[fam][3] != want:
        drift.append(f"{fam}: table {' | '.join(rows[fam][3])}, counted {' | '.join(want)}")
check(not drift, "the counts of every family equal the table", drift)
total_row = [l for l in lines if l.startswith("| **total**")]
want = cells(lambda m, d: totals[(m, d)])
got = [p.strip() for p in total_row[0].strip().strip("|").split("|")][4:] if total_row else []
check(got == want, f"the totals equal the table ({' | '.join(want)})",
      [f"table {' | '.join(got)}"] if got != want else [])
for m in machines:
    check(totals[(m, "basic")] <= totals[(m, "default")] <= totals[(m, "full")],
          f"{m}: basic <= default <= full ({'/'.join(str(totals[(m, d)]) for d in levels)})")
for m in machines:
    d = totals[(m, "default")]
    check(d <= budget, f"{m} sends {d} series by default: at most {budget}")
for m in per_machine:
    t = machine_totals(m)
    check(mrows.get(m) == [str(x) for x in t],
          f"{m}: its totals equal the per-machine table ({'/'.join(str(x) for x in t)})",
          [f"table {mrows.get(m)}"] if mrows.get(m) != [str(x) for x in t] else [])
    check(t[0] <= t[1] <= t[2] and t[1] <= budget,
          f"{m}: basic <= default <= full, default at most {budget} ({'/'.join(str(x) for x in t)})")
print(f"1..{n}")
sys.exit(1 if fails else 0)
PY
