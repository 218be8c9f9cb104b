// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * machine_desc.c - a simulator machine description from snapshot facts.
 * See machine_desc.h and docs/simulator.md (the schema).
 */
#include "machine_desc.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "iio_stackmap.h"
#include "pcie_cfg.h"
#include "pcie_link.h"
#include "pcie_topo.h"
#include "uncore_discovery.h"

#define NOT_MAPPED ((size_t)-1)

struct gen {
        const struct md_facts *f;
        struct pcie_topo *topo;
        size_t *fidx;   /* topo index -> facts index */
        bool *emitted;  /* topo index: written into the description */
        bool *assigned; /* topo index: a Root Port taken by a core or stack */
        struct md_notes *notes;
        struct iio_stackmap *regs; /* the CPU bus registers' mapping, NULL: none */
        int chop;                  /* from CAPID4, IIO_CHOP_UNKNOWN if not read */
};

static void note(struct md_notes *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct md_notes *n, const char *fmt, ...)
{
        va_list ap;

        if (n->count >= sizeof(n->text) / sizeof(n->text[0])) {
                n->dropped++;
                return;
        }
        va_start(ap, fmt);
        vsnprintf(n->text[n->count++], MD_NOTE_LEN, fmt, ap);
        va_end(ap);
}

static json_object *hex(unsigned long long v, int digits)
{
        char buf[32];

        snprintf(buf, sizeof(buf), "0x%0*llx", digits, v);
        return json_object_new_string(buf);
}

static void add(json_object *o, const char *key, json_object *v)
{
        json_object_object_add(o, key, v);
}

/* The schema's speed names, by LNKCAP/LNKSTA code; NULL if it has none. */
static const char *speed_name(unsigned int code)
{
        static const char *const names[] = {NULL,     "2.5GT/s", "5GT/s", "8GT/s",
                                            "16GT/s", "32GT/s",  "64GT/s"};

        return code < sizeof(names) / sizeof(names[0]) ? names[code] : NULL;
}

static bool width_ok(unsigned int w)
{
        return w == 1 || w == 2 || w == 4 || w == 8 || w == 12 || w == 16 || w == 32;
}

static const struct pcie_function *fn_at(const struct gen *g, size_t i)
{
        return pcie_topo_get(g->topo, i);
}

static const struct md_function *facts_of(const struct gen *g, size_t i)
{
        return &g->f->functions[g->fidx[i]];
}

/* ---- the kernel ---- */

static const char *kernel_of_release(const char *rel)
{
        unsigned int major = 0, minor = 0;

        if (!rel || sscanf(rel, "%u.%u", &major, &minor) != 2)
                return NULL;
        if (major > 6 || (major == 6 && minor >= 15))
                return "6.15";
        if (major == 6 && minor >= 12)
                return "6.12";
        if (major == 6 && minor >= 9)
                return "6.9";
        if (major == 6 && minor >= 2)
                return "6.2";
        return "5.17";
}

const char *machine_desc_kernel(const struct md_facts *f, char *why, size_t whylen)
{
        bool bw_out = false;
        const char *k;

        for (size_t i = 0; i < f->box_count; i++)
                bw_out |= f->boxes[i].bw_out;
        if (f->hisi_count) {
                const struct md_hisi_pmu *p = &f->hisi[0];

                if (p->has_range) {
                        k = f->box_count && !bw_out ? "6.15" : "6.12";
                        snprintf(why, whylen, "hisi_pcie PMUs have bdf_min/bdf_max");
                } else if (p->event_count >= 18) {
                        k = "6.9";
                        snprintf(why, whylen, "hisi_pcie PMUs list %u events, no bdf_min",
                                 p->event_count);
                } else if (p->has_len_mode && !p->old_mrd_codes) {
                        k = "6.2";
                        snprintf(why, whylen, "hisi_pcie PMUs have format/len_mode, 10 events");
                } else {
                        k = "5.17";
                        snprintf(why, whylen, "hisi_pcie PMUs without format/len_mode");
                }
                return k;
        }
        if (f->box_count) {
                snprintf(why, whylen, "uncore_iio_free_running %s bw_out_port events",
                         bw_out ? "has" : "has no");
                return bw_out ? "6.12" : "6.15";
        }
        k = kernel_of_release(f->osrelease);
        if (k) {
                snprintf(why, whylen, "kernel release %s", f->osrelease);
                return k;
        }
        snprintf(why, whylen, "no PMU and no kernel release: the schema's default");
        return "6.12";
}

/* ---- devices ---- */

static json_object *aer_json(const struct md_function *mf, const struct pcie_func_info *info)
{
        static const char *const keys[AER_CLASS_COUNT] = {
            [AER_CORRECTABLE] = "correctable", [AER_FATAL] = "fatal", [AER_NONFATAL] = "nonfatal"};
        json_object *o;

        if (!info->aer_cap)
                return json_object_new_boolean(false);
        if (!mf->aer_known)
                return json_object_new_boolean(true);
        o = json_object_new_object();
        for (int c = 0; c < AER_CLASS_COUNT; c++) {
                const struct aer_list *l = &mf->aer.classes[c];
                json_object *cls = NULL;

                if (!mf->aer.has_class[c])
                        continue;
                for (size_t i = 0; i < l->count && i < 32; i++) {
                        if (!l->counters[i].count)
                                continue;
                        if (!cls)
                                cls = json_object_new_object();
                        add(cls, l->counters[i].name,
                            json_object_new_int64((int64_t)l->counters[i].count));
                }
                if (cls)
                        add(o, keys[c], cls);
        }
        if (!json_object_object_length(o)) {
                json_object_put(o);
                return json_object_new_boolean(true);
        }
        return o;
}

