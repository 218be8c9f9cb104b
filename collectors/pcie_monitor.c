// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pcie_monitor.c - one interval of the `pcie` plugin, without collectd.
 */
#include "pcie_monitor.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aer.h"
#include "hw_env.h"
#include "pcie_link.h"
#include "pcie_families.h"
#include "pcie_topo.h"

/* What we remember about a function between intervals. */
struct device_state {
        struct pci_addr addr;
        struct pcie_link_tracker link;
        bool aer_error_logged;
        bool truncated_logged;
        /* AER counters per error type that have counted (bit i of class c:
         * counter i of the file): at the default detail a type's series
         * appears when it first moves, and stays. */
        uint64_t aer_counted[AER_CLASS_COUNT];
};

struct pcie_monitor {
        const struct hw_env *env;
        struct pcie_monitor_opts opts;
        enum pcie_policy policy;
        const char *policy_source;
        struct device_state *states;
        size_t state_count;
        size_t functions, selected;
        /* Findings per severity over the selected functions (the machine's
         * pcie_audit_findings below the full detail). */
        unsigned int findings[PCIE_SEV_CRITICAL + 1];
        /* Functions of this scan whose configuration space is cut short
         * (no CAP_SYS_ADMIN), not yet logged: one line for all of them. */
        struct truncated_note {
                size_t count, from_sysfs;
                char first[PCI_BDF_LEN];
                size_t first_len;
        } truncated;
        bool scan_failing; /* the last scan failed and was logged */
        bool scanned;      /* a scan has worked: functions that come and go are news */
        bool changed;      /* this scan's functions differ from the last one's (or first) */
        struct pcie_topo *changed_topo; /* the last such scan, until taken */
};

void pcie_monitor_opts_default(struct pcie_monitor_opts *opts)
{
        memset(opts, 0, sizeof(*opts));
        opts->collect_link = true;
        opts->collect_audit = true;
        opts->collect_aer = true;
        opts->collect_info = true;
        opts->names = true;
        opts->read_sysfs = true;
        opts->policy = PCIE_POLICY_DEFAULT;
        pcie_audit_opts_default(&opts->audit);
}

int pcie_monitor_new(const struct hw_env *env, const struct pcie_monitor_opts *opts,
                     struct pcie_monitor **out)
{
        static const char *const source_names[] = {
            [PCIE_POLICY_FROM_CONFIG] = "config",
            [PCIE_POLICY_FROM_CMDLINE] = "cmdline",
            [PCIE_POLICY_FROM_DEFAULT] = "default",
        };
        struct pcie_monitor *mon = calloc(1, sizeof(*mon));

        if (!mon)
                return -ENOMEM;
        mon->env = env;
        mon->opts = *opts;
        mon->policy_source = source_names[pcie_policy_in_force(
            env, opts->policy_given ? &opts->policy : NULL, &mon->policy)];
        *out = mon;
        return 0;
}

enum pcie_policy_source pcie_policy_in_force(const struct hw_env *env,
                                             const enum pcie_policy *given, enum pcie_policy *out)
{
        char cmdline[HW_FILE_MAX];

        if (given) {
                *out = *given;
                return PCIE_POLICY_FROM_CONFIG;
        }
        if (hw_read_file(env, HW_PROCFS, cmdline, sizeof(cmdline), "cmdline") >= 0 &&
            pcie_policy_from_cmdline(cmdline, out) > 0)
                return PCIE_POLICY_FROM_CMDLINE;
        *out = PCIE_POLICY_DEFAULT;
        return PCIE_POLICY_FROM_DEFAULT;
}

void pcie_monitor_free(struct pcie_monitor *mon)
{
        if (!mon)
                return;
        pcie_topo_free(mon->changed_topo);
        free(mon->states);
        free(mon);
}

enum pcie_policy pcie_monitor_policy(const struct pcie_monitor *mon, const char **source)
{
        if (source)
                *source = mon->policy_source;
        return mon->policy;
}

size_t pcie_monitor_function_count(const struct pcie_monitor *mon, size_t *selected)
{
        if (selected)
                *selected = mon->selected;
        return mon->functions;
}

