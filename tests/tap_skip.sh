#!/bin/bash
# tap_skip.sh --emulator=EMU PROGRAM [ARGS...] - the LOG_COMPILER of every
# test (Makefile.am). A script runs as it is. A compiled test program (a
# cmocka unit test) runs under EMU when EMU is not empty (a cross build:
# configure's CLI_EMULATOR, qemu-user), and its skipped tests are made
# TAP: cmocka 1.1.5 (Debian 12) prints a skip as "not ok N # SKIP name",
# which automake's TAP driver counts as a failure; TAP's form is
# "ok N # SKIP name". Only those lines change; the exit status is the
# program's.
emu=
case ${1-} in --emulator=*) emu=${1#--emulator=}; shift ;; esac
prog=${1:?usage: tap_skip.sh --emulator=EMU PROGRAM [ARGS...]}
if [ "$(head -c 4 "$prog" 2>/dev/null | od -An -c | tr -d ' ')" != '177ELF' ]; then
	exec "$@"
fi
# shellcheck disable=SC2086 # EMU may be a command with options
${emu} "$@" | sed -u 's/^not ok \([0-9][0-9]*\) # SKIP/ok \1 # SKIP/'
exit "${PIPESTATUS[0]}"