/* The keys every device has. */
static json_object *common_json(const struct gen *g, size_t i)
{
        const struct pcie_function *fn = fn_at(g, i);
        const struct md_function *mf = facts_of(g, i);
        const struct pcie_func_info *info = &fn->info;
        json_object *o = json_object_new_object();

        add(o, "bdf", json_object_new_string(fn->bdf));
        add(o, "vendor", hex(info->vendor_id, 4));
        add(o, "device", hex(info->device_id, 4));
        if (!info->is_bridge && mf->cfg_len >= 0x30) {
                add(o, "subsystem_vendor", hex(mf->cfg[0x2c] | mf->cfg[0x2d] << 8, 4));
                add(o, "subsystem_device", hex(mf->cfg[0x2e] | mf->cfg[0x2f] << 8, 4));
        }
        add(o, "class", hex(info->class_code, 6));
        add(o, "revision", hex(mf->cfg[8], 2));
        add(o, "mpss", json_object_new_int((int)info->mpss_bytes));
        add(o, "mps", json_object_new_int((int)info->mps_bytes));
        add(o, "mrrs", json_object_new_int((int)info->mrrs_bytes));
        add(o, "numa_node",
            json_object_new_int(mf->numa_node >= -1 && mf->numa_node <= 1023 ? mf->numa_node : -1));
        add(o, "aer", aer_json(mf, info));
        return o;
}

/*
 * Whether function @i can be described at all: a PCIe capability with the
 * values the schema takes. A reason goes into the notes otherwise.
 */
static bool describable(struct gen *g, size_t i)
{
        const struct pcie_function *fn = fn_at(g, i);
        const struct pcie_func_info *info = &fn->info;
        const struct pcie_link_regs *l = &info->link;

        if (fn->cfg_len < 64) {
                note(g->notes, "%s: configuration space unreadable: left out", fn->bdf);
                return false;
        }
        if (!info->has_pcie) {
                note(g->notes,
                     "%s [%04x:%04x]: no PCI Express capability (conventional PCI%s): the "
                     "schema has no such device, left out",
                     fn->bdf, info->vendor_id, info->device_id,
                     fn->cfg_len < 256 ? "?, or config space truncated: not root" : "");
                return false;
        }
        if (info->mps_bytes > info->mpss_bytes) {
                note(g->notes, "%s: MPS %u above MPSS %u: the schema refuses it, left out", fn->bdf,
                     info->mps_bytes, info->mpss_bytes);
                return false;
        }
        if (info->has_link && (!speed_name(l->max_speed_code) || !width_ok(l->max_width))) {
                note(g->notes, "%s: link capability code %u x%u not in the schema: left out",
                     fn->bdf, l->max_speed_code, l->max_width);
                return false;
        }
        if (info->pcie_cap_version != 2)
                note(g->notes, "%s: PCIe capability version %u, simulated as 2", fn->bdf,
                     info->pcie_cap_version);
        if (fn->cfg_len < 4096)
                note(g->notes,
                     "%s: configuration space truncated to %zu bytes: simulated with "
                     "4096",
                     fn->bdf, fn->cfg_len);
        return true;
}

/* The trained link of function @i, stated on the upstream-facing end, or
 * on a port that has nothing described below it. */
static json_object *link_json(const struct gen *g, size_t i, bool state_current)
{
        const struct pcie_function *fn = fn_at(g, i);
        const struct pcie_link_regs *l = &fn->info.link;
        json_object *o = json_object_new_object();

        add(o, "max_speed", json_object_new_string(speed_name(l->max_speed_code)));
        add(o, "max_width", json_object_new_int((int)l->max_width));
        if (state_current && fn->link_up && speed_name(l->cur_speed_code) &&
            width_ok(l->cur_width)) {
                add(o, "speed", json_object_new_string(speed_name(l->cur_speed_code)));
                add(o, "width", json_object_new_int((int)l->cur_width));
        }
        return o;
}

static json_object *port_json(struct gen *g, size_t i);

/* Children of port @i (an endpoint or a switch each); NULL when none. */
static json_object *children_json(struct gen *g, size_t port)
{
        json_object *arr = json_object_new_array();

        for (size_t j = 0; j < pcie_topo_count(g->topo); j++) {
                const struct pcie_function *c = fn_at(g, j);
                json_object *o;

                if (c->parent != port || !describable(g, j))
                        continue;
                if (c->addr.dev != 0) {
                        note(g->notes, "%s: below a port but not device 00 (ARI?): left out",
                             c->bdf);
                        continue;
                }
                if (c->info.port_type == PCIE_PORT_UPSTREAM && c->info.is_bridge) {
                        json_object *down = json_object_new_array();

                        o = common_json(g, j);
                        add(o, "kind", json_object_new_string("switch"));
                        add(o, "link", link_json(g, j, true));
                        add(o, "secondary", json_object_new_int(c->info.secondary_bus));
                        add(o, "subordinate", json_object_new_int(c->info.subordinate_bus));
                        for (size_t k = 0; k < pcie_topo_count(g->topo); k++) {
                                const struct pcie_function *d = fn_at(g, k);

                                if (d->parent != j || !describable(g, k))
                                        continue;
                                if (d->info.port_type != PCIE_PORT_DOWNSTREAM ||
                                    !d->info.is_bridge) {
                                        note(g->notes,
                                             "%s: a %s inside switch %s: the schema has only "
                                             "downstream ports there, left out",
                                             d->bdf, pcie_port_type_name(d->info.port_type),
                                             c->bdf);
                                        continue;
                                }
                                json_object_array_add(down, port_json(g, k));
                        }
                        add(o, "downstream", down);
                } else if ((c->info.port_type == PCIE_PORT_ENDPOINT ||
                            c->info.port_type == PCIE_PORT_LEGACY_ENDPOINT) &&
                           !c->info.is_bridge) {
                        if (c->info.port_type == PCIE_PORT_LEGACY_ENDPOINT)
                                note(g->notes, "%s: a legacy endpoint, simulated as an endpoint",
                                     c->bdf);
                        o = common_json(g, j);
                        add(o, "kind", json_object_new_string("endpoint"));
                        add(o, "link", link_json(g, j, true));
                } else {
                        note(g->notes, "%s: a %s below a port: the schema has none, left out",
                             c->bdf, pcie_port_type_name(c->info.port_type));
                        continue;
                }
                g->emitted[j] = true;
                json_object_array_add(arr, o);
        }
        if (!json_object_array_length(arr)) {
                json_object_put(arr);
                return NULL;
        }
        return arr;
}

