#!/bin/bash
# cli.sh - the pciescope command on dump fixtures: audit exit statuses,
# downtraining in the JSON, and clear errors (never a crash or a hang) for
# bad input; the command table behind dispatch, help and bash completion.
. "$(dirname "$0")/lib.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
syn="$FIXTURES/synthetic"

# Exit statuses: 0 ok, 1 warnings, 2 critical (hand-checked against each
# scenario's README in tests/fixtures/synthetic).
for row in "switch-mps-mismatch 2" "rciep-and-multifunction 2" "domain-0001 2" \
	"legacy-bridge 1" "downtrained 0"; do
	set -- $row
	timeout 20 "$PCIESCOPE" audit --pci-dump "$syn/$1.lspci-xxxx.txt" >"$tmp/out" 2>&1
	rc=$?
	check "audit $1 exits $2 (got $rc)" [ "$rc" -eq "$2" ]
done
check "audit report names the critical mismatch" \
	grep -q "critical 0000:03:00.0  MPS 512 larger than link partner 0000:02:00.0's MPS 256" \
	<(timeout 20 "$PCIESCOPE" audit --pci-dump "$syn/switch-mps-mismatch.lspci-xxxx.txt")

# The policy comes from --policy, else from the proc tree's cmdline.
mkdir -p "$tmp/proc" && echo "quiet pci=noaer,pcie_bus_perf" >"$tmp/proc/cmdline"
"$PCIESCOPE" audit --json --pci-dump "$syn/switch-mps-mismatch.lspci-xxxx.txt" \
	--proc-root "$tmp/proc" >"$tmp/a.json" 2>/dev/null
check "audit reads pci=pcie_bus_perf from the proc root" \
	"$PYTHON3" -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(d["policy"]!="performance")' "$tmp/a.json"
"$PCIESCOPE" audit --json --policy peer2peer --pci-dump "$syn/switch-mps-mismatch.lspci-xxxx.txt" >"$tmp/b.json" 2>/dev/null
check "audit --policy overrides and every function lists all five policies" \
	"$PYTHON3" -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["policy"] == "peer2peer" and d["policy_source"] == "--policy"
for f in d["functions"]:
    assert set(f["policies"]) == {"tune_off", "default", "safe", "performance", "peer2peer"}, f
    assert f["policies"]["peer2peer"]["mps_bytes"] == 128, f
assert d["exit_status"] == 2 and d["summary"]["critical"] >= 1
' "$tmp/b.json"

# Downtraining as the JSON interface reports it.
"$PCIESCOPE" topology --json --pci-dump "$syn/downtrained.lspci-xxxx.txt" >"$tmp/t.json"
check "topology --json: 05:00.0 and its root port downtrained, 06:00.0 not, 00:04.0 down" \
	"$PYTHON3" -c '
import json, sys
d = {f["bdf"]: f for f in json.load(open(sys.argv[1]))}
assert d["0000:05:00.0"]["link"]["downtrained"] is True
assert d["0000:00:02.0"]["link"]["downtrained"] is True
assert d["0000:06:00.0"]["link"]["downtrained"] is False
assert d["0000:00:04.0"]["link"]["up"] is False and d["0000:00:04.0"]["link"]["downtrained"] is False
assert d["0000:05:00.0"]["parent"] == "0000:00:02.0" and d["0000:05:00.0"]["root_port"] == "0000:00:02.0"
assert d["0000:05:00.0"]["link"]["partner"] == "0000:00:02.0"
' "$tmp/t.json"
check "topology text marks the downtrained link" \
	grep -q "05:00.0 endpoint .*DOWNTRAINED" <("$PCIESCOPE" topology --no-names --pci-dump "$syn/downtrained.lspci-xxxx.txt")

