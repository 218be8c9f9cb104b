// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * machine_pci.c - the PCI tree of a machine description: BDFs, link speeds
 * and widths, payload sizes, AER counters, Root Ports, switches, endpoints
 * and RCiEPs, then the tree as a whole (bus numbers nested as a kernel
 * would number them, one device per link). Part of the machine reader
 * (sim_machine.c; shared declarations in machine_internal.h).
 */
#define _GNU_SOURCE
#include "machine_internal.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- small parsers ---- */

/* "dddd:bb:dd.f" or "bb:dd.f"; returns false on anything else. */
static bool parse_bdf(const char *s, uint16_t *domain, uint8_t *bus, uint8_t *dev, uint8_t *fn)
{
        unsigned int part[4] = {0, 0, 0, 0};
        const unsigned int digits4[] = {4, 2, 2, 1};
        const char seps4[] = {':', ':', '.', '\0'};
        size_t len = strlen(s);
        const unsigned int *digits = digits4;
        const char *seps = seps4;
        unsigned int *dst = part;

        if (len == 7) { /* bb:dd.f */
                digits = digits4 + 1;
                seps = seps4 + 1;
                dst = part + 1;
        } else if (len != 12) {
                return false;
        }
        for (size_t f = 0; f < (len == 7 ? 3u : 4u); f++) {
                for (unsigned int i = 0; i < digits[f]; i++) {
                        int h = hexval(*s++);

                        if (h < 0)
                                return false;
                        dst[f] = dst[f] * 16 + (unsigned int)h;
                }
                if (*s++ != seps[f])
                        return false;
        }
        if (part[2] > 0x1f || part[3] > 7)
                return false;
        *domain = (uint16_t)part[0];
        *bus = (uint8_t)part[1];
        *dev = (uint8_t)part[2];
        *fn = (uint8_t)part[3];
        return true;
}

int get_bdf(struct ctx *c, json_object *v, const char *path, uint16_t *domain, uint8_t *bus,
            uint8_t *dev, uint8_t *fn)
{
        char buf[32];
        int r = get_string(c, v, path, buf, sizeof(buf));

        if (r)
                return r;
        if (!parse_bdf(buf, domain, bus, dev, fn))
                return fail(c, path,
                            "\"%s\" is not a BDF: expected \"dddd:bb:dd.f\" (hex, device 00-1f, "
                            "function 0-7)",
                            buf);
        return 0;
}

static const char *const speed_names[] = {"",       "2.5GT/s", "5GT/s", "8GT/s",
                                          "16GT/s", "32GT/s",  "64GT/s"};

/* "16GT/s", "16 GT/s", "16.0GT/s", "2.5GT/s" ... into a code 1..6. */
static int get_speed(struct ctx *c, json_object *v, const char *path, unsigned int *code)
{
        static const double gts[] = {0, 2.5, 5, 8, 16, 32, 64};
        char buf[32];
        char *end;
        double x;
        int r = get_string(c, v, path, buf, sizeof(buf));

        if (r)
                return r;
        x = strtod(buf, &end);
        if (end != buf && buf[0] >= '0' && buf[0] <= '9') {
                while (*end == ' ')
                        end++;
                if (!strcmp(end, "GT/s")) {
                        for (unsigned int i = 1; i <= 6; i++) {
                                if (x == gts[i]) {
                                        *code = i;
                                        return 0;
                                }
                        }
                }
        }
        return fail(c, path,
                    "\"%s\" is not a PCIe link speed (expected one of \"2.5GT/s\", \"5GT/s\", "
                    "\"8GT/s\", \"16GT/s\", \"32GT/s\", \"64GT/s\")",
                    buf);
}

static bool valid_width(long long w)
{
        return w == 1 || w == 2 || w == 4 || w == 8 || w == 12 || w == 16 || w == 32;
}

/* Payload and read-request sizes: 128..4096, a power of two. */
static int get_payload(struct ctx *c, json_object *o, const char *base, const char *key,
                       unsigned int *out, bool *given)
{
        json_object *v = member(o, key);
        char path[PATH_LEN];
        long long x;
        int r;

        *given = false;
        if (!v)
                return 0;
        path_key(path, sizeof(path), base, key);
        r = get_int(c, v, path, 0, 1 << 20, &x);
        if (r)
                return r;
        if (x < 128 || x > 4096 || (x & (x - 1)))
                return fail(c, path, "%lld bytes: expected a power of two from 128 to 4096", x);
        *out = (unsigned int)x;
        *given = true;
        return 0;
}