/* A Root Port or switch downstream port with what is below it. */
static json_object *port_json(struct gen *g, size_t i)
{
        const struct pcie_function *fn = fn_at(g, i);
        json_object *o = common_json(g, i), *children = children_json(g, i);

        add(o, "link", link_json(g, i, !children));
        add(o, "hotplug", json_object_new_boolean(fn->info.hotplug_capable));
        add(o, "secondary", json_object_new_int(fn->info.secondary_bus));
        add(o, "subordinate", json_object_new_int(fn->info.subordinate_bus));
        if (children)
                add(o, "children", children);
        g->emitted[i] = true;
        return o;
}

static bool is_root_port(const struct gen *g, size_t i)
{
        const struct pcie_function *fn = fn_at(g, i);

        return fn->parent == PCIE_TOPO_NONE && fn->info.has_pcie && fn->info.is_bridge &&
               fn->info.port_type == PCIE_PORT_ROOT_PORT;
}

static bool is_rciep(const struct gen *g, size_t i)
{
        const struct pcie_function *fn = fn_at(g, i);

        return fn->parent == PCIE_TOPO_NONE && fn->info.has_pcie && !fn->info.is_bridge &&
               fn->info.port_type == PCIE_PORT_RC_ENDPOINT;
}

/* ---- hisi_pcie: SICLs and cores ---- */

static bool hisi_before(const struct md_hisi_pmu *x, const struct md_hisi_pmu *y)
{
        return x->sicl < y->sicl || (x->sicl == y->sicl && x->core < y->core);
}

static int cmp_hisi(const void *a, const void *b)
{
        const struct md_hisi_pmu *x = *(const struct md_hisi_pmu *const *)a;
        const struct md_hisi_pmu *y = *(const struct md_hisi_pmu *const *)b;

        return hisi_before(x, y) ? -1 : hisi_before(y, x);
}

/* The rank of @p among the PMUs on its bus (for kernels without bdf_min). */
static unsigned int rank_on_bus(const struct md_facts *f, const struct md_hisi_pmu *p)
{
        unsigned int r = 0;

        for (size_t i = 0; i < f->hisi_count; i++)
                r += f->hisi[i].has_bus && f->hisi[i].bus == p->bus && hisi_before(&f->hisi[i], p);
        return r;
}

/* Whether Root Port @i belongs to core @p. */
static bool in_core(const struct gen *g, const struct md_hisi_pmu *p, size_t i)
{
        const struct pcie_function *fn = fn_at(g, i);
        unsigned int bdf = fn->addr.bus << 8 | fn->addr.dev << 3 | fn->addr.func;
        unsigned int groups[32], n = 0, group = fn->addr.dev >> 3;

        if (p->has_range)
                return bdf >= p->bdf_min && bdf <= p->bdf_max;
        if (!p->has_bus || fn->addr.bus != p->bus)
                return false;
        /* No bdf_min/bdf_max: the k-th core of the bus takes the k-th group
         * of 8 device numbers in use there (the shipped machines' layout). */
        for (size_t j = 0; j < pcie_topo_count(g->topo); j++) {
                const struct pcie_function *o = fn_at(g, j);
                bool seen = false;

                if (!is_root_port(g, j) || o->addr.bus != p->bus)
                        continue;
                for (unsigned int k = 0; k < n; k++)
                        seen |= groups[k] == (unsigned int)(o->addr.dev >> 3);
                if (!seen && n < 32)
                        groups[n++] = o->addr.dev >> 3;
        }
        for (unsigned int a = 0; a < n; a++) /* sort the few groups */
                for (unsigned int b = a + 1; b < n; b++)
                        if (groups[b] < groups[a]) {
                                unsigned int t = groups[a];

                                groups[a] = groups[b];
                                groups[b] = t;
                        }
        {
                unsigned int r = rank_on_bus(g->f, p);

                return r < n && groups[r] == group;
        }
}

/* The PTT function of core @p: the one sysfs names, else the k-th 19e5:a12e
 * RCiEP for the k-th hisi_ptt device. */
