#!/bin/bash
# man_pages.sh - pciescope(1) and collectd-pcie(5), generated from the docs/
# pages by packaging/gen_man.py, document every option the code accepts (and no
# option it does not), and render without groff warnings; pciescope(1)'s
# SYNOPSIS and COMMANDS are the command table's (`pciescope help --markdown`).
. "$(dirname "$0")/lib.sh"

man1="$top_builddir/packaging/man/pciescope.1"
man5="$top_builddir/packaging/man/collectd-pcie.5"
[ -f "$man1" ] && [ -f "$man5" ] || skip_all "man pages not built (python3 missing at configure time)"

# The options each page documents: the tags of its .TP entries
# ("\fBName\fR \fIargument\fR", "\fBA\fR, \fBB\fR \fIarguments\fR").
documented() {
	awk 'prev == ".TP" { print } { prev = $0 }' "$1" |
		sed -n 's/\\-/-/g; s/\\fI.*//; /^\\fB/{s/\\f[BRI]//g; s/, */\n/g; p}' | sed 's/^ *//; s/ *$//'
}

# The CLI's long options: `pciescope --help` lists every option of the
# command table, which getopt_long's table is built from.
cli_opts=$("$PCIESCOPE" --help | sed -n '/^Options/,$s/^  \(-., \)\{0,1\}\(--[a-z-]*\).*/\2/p' | sort -u)
# Every configuration key the plugins accept: pcie's from the engine's option
# table (`pciescope options`), remote_write's from what its parser compares.
conf_keys=$({
	"$top_builddir/cli/pciescope" options | awk '{ print $1 }'
	grep -ho 'strcasecmp([a-z]*->key, "[A-Za-z0-9]*")' "$top_srcdir/plugin/remote_write.c" \
		"$top_srcdir/plugin/openmetrics.c" |
		sed 's/.*"\(.*\)")/\1/'
} | sort -u)
[ "$(echo "$cli_opts" | wc -l)" -ge 15 ] && ok "found the CLI's option table ($(echo "$cli_opts" | wc -l) options)" ||
	not_ok "found the CLI's option table in \`pciescope --help\`"
[ "$(echo "$conf_keys" | wc -l)" -ge 60 ] && ok "found the plugins' config keys ($(echo "$conf_keys" | wc -l))" ||
	not_ok "found the plugins' config keys"

doc1=$(documented "$man1" | sort -u)
doc5=$(documented "$man5" | sort -u)
IFS=$'\n'
for o in $cli_opts; do
	grep -qx -- "$o" <<<"$doc1" && ok "pciescope(1) documents $o" || not_ok "pciescope(1) documents $o (add it to docs/cli.md's option table)"
done
for o in $(grep -- '^--' <<<"$doc1"); do
	grep -qx -- "$o" <<<"$cli_opts" && ok "pciescope(1): $o is an option of the CLI" || not_ok "pciescope(1): $o is documented but the CLI has no such option"
done
for k in $conf_keys; do
	grep -qix -- "$k" <<<"$doc5" && ok "collectd-pcie(5) documents $k" || not_ok "collectd-pcie(5) documents $k (add it to a configuration table of docs/)"
done
for k in $doc5; do
	grep -qix -- "$k" <<<"$conf_keys" && ok "collectd-pcie(5): $k is a key the plugins accept" || not_ok "collectd-pcie(5): $k is documented but no plugin accepts it"
done

# Every command of the table (and each trace sub-command) is in COMMANDS,
# and has its usage line in SYNOPSIS; no other command is.
commands=$("$PCIESCOPE" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z]\{1,\}\( [a-z]\{1,\}\)\{0,1\}\)  .*/\1/p')
[ "$(echo "$commands" | wc -l)" -ge 12 ] && ok "found the command table ($(echo "$commands" | wc -l) commands)" ||
	not_ok "found the command table in \`pciescope --help\`"
listed=$(sed -n '/^\.SH COMMANDS/,/^\.SH /p' "$man1" | awk 'prev == ".TP" { print } { prev = $0 }' | sed 's/\\f[BRI]//g; s/\\-/-/g')
check "pciescope(1) COMMANDS lists the table's commands, in its order" test "$listed" = "$commands"
synopsis=$(sed -n '/^\.SH SYNOPSIS/,/^\.SH /p' "$man1" | sed 's/\\-/-/g')
for c in $commands; do
	grep -q "^pciescope $c " <<<"$synopsis" && ok "pciescope(1) SYNOPSIS has a usage line of $c" ||
		not_ok "pciescope(1) SYNOPSIS has a usage line of $c"
done

# The pages are what the docs and the command table render to today (a
# stale page fails).
d="$top_srcdir/docs"
for p in pciescope.1 collectd-pcie.5; do
	check "$p is docs/ rendered now" cmp -s <("$PYTHON3" "$top_srcdir/packaging/gen_man.py" "$p" \
		"$(sed -n 's/^\.TH [^ ]* [0-9] "[^"]*" "pciescope \([^"]*\)".*/\1/p' "$top_builddir/packaging/man/$p")" \
		--commands <("$PCIESCOPE" help --markdown) \
		"$d/cli.md" "$d/configuration.md" "$d/remote_write.md" "$d/exporter.md") \
		"$top_builddir/packaging/man/$p"
done
if command -v man >/dev/null; then
	for f in "$man1" "$man5"; do
		w=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l "$f" 2>&1 >/dev/null)
		[ -z "$w" ] && ok "$(basename "$f") renders without warnings" || not_ok "$(basename "$f") renders without warnings: $w"
	done
fi
done_testing