/* ---- AER counter names, as the kernel's aer.c prints them ---- */

#define AER_COR_BITS   16
#define AER_UNCOR_BITS 27

static const char *const aer_cor_names[AER_COR_BITS] = {
    [0] = "RxErr",    [6] = "BadTLP",       [7] = "BadDLLP",     [8] = "Rollover",
    [12] = "Timeout", [13] = "NonFatalErr", [14] = "CorrIntErr", [15] = "HeaderOF",
};

static const char *const aer_uncor_names[AER_UNCOR_BITS] = {
    [0] = "Undefined",      [4] = "DLP",
    [5] = "SDES",           [12] = "TLP",
    [13] = "FCP",           [14] = "CmpltTO",
    [15] = "CmpltAbrt",     [16] = "UnxCmplt",
    [17] = "RxOF",          [18] = "MalfTLP",
    [19] = "ECRC",          [20] = "UnsupReq",
    [21] = "ACSViol",       [22] = "UncorrIntErr",
    [23] = "BlockedTLP",    [24] = "AtomicOpBlocked",
    [25] = "TLPBlockedErr", [26] = "PoisonTLPBlocked",
};

static const char *const aer_class_keys[SIM_AER_CLASSES] = {"correctable", "nonfatal", "fatal"};
static const char *const aer_keys[] = {"correctable", "nonfatal", "fatal", NULL};
static const char *const aer_unnamed_prefix[SIM_AER_CLASSES] = {
    "dev_cor_errs_bit", "dev_nonfatal_errs_bit", "dev_fatal_errs_bit"};

int sim_aer_bits(enum sim_aer_class cls)
{
        return cls == SIM_AER_CORRECTABLE ? AER_COR_BITS : AER_UNCOR_BITS;
}

const char *sim_aer_bit_name(enum sim_aer_class cls, int bit)
{
        if (bit < 0 || bit >= sim_aer_bits(cls))
                return NULL;
        return cls == SIM_AER_CORRECTABLE ? aer_cor_names[bit] : aer_uncor_names[bit];
}

/* Bit of a counter name in its class, or -1. */
static int aer_bit(enum sim_aer_class cls, const char *name)
{
        const char *const *names = cls == SIM_AER_CORRECTABLE ? aer_cor_names : aer_uncor_names;
        int bits = cls == SIM_AER_CORRECTABLE ? AER_COR_BITS : AER_UNCOR_BITS;
        size_t plen = strlen(aer_unnamed_prefix[cls]);

        for (int i = 0; i < bits; i++) {
                if (names[i] && !strcmp(names[i], name))
                        return i;
        }
        if (!strncmp(name, aer_unnamed_prefix[cls], plen) && name[plen] == '[') {
                const char *p = name + plen + 1;
                int bit = 0;

                if (*p < '0' || *p > '9')
                        return -1;
                while (*p >= '0' && *p <= '9' && bit < 100)
                        bit = bit * 10 + (*p++ - '0');
                if (p[0] == ']' && !p[1] && bit < bits && !names[bit])
                        return bit;
        }
        return -1;
}

/* ---- device parsing ---- */

static const char *kind_what(enum sim_dev_kind kind)
{
        switch (kind) {
        case SIM_ROOT_PORT:
                return "a Root Port";
        case SIM_SWITCH_UP:
                return "a switch (upstream port)";
        case SIM_SWITCH_DOWN:
                return "a switch downstream port";
        case SIM_ENDPOINT:
                return "an endpoint";
        case SIM_RCIEP:
                return "an RCiEP";
        }
        return "a device";
}

static bool is_bridge(enum sim_dev_kind kind)
{
        return kind == SIM_ROOT_PORT || kind == SIM_SWITCH_UP || kind == SIM_SWITCH_DOWN;
}

static int check_max_width(struct ctx *c, const char *path, double v, const void *arg)
{
        (void)arg;
        if (!valid_width((long long)v))
                return fail(c, path, "x%lld is not a PCIe link width (1, 2, 4, 8, 12, 16 or 32)",
                            (long long)v);
        return 0;
}