static const char *ptt_of(struct gen *g, const struct md_hisi_pmu *p)
{
        const struct md_facts *f = g->f;
        size_t rank = 0;
        const struct md_ptt *t = NULL;

        for (size_t i = 0; i < f->ptt_count; i++) {
                if (f->ptt[i].sicl == p->sicl && f->ptt[i].core == p->core)
                        t = &f->ptt[i];
        }
        if (!t)
                return NULL;
        if (t->bdf[0]) {
                struct pci_addr a;

                if (!pci_addr_parse(t->bdf, &a)) {
                        size_t k = pcie_topo_find(g->topo, &a);

                        if (k != PCIE_TOPO_NONE && is_rciep(g, k))
                                return fn_at(g, k)->bdf;
                }
                note(g->notes, "hisi_ptt%u_%u: its function %s is no RCiEP here: no trace device",
                     p->sicl, p->core, t->bdf);
                return NULL;
        }
        for (size_t i = 0; i < f->ptt_count; i++)
                rank +=
                    !f->ptt[i].bdf[0] && (f->ptt[i].sicl < t->sicl ||
                                          (f->ptt[i].sicl == t->sicl && f->ptt[i].core < t->core));
        for (size_t i = 0; i < pcie_topo_count(g->topo); i++) {
                const struct pcie_function *fn = fn_at(g, i);

                if (!is_rciep(g, i) || fn->info.vendor_id != 0x19e5 || fn->info.device_id != 0xa12e)
                        continue;
                if (rank-- == 0) {
                        note(g->notes,
                             "hisi_ptt%u_%u: sysfs does not link it to a function; taken to be "
                             "%s (the 19e5:a12e functions in address order)",
                             p->sicl, p->core, fn->bdf);
                        return fn->bdf;
                }
        }
        note(g->notes, "hisi_ptt%u_%u: no 19e5:a12e function to name: no trace device", p->sicl,
             p->core);
        return NULL;
}

static json_object *sicls_json(struct gen *g)
{
        const struct md_facts *f = g->f;
        const struct md_hisi_pmu **order = calloc(f->hisi_count + 1, sizeof(*order));
        json_object *sicls = json_object_new_array(), *sicl = NULL, *cores = NULL;
        bool bus_only_noted = false;

        if (!order)
                return sicls;
        for (size_t i = 0; i < f->hisi_count; i++)
                order[i] = &f->hisi[i];
        qsort(order, f->hisi_count, sizeof(*order), cmp_hisi);
        for (size_t i = 0; i < f->hisi_count; i++) {
                const struct md_hisi_pmu *p = order[i];
                json_object *core, *rps = json_object_new_array();
                const char *ptt;
                int numa = -1;

                if (!p->has_range && !bus_only_noted) {
                        note(g->notes, "hisi_pcie PMUs without bdf_min/bdf_max (kernel before "
                                       "6.12): Root Ports given to cores by groups of 8 "
                                       "device numbers");
                        bus_only_noted = true;
                }
                for (size_t j = 0; j < pcie_topo_count(g->topo); j++) {
                        if (!is_root_port(g, j) || g->assigned[j] || !in_core(g, p, j))
                                continue;
                        g->assigned[j] = true;
                        if (!describable(g, j))
                                continue;
                        if (json_object_array_length(rps) == 16) {
                                note(g->notes, "%s: more than 16 Root Ports in core %u: left out",
                                     fn_at(g, j)->bdf, p->core);
                                continue;
                        }
                        if (numa < 0)
                                numa = facts_of(g, j)->numa_node;
                        json_object_array_add(rps, port_json(g, j));
                }
                if (!json_object_array_length(rps)) {
                        note(g->notes,
                             "hisi_pcie%u_core%u: no Root Port of its range was found: the "
                             "schema wants one, so the PMU is left out",
                             p->sicl, p->core);
                        json_object_put(rps);
                        continue;
                }
                if (!sicl || (i > 0 && order[i - 1]->sicl != p->sicl)) {
                        sicl = json_object_new_object();
                        cores = json_object_new_array();
                        add(sicl, "id", json_object_new_int((int)p->sicl));
                        add(sicl, "numa_node",
                            json_object_new_int(numa >= -1 && numa <= 1023 ? numa : -1));
                        add(sicl, "cores", cores);
                        json_object_array_add(sicls, sicl);
                }
                core = json_object_new_object();
                add(core, "id", json_object_new_int((int)p->core));
                if (p->cpu >= 0 && (unsigned int)p->cpu < f->cpus)
                        add(core, "cpu", json_object_new_int(p->cpu));
                if (p->has_identifier)
                        add(core, "identifier", hex(p->identifier, 2));
                ptt = ptt_of(g, p);
                if (ptt)
                        add(core, "ptt", json_object_new_string(ptt));
                add(core, "root_ports", rps);
                json_object_array_add(cores, core);
        }
        free(order);
        return sicls;
}

/* ---- Intel: sockets, discovery, IIO stacks ---- */

/* Intel DVSECs (cap 0x23, vendor 8086) before the PMON discovery one. */
static json_object *other_dvsecs_json(const struct md_function *mf)
{
        json_object *arr = json_object_new_array();
        unsigned int off = 0x100, steps = 0;

        while (mf->cfg_len >= 4096 && off >= 0x100 && off + 12 <= mf->cfg_len && steps++ < 64) {
                const uint8_t *p = mf->cfg + off;
                uint32_t h = p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
                unsigned int id = p[8] | p[9] << 8, vendor = p[4] | p[5] << 8;

                if (!h || h == 0xffffffffu)
                        break;
                if ((h & 0xffff) == 0x23 && vendor == 0x8086) {
                        if (id == 1)
                                break;
                        if (json_object_array_length(arr) < 4)
                                json_object_array_add(arr, json_object_new_int((int)id));
                }
                off = h >> 20;
        }
        return arr;
}

static bool same_group(const struct uncore_unit *a, const struct uncore_unit *b)
{
        return a->type == b->type && a->access == b->access && a->num_regs == b->num_regs &&
               a->width == b->width && a->ctl_offset == b->ctl_offset &&
               a->ctr_offset == b->ctr_offset && a->status_offset == b->status_offset &&
               b->box_id == a->box_id + 1;
}

