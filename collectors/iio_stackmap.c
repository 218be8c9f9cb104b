// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * iio_stackmap.c - IIO stack to root bus mapping from uncore configuration
 * registers. See the header for the registers and where they come from.
 */
#include "iio_stackmap.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* CPU bus id -> PMU box, -1 where the bus has no IIO PMU. The tables are
 * intel/pcm src/pcm-iio-topology.cpp: spr_xcc_, spr_mcc_ and
 * emr_sad_to_pmu_id_mapping, and srf_sad_to_pmu_id_mapping for Xeon 6
 * (PCIe stacks PE0..PE8 and accelerator stacks HC0..HC3). For Xeon 6 PCM
 * also lists boxes 13 and 10 for CPU buses 29 and 26 when the Flex UPI
 * stacks run as PCIe, under the same keys: its map keeps the first entry
 * (11 and 12), and so does this table. */
static const signed char layout_boxes[][IIO_CPU_BUSES] = {
    [IIO_LAYOUT_UNKNOWN] = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                            -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1},
    /* DMI 1; PCIe 2, 4, 6, 7, 9; accelerators (DINO) 0, 3, 5, 8. */
    [IIO_LAYOUT_SPR_XCC] = {1,  2,  4,  6,  7,  9,  -1, -1, 0,  3,  5,  8,  -1, -1, -1, -1,
                            -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1},
    /* PCIe 0, 1, 2, 4, 5; DMI 10; accelerators 3. */
    [IIO_LAYOUT_SPR_MCC] = {0,  1,  2,  10, 4,  5,  -1, -1, 3,  -1, -1, -1, -1, -1, -1, -1,
                            -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1},
    /* DMI 7; PCIe 1, 2, 3, 8, 6; accelerators 0, 4, 5, 9. */
    [IIO_LAYOUT_EMR] = {7,  1,  2,  3,  8,  6,  -1, -1, 0,  4,  5,  9,  -1, -1, -1, -1,
                        -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1},
    /* PE6 0, PE2 1, PE0 2, PE1 3, PE3 4, PE7 5, HC0 8, HC1 12, HC3 16,
     * HC2 20, PE5 26, PE8 28, PE4 29; 30 and 31 are UBOX buses. */
    [IIO_LAYOUT_XEON6] = {0, 2,  3,  4,  5,  7,  -1, -1, 1,  -1, -1, -1, 6, -1, -1, -1,
                          9, -1, -1, -1, 14, -1, -1, -1, -1, -1, 12, -1, 8, 11, -1, -1},
};

const char *iio_layout_name(enum iio_layout l)
{
        switch (l) {
        case IIO_LAYOUT_SPR_XCC:
                return "spr-xcc";
        case IIO_LAYOUT_SPR_MCC:
                return "spr-mcc";
        case IIO_LAYOUT_EMR:
                return "emr";
        case IIO_LAYOUT_XEON6:
                return "xeon6";
        case IIO_LAYOUT_UNKNOWN:
                break;
        }
        return "unknown";
}

bool iio_layout_needs_chop(unsigned int family, unsigned int model)
{
        return family == 6 && model == 0x8f;
}

enum iio_layout iio_layout_of(unsigned int family, unsigned int model, enum iio_chop chop)
{
        if (family != 6)
                return IIO_LAYOUT_UNKNOWN;
        switch (model) {
        case 0x8f: /* Sapphire Rapids */
                return chop == IIO_CHOP_XCC   ? IIO_LAYOUT_SPR_XCC
                       : chop == IIO_CHOP_MCC ? IIO_LAYOUT_SPR_MCC
                                              : IIO_LAYOUT_UNKNOWN;
        case 0xcf: /* Emerald Rapids */
                return IIO_LAYOUT_EMR;
        case 0xad: /* Granite Rapids */
        case 0xaf: /* Sierra Forest */
                return IIO_LAYOUT_XEON6;
        default:
                return IIO_LAYOUT_UNKNOWN;
        }
}

unsigned int iio_layout_port_device0(enum iio_layout l)
{
        return l == IIO_LAYOUT_XEON6 ? 2 : 1;
}

int iio_layout_box(enum iio_layout l, unsigned int cpubus)
{
        if ((unsigned int)l >= sizeof(layout_boxes) / sizeof(layout_boxes[0]) ||
            cpubus >= IIO_CPU_BUSES)
                return -1;
        return layout_boxes[l][cpubus];
}

int iio_layout_cpubus(enum iio_layout l, unsigned int box)
{
        for (unsigned int c = 0; c < IIO_CPU_BUSES; c++)
                if (iio_layout_box(l, c) >= 0 && (unsigned int)iio_layout_box(l, c) == box)
                        return (int)c;
        return -1;
}

static uint32_t get32(const uint8_t *cfg, size_t off)
{
        return (uint32_t)cfg[off] | (uint32_t)cfg[off + 1] << 8 | (uint32_t)cfg[off + 2] << 16 |
               (uint32_t)cfg[off + 3] << 24;
}