/* The current width of link end @arg (a device). */
static int check_width(struct ctx *c, const char *path, double v, const void *arg)
{
        const struct sim_device *d = arg;
        long long w = (long long)v;

        if (w && !valid_width(w))
                return fail(c, path,
                            "x%lld is not a PCIe link width (0 = link down, 1, 2, 4, 8, 12, 16 or "
                            "32)",
                            w);
        if ((unsigned int)w > d->max_width)
                return fail(c, path, "x%lld is above max_width x%u", w, d->max_width);
        return 0;
}

static int parse_link(struct ctx *c, json_object *o, const char *path, struct sim_device *d,
                      struct devinfo *inf)
{
        static const char *const keys[] = {"max_speed",     "max_width",  "speed", "width",
                                           "flap_period_s", "flap_width", NULL};
        const struct field max_width[] = {
            F_INT("max_width", d->max_width, 1, 32, .missing = "lanes: 1, 2, 4, 8, 12, 16 or 32",
                  .check = check_max_width),
        };
        const struct field width[] = {
            F_INT("width", d->cur_width, 0, 32, .check = check_width, .arg = d,
                  .given = &inf->has_width),
            F_DOUBLE("flap_period_s", d->flap_period_s, 1, 1e6),
            F_INT("flap_width", d->flap_width, 1, 32, .check = check_width, .arg = d),
        };
        char p[PATH_LEN];
        json_object *v;
        int r;

        r = open_object(c, o, path, "a link", keys);
        if (r)
                return r;
        v = field_at(o, path, "max_speed", p, sizeof(p));
        if (!v)
                return fail(c, p, "missing (the fastest speed this end supports, e.g. \"16GT/s\")");
        r = get_speed(c, v, p, &d->max_speed);
        if (r)
                return r;
        r = READ_FIELDS(c, o, path, max_width);
        if (r)
                return r;
        d->cur_speed = d->max_speed;
        d->cur_width = d->max_width;

        v = field_at(o, path, "speed", p, sizeof(p));
        if (v) {
                r = get_speed(c, v, p, &d->cur_speed);
                if (r)
                        return r;
                if (d->cur_speed > d->max_speed)
                        return fail(c, p, "%s is above max_speed %s", speed_names[d->cur_speed],
                                    speed_names[d->max_speed]);
                inf->has_speed = true;
        }
        return READ_FIELDS(c, o, path, width);
}

static int parse_aer_counter(struct ctx *c, json_object *v, const char *path,
                             struct sim_aer_counter *ctr)
{
        static const char *const keys[] = {"initial", "per_second", NULL};
        const struct field fields[] = {
            F_INT("initial", ctr->initial, 0, 1LL << 53),
            F_DOUBLE("per_second", ctr->per_second, 0, 1e9),
        };
        int r;

        if (!json_object_is_type(v, json_type_object))
                return read_field(c, v, path, &fields[0]);
        r = check_keys(c, v, path, "an AER counter", keys);
        return r ? r : READ_FIELDS(c, v, path, fields);
}

static int parse_aer(struct ctx *c, json_object *o, const char *path, struct sim_device *d)
{
        char p[PATH_LEN], cp[PATH_LEN];
        int r;

        if (json_object_is_type(o, json_type_boolean)) {
                d->has_aer = json_object_get_boolean(o);
                return 0;
        }
        if (!json_object_is_type(o, json_type_object))
                return fail(c, path,
                            "expected true, false or an object with \"correctable\", "
                            "\"nonfatal\", \"fatal\", got %s",
                            type_desc(o));
        r = check_keys(c, o, path, "\"aer\"", aer_keys);
        if (r)
                return r;
        d->has_aer = true;
        for (int cls = 0; cls < SIM_AER_CLASSES; cls++) {
                json_object *co = member(o, aer_class_keys[cls]);

                if (!co)
                        continue;
                path_key(cp, sizeof(cp), path, aer_class_keys[cls]);
                r = need_object(c, co, cp);
                if (r)
                        return r;
                json_object_object_foreach(co, name, val)
                {
                        struct sim_aer_counter *ctr;

                        path_key(p, sizeof(p), cp, name);
                        if (aer_bit((enum sim_aer_class)cls, name) < 0)
                                return fail(c, p,
                                            "unknown %s AER counter (names as in the kernel's "
                                            "aer_dev_%s file, e.g. %s, or %s[N] for an unnamed "
                                            "bit N)",
                                            aer_class_keys[cls], aer_class_keys[cls],
                                            cls == SIM_AER_CORRECTABLE ? "RxErr, BadTLP, BadDLLP"
                                                                       : "DLP, CmpltTO, UnsupReq",
                                            aer_unnamed_prefix[cls]);
                        if (d->aer_count[cls] >= SIM_AER_MAX)
                                return fail(c, p, "more than %d counters", SIM_AER_MAX);
                        ctr = &d->aer[cls][d->aer_count[cls]];
                        memset(ctr, 0, sizeof(*ctr));
                        snprintf(ctr->name, sizeof(ctr->name), "%s", name);
                        r = parse_aer_counter(c, val, p, ctr);
                        if (r)
                                return r;
                        d->aer_count[cls]++;
                }
        }
        return 0;
}