static json_object *units_json(const struct uncore_table *t)
{
        json_object *arr = json_object_new_array();

        for (size_t i = 0; i < t->unit_count;) {
                const struct uncore_unit *u = &t->units[i];
                json_object *o = json_object_new_object(), *ctl = json_object_new_array();
                size_t n = 1;

                while (i + n < t->unit_count && same_group(&t->units[i + n - 1], &t->units[i + n]))
                        n++;
                add(o, "type", json_object_new_int(u->type));
                add(o, "access", json_object_new_string(uncore_access_name(u->access)));
                add(o, "first_box_id", json_object_new_int(u->box_id));
                for (size_t k = 0; k < n; k++)
                        json_object_array_add(ctl, hex(t->units[i + k].ctl, 1));
                add(o, "ctl", ctl);
                add(o, "num_regs", json_object_new_int(u->num_regs));
                add(o, "width", json_object_new_int(u->width));
                add(o, "ctl_offset", json_object_new_int(u->ctl_offset));
                add(o, "ctr_offset", json_object_new_int(u->ctr_offset));
                add(o, "status_offset", json_object_new_int(u->status_offset));
                json_object_array_add(arr, o);
                i += n;
        }
        return arr;
}

static bool box_on_socket(const struct md_iio_box *b, const struct md_socket *s)
{
        for (size_t i = 0; i < b->cpu_count; i++)
                if (b->cpus[i] >= s->first_cpu && b->cpus[i] <= s->last_cpu)
                        return true;
        return false;
}

/* Whether a function on NUMA node @numa belongs to socket @s. */
static bool on_socket(const struct md_socket *s, int socket_numa, int numa)
{
        if (s->numa_mask)
                return numa >= 0 && numa < 64 && (s->numa_mask >> numa & 1);
        return numa == socket_numa;
}

/* Root buses with Root Ports not taken by a hisi core, in address order. */
static size_t stack_buses(const struct gen *g, const struct md_socket *s, int numa, bool any_numa,
                          struct pci_addr *out, size_t max)
{
        size_t n = 0;

        for (size_t i = 0; i < pcie_topo_count(g->topo) && n < max; i++) {
                const struct pcie_function *fn = fn_at(g, i);
                bool seen = false;

                if (!is_root_port(g, i) || g->assigned[i] ||
                    (!any_numa && !on_socket(s, numa, facts_of(g, i)->numa_node)))
                        continue;
                for (size_t k = 0; k < n; k++)
                        seen |= out[k].domain == fn->addr.domain && out[k].bus == fn->addr.bus;
                if (!seen)
                        out[n++] =
                            (struct pci_addr){.domain = fn->addr.domain, .bus = fn->addr.bus};
        }
        return n;
}

static json_object *stack_json(struct gen *g, unsigned int box, const struct pci_addr *bus)
{
        json_object *o = json_object_new_object(), *rps = json_object_new_array();

        add(o, "box_id", json_object_new_int((int)box));
        add(o, "bus", hex(bus->bus, 2));
        for (size_t i = 0; i < pcie_topo_count(g->topo); i++) {
                const struct pcie_function *fn = fn_at(g, i);

                if (!is_root_port(g, i) || g->assigned[i] || fn->addr.domain != bus->domain ||
                    fn->addr.bus != bus->bus)
                        continue;
                g->assigned[i] = true;
                if (fn->addr.dev < 1 || fn->addr.dev > 8 || fn->addr.func) {
                        note(g->notes,
                             "%s: an IIO stack's Root Ports are devices 01..08 function 0 in "
                             "the schema: left out",
                             fn->bdf);
                        continue;
                }
                if (describable(g, i))
                        json_object_array_add(rps, port_json(g, i));
        }
        add(o, "root_ports", rps);
        return o;
}

/* The topo index of the Intel function with @device at @a, or NONE. */
static size_t intel_fn(const struct gen *g, const struct pci_addr *a, uint16_t device)
{
        size_t k = pcie_topo_find(g->topo, a);

        if (k == PCIE_TOPO_NONE || fn_at(g, k)->info.vendor_id != 0x8086 ||
            fn_at(g, k)->info.device_id != device)
                return PCIE_TOPO_NONE;
        return k;
}

/*
 * The CPU bus registers Intel PCM maps IIO stacks from (iio_stackmap.h):
 * decoded here from the functions' bytes, into g->regs when every MSM
 * function decodes; noted and left out otherwise. The functions are marked
 * emitted: the description's "stack_registers" has the simulator write
 * them again (the MSM at 03.0 and the PCU CR3 at 1e.3 of the discovery
 * function's bus, 00.0 on each stack bus).
 */