/*
 * Carry state over to the new topology: both lists are sorted by address,
 * so one merge pass keeps the states of functions still present, starts
 * fresh ones for new functions, and drops those that went away.
 */
/* A function that went away (surprise removal, a link that failed) or
 * came (hot-plug, a rescan), once per change; not at the first scan, nor
 * for functions the filter leaves out. */
static void log_change(const struct pcie_monitor *mon, const struct pci_addr *addr, bool gone)
{
        char bdf[PCI_BDF_LEN];

        if (!mon->scanned || (mon->opts.filter && !bdf_filter_selects(mon->opts.filter, addr)))
                return;
        pci_addr_format(addr, bdf);
        if (gone)
                hw_logf(mon->env, HW_LOG_WARNING,
                        "%s: PCI function gone (removed, or its link failed); its series stop "
                        "until it is back",
                        bdf);
        else
                hw_logf(mon->env, HW_LOG_INFO, "%s: PCI function appeared (hot-plug or rescan)",
                        bdf);
}

static int merge_states(struct pcie_monitor *mon, const struct pcie_topo *topo)
{
        size_t n = pcie_topo_count(topo), old = 0;
        struct device_state *fresh = calloc(n ? n : 1, sizeof(*fresh));

        if (!fresh)
                return -ENOMEM;
        mon->changed = !mon->scanned || n != mon->state_count;
        for (size_t i = 0; i < n; i++) {
                const struct pci_addr *addr = &pcie_topo_get(topo, i)->addr;

                while (old < mon->state_count &&
                       pci_addr_compare(&mon->states[old].addr, addr) < 0) {
                        log_change(mon, &mon->states[old++].addr, true);
                        mon->changed = true;
                }
                if (old < mon->state_count && !pci_addr_compare(&mon->states[old].addr, addr)) {
                        fresh[i] = mon->states[old++];
                } else {
                        fresh[i].addr = *addr;
                        log_change(mon, addr, false);
                        mon->changed = true;
                }
        }
        if (old < mon->state_count)
                mon->changed = true;
        while (old < mon->state_count)
                log_change(mon, &mon->states[old++].addr, true);
        mon->scanned = true;
        free(mon->states);
        mon->states = fresh;
        mon->state_count = n;
        return 0;
}

/* Samples of one function (or of the whole bus when bdf is NULL): the
 * emitter kit plus the function's own label. */
struct emitter {
        struct sample_emitter out;
        const char *bdf;
};

static void function_sample(struct pcie_sample *s, struct emitter *em,
                            const struct pcie_family *family)
{
        sample_init(s, family);
        sample_label(s, "bdf", em->bdf);
}

/* A gauge of the function with one more label (or none: NULL). */
static int emit_gauge(struct emitter *em, const struct pcie_family *family, const char *label,
                      const char *label_value, double value)
{
        struct pcie_sample s;

        function_sample(&s, em, family);
        if (label)
                sample_label(&s, label, label_value);
        s.gauge = value;
        return sample_emit(&em->out, &s);
}

static int emit_counter(struct emitter *em, const struct pcie_family *family, uint64_t value,
                        const char *label1, const char *value1, const char *label2,
                        const char *value2)
{
        struct pcie_sample s;

        function_sample(&s, em, family);
        if (label1)
                sample_label(&s, label1, value1);
        if (label2)
                sample_label(&s, label2, value2);
        s.counter = value;
        return sample_emit(&em->out, &s);
}