/* ---- devices ---- */

#define COMMON_KEYS                                                                                \
        "bdf", "name", "vendor", "device", "subsystem_vendor", "subsystem_device", "class",        \
            "revision", "mpss", "mps", "mrrs", "numa_node", "aer"

static const char *const keys_port[] = {COMMON_KEYS,   "link",     "hotplug", "secondary",
                                        "subordinate", "children", NULL};
static const char *const keys_switch[] = {COMMON_KEYS,   "kind",       "link", "secondary",
                                          "subordinate", "downstream", NULL};
static const char *const keys_endpoint[] = {COMMON_KEYS, "kind", "link", "workload", NULL};
static const char *const keys_rciep[] = {COMMON_KEYS, NULL};

int new_device(struct ctx *c, const char *path, size_t *idx)
{
        struct sim_machine *m = c->m;

        if (m->device_count >= SIM_MAX_DEVICES)
                return fail(c, path, "more than %d devices", SIM_MAX_DEVICES);
        if (m->device_count == c->cap) {
                size_t cap = c->cap ? c->cap * 2 : 8;
                struct sim_device *d;
                struct devinfo *inf;

                if (cap > SIM_MAX_DEVICES)
                        cap = SIM_MAX_DEVICES;
                d = realloc(m->devices, cap * sizeof(*d));
                if (!d)
                        return -ENOMEM;
                m->devices = d;
                inf = realloc(c->info, cap * sizeof(*inf));
                if (!inf)
                        return -ENOMEM;
                c->info = inf;
                c->cap = cap;
        }
        *idx = m->device_count++;
        memset(&m->devices[*idx], 0, sizeof(m->devices[*idx]));
        memset(&c->info[*idx], 0, sizeof(c->info[*idx]));
        snprintf(c->info[*idx].path, sizeof(c->info[*idx].path), "%s", path);
        return 0;
}

static int parse_child(struct ctx *c, json_object *o, const char *path, size_t parent, size_t core,
                       int numa);

int parse_placed(struct ctx *c, json_object *o, const char *path, size_t i, void *arg)
{
        const struct placement *pl = arg;
        size_t idx = c->m->device_count;
        int r;

        (void)i;
        if (pl->child)
                return parse_child(c, o, path, pl->parent, pl->core, pl->numa);
        r = parse_device(c, o, path, pl->kind, pl->parent, pl->core, pl->numa);
        if (!r && pl->ports)
                pl->ports[(*pl->port_count)++] = idx;
        return r;
}

static int check_vendor(struct ctx *c, const char *path, double v, const void *arg)
{
        (void)arg;
        if (v == 0xffff || v == 0)
                return fail(c, path, "0x%04lx is not a valid vendor id", (unsigned long)v);
        return 0;
}

/* A bridge's secondary/subordinate bus: above the bridge's own bus (@arg
 * is the bridge). */
static int check_above_bus(struct ctx *c, const char *path, double v, const void *arg)
{
        const struct sim_device *d = arg;

        if (v <= d->bus)
                return fail(c, path, "0x%02llx is not above the bridge's own bus 0x%02x",
                            (long long)v, d->bus);
        return 0;
}

