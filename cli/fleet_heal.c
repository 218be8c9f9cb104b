// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fleet_heal.c - a machine description healed of its own faults, the base
 * of every host of `pciescope fleet` (fleet_heal.h says why).
 */
#include <json-c/json.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fleet_heal.h"
#include "pcie_link.h"

const char *fleet_jstr(json_object *o, const char *key)
{
        json_object *v;

        return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : NULL;
}

int fleet_jint(json_object *o, const char *key, int dflt)
{
        json_object *v;

        return json_object_object_get_ex(o, key, &v) ? json_object_get_int(v) : dflt;
}

#define HEAL_SHARE_MAX 0.70 /* a direction asking more of a link's effective capacity ... */
#define HEAL_SHARE     0.60 /* ... is scaled down to this share of it */
#define HEAL_CORR_RATE 0.05 /* correctable AER errors/s a device may keep: half the alert's */

/* Both ends train at the best they support: speed and width stated on a
 * link are what a downtrained link is made of; a flap is a fault. */
static void heal_link(json_object *o, struct fleet_heal_counts *H, bool below)
{
        json_object *link;

        if (!json_object_object_get_ex(o, "link", &link))
                return;
        if (json_object_object_get_ex(link, "speed", NULL) ||
            json_object_object_get_ex(link, "width", NULL)) {
                json_object_object_del(link, "speed");
                json_object_object_del(link, "width");
                H->links++;
        }
        if (below && json_object_object_get_ex(link, "flap_period_s", NULL)) {
                json_object_object_del(link, "flap_period_s");
                json_object_object_del(link, "flap_width");
                H->flaps++;
        }
}

/* Uncorrectable counters stand still; correctable ones rise at most
 * HEAL_CORR_RATE a second per device (the class's counters together). */
static void heal_aer(json_object *dev, struct fleet_heal_counts *H)
{
        static const char *const classes[] = {"correctable", "nonfatal", "fatal"};
        json_object *aer, *cls, *ps;

        if (!json_object_object_get_ex(dev, "aer", &aer) ||
            !json_object_is_type(aer, json_type_object))
                return;
        for (size_t c = 0; c < 3; c++) {
                double sum = 0, f;

                if (!json_object_object_get_ex(aer, classes[c], &cls) ||
                    !json_object_is_type(cls, json_type_object))
                        continue;
                json_object_object_foreach(cls, name, ctr)
                {
                        (void)name;
                        if (json_object_is_type(ctr, json_type_object) &&
                            json_object_object_get_ex(ctr, "per_second", &ps))
                                sum += json_object_get_double(ps);
                }
                f = c == 0 ? (sum > HEAL_CORR_RATE ? HEAL_CORR_RATE / sum : 1) : 0;
                if (sum <= 0 || f == 1)
                        continue;
                json_object_object_foreach(cls, name2, ctr2)
                {
                        (void)name2;
                        if (json_object_is_type(ctr2, json_type_object) &&
                            json_object_object_get_ex(ctr2, "per_second", &ps))
                                json_object_object_add(
                                    ctr2, "per_second",
                                    json_object_new_double(json_object_get_double(ps) * f));
                }
                H->aer++;
        }
}

/* GT/s text ("16GT/s", "16 GT/s", "16.0GT/s") to its speed code; 0 if none. */
static unsigned speed_code_of(const char *s)
{
        double gts = s ? strtod(s, NULL) : 0;

        for (unsigned c = 1; c <= PCIE_SPEED_CODE_MAX; c++)
                if (pcie_speed_gts(c) > 0 && fabs(pcie_speed_gts(c) - gts) < 0.01)
                        return c;
        return 0;
}

/* The highest phase scale of @dev's workload (1 without phases). */
static double peak_scale(json_object *w)
{
        json_object *ph, *sc;
        double peak = 0;

        if (!json_object_object_get_ex(w, "phases", &ph) ||
            !json_object_is_type(ph, json_type_array) || !json_object_array_length(ph))
                return 1;
        for (size_t i = 0; i < json_object_array_length(ph); i++)
                if (json_object_object_get_ex(json_object_array_get_idx(ph, i), "scale", &sc) &&
                    json_object_get_double(sc) > peak)
                        peak = json_object_get_double(sc);
        return peak;
}

/* Flows by direction on the link: towards the host (rx at the Root Port)
 * the written data and the read completions the device returns; towards
 * the device (tx) the completions of its reads and the CPU's writes. */
static const char *const flows_rx[] = {"dma_write", "mmio_read"};
static const char *const flows_tx[] = {"dma_read", "mmio_write"};

/* Every endpoint below @o (itself, or through a switch): @f times its
 * flows of direction @dir when @f > 0; returns their peak demand. */
static double endpoints_demand(json_object *o, int dir, double f)
{
        const char *const *flows = dir ? flows_tx : flows_rx;
        json_object *kind, *arr, *w, *fl, *bps;
        double sum = 0;

        if (json_object_object_get_ex(o, "kind", &kind) &&
            !strcmp(json_object_get_string(kind), "switch")) {
                if (json_object_object_get_ex(o, "downstream", &arr) &&
                    json_object_is_type(arr, json_type_array))
                        for (size_t i = 0; i < json_object_array_length(arr); i++) {
                                json_object *ch;

                                if (!json_object_object_get_ex(json_object_array_get_idx(arr, i),
                                                               "children", &ch) ||
                                    !json_object_is_type(ch, json_type_array))
                                        continue;
                                for (size_t j = 0; j < json_object_array_length(ch); j++)
                                        sum += endpoints_demand(json_object_array_get_idx(ch, j),
                                                                dir, f);
                        }
                return sum;
        }
        if (!json_object_object_get_ex(o, "workload", &w))
                return 0;
        for (size_t i = 0; i < 2; i++)
                if (json_object_object_get_ex(w, flows[i], &fl) &&
                    json_object_object_get_ex(fl, "bytes_per_second", &bps)) {
                        double v = json_object_get_double(bps);

                        if (f > 0) {
                                v *= f;
                                json_object_object_add(fl, "bytes_per_second",
                                                       json_object_new_double(v));
                        }
                        sum += v * peak_scale(w);
                }
        return sum;
}