static int emit_info(struct emitter *em, const struct pcie_topo *topo,
                     const struct pcie_function *f)
{
        char vendor[8], device[8], class[10], numa[12];
        struct pcie_sample s;

        snprintf(vendor, sizeof(vendor), "0x%04x", f->info.vendor_id);
        snprintf(device, sizeof(device), "0x%04x", f->info.device_id);
        snprintf(class, sizeof(class), "0x%06x", f->info.class_code);
        snprintf(numa, sizeof(numa), "%d", f->numa_node);
        function_sample(&s, em, PCIE_FAM_DEVICE_INFO);
        sample_label(&s, "vendor_id", vendor);
        sample_label(&s, "device_id", device);
        sample_label(&s, "class", class);
        sample_label(&s, "port_type", pcie_port_type_name(f->info.port_type));
        if (f->parent != PCIE_TOPO_NONE)
                sample_label(&s, "parent", pcie_topo_get(topo, f->parent)->bdf);
        if (f->root_port != PCIE_TOPO_NONE)
                sample_label(&s, "root_port", pcie_topo_get(topo, f->root_port)->bdf);
        if (f->numa_node != PCIE_NUMA_UNKNOWN)
                sample_label(&s, "numa_node", numa);
        sample_label(&s, "vendor_name", f->vendor_name);
        sample_label(&s, "device_name", f->device_name);
        s.gauge = 1;
        return sample_emit(&em->out, &s);
}

static int emit_link(struct emitter *em, const struct pcie_function *f, struct device_state *st,
                     enum pcie_detail detail)
{
        const struct pcie_link_regs *l = &f->info.link;
        unsigned int max_code = pcie_speed_vector_max(f->speed_vector);
        int err;

        pcie_link_tracker_update(&st->link, l);
        err = emit_gauge(em, PCIE_FAM_LINK_SPEED_TRANSFERS_PER_SECOND, "state", "current",
                         pcie_speed_gts(l->cur_speed_code) * 1e9);
        if (!err)
                err = emit_gauge(em, PCIE_FAM_LINK_SPEED_TRANSFERS_PER_SECOND, "state", "max",
                                 pcie_speed_gts(max_code) * 1e9);
        if (!err)
                err = emit_gauge(em, PCIE_FAM_LINK_WIDTH_LANES, "state", "current", l->cur_width);
        if (!err)
                err = emit_gauge(em, PCIE_FAM_LINK_WIDTH_LANES, "state", "max", l->max_width);
        /* Capacity follows from speed and width; the utilisation ratios
         * already use it. */
        if (!err && detail >= PCIE_DETAIL_DEFAULT)
                err = emit_gauge(em, PCIE_FAM_LINK_CAPACITY_BYTES_PER_SECOND, "state", "current",
                                 (double)f->capacity_current);
        if (!err && detail >= PCIE_DETAIL_FULL)
                err = emit_gauge(em, PCIE_FAM_LINK_CAPACITY_BYTES_PER_SECOND, "state", "max",
                                 (double)f->capacity_max);
        if (!err)
                err = emit_gauge(em, PCIE_FAM_LINK_UP, NULL, NULL, f->link_up);
        if (!err)
                err = emit_gauge(em, PCIE_FAM_LINK_DOWNTRAINED, NULL, NULL, f->downtrained);
        if (!err)
                err = emit_counter(em, PCIE_FAM_LINK_CHANGES_TOTAL, st->link.changes, NULL, NULL,
                                   NULL, NULL);
        return err;
}

/*
 * Below the full detail a function's MPS settings are the configured one
 * (the findings say when it is wrong), the policy predictions only those
 * that would change it, and the finding counts are the machine's
 * (emit_globals): what stays is what an alert or a dashboard reads.
 */