# Every synthetic and real dump gives valid JSON.
for f in "$syn"/*.lspci-xxxx.txt "$FIXTURES"/pcidump/*.txt; do
	timeout 20 "$PCIESCOPE" topology --json --pci-dump "$f" >"$tmp/j.json" 2>/dev/null &&
		"$PYTHON3" -m json.tool "$tmp/j.json" >/dev/null
	check "valid topology JSON for $(basename "$f")" [ $? -eq 0 ]
done

# Bad input: a clear error naming the file, exit 3, never a signal or a hang.
for f in line-too-long non-hex-bytes offset-4096; do
	timeout 20 "$PCIESCOPE" topology --pci-dump "$FIXTURES/malformed/$f.lspci-xxxx.txt" >/dev/null 2>"$tmp/err"
	rc=$?
	check "malformed $f: exit 3 with a message naming the file (got $rc: $(head -c 160 "$tmp/err"))" \
		eval '[ $rc -eq 3 ] && grep -q "$f.lspci-xxxx.txt: .*dump: " "$tmp/err"'
done
for f in "$FIXTURES"/malformed/*; do
	case $f in *.md) continue ;; esac
	for cmd in topology audit; do
		timeout 20 "$PCIESCOPE" $cmd --pci-dump "$f" >/dev/null 2>"$tmp/err"
		rc=$?
		check "$cmd on malformed $(basename "$f") ends cleanly (rc $rc)" \
			eval '[ $rc -le 3 ] && { [ $rc -lt 3 ] || [ -s "$tmp/err" ]; }'
	done
done
timeout 20 "$PCIESCOPE" topology --pci-dump "$tmp/missing.txt" 2>"$tmp/err"
rc=$?
check "missing dump file: exit 3 naming it" eval '[ $rc -eq 3 ] && grep -q "missing.txt: No such file" "$tmp/err"'
"$PCIESCOPE" audit --policy fast 2>"$tmp/err"
rc=$?
check "unknown --policy is refused" eval '[ $rc -eq 3 ] && grep -q "policy fast" "$tmp/err"'
"$PCIESCOPE" frobnicate 2>/dev/null
check "unknown command exits 3" [ $? -eq 3 ]

# The live machine: works with or without PCIe functions.
timeout 20 "$PCIESCOPE" topology --json >"$tmp/live.json" 2>"$tmp/err"
rc=$?
check "live topology --json runs on this machine" eval '[ $rc -eq 0 ] && "$PYTHON3" -m json.tool "$tmp/live.json" >/dev/null'
n_sys=$(ls /sys/bus/pci/devices 2>/dev/null | wc -l)
n_json=$("$PYTHON3" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$tmp/live.json")
check "live topology lists every function in /sys/bus/pci/devices ($n_json of $n_sys)" [ "$n_sys" = "$n_json" ]

# exporter and snapshot are programs of their own (pciescope-exporter,
# pciescope-snapshot beside pciescope in the build tree, $(pkglibexecdir)
# installed): the other commands start without libmicrohttpd, libarchive
# and what they load (GnuTLS, ICU: ~15 ms of start-up each time).
# PCIESCOPE_BINARY: the program itself where $PCIESCOPE is a wrapper
# script (sanitize.sh's, which keeps the sanitizer reports).
bin=${PCIESCOPE_BINARY:-$PCIESCOPE}
cli_dir=$(dirname "$bin")
libs=$(ldd "$bin" 2>/dev/null)
check "pciescope itself links neither libmicrohttpd nor libarchive" \
	eval '[ -n "$libs" ] && ! grep -q "libmicrohttpd\|libarchive\|libgnutls" <<<"$libs"'
check "pciescope-exporter and pciescope-snapshot are built beside it" \
	test -x "$cli_dir/pciescope-exporter" -a -x "$cli_dir/pciescope-snapshot"
"$PCIESCOPE" snapshot --pci-dump "$syn/downtrained.lspci-xxxx.txt" -o "$tmp/s.tar.gz" >"$tmp/out" 2>&1
rc=$?
check "snapshot runs through its helper, arguments in the user's order (rc $rc)" \
	eval '[ $rc -eq 0 ] && tar -tzf "$tmp/s.tar.gz" | grep -q lspci-xxxx.txt'
PCIESCOPE_EXEC_PATH=$tmp/nowhere "$PCIESCOPE" exporter --listen 127.0.0.1:1 >"$tmp/out" 2>&1
rc=$?
check "a missing helper: exit 3 naming it and PCIESCOPE_EXEC_PATH (rc $rc)" \
	eval '[ $rc -eq 3 ] && grep -q "no program pciescope-exporter in $tmp/nowhere (PCIESCOPE_EXEC_PATH)" "$tmp/out"'
"$PCIESCOPE" exporter --listen nonsense >"$tmp/out" 2>&1
rc=$?
check "exporter's own errors still come from the helper (rc $rc)" \
	eval '[ $rc -eq 3 ] && grep -q "nonsense" "$tmp/out"'

# fleet's options are its program's: pciescope hands them over unread
# (a bad one is pciescope-fleet's error, not the global parser's).
PCIESCOPE_EXEC_PATH=$tmp/nowhere "$PCIESCOPE" fleet --hosts 3 >"$tmp/out" 2>&1
rc=$?
check "fleet: without pciescope-fleet, its options are not judged here: the missing program is the error (rc $rc)" \
	eval '[ $rc -eq 3 ] && grep -q "no program pciescope-fleet" "$tmp/out"'

# ---- the command table: help, per-command help, unknown commands ----
# The commands as a user knows them (the table must list exactly these).
want_commands="topology audit pmu uncore iio top trace dump trace report options exporter fleet calibrate snapshot help completion"
"$PCIESCOPE" --help >"$tmp/help" 2>&1
rc=$?
got_commands=$(sed -n '/^Commands:/,/^$/s/^  \([a-z]\{1,\}\( [a-z]\{1,\}\)\{0,1\}\)  .*/\1/p' "$tmp/help" | tr '\n' ' ')
check "--help: exit 0 and every command, in the table's order (got: $got_commands)" \
	eval '[ $rc -eq 0 ] && [ "$got_commands" = "$want_commands " ]'