/* The link below port @port (effective MPS @mps) and everything under it:
 * both ends of every link at one MPS, the kernel's default policy (the
 * port's, or the lowest MPSS below it), links trained at their best,
 * no flaps, quiet AER, and traffic within HEAL_SHARE_MAX of every link. */
static void heal_port(json_object *port, int mps, struct fleet_heal_counts *H)
{
        /* (a description of the wrong shape is left to the simulator,
         * which refuses it with the key and the place) */
        json_object *ch, *plink, *dlink;
        int m = mps;
        unsigned code, width;

        heal_aer(port, H);
        if (!json_object_object_get_ex(port, "children", &ch) ||
            !json_object_is_type(ch, json_type_array) || !json_object_array_length(ch))
                return;
        heal_link(port, H, false);
        for (size_t i = 0; i < json_object_array_length(ch); i++) {
                int mpss = fleet_jint(json_object_array_get_idx(ch, i), "mpss", 256);

                if (mpss < m)
                        m = mpss;
        }
        if (m != mps) {
                json_object_object_add(port, "mps", json_object_new_int(m));
                H->mps++;
        }
        for (size_t i = 0; i < json_object_array_length(ch); i++) {
                json_object *dev = json_object_array_get_idx(ch, i), *kind, *ds;

                if (!json_object_is_type(dev, json_type_object))
                        continue;
                heal_link(dev, H, true);
                heal_aer(dev, H);
                if (fleet_jint(dev, "mps", m) != m) {
                        json_object_object_add(dev, "mps", json_object_new_int(m));
                        H->mps++;
                }
                if (json_object_object_get_ex(dev, "kind", &kind) &&
                    !strcmp(json_object_get_string(kind), "switch") &&
                    json_object_object_get_ex(dev, "downstream", &ds) &&
                    json_object_is_type(ds, json_type_array))
                        for (size_t j = 0; j < json_object_array_length(ds); j++) {
                                json_object *dsp = json_object_array_get_idx(ds, j);
                                int dmpss = fleet_jint(dsp, "mpss", 256);

                                heal_port(dsp, fleet_jint(dsp, "mps", dmpss < m ? dmpss : m), H);
                        }
        }
        /* the link's capacity: the best both ends support, at MPS m */
        if (!json_object_object_get_ex(port, "link", &plink))
                return;
        dlink = NULL;
        json_object_object_get_ex(json_object_array_get_idx(ch, 0), "link", &dlink);
        code = speed_code_of(fleet_jstr(plink, "max_speed"));
        width = (unsigned)fleet_jint(plink, "max_width", 0);
        if (dlink) {
                unsigned dc = speed_code_of(fleet_jstr(dlink, "max_speed"));
                unsigned dw = (unsigned)fleet_jint(dlink, "max_width", 0);

                if (dc && dc < code)
                        code = dc;
                if (dw && dw < width)
                        width = dw;
        }
        for (int dir = 0; dir < 2; dir++) {
                double cap = (double)pcie_link_capacity_bytes(code, width) * m / (m + 24.0),
                       want = 0;

                for (size_t i = 0; i < json_object_array_length(ch); i++)
                        want += endpoints_demand(json_object_array_get_idx(ch, i), dir, 0);
                if (cap > 0 && want > HEAL_SHARE_MAX * cap) {
                        for (size_t i = 0; i < json_object_array_length(ch); i++)
                                endpoints_demand(json_object_array_get_idx(ch, i), dir,
                                                 HEAL_SHARE * cap / want);
                        H->traffic++;
                }
        }
}

/* Every Root Port of the description, wherever its vendor's section keeps
 * them (as cmd_fleet.c's find_candidates looks for them), and every RCiEP's AER. */
void fleet_heal_description(json_object *o, struct fleet_heal_counts *H)
{
        if (json_object_is_type(o, json_type_array)) {
                for (size_t i = 0; i < json_object_array_length(o); i++)
                        fleet_heal_description(json_object_array_get_idx(o, i), H);
                return;
        }
        if (!json_object_is_type(o, json_type_object))
                return;
        json_object_object_foreach(o, key, val)
        {
                if (!strcmp(key, "root_ports") && json_object_is_type(val, json_type_array)) {
                        for (size_t i = 0; i < json_object_array_length(val); i++) {
                                json_object *rp = json_object_array_get_idx(val, i);

                                heal_port(rp, fleet_jint(rp, "mps", fleet_jint(rp, "mpss", 256)),
                                          H);
                        }
                } else if (!strcmp(key, "rcieps") && json_object_is_type(val, json_type_array)) {
                        for (size_t i = 0; i < json_object_array_length(val); i++)
                                heal_aer(json_object_array_get_idx(val, i), H);
                } else {
                        fleet_heal_description(val, H);
                }
        }
}
