#!/bin/bash
# layers.sh - the import rules of docs/HACKING.md, checked on every
# #include "..." of the tree: a violation names the file, the line and the
# rule it breaks.
set -u
top=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$top" || exit 1

n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; }

# includes FILE...: "file:line:header" for every quoted include.
includes() { grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$@" 2>/dev/null |
	sed -E 's/^([^:]*):([0-9]+):.*"([^"]+)".*/\1:\2:\3/'; }
# angle includes of collectd's headers ("collectd/...") or any in quotes.
collectd_includes() { grep -Hn 'include.*collectd/' "$@" 2>/dev/null; }

headers_of() { (cd "$1" && ls *.h 2>/dev/null); }
in_list() { local x=$1; shift; for h; do [ "$h" = "$x" ] && return 0; done; return 1; }

rule() { # NAME, then FILES, "--", then forbidden headers
	local name=$1 bad=() files=() hit
	shift
	while [ "$1" != -- ]; do files+=("$1"); shift; done
	shift
	[ ${#files[@]} -eq 0 ] && { not_ok "$name: no files to check"; return; }
	while IFS=: read -r f line h; do
		in_list "$h" "$@" && bad+=("$f:$line includes $h")
	done < <(includes "${files[@]}")
	if [ ${#bad[@]} -eq 0 ]; then
		ok "$name (${#files[@]} files)"
	else
		not_ok "$name"
		printf '# %s\n' "${bad[@]}"
	fi
}

mapfile -t SIM_H < <(headers_of sim)
mapfile -t ENGINE_H < <(headers_of engine)
mapfile -t CLI_H < <(headers_of cli)
mapfile -t PLUGIN_H < <(headers_of plugin)
mapfile -t WRITER_H < <(headers_of writer)
mapfile -t COLLECTORS_H < <(headers_of collectors)
mapfile -t NETDATA_H < <(headers_of netdata)

PURE=(tlp ptt_entry ptt_summary pcie_cfg pcie_link aer bdf_match pci_addr uncore_table text_buf redact iio_stackmap)
PURE_H=(pci_regs.h sample.h)
for p in "${PURE[@]}"; do PURE_H+=("$p.h"); done
SEAM_AND_USERS=()
for h in "${COLLECTORS_H[@]}"; do in_list "$h" "${PURE_H[@]}" perf_data.h || SEAM_AND_USERS+=("$h"); done
PURE_FILES=()
for p in "${PURE[@]}"; do PURE_FILES+=(collectors/$p.c collectors/$p.h); done

rule "collectors/ includes no sim/, engine/, cli/, plugin/ or writer/ header" \
	collectors/*.[ch] -- "${SIM_H[@]}" "${ENGINE_H[@]}" "${CLI_H[@]}" "${PLUGIN_H[@]}" "${WRITER_H[@]}"
rule "sample.h is the bottom layer: it includes nothing of the project" \
	collectors/sample.h collectors/sample.c -- $(for h in "${COLLECTORS_H[@]}"; do [ "$h" = sample.h ] || echo "$h"; done)
rule "the pure decoders include neither the seam nor a seam user" \
	"${PURE_FILES[@]}" -- "${SEAM_AND_USERS[@]}"
rule "writer/ includes nothing of collectors/, engine/ or sim/" \
	writer/*.[ch] plugin/remote_write.c plugin/openmetrics.c plugin/cd_*.[ch] -- \
	"${COLLECTORS_H[@]}" "${ENGINE_H[@]}" "${SIM_H[@]}"
# writer/ (naming, the scrape page, remote_write's core) serves the front
# ends: it knows none of them, and the layers below it do not know it.
rule "writer/ includes no front end's header (plugin/, cli/)" \
	writer/*.[ch] -- "${PLUGIN_H[@]}" "${CLI_H[@]}"
rule "engine/ and sim/ include no writer/ header" \
	engine/*.[ch] sim/*.[ch] -- "${WRITER_H[@]}"
rule "sim/ includes no plugin/, cli/ or engine/ header" \
	sim/*.[ch] -- "${PLUGIN_H[@]}" "${CLI_H[@]}" "${ENGINE_H[@]}"
rule "the front ends reach the simulator only through the engine (no sim/ header)" \
	plugin/*.c cli/*.[ch] netdata/*.[ch] -- "${SIM_H[@]}"
# netdata/ (pcie.plugin) is a front end: thin glue over the engine, and no
# layer below it (nor another front end) knows it.
rule "nothing below the front ends, nor another front end, includes a netdata/ header" \
	collectors/*.[ch] engine/*.[ch] sim/*.[ch] writer/*.[ch] plugin/*.c cli/*.[ch] -- "${NETDATA_H[@]}"
rule "netdata/ includes no other front end's header (plugin/, cli/, writer/)" \
	netdata/*.[ch] -- "${PLUGIN_H[@]}" "${CLI_H[@]}" "${WRITER_H[@]}"

# collectd's headers only in plugin/ (and the collectd plugin among the test tools).
bad=$(collectd_includes collectors/*.[ch] engine/*.[ch] sim/*.[ch] cli/*.[ch] writer/*.[ch] netdata/*.[ch])
if [ -z "$bad" ]; then ok "collectd headers only in plugin/"; else not_ok "collectd headers only in plugin/"; echo "$bad" | sed 's/^/# /'; fi

# curses only in `pciescope top`'s view: its model stays pure (and testable).
bad=$(grep -Hn 'include[[:space:]]*[<"]n\?curses' $(git ls-files '*.c' '*.h' 2>/dev/null || find . -name '*.[ch]') 2>/dev/null | grep -v '^cli/cmd_top\.c:')
if [ -z "$bad" ]; then ok "curses only in cli/cmd_top.c"; else not_ok "curses only in cli/cmd_top.c"; echo "$bad" | sed 's/^/# /'; fi

# No command calls another command's file: what two commands share lives in
# a cli_*.c helper module (cli_util.c, cli_audit.c, cli_calibrate.c), and
# the command table (commands.c) and pciescope.c are the only callers of
# cmd_*.c. Functions: defined at column 0, not static.
defined_functions() { # FILE
	grep -E '^[A-Za-z_][A-Za-z0-9_ *]*[ *]?[A-Za-z_][A-Za-z0-9_]*\(' "$1" |
		grep -vE '^(static|extern|typedef)\b|;[[:space:]]*$' |
		sed -E 's/^[^(]*[ *]([A-Za-z_][A-Za-z0-9_]*)\(.*/\1/'
}
cross_command_calls() { # DIR: "file:line: ... (calls NAME of cmd_x.c)" for each
	local f g name
	for f in "$1"/cmd_*.c; do
		for name in $(defined_functions "$f"); do
			for g in "$1"/cmd_*.c; do
				[ "$g" = "$f" ] && continue
				grep -Hn "\b$name[[:space:]]*(" "$g" | grep -vE '^[^:]*:[0-9]+:[[:space:]]*(/\*|\*)' |
					sed "s|\$| (calls $name of ${f##*/})|"
			done
		done
	done
}
# The check finds a planted call (else it could not fail).
plant=$(mktemp -d)
printf 'int cmd_a(void)\n{\n        return 0;\n}\n\nint cmd_a_helper(int x)\n{\n        return x;\n}\n' >"$plant/cmd_a.c"
printf 'int cmd_b(void)\n{\n        return cmd_a_helper(1);\n}\n' >"$plant/cmd_b.c"
bad=$(cross_command_calls "$plant")
rm -rf "$plant"
if grep -q "cmd_b.c:3:.*calls cmd_a_helper of cmd_a.c" <<<"$bad" && [ "$(wc -l <<<"$bad")" -eq 1 ]; then
	ok "the cross-command check finds a planted call"
else
	not_ok "the cross-command check finds a planted call (got: $bad)"
fi
[ "$(defined_functions cli/cmd_pmu.c | grep -c '^cmd_pmu$')" -eq 1 ] && ok "the cross-command check sees cli/cmd_pmu.c's functions" ||
	not_ok "the cross-command check sees cli/cmd_pmu.c's functions"
bad=$(cross_command_calls cli)
if [ -z "$bad" ]; then ok "no cli/cmd_*.c calls a function of another cmd_*.c"; else not_ok "no cli/cmd_*.c calls a function of another cmd_*.c"; echo "$bad" | sed 's/^/# /'; fi

# Nothing in collectors/ prints, exits or aborts.
bad=$(grep -nE '\b(printf|fprintf|puts|fputs|perror|exit|abort)[[:space:]]*\(' collectors/*.c | grep -vE 'snprintf|vsnprintf|/\*|^\s*\*')
if [ -z "$bad" ]; then ok "collectors/ never prints, exits or aborts"; else not_ok "collectors/ never prints, exits or aborts"; echo "$bad" | sed 's/^/# /'; fi

# The snapshot's description generator is pure (facts in, JSON out): the
# facts are read by machine_facts.c, never by machine_desc.c.
bad=$(grep -nE '\b(hw_read_file|hw_read_file_v|hw_list_dir|hw_write_file|hw_path|pci_source_scan|perf_pmu_load|perf_pmu_list|uncore_discover|fopen|open|opendir|read|write)[[:space:]]*\(' collectors/machine_desc.c | grep -vE '^\s*[0-9]+:\s*(/\*|\*)')
if [ -z "$bad" ]; then ok "collectors/machine_desc.c does no I/O"; else not_ok "collectors/machine_desc.c does no I/O"; echo "$bad" | sed 's/^/# /'; fi
# So are the snapshot's redactions (bytes in, bytes out): their unit test
# and fuzz target feed them anything.
bad=$(grep -nE '\b(hw_read_file|hw_read_file_v|hw_list_dir|hw_write_file|hw_path|pci_source_scan|fopen|open|opendir|read|write|unlink|rename)[[:space:]]*\(' collectors/redact.c | grep -vE '^\s*[0-9]+:\s*(/\*|\*)')
if [ -z "$bad" ]; then ok "collectors/redact.c does no I/O"; else not_ok "collectors/redact.c does no I/O"; echo "$bad" | sed 's/^/# /'; fi

# The rules themselves can fail: a planted violation is caught.

tmpd=$(mktemp -d)
trap 'rm -rf "$tmpd"' EXIT
printf '#include "sim.h"\n' >"$tmpd/planted.c"
out=$(rule "planted" "$tmpd/planted.c" -- "${SIM_H[@]}")
case "$out" in
*"not ok"*) ok "a planted violation (collectors file including sim.h) is caught" ;;
*) not_ok "a planted violation was not caught" ;;
esac

# A test's check runs one command: `check "..." [ a ] && [ b ]` checks only
# a, and b's failure is lost. Two conditions go through eval '...'.
lost_condition() { grep -nE "^[[:space:]]*check .*\] && \[" "$@" | grep -v "eval '"; }
bad=$(lost_condition tests/integration/*.sh)
if [ -z "$bad" ]; then ok "no integration test's check drops its second condition"; else not_ok "no integration test's check drops its second condition"; echo "$bad" | sed 's/^/# /'; fi
printf 'check "planted" [ 1 -eq 1 ] && [ 1 -eq 2 ]\n' >"$tmpd/planted.sh"
[ -n "$(lost_condition "$tmpd/planted.sh")" ] && ok "the dropped-condition check finds a planted one" ||
	not_ok "the dropped-condition check finds a planted one"

echo "1..$n"
[ "$fail" -eq 0 ]
