/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * redact.h - what `pciescope snapshot` removes before anything is written:
 * the identifying fields of a function's configuration space and the
 * addresses, host names and secrets of a kernel command line. Pure: bytes
 * in, bytes out, bounded; no I/O.
 */
#ifndef PCIESCOPE_REDACT_H
#define PCIESCOPE_REDACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What replaces a removed command-line value. */
#define REDACT_MARKER "<redacted>"

/* Fields redact_cfg() zeroed (bit flags). */
#define REDACT_CFG_DSN 0x1u /* Device Serial Number capability: its 8 serial bytes */
#define REDACT_CFG_VPD 0x2u /* VPD capability: its data register (the last VPD dword read) */

/*
 * redact_cfg - zero, in @cfg (@len valid bytes from offset 0), the body of
 * every Device Serial Number extended capability (ID 0x0003: the 8 bytes
 * after its header, often a MAC address on a NIC) and the data register of
 * every VPD capability (ID 0x03: 4 bytes that hold part of the VPD, where
 * serial numbers live). The headers stay, so the capabilities are still
 * seen. The walks are bounded: at most 48 standard and 960 extended
 * capabilities, dword-aligned pointers, standard ones at 0x40..0xff,
 * extended ones at 0x100 and above; an all-zero or all-ones extended header
 * ends the list. Returns the REDACT_CFG_* of the fields found (and zeroed).
 * A second call changes no byte; it may report fewer fields, when the first
 * zeroed a capability header that its walk had passed (a malformed list).
 */
unsigned int redact_cfg(uint8_t *cfg, size_t len);

/*
 * redact_cmdline - @cmdline (a kernel command line; blanks outside double
 * quotes separate parameters, as the kernel splits it) into @out of @size
 * bytes with every blank written as one space, the blanks after the last
 * word dropped, and replaced by REDACT_MARKER:
 *  - the value of a parameter whose name (case-insensitively, a leading
 *    double quote aside) contains "pass", "token", "secret", "key",
 *    "credential" or "username", or ends in "pw" (rootpw=, inst.rootpw=);
 *  - the value of a parameter that names addresses, host names or servers:
 *    ip=, ipv6=, BOOTIF=, ifname=, nfsroot=, nfsaddrs=, netroot=, ks=,
 *    inst.ks=, repo=, inst.repo=, method=, stage2=, inst.stage2=, proxy=,
 *    inst.proxy=, url=, preseed/url=, netconsole=, hostname=,
 *    systemd.hostname=, nameserver=, rd.route=, rd.iscsi.initiator=,
 *    rd.iscsi.target.ip=, rd.iscsi.target.name=, iscsi_initiator=,
 *    iscsi_target_ip=, iscsi_target_name=, inst.syslog=, and root= on a
 *    network server (nfs:, nfs4:, cifs:, iscsi:, nbd:, nvmf:);
 *  - any other value, or word without '=', that holds a URL ("://"), an
 *    IPv4 address or a MAC address (6 pairs of hex digits joined by ':' or
 *    '-');
 *  - the word after a flag without '=' whose name looks secret
 *    ("--password VALUE"; "--password=VALUE" is the first rule);
 *  - everything after a standalone "--" (init's own arguments), as one
 *    REDACT_MARKER.
 * A parameter is written "name=<redacted>" (quotes dropped), a word
 * "<redacted>". Text before an '=' that holds a quote or a blank (quoted
 * text, no parameter name) or an address is no name: such a word is
 * replaced whole when anything in it looks secret or identifying (the
 * last piece of its name is checked as a name too: `"b ip=host"`). The output is never longer than
 * the input plus strlen(REDACT_MARKER) per value redacted, and redacting it again changes nothing.
 * Returns the number of values redacted, or -ENOSPC when @out is too small (@out is then not a
 * redacted line: do not use it).
 */
int redact_cmdline(const char *cmdline, char *out, size_t size);

/*
 * redact_rules - the rules above in words, for a manifest: the fields
 * redact_cfg() zeroes (@cfg true) or the command-line values
 * redact_cmdline() replaces. NULL-terminated; static strings.
 */
const char *const *redact_rules(bool cfg);

#endif /* PCIESCOPE_REDACT_H */
