// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cmd_topology.c - `pciescope topology`: the tree, as text or JSON.
 */
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "cli.h"
#include "pcie_link.h"
#include "pcie_topo.h"

static json_object *json_bdf_or_null(const struct pcie_topo *topo, size_t index)
{
        return index == PCIE_TOPO_NONE ? NULL
                                       : json_object_new_string(pcie_topo_get(topo, index)->bdf);
}

static json_object *json_speed(unsigned int code)
{
        double gts = pcie_speed_gts(code);

        return gts > 0.0 ? json_object_new_double(gts) : NULL;
}

static json_object *json_hex(unsigned int value, int digits)
{
        char buf[16];

        snprintf(buf, sizeof(buf), "0x%0*x", digits, value);
        return json_object_new_string(buf);
}

static json_object *json_name(const char *name)
{
        return *name ? json_object_new_string(name) : NULL;
}

static json_object *link_json(const struct pcie_topo *topo, const struct pcie_function *f)
{
        const struct pcie_link_regs *l = &f->info.link;
        json_object *link = json_object_new_object();
        json_object *speeds = json_object_new_array();
        json_object *capacity = json_object_new_object();

        json_object_object_add(link, "current_speed_gts", json_speed(l->cur_speed_code));
        json_object_object_add(link, "current_width", json_object_new_int(l->cur_width));
        json_object_object_add(link, "max_speed_gts", json_speed(l->max_speed_code));
        json_object_object_add(link, "max_width", json_object_new_int(l->max_width));
        for (unsigned int code = 1; code <= PCIE_SPEED_CODE_MAX; code++)
                if ((f->speed_vector & (1u << code)) && pcie_speed_gts(code) > 0.0)
                        json_object_array_add(speeds, json_object_new_double(pcie_speed_gts(code)));
        json_object_object_add(link, "supported_speeds_gts", speeds);
        json_object_object_add(link, "up", json_object_new_boolean(f->link_up));
        json_object_object_add(link, "downtrained", json_object_new_boolean(f->downtrained));
        json_object_object_add(link, "partner", json_bdf_or_null(topo, f->partner));
        json_object_object_add(capacity, "current",
                               json_object_new_int64((int64_t)f->capacity_current));
        json_object_object_add(capacity, "max", json_object_new_int64((int64_t)f->capacity_max));
        json_object_object_add(link, "capacity_bytes_per_second", capacity);
        return link;
}

static json_object *function_json(const struct pcie_topo *topo, const struct pcie_function *f)
{
        json_object *o = json_object_new_object();
        char host[16];

        snprintf(host, sizeof(host), "%04x:%02x", f->addr.domain, f->root_bus);
        json_object_object_add(o, "bdf", json_object_new_string(f->bdf));
        json_object_object_add(o, "parent", json_bdf_or_null(topo, f->parent));
        json_object_object_add(o, "root_port", json_bdf_or_null(topo, f->root_port));
        json_object_object_add(o, "host_bridge", json_object_new_string(host));
        json_object_object_add(o, "port_type",
                               json_object_new_string(pcie_port_type_name(f->info.port_type)));
        json_object_object_add(o, "vendor_id", json_hex(f->info.vendor_id, 4));
        json_object_object_add(o, "device_id", json_hex(f->info.device_id, 4));
        json_object_object_add(o, "class", json_hex(f->info.class_code, 6));
        json_object_object_add(o, "vendor_name", json_name(f->vendor_name));
        json_object_object_add(o, "device_name", json_name(f->device_name));
        json_object_object_add(
            o, "numa_node",
            f->numa_node == PCIE_NUMA_UNKNOWN ? NULL : json_object_new_int(f->numa_node));
        json_object_object_add(o, "config_bytes", json_object_new_int((int)f->cfg_len));
        if (f->info.is_bridge) {
                json_object *range = json_object_new_object();

                json_object_object_add(range, "secondary",
                                       json_object_new_int(f->info.secondary_bus));
                json_object_object_add(range, "subordinate",
                                       json_object_new_int(f->info.subordinate_bus));
                json_object_object_add(o, "bus_range", range);
        }
        if (f->info.has_pcie) {
                json_object_object_add(o, "pcie_cap_version",
                                       json_object_new_int(f->info.pcie_cap_version));
                json_object_object_add(o, "mpss_bytes",
                                       json_object_new_int((int)f->info.mpss_bytes));
                json_object_object_add(o, "mps_bytes", json_object_new_int((int)f->info.mps_bytes));
                json_object_object_add(o, "mrrs_bytes",
                                       json_object_new_int((int)f->info.mrrs_bytes));
                json_object_object_add(o, "hotplug_capable",
                                       json_object_new_boolean(f->info.hotplug_capable));
        }
        if (f->info.has_link)
                json_object_object_add(o, "link", link_json(topo, f));
        return o;
}