int parse_device(struct ctx *c, json_object *o, const char *path, enum sim_dev_kind kind,
                 size_t parent, size_t core, int numa)
{
        const char *const *keys = kind == SIM_ROOT_PORT || kind == SIM_SWITCH_DOWN ? keys_port
                                  : kind == SIM_SWITCH_UP                          ? keys_switch
                                  : kind == SIM_ENDPOINT                           ? keys_endpoint
                                                                                   : keys_rciep;
        struct sim_machine *m = c->m;
        struct sim_device *d;
        struct devinfo *inf;
        char p[PATH_LEN];
        unsigned long hex;
        json_object *v;
        bool given;
        size_t idx = 0;
        int r;

        r = open_object(c, o, path, kind_what(kind), keys);
        if (!r)
                r = new_device(c, path, &idx);
        if (r)
                return r;
        d = &m->devices[idx];
        inf = &c->info[idx];
        d->kind = kind;
        d->parent = parent;
        d->core = core;
        d->numa_node = numa;

        const struct field ids[] = {
            F_STRING("name", d->name),
            F_HEX("vendor", d->vendor, 0xffff, .missing = "hex vendor id, e.g. \"0x19e5\"",
                  .check = check_vendor),
            F_HEX("device", d->device, 0xffff, .missing = "hex device id"),
            F_HEX("subsystem_vendor", d->subsys_vendor, 0xffff),
            F_HEX("subsystem_device", d->subsys_device, 0xffff),
        };
        const struct field revision[] = {F_HEX("revision", d->revision, 0xff)};
        const struct field numa_node[] = {F_INT("numa_node", d->numa_node, -1, 1023)};
        const struct field hotplug[] = {F_BOOL("hotplug", d->hotplug)};
        const struct field buses[] = {
            F_INT("secondary", inf->secondary, 1, 255, .check = check_above_bus, .arg = d,
                  .given = &inf->has_secondary),
            F_INT("subordinate", inf->subordinate, 1, 255, .check = check_above_bus, .arg = d,
                  .given = &inf->has_subordinate),
        };

        v = field_at(o, path, "bdf", p, sizeof(p));
        if (!v)
                return fail(c, p, "missing (every device states its BDF, e.g. \"0000:01:00.0\")");
        r = get_bdf(c, v, p, &d->domain, &d->bus, &d->dev, &d->fn);
        if (r)
                return r;
        for (size_t i = 0; i < idx; i++) {
                const struct sim_device *o2 = &m->devices[i];

                if (o2->domain == d->domain && o2->bus == d->bus && o2->dev == d->dev &&
                    o2->fn == d->fn)
                        return fail(c, p, "duplicate BDF %s: already used by %s",
                                    json_object_get_string(v), c->info[i].path);
        }
        if (parent != SIM_NONE) {
                const struct sim_device *pd = &m->devices[parent];
                char pb[16];

                sim_device_bdf(pd, pb, sizeof(pb));
                if (d->domain != pd->domain)
                        return fail(c, p, "domain %04x differs from the domain of its parent %s",
                                    d->domain, pb);
                if (d->bus == pd->bus)
                        return fail(c, p,
                                    "bus 0x%02x is the bus of its parent %s: a device below a "
                                    "bridge sits on the bridge's secondary bus",
                                    d->bus, pb);
                if (d->bus < pd->bus)
                        return fail(c, p,
                                    "bus 0x%02x is below the bus 0x%02x of its parent %s: bus "
                                    "numbers grow away from the root",
                                    d->bus, pd->bus, pb);
                if ((pd->kind == SIM_ROOT_PORT || pd->kind == SIM_SWITCH_DOWN) && d->dev != 0)
                        return fail(c, p,
                                    "device 0x%02x below %s: a PCIe link carries one device, so "
                                    "only device 00 exists below a Root Port or downstream port",
                                    d->dev, pb);
        }

        r = READ_FIELDS(c, o, path, ids);
        if (r)
                return r;
        v = field_at(o, path, "class", p, sizeof(p));
        if (v) {
                r = get_hex(c, v, p, 0xffffff, &hex);
                if (r)
                        return r;
                d->class_code = (uint32_t)hex;
                if (is_bridge(kind) && (hex >> 8) != 0x0604)
                        return fail(c, p,
                                    "0x%06lx: a PCIe port is a PCI-to-PCI bridge, class 0x0604xx",
                                    hex);
                if (!is_bridge(kind) && (hex >> 8) == 0x0604)
                        return fail(c, p,
                                    "0x%06lx is the PCI bridge class, but this is %s (a type 0 "
                                    "header)",
                                    hex, kind_what(kind));
        } else if (is_bridge(kind)) {
                d->class_code = BRIDGE_CLASS;
        } else {
                return fail(c, p, "missing (hex class code, e.g. \"0x010802\" for NVMe)");
        }
        r = READ_FIELDS(c, o, path, revision);
        if (r)
                return r;

        d->mpss = DEF_MPSS;
        r = get_payload(c, o, path, "mpss", &d->mpss, &given);
        if (r)
                return r;
        if (kind == SIM_RCIEP || kind == SIM_ROOT_PORT || parent == SIM_NONE) {
                d->mps = d->mpss;
        } else {
                unsigned int up = m->devices[parent].mps;

                d->mps = d->mpss < up ? d->mpss : up;
        }
        r = get_payload(c, o, path, "mps", &d->mps, &given);
        if (r)
                return r;
        if (d->mps > d->mpss) {
                path_key(p, sizeof(p), path, given ? "mps" : "mpss");
                return fail(c, p, "mps %u is above mpss %u", d->mps, d->mpss);
        }
        d->mrrs = DEF_MRRS;
        r = get_payload(c, o, path, "mrrs", &d->mrrs, &given);
        if (r)
                return r;

        r = READ_FIELDS(c, o, path, numa_node);
        if (r)
                return r;

        d->has_aer = kind != SIM_RCIEP;
        v = field_at(o, path, "aer", p, sizeof(p));
        if (v) {
                r = parse_aer(c, v, p, d);
                if (r)
                        return r;
        }

        v = field_at(o, path, "link", p, sizeof(p));
        if (kind != SIM_RCIEP) {
                if (!v)
                        return fail(c, p,
                                    "missing (e.g. {\"max_speed\": \"16GT/s\", \"max_width\": 4})");
                r = parse_link(c, v, p, d, inf);
                if (r)
                        return r;
        }

        r = READ_FIELDS(c, o, path, hotplug);
        if (r)
                return r;

        v = field_at(o, path, "workload", p, sizeof(p));
        if (v) {
                r = parse_workload(c, v, p, &d->workload);
                if (r)
                        return r;
                d->has_workload = true;
        }

        if (is_bridge(kind)) {
                r = READ_FIELDS(c, o, path, buses);
                if (r)
                        return r;
        }

        if (kind == SIM_ROOT_PORT || kind == SIM_SWITCH_DOWN) {
                struct placement below = {.child = true, .parent = idx, .core = core, .numa = numa};

                v = field_at(o, path, "children", p, sizeof(p));
                if (v)
                        return read_array(c, v, p, SIM_MAX_DEVICES, NULL, parse_placed, &below);
        } else if (kind == SIM_SWITCH_UP) {
                struct placement below = {
                    .kind = SIM_SWITCH_DOWN, .parent = idx, .core = core, .numa = numa};

                v = field_at(o, path, "downstream", p, sizeof(p));
                if (v)
                        return read_array(c, v, p, SIM_MAX_DEVICES, NULL, parse_placed, &below);
        }
        return 0;
}