int iio_chop_decode(const uint8_t *cfg, size_t len, int *chop)
{
        uint32_t capid4;

        *chop = IIO_CHOP_UNKNOWN;
        if (!cfg || len < IIO_PCU_CAPID4 + 4)
                return -ENODATA;
        capid4 = get32(cfg, IIO_PCU_CAPID4);
        if (capid4 == UINT32_MAX)
                return -EBADMSG;
        *chop = (int)(capid4 >> 6 & 3);
        return *chop == IIO_CHOP_XCC || *chop == IIO_CHOP_MCC ? 0 : -ERANGE;
}

int iio_cpubus_decode(const uint8_t *cfg, size_t len, struct iio_cpubus *out)
{
        memset(out, 0, sizeof(*out));
        if (!cfg || len < IIO_MSM_CFG_BYTES)
                return -ENODATA;
        out->valid = get32(cfg, IIO_MSM_CPUBUSNO_VALID);
        if (out->valid == UINT32_MAX)
                return -EBADMSG;
        for (unsigned int i = 0; i < 8; i++) {
                size_t off = (i < 4 ? IIO_MSM_CPUBUSNO0 : IIO_MSM_CPUBUSNO4) + (i % 4) * 4;
                uint32_t v = get32(cfg, off);

                if (v == UINT32_MAX)
                        return -EBADMSG;
                for (unsigned int b = 0; b < 4; b++)
                        out->bus[i * 4 + b] = (uint8_t)(v >> (b * 8));
        }
        return out->valid ? 0 : -ENOENT;
}

int iio_cpubus_first(const struct iio_cpubus *cb)
{
        for (unsigned int i = 0; i < IIO_CPU_BUSES; i++)
                if (cb->valid >> i & 1)
                        return cb->bus[i];
        return -1;
}

int iio_package_decode(const uint8_t *cfg, size_t len, unsigned int *package)
{
        uint32_t v;

        *package = 0;
        if (!cfg || len < IIO_SAD_CONTROL_CFG + 4)
                return -ENODATA;
        v = get32(cfg, IIO_SAD_CONTROL_CFG);
        if (v == UINT32_MAX)
                return -EBADMSG;
        *package = v & 0xf;
        return 0;
}

static void say(char *why, size_t whylen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void say(char *why, size_t whylen, const char *fmt, ...)
{
        va_list ap;

        if (!why || !whylen)
                return;
        va_start(ap, fmt);
        vsnprintf(why, whylen, fmt, ap);
        va_end(ap);
}

int iio_stackmap_add(struct iio_stackmap *map, unsigned int package, uint32_t domain,
                     const struct iio_cpubus *cb, char *why, size_t whylen)
{
        size_t first = map->count, not_iio = map->not_iio, sockets = 0;

        if (why && whylen)
                why[0] = '\0';
        if (map->layout == IIO_LAYOUT_UNKNOWN) {
                say(why, whylen, "no CPU bus table for this CPU");
                return -EINVAL;
        }
        for (size_t i = 0; i < map->count; i++) {
                bool seen = false;

                if (map->stacks[i].package == package) {
                        say(why, whylen, "package %u has two MSM functions (CPU bus registers)",
                            package);
                        return -EEXIST;
                }
                for (size_t k = 0; k < i && !seen; k++)
                        seen = map->stacks[k].package == map->stacks[i].package;
                sockets += !seen;
        }
        if (sockets >= IIO_STACKMAP_MAX_SOCKETS) {
                say(why, whylen, "more than %u packages", IIO_STACKMAP_MAX_SOCKETS);
                return -ENOSPC;
        }
        for (unsigned int c = 0; c < IIO_CPU_BUSES; c++) {
                int box = iio_layout_box(map->layout, c);
                struct iio_stack_root *r;

                if (!(cb->valid >> c & 1))
                        continue;
                if (box < 0) {
                        map->not_iio++;
                        continue;
                }
                for (size_t i = 0; i < map->count; i++) {
                        const struct iio_stack_root *o = &map->stacks[i];

                        if (o->domain != domain || o->bus != cb->bus[c])
                                continue;
                        if (o->package == package)
                                say(why, whylen,
                                    "CPU buses %u and %u of package %u both say root bus "
                                    "0x%02x",
                                    o->cpubus, c, package, cb->bus[c]);
                        else
                                say(why, whylen,
                                    "root bus 0x%02x of CPU bus %u is also package %u's CPU bus "
                                    "%u",
                                    cb->bus[c], c, o->package, o->cpubus);
                        map->count = first;
                        map->not_iio = not_iio;
                        return -EBADMSG;
                }
                r = &map->stacks[map->count++];
                r->package = package;
                r->box = (unsigned int)box;
                r->cpubus = c;
                r->domain = domain;
                r->bus = cb->bus[c];
        }
        return 0;
}

const struct iio_stack_root *iio_stackmap_find(const struct iio_stackmap *map, unsigned int package,
                                               unsigned int box)
{
        for (size_t i = 0; i < map->count; i++)
                if (map->stacks[i].package == package && map->stacks[i].box == box)
                        return &map->stacks[i];
        return NULL;
}
