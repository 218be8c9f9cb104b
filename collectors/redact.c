// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * redact.c - removing identifying fields and secrets before a snapshot is
 * written. See redact.h.
 */
#include "redact.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "pci_regs.h"

#define CAP_ID_VPD     0x03   /* standard capability: Vital Product Data */
#define VPD_DATA       4      /* its data register, 32 bits */
#define EXT_CAP_ID_DSN 0x0003 /* extended capability: Device Serial Number */
#define DSN_SERIAL     4      /* its serial, 64 bits */
#define DSN_SERIAL_LEN 8

/* ---- configuration space ---- */

static uint32_t get32(const uint8_t *cfg, size_t off)
{
        return (uint32_t)cfg[off] | (uint32_t)cfg[off + 1] << 8 | (uint32_t)cfg[off + 2] << 16 |
               (uint32_t)cfg[off + 3] << 24;
}

static unsigned int redact_std_caps(uint8_t *cfg, size_t len)
{
        size_t limit = len < PCI_CFG_SPACE_SIZE ? len : PCI_CFG_SPACE_SIZE;
        unsigned int found = 0;
        size_t pos;

        if (len < PCI_STD_HEADER_SIZE ||
            !((cfg[PCI_STATUS] | cfg[PCI_STATUS + 1] << 8) & PCI_STATUS_CAP_LIST))
                return 0;
        pos = (cfg[PCI_HEADER_TYPE] & PCI_HEADER_TYPE_MASK) == PCI_HEADER_TYPE_CARDBUS
                  ? cfg[PCI_CB_CAPABILITY_LIST]
                  : cfg[PCI_CAPABILITY_LIST];
        /* At most one step per dword of 0x40..0xff: a loop ends there. */
        for (size_t step = 0; step < (PCI_CFG_SPACE_SIZE - PCI_STD_HEADER_SIZE) / 4; step++) {
                pos &= ~(size_t)3;
                if (pos < PCI_STD_HEADER_SIZE || pos + 2 > limit ||
                    cfg[pos + PCI_CAP_LIST_ID] == 0xff)
                        break;
                if (cfg[pos + PCI_CAP_LIST_ID] == CAP_ID_VPD && pos + VPD_DATA + 4 <= limit) {
                        memset(cfg + pos + VPD_DATA, 0, 4);
                        found |= REDACT_CFG_VPD;
                }
                pos = cfg[pos + PCI_CAP_LIST_NEXT];
        }
        return found;
}

static unsigned int redact_ext_caps(uint8_t *cfg, size_t len)
{
        size_t limit = len < PCI_CFG_SPACE_EXP_SIZE ? len : PCI_CFG_SPACE_EXP_SIZE;
        unsigned int found = 0;
        size_t pos = PCI_CFG_SPACE_SIZE;

        for (size_t step = 0; step < (PCI_CFG_SPACE_EXP_SIZE - PCI_CFG_SPACE_SIZE) / 4; step++) {
                uint32_t header;

                if (pos < PCI_CFG_SPACE_SIZE || pos + 4 > limit)
                        break;
                header = get32(cfg, pos);
                if (header == 0 || header == 0xffffffffu)
                        break;
                if (PCI_EXT_CAP_ID(header) == EXT_CAP_ID_DSN &&
                    pos + DSN_SERIAL + DSN_SERIAL_LEN <= limit) {
                        memset(cfg + pos + DSN_SERIAL, 0, DSN_SERIAL_LEN);
                        found |= REDACT_CFG_DSN;
                }
                pos = PCI_EXT_CAP_NEXT(header); /* dword aligned by the mask */
        }
        return found;
}

static const char *const cfg_rules[] = {
    "Device Serial Number capability: its 8 serial bytes (a NIC's is often its MAC address) "
    "zeroed, its header kept",
    "VPD capability: its data register (the last 4 bytes of Vital Product Data read, where "
    "serial numbers live) zeroed",
    NULL};

static const char *const cmdline_rules[] = {
    "the value of a parameter whose name contains pass, token, secret, key, credential or "
    "username, or ends in pw (password=, api_token=, rd.luks.key=, rootpw=, inst.rootpw=)",
    "the value of a parameter naming addresses, host names or servers: ip=, ipv6=, BOOTIF=, "
    "ifname=, nfsroot=, nfsaddrs=, netroot=, ks=, inst.ks=, repo=, inst.repo=, method=, "
    "stage2=, inst.stage2=, proxy=, inst.proxy=, url=, preseed/url=, netconsole=, hostname=, "
    "systemd.hostname=, nameserver=, rd.route=, rd.iscsi.initiator=, rd.iscsi.target.ip=, "
    "rd.iscsi.target.name=, iscsi_initiator=, iscsi_target_ip=, iscsi_target_name=, "
    "inst.syslog=, root= on nfs:, nfs4:, cifs:, iscsi:, nbd: or nvmf:",
    "any other value or word holding a URL, an IPv4 address or a MAC address",
    "the word after a flag named like a secret (--password VALUE)",
    "everything after a standalone -- (init's own arguments)",
    NULL};