static void read_registers(struct gen *g)
{
        static struct iio_stackmap map;
        size_t pcu = PCIE_TOPO_NONE, msm = 0;
        char why[160] = "";
        int err = 0;

        memset(&map, 0, sizeof(map));
        g->chop = IIO_CHOP_UNKNOWN;
        for (size_t i = 0; i < pcie_topo_count(g->topo); i++) {
                const struct pcie_function *fn = fn_at(g, i);

                if (fn->info.vendor_id == 0x8086 && fn->info.device_id == IIO_PCU_CR3_DEVICE_ID &&
                    pcu == PCIE_TOPO_NONE)
                        pcu = i;
        }
        if (pcu != PCIE_TOPO_NONE &&
            iio_chop_decode(facts_of(g, pcu)->cfg, facts_of(g, pcu)->cfg_len, &g->chop))
                g->chop = IIO_CHOP_UNKNOWN;
        map.layout = iio_layout_of(
            6, g->f->cpu_model,
            iio_layout_needs_chop(6, g->f->cpu_model) ? (enum iio_chop)g->chop : IIO_CHOP_XCC);
        for (size_t i = 0; i < pcie_topo_count(g->topo) && !err; i++) {
                const struct md_function *mf;
                struct iio_cpubus cb;
                struct pci_addr sad;
                unsigned int package;
                size_t k;

                if (fn_at(g, i)->info.vendor_id != 0x8086 ||
                    fn_at(g, i)->info.device_id != IIO_MSM_DEVICE_ID)
                        continue;
                msm++;
                mf = facts_of(g, i);
                err = iio_cpubus_decode(mf->cfg, mf->cfg_len, &cb);
                if (err) {
                        snprintf(why, sizeof(why), "%s: CPUBUSNO unreadable", fn_at(g, i)->bdf);
                        break;
                }
                sad = (struct pci_addr){.domain = mf->addr.domain,
                                        .bus = (uint8_t)iio_cpubus_first(&cb)};
                k = pcie_topo_find(g->topo, &sad);
                err = k == PCIE_TOPO_NONE ? -ENOENT
                                          : iio_package_decode(facts_of(g, k)->cfg,
                                                               facts_of(g, k)->cfg_len, &package);
                if (!err)
                        err =
                            iio_stackmap_add(&map, package, mf->addr.domain, &cb, why, sizeof(why));
                else
                        snprintf(why, sizeof(why), "%s: no SAD_CONTROL_CFG", fn_at(g, i)->bdf);
                g->emitted[i] = !err;
        }
        if (!msm)
                return;
        if (err || !map.count) {
                note(g->notes,
                     "the uncore's CPU bus registers do not map IIO stacks (%s): not simulated",
                     err ? why : "no table for this CPU or die layout");
                for (size_t i = 0; i < pcie_topo_count(g->topo); i++)
                        if (fn_at(g, i)->info.device_id == IIO_MSM_DEVICE_ID)
                                g->emitted[i] = false;
                return;
        }
        for (size_t i = 0; i < pcie_topo_count(g->topo); i++)
                if (fn_at(g, i)->info.vendor_id == 0x8086 &&
                    fn_at(g, i)->info.device_id == IIO_PCU_CR3_DEVICE_ID)
                        g->emitted[i] = true;
        g->regs = &map;
}

/* The registers' root bus of stack @box on socket @s, or NULL. */
static const struct pci_addr *register_bus(struct gen *g, const struct md_socket *s,
                                           unsigned int box, struct pci_addr *buf)
{
        const struct iio_stack_root *r = g->regs ? iio_stackmap_find(g->regs, s->id, box) : NULL;

        if (!r)
                return NULL;
        *buf = (struct pci_addr){.domain = r->domain, .bus = r->bus};
        return buf;
}

/* The stacks of socket @s: die files, IIOStackBus, the CPU bus registers,
 * then by order. */
static json_object *stacks_json(struct gen *g, const struct md_socket *s, int numa, bool any_numa)
{
        const struct md_facts *f = g->f;
        json_object *arr = json_object_new_array();
        struct pci_addr buses[64], reg_bus;
        bool bus_used[64] = {false};
        size_t nbus = stack_buses(g, s, numa, any_numa, buses, 64);
        bool guessed = false;

        for (size_t b = 0; b < f->box_count; b++) {
                const struct md_iio_box *box = &f->boxes[b];
                const struct pci_addr *bus = NULL;

                if (!box_on_socket(box, s))
                        continue;
                for (size_t d = 0; d < box->die_count && !bus; d++)
                        if (box->die_socket[d] == s->id)
                                bus = &box->die_bus[d];
                for (size_t c = 0; c < f->stack_bus_count && !bus; c++)
                        if (f->stack_buses[c].box == box->box && f->stack_buses[c].socket == s->id)
                                bus = &f->stack_buses[c].bus;
                if (!bus)
                        bus = register_bus(g, s, box->box, &reg_bus);
                for (size_t k = 0; k < nbus && bus; k++)
                        if (buses[k].domain == bus->domain && buses[k].bus == bus->bus)
                                bus_used[k] = true;
                if (!bus && g->regs) {
                        /* The simulator would write registers for it: only
                         * a stack they map can be described. */
                        note(g->notes,
                             "uncore_iio_free_running_%u on socket %u: not mapped by the CPU "
                             "bus registers: the stack is left out",
                             box->box, s->id);
                        continue;
                }
                if (!bus) {
                        for (size_t k = 0; k < nbus && !bus; k++)
                                if (!bus_used[k]) {
                                        bus_used[k] = true;
                                        bus = &buses[k];
                                        guessed = true;
                                }
                }
                if (!bus) {
                        note(g->notes,
                             "uncore_iio_free_running_%u on socket %u: no root bus left for "
                             "it: the stack is left out",
                             box->box, s->id);
                        continue;
                }
                json_object_array_add(arr, stack_json(g, box->box, bus));
                if (g->regs) { /* its 00.0 is the simulator's to write */
                        struct pci_addr a = {.domain = bus->domain, .bus = bus->bus};
                        size_t k = intel_fn(g, &a, IIO_SAD_DEVICE_ID);

                        if (k != PCIE_TOPO_NONE)
                                g->emitted[k] = true;
                }
        }
        if (guessed)
                note(g->notes,
                     "socket %u: the kernel does not say which root bus each IIO stack owns; "
                     "taken in order (lowest box id, lowest bus): give --iio-stack-bus to fix",
                     s->id);
        return arr;
}

