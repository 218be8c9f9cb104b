// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pci_addr.c - PCI function addresses: format, parse, order. Pure.
 */
#include "pci_addr.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

void pci_addr_format(const struct pci_addr *addr, char *out)
{
        snprintf(out, PCI_BDF_LEN, "%04x:%02x:%02x.%u", addr->domain, addr->bus, addr->dev,
                 addr->func & 7u);
}

static int parse_hex(const char **s, unsigned long max, unsigned long *out)
{
        char *end;
        unsigned long v;

        if (!((**s >= '0' && **s <= '9') || (**s >= 'a' && **s <= 'f') ||
              (**s >= 'A' && **s <= 'F')))
                return -EINVAL;
        errno = 0;
        v = strtoul(*s, &end, 16);
        if (errno || v > max || end - *s > 8)
                return -EINVAL;
        *s = end;
        *out = v;
        return 0;
}

int pci_addr_parse(const char *s, struct pci_addr *addr)
{
        unsigned long a, b, c, f;
        const char *p = s;

        if (parse_hex(&p, 0xffffffffu, &a) || *p++ != ':')
                return -EINVAL;
        if (parse_hex(&p, 0xffu, &b))
                return -EINVAL;
        if (*p == ':') {
                /* dddd:bb:dd.f */
                p++;
                if (a > 0xffffffffu || parse_hex(&p, 0x1fu, &c) || *p++ != '.' ||
                    parse_hex(&p, 7u, &f) || *p)
                        return -EINVAL;
                addr->domain = (uint32_t)a;
                addr->bus = (uint8_t)b;
                addr->dev = (uint8_t)c;
                addr->func = (uint8_t)f;
                return 0;
        }
        /* bb:dd.f */
        if (a > 0xffu || b > 0x1fu || *p++ != '.' || parse_hex(&p, 7u, &f) || *p)
                return -EINVAL;
        addr->domain = 0;
        addr->bus = (uint8_t)a;
        addr->dev = (uint8_t)b;
        addr->func = (uint8_t)f;
        return 0;
}

int pci_addr_compare(const struct pci_addr *a, const struct pci_addr *b)
{
        if (a->domain != b->domain)
                return a->domain < b->domain ? -1 : 1;
        if (a->bus != b->bus)
                return a->bus < b->bus ? -1 : 1;
        if (a->dev != b->dev)
                return a->dev < b->dev ? -1 : 1;
        if (a->func != b->func)
                return a->func < b->func ? -1 : 1;
        return 0;
}