static void print_link(const struct pcie_function *f)
{
        const struct pcie_link_regs *l = &f->info.link;
        unsigned int max_code = pcie_speed_vector_max(f->speed_vector);

        if (!f->info.has_link)
                return;
        if (!f->link_up) {
                printf("  [link down, max %.1f GT/s x%u]", pcie_speed_gts(max_code), l->max_width);
                return;
        }
        printf("  [%.1f GT/s x%u", pcie_speed_gts(l->cur_speed_code), l->cur_width);
        if (l->cur_speed_code != max_code || l->cur_width != l->max_width)
                printf(" of %.1f GT/s x%u", pcie_speed_gts(max_code), l->max_width);
        printf("]%s", f->downtrained ? " DOWNTRAINED" : "");
}

static void print_function(const struct pcie_topo *topo, size_t index, const char *prefix,
                           bool last)
{
        const struct pcie_function *f = pcie_topo_get(topo, index);
        char child_prefix[256];
        size_t n = pcie_topo_count(topo), last_child = PCIE_TOPO_NONE;

        printf("%s%s %02x:%02x.%u %s [%04x:%04x]", prefix, last ? "\\-" : "+-", f->addr.bus,
               f->addr.dev, f->addr.func, pcie_port_type_name(f->info.port_type), f->info.vendor_id,
               f->info.device_id);
        if (*f->vendor_name || *f->device_name)
                printf(" %s %s", f->vendor_name, f->device_name);
        print_link(f);
        if (f->info.has_pcie)
                printf("  MPS %u/%u MRRS %u", f->info.mps_bytes, f->info.mpss_bytes,
                       f->info.mrrs_bytes);
        putchar('\n');

        snprintf(child_prefix, sizeof(child_prefix), "%s%s", prefix, last ? "   " : "|  ");
        for (size_t i = 0; i < n; i++)
                if (pcie_topo_get(topo, i)->parent == index)
                        last_child = i;
        for (size_t i = 0; i < n; i++)
                if (pcie_topo_get(topo, i)->parent == index)
                        print_function(topo, i, child_prefix, i == last_child);
}

static void print_tree(const struct pcie_topo *topo)
{
        size_t n = pcie_topo_count(topo);

        for (size_t i = 0; i < n; i++) {
                const struct pcie_function *f = pcie_topo_get(topo, i);
                size_t last = PCIE_TOPO_NONE;
                bool first = true;

                if (f->parent != PCIE_TOPO_NONE)
                        continue;
                /* One heading per root bus, before its first function. */
                for (size_t j = 0; j < i && first; j++) {
                        const struct pcie_function *g = pcie_topo_get(topo, j);

                        first = !(g->parent == PCIE_TOPO_NONE && g->addr.domain == f->addr.domain &&
                                  g->addr.bus == f->addr.bus);
                }
                if (!first)
                        continue;
                printf("[%04x:%02x]\n", f->addr.domain, f->addr.bus);
                for (size_t j = i; j < n; j++) {
                        const struct pcie_function *g = pcie_topo_get(topo, j);

                        if (g->parent == PCIE_TOPO_NONE && g->addr.domain == f->addr.domain &&
                            g->addr.bus == f->addr.bus)
                                last = j;
                }
                for (size_t j = i; j < n; j++) {
                        const struct pcie_function *g = pcie_topo_get(topo, j);

                        if (g->parent == PCIE_TOPO_NONE && g->addr.domain == f->addr.domain &&
                            g->addr.bus == f->addr.bus)
                                print_function(topo, j, " ", j == last);
                }
        }
}

/*
 * The array json-c would print for the whole topology (JSON_C_TO_STRING_
 * PRETTY: "[", the elements indented by two spaces and joined by ",", "]"),
 * one function at a time: a tree of every function and one string of the
 * whole page cost a thousand functions several megabytes of fresh memory,
 * whose page faults were most of the command's time (issue 17).
 */
static void print_json(const struct pcie_topo *topo)
{
        size_t n = pcie_topo_count(topo);

        if (n == 0) {
                json_object *arr = json_object_new_array();

                puts(json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PRETTY));
                json_object_put(arr);
                return;
        }
        fputs("[\n", stdout);
        for (size_t i = 0; i < n; i++) {
                json_object *o = function_json(topo, pcie_topo_get(topo, i));
                const char *text = json_object_to_json_string_ext(
                    o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);

                fputs("  ", stdout);
                for (const char *nl; (nl = strchr(text, '\n')); text = nl + 1) {
                        fwrite(text, 1, (size_t)(nl - text) + 1, stdout);
                        fputs("  ", stdout);
                }
                fputs(text, stdout);
                fputs(i + 1 < n ? ",\n" : "\n", stdout);
                json_object_put(o);
        }
        fputs("]\n", stdout);
}

int cmd_topology(const struct cli_opts *opts, struct engine *e)
{
        struct hw_env *env = engine_env(e);
        struct pcie_topo_opts topo_opts = {.names = opts->names,
                                           .read_sysfs = env->sysfs_root != NULL};
        struct pcie_topo *topo;

        if (cli_scan(opts, env, &topo_opts, &topo))
                return CLI_EXIT_ERROR;
        if (opts->json) {
                print_json(topo);
        } else {
                print_tree(topo);
                if (pcie_topo_truncated(topo))
                        fprintf(stderr,
                                "pciescope: %zu function(s) with truncated configuration space "
                                "(run as root for link and MPS data)\n",
                                pcie_topo_truncated(topo));
        }
        pcie_topo_free(topo);
        return CLI_EXIT_OK;
}
