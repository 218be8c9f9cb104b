// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sim_machine.c - read and validate the JSON description of a simulated
 * machine (format: docs/simulator.md).
 *
 * The loader is strict on purpose: every key must be known, every number is
 * range-checked, every device states its BDF, and the topology must be one a
 * kernel could have enumerated (bus numbers nested, one device per link,
 * distinct port bits per PCIe core). Every error names the file, the JSON
 * path of the element and the problem. Nothing here writes files.
 */
#define _GNU_SOURCE
#include "sim_machine.h"
#include "sim_events.h"
#include "sim_traffic.h"

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PATH_LEN       320
#define ARRAY_SIZE(a)  (sizeof(a) / sizeof((a)[0]))
#define FILE_MAX_BYTES (4u << 20) /* a description is a few tens of KiB */
#define MAX_SICLS      SIM_MAX_CORES
#define MAX_CPUS       4096
#define MAX_INJECTIONS                                                                             \
        (sizeof(((struct sim_machine *)0)->injections) / sizeof(struct sim_injection))
#define MAX_PORTS (sizeof(((struct sim_core *)0)->ports) / sizeof(size_t))

/* ---- defaults (documented in docs/simulator.md) ---- */
#define DEF_KERNEL           SIM_KERNEL_6_12
#define DEF_CMDLINE          "BOOT_IMAGE=/vmlinuz root=/dev/mapper/root ro"
#define DEF_FLUX_UNIT        4.0
#define DEF_TIME_CLOCK_HZ    100e6
#define DEF_LATENCY_CLOCK_HZ 1e9
#define DEF_PTT_CLOCK_HZ     100e6
#define DEF_IDENTIFIER       0x30u
#define DEF_MPSS             256u
#define DEF_MRRS             512u
#define BRIDGE_CLASS         0x060400u

/* Per-device facts the loader needs while validating, beside the public
 * struct. */
struct devinfo {
        char path[PATH_LEN];
        bool has_speed, has_width;
        bool has_secondary, has_subordinate;
        unsigned int secondary, subordinate;
        bool child_seen;
};

struct funcref {
        bool set;
        uint16_t domain;
        uint8_t bus, dev, fn;
        char path[PATH_LEN];
};

struct ctx {
        const char *origin;
        char *err;
        size_t errlen;
        struct sim_machine *m;
        size_t cap;
        struct devinfo *info;
        uint32_t identifier;
        char core_path[SIM_MAX_CORES][PATH_LEN];
        struct funcref pmu[SIM_MAX_CORES], ptt[SIM_MAX_CORES];
        unsigned char cpu_owner[MAX_CPUS]; /* SICL index + 1 that listed the CPU */
};

/* ---- messages and paths ---- */

