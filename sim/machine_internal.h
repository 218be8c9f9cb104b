/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * machine_internal.h - what the files of the machine reader share (not part of
 * the simulator's interface: sim_machine.h is). The reader state (struct ctx),
 * the defaults, and the functions one file calls in another, grouped by the
 * file that defines them:
 *   machine_json.c     JSON access: messages and paths, typed values, field
 *                      tables, the array walker, the text-level checks
 *   machine_pci.c      the PCI tree: BDFs, links, payloads, AER, devices, bus
 *                      numbers and links of the whole tree
 *   machine_pmu.c      HiSilicon PCIe cores with their PMU/PTT functions, Intel
 *                      uncore: sockets, the PMON discovery table, IIO stacks
 *   machine_workload.c workloads: flows, distributions, phases
 *   sim_machine.c      the top level: SICLs, injections, the machine, the API
 */
#ifndef PCIESCOPE_SIM_MACHINE_INTERNAL_H
#define PCIESCOPE_SIM_MACHINE_INTERNAL_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim_machine.h"

#pragma GCC visibility push(hidden)

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

/* ---- machine_json.c (each function is described at its definition) ---- */

int fail(struct ctx *c, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void pathf(char *out, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

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

#define READ_FIELDS(c, o, path, table) read_fields((c), (o), (path), (table), ARRAY_SIZE(table))

#define READ_OBJECT(c, o, path, what, keys, table)                                                 \
        read_object((c), (o), (path), (what), (keys), (table), ARRAY_SIZE(table))

/* Reads element @i of an array: @e, at @path ("<array>[<i>]"). */
typedef int each_fn(struct ctx *c, json_object *e, const char *path, size_t i, void *arg);

void path_key(char *out, size_t size, const char *base, const char *key);
void path_idx(char *out, size_t size, const char *base, size_t i);
const char *type_desc(json_object *v);
json_object *member(json_object *o, const char *key);
int check_keys(struct ctx *c, json_object *o, const char *path, const char *what,
               const char *const *keys);
int need_object(struct ctx *c, json_object *v, const char *path);
int get_int(struct ctx *c, json_object *v, const char *path, long long min, long long max,
            long long *out);
int get_double(struct ctx *c, json_object *v, const char *path, double min, double max,
               double *out);
int get_string(struct ctx *c, json_object *v, const char *path, char *buf, size_t size);
int hexval(char ch);
int get_hex(struct ctx *c, json_object *v, const char *path, unsigned long max, unsigned long *out);
int read_field(struct ctx *c, json_object *v, const char *path, const struct field *f);
json_object *field_at(json_object *o, const char *base, const char *key, char *p, size_t size);
int read_fields(struct ctx *c, json_object *o, const char *path, const struct field *f, size_t n);
int read_object(struct ctx *c, json_object *o, const char *path, const char *what,
                const char *const *keys, const struct field *f, size_t n);
int open_object(struct ctx *c, json_object *o, const char *path, const char *what,
                const char *const *keys);
int read_array(struct ctx *c, json_object *v, const char *path, size_t max, const char *empty,
               each_fn *fn, void *arg);
void line_col(const char *text, size_t off, unsigned int *line, unsigned int *col);
size_t skip_blank(const char *s, size_t i, size_t len);
int check_duplicate_keys(struct ctx *c, const char *s, size_t len);

/* ---- machine_pci.c ---- */

/* Where the devices of an array go: below @parent (SIM_NONE: a root bus). */
struct placement {
        bool child;             /* the element's "kind" says (parse_child) */
        enum sim_dev_kind kind; /* otherwise */
        size_t parent, core;
        int numa;
        size_t *ports, *port_count; /* where the new device's index goes, or NULL */
};

int get_bdf(struct ctx *c, json_object *v, const char *path, uint16_t *domain, uint8_t *bus,
            uint8_t *dev, uint8_t *fn);
int new_device(struct ctx *c, const char *path, size_t *idx);
int parse_device(struct ctx *c, json_object *o, const char *path, enum sim_dev_kind kind,
                 size_t parent, size_t core, int numa);
int parse_placed(struct ctx *c, json_object *o, const char *path, size_t i, void *arg);
int compute_buses(struct ctx *c);
int resolve_links(struct ctx *c);

/* ---- machine_pmu.c ---- */

int parse_core(struct ctx *c, json_object *o, const char *path, unsigned int sicl, int sicl_numa,
               int sicl_cpu);
int check_cores(struct ctx *c);
int parse_intel(struct ctx *c, json_object *o);
int parse_cpu_range(struct ctx *c, json_object *v, const char *path, unsigned int *first,
                    unsigned int *count);

/* ---- machine_amd.c ---- */

int parse_amd(struct ctx *c, json_object *o);
/* "root_complexes": DesignWare Root Ports (machine_pmu.c). */
int parse_dwc(struct ctx *c, json_object *v);

/* ---- machine_nvidia.c ---- */

int parse_nvidia(struct ctx *c, json_object *o);

/* ---- machine_workload.c ---- */

int parse_workload(struct ctx *c, json_object *o, const char *path, struct sim_workload *w);
int check_workloads(struct ctx *c);

#pragma GCC visibility pop

#endif /* PCIESCOPE_SIM_MACHINE_INTERNAL_H */