static int emit_audit(struct pcie_monitor *mon, struct emitter *em, const struct pcie_audit *audit,
                      size_t index, const struct pcie_function *f)
{
        const struct pcie_func_audit *fa = pcie_audit_func(audit, index);
        enum pcie_detail detail = mon->opts.detail;
        bool full = detail >= PCIE_DETAIL_FULL;
        int err = 0;

        if (full)
                err = emit_gauge(em, PCIE_FAM_MAX_PAYLOAD_SIZE_BYTES, "setting", "supported",
                                 f->info.mpss_bytes);
        if (!err)
                err = emit_gauge(em, PCIE_FAM_MAX_PAYLOAD_SIZE_BYTES, "setting", "configured",
                                 f->info.mps_bytes);
        if (!err && full)
                err = emit_gauge(em, PCIE_FAM_MAX_PAYLOAD_SIZE_BYTES, "setting", "path_best",
                                 fa->best_mps_bytes);
        if (!err)
                err = emit_gauge(em, PCIE_FAM_MAX_READ_REQUEST_SIZE_BYTES, NULL, NULL,
                                 f->info.mrrs_bytes);
        if (!err && full)
                err = emit_gauge(em, PCIE_FAM_PAYLOAD_EFFICIENCY_RATIO, "setting", "current",
                                 fa->efficiency_current);
        if (!err && full)
                err = emit_gauge(em, PCIE_FAM_PAYLOAD_EFFICIENCY_RATIO, "setting", "best",
                                 fa->efficiency_best);
        for (int p = 0; p < PCIE_POLICY_COUNT && !err && detail >= PCIE_DETAIL_DEFAULT; p++) {
                unsigned int mps = pcie_audit_settings(audit, (enum pcie_policy)p)[index].mps_bytes;

                if (full || mps != f->info.mps_bytes)
                        err = emit_gauge(em, PCIE_FAM_POLICY_MAX_PAYLOAD_SIZE_BYTES, "policy",
                                         pcie_policy_name((enum pcie_policy)p), mps);
        }
        for (int sev = PCIE_SEV_INFO; sev <= PCIE_SEV_CRITICAL && !err; sev++) {
                mon->findings[sev] += fa->finding_count[sev];
                if (full)
                        err = emit_gauge(em, PCIE_FAM_AUDIT_FINDINGS, "severity",
                                         pcie_severity_name((enum pcie_severity)sev),
                                         fa->finding_count[sev]);
        }
        for (size_t i = 0; i < pcie_audit_finding_count(audit) && !err; i++) {
                const struct pcie_finding *fd = pcie_audit_finding(audit, i);
                struct pcie_sample s;

                if (fd->func != index)
                        continue;
                function_sample(&s, em, PCIE_FAM_AUDIT_FINDING);
                sample_label(&s, "finding", pcie_finding_kind_name(fd->kind));
                sample_label(&s, "severity", pcie_severity_name(fd->severity));
                s.gauge = 1;
                err = sample_emit(&em->out, &s);
        }
        return err;
}

int pcie_monitor_read_aer(const struct hw_env *env, const char *bdf, struct aer_device *out,
                          const char **what, unsigned int *bad_line)
{
        char buf[4096];
        bool any = false;

        memset(out, 0, sizeof(*out));
        *bad_line = 0;
        *what = NULL;
        for (int file = 0; file < AER_FILES; file++) {
                ssize_t n = hw_read_file(env, HW_SYSFS, buf, sizeof(buf), "bus/pci/devices/%s/%s",
                                         bdf, aer_file_name((enum aer_file)file));
                int err;

                if (n == -ENOENT)
                        continue;
                *what = aer_file_name((enum aer_file)file);
                if (n < 0)
                        return (int)n;
                err = aer_device_parse_file(out, (enum aer_file)file, buf, bad_line);
                if (err)
                        return err;
                any = true;
        }
        *what = NULL;
        return any ? 0 : -ENOENT;
}

/* Whether counter @i of class @c goes out: every one at the full detail,
 * those that have ever counted at the default, none at basic (the device
 * totals per severity stay at every level). */
static bool aer_type_published(enum pcie_detail detail, struct device_state *st, int c, size_t i,
                               uint64_t count)
{
        uint64_t bit = i < 64 ? 1ull << i : 0;

        if (detail >= PCIE_DETAIL_FULL)
                return true;
        if (detail < PCIE_DETAIL_DEFAULT)
                return false;
        if (count)
                st->aer_counted[c] |= bit;
        return (st->aer_counted[c] & bit) != 0;
}

static int emit_aer(struct pcie_monitor *mon, struct emitter *em, const struct pcie_function *f,
                    struct device_state *st)
{
        struct aer_device aer;
        const char *what;
        unsigned int line;
        int err = pcie_monitor_read_aer(mon->env, f->bdf, &aer, &what, &line);

