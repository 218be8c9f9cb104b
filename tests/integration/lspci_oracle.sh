#!/bin/bash
# lspci_oracle.sh - pciutils' lspci -vv judges pciescope: speed, width, MPSS,
# MPS and MRRS of every PCIe function of this machine and of every dump
# fixture (real and synthetic) must be identical.
. "$(dirname "$0")/lib.sh"

LSPCI=${LSPCI:-$(command -v lspci)}
[ -x "$LSPCI" ] || skip_all "lspci (pciutils) is not installed"
args=()
for f in "$FIXTURES"/pcidump/*.txt "$FIXTURES"/synthetic/*.lspci-xxxx.txt; do
	args+=(--dump "$f")
done
exec "$PYTHON3" "$top_srcdir/tests/oracle/lspci_oracle.py" --pciescope "$PCIESCOPE" \
	--lspci "$LSPCI" --live "${args[@]}"