"$PCIESCOPE" help >"$tmp/help2" 2>&1
rc=$?
check "help: exit 0, the same text as --help" eval '[ $rc -eq 0 ] && cmp -s "$tmp/help" "$tmp/help2"'
"$PCIESCOPE" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "no command: exit 3, the usage on stderr" eval '[ $rc -eq 3 ] && [ ! -s "$tmp/out" ] && grep -q "^Usage: pciescope COMMAND" "$tmp/err"'
# Every option in the global list, with its help text (wrapped lines
# joined): the per-command help must repeat these entries word for word.
entries() { # FILE: "--opt ARG<TAB>help" per option of its Options sections
	awk '/^Options|^The machine/ { on = 1; next } /^[^ ]/ { on = 0 }
		on && /^  -/ { if (e != "") print e; e = $0; next }
		on && /^   / { sub(/^ +/, " "); e = e $0; next }
		END { if (e != "") print e }' "$1" | sed 's/  */ /g'
}
entries "$tmp/help" | sort >"$tmp/all-entries"
check "--help lists every option with its help ($(wc -l <"$tmp/all-entries") options)" [ "$(wc -l <"$tmp/all-entries")" -ge 40 ]
for c in topology audit pmu uncore iio top "trace dump" "trace report" options exporter fleet calibrate snapshot help completion; do
	# exporter, fleet and snapshot answer without their helper program.
	PCIESCOPE_EXEC_PATH=$tmp/nowhere "$PCIESCOPE" $c --help >"$tmp/c-help" 2>"$tmp/err"
	rc=$?
	PCIESCOPE_EXEC_PATH=$tmp/nowhere "$PCIESCOPE" help $c >"$tmp/c-help2" 2>&1
	rc2=$?
	check "$c --help: exit 0, its usage line, nothing on stderr (rc $rc)" \
		eval '[ $rc -eq 0 ] && head -1 "$tmp/c-help" | grep -q "^Usage: pciescope $c[ ]" && [ ! -s "$tmp/err" ]'
	check "help $c: exit 0, the same text as $c --help" eval '[ $rc2 -eq 0 ] && cmp -s "$tmp/c-help" "$tmp/c-help2"'
	entries "$tmp/c-help" >"$tmp/c-entries"
	check "$c --help: each option's entry is the global list's (one source)" \
		eval '[ -s "$tmp/c-entries" ] && ! sort "$tmp/c-entries" | comm -23 - "$tmp/all-entries" | grep -q .'
done
# Only the command's own options.
"$PCIESCOPE" exporter --help >"$tmp/c-help"
check "exporter --help: its options (--listen, --tls-cert), not topology's (--pci-dump, --no-names)" \
	eval 'grep -q "^  --listen ADDR:PORT" "$tmp/c-help" && grep -q "^  --tls-cert FILE" "$tmp/c-help" &&
		! grep -q -- "--pci-dump\|--no-names" "$tmp/c-help"'
check "exporter --help: it runs as a program of its own" grep -q "pciescope-exporter" "$tmp/c-help"
"$PCIESCOPE" topology --help >"$tmp/c-help"
check "topology --help: --no-names and the machine options, not the exporter's" \
	eval 'grep -q "^  --no-names" "$tmp/c-help" && grep -q "^  --simulate MACHINE" "$tmp/c-help" &&
		! grep -q -- "--listen" "$tmp/c-help"'