        if (err == -ENOENT && !what)
                return 0; /* no AER statistics for this device */
        if (err) {
                /* One broken device must not stop the others: log once,
                 * skip its AER values until the files read again. */
                char where[32] = "";

                if (line)
                        snprintf(where, sizeof(where), " line %u", line);
                if (!st->aer_error_logged)
                        hw_logf(mon->env, HW_LOG_WARNING,
                                "%s: cannot use AER statistics from %s%s: %s; skipping them",
                                f->bdf, what ? what : "sysfs", where, strerror(-err));
                st->aer_error_logged = true;
                return 0;
        }
        st->aer_error_logged = false;
        for (int c = 0; c < AER_CLASS_COUNT && !err; c++) {
                const char *cls = aer_class_name((enum aer_class)c);

                if (!aer.has_class[c])
                        continue;
                for (size_t i = 0; i < aer.classes[c].count && !err; i++) {
                        char safe[AER_NAME_LEN];

                        if (!aer_type_published(mon->opts.detail, st, c, i,
                                                aer.classes[c].counters[i].count))
                                continue;
                        aer_sanitize_name(aer.classes[c].counters[i].name, safe, sizeof(safe));
                        err = emit_counter(em, PCIE_FAM_AER_ERRORS_TOTAL,
                                           aer.classes[c].counters[i].count, "severity", cls,
                                           "error", safe);
                }
                if (!err && aer.classes[c].has_total)
                        err = emit_counter(em, PCIE_FAM_AER_DEVICE_ERRORS_TOTAL,
                                           aer.classes[c].total, "severity", cls, NULL, NULL);
        }
        for (int c = 0; c < AER_CLASS_COUNT && !err; c++) {
                const char *cls = aer_class_name((enum aer_class)c);

                if (aer.has_rootport_total[c])
                        err = emit_counter(em, PCIE_FAM_AER_ROOTPORT_ERRORS_TOTAL,
                                           aer.rootport_total[c], "severity", cls, NULL, NULL);
        }
        return err;
}

static void note_truncated(struct truncated_note *n, const struct pcie_function *f)
{
        if (!n->count++) {
                snprintf(n->first, sizeof(n->first), "%s", f->bdf);
                n->first_len = f->cfg_len;
        }
        if (f->link_from_sysfs)
                n->from_sysfs++;
}

/* Without CAP_SYS_ADMIN the kernel shows every function's first 64 bytes
 * only: one line says so for all the functions a scan found that way (a
 * line per function was hundreds on a large server), naming the first. */
static void log_truncated(struct pcie_monitor *mon)
{
        const struct truncated_note *n = &mon->truncated;

        if (!n->count)
                return;
        if (n->count == 1)
                hw_logf(mon->env, HW_LOG_NOTICE,
                        "%s: only %zu bytes of configuration space readable (reading more "
                        "needs CAP_SYS_ADMIN); %s",
                        n->first, n->first_len,
                        n->from_sysfs ? "its link speed and width come from sysfs, no MPS "
                                        "or MRRS data for it"
                                      : "no link or MPS data for it");
        else
                hw_logf(mon->env, HW_LOG_NOTICE,
                        "%zu PCI functions (%s and %zu more): only the first bytes of "
                        "configuration space readable (reading more needs CAP_SYS_ADMIN); "
                        "link speed and width come from sysfs for %zu of them, no MPS or MRRS "
                        "data for any",
                        n->count, n->first, n->count - 1, n->from_sysfs);
        memset(&mon->truncated, 0, sizeof(mon->truncated));
}

static int emit_function(struct pcie_monitor *mon, const struct pcie_topo *topo,
                         const struct pcie_audit *audit, size_t i, pcie_emit_fn emit, void *ctx)
{
        const struct pcie_function *f = pcie_topo_get(topo, i);
        struct device_state *st = &mon->states[i];
        struct emitter em = {.out = {.fn = emit, .ctx = ctx}, .bdf = f->bdf};
        int err = 0;

        if (f->cfg_len < 256 && !st->truncated_logged) {
                note_truncated(&mon->truncated, f);
                st->truncated_logged = true;
        }
        if (mon->opts.collect_info)
                err = emit_info(&em, topo, f);
        if (!err && mon->opts.collect_link && f->info.has_link)
                err = emit_link(&em, f, st, mon->opts.detail);
        if (!err && audit && f->info.has_pcie)
                err = emit_audit(mon, &em, audit, i, f);
        if (!err && mon->opts.collect_aer && mon->opts.read_sysfs)
                err = emit_aer(mon, &em, f, st);
        return err;
}