const char *const *redact_rules(bool cfg)
{
        return cfg ? cfg_rules : cmdline_rules;
}

unsigned int redact_cfg(uint8_t *cfg, size_t len)
{
        if (!cfg)
                return 0;
        return redact_std_caps(cfg, len) | redact_ext_caps(cfg, len);
}

/* ---- the kernel command line ---- */

/* The kernel's isspace(): the C blanks and no-break space (Latin-1 0xa0). */
static bool blank(char c)
{
        return isspace((unsigned char)c) || (unsigned char)c == 0xa0;
}

static bool has_word(const char *s, size_t len, const char *word)
{
        size_t w = strlen(word);

        for (size_t i = 0; i + w <= len; i++)
                if (tolower((unsigned char)s[i]) == tolower((unsigned char)word[0]) &&
                    !strncasecmp(s + i, word, w))
                        return true;
        return false;
}

static bool is_name(const char *s, size_t len, const char *name)
{
        return strlen(name) == len && !strncasecmp(s, name, len);
}

/* A name with no quote or blank in it. */
static bool plain(const char *name, size_t len)
{
        for (size_t i = 0; i < len; i++)
                if (name[i] == '"' || blank(name[i]))
                        return false;
        return true;
}

/* A name whose value is a secret. */
static bool secret_name(const char *name, size_t len)
{
        static const char *const words[] = {"pass", "token",      "secret",
                                            "key",  "credential", "username"};

        for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
                if (has_word(name, len, words[i]))
                        return true;
        return len >= 2 && !strncasecmp(name + len - 2, "pw", 2);
}

/* A name whose value is an address, a host name or a server. */
static bool address_name(const char *name, size_t len)
{
        static const char *const names[] = {"ip",
                                            "ipv6",
                                            "bootif",
                                            "ifname",
                                            "nfsroot",
                                            "nfsaddrs",
                                            "netroot",
                                            "ks",
                                            "inst.ks",
                                            "repo",
                                            "inst.repo",
                                            "method",
                                            "stage2",
                                            "inst.stage2",
                                            "proxy",
                                            "inst.proxy",
                                            "url",
                                            "preseed/url",
                                            "netconsole",
                                            "hostname",
                                            "systemd.hostname",
                                            "nameserver",
                                            "rd.route",
                                            "rd.iscsi.initiator",
                                            "rd.iscsi.target.ip",
                                            "rd.iscsi.target.name",
                                            "iscsi_initiator",
                                            "iscsi_target_ip",
                                            "iscsi_target_name",
                                            "inst.syslog"};

        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
                if (is_name(name, len, names[i]))
                        return true;
        return false;
}

/* root= on a network server. */
static bool network_root(const char *name, size_t len, const char *v, size_t vlen)
{
        static const char *const schemes[] = {"nfs:", "nfs4:", "cifs:", "iscsi:", "nbd:", "nvmf:"};

        if (!is_name(name, len, "root"))
                return false;
        if (vlen && *v == '"') {
                v++;
                vlen--;
        }
        for (size_t i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++)
                if (vlen >= strlen(schemes[i]) && !strncasecmp(v, schemes[i], strlen(schemes[i])))
                        return true;
        return false;
}

/* An IPv4 address (four decimal numbers up to 255 joined by dots) at @i. */
static bool ipv4_at(const char *s, size_t len, size_t i)
{
        for (int part = 0; part < 4; part++) {
                unsigned int v = 0;
                size_t d = 0;

                if (part) {
                        if (i >= len || s[i] != '.')
                                return false;
                        i++;
                }
                while (i < len && d < 4 && isdigit((unsigned char)s[i])) {
                        v = v * 10 + (unsigned int)(s[i] - '0');
                        i++;
                        d++;
                }
                if (!d || d > 3 || v > 255)
                        return false;
        }
        return true;
}

/* A MAC address (six pairs of hex digits joined by ':' or '-') at @i. */
static bool mac_at(const char *s, size_t len, size_t i)
{
        char sep = 0;

        for (int part = 0; part < 6; part++) {
                if (part) {
                        if (i >= len || (s[i] != ':' && s[i] != '-') || (sep && s[i] != sep))
                                return false;
                        sep = s[i++];
                }
                if (i + 2 > len || !isxdigit((unsigned char)s[i]) ||
                    !isxdigit((unsigned char)s[i + 1]))
                        return false;
                i += 2;
        }
        return i == len || !isxdigit((unsigned char)s[i]);
}

