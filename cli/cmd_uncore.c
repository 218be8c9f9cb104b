// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cmd_uncore.c - `pciescope uncore`: the Intel uncore PMON discovery
 * inventory, and `pciescope iio`: PCIe bandwidth per IIO stack and part for
 * a few intervals, with the same collectors the collectd plugin runs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "intel_iio.h"
#include "pcie_families.h"
#include "pcie_topo.h"
#include "sample.h"
#include "uncore_discovery.h"

/* ---- uncore ---- */

static int unit_order(const void *a, const void *b)
{
        const struct uncore_unit *x = a, *y = b;

        if (x->type != y->type)
                return x->type < y->type ? -1 : 1;
        return (x->box_id > y->box_id) - (x->box_id < y->box_id);
}

static void type_name(const struct uncore_inventory *inv, unsigned int type, char *buf, size_t size)
{
        const char *name = uncore_box_type_name(inv->platform, type);

        if (name)
                snprintf(buf, size, "%s", name);
        else
                snprintf(buf, size, "type_%u", type);
}

static void unit_location(const struct uncore_unit *u, char *buf, size_t size)
{
        struct pci_addr a;
        unsigned int off;
        char bdf[PCI_BDF_LEN];

        if (u->access != UNCORE_ACCESS_PCI) {
                snprintf(buf, size, "-");
                return;
        }
        uncore_unit_pci_location(u, &a, &off);
        pci_addr_format(&a, bdf);
        snprintf(buf, size, "%s+0x%x", bdf, off);
}

/* In the style of Intel PCM's listing: "PMU type 6 (8 boxes)" and a line
 * per unit. */
static void print_source(const struct uncore_inventory *inv, const struct uncore_source *src)
{
        const struct uncore_table *t = &src->table;
        struct uncore_unit *sorted;
        char bdf[PCI_BDF_LEN];

        pci_addr_format(&src->addr, bdf);
        printf("PMON discovery %s (8086:%04x, NUMA node %d): DVSEC at 0x%03x, BAR%u 0x%llx", bdf,
               src->device_id, src->numa_node, src->dvsec.offset, src->dvsec.bir,
               (unsigned long long)src->bar);
        if (src->error) {
                printf("\n  table not read: %s\n", src->message);
                return;
        }
        printf(", %zu units (stride %u bytes, access %s)", t->unit_count, t->global.stride * 8u,
               uncore_access_name(t->global.access));
        if (t->invalid || t->skipped || t->truncated)
                printf("; %zu invalid, %zu skipped, %zu past the BAR", t->invalid, t->skipped,
                       t->truncated);
        printf("\n");
        sorted = malloc((t->unit_count ? t->unit_count : 1) * sizeof(*sorted));
        if (!sorted)
                return;
        memcpy(sorted, t->units, t->unit_count * sizeof(*sorted));
        qsort(sorted, t->unit_count, sizeof(*sorted), unit_order);
        for (size_t i = 0; i < t->unit_count;) {
                size_t n = 0;
                char name[24];

                while (i + n < t->unit_count && sorted[i + n].type == sorted[i].type)
                        n++;
                type_name(inv, sorted[i].type, name, sizeof(name));
                printf("PMU type %u %s (%zu box%s)\n", sorted[i].type, name, n, n == 1 ? "" : "es");
                for (size_t k = i; k < i + n; k++) {
                        const struct uncore_unit *u = &sorted[k];
                        char loc[48];

                        unit_location(u, loc, sizeof(loc));
                        printf("    unit PMU %s of type %u ID %u box ctrl: 0x%llx (%s) with access "
                               "type %s width %u numRegs %u ctrlOffset %u ctrOffset %u\n",
                               name, u->type, u->box_id, (unsigned long long)u->ctl, loc,
                               uncore_access_name(u->access), u->width, u->num_regs, u->ctl_offset,
                               u->ctr_offset);
                }
                i += n;
        }
        free(sorted);
}