static int parse_child(struct ctx *c, json_object *o, const char *path, size_t parent, size_t core,
                       int numa)
{
        enum sim_dev_kind kind = SIM_ENDPOINT;
        char p[PATH_LEN], buf[16];
        json_object *v;
        int r;

        r = need_object(c, o, path);
        if (r)
                return r;
        v = field_at(o, path, "kind", p, sizeof(p));
        if (v) {
                if (!json_object_is_type(v, json_type_string))
                        return fail(c, p, "expected \"endpoint\" or \"switch\", got %s",
                                    type_desc(v));
                r = get_string(c, v, p, buf, sizeof(buf));
                if (r || (strcmp(buf, "endpoint") && strcmp(buf, "switch")))
                        return fail(c, p, "\"%s\": expected \"endpoint\" or \"switch\"",
                                    json_object_get_string(v));
                if (!strcmp(buf, "switch"))
                        kind = SIM_SWITCH_UP;
        }
        return parse_device(c, o, path, kind, parent, core, numa);
}

/* ---- the tree as a whole: bus numbers, links ---- */

static bool is_ancestor(const struct sim_machine *m, size_t a, size_t b)
{
        for (size_t p = m->devices[b].parent; p != SIM_NONE; p = m->devices[p].parent) {
                if (p == a)
                        return true;
        }
        return false;
}

