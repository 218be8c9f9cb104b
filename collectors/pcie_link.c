// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pcie_link.c - link speed encodings, raw capacity and downtraining.
 */
#include "pcie_link.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Indexed by speed code. Numerator/denominator of the line encoding. */
static const struct {
        double gts;
        unsigned int enc_num, enc_den;
} speed_table[PCIE_SPEED_CODE_MAX + 1] = {
    [1] = {2.5, 8, 10},     [2] = {5.0, 8, 10},     [3] = {8.0, 128, 130},
    [4] = {16.0, 128, 130}, [5] = {32.0, 128, 130}, [6] = {64.0, 1, 1},
};

double pcie_speed_gts(unsigned int code)
{
        return code <= PCIE_SPEED_CODE_MAX ? speed_table[code].gts : 0.0;
}

int pcie_speed_code_parse(const char *text, uint8_t *code)
{
        char *end;
        double gts;

        if (!strncmp(text, "Unknown", 7) && (!text[7] || text[7] == '\n')) {
                *code = 0;
                return 0;
        }
        if (!isdigit((unsigned char)text[0]))
                return -EINVAL;
        gts = strtod(text, &end);
        if (strncmp(end, " GT/s", 5))
                return -EINVAL;
        end += 5;
        if (!strncmp(end, " PCIe", 5))
                end += 5;
        if (*end && strcmp(end, "\n"))
                return -EINVAL;
        for (unsigned int c = 1; c <= PCIE_SPEED_CODE_MAX; c++) {
                if (speed_table[c].gts != 0.0 && speed_table[c].gts == gts) {
                        *code = (uint8_t)c;
                        return 0;
                }
        }
        return -EINVAL;
}

uint64_t pcie_link_capacity_bytes(unsigned int speed_code, unsigned int width)
{
        uint64_t transfers_per_lane;

        if (speed_code > PCIE_SPEED_CODE_MAX || speed_table[speed_code].gts == 0.0 || !width)
                return 0;
        /* GT/s in units of 0.5 GT/s keeps everything in integers. */
        transfers_per_lane = (uint64_t)(speed_table[speed_code].gts * 2) * 500000000ull;
        return transfers_per_lane * width * speed_table[speed_code].enc_num /
               speed_table[speed_code].enc_den / 8;
}

uint8_t pcie_link_speed_vector(const struct pcie_link_regs *regs)
{
        uint8_t vector = 0;

        if (regs->speed_vector)
                return regs->speed_vector;
        for (unsigned int code = 1; code <= regs->max_speed_code && code <= PCIE_SPEED_CODE_MAX;
             code++)
                vector |= (uint8_t)(1u << code);
        return vector;
}

unsigned int pcie_speed_vector_max(uint8_t vector)
{
        for (unsigned int code = PCIE_SPEED_CODE_MAX; code >= 1; code--)
                if (vector & (1u << code))
                        return code;
        return 0;
}

bool pcie_link_is_up(const struct pcie_link_regs *regs)
{
        return regs->cur_width > 0 && pcie_speed_gts(regs->cur_speed_code) > 0.0;
}

struct pcie_link_common pcie_link_common_max(const struct pcie_link_regs *self,
                                             const struct pcie_link_regs *partner)
{
        uint8_t vector = pcie_link_speed_vector(self);
        struct pcie_link_common common;

        common.width = self->max_width;
        if (partner) {
                /* Only speeds both ends list can be trained; for widths the
                 * narrower end decides. */
                uint8_t both = vector & pcie_link_speed_vector(partner);

                if (both)
                        vector = both;
                if (partner->max_width && partner->max_width < common.width)
                        common.width = partner->max_width;
        }
        common.speed_code = pcie_speed_vector_max(vector);
        return common;
}

bool pcie_link_is_downtrained(const struct pcie_link_regs *self,
                              const struct pcie_link_regs *partner)
{
        struct pcie_link_common common;

        if (!pcie_link_is_up(self))
                return false;
        common = pcie_link_common_max(self, partner);
        return self->cur_speed_code < common.speed_code || self->cur_width < common.width;
}

double pcie_payload_efficiency(unsigned int payload_bytes)
{
        if (!payload_bytes)
                return 0.0;
        return (double)payload_bytes / (double)(payload_bytes + PCIE_TLP_OVERHEAD_BYTES);
}

void pcie_util_init(struct pcie_util *u, uint64_t capacity, unsigned int mps)
{
        memset(u, 0, sizeof(*u));
        u->capacity = (double)capacity;
        u->mps = mps;
}

double pcie_payload_bytes(enum pcie_counts what, double counted, bool data,
                          unsigned int header_bytes, double tlps, unsigned int mps)
{
        double most;

        if (!data || !(counted > 0))
                return 0;
        if (what == PCIE_COUNTS_PAYLOAD)
                return counted;
        if (what != PCIE_COUNTS_HEADER_PAYLOAD)
                return NAN;
        /* Every TLP carries at most MPS bytes: this much at the most. */
        most = mps ? counted * mps / (double)(mps + header_bytes) : counted;
        if (tlps >= 0) {
                double p = counted - tlps * header_bytes;

                /* Counts of another window (a rotating plan) may disagree
                 * a little: keep the payload within what is possible. */
                return p < 0 ? 0 : p > most ? most : p;
        }
        return most;
}

void pcie_util_add(struct pcie_util *u, enum pcie_counts what, double counted, bool data,
                   unsigned int header_bytes, double tlps)
{
        double payload = pcie_payload_bytes(what, counted, data, header_bytes, tlps, u->mps);

        if (!(counted > 0))
                return;
        u->counted += counted;
        if (isnan(payload))
                u->payload_unknown = true;
        else if (u->mps)
                u->wire += payload * (u->mps + header_bytes + PCIE_TLP_FRAMING_BYTES) / u->mps;
        else
                u->wire += payload;
}

int pcie_util_ratios(const struct pcie_util *u, double *raw, double *effective)
{
        if (!(u->capacity > 0)) {
                *raw = *effective = NAN;
                return -EINVAL;
        }
        *raw = u->counted / u->capacity;
        *effective = u->payload_unknown ? NAN : u->wire / u->capacity;
        return 0;
}

int pcie_util_emit(const struct pcie_util *u, struct pcie_sample *s, struct sample_emitter *em)
{
        double raw, effective;
        int err = pcie_util_ratios(u, &raw, &effective);

        if (err)
                return err;
        sample_label(s, "capacity", "raw");
        s->gauge = raw;
        err = sample_emit(em, s);
        if (err || isnan(effective))
                return err; /* headers only: the payload is not known */
        s->labels[s->label_count - 1].value = "effective";
        s->gauge = effective;
        return sample_emit(em, s);
}

bool pcie_link_tracker_update(struct pcie_link_tracker *t, const struct pcie_link_regs *regs)
{
        bool changed =
            t->seen && (t->speed_code != regs->cur_speed_code || t->width != regs->cur_width);

        if (changed)
                t->changes++;
        t->seen = true;
        t->speed_code = regs->cur_speed_code;
        t->width = regs->cur_width;
        return changed;
}