/* Text that holds a URL, an IPv4 address or a MAC address. */
static bool identifying(const char *s, size_t len)
{
        if (has_word(s, len, "://"))
                return true;
        for (size_t i = 0; i < len; i++) {
                if (isdigit((unsigned char)s[i]) && (!i || !isdigit((unsigned char)s[i - 1])) &&
                    ipv4_at(s, len, i))
                        return true;
                if (isxdigit((unsigned char)s[i]) && (!i || !isxdigit((unsigned char)s[i - 1])) &&
                    mac_at(s, len, i))
                        return true;
        }
        return false;
}

struct out {
        char *buf;
        size_t size, len;
};

static int put(struct out *o, const char *s, size_t n)
{
        if (o->len + n >= o->size)
                return -ENOSPC;
        memcpy(o->buf + o->len, s, n);
        o->len += n;
        return 0;
}

#define MARKER_LEN (sizeof(REDACT_MARKER) - 1)

int redact_cmdline(const char *cmdline, char *out, size_t size)
{
        struct out o = {.buf = out, .size = size};
        const char *p = cmdline;
        bool pending = false; /* the next word is a secret flag's value */
        bool in_blanks = false;
        size_t word_end = 0; /* where the blanks after the last word began */
        int redacted = 0;

        if (!size)
                return -ENOSPC;
        while (*p) {
                const char *start = p, *eq = NULL, *name;
                bool quoted = false;
                size_t nlen, wlen;

                if (blank(*p)) {
                        if (!in_blanks)
                                word_end = o.len;
                        in_blanks = true;
                        if (put(&o, " ", 1))
                                return -ENOSPC;
                        p++;
                        continue;
                }
                in_blanks = false;
                /* One parameter: up to a blank outside double quotes. */
                for (; *p && (quoted || !blank(*p)); p++) {
                        if (*p == '"')
                                quoted = !quoted;
                        else if (*p == '=' && !eq)
                                eq = p;
                }
                if (p - start == 2 && start[0] == '-' && start[1] == '-') {
                        /* init's own arguments follow */
                        if (put(&o, "--", 2))
                                return -ENOSPC;
                        while (blank(*p))
                                p++;
                        if (*p) {
                                if (put(&o, " " REDACT_MARKER, 1 + MARKER_LEN))
                                        return -ENOSPC;
                                redacted++;
                        }
                        break;
                }
                if (pending) {
                        pending = false;
                        if (put(&o, REDACT_MARKER, MARKER_LEN))
                                return -ENOSPC;
                        redacted++;
                        continue;
                }
                name = start + (*start == '"');
                nlen = (size_t)((eq ? eq : p) - name);
                wlen = (size_t)(p - start);
                /* A name with a quote or a blank in it (quoted text up to
                 * an '=') is no parameter name: the word goes whole if
                 * anything in it looks secret or identifying. So does a
                 * word whose name holds an address. */
                if (!plain(name, nlen) || identifying(name, nlen)) {
                        /* the name's last piece: "ip" of `a" ip=...` */
                        const char *tail = name + nlen;

                        while (tail > name && tail[-1] != '"' && !blank(tail[-1]))
                                tail--;
                        pending = !eq && name[0] == '-' && secret_name(name, nlen);
                        if (secret_name(start, wlen) || secret_name(name, nlen) ||
                            address_name(tail, (size_t)(name + nlen - tail)) ||
                            identifying(start, wlen)) {
                                if (put(&o, REDACT_MARKER, MARKER_LEN))
                                        return -ENOSPC;
                                redacted++;
                                continue;
                        }
                } else if (eq) {
                        const char *v = eq + 1;
                        size_t vlen = (size_t)(p - v);

                        if (secret_name(name, nlen) || address_name(name, nlen) ||
                            network_root(name, nlen, v, vlen) || identifying(v, vlen)) {
                                if (put(&o, name, nlen + 1) || put(&o, REDACT_MARKER, MARKER_LEN))
                                        return -ENOSPC;
                                redacted++;
                                continue;
                        }
                } else {
                        pending = name[0] == '-' && secret_name(name, nlen);
                }
                if (put(&o, start, (size_t)(p - start)))
                        return -ENOSPC;
        }
        /* Blanks inside kept quoted values become spaces too. */
        for (size_t i = 0; i < o.len; i++)
                if (blank(o.buf[i]))
                        o.buf[i] = ' ';
        /* Blanks after the last word go; those inside it (an unterminated
         * quote runs to the end) stay, so a second pass reads the same word. */
        if (in_blanks)
                o.len = word_end;
        o.buf[o.len] = '\0';
        return redacted;
}