"$PCIESCOPE" top --help >"$tmp/c-help"
check "top --help: needs a terminal (and answers without one)" grep -q "^Needs a terminal" "$tmp/c-help"
"$PCIESCOPE" uncore --help >"$tmp/c-help"
check "uncore --help: needs root on a live machine" grep -q "^Needs root on a live machine" "$tmp/c-help"
"$PCIESCOPE" trace --help >"$tmp/c-help"
check "trace --help: both sub-commands' usage lines" \
	eval 'grep -q "^  pciescope trace dump .*FILE" "$tmp/c-help" && grep -q "^  pciescope trace report " "$tmp/c-help"'
"$PCIESCOPE" trace report --help >"$tmp/c-help"
check "trace report --help: --time-mode, not dump's alone or the machine's" \
	eval 'grep -q "^  --time-mode MODE" "$tmp/c-help" && ! grep -q -- "--simulate" "$tmp/c-help"'
"$PCIESCOPE" trace --help dump >"$tmp/c-help2"
check "trace --help dump: dump's help" eval 'head -1 "$tmp/c-help2" | grep -q "^Usage: pciescope trace dump "'
"$PCIESCOPE" topolgy >"$tmp/out" 2>"$tmp/err"
rc=$?
check "a misspelt command: exit 3 and the nearest name (rc $rc)" \
	eval '[ $rc -eq 3 ] && grep -q "unknown command .topolgy.: did you mean .topology.?" "$tmp/err"'
"$PCIESCOPE" frobnicate 2>"$tmp/err"
rc=$?
check "an unknown command: exit 3, no guess" eval '[ $rc -eq 3 ] && grep -q "unknown command .frobnicate." "$tmp/err" && ! grep -q "did you mean" "$tmp/err"'
"$PCIESCOPE" help exporterr >/dev/null 2>"$tmp/err"
rc=$?
check "help of a misspelt command: exit 3 and the nearest name" eval '[ $rc -eq 3 ] && grep -q "did you mean .exporter.?" "$tmp/err"'
"$PCIESCOPE" help trace show >/dev/null 2>"$tmp/err"
rc=$?
check "help of an unknown sub-command: exit 3" eval '[ $rc -eq 3 ] && grep -q "unknown sub-command .show." "$tmp/err"'
"$PCIESCOPE" trace reprot "$tmp/none" >/dev/null 2>"$tmp/err"
rc=$?
check "a misspelt sub-command: exit 3 and the nearest name" eval '[ $rc -eq 3 ] && grep -q "did you mean .report.?" "$tmp/err"'
"$PCIESCOPE" topology --listen :1 --pci-dump "$syn/downtrained.lspci-xxxx.txt" >/dev/null 2>"$tmp/err"
rc=$?
check "topology --listen: accepted by the parser as before (exit 0, rc $rc)" [ $rc -eq 0 ]
"$PCIESCOPE" audit --bogus >/dev/null 2>"$tmp/err"
rc=$?
check "a bad option: exit 3 and the command's usage" eval '[ $rc -eq 3 ] && grep -q "usage: pciescope audit \[--json\]" "$tmp/err"'
"$PCIESCOPE" audit extra >/dev/null 2>"$tmp/err"
rc=$?
check "a word after a command that takes none: exit 3" eval '[ $rc -eq 3 ] && grep -q "unexpected argument .extra." "$tmp/err"'
"$PCIESCOPE" completion zsh >/dev/null 2>"$tmp/err"
rc=$?
check "completion zsh: exit 3 (bash only)" eval '[ $rc -eq 3 ] && grep -q "only bash" "$tmp/err"'

# docs/cli.md's copy of the command list is the table's now.
check "docs/cli.md's command list is \`pciescope help --markdown\`" \
	cmp -s <(sed -n '/^<!-- generated: pciescope help --markdown -->$/,/^<!-- end generated -->$/p' "$top_srcdir/docs/cli.md" | sed '1d;$d') \
	<("$PCIESCOPE" help --markdown)

# docs/cli.md's option table says which commands take each option: the
# same commands whose --help lists it ("trace" is both sub-commands; the
# machine options, "all but trace" and "with --simulate", are left out).
for c in topology audit pmu uncore iio top "trace dump" "trace report" options exporter fleet calibrate snapshot help completion; do
	"$PCIESCOPE" $c --help | sed -n '/^Options:/,/^$/s/^  \(-., \)\{0,1\}\(--[a-z-]*\).*/\2/p' | sed "s/^/$c\t/"
done >"$tmp/takes"
"$PYTHON3" - "$top_srcdir/docs/cli.md" "$tmp/takes" >"$tmp/takes-check" <<'PY'
import re, sys
takes = {}
for line in open(sys.argv[2]):
    cmd, opt = line.rstrip("\n").split("\t")
    takes.setdefault(opt, set()).add(cmd)