int compute_buses(struct ctx *c)
{
        struct sim_machine *m = c->m;
        char p[PATH_LEN], pb[16];
        size_t n = m->device_count;

        /* Secondary buses from the first child; every other child must agree. */
        for (size_t i = 0; i < n; i++) {
                struct sim_device *d = &m->devices[i];
                struct sim_device *pd;

                if (d->parent == SIM_NONE)
                        continue;
                pd = &m->devices[d->parent];
                if (!c->info[d->parent].child_seen) {
                        c->info[d->parent].child_seen = true;
                        pd->secondary = d->bus;
                        pd->subordinate = d->bus;
                } else if (d->bus != pd->secondary) {
                        sim_device_bdf(pd, pb, sizeof(pb));
                        path_key(p, sizeof(p), c->info[i].path, "bdf");
                        return fail(c, p,
                                    "bus 0x%02x differs from bus 0x%02x of the other devices "
                                    "below %s (all devices below one bridge share its secondary "
                                    "bus)",
                                    d->bus, pd->secondary, pb);
                }
        }
        /* Subordinates bottom-up: children follow their parents in the array. */
        for (size_t i = n; i-- > 0;) {
                struct sim_device *d = &m->devices[i];
                struct devinfo *inf = &c->info[i];
                unsigned int top;

                if (is_bridge(d->kind)) {
                        if (!inf->child_seen) {
                                if (!inf->has_secondary)
                                        return fail(c, inf->path,
                                                    "no devices below this bridge and no "
                                                    "\"secondary\": an empty bridge still gets a "
                                                    "bus number, state it");
                                d->secondary = (uint8_t)inf->secondary;
                                d->subordinate = (uint8_t)inf->secondary;
                        } else if (inf->has_secondary && inf->secondary != d->secondary) {
                                path_key(p, sizeof(p), inf->path, "secondary");
                                return fail(c, p, "0x%02x, but the devices below are on bus 0x%02x",
                                            inf->secondary, d->secondary);
                        }
                        if (inf->has_subordinate) {
                                path_key(p, sizeof(p), inf->path, "subordinate");
                                if (inf->subordinate < d->subordinate)
                                        return fail(c, p,
                                                    "0x%02x is below bus 0x%02x, which is in use "
                                                    "below this bridge",
                                                    inf->subordinate, d->subordinate);
                                d->subordinate = (uint8_t)inf->subordinate;
                        }
                }
                top = is_bridge(d->kind) ? d->subordinate : d->bus;
                if (d->parent != SIM_NONE && top > m->devices[d->parent].subordinate)
                        m->devices[d->parent].subordinate = (uint8_t)top;
        }
        /* Bridges that are not nested must not share buses. */
        for (size_t b = 0; b < n; b++) {
                const struct sim_device *db = &m->devices[b];

                if (!is_bridge(db->kind))
                        continue;
                for (size_t a = 0; a < b; a++) {
                        const struct sim_device *da = &m->devices[a];

                        if (!is_bridge(da->kind) || da->domain != db->domain)
                                continue;
                        if (da->subordinate < db->secondary || db->subordinate < da->secondary)
                                continue;
                        if (is_ancestor(m, a, b) || is_ancestor(m, b, a))
                                continue;
                        sim_device_bdf(da, pb, sizeof(pb));
                        if (da->secondary == db->secondary)
                                return fail(c, c->info[b].path,
                                            "secondary bus 0x%02x is also claimed by %s (%s)",
                                            db->secondary, pb, c->info[a].path);
                        return fail(c, c->info[b].path,
                                    "buses 0x%02x-0x%02x overlap buses 0x%02x-0x%02x of %s (%s)",
                                    db->secondary, db->subordinate, da->secondary, da->subordinate,
                                    pb, c->info[a].path);
                }
        }
        /* Root buses are nobody's secondary buses. */
        for (size_t i = 0; i < n; i++) {
                const struct sim_device *d = &m->devices[i];

                if (d->parent != SIM_NONE)
                        continue;
                for (size_t b = 0; b < n; b++) {
                        const struct sim_device *db = &m->devices[b];

                        if (!is_bridge(db->kind) || db->domain != d->domain ||
                            d->bus < db->secondary || d->bus > db->subordinate)
                                continue;
                        sim_device_bdf(db, pb, sizeof(pb));
                        path_key(p, sizeof(p), c->info[i].path, "bdf");
                        return fail(c, p,
                                    "bus 0x%02x is a root bus, but it lies in buses "
                                    "0x%02x-0x%02x below %s (%s)",
                                    d->bus, db->secondary, db->subordinate, pb, c->info[b].path);
                }
        }
        return 0;
}