static int fail(struct ctx *c, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(struct ctx *c, const char *path, const char *fmt, ...)
{
        char msg[768];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        if (c->err && c->errlen) {
                if (path && *path)
                        snprintf(c->err, c->errlen, "%s: %s: %s", c->origin, path, msg);
                else
                        snprintf(c->err, c->errlen, "%s: %s", c->origin, msg);
        }
        return -EINVAL;
}

static void pathf(char *out, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void pathf(char *out, size_t size, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(out, size, fmt, ap);
        va_end(ap);
}

/* "<base>.<key>", or "<key>" at the top. */
static void path_key(char *out, size_t size, const char *base, const char *key)
{
        if (*base)
                pathf(out, size, "%s.%s", base, key);
        else
                pathf(out, size, "%s", key);
}

static void path_idx(char *out, size_t size, const char *base, size_t i)
{
        pathf(out, size, "%s[%zu]", base, i);
}

static const char *type_desc(json_object *v)
{
        switch (json_object_get_type(v)) {
        case json_type_null:
                return "null";
        case json_type_boolean:
                return "a boolean";
        case json_type_double:
        case json_type_int:
                return "a number";
        case json_type_object:
                return "an object";
        case json_type_array:
                return "an array";
        case json_type_string:
                return "a string";
        }
        return "something else";
}

/* ---- generic typed access ---- */

/* The member, or NULL when absent or null. */
static json_object *member(json_object *o, const char *key)
{
        json_object *v = NULL;

        if (!json_object_object_get_ex(o, key, &v))
                return NULL;
        return v;
}

static int check_keys(struct ctx *c, json_object *o, const char *path, const char *what,
                      const char *const *keys)
{
        json_object_object_foreach(o, key, val)
        {
                char known[512] = "";
                char kp[PATH_LEN];
                size_t used = 0;
                bool ok = false;

                (void)val;
                for (size_t i = 0; keys[i]; i++) {
                        if (!strcmp(key, keys[i])) {
                                ok = true;
                                break;
                        }
                }
                if (ok)
                        continue;
                for (size_t i = 0; keys[i] && used < sizeof(known); i++)
                        used += (size_t)snprintf(known + used, sizeof(known) - used, "%s%s",
                                                 i ? ", " : "", keys[i]);
                path_key(kp, sizeof(kp), path, key);
                return fail(c, kp, "unknown key for %s (known keys: %s)", what, known);
        }
        return 0;
}

static int need_object(struct ctx *c, json_object *v, const char *path)
{
        if (!json_object_is_type(v, json_type_object))
                return fail(c, path, "expected an object, got %s", type_desc(v));
        return 0;
}

static int need_array(struct ctx *c, json_object *v, const char *path, size_t max)
{
        if (!json_object_is_type(v, json_type_array))
                return fail(c, path, "expected an array, got %s", type_desc(v));
        if (json_object_array_length(v) > max)
                return fail(c, path, "%zu entries, at most %zu are allowed",
                            json_object_array_length(v), max);
        return 0;
}

static int get_int(struct ctx *c, json_object *v, const char *path, long long min, long long max,
                   long long *out)
{
        long long x;

        if (json_object_is_type(v, json_type_int)) {
                x = (long long)json_object_get_int64(v);
                /* json-c keeps values above INT64_MAX as uint64. */
                if (x == INT64_MAX && json_object_get_uint64(v) > (uint64_t)INT64_MAX)
                        return fail(c, path, "%s is out of range %lld..%lld",
                                    json_object_get_string(v), min, max);
        } else if (json_object_is_type(v, json_type_double)) {
                double d = json_object_get_double(v);

                if (!isfinite(d))
                        return fail(c, path, "expected an integer, got %s",
                                    json_object_get_string(v));
                if (d < (double)min || d > (double)max)
                        return fail(c, path, "%g is out of range %lld..%lld", d, min, max);
                x = (long long)d;
                if ((double)x != d)
                        return fail(c, path, "expected an integer, got %g", d);
        } else {
                return fail(c, path, "expected an integer, got %s", type_desc(v));
        }
        if (x < min || x > max)
                return fail(c, path, "%lld is out of range %lld..%lld", x, min, max);
        *out = x;
        return 0;
}

static int get_double(struct ctx *c, json_object *v, const char *path, double min, double max,
                      double *out)
{
        double d;

        if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
                return fail(c, path, "expected a number, got %s", type_desc(v));
        d = json_object_get_double(v);
        if (!isfinite(d))
                return fail(c, path, "expected a finite number, got %s", json_object_get_string(v));
        if (d < min || d > max)
                return fail(c, path, "%g is out of range %g..%g", d, min, max);
        *out = d;
        return 0;
}

static int get_bool(struct ctx *c, json_object *v, const char *path, bool *out)
{
        if (!json_object_is_type(v, json_type_boolean))
                return fail(c, path, "expected true or false, got %s", type_desc(v));
        *out = json_object_get_boolean(v);
        return 0;
}

/* A string of at most @size - 1 bytes without NUL characters. */
static int get_string(struct ctx *c, json_object *v, const char *path, char *buf, size_t size)
{
        const char *s;
        int len;

        if (!json_object_is_type(v, json_type_string))
                return fail(c, path, "expected a string, got %s", type_desc(v));
        s = json_object_get_string(v);
        len = json_object_get_string_len(v);
        if (len < 0 || strlen(s) != (size_t)len)
                return fail(c, path, "the string contains a NUL character");
        if ((size_t)len >= size)
                return fail(c, path, "the string is %d bytes long, at most %zu are allowed", len,
                            size - 1);
        memcpy(buf, s, (size_t)len + 1);
        return 0;
}

static int hexval(char ch)
{
        if (ch >= '0' && ch <= '9')
                return ch - '0';
        if (ch >= 'a' && ch <= 'f')
                return ch - 'a' + 10;
        if (ch >= 'A' && ch <= 'F')
                return ch - 'A' + 10;
        return -1;
}

/* A hex string ("0x19e5" or "19e5") up to @max. */
static int get_hex(struct ctx *c, json_object *v, const char *path, unsigned long max,
                   unsigned long *out)
{
        char buf[32];
        const char *p = buf;
        unsigned long x = 0;
        int r;

        if (!json_object_is_type(v, json_type_string))
                return fail(c, path, "expected a hex string such as \"0x1234\", got %s",
                            type_desc(v));
        r = get_string(c, v, path, buf, sizeof(buf));
        if (r)
                return r;
        if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
                p += 2;
        if (!*p)
                return fail(c, path, "\"%s\" is not a hex number", buf);
        for (; *p; p++) {
                int h = hexval(*p);

                if (h < 0)
                        return fail(c, path, "\"%s\" is not a hex number", buf);
                x = x * 16 + (unsigned long)h;
                if (x > max)
                        return fail(c, path, "\"%s\" is above 0x%lx", buf, max);
        }
        *out = x;
        return 0;
}

/* ---- the schema helper: one table row per plain field ---- */

enum field_kind { FIELD_INT, FIELD_HEX, FIELD_DOUBLE, FIELD_BOOL, FIELD_STRING };

/*
 * One member of a JSON object and where its value goes. Integers and hex
 * values are stored in a destination of any integer size (the range is
 * checked first, so the value fits); strings into a char array. A field
 * with @missing is required ("missing (<missing>)", or just "missing" for
 * ""); @check, when set,
 * sees the value right after it was read (before the next field: the first
 * problem of a description is the one reported); @given, when set, becomes
 * true when the member is present.
 */
struct field {
        const char *key;
        enum field_kind kind;
        void *out;
        size_t size;        /* sizeof the destination */
        long long min, max; /* FIELD_INT; FIELD_HEX: max only */
        double dmin, dmax;  /* FIELD_DOUBLE */
        const char *missing;
        int (*check)(struct ctx *c, const char *path, double value, const void *arg);
        const void *arg; /* for check */
        bool *given;
};

/* Rows of a field table: key, destination (an lvalue), range, then
 * optional .missing / .check / .given designators. */
#define F_INT(k, dst, lo, hi, ...)                                                                 \
        {                                                                                          \
                .key = (k), .kind = FIELD_INT, .out = &(dst), .size = sizeof(dst), .min = (lo),    \
                .max = (hi), __VA_ARGS__                                                           \
        }
#define F_HEX(k, dst, hi, ...)                                                                     \
        {                                                                                          \
                .key = (k), .kind = FIELD_HEX, .out = &(dst), .size = sizeof(dst), .max = (hi),    \
                __VA_ARGS__                                                                        \
        }
#define F_DOUBLE(k, dst, lo, hi, ...)                                                              \
        {                                                                                          \
                .key = (k), .kind = FIELD_DOUBLE, .out = &(dst), .size = sizeof(dst),              \
                .dmin = (lo), .dmax = (hi), __VA_ARGS__                                            \
        }
#define F_BOOL(k, dst, ...)                                                                        \
        {                                                                                          \
                .key = (k), .kind = FIELD_BOOL, .out = &(dst), .size = sizeof(dst), __VA_ARGS__    \
        }
#define F_STRING(k, buf, ...)                                                                      \
        {                                                                                          \
                .key = (k), .kind = FIELD_STRING, .out = (buf), .size = sizeof(buf), __VA_ARGS__   \
        }

/* An in-range integer into a destination of @size bytes. */
static void store_int(void *out, size_t size, long long x)
{
        switch (size) {
        case 1:
                *(uint8_t *)out = (uint8_t)x;
                break;
        case 2:
                *(uint16_t *)out = (uint16_t)x;
                break;
        case 4:
                *(uint32_t *)out = (uint32_t)x;
                break;
        default:
                *(uint64_t *)out = (uint64_t)x;
                break;
        }
}

static int read_field(struct ctx *c, json_object *v, const char *path, const struct field *f)
{
        unsigned long hex = 0;
        long long x = 0;
        double d;
        int r;

        switch (f->kind) {
        case FIELD_INT:
                r = get_int(c, v, path, f->min, f->max, &x);
                if (!r)
                        store_int(f->out, f->size, x);
                d = (double)x;
                break;
        case FIELD_HEX:
                r = get_hex(c, v, path, (unsigned long)f->max, &hex);
                if (!r)
                        store_int(f->out, f->size, (long long)hex);
                d = (double)hex;
                break;
        case FIELD_DOUBLE:
                r = get_double(c, v, path, f->dmin, f->dmax, f->out);
                d = r ? 0 : *(double *)f->out;
                break;
        case FIELD_BOOL:
                return get_bool(c, v, path, f->out);
        default:
                return get_string(c, v, path, f->out, f->size);
        }
        if (!r && f->check)
                r = f->check(c, path, d, f->arg);
        return r;
}

/* The member @key of @o (NULL: absent), with its JSON path in @p. */
static json_object *field_at(json_object *o, const char *base, const char *key, char *p,
                             size_t size)
{
        path_key(p, size, base, key);
        return member(o, key);
}

/* Reads the fields of @o (the object at @path) in table order. */
static int read_fields(struct ctx *c, json_object *o, const char *path, const struct field *f,
                       size_t n)
{
        for (size_t i = 0; i < n; i++) {
                char p[PATH_LEN];
                json_object *v = field_at(o, path, f[i].key, p, sizeof(p));
                int r;

                if (!v) {
                        if (f[i].missing && *f[i].missing)
                                return fail(c, p, "missing (%s)", f[i].missing);
                        if (f[i].missing)
                                return fail(c, p, "missing");
                        continue;
                }
                r = read_field(c, v, p, &f[i]);
                if (r)
                        return r;
                if (f[i].given)
                        *f[i].given = true;
        }
        return 0;
}

#define READ_FIELDS(c, o, path, table) read_fields((c), (o), (path), (table), ARRAY_SIZE(table))

/* @o must be an object with only @keys (@what names it in the message). */
static int open_object(struct ctx *c, json_object *o, const char *path, const char *what,
                       const char *const *keys)
{
        int r = need_object(c, o, path);

        return r ? r : check_keys(c, o, path, what, keys);
}

/* open_object, then its plain fields. */
static int read_object(struct ctx *c, json_object *o, const char *path, const char *what,
                       const char *const *keys, const struct field *f, size_t n)
{
        int r = open_object(c, o, path, what, keys);

        return r ? r : read_fields(c, o, path, f, n);
}

#define READ_OBJECT(c, o, path, what, keys, table)                                                 \
        read_object((c), (o), (path), (what), (keys), (table), ARRAY_SIZE(table))

/* Reads element @i of an array: @e, at @path ("<array>[<i>]"). */
typedef int each_fn(struct ctx *c, json_object *e, const char *path, size_t i, void *arg);

/* @v (at @path) must be an array of at most @max entries, and not empty
 * when @empty is given (the message for an empty one); @fn reads each
 * element in order, and the first error stops the walk. */
static int read_array(struct ctx *c, json_object *v, const char *path, size_t max,
                      const char *empty, each_fn *fn, void *arg)
{
        char p[PATH_LEN];
        int r = need_array(c, v, path, max);

        if (r)
                return r;
        if (empty && json_object_array_length(v) == 0)
                return fail(c, path, "%s", empty);
        for (size_t i = 0; i < json_object_array_length(v); i++) {
                path_idx(p, sizeof(p), path, i);
                r = fn(c, json_object_array_get_idx(v, i), p, i, arg);
                if (r)
                        return r;
        }
        return 0;
}

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

static int get_bdf(struct ctx *c, json_object *v, const char *path, uint16_t *domain, uint8_t *bus,
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

/* ---- workloads ---- */

static const char *const flow_keys[SIM_FLOW_KINDS] = {"dma_write", "dma_read", "mmio_write",
                                                      "mmio_read"};

/* A number (one value, weight 1) or [[value, weight], ...]. */
static int parse_dist(struct ctx *c, json_object *v, const char *path, double max, const char *unit,
                      struct sim_dist *d)
{
        char p[PATH_LEN], pp[PATH_LEN];
        size_t n;
        int r;

        if (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)) {
                d->count = 1;
                d->weight[0] = 1;
                r = get_double(c, v, path, 0, max, &d->value[0]);
                if (r)
                        return r;
                if (d->value[0] <= 0)
                        return fail(c, path, "%g %s: must be above 0", d->value[0], unit);
                return 0;
        }
        if (!json_object_is_type(v, json_type_array))
                return fail(c, path, "expected a number or [[%s, weight], ...], got %s", unit,
                            type_desc(v));
        n = json_object_array_length(v);
        if (n == 0 || n > SIM_DIST_MAX)
                return fail(c, path, "%zu points: 1 to %d are allowed", n, SIM_DIST_MAX);
        for (size_t i = 0; i < n; i++) {
                json_object *pt = json_object_array_get_idx(v, i);

                path_idx(p, sizeof(p), path, i);
                if (!json_object_is_type(pt, json_type_array) || json_object_array_length(pt) != 2)
                        return fail(c, p, "expected a pair [%s, weight]", unit);
                path_idx(pp, sizeof(pp), p, 0);
                r = get_double(c, json_object_array_get_idx(pt, 0), pp, 0, max, &d->value[i]);
                if (r)
                        return r;
                if (d->value[i] <= 0)
                        return fail(c, pp, "%g %s: must be above 0", d->value[i], unit);
                path_idx(pp, sizeof(pp), p, 1);
                r = get_double(c, json_object_array_get_idx(pt, 1), pp, 0, 1e12, &d->weight[i]);
                if (r)
                        return r;
                if (d->weight[i] <= 0)
                        return fail(c, pp, "weight %g: must be above 0", d->weight[i]);
        }
        d->count = n;
        return 0;
}

static void dist_one(struct sim_dist *d, double value)
{
        memset(d, 0, sizeof(*d));
        d->count = 1;
        d->value[0] = value;
        d->weight[0] = 1;
}

static int parse_flow(struct ctx *c, json_object *o, const char *path, struct sim_flow *f)
{
        static const char *const keys[] = {"bytes_per_second", "sizes", "latency_ns", NULL};
        const struct field fields[] = {F_DOUBLE("bytes_per_second", f->bytes_per_second, 0, 1e12)};
        char p[PATH_LEN];
        json_object *v;
        int r;

        r = READ_OBJECT(c, o, path, "a flow", keys, fields);
        if (r)
                return r;
        v = field_at(o, path, "sizes", p, sizeof(p));
        if (v) {
                r = parse_dist(c, v, p, 64.0 * 1024 * 1024, "bytes", &f->size);
                if (r)
                        return r;
                for (size_t i = 0; i < f->size.count; i++) {
                        if (f->size.value[i] != (double)(long long)f->size.value[i])
                                return fail(c, p, "%g bytes: sizes are whole bytes",
                                            f->size.value[i]);
                }
        }
        v = field_at(o, path, "latency_ns", p, sizeof(p));
        if (v) {
                r = parse_dist(c, v, p, 1e9, "ns", &f->latency);
                if (r)
                        return r;
        }
        return 0;
}

static int check_seconds(struct ctx *c, const char *path, double v, const void *arg)
{
        (void)arg;
        return v <= 0 ? fail(c, path, "%g s: must be above 0", v) : 0;
}

static int parse_phase(struct ctx *c, json_object *o, const char *path, size_t i, void *arg)
{
        static const char *const keys[] = {"duration_s", "scale", NULL};
        struct sim_workload *w = arg;
        const struct field fields[] = {
            F_DOUBLE("duration_s", w->phases[i].duration, 0, 1e6, .missing = "seconds, above 0",
                     .check = check_seconds),
            F_DOUBLE("scale", w->phases[i].scale, 0, 1000,
                     .missing = "multiplies every flow, >= 0"),
        };

        return READ_OBJECT(c, o, path, "a phase", keys, fields);
}

static int parse_workload(struct ctx *c, json_object *o, const char *path, struct sim_workload *w)
{
        static const char *const keys[] = {"dma_write", "dma_read", "mmio_write",
                                           "mmio_read", "phases",   NULL};
        static const double def_size[SIM_FLOW_KINDS] = {4096, 4096, 8, 4};
        static const double def_latency[SIM_FLOW_KINDS] = {300, 1000, 100, 1000};
        char p[PATH_LEN];
        json_object *v;
        int r;

        r = open_object(c, o, path, "a workload", keys);
        if (r)
                return r;
        for (int k = 0; k < SIM_FLOW_KINDS; k++) {
                w->flow[k].bytes_per_second = 0;
                dist_one(&w->flow[k].size, def_size[k]);
                dist_one(&w->flow[k].latency, def_latency[k]);
                v = member(o, flow_keys[k]);
                if (!v)
                        continue;
                path_key(p, sizeof(p), path, flow_keys[k]);
                r = parse_flow(c, v, p, &w->flow[k]);
                if (r)
                        return r;
        }
        v = field_at(o, path, "phases", p, sizeof(p));
        if (v) {
                r = read_array(c, v, p, SIM_PHASES_MAX, NULL, parse_phase, w);
                if (r)
                        return r;
                w->phase_count = json_object_array_length(v);
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

static int new_device(struct ctx *c, const char *path, size_t *idx)
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
static int parse_device(struct ctx *c, json_object *o, const char *path, enum sim_dev_kind kind,
                        size_t parent, size_t core, int numa);

/* Where the devices of an array go: below @parent (SIM_NONE: a root bus). */
struct placement {
        bool child;             /* the element's "kind" says (parse_child) */
        enum sim_dev_kind kind; /* otherwise */
        size_t parent, core;
        int numa;
        size_t *ports, *port_count; /* where the new device's index goes, or NULL */
};

static int parse_placed(struct ctx *c, json_object *o, const char *path, size_t i, void *arg)
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

static int parse_device(struct ctx *c, json_object *o, const char *path, enum sim_dev_kind kind,
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

/* ---- SICLs, cores, the machine ---- */

/* "0-31,64-95" into the owner map; *first receives the lowest CPU. */
static int parse_cpulist(struct ctx *c, json_object *v, const char *path, unsigned int sicl_index,
                         int *first)
{
        char buf[SIM_TEXT_MAX];
        const char *s = buf;
        unsigned int cpus = c->m->cpus;
        int r = get_string(c, v, path, buf, sizeof(buf));

        if (r)
                return r;
        *first = -1;
        while (*s) {
                unsigned long a, b;
                char *end;

                if (*s < '0' || *s > '9')
                        return fail(c, path, "\"%s\" is not a CPU list such as \"0-31,64-95\"",
                                    buf);
                a = strtoul(s, &end, 10);
                b = a;
                s = end;
                if (*s == '-') {
                        s++;
                        if (*s < '0' || *s > '9')
                                return fail(c, path,
                                            "\"%s\" is not a CPU list such as \"0-31,64-95\"", buf);
                        b = strtoul(s, &end, 10);
                        s = end;
                }
                if (*s == ',' && s[1])
                        s++;
                else if (*s)
                        return fail(c, path, "\"%s\" is not a CPU list such as \"0-31,64-95\"",
                                    buf);
                if (a > b)
                        return fail(c, path, "range %lu-%lu runs backwards", a, b);
                if (b >= cpus)
                        return fail(c, path, "CPU %lu does not exist (the machine has %u CPUs)", b,
                                    cpus);
                for (unsigned long cpu = a; cpu <= b; cpu++) {
                        if (c->cpu_owner[cpu] && c->cpu_owner[cpu] != sicl_index + 1)
                                return fail(c, path, "CPU %lu is also listed by sicls[%u]", cpu,
                                            (unsigned int)c->cpu_owner[cpu] - 1);
                        c->cpu_owner[cpu] = (unsigned char)(sicl_index + 1);
                        if (*first < 0 || (int)cpu < *first)
                                *first = (int)cpu;
                }
        }
        if (*first < 0)
                return fail(c, path, "empty CPU list");
        return 0;
}

static int parse_funcref(struct ctx *c, json_object *v, const char *path, struct funcref *ref)
{
        int r;

        if (!v)
                return 0;
        r = get_bdf(c, v, path, &ref->domain, &ref->bus, &ref->dev, &ref->fn);
        if (r)
                return r;
        ref->set = true;
        snprintf(ref->path, sizeof(ref->path), "%s", path);
        return 0;
}

static int parse_core(struct ctx *c, json_object *o, const char *path, unsigned int sicl,
                      int sicl_numa, int sicl_cpu)
{
        static const char *const keys[] = {"id",  "cpu", "identifier", "numa_node",
                                           "pmu", "ptt", "root_ports", NULL};
        struct sim_machine *m = c->m;
        struct sim_core *core;
        char p[PATH_LEN];
        json_object *v;
        size_t ci;
        int r;

        r = open_object(c, o, path, "a PCIe core", keys);
        if (r)
                return r;
        if (m->core_count >= SIM_MAX_CORES)
                return fail(c, path, "more than %d PCIe cores", SIM_MAX_CORES);
        ci = m->core_count++;
        core = &m->cores[ci];
        snprintf(c->core_path[ci], sizeof(c->core_path[ci]), "%s", path);
        core->sicl = sicl;
        core->pmu_function = SIM_NONE;
        core->ptt_function = SIM_NONE;

        const struct field id[] = {
            F_INT("id", core->id, 0, 0xffff,
                  .missing = "the core number in hisi_pcie<sicl>_core<id>"),
        };
        const struct field rest[] = {
            F_INT("numa_node", core->numa_node, -1, 1023),
            F_INT("cpu", core->cpu, 0, (long long)m->cpus - 1),
            F_HEX("identifier", core->identifier, 0xffffffffUL),
        };

        r = READ_FIELDS(c, o, path, id);
        if (r)
                return r;
        path_key(p, sizeof(p), path, "id");
        for (size_t i = 0; i < ci; i++) {
                if (m->cores[i].sicl == sicl && m->cores[i].id == core->id)
                        return fail(c, p, "core %u is already described by %s", core->id,
                                    c->core_path[i]);
        }
        core->numa_node = sicl_numa;
        core->cpu = sicl_cpu < 0 ? 0 : sicl_cpu;
        core->identifier = c->identifier;
        r = READ_FIELDS(c, o, path, rest);
        if (r)
                return r;
        path_key(p, sizeof(p), path, "pmu");
        r = parse_funcref(c, member(o, "pmu"), p, &c->pmu[ci]);
        if (r)
                return r;
        path_key(p, sizeof(p), path, "ptt");
        r = parse_funcref(c, member(o, "ptt"), p, &c->ptt[ci]);
        if (r)
                return r;

        v = field_at(o, path, "root_ports", p, sizeof(p));
        if (!v)
                return fail(c, p, "missing (the core's Root Ports, at least one)");
        struct placement ports = {.kind = SIM_ROOT_PORT,
                                  .parent = SIM_NONE,
                                  .core = ci,
                                  .numa = core->numa_node,
                                  .ports = core->ports,
                                  .port_count = &core->port_count};

        return read_array(c, v, p, MAX_PORTS, "empty: a PCIe core has at least one Root Port",
                          parse_placed, &ports);
}

/* The SICL the cores of its "cores" array belong to. */
struct sicl_at {
        unsigned int id;
        int numa, first_cpu;
};

static int parse_sicl_core(struct ctx *c, json_object *o, const char *path, size_t i, void *arg)
{
        const struct sicl_at *at = arg;

        (void)i;
        return parse_core(c, o, path, at->id, at->numa, at->first_cpu);
}

static int parse_rcieps(struct ctx *c, json_object *v, const char *path, int numa)
{
        struct placement rc = {
            .kind = SIM_RCIEP, .parent = SIM_NONE, .core = SIM_NONE, .numa = numa};

        return read_array(c, v, path, SIM_MAX_DEVICES, NULL, parse_placed, &rc);
}

/* One entry of "sicls" (@arg: the SICL ids so far). */
static int parse_sicl(struct ctx *c, json_object *o, const char *path, size_t index, void *arg)
{
        unsigned int *ids = arg;
        static const char *const keys[] = {"id", "numa_node", "cpus", "cores", "rcieps", NULL};
        char p[PATH_LEN];
        json_object *v;
        int first_cpu = -1;
        long long id, numa;
        const struct field fid[] = {
            F_INT("id", id, 0, 0xffff, .missing = "the <sicl> in hisi_pcie<sicl>_core<core>"),
        };
        const struct field fnuma[] = {
            F_INT("numa_node", numa, -1, 1023,
                  .missing = "the NUMA node its devices report, -1 for none"),
        };
        int r;

        r = READ_OBJECT(c, o, path, "a SICL", keys, fid);
        if (r)
                return r;
        path_key(p, sizeof(p), path, "id");
        for (unsigned int i = 0; i < index; i++) {
                if (ids[i] == (unsigned int)id)
                        return fail(c, p, "SICL %lld is already described by sicls[%u]", id, i);
        }
        ids[index] = (unsigned int)id;
        r = READ_FIELDS(c, o, path, fnuma);
        if (r)
                return r;
        v = field_at(o, path, "cpus", p, sizeof(p));
        if (v) {
                r = parse_cpulist(c, v, p, index, &first_cpu);
                if (r)
                        return r;
        }
        v = field_at(o, path, "cores", p, sizeof(p));
        if (v) {
                struct sicl_at at = {(unsigned int)id, (int)numa, first_cpu};

                r = read_array(c, v, p, SIM_MAX_CORES, NULL, parse_sicl_core, &at);
                if (r)
                        return r;
        }
        v = field_at(o, path, "rcieps", p, sizeof(p));
        if (v) {
                r = parse_rcieps(c, v, p, (int)numa);
                if (r)
                        return r;
        }
        return 0;
}

static const struct {
        const char *name;
        int err;
} errno_names[] = {
    {"EPERM", EPERM},   {"ENOENT", ENOENT}, {"EIO", EIO},       {"ENXIO", ENXIO},
    {"E2BIG", E2BIG},   {"EBADF", EBADF},   {"EAGAIN", EAGAIN}, {"ENOMEM", ENOMEM},
    {"EACCES", EACCES}, {"EFAULT", EFAULT}, {"EBUSY", EBUSY},   {"ENODEV", ENODEV},
    {"EINVAL", EINVAL}, {"EMFILE", EMFILE}, {"ENOSPC", ENOSPC}, {"EOPNOTSUPP", EOPNOTSUPP},
    {"ENOSYS", ENOSYS},
};

static int check_count(struct ctx *c, const char *path, double v, const void *arg)
{
        (void)arg;
        if (v == 0)
                return fail(c, path, "0 would inject nothing: -1 (always) or a positive count");
        return 0;
}

/* One entry of "inject". */
static int parse_injection(struct ctx *c, json_object *o, const char *path, size_t index, void *arg)
{
        static const char *const keys[] = {"pmu", "errno", "count", NULL};
        struct sim_injection *inj = &c->m->injections[index];
        const struct field count[] = {
            F_INT("count", inj->count, -1, 1000000000, .check = check_count),
        };
        char p[PATH_LEN], buf[32];
        json_object *v;
        long long x;
        int r;

        r = open_object(c, o, path, "an injection", keys);
        if (r)
                return r;
        v = field_at(o, path, "pmu", p, sizeof(p));
        if (v) {
                r = get_string(c, v, p, inj->pmu, sizeof(inj->pmu));
                if (r)
                        return r;
                if (inj->pmu[0]) {
                        bool found = false;

                        for (size_t i = 0; i < c->m->core_count && !found; i++) {
                                const struct sim_core *core = &c->m->cores[i];

                                snprintf(buf, sizeof(buf), "hisi_pcie%u_core%u", core->sicl,
                                         core->id);
                                found = !strcmp(buf, inj->pmu);
                        }
                        if (!found)
                                return fail(c, p,
                                            "no PMU \"%s\" on this machine (the PMU of SICL s, "
                                            "core c is hisi_pcie<s>_core<c>)",
                                            inj->pmu);
                }
        }
        v = field_at(o, path, "errno", p, sizeof(p));
        if (!v)
                return fail(c, p, "missing (e.g. \"EACCES\")");
        if (json_object_is_type(v, json_type_string)) {
                r = get_string(c, v, p, buf, sizeof(buf));
                if (r)
                        return r;
                inj->err = 0;
                for (size_t i = 0; i < sizeof(errno_names) / sizeof(errno_names[0]); i++) {
                        if (!strcmp(buf, errno_names[i].name))
                                inj->err = errno_names[i].err;
                }
                if (!inj->err)
                        return fail(c, p,
                                    "\"%s\" is not an errno name this simulator knows (EPERM, "
                                    "EACCES, ENOENT, EINVAL, EOPNOTSUPP, EBUSY, EAGAIN, ENODEV, "
                                    "EMFILE, ENOSPC, ENOMEM, E2BIG, EIO, ...)",
                                    buf);
        } else {
                r = get_int(c, v, p, 1, 4095, &x);
                if (r)
                        return r;
                inj->err = (int)x;
        }
        inj->count = -1;
        r = READ_FIELDS(c, o, path, count);
        if (!r)
                c->m->injection_count++;
        return r;
}

/* ---- whole-machine validation ---- */

static int resolve_funcref(struct ctx *c, struct funcref *ref, uint16_t want, size_t ci,
                           size_t *out)
{
        struct sim_machine *m = c->m;
        char bdf[16];
        size_t idx;

        *out = SIM_NONE;
        if (!ref->set)
                return 0;
        snprintf(bdf, sizeof(bdf), "%04x:%02x:%02x.%x", ref->domain, ref->bus, ref->dev, ref->fn);
        idx = sim_machine_find(m, ref->domain, ref->bus, ref->dev, ref->fn);
        if (idx == SIM_NONE)
                return fail(c, ref->path, "no device %s is described (list it under \"rcieps\")",
                            bdf);
        if (m->devices[idx].kind != SIM_RCIEP || m->devices[idx].vendor != 0x19e5 ||
            m->devices[idx].device != want)
                return fail(c, ref->path,
                            "%s (%s) is not a 19e5:%04x RCiEP: the %s function of a core is a "
                            "HiSilicon Root Complex integrated endpoint",
                            bdf, c->info[idx].path, want, want == 0xa12d ? "PMU" : "PTT");
        for (size_t i = 0; i < ci; i++) {
                if (m->cores[i].pmu_function == idx || m->cores[i].ptt_function == idx)
                        return fail(c, ref->path, "%s is already the function of %s", bdf,
                                    c->core_path[i]);
        }
        m->devices[idx].core = ci;
        *out = idx;
        return 0;
}

static bool is_ancestor(const struct sim_machine *m, size_t a, size_t b)
{
        for (size_t p = m->devices[b].parent; p != SIM_NONE; p = m->devices[p].parent) {
                if (p == a)
                        return true;
        }
        return false;
}

static int compute_buses(struct ctx *c)
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
static int resolve_links(struct ctx *c)
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

/* Traffic needs a link; more than the links carry is scaled down
 * (sim_traffic_backpressure), as a real link's flow control does. */
static int check_workloads(struct ctx *c)
{
        struct sim_machine *m = c->m;
        char p[PATH_LEN];

        for (size_t i = 0; i < m->device_count; i++) {
                const struct sim_device *d = &m->devices[i];
                bool busy = false;

                for (int k = 0; k < SIM_FLOW_KINDS && d->has_workload; k++)
                        busy |= d->workload.flow[k].bytes_per_second > 0;
                path_key(p, sizeof(p), c->info[i].path, "workload");
                if (d->cur_width == 0 && busy)
                        return fail(c, p, "traffic on a device whose link is down");
        }
        sim_traffic_backpressure(m);
        return 0;
}

static int check_cores(struct ctx *c)
{
        struct sim_machine *m = c->m;
        char p[PATH_LEN], pb[16], qb[16];

        for (size_t ci = 0; ci < m->core_count; ci++) {
                struct sim_core *core = &m->cores[ci];
                int r;

                r = resolve_funcref(c, &c->pmu[ci], 0xa12d, ci, &core->pmu_function);
                if (!r)
                        r = resolve_funcref(c, &c->ptt[ci], 0xa12e, ci, &core->ptt_function);
                if (r)
                        return r;
                core->bdf_min = 0xffff;
                core->bdf_max = 0;
                for (size_t i = 0; i < core->port_count; i++) {
                        const struct sim_device *d = &m->devices[core->ports[i]];
                        uint16_t rid = sim_device_rid(d);

                        if (rid < core->bdf_min)
                                core->bdf_min = rid;
                        if (rid > core->bdf_max)
                                core->bdf_max = rid;
                        if (d->domain != m->devices[core->ports[0]].domain) {
                                path_key(p, sizeof(p), c->info[core->ports[i]].path, "bdf");
                                return fail(c, p, "all Root Ports of one core are in one domain");
                        }
                        for (size_t j = 0; j < i; j++) {
                                const struct sim_device *e = &m->devices[core->ports[j]];

                                if ((d->dev & 7) != (e->dev & 7))
                                        continue;
                                sim_device_bdf(d, pb, sizeof(pb));
                                sim_device_bdf(e, qb, sizeof(qb));
                                path_key(p, sizeof(p), c->info[core->ports[i]].path, "bdf");
                                return fail(c, p,
                                            "%s uses port bit %u (2 * (device 0x%02x & 7)), "
                                            "like %s in the same core: the PMU's port bitmap "
                                            "could not tell them apart",
                                            pb, 2 * (d->dev & 7), d->dev, qb);
                        }
                }
        }
        for (size_t b = 0; b < m->core_count; b++) {
                const struct sim_core *cb = &m->cores[b];

                for (size_t a = 0; a < b; a++) {
                        const struct sim_core *ca = &m->cores[a];

                        if (m->devices[ca->ports[0]].domain != m->devices[cb->ports[0]].domain ||
                            ca->bdf_max < cb->bdf_min || cb->bdf_max < ca->bdf_min)
                                continue;
                        path_key(p, sizeof(p), c->core_path[b], "root_ports");
                        return fail(c, p,
                                    "Root Port BDFs 0x%04x-0x%04x overlap 0x%04x-0x%04x of %s: "
                                    "each PMU covers one range (bdf_min..bdf_max)",
                                    cb->bdf_min, cb->bdf_max, ca->bdf_min, ca->bdf_max,
                                    c->core_path[a]);
                }
        }
        return 0;
}

/* ---- Intel uncore: sockets, the PMON discovery table, IIO stacks ---- */

#define DEF_IIO_IN_BYTES  32.0
#define DEF_IIO_OUT_BYTES 4.0
#define DEF_IOCLK_HZ      1e9
#define DISCOVERY_CLASS   0x088000u /* base system peripheral, "other" */
#define MAX_BAR_SIZE      0x100000u /* resource0 is written as a file of this size */
#define MAX_TABLE_UNITS   1023u     /* max_units is a 10-bit field */

/* A hex string of up to 64 bits. */
static int get_hex64(struct ctx *c, json_object *v, const char *path, uint64_t *out)
{
        const char *s;
        size_t digits = 0;
        unsigned long x;
        int r;

        if (json_object_is_type(v, json_type_string)) {
                s = json_object_get_string(v);
                if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
                        s += 2;
                while (*s == '0' && s[1])
                        s++;
                for (; *s; s++)
                        digits++;
                if (digits > 16)
                        return fail(c, path, "\"%s\" is above 0xffffffffffffffff",
                                    json_object_get_string(v));
        }
        r = get_hex(c, v, path, (unsigned long)-1, &x);
        if (r)
                return r;
        *out = (uint64_t)x;
        return 0;
}

/* An integer member @key of @o: required unless @def is given (non-NULL). */
/* One entry of "units": a group of units (@arg: the socket). */
static int parse_unit_group(struct ctx *c, json_object *o, const char *path, size_t entry,
                            void *arg)
{
        static const char *const keys[] = {
            "type",     "access", "count",      "first_box_id", "ctl",           "ctl_step",
            "num_regs", "width",  "ctl_offset", "ctr_offset",   "status_offset", NULL};
        struct sim_socket *s = arg;
        struct sim_uncore_unit proto = {0};
        char p[PATH_LEN], pp[PATH_LEN], buf[16];
        json_object *v, *ctl;
        long long count = -1, first = 0;
        uint64_t base = 0, step = 0;
        struct sim_uncore_unit *units;
        const struct field type[] = {F_INT("type", proto.type, 0, 0xffff, .missing = "")};
        const struct field layout[] = {
            F_INT("num_regs", proto.num_regs, 0, 255, .missing = ""),
            F_INT("width", proto.width, 0, 255, .missing = ""),
            F_INT("ctl_offset", proto.ctl_offset, 0, 255, .missing = ""),
            F_INT("ctr_offset", proto.ctr_offset, 0, 255, .missing = ""),
            F_INT("status_offset", proto.status_offset, 0, 255),
            F_INT("first_box_id", first, 0, 0xffff),
            F_INT("count", count, 1, MAX_TABLE_UNITS),
        };
        int r;

        (void)entry;
        r = READ_OBJECT(c, o, path, "a group of discovery units", keys, type);
        if (r)
                return r;
        v = field_at(o, path, "access", p, sizeof(p));
        if (!v)
                return fail(c, p, "missing (\"MSR\", \"MMIO\" or \"PCI\")");
        r = get_string(c, v, p, buf, sizeof(buf));
        if (r && json_object_is_type(v, json_type_string))
                return fail(c, p, "expected \"MSR\", \"MMIO\" or \"PCI\"");
        if (r)
                return r;
        if (!strcmp(buf, "MSR"))
                proto.access = SIM_ACCESS_MSR;
        else if (!strcmp(buf, "MMIO"))
                proto.access = SIM_ACCESS_MMIO;
        else if (!strcmp(buf, "PCI"))
                proto.access = SIM_ACCESS_PCI;
        else
                return fail(c, p, "\"%s\": expected \"MSR\", \"MMIO\" or \"PCI\"", buf);
        r = READ_FIELDS(c, o, path, layout);
        if (r)
                return r;
        ctl = field_at(o, path, "ctl", p, sizeof(p));
        if (!ctl)
                return fail(c, p,
                            "missing (a list of box control addresses, or the first one with "
                            "\"count\" and \"ctl_step\")");
        if (json_object_is_type(ctl, json_type_array)) {
                size_t n = json_object_array_length(ctl);

                if (n == 0)
                        return fail(c, p, "empty list");
                if (member(o, "ctl_step")) {
                        path_key(pp, sizeof(pp), path, "ctl_step");
                        return fail(c, pp, "only with a single \"ctl\" start address");
                }
                if (count >= 0 && (size_t)count != n) {
                        path_key(pp, sizeof(pp), path, "count");
                        return fail(c, pp, "%lld, but \"ctl\" lists %zu addresses", count, n);
                }
                count = (long long)n;
        } else {
                r = get_hex64(c, ctl, p, &base);
                if (r)
                        return r;
                if (count < 0) {
                        path_key(pp, sizeof(pp), path, "count");
                        return fail(c, pp, "missing (how many boxes from the \"ctl\" start)");
                }
                v = field_at(o, path, "ctl_step", pp, sizeof(pp));
                if (!v && count > 1)
                        return fail(c, pp, "missing (address step from one box to the next)");
                if (v) {
                        r = get_hex64(c, v, pp, &step);
                        if (r)
                                return r;
                }
        }
        if (first + count - 1 > 0xffff)
                return fail(c, path, "box ids %lld..%lld exceed 0xffff", first, first + count - 1);
        if (s->unit_count + (size_t)count > MAX_TABLE_UNITS)
                return fail(c, path, "more than %u units in one table", MAX_TABLE_UNITS);
        units = realloc(s->units, (s->unit_count + (size_t)count) * sizeof(*units));
        if (!units)
                return -ENOMEM;
        s->units = units;
        for (long long i = 0; i < count; i++) {
                struct sim_uncore_unit *u = &s->units[s->unit_count];

                *u = proto;
                u->box_id = (uint16_t)(first + i);
                if (json_object_is_type(ctl, json_type_array)) {
                        path_idx(pp, sizeof(pp), p, (size_t)i);
                        r = get_hex64(c, json_object_array_get_idx(ctl, (size_t)i), pp, &u->ctl);
                        if (r)
                                return r;
                } else {
                        u->ctl = base + step * (uint64_t)i;
                }
                for (size_t j = 0; j < s->unit_count; j++) {
                        if (s->units[j].type == u->type && s->units[j].box_id == u->box_id)
                                return fail(c, path, "type %u box %u is already in the table",
                                            u->type, u->box_id);
                }
                s->unit_count++;
        }
        return 0;
}

static int check_stride(struct ctx *c, const char *path, double v, const void *arg)
{
        (void)arg;
        if (v < 3)
                return fail(c, path,
                            "%lld: a table entry is 3 u64s, the stride (in u64s) is at least 3",
                            (long long)v);
        return 0;
}

static int parse_other_dvsec(struct ctx *c, json_object *v, const char *path, size_t i, void *arg)
{
        struct sim_socket *s = arg;
        long long x;
        int r = get_int(c, v, path, 0, 0xffff, &x);

        (void)i;
        if (r)
                return r;
        if (x == 1)
                return fail(c, path,
                            "DVSEC id 1 is the PMON discovery DVSEC itself, which the simulator "
                            "places after these");
        s->other_dvsec_ids[s->other_dvsec_count++] = (uint16_t)x;
        return 0;
}

static int parse_discovery(struct ctx *c, json_object *o, const char *path, struct sim_socket *s)
{
        const struct field stride[] = {
            F_INT("stride", s->stride, 0, 255, .missing = "", .check = check_stride),
        };
        static const char *const keys[] = {"bdf",   "bar",          "bar_size", "stride",
                                           "units", "other_dvsecs", NULL};
        struct sim_machine *m = c->m;
        struct sim_device *d;
        char p[PATH_LEN], pp[PATH_LEN];
        uint16_t domain;
        uint8_t bus, dev, fn;
        json_object *v;
        size_t idx;
        int r;

        r = open_object(c, o, path, "\"discovery\"", keys);
        if (r)
                return r;
        v = field_at(o, path, "bdf", p, sizeof(p));
        if (!v)
                return fail(c, p,
                            "missing (the 8086:09a7 discovery function, e.g. \"0000:7e:00.1\")");
        r = get_bdf(c, v, p, &domain, &bus, &dev, &fn);
        if (r)
                return r;
        idx = sim_machine_find(m, domain, bus, dev, fn);
        if (idx != SIM_NONE)
                return fail(c, p, "duplicate BDF %s: already used by %s", json_object_get_string(v),
                            c->info[idx].path);
        r = new_device(c, path, &idx);
        if (r)
                return r;
        d = &m->devices[idx];
        d->kind = SIM_RCIEP;
        d->domain = domain;
        d->bus = bus;
        d->dev = dev;
        d->fn = fn;
        d->vendor = 0x8086;
        d->device = 0x09a7;
        d->class_code = DISCOVERY_CLASS;
        d->parent = SIM_NONE;
        d->core = SIM_NONE;
        d->numa_node = s->numa_node;
        d->mpss = d->mps = DEF_MPSS;
        d->mrrs = DEF_MRRS;
        snprintf(d->name, sizeof(d->name), "pmon-discovery%u", s->id);
        s->discovery_function = idx;

        v = field_at(o, path, "bar", p, sizeof(p));
        if (!v)
                return fail(c, p, "missing (the 64-bit BAR 0 address holding the table)");
        r = get_hex64(c, v, p, &s->bar);
        if (r)
                return r;
        v = field_at(o, path, "bar_size", pp, sizeof(pp));
        if (!v)
                return fail(c, pp, "missing (BAR 0 size, a power of two)");
        r = get_hex64(c, v, pp, &s->bar_size);
        if (r)
                return r;
        if (s->bar_size < 0x1000 || s->bar_size > MAX_BAR_SIZE || (s->bar_size & (s->bar_size - 1)))
                return fail(c, pp, "0x%llx: expected a power of two from 0x1000 to 0x%x",
                            (unsigned long long)s->bar_size, MAX_BAR_SIZE);
        if (s->bar == 0 || s->bar % s->bar_size)
                return fail(c, p, "0x%llx is not a BAR address aligned to its size 0x%llx",
                            (unsigned long long)s->bar, (unsigned long long)s->bar_size);
        r = READ_FIELDS(c, o, path, stride);
        if (r)
                return r;

        v = member(o, "other_dvsecs");
        if (v) {
                size_t max = sizeof(s->other_dvsec_ids) / sizeof(s->other_dvsec_ids[0]);

                path_key(p, sizeof(p), path, "other_dvsecs");
                r = read_array(c, v, p, max, NULL, parse_other_dvsec, s);
                if (r)
                        return r;
        }
        v = field_at(o, path, "units", p, sizeof(p));
        if (!v)
                return fail(c, p, "missing (the table's unit entries, in groups)");
        r = read_array(c, v, p, MAX_TABLE_UNITS, NULL, parse_unit_group, s);
        if (r)
                return r;
        if ((s->unit_count + 1) * s->stride * 8 > s->bar_size) {
                path_key(pp, sizeof(pp), path, "bar_size");
                return fail(c, pp,
                            "0x%llx bytes cannot hold the table: %zu units + the global entry at "
                            "a stride of %u u64s need 0x%zx bytes",
                            (unsigned long long)s->bar_size, s->unit_count, s->stride,
                            (s->unit_count + 1) * s->stride * 8);
        }
        return 0;
}

/* The stack whose "root_ports" are being read, in its socket. */
struct stack_at {
        const struct sim_socket *s;
        struct sim_iio_stack *st;
};

static int parse_stack_port(struct ctx *c, json_object *o, const char *path, size_t i, void *arg)
{
        const struct stack_at *at = arg;
        struct sim_iio_stack *st = at->st;
        size_t idx = c->m->device_count;
        const struct sim_device *d;
        char bp[PATH_LEN];
        int r;

        (void)i;
        r = parse_device(c, o, path, SIM_ROOT_PORT, SIM_NONE, SIM_NONE, at->s->numa_node);
        if (r)
                return r;
        d = &c->m->devices[idx];
        path_key(bp, sizeof(bp), path, "bdf");
        if (d->domain != st->domain || d->bus != st->bus)
                return fail(c, bp,
                            "a Root Port of stack %u sits on the stack's bus %04x:%02x, not on "
                            "%04x:%02x",
                            st->box_id, st->domain, st->bus, d->domain, d->bus);
        if (d->dev < 1 || d->dev > 8 || d->fn != 0)
                return fail(c, bp,
                            "device %02x.%x: the Root Ports of an IIO stack are at devices 01..08, "
                            "function 0 (part = device - 1)",
                            d->dev, d->fn);
        st->ports[st->port_count++] = idx;
        return 0;
}

static int parse_stack(struct ctx *c, json_object *o, const char *path, struct sim_socket *s,
                       struct sim_iio_stack *st)
{
        static const char *const keys[] = {"box_id", "bus", "root_ports", NULL};
        struct sim_machine *m = c->m;
        char p[PATH_LEN];
        json_object *v;
        const struct field box[] = {F_INT("box_id", st->box_id, 0, 0xff, .missing = "")};
        const struct field bus[] = {
            F_HEX("bus", st->bus, 0xff, .missing = "the stack's root bus, e.g. \"0x15\""),
        };
        int r;

        r = READ_OBJECT(c, o, path, "an IIO stack", keys, box);
        if (r)
                return r;
        path_key(p, sizeof(p), path, "box_id");
        for (size_t i = 0; i < s->stack_count; i++) {
                if (s->stacks[i].box_id == st->box_id)
                        return fail(c, p, "box %u is already a stack of this socket", st->box_id);
        }
        r = READ_FIELDS(c, o, path, bus);
        if (r)
                return r;
        path_key(p, sizeof(p), path, "bus");
        st->domain = m->devices[s->discovery_function].domain;
        for (size_t si = 0; si < m->intel.socket_count; si++) {
                const struct sim_socket *o2 = &m->intel.sockets[si];

                for (size_t k = 0; k < o2->stack_count; k++) {
                        if (o2 != s && o2->stacks[k].domain == st->domain &&
                            o2->stacks[k].bus == st->bus)
                                return fail(c, p,
                                            "bus 0x%02x is also the bus of a stack of socket %u",
                                            st->bus, o2->id);
                }
        }
        for (size_t k = 0; k < s->stack_count; k++) {
                if (s->stacks[k].domain == st->domain && s->stacks[k].bus == st->bus)
                        return fail(c, p, "bus 0x%02x is also the bus of stack %u", st->bus,
                                    s->stacks[k].box_id);
        }
        v = field_at(o, path, "root_ports", p, sizeof(p));
        if (!v)
                return fail(c, p, "missing (the stack's Root Ports; [] for none)");
        struct stack_at at = {s, st};

        return read_array(c, v, p, 8, NULL, parse_stack_port, &at);
}

/* "a-b" or "a": one contiguous range. */
/* One entry of a socket's "iio_stacks" (@arg: the socket). */
static int parse_socket_stack(struct ctx *c, json_object *o, const char *path, size_t i, void *arg)
{
        struct sim_socket *s = arg;
        struct sim_iio_stack *st = &s->stacks[s->stack_count];
        bool covered = false;
        char p[PATH_LEN];
        int r;

        (void)i;
        memset(st, 0, sizeof(*st));
        r = parse_stack(c, o, path, s, st);
        if (r)
                return r;
        for (size_t u = 0; u < s->unit_count && !covered; u++)
                covered = s->units[u].type == 1 && s->units[u].box_id == st->box_id;
        if (!covered) {
                path_key(p, sizeof(p), path, "box_id");
                return fail(c, p,
                            "no IIO unit (type 1) with box id %u in this socket's discovery table",
                            st->box_id);
        }
        s->stack_count++;
        return 0;
}

static int parse_socket_cpus(struct ctx *c, json_object *v, const char *path, struct sim_socket *s)
{
        char buf[32], *end;
        unsigned long a, b;
        int r = get_string(c, v, path, buf, sizeof(buf));

        if (r)
                return r;
        if (buf[0] < '0' || buf[0] > '9')
                goto bad;
        a = strtoul(buf, &end, 10);
        b = a;
        if (*end == '-') {
                if (end[1] < '0' || end[1] > '9')
                        goto bad;
                b = strtoul(end + 1, &end, 10);
        }
        if (*end)
                goto bad;
        if (a > b)
                return fail(c, path, "range %lu-%lu runs backwards", a, b);
        if (b >= c->m->cpus)
                return fail(c, path, "CPU %lu does not exist (the machine has %u CPUs)", b,
                            c->m->cpus);
        s->first_cpu = (unsigned int)a;
        s->cpu_count = (unsigned int)(b - a + 1);
        return 0;
bad:
        return fail(c, path, "\"%s\" is not one CPU range such as \"0-55\"", buf);
}

/* One entry of "intel.sockets". */
static int parse_socket(struct ctx *c, json_object *o, const char *path, size_t index, void *arg)
{
        static const char *const keys[] = {"id",        "numa_node",  "cpus",
                                           "discovery", "iio_stacks", NULL};
        struct sim_intel *in = &c->m->intel;
        struct sim_socket *s = &in->sockets[index];
        const struct field id[] = {F_INT("id", s->id, 0, 255, .missing = "")};
        const struct field numa[] = {F_INT("numa_node", s->numa_node, -1, 1023, .missing = "")};
        char p[PATH_LEN];
        json_object *v;
        int r;

        in->socket_count =
            index + 1; /* counted before it is read: sim_machine_free frees its units */
        s->discovery_function = SIM_NONE;
        r = READ_OBJECT(c, o, path, "a socket", keys, id);
        if (r)
                return r;
        path_key(p, sizeof(p), path, "id");
        for (size_t i = 0; i < index; i++) {
                if (in->sockets[i].id == s->id)
                        return fail(c, p, "socket %u is already described by intel.sockets[%zu]",
                                    s->id, i);
        }
        r = READ_FIELDS(c, o, path, numa);
        if (r)
                return r;
        v = field_at(o, path, "cpus", p, sizeof(p));
        if (!v)
                return fail(c, p, "missing (the socket's CPUs, one range such as \"0-55\")");
        r = parse_socket_cpus(c, v, p, s);
        if (r)
                return r;
        for (size_t i = 0; i < index; i++) {
                const struct sim_socket *o2 = &in->sockets[i];

                if (s->first_cpu < o2->first_cpu + o2->cpu_count &&
                    o2->first_cpu < s->first_cpu + s->cpu_count)
                        return fail(c, p, "CPUs overlap those of intel.sockets[%zu]", i);
        }
        v = field_at(o, path, "discovery", p, sizeof(p));
        if (!v)
                return fail(c, p, "missing (the PMON discovery function and its table)");
        r = parse_discovery(c, v, p, s);
        if (r)
                return r;
        v = field_at(o, path, "iio_stacks", p, sizeof(p));
        if (v)
                return read_array(c, v, p, SIM_MAX_IIO_STACKS, NULL, parse_socket_stack, s);
        return 0;
}

static int parse_intel(struct ctx *c, json_object *o)
{
        static const char *const keys[] = {"cpu_model",
                                           "iio_in_bytes_per_count",
                                           "iio_out_bytes_per_count",
                                           "ioclk_hz",
                                           "die_files",
                                           "sockets",
                                           NULL};
        struct sim_intel *in = &c->m->intel;
        const struct field fields[] = {
            F_INT("cpu_model", in->cpu_model, 0, 255, .missing = ""),
            F_DOUBLE("iio_in_bytes_per_count", in->iio_in_bytes_per_count, 1, 65536),
            F_DOUBLE("iio_out_bytes_per_count", in->iio_out_bytes_per_count, 1, 65536),
            F_DOUBLE("ioclk_hz", in->ioclk_hz, 1, 1e11),
            F_BOOL("die_files", in->die_files),
        };
        json_object *v;
        int r;

        in->iio_in_bytes_per_count = DEF_IIO_IN_BYTES;
        in->iio_out_bytes_per_count = DEF_IIO_OUT_BYTES;
        in->ioclk_hz = DEF_IOCLK_HZ;
        r = READ_OBJECT(c, o, "intel", "\"intel\"", keys, fields);
        if (r)
                return r;
        in->present = true;
        v = member(o, "sockets");
        if (!v)
                return fail(c, "intel.sockets", "missing (at least one socket)");
        return read_array(c, v, "intel.sockets", SIM_MAX_SOCKETS,
                          "empty: describe at least one socket", parse_socket, NULL);
}

static int check_above_0(struct ctx *c, const char *path, double v, const void *arg)
{
        (void)arg;
        return v <= 0 ? fail(c, path, "must be above 0") : 0;
}

static int parse_top(struct ctx *c, json_object *top)
{
        static const char *const keys[] = {"machine", "description", "kernel", "cpus",
                                           "cmdline", "hisi_pcie",   "sicls",  "rcieps",
                                           "inject",  "intel",       "events", NULL};
        static const char *const pmu_keys[] = {"flux_unit_bytes",
                                               "time_clock_hz",
                                               "latency_clock_hz",
                                               "identifier",
                                               "ptt_clock_hz",
                                               "ptt_time",
                                               NULL};
        static const char *const kernels[] = {"5.17", "6.2", "6.9", "6.12", "6.15"};
        struct sim_machine *m = c->m;
        const struct field name[] = {F_STRING("machine", m->name, .missing = "the machine's name")};
        const struct field description[] = {F_STRING("description", m->description)};
        const struct field cpus_cmdline[] = {
            F_INT("cpus", m->cpus, 1, MAX_CPUS, .missing = "number of online CPUs"),
            F_STRING("cmdline", m->cmdline),
        };
        char ptt_time[16] = "delta";
        const struct field clocks[] = {
            F_DOUBLE("flux_unit_bytes", m->clocks.flux_unit_bytes, 0, 4096, .check = check_above_0),
            F_DOUBLE("time_clock_hz", m->clocks.time_clock_hz, 1, 1e11),
            F_DOUBLE("latency_clock_hz", m->clocks.latency_clock_hz, 1, 1e11),
            F_HEX("identifier", c->identifier, 0xffffffffUL),
            F_DOUBLE("ptt_clock_hz", m->clocks.ptt_clock_hz, 1, 1e11),
            F_STRING("ptt_time", ptt_time),
        };
        unsigned int sicl_ids[MAX_SICLS];
        char buf[16];
        json_object *v;
        int r;

        r = open_object(c, top, "", "the machine", keys);
        if (r)
                return r;
        r = READ_FIELDS(c, top, "", name);
        if (r)
                return r;
        if (!m->name[0])
                return fail(c, "machine", "empty name");
        r = READ_FIELDS(c, top, "", description);
        if (r)
                return r;
        m->kernel = DEF_KERNEL;
        v = member(top, "kernel");
        if (v) {
                bool found = false;

                r = get_string(c, v, "kernel", buf, sizeof(buf));
                if (r && json_object_is_type(v, json_type_string))
                        return fail(c, "kernel",
                                    "unknown kernel (expected \"5.17\", \"6.2\", \"6.9\", "
                                    "\"6.12\" or \"6.15\")");
                if (r)
                        return r;
                for (int k = 0; k < (int)(sizeof(kernels) / sizeof(kernels[0])); k++) {
                        if (!strcmp(buf, kernels[k])) {
                                m->kernel = (enum sim_kernel)k;
                                found = true;
                        }
                }
                if (!found)
                        return fail(c, "kernel",
                                    "\"%s\" is not a kernel this simulator knows (\"5.17\", "
                                    "\"6.2\", \"6.9\", \"6.12\" or \"6.15\")",
                                    buf);
        }
        snprintf(m->cmdline, sizeof(m->cmdline), "%s", DEF_CMDLINE);
        r = READ_FIELDS(c, top, "", cpus_cmdline);
        if (r)
                return r;
        if (strchr(m->cmdline, '\n'))
                return fail(c, "cmdline", "a kernel command line is one line");

        m->clocks.flux_unit_bytes = DEF_FLUX_UNIT;
        m->clocks.time_clock_hz = DEF_TIME_CLOCK_HZ;
        m->clocks.latency_clock_hz = DEF_LATENCY_CLOCK_HZ;
        m->clocks.ptt_clock_hz = DEF_PTT_CLOCK_HZ;
        c->identifier = DEF_IDENTIFIER;
        v = member(top, "hisi_pcie");
        if (v) {
                r = READ_OBJECT(c, v, "hisi_pcie", "\"hisi_pcie\"", pmu_keys, clocks);
                if (r)
                        return r;
        }
        if (strcmp(ptt_time, "delta") && strcmp(ptt_time, "absolute"))
                return fail(c, "hisi_pcie.ptt_time", "\"%s\" is neither \"delta\" nor \"absolute\"",
                            ptt_time);
        m->clocks.ptt_time_absolute = !strcmp(ptt_time, "absolute");

        v = member(top, "sicls");
        if (!v && !member(top, "intel"))
                return fail(c, "sicls",
                            "missing (the IO dies with their PCIe cores; or \"intel\" for an "
                            "Intel machine)");
        r = v ? read_array(c, v, "sicls", MAX_SICLS, "empty: describe at least one SICL",
                           parse_sicl, sicl_ids)
              : 0;
        if (r)
                return r;
        v = member(top, "rcieps");
        if (v) {
                r = parse_rcieps(c, v, "rcieps", -1);
                if (r)
                        return r;
        }
        v = member(top, "intel");
        if (v) {
                r = parse_intel(c, v);
                if (r)
                        return r;
        }

        r = compute_buses(c);
        if (!r)
                r = resolve_links(c);
        if (!r)
                r = check_cores(c);
        if (!r)
                r = check_workloads(c);
        if (r)
                return r;

        v = member(top, "inject");
        if (v) {
                r = read_array(c, v, "inject", MAX_INJECTIONS, NULL, parse_injection, NULL);
                if (r)
                        return r;
        }
        _Static_assert(sizeof(m->cpu_sicl) == sizeof(c->cpu_owner), "one entry per CPU");
        memcpy(m->cpu_sicl, c->cpu_owner, sizeof(m->cpu_sicl));
        v = member(top, "events");
        if (v)
                return sim_events_parse(m, v, c->origin, c->err, c->errlen);
        return 0;
}

/* ---- text level: syntax errors, duplicate keys ---- */

static void line_col(const char *text, size_t off, unsigned int *line, unsigned int *col)
{
        *line = 1;
        *col = 1;
        for (size_t i = 0; i < off && text[i]; i++) {
                if (text[i] == '\n') {
                        (*line)++;
                        *col = 1;
                } else {
                        (*col)++;
                }
        }
}

/* Skips blanks and comments; returns the offset of the next token. */
static size_t skip_blank(const char *s, size_t i, size_t len)
{
        while (i < len) {
                if (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
                        i++;
                } else if (s[i] == '/' && i + 1 < len && s[i + 1] == '/') {
                        while (i < len && s[i] != '\n')
                                i++;
                } else if (s[i] == '/' && i + 1 < len && s[i + 1] == '*') {
                        i += 2;
                        while (i + 1 < len && !(s[i] == '*' && s[i + 1] == '/'))
                                i++;
                        i = i + 2 < len ? i + 2 : len;
                } else {
                        break;
                }
        }
        return i;
}

#define SCAN_DEPTH 64

struct scan_key {
        size_t start, len;
        unsigned int level;
};

/*
 * json-c keeps the last of two equal keys in one object without a word; a
 * description with a repeated key is a typo that must not pass. The text has
 * already been parsed, so this scanner only tracks strings, comments and
 * nesting.
 */
static int check_duplicate_keys(struct ctx *c, const char *s, size_t len)
{
        struct scan_key *keys = NULL;
        size_t nkeys = 0, cap = 0;
        bool is_obj[SCAN_DEPTH];
        bool expect_key[SCAN_DEPTH];
        unsigned int depth = 0;
        int ret = 0;

        for (size_t i = skip_blank(s, 0, len); i < len; i = skip_blank(s, i, len)) {
                char ch = s[i];

                if (ch == '{' || ch == '[') {
                        if (depth >= SCAN_DEPTH)
                                break; /* json-c refused deeper nesting already */
                        is_obj[depth] = ch == '{';
                        expect_key[depth] = ch == '{';
                        depth++;
                        i++;
                } else if (ch == '}' || ch == ']') {
                        while (nkeys && keys[nkeys - 1].level == depth)
                                nkeys--;
                        if (depth)
                                depth--;
                        i++;
                } else if (ch == ',') {
                        if (depth && is_obj[depth - 1])
                                expect_key[depth - 1] = true;
                        i++;
                } else if (ch == '"' || ch == '\'') {
                        size_t start = ++i;

                        while (i < len && s[i] != ch) {
                                if (s[i] == '\\' && i + 1 < len)
                                        i++;
                                i++;
                        }
                        if (depth && is_obj[depth - 1] && expect_key[depth - 1]) {
                                size_t klen = i - start;

                                expect_key[depth - 1] = false;
                                for (size_t k = nkeys; k-- > 0 && keys[k].level == depth;) {
                                        if (keys[k].len == klen &&
                                            !memcmp(s + keys[k].start, s + start, klen)) {
                                                unsigned int line, col;

                                                line_col(s, start - 1, &line, &col);
                                                ret = fail(c, "",
                                                           "line %u, column %u: key \"%.*s\" "
                                                           "appears twice in one object",
                                                           line, col, (int)klen, s + start);
                                                goto out;
                                        }
                                }
                                if (nkeys == cap) {
                                        struct scan_key *nk;

                                        cap = cap ? cap * 2 : 64;
                                        nk = realloc(keys, cap * sizeof(*nk));
                                        if (!nk) {
                                                ret = -ENOMEM;
                                                goto out;
                                        }
                                        keys = nk;
                                }
                                keys[nkeys].start = start;
                                keys[nkeys].len = klen;
                                keys[nkeys].level = depth;
                                nkeys++;
                        }
                        i++;
                } else {
                        i++;
                }
        }
out:
        free(keys);
        return ret;
}

/* ---- public API ---- */

const char *sim_kernel_name(enum sim_kernel k)
{
        switch (k) {
        case SIM_KERNEL_5_17:
                return "5.17";
        case SIM_KERNEL_6_2:
                return "6.2";
        case SIM_KERNEL_6_9:
                return "6.9";
        case SIM_KERNEL_6_12:
                return "6.12";
        case SIM_KERNEL_6_15:
                return "6.15";
        }
        return "unknown";
}

double sim_dist_mean(const struct sim_dist *d)
{
        double sum = 0, wsum = 0;

        if (!d)
                return 0;
        for (size_t i = 0; i < d->count && i < SIM_DIST_MAX; i++) {
                sum += d->value[i] * d->weight[i];
                wsum += d->weight[i];
        }
        return wsum > 0 ? sum / wsum : 0;
}

void sim_machine_free(struct sim_machine *m)
{
        if (!m)
                return;
        for (size_t i = 0; i < m->intel.socket_count && i < SIM_MAX_SOCKETS; i++)
                free(m->intel.sockets[i].units);
        free(m->devices);
        free(m);
}

size_t sim_machine_find(const struct sim_machine *m, uint16_t domain, uint8_t bus, uint8_t dev,
                        uint8_t fn)
{
        if (!m)
                return SIM_NONE;
        for (size_t i = 0; i < m->device_count; i++) {
                const struct sim_device *d = &m->devices[i];

                if (d->domain == domain && d->bus == bus && d->dev == dev && d->fn == fn)
                        return i;
        }
        return SIM_NONE;
}

void sim_device_bdf(const struct sim_device *d, char *buf, size_t size)
{
        if (!buf || !size)
                return;
        snprintf(buf, size, "%04x:%02x:%02x.%x", d->domain, d->bus, d->dev & 0x1f, d->fn & 7);
}

size_t sim_machine_root_port(const struct sim_machine *m, size_t dev)
{
        size_t hops = 0;

        if (!m || dev >= m->device_count)
                return SIM_NONE;
        while (dev != SIM_NONE && hops++ <= m->device_count) {
                if (m->devices[dev].kind == SIM_ROOT_PORT)
                        return dev;
                dev = m->devices[dev].parent;
        }
        return SIM_NONE;
}

int sim_machine_parse(const char *json, const char *origin, struct sim_machine **out, char *errbuf,
                      size_t errlen)
{
        struct ctx *c;
        struct json_tokener *tok;
        json_object *top;
        size_t len, end;
        int r;

        if (errbuf && errlen)
                errbuf[0] = '\0';
        if (!out)
                return -EINVAL;
        *out = NULL;
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->origin = origin ? origin : "<string>";
        c->err = errbuf;
        c->errlen = errlen;
        if (!json) {
                r = fail(c, "", "no text");
                free(c);
                return r;
        }
        len = strlen(json);
        if (len > FILE_MAX_BYTES) {
                r = fail(c, "", "%zu bytes is too large for a machine description", len);
                free(c);
                return r;
        }
        tok = json_tokener_new();
        if (!tok) {
                free(c);
                return -ENOMEM;
        }
        top = json_tokener_parse_ex(tok, json, (int)len);
#if defined(JSON_C_VERSION_NUM) && JSON_C_VERSION_NUM >= ((0 << 16) | (15 << 8))
        end = json_tokener_get_parse_end(tok);
#else
        end = (size_t)tok->char_offset;
#endif
        if (!top) {
                enum json_tokener_error jerr = json_tokener_get_error(tok);
                unsigned int line, col;

                line_col(json, end, &line, &col);
                if (jerr == json_tokener_continue)
                        r = fail(c, "",
                                 "line %u, column %u: JSON syntax error: unexpected end of "
                                 "the text (unclosed object, array or string)",
                                 line, col);
                else
                        r = fail(c, "", "line %u, column %u: JSON syntax error: %s", line, col,
                                 json_tokener_error_desc(jerr));
                json_tokener_free(tok);
                free(c);
                return r;
        }
        json_tokener_free(tok);
        end = skip_blank(json, end, len);
        if (end < len) {
                unsigned int line, col;

                line_col(json, end, &line, &col);
                r = fail(c, "",
                         "line %u, column %u: JSON syntax error: text after the top-level "
                         "object",
                         line, col);
                json_object_put(top);
                free(c);
                return r;
        }
        c->m = calloc(1, sizeof(*c->m));
        if (!c->m) {
                json_object_put(top);
                free(c);
                return -ENOMEM;
        }
        r = check_duplicate_keys(c, json, len);
        if (!r)
                r = parse_top(c, top);
        json_object_put(top);
        free(c->info);
        if (r) {
                if (r == -ENOMEM && errbuf && errlen)
                        snprintf(errbuf, errlen, "%s: out of memory", c->origin);
                sim_machine_free(c->m);
        } else {
                *out = c->m;
        }
        free(c);
        return r;
}

int sim_machine_load(const char *path, struct sim_machine **out, char *errbuf, size_t errlen)
{
        FILE *f;
        char *text = NULL;
        size_t len = 0, cap = 0;
        int r;

        if (errbuf && errlen)
                errbuf[0] = '\0';
        if (!out)
                return -EINVAL;
        *out = NULL;
        if (!path) {
                if (errbuf && errlen)
                        snprintf(errbuf, errlen, "no file name");
                return -EINVAL;
        }
        f = fopen(path, "r");
        if (!f) {
                r = errno;
                if (errbuf && errlen)
                        snprintf(errbuf, errlen, "%s: %s", path, strerror(r));
                return r == ENOENT ? -ENOENT : r == ENOMEM ? -ENOMEM : -EINVAL;
        }
        for (;;) {
                size_t got;

                if (len + 1 >= cap) {
                        char *t;

                        if (cap > FILE_MAX_BYTES) {
                                fclose(f);
                                free(text);
                                if (errbuf && errlen)
                                        snprintf(errbuf, errlen,
                                                 "%s: larger than %u bytes: not a machine "
                                                 "description",
                                                 path, FILE_MAX_BYTES);
                                return -EINVAL;
                        }
                        cap = cap ? cap * 2 : 65536;
                        t = realloc(text, cap);
                        if (!t) {
                                fclose(f);
                                free(text);
                                return -ENOMEM;
                        }
                        text = t;
                }
                got = fread(text + len, 1, cap - len - 1, f);
                len += got;
                if (got == 0)
                        break;
        }
        r = ferror(f) ? errno : 0;
        fclose(f);
        if (r) {
                free(text);
                if (errbuf && errlen)
                        snprintf(errbuf, errlen, "%s: %s", path, strerror(r ? r : EIO));
                return -EINVAL;
        }
        text[len] = '\0';
        if (strlen(text) != len) {
                unsigned int line, col;

                line_col(text, strlen(text), &line, &col);
                if (errbuf && errlen)
                        snprintf(errbuf, errlen, "%s: line %u, column %u: NUL byte in the text",
                                 path, line, col);
                free(text);
                return -EINVAL;
        }
        r = sim_machine_parse(text, path, out, errbuf, errlen);
        free(text);
        return r;
}