static json_object *intel_json(struct gen *g)
{
        const struct md_facts *f = g->f;
        const struct uncore_inventory *inv = f->uncore;
        json_object *o = json_object_new_object(), *sockets = json_object_new_array();
        bool dies = false;

        for (size_t i = 0; i < f->box_count; i++)
                dies |= f->boxes[i].die_count > 0;
        if (!f->cpu_model)
                note(g->notes, "the CPU model is unknown: simulated as 143 (Sapphire Rapids)");
        add(o, "cpu_model", json_object_new_int(f->cpu_model ? (int)f->cpu_model : 143));
        add(o, "die_files", json_object_new_boolean(dies));
        read_registers(g);
        if (g->regs) {
                add(o, "stack_registers", json_object_new_boolean(true));
                add(o, "chop", json_object_new_string(g->chop == IIO_CHOP_MCC ? "mcc" : "xcc"));
        }
        if (inv->source_count != f->socket_count)
                note(g->notes, "%zu discovery functions for %zu sockets: paired in order",
                     inv->source_count, f->socket_count);
        for (size_t i = 0; i < f->socket_count && i < inv->source_count; i++) {
                const struct md_socket *s = &f->sockets[i];
                const struct uncore_source *src = &inv->sources[i];
                json_object *so, *disc;
                char cpus[32], bdf[PCI_BDF_LEN];
                size_t k;
                int numa = s->numa_node >= 0 ? s->numa_node : src->numa_node;
                uint64_t size = src->bar_size;

                pci_addr_format(&src->addr, bdf);
                if (src->error || !src->table.unit_count) {
                        note(g->notes,
                             "socket %u: discovery table of %s unreadable (%s): the "
                             "socket is left out",
                             s->id, bdf, src->error ? src->message : "no units");
                        continue;
                }
                if (!s->contiguous)
                        note(g->notes, "socket %u: CPUs not one range: simulated as %d-%d", s->id,
                             s->first_cpu, s->last_cpu);
                if (!size || size & (size - 1) || size < 0x1000 || size > 0x100000) {
                        size = 0x1000;
                        while (size < 0x100000 &&
                               size < (src->table.unit_count + 1) * src->table.global.stride * 8)
                                size <<= 1;
                        note(g->notes, "%s: BAR size unknown: simulated as %#llx", bdf,
                             (unsigned long long)size);
                }
                so = json_object_new_object();
                disc = json_object_new_object();
                add(so, "id", json_object_new_int((int)s->id));
                add(so, "numa_node", json_object_new_int(numa >= -1 && numa <= 1023 ? numa : -1));
                snprintf(cpus, sizeof(cpus), "%d-%d", s->first_cpu, s->last_cpu);
                add(so, "cpus", json_object_new_string(cpus));
                add(disc, "bdf", json_object_new_string(bdf));
                add(disc, "bar", hex(src->bar, 1));
                add(disc, "bar_size", hex(size, 1));
                add(disc, "stride", json_object_new_int(src->table.global.stride));
                k = pcie_topo_find(g->topo, &src->addr);
                if (k != PCIE_TOPO_NONE) {
                        add(disc, "other_dvsecs", other_dvsecs_json(facts_of(g, k)));
                        g->emitted[k] = true;
                }
                add(disc, "units", units_json(&src->table));
                add(so, "discovery", disc);
                add(so, "iio_stacks", stacks_json(g, s, numa, f->socket_count == 1));
                json_object_array_add(sockets, so);
        }
        add(o, "sockets", sockets);
        if (!json_object_array_length(sockets)) {
                json_object_put(o);
                return NULL;
        }
        return o;
}

/* ---- the whole machine ---- */

static json_object *rcieps_json(struct gen *g)
{
        json_object *arr = json_object_new_array();

        for (size_t i = 0; i < pcie_topo_count(g->topo); i++) {
                if (g->emitted[i] || !is_rciep(g, i) || !describable(g, i))
                        continue;
                json_object_array_add(arr, common_json(g, i));
                g->emitted[i] = true;
        }
        return arr;
}

static unsigned int cpu_count(const struct gen *g)
{
        const struct md_facts *f = g->f;
        int top = -1;

        if (f->cpus)
                return f->cpus;
        for (size_t i = 0; i < f->hisi_count; i++)
                top = f->hisi[i].cpu > top ? f->hisi[i].cpu : top;
        for (size_t i = 0; i < f->socket_count; i++)
                top = f->sockets[i].last_cpu > top ? f->sockets[i].last_cpu : top;
        note(g->notes, "the number of CPUs is unknown: simulated as %d", top + 1 > 0 ? top + 1 : 1);
        return top + 1 > 0 ? (unsigned int)top + 1 : 1;
}

static char *with_comment(const char *json, const struct md_facts *f, const char *kernel_why,
                          const struct md_notes *n)
{
        size_t cap = strlen(json) + 1024 + n->count * (MD_NOTE_LEN + 8), len = 0;
        char *out = malloc(cap);

        if (!out)
                return NULL;
        bool calibrated = f->units && (f->units->have_flux || f->units->have_time_clock ||
                                       f->units->have_latency_clock || f->units->have_ptt_clock ||
                                       f->units->have_ptt_time);

        len += (size_t)snprintf(out + len, cap - len,
                                "/*\n * Generated by pciescope snapshot from %s.\n"
                                " * Kernel: %s. Workloads idle; hidden units (flux, clocks) %s.\n",
                                f->source ? f->source : "a machine", kernel_why,
                                calibrated ? "from its calibration where consistent, else the "
                                             "schema's defaults"
                                           : "at the schema's defaults");
        len += (size_t)snprintf(out + len, cap - len, " * Approximated or left out (%zu):\n",
                                n->count + n->dropped);
        for (size_t i = 0; i < n->count; i++) {
                const char *t = n->text[i];

                len += (size_t)snprintf(out + len, cap - len, " * - ");
                for (; *t && len + 2 < cap; t++) /* never close the comment early */
                        out[len++] = (t[0] == '*' && t[1] == '/') ? '+' : *t;
                len += (size_t)snprintf(out + len, cap - len, "\n");
        }
        if (n->dropped)
                len += (size_t)snprintf(out + len, cap - len, " * - ... %zu more\n", n->dropped);
        snprintf(out + len, cap - len, " */\n%s\n", json);
        return out;
}