static json_object *hex64(uint64_t v)
{
        char buf[24];

        snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)v);
        return json_object_new_string(buf);
}

static json_object *source_json(const struct uncore_inventory *inv, const struct uncore_source *src)
{
        json_object *o = json_object_new_object(), *units = json_object_new_array();
        const struct uncore_table *t = &src->table;
        char bdf[PCI_BDF_LEN], dev[8];

        pci_addr_format(&src->addr, bdf);
        snprintf(dev, sizeof(dev), "0x%04x", src->device_id);
        json_object_object_add(o, "discovery", json_object_new_string(bdf));
        json_object_object_add(o, "device", json_object_new_string(dev));
        json_object_object_add(o, "numa_node", json_object_new_int(src->numa_node));
        json_object_object_add(o, "dvsec_offset", json_object_new_int(src->dvsec.offset));
        json_object_object_add(o, "bir", json_object_new_int(src->dvsec.bir));
        json_object_object_add(o, "bar", hex64(src->bar));
        json_object_object_add(o, "bar_size", json_object_new_uint64(src->bar_size));
        json_object_object_add(o, "error",
                               src->error ? json_object_new_string(src->message) : NULL);
        json_object_object_add(o, "stride_bytes", json_object_new_int(t->global.stride * 8));
        json_object_object_add(o, "max_units", json_object_new_int(t->global.max_units));
        json_object_object_add(o, "invalid", json_object_new_uint64(t->invalid));
        json_object_object_add(o, "skipped", json_object_new_uint64(t->skipped));
        json_object_object_add(o, "truncated", json_object_new_uint64(t->truncated));
        for (size_t i = 0; i < t->unit_count; i++) {
                const struct uncore_unit *u = &t->units[i];
                json_object *j = json_object_new_object();
                char name[24];

                type_name(inv, u->type, name, sizeof(name));
                json_object_object_add(j, "type", json_object_new_int(u->type));
                json_object_object_add(j, "name", json_object_new_string(name));
                json_object_object_add(j, "box_id", json_object_new_int(u->box_id));
                json_object_object_add(j, "access",
                                       json_object_new_string(uncore_access_name(u->access)));
                json_object_object_add(j, "ctl", hex64(u->ctl));
                json_object_object_add(j, "num_regs", json_object_new_int(u->num_regs));
                json_object_object_add(j, "width", json_object_new_int(u->width));
                json_object_object_add(j, "ctl_offset", json_object_new_int(u->ctl_offset));
                json_object_object_add(j, "ctr_offset", json_object_new_int(u->ctr_offset));
                json_object_object_add(j, "status_offset", json_object_new_int(u->status_offset));
                json_object_array_add(units, j);
        }
        json_object_object_add(o, "units", units);
        return o;
}

int cmd_uncore(const struct cli_opts *opts, struct engine *e)
{
        struct hw_env *env = engine_env(e);
        struct uncore_inventory *inv = NULL;
        int err = uncore_discover(env, &inv);

        if (err) {
                cli_error("uncore discovery: %s%s%s", strerror(-err), err == -EIO ? ": " : "",
                          err == -EIO ? pci_source_error(env->pci) : "");
                return CLI_EXIT_ERROR;
        }
        if (opts->json) {
                json_object *o = json_object_new_object(), *list = json_object_new_array();

                json_object_object_add(o, "platform",
                                       json_object_new_string(uncore_platform_name(inv->platform)));
                json_object_object_add(o, "cpu_family", json_object_new_int((int)inv->cpu_family));
                json_object_object_add(o, "cpu_model", json_object_new_int((int)inv->cpu_model));
                json_object_object_add(o, "other_dvsecs",
                                       json_object_new_int((int)inv->other_dvsecs));
                json_object_object_add(o, "short_config",
                                       json_object_new_int((int)inv->short_config));
                for (size_t i = 0; i < inv->source_count; i++)
                        json_object_array_add(list, source_json(inv, &inv->sources[i]));
                json_object_object_add(o, "sources", list);
                printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY));
                json_object_put(o);
        } else {
                if (!inv->source_count)
                        printf("no Intel uncore PMON discovery table (DVSEC 0x23, id 1) found%s\n",
                               inv->short_config ? "; some Intel functions' extended "
                                                   "configuration space was not readable "
                                                   "(run as root)"
                                                 : "");
                for (size_t i = 0; i < inv->source_count; i++)
                        print_source(inv, &inv->sources[i]);
        }
        uncore_inventory_free(inv);
        return CLI_EXIT_OK;
}