rows, on = 0, False
for line in open(sys.argv[1]):
    if line.startswith("## "):
        on = line.strip() == "## Options"
    if not on or not line.startswith("| `-"):
        continue
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    opts = re.findall(r"`(--[a-z-]+)`", cells[0])
    where = cells[2]
    m = re.search(r"\(([a-z ,]+)\)$", where)
    if m:
        where = m.group(1)
    if not re.fullmatch(r"[a-z ,]+", where) or where.startswith(("all ", "with ")) or \
            opts[0] in ("--help", "--version"):
        continue
    want = set()
    for w in (x.strip() for x in where.split(",")):
        want |= {"trace dump", "trace report"} if w == "trace" else {w}
    for o in opts:
        rows += 1
        got = takes.get(o, set())
        print("%s %s: docs/cli.md says %s; the table %s" % ("ok" if got == want else "not_ok", o,
              ", ".join(sorted(want)), ", ".join(sorted(got))))
print("rows", rows)
PY
while read -r verdict text; do
	case $verdict in
	ok) ok "docs/cli.md's Options: $text" ;;
	not_ok) not_ok "docs/cli.md's Options: $text" ;;
	rows) check "docs/cli.md's Options: compared $text options" [ "$text" -ge 30 ] ;;
	esac
done <"$tmp/takes-check"

# ---- bash completion, generated from the table ----
"$PCIESCOPE" completion bash >"$tmp/completion"
check "completion bash: a script bash parses" bash -n "$tmp/completion"
built=$top_builddir/packaging/bash-completion/pciescope
check "the built completion (make install's) is the table's now" cmp -s "$tmp/completion" "$built"
if [ -f /usr/share/bash-completion/bash_completion ]; then
	complete_words() { # WORDS...: what completion offers for the last word, sorted, one line
		bash -c '. /usr/share/bash-completion/bash_completion; . "$0"
			COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
			_pciescope pciescope "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
			printf "%s\n" "${COMPREPLY[@]}"' "$tmp/completion" "$@" | sort | tr '\n' ' '
	}
	check "completion: pciescope to<TAB> -> top topology" test "$(complete_words pciescope to)" = "top topology "
	check "completion: pciescope <TAB> -> every command" \
		test "$(complete_words pciescope "")" = "$(tr ' ' '\n' <<<"topology audit pmu uncore iio top trace options exporter fleet calibrate snapshot help completion" | sort | tr '\n' ' ')"
	check "completion: trace <TAB> -> dump report" test "$(complete_words pciescope trace "")" = "dump report "
	check "completion: trace report --ti<TAB> -> --time-mode" test "$(complete_words pciescope trace report --ti)" = "--time-mode "
	check "completion: exporter --max-connections-<TAB>" test "$(complete_words pciescope exporter --max-connections-)" = "--max-connections-per-client "
	check "completion: audit --policy p<TAB> -> performance peer2peer" test "$(complete_words pciescope audit --policy p)" = "peer2peer performance "
	check "completion: --detail <TAB> -> the levels" test "$(complete_words pciescope pmu --detail "")" = "basic default full "
	check "completion: help tr<TAB> -> trace" test "$(complete_words pciescope help tr)" = "trace "
	check "completion: completion <TAB> -> bash" test "$(complete_words pciescope completion "")" = "bash "
	check "completion: --simulate <TAB> lists the machines" \
		test "$(PCIESCOPE_MACHINE_DIR=$top_srcdir/sim/machines complete_words pciescope topology --simulate "")" = "$(cd "$top_srcdir/sim/machines" && ls -- *.json | sed 's/\.json$//' | sort | tr '\n' ' ')"
	check "completion: an option's argument is not taken for the command" \
		test "$(complete_words pciescope --simulate spr-2s top --no-s)" = "--no-scale-fix "
	# Each command completes exactly the options its --help lists.
	for c in topology audit pmu uncore iio top "trace dump" "trace report" options exporter fleet calibrate snapshot help completion; do
		from_help=$("$PCIESCOPE" $c --help | sed -n '/^Options:/,$s/^  \(-\(.\), \)\{0,1\}\(--[a-z-]*\).*/\3 -\2/p' |
			tr ' ' '\n' | grep -v '^-$' | sort | tr '\n' ' ')
		check "completion: $c -<TAB> offers the options of $c --help" test "$(complete_words pciescope $c -)" = "$from_help"
	done
else
	ok "# SKIP bash-completion is not installed: completion not exercised"
fi

done_testing