/* Both ends of each link show the same trained speed and width. */
int resolve_links(struct ctx *c)
{
        struct sim_machine *m = c->m;
        size_t n = m->device_count;
        char p[PATH_LEN], pb[16];

        for (size_t i = 0; i < n; i++) {
                struct sim_device *port = &m->devices[i];
                const char *speed_src = NULL, *width_src = NULL;
                unsigned int speed, width, e_speed = 0, e_width = 0;
                unsigned int common_speed = port->max_speed, common_width = port->max_width;
                size_t kids = 0;

                if (port->kind != SIM_ROOT_PORT && port->kind != SIM_SWITCH_DOWN)
                        continue;
                if (c->info[i].has_speed) {
                        speed_src = c->info[i].path;
                        e_speed = port->cur_speed;
                }
                if (c->info[i].has_width) {
                        width_src = c->info[i].path;
                        e_width = port->cur_width;
                }
                for (size_t j = i + 1; j < n; j++) {
                        const struct sim_device *k = &m->devices[j];

                        if (k->parent != i)
                                continue;
                        kids++;
                        if (k->max_speed < common_speed)
                                common_speed = k->max_speed;
                        if (k->max_width < common_width)
                                common_width = k->max_width;
                        if (c->info[j].has_speed) {
                                if (speed_src && e_speed != k->cur_speed) {
                                        path_key(p, sizeof(p), c->info[j].path, "link.speed");
                                        return fail(c, p, "%s, but %s says %s for the same link",
                                                    speed_names[k->cur_speed], speed_src,
                                                    speed_names[e_speed]);
                                }
                                speed_src = c->info[j].path;
                                e_speed = k->cur_speed;
                        }
                        if (c->info[j].has_width) {
                                if (width_src && e_width != k->cur_width) {
                                        path_key(p, sizeof(p), c->info[j].path, "link.width");
                                        return fail(c, p, "x%u, but %s says x%u for the same link",
                                                    k->cur_width, width_src, e_width);
                                }
                                width_src = c->info[j].path;
                                e_width = k->cur_width;
                        }
                }
                if (!kids && !speed_src && !width_src) {
                        /* An empty slot: no link partner, the link is down. */
                        speed = 0;
                        width = 0;
                } else {
                        speed = speed_src ? e_speed : kids ? common_speed : port->max_speed;
                        width = width_src ? e_width : kids ? common_width : port->max_width;
                }
                if (width == 0) {
                        if (kids) {
                                path_key(p, sizeof(p), width_src, "link.width");
                                return fail(c, p,
                                            "0 (link down), but devices are described below "
                                            "%s: a device behind a down link cannot be seen",
                                            c->info[i].path);
                        }
                        speed = 0;
                }
                for (size_t j = i; width && j < n; j++) {
                        const struct sim_device *k = &m->devices[j];

                        if (j != i && k->parent != i)
                                continue;
                        sim_device_bdf(k, pb, sizeof(pb));
                        if (speed > k->max_speed) {
                                path_key(p, sizeof(p), speed_src, "link.speed");
                                return fail(c, p,
                                            "%s is above max_speed %s of %s at the other end of "
                                            "the link",
                                            speed_names[speed], speed_names[k->max_speed], pb);
                        }
                        if (width > k->max_width) {
                                path_key(p, sizeof(p), width_src, "link.width");
                                return fail(c, p,
                                            "x%u is above max_width x%u of %s at the other end of "
                                            "the link",
                                            width, k->max_width, pb);
                        }
                }
                port->cur_speed = speed;
                port->cur_width = width;
                if (port->flap_period_s > 0 || port->flap_width) {
                        path_key(p, sizeof(p), c->info[i].path, "link.flap_period_s");
                        return fail(c, p, "a flapping link is described on the function below it");
                }
                for (size_t j = i + 1; j < n; j++) {
                        struct sim_device *k = &m->devices[j];

                        if (k->parent != i)
                                continue;
                        k->cur_speed = speed;
                        k->cur_width = width;
                        if (k->flap_width && !(k->flap_period_s > 0)) {
                                path_key(p, sizeof(p), c->info[j].path, "link.flap_width");
                                return fail(c, p, "given without flap_period_s");
                        }
                        if (!(k->flap_period_s > 0))
                                continue;
                        /* Retrains to half its width unless told. */
                        if (!k->flap_width)
                                k->flap_width = width > 1 ? width / 2 : 0;
                        if (!k->flap_width || k->flap_width == width ||
                            k->flap_width > port->max_width) {
                                path_key(p, sizeof(p), c->info[j].path, "link.flap_width");
                                return fail(c, p,
                                            "x%u: a flapping link needs a width other than its "
                                            "trained x%u that both ends support",
                                            k->flap_width, width);
                        }
                }
        }
        return 0;
}