/* The calibrated units as the description's hisi_pcie clocks (only what
 * the calibration settled; the simulator's defaults for the rest). */
static void hidden_units_json(json_object *root, const struct md_units *u, struct md_notes *notes)
{
        json_object *o;

        if (!u || !(u->have_flux || u->have_time_clock || u->have_latency_clock ||
                    u->have_ptt_clock || u->have_ptt_time))
                return;
        o = json_object_new_object();
        if (u->have_flux)
                add(o, "flux_unit_bytes", json_object_new_double(u->flux_unit_bytes));
        if (u->have_time_clock)
                add(o, "time_clock_hz", json_object_new_double(u->time_clock_hz));
        if (u->have_latency_clock)
                add(o, "latency_clock_hz", json_object_new_double(u->latency_clock_hz));
        if (u->have_ptt_clock)
                add(o, "ptt_clock_hz", json_object_new_double(u->ptt_clock_hz));
        if (u->have_ptt_time)
                add(o, "ptt_time",
                    json_object_new_string(u->ptt_time_absolute ? "absolute" : "delta"));
        add(root, "hisi_pcie", o);
        note(notes, "hisi_pcie units from this machine's calibration (calibration.json); the "
                    "simulator's defaults for those it could not settle");
}

int machine_desc_build(const struct md_facts *f, const char *name, char **json,
                       struct md_notes *notes)
{
        struct gen g = {.f = f, .notes = notes};
        json_object *root = NULL, *sicls, *intel = NULL, *rcieps;
        char kernel_why[160], desc[512];
        const char *kernel;
        size_t n;
        int ret = -ENOMEM;

        *json = NULL;
        memset(notes, 0, sizeof(*notes));
        g.topo = pcie_topo_new();
        if (!g.topo)
                return -ENOMEM;
        for (size_t i = 0; i < f->function_count; i++)
                pcie_topo_add(g.topo, &f->functions[i].addr, f->functions[i].cfg,
                              f->functions[i].cfg_len);
        pcie_topo_finish(g.topo);
        n = pcie_topo_count(g.topo);
        g.fidx = calloc(n + 1, sizeof(*g.fidx));
        g.emitted = calloc(n + 1, sizeof(*g.emitted));
        g.assigned = calloc(n + 1, sizeof(*g.assigned));
        if (!g.fidx || !g.emitted || !g.assigned)
                goto out;
        for (size_t i = 0; i < n; i++)
                g.fidx[i] = NOT_MAPPED;
        for (size_t i = 0; i < f->function_count; i++) {
                size_t k = pcie_topo_find(g.topo, &f->functions[i].addr);

                if (k != PCIE_TOPO_NONE && g.fidx[k] == NOT_MAPPED)
                        g.fidx[k] = i;
        }

        kernel = machine_desc_kernel(f, kernel_why, sizeof(kernel_why));
        root = json_object_new_object();
        add(root, "machine", json_object_new_string(name));
        add(root, "kernel", json_object_new_string(kernel));
        add(root, "cpus", json_object_new_int((int)cpu_count(&g)));
        if (f->cmdline && strlen(f->cmdline) <= 511 && !strchr(f->cmdline, '\n'))
                add(root, "cmdline", json_object_new_string(f->cmdline));
        else
                note(notes, "kernel command line %s: the schema's default is used",
                     f->cmdline ? "longer than 511 characters" : "unknown");
        hidden_units_json(root, f->units, notes);
        sicls = sicls_json(&g);
        if (f->uncore && f->uncore->source_count && f->socket_count)
                intel = intel_json(&g);
        if (json_object_array_length(sicls))
                add(root, "sicls", sicls);
        else
                json_object_put(sicls);
        if (intel)
                add(root, "intel", intel);
        rcieps = rcieps_json(&g);
        if (json_object_array_length(rcieps))
                add(root, "rcieps", rcieps);
        else
                json_object_put(rcieps);
        for (size_t i = 0; i < n; i++) {
                if (g.emitted[i] || g.assigned[i])
                        continue;
                if (is_root_port(&g, i))
                        note(notes,
                             "%s: a Root Port of no hisi_pcie core or IIO stack: left out "
                             "with everything below it",
                             fn_at(&g, i)->bdf);
                else if (fn_at(&g, i)->parent == PCIE_TOPO_NONE && !is_rciep(&g, i))
                        describable(&g, i) &&
                            (note(notes, "%s: a %s on a root bus: the schema has none, left out",
                                  fn_at(&g, i)->bdf,
                                  pcie_port_type_name(fn_at(&g, i)->info.port_type)),
                             true);
        }
        if (!json_object_object_get_ex(root, "sicls", NULL) && !intel) {
                note(notes, "no hisi_pcie core with a Root Port and no Intel discovery table: "
                            "the simulator needs one of them, no description written");
                ret = -ENOTSUP;
                goto out;
        }
        snprintf(desc, sizeof(desc),
                 "Generated by pciescope snapshot from %s; %zu things approximated or left out "
                 "(see the comment above and MANIFEST.json)",
                 f->source ? f->source : "a machine", notes->count + notes->dropped);
        add(root, "description", json_object_new_string(desc));
        *json = with_comment(
            json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                     JSON_C_TO_STRING_NOSLASHESCAPE),
            f, kernel_why, notes);
        ret = *json ? 0 : -ENOMEM;
out:
        json_object_put(root);
        free(g.fidx);
        free(g.emitted);
        free(g.assigned);
        pcie_topo_free(g.topo);
        return ret;
}