/* ---- iio ---- */

/* A label's value, "" when absent. */
static const char *label_of(const struct pcie_sample *s, const char *name)
{
        const char *v = pcie_sample_label(s, name);

        return v ? v : "";
}

/* One line per stack (mapping) and per part that has a port or traffic. */
static void print_socket(const struct sample_set *set)
{
        printf("socket %s:\n", set->count ? label_of(&set->samples[0], "socket") : "?");
        for (size_t i = 0; i < set->count; i++) {
                const struct pcie_sample *s = &set->samples[i];

                if (s->family == PCIE_FAM_IIO_STACK_INFO) {
                        const char *bus = label_of(s, "root_bus");

                        printf("  %s: root bus %s (%s), %s bytes per count (%s scale)\n",
                               label_of(s, "pmu"), *bus ? bus : "unknown", label_of(s, "mapping"),
                               label_of(s, "bytes_per_count"), label_of(s, "scale"));
                        continue;
                }
                if (s->family != PCIE_FAM_PORT_BANDWIDTH_BYTES_PER_SECOND)
                        continue;
                if (!*label_of(s, "port") && s->gauge <= 0)
                        continue;
                printf("    part %s %-14s in ", label_of(s, "part"),
                       *label_of(s, "port") ? label_of(s, "port") : "(no port)");
                cli_print_rate(s->gauge);
                for (size_t k = 0; k < set->count; k++) {
                        const struct pcie_sample *u = &set->samples[k];

                        if (u->family == PCIE_FAM_PORT_UTILIZATION_RATIO &&
                            !strcmp(label_of(u, "socket"), label_of(s, "socket")) &&
                            !strcmp(label_of(u, "stack"), label_of(s, "stack")) &&
                            !strcmp(label_of(u, "part"), label_of(s, "part")) &&
                            !strcmp(label_of(u, "capacity"), "raw"))
                                printf("   util %5.1f%%", u->gauge * 100);
                }
                printf("\n");
        }
}

struct iio_print {
        const struct cli_opts *opts;
        json_object *all;
};

static void iio_round(void *ctx, unsigned int n, const struct engine_unit *unit,
                      const struct sample_set *set)
{
        struct iio_print *ip = ctx;

        (void)unit;
        if (!ip->opts->json) {
                print_socket(set);
                return;
        }
        for (size_t k = 0; n == ip->opts->count && k < set->count; k++)
                json_object_array_add(ip->all, cli_sample_json(&set->samples[k]));
}

int cmd_iio(const struct cli_opts *opts, struct engine *e)
{
        struct iio_print ip = {opts, NULL};
        size_t started;

        if (engine_unit_count(e, ENGINE_SOURCE_INTEL_IIO, &started) == 0) {
                cli_error("no usable Intel IIO free-running PMU (uncore_iio_free_running_*) on "
                          "this machine; `pciescope iio --simulate spr-2s` shows a simulated one");
                return CLI_EXIT_ERROR;
        }
        if (!started) {
                cli_error("no IIO counter could be opened (see above)");
                return CLI_EXIT_ERROR;
        }
        ip.all = opts->json ? json_object_new_array() : NULL;
        cli_count(opts, e, iio_round, &ip);
        if (ip.all) {
                printf("%s\n", json_object_to_json_string_ext(ip.all, JSON_C_TO_STRING_PRETTY));
                json_object_put(ip.all);
        }
        return CLI_EXIT_OK;
}