static int emit_globals(struct pcie_monitor *mon, pcie_emit_fn emit, void *ctx)
{
        struct emitter em = {.out = {.fn = emit, .ctx = ctx}, .bdf = NULL};
        struct pcie_sample s;
        int err;

        err = emit_gauge(&em, PCIE_FAM_FUNCTIONS, NULL, NULL, (double)mon->selected);
        if (err || !mon->opts.collect_audit)
                return err;
        /* The machine's finding counts: sum by (severity) reads the same at
         * every detail, per function only at full. */
        for (int sev = PCIE_SEV_INFO;
             sev <= PCIE_SEV_CRITICAL && !err && mon->opts.detail < PCIE_DETAIL_FULL; sev++)
                err = emit_gauge(&em, PCIE_FAM_AUDIT_FINDINGS, "severity",
                                 pcie_severity_name((enum pcie_severity)sev), mon->findings[sev]);
        if (err)
                return err;
        function_sample(&s, &em, PCIE_FAM_MPS_POLICY_INFO);
        sample_label(&s, "policy", pcie_policy_name(mon->policy));
        sample_label(&s, "source", mon->policy_source);
        s.gauge = 1;
        return sample_emit(&em.out, &s);
}

int pcie_monitor_sample(struct pcie_monitor *mon, pcie_emit_fn emit, void *ctx)
{
        struct pcie_topo_opts topo_opts = {.names = mon->opts.names && mon->opts.collect_info,
                                           .read_sysfs = mon->opts.read_sysfs};
        struct pcie_audit *audit = NULL;
        struct pcie_topo *topo;
        int err;

        err = pcie_topo_scan(mon->env, &topo_opts, &topo);
        if (err) {
                if (!mon->scan_failing)
                        hw_logf(mon->env, HW_LOG_ERROR,
                                "cannot read the PCI devices (%s access): %s%s%s",
                                mon->env->pci ? pci_source_method(mon->env->pci) : "no",
                                strerror(-err), err == -EIO ? ": " : "",
                                err == -EIO ? pci_source_error(mon->env->pci) : "");
                mon->scan_failing = true;
                return err;
        }
        if (mon->scan_failing)
                hw_logf(mon->env, HW_LOG_INFO, "reading the PCI devices works again");
        mon->scan_failing = false;

        err = merge_states(mon, topo);
        if (!err && mon->opts.collect_audit)
                err = pcie_audit_run(topo, mon->policy, &mon->opts.audit, &audit);
        mon->functions = pcie_topo_count(topo);
        mon->selected = 0;
        memset(mon->findings, 0, sizeof(mon->findings));
        for (size_t i = 0; i < pcie_topo_count(topo) && !err; i++) {
                if (mon->opts.filter &&
                    !bdf_filter_selects(mon->opts.filter, &pcie_topo_get(topo, i)->addr))
                        continue;
                mon->selected++;
                err = emit_function(mon, topo, audit, i, emit, ctx);
        }
        log_truncated(mon);
        if (!err)
                err = emit_globals(mon, emit, ctx);
        pcie_audit_free(audit);
        if (mon->changed && !err) {
                pcie_topo_free(mon->changed_topo);
                mon->changed_topo = topo; /* for pcie_monitor_take_topology() */
        } else {
                pcie_topo_free(topo);
        }
        return err;
}

struct pcie_topo *pcie_monitor_take_topology(struct pcie_monitor *mon)
{
        struct pcie_topo *topo = mon->changed_topo;

        mon->changed_topo = NULL;
        return topo;
}
