#!/bin/bash
# sim_lspci.sh - the real lspci judges the simulated machines' sysfs trees.
#
# For every shipped machine description, tests/tools/sim_write writes the
# tree and prints what each function was described with; pciutils' lspci,
# pointed at the tree through its linux-sysfs access method, must report the
# same port type, LnkCap and LnkSta speed and width, MaxPayload supported,
# MaxPayload and MaxReadReq for every function, and no function more or
# less. lspci decodes the `config` files on its own: it is our outside
# oracle for the simulator's configuration-space images.
. "$(dirname "$0")/lib.sh"

LSPCI=${LSPCI:-$(command -v lspci)}
[ -x "$LSPCI" ] || skip_all "lspci (pciutils) is not installed"
"$LSPCI" -O help 2>&1 | grep -q '^sysfs.path' || skip_all "this lspci has no sysfs.path option"
SIM_WRITE="$top_builddir/tests/tools/sim_write"
[ -x "$SIM_WRITE" ] || skip_all "tests/tools/sim_write is not built (make check builds it)"
AWK=${AWK:-awk}

work=$(mktemp -d "${TMPDIR:-/tmp}/sim_lspci.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

# lspci -vv on stdin -> "<bdf> <type> <cap speed> x<w> <sta speed> x<w> <mpss> <mps> <mrrs>"
parse_lspci() {
	"$AWK" '
	function flush() {
		if (bdf != "")
			print bdf, type, cs, cw, ss, sw, mpss, mps, mrrs
	}
	function field_after(word,    i, v) {
		for (i = 1; i < NF; i++)
			if ($i == word) {
				v = $(i + 1)
				sub(/,$/, "", v)
				return v
			}
		return "?"
	}
	/^[0-9a-f][0-9a-f][0-9a-f][0-9a-f]:[0-9a-f][0-9a-f]:[0-9a-f][0-9a-f]\.[0-7] / {
		flush()
		bdf = $1; type = "none"
		cs = cw = ss = sw = "-"
		mpss = mps = mrrs = "?"
		next
	}
	/Capabilities: \[[0-9a-f]+\] Express/ {
		if ($0 ~ /Root Complex Integrated Endpoint/) type = "rciep"
		else if ($0 ~ /Root Port/) type = "root_port"
		else if ($0 ~ /Upstream Port/) type = "upstream"
		else if ($0 ~ /Downstream Port/) type = "downstream"
		else if ($0 ~ /Legacy Endpoint/) type = "legacy_endpoint"
		else if ($0 ~ /Endpoint/) type = "endpoint"
		else type = "other"
	}
	$1 == "DevCap:" { mpss = field_after("MaxPayload") }
	$1 == "MaxPayload" && $4 == "MaxReadReq" { mps = $2; mrrs = $5 }
	$1 == "LnkCap:" { cs = field_after("Speed"); cw = field_after("Width") }
	$1 == "LnkSta:" { ss = field_after("Speed"); sw = field_after("Width") }
	END { flush() }
	'
}

for machine in "$top_srcdir"/sim/machines/*.json; do
	name=$(basename "$machine" .json)
	root="$work/$name"
	mkdir -p "$root"
	if ! "$SIM_WRITE" --expect "$machine" "$root" >"$work/$name.expect" 2>"$work/$name.err"; then
		not_ok "$name: sim_write: $(cat "$work/$name.err")"
		continue
	fi
	ok "$name: tree written ($(wc -l <"$work/$name.expect") functions)"
	if ! "$LSPCI" -A linux-sysfs -O "sysfs.path=$root/sys/bus/pci" -D -vv \
		>"$work/$name.lspci" 2>"$work/$name.lspci.err"; then
		not_ok "$name: lspci failed: $(head -3 "$work/$name.lspci.err")"
		continue
	fi
	parse_lspci <"$work/$name.lspci" >"$work/$name.seen"
	check "$name: lspci lists every described function and no other" \
		cmp -s <(cut -d' ' -f1 "$work/$name.expect" | sort) <(cut -d' ' -f1 "$work/$name.seen" | sort)
	while read -r bdf rest; do
		seen=$(grep "^$bdf " "$work/$name.seen" | head -1)
		if [ "$seen" = "$bdf $rest" ]; then
			ok "$name: $bdf lspci: $rest"
		else
			not_ok "$name: $bdf described as '$rest', lspci shows '${seen#"$bdf "}'"
		fi
	done <"$work/$name.expect"
done
done_testing
