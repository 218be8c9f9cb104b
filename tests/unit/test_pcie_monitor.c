// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_pcie_monitor.c - one interval of the plugin without collectd:
 * which samples come out, link changes across intervals, AER counters and
 * a broken AER file logged once, device filters, a failing scan, and what
 * each Detail level keeps.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>
#include <unistd.h>
#include <sys/stat.h>

#include "fixture_cfg.h"
#include "hw_env.h"
#include "pcie_identity.h"
#include "pcie_monitor.h"

#define EP PCI_EXP_TYPE_ENDPOINT
#define RP PCI_EXP_TYPE_ROOT_PORT

#define MAX_SAMPLES 512

struct recorded {
        char metric[64], instance[PCIE_IDENTITY_LEN], type_instance[PCIE_IDENTITY_LEN], labels[256];
        enum pcie_metric_kind kind;
        double gauge;
        uint64_t counter;
};

struct fixture {
        char root[64], dump_a[128], dump_b[128];
        struct hw_env env;
        enum pcie_detail detail; /* of the monitors start() makes */
        struct recorded samples[MAX_SAMPLES];
        size_t count;
        int warnings, errors, notices;
        char last_warning[512], last_notice[512];
};

static const struct fx_dev devs_a[] = {
    {"0000:00:01.0", RP, 256, 256, 512, 1, 1, false, 4, 16, 4, 16},
    {"0000:01:00.0", EP, 256, 128, 512, 0, 0, false, 4, 16, 4, 16},
    {"0000:00:02.0", RP, 256, 256, 512, 2, 2, false, 4, 8, 4, 8},
    {"0000:02:00.0", EP, 256, 256, 512, 0, 0, false, 4, 8, 4, 8},
};

/* The same machine after 01:00.0's link retrained at x8. */
static const struct fx_dev devs_b[] = {
    {"0000:00:01.0", RP, 256, 256, 512, 1, 1, false, 4, 16, 4, 8},
    {"0000:01:00.0", EP, 256, 128, 512, 0, 0, false, 4, 16, 4, 8},
    {"0000:00:02.0", RP, 256, 256, 512, 2, 2, false, 4, 8, 4, 8},
    {"0000:02:00.0", EP, 256, 256, 512, 0, 0, false, 4, 8, 4, 8},
};

static void write_file(const char *root, const char *rel, const char *text)
{
        char path[512], cmd[600];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", root, rel);
        snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
        assert_int_equal(system(cmd), 0);
        f = fopen(path, "w");
        assert_non_null(f);
        fputs(text, f);
        fclose(f);
}

static void count_logs(void *ctx, enum hw_log_level level, const char *msg)
{
        struct fixture *fx = ctx;

        if (level == HW_LOG_ERROR)
                fx->errors++;
        else if (level == HW_LOG_WARNING) {
                fx->warnings++;
                snprintf(fx->last_warning, sizeof(fx->last_warning), "%s", msg);
        } else if (level == HW_LOG_NOTICE) {
                fx->notices++;
                snprintf(fx->last_notice, sizeof(fx->last_notice), "%s", msg);
        }
}

static int setup(void **state)
{
        struct fixture *fx = calloc(1, sizeof(*fx));

        if (!fx)
                return -1;
        strcpy(fx->root, "/tmp/pciescope-mon-XXXXXX");
        if (!mkdtemp(fx->root))
                return -1;
        snprintf(fx->dump_a, sizeof(fx->dump_a), "%s/a.txt", fx->root);
        snprintf(fx->dump_b, sizeof(fx->dump_b), "%s/b.txt", fx->root);
        if (fx_write_dump(fx->dump_a, devs_a, 4) || fx_write_dump(fx->dump_b, devs_b, 4))
                return -1;
        write_file(fx->root, "sys/bus/pci/devices/0000:01:00.0/aer_dev_correctable",
                   "RxErr 3\nBadTLP 1\nReceiver Error Old Name 2\ndev_cor_errs_bit[9] 4\n"
                   "TOTAL_ERR_COR 10\n");
        write_file(fx->root, "sys/bus/pci/devices/0000:01:00.0/aer_dev_fatal",
                   "Undefined 0\nTOTAL_ERR_FATAL 0\n");
        write_file(fx->root, "sys/bus/pci/devices/0000:00:01.0/aer_rootport_total_err_cor", "10\n");
        /* 02:00.0 has a broken file: logged once, skipped, others go on. */
        write_file(fx->root, "sys/bus/pci/devices/0000:02:00.0/aer_dev_correctable",
                   "RxErr three\n");
        write_file(fx->root, "proc/cmdline", "quiet pci=noaer,pcie_bus_safe\n");
        fx->detail = PCIE_DETAIL_FULL; /* every value, unless a test says */
        fx->env.perf = &perf_ops_system;
        fx->env.log = count_logs;
        fx->env.log_ctx = fx;
        *state = fx;
        return 0;
}

static int teardown(void **state)
{
        struct fixture *fx = *state;
        char cmd[128];

        pci_source_close(fx->env.pci);
        snprintf(cmd, sizeof(cmd), "rm -rf %s", fx->root);
        if (system(cmd))
                return -1;
        free(fx);
        return 0;
}

static int record(void *ctx, const struct pcie_sample *s)
{
        struct fixture *fx = ctx;
        struct pcie_identity id;
        struct recorded *r;

        assert_true(fx->count < MAX_SAMPLES);
        r = &fx->samples[fx->count++];
        memset(r, 0, sizeof(*r));
        snprintf(r->metric, sizeof(r->metric), "%s", s->metric);
        /* Found by the collectd identity the plugin gives it (the spec's
         * rules: the monitor's need no other sample of the interval). */
        assert_int_equal(pcie_identity(s, NULL, 0, &id), 0);
        snprintf(r->instance, sizeof(r->instance), "%s", id.plugin_instance);
        snprintf(r->type_instance, sizeof(r->type_instance), "%s", id.type_instance);
        for (size_t i = 0; i < s->label_count; i++) {
                size_t used = strlen(r->labels);

                snprintf(r->labels + used, sizeof(r->labels) - used, "%s%s=%s", used ? "," : "",
                         s->labels[i].name, s->labels[i].value);
        }
        r->kind = s->kind;
        r->gauge = s->gauge;
        r->counter = s->counter;
        /* Every sample is of a family with a collectd type (pcie_types.db). */
        assert_non_null(s->family);
        assert_non_null(s->family->collectd_type);
        assert_string_equal(s->family->name, s->metric);
        return 0;
}

static const struct recorded *find(const struct fixture *fx, const char *metric,
                                   const char *instance, const char *type_instance)
{
        for (size_t i = 0; i < fx->count; i++)
                if (!strcmp(fx->samples[i].metric, metric) &&
                    !strcmp(fx->samples[i].instance, instance) &&
                    !strcmp(fx->samples[i].type_instance, type_instance))
                        return &fx->samples[i];
        return NULL;
}

static void sample(struct fixture *fx, struct pcie_monitor *mon)
{
        fx->count = 0;
        assert_int_equal(pcie_monitor_sample(mon, record, fx), 0);
}

static struct pcie_monitor *start(struct fixture *fx, const char *dump, bool with_sysfs,
                                  const struct bdf_filter *filter)
{
        struct pcie_monitor_opts opts;
        struct pcie_monitor *mon;
        static char sys[128], proc[128];

        snprintf(sys, sizeof(sys), "%s/sys", fx->root);
        snprintf(proc, sizeof(proc), "%s/proc", fx->root);
        fx->env.sysfs_root = with_sysfs ? sys : NULL;
        fx->env.proc_root = proc;
        pci_source_close(fx->env.pci);
        assert_int_equal(pci_source_open_dump(dump, &fx->env.pci), 0);
        pcie_monitor_opts_default(&opts);
        opts.names = false;
        opts.read_sysfs = with_sysfs;
        opts.filter = filter;
        opts.detail = fx->detail;
        assert_int_equal(pcie_monitor_new(&fx->env, &opts, &mon), 0);
        return mon;
}

static void test_samples(void **state)
{
        struct fixture *fx = *state;
        struct pcie_monitor *mon = start(fx, fx->dump_a, true, NULL);
        const struct recorded *r;
        const char *source;

        assert_int_equal(pcie_monitor_policy(mon, &source), PCIE_POLICY_SAFE);
        assert_string_equal(source, "cmdline");
        sample(fx, mon);

        r = find(fx, "pcie_device_info", "0000:01:00.0", "");
        assert_non_null(r);
        assert_int_equal(r->kind, PCIE_METRIC_INFO);
        assert_non_null(strstr(r->labels, "port_type=endpoint"));
        assert_non_null(strstr(r->labels, "parent=0000:00:01.0"));
        assert_non_null(strstr(r->labels, "root_port=0000:00:01.0"));
        assert_non_null(strstr(r->labels, "vendor_id=0x1234"));

        r = find(fx, "pcie_link_speed_transfers_per_second", "0000:01:00.0", "current");
        assert_non_null(r);
        assert_float_equal(r->gauge, 16e9, 1);
        assert_non_null(strstr(r->labels, "state=current"));
        r = find(fx, "pcie_link_width_lanes", "0000:01:00.0", "max");
        assert_float_equal(r->gauge, 16, 0);
        r = find(fx, "pcie_link_capacity_bytes_per_second", "0000:01:00.0", "current");
        assert_float_equal(r->gauge, 31507692307.0, 1);
        assert_float_equal(find(fx, "pcie_link_up", "0000:01:00.0", "")->gauge, 1, 0);
        assert_float_equal(find(fx, "pcie_link_downtrained", "0000:01:00.0", "")->gauge, 0, 0);
        r = find(fx, "pcie_link_changes_total", "0000:01:00.0", "");
        assert_int_equal(r->kind, PCIE_METRIC_COUNTER);
        assert_int_equal(r->counter, 0);

        /* 01:00.0 runs MPS 128 under a 256 Root Port: critical, and below
         * what its path allows. */
        r = find(fx, "pcie_audit_finding", "0000:00:01.0", "mps_above_partner");
        assert_non_null(r);
        assert_non_null(strstr(r->labels, "severity=critical"));
        assert_non_null(find(fx, "pcie_audit_finding", "0000:01:00.0", "mps_below_path"));
        assert_float_equal(find(fx, "pcie_audit_findings", "0000:00:01.0", "critical")->gauge, 1,
                           0);
        assert_float_equal(find(fx, "pcie_audit_findings", "0000:02:00.0", "critical")->gauge, 0,
                           0);
        assert_float_equal(
            find(fx, "pcie_max_payload_size_bytes", "0000:01:00.0", "path_best")->gauge, 256, 0);
        assert_float_equal(
            find(fx, "pcie_payload_efficiency_ratio", "0000:01:00.0", "current")->gauge,
            128.0 / 152.0, 1e-9);
        assert_float_equal(
            find(fx, "pcie_policy_max_payload_size_bytes", "0000:01:00.0", "safe")->gauge, 256, 0);
        r = find(fx, "pcie_mps_policy_info", "", "");
        assert_non_null(strstr(r->labels, "policy=safe"));
        assert_float_equal(find(fx, "pcie_functions", "", "")->gauge, 4, 0);

        /* AER: per error name, the device totals and the Root Port total. */
        r = find(fx, "pcie_aer_errors_total", "0000:01:00.0", "correctable_RxErr");
        assert_non_null(r);
        assert_int_equal(r->counter, 3);
        assert_non_null(strstr(r->labels, "severity=correctable,error=RxErr"));
        assert_int_equal(
            find(fx, "pcie_aer_errors_total", "0000:01:00.0", "correctable_Receiver_Error_Old_Name")
                ->counter,
            2);
        assert_int_equal(
            find(fx, "pcie_aer_errors_total", "0000:01:00.0", "correctable_dev_cor_errs_bit9")
                ->counter,
            4);
        assert_int_equal(
            find(fx, "pcie_aer_device_errors_total", "0000:01:00.0", "correctable")->counter, 10);
        assert_int_equal(
            find(fx, "pcie_aer_rootport_errors_total", "0000:00:01.0", "correctable")->counter, 10);
        /* The broken file: its device has no AER values, one warning, and
         * its other values are still there. */
        assert_null(find(fx, "pcie_aer_errors_total", "0000:02:00.0", "correctable_RxErr"));
        assert_non_null(find(fx, "pcie_link_up", "0000:02:00.0", ""));
        assert_int_equal(fx->warnings, 1);
        sample(fx, mon);
        assert_int_equal(fx->warnings, 1);
        pcie_monitor_free(mon);
}

static void test_link_changes(void **state)
{
        struct fixture *fx = *state;
        struct pcie_monitor *mon = start(fx, fx->dump_a, false, NULL);

        sample(fx, mon);
        /* Swap the machine under the monitor: the link retrains at x8. */
        pci_source_close(fx->env.pci);
        assert_int_equal(pci_source_open_dump(fx->dump_b, &fx->env.pci), 0);
        sample(fx, mon);
        assert_int_equal(find(fx, "pcie_link_changes_total", "0000:01:00.0", "")->counter, 1);
        assert_int_equal(find(fx, "pcie_link_changes_total", "0000:02:00.0", "")->counter, 0);
        assert_float_equal(find(fx, "pcie_link_downtrained", "0000:01:00.0", "")->gauge, 1, 0);
        sample(fx, mon);
        assert_int_equal(find(fx, "pcie_link_changes_total", "0000:01:00.0", "")->counter, 1);
        /* Without sysfs there are no AER values at all. */
        assert_null(find(fx, "pcie_aer_device_errors_total", "0000:01:00.0", "correctable"));
        pcie_monitor_free(mon);
}

/* An AER file that cannot be read as a file: the warning names the file
 * and the reason apart ("aer_dev_correctable: Is a directory", never
 * "aer_dev_correctable0: ..."), and a FIFO never blocks the reader. */
static void test_aer_unreadable_files(void **state)
{
        struct fixture *fx = *state;
        char path[256];
        struct pcie_monitor *mon;

        snprintf(path, sizeof(path), "%s/sys/bus/pci/devices/0000:02:00.0/aer_dev_correctable",
                 fx->root);
        assert_int_equal(unlink(path), 0);
        assert_int_equal(mkdir(path, 0755), 0);
        mon = start(fx, fx->dump_a, true, NULL);
        sample(fx, mon);
        assert_int_equal(fx->warnings, 1);
        assert_string_equal(fx->last_warning, "0000:02:00.0: cannot use AER statistics from "
                                              "aer_dev_correctable: Is a directory; skipping them");
        pcie_monitor_free(mon);

        /* A FIFO: the old open() waited for a writer for ever. */
        assert_int_equal(rmdir(path), 0);
        assert_int_equal(mkfifo(path, 0644), 0);
        fx->warnings = 0;
        alarm(20); /* a blocked reader fails the test instead of hanging it */
        mon = start(fx, fx->dump_a, true, NULL);
        sample(fx, mon);
        alarm(0);
        assert_int_equal(fx->warnings, 1);
        assert_non_null(strstr(fx->last_warning, "aer_dev_correctable: Invalid argument"));
        assert_non_null(find(fx, "pcie_link_up", "0000:02:00.0", ""));
        pcie_monitor_free(mon);
}

static void test_filter(void **state)
{
        struct fixture *fx = *state;
        struct bdf_filter filter = {0};
        struct pcie_monitor *mon;
        size_t selected;

        assert_int_equal(bdf_filter_add(&filter, "*:00.0", false), 0);
        assert_int_equal(bdf_filter_add(&filter, "02:00.0", true), 0);
        mon = start(fx, fx->dump_a, false, &filter);
        sample(fx, mon);
        assert_non_null(find(fx, "pcie_device_info", "0000:01:00.0", ""));
        assert_null(find(fx, "pcie_device_info", "0000:02:00.0", ""));
        assert_null(find(fx, "pcie_device_info", "0000:00:01.0", ""));
        assert_int_equal(pcie_monitor_function_count(mon, &selected), 4);
        assert_int_equal(selected, 1);
        /* Filtering does not change the audit: 00:01.0's finding is still
         * computed from the whole tree, just not emitted. */
        assert_non_null(find(fx, "pcie_audit_finding", "0000:01:00.0", "mps_below_path"));
        pcie_monitor_free(mon);
        bdf_filter_clear(&filter);
}

static void test_scan_failure_logged_once(void **state)
{
        struct fixture *fx = *state;
        struct pcie_monitor *mon = start(fx, fx->dump_a, false, NULL);
        char saved[160];

        snprintf(saved, sizeof(saved), "%s.saved", fx->dump_a);
        assert_int_equal(rename(fx->dump_a, saved), 0);
        fx->errors = 0;
        assert_int_equal(pcie_monitor_sample(mon, record, fx), -EIO);
        assert_int_equal(pcie_monitor_sample(mon, record, fx), -EIO);
        assert_int_equal(fx->errors, 1);
        assert_int_equal(rename(saved, fx->dump_a), 0);
        sample(fx, mon);
        assert_non_null(find(fx, "pcie_device_info", "0000:02:00.0", ""));
        pcie_monitor_free(mon);
}

/* @dump cut to the first 64 bytes of each function, as a reader without
 * CAP_SYS_ADMIN sees configuration space ("00:" to "30:" lines kept). */
static void write_header_only_dump(const char *dump, const char *out)
{
        FILE *in = fopen(dump, "r"), *o = fopen(out, "w");
        char line[256];

        assert_non_null(in);
        assert_non_null(o);
        while (fgets(line, sizeof(line), in)) {
                char *end;
                unsigned long off = strtoul(line, &end, 16);

                if (end != line && *end == ':' && off >= 0x40)
                        continue;
                fputs(line, o);
        }
        fclose(in);
        assert_int_equal(fclose(o), 0);
}

/* Without CAP_SYS_ADMIN every function shows 64 bytes: one NOTICE for the
 * whole scan, naming how many and the first, not one per function; none
 * at the next scan. */
static void test_truncated_config_one_line(void **state)
{
        struct fixture *fx = *state;
        char cut[160];
        struct pcie_monitor *mon;

        snprintf(cut, sizeof(cut), "%s/cut.txt", fx->root);
        write_header_only_dump(fx->dump_a, cut);
        mon = start(fx, cut, false, NULL);
        fx->notices = 0;
        sample(fx, mon);
        assert_int_equal(fx->notices, 1);
        assert_non_null(strstr(fx->last_notice, "4 PCI functions (0000:00:01.0 and 3 more)"));
        assert_non_null(strstr(fx->last_notice, "needs CAP_SYS_ADMIN"));
        assert_non_null(find(fx, "pcie_device_info", "0000:02:00.0", ""));
        sample(fx, mon);
        assert_int_equal(fx->notices, 1);
        pcie_monitor_free(mon);
}

/* The default detail: what the full one has, minus what the series budget
 * leaves out (docs/metrics.md), plus the machine's finding counts. */
static void test_detail_default(void **state)
{
        struct fixture *fx = *state;
        struct pcie_monitor *mon = start(fx, fx->dump_a, true, NULL);
        double full_findings[3] = {0, 0, 0};
        static const char *const sev[3] = {"info", "warning", "critical"};
        const struct recorded *r;

        sample(fx, mon);
        for (size_t i = 0; i < fx->count; i++)
                for (int k = 0; k < 3; k++)
                        if (!strcmp(fx->samples[i].metric, "pcie_audit_findings") &&
                            !strcmp(fx->samples[i].type_instance, sev[k]))
                                full_findings[k] += fx->samples[i].gauge;
        pcie_monitor_free(mon);
        assert_true(full_findings[2] >= 1);

        fx->detail = PCIE_DETAIL_DEFAULT;
        mon = start(fx, fx->dump_a, true, NULL);
        sample(fx, mon);
        /* MPS: the configured one; the policies only where they differ
         * (safe raises 01:00.0 from 128 to 256; tune_off keeps it). */
        assert_float_equal(
            find(fx, "pcie_max_payload_size_bytes", "0000:01:00.0", "configured")->gauge, 128, 0);
        assert_null(find(fx, "pcie_max_payload_size_bytes", "0000:01:00.0", "supported"));
        assert_null(find(fx, "pcie_max_payload_size_bytes", "0000:01:00.0", "path_best"));
        assert_null(find(fx, "pcie_payload_efficiency_ratio", "0000:01:00.0", "current"));
        assert_float_equal(
            find(fx, "pcie_policy_max_payload_size_bytes", "0000:01:00.0", "safe")->gauge, 256, 0);
        assert_null(find(fx, "pcie_policy_max_payload_size_bytes", "0000:01:00.0", "tune_off"));
        assert_null(find(fx, "pcie_policy_max_payload_size_bytes", "0000:02:00.0", "tune_off"));
        /* Link capacity: current only. */
        assert_non_null(find(fx, "pcie_link_capacity_bytes_per_second", "0000:01:00.0", "current"));
        assert_null(find(fx, "pcie_link_capacity_bytes_per_second", "0000:01:00.0", "max"));
        /* Findings: the machine's counts equal the sum of the functions'. */
        assert_null(find(fx, "pcie_audit_findings", "0000:00:01.0", "critical"));
        for (int k = 0; k < 3; k++) {
                r = find(fx, "pcie_audit_findings", "", sev[k]);
                assert_non_null(r);
                assert_float_equal(r->gauge, full_findings[k], 0);
                assert_null(strstr(r->labels, "bdf="));
        }
        assert_non_null(find(fx, "pcie_audit_finding", "0000:00:01.0", "mps_above_partner"));
        /* AER: the types that count, and the totals. */
        assert_int_equal(
            find(fx, "pcie_aer_errors_total", "0000:01:00.0", "correctable_RxErr")->counter, 3);
        assert_null(find(fx, "pcie_aer_errors_total", "0000:01:00.0", "fatal_Undefined"));
        assert_int_equal(find(fx, "pcie_aer_device_errors_total", "0000:01:00.0", "fatal")->counter,
                         0);
        /* A type that starts counting appears; one that counted stays, even
         * back at 0 (the device was reset). */
        write_file(fx->root, "sys/bus/pci/devices/0000:01:00.0/aer_dev_correctable",
                   "RxErr 0\nBadTLP 1\nReceiver Error Old Name 2\ndev_cor_errs_bit[9] 4\n"
                   "TOTAL_ERR_COR 7\n");
        write_file(fx->root, "sys/bus/pci/devices/0000:01:00.0/aer_dev_fatal",
                   "Undefined 1\nTOTAL_ERR_FATAL 1\n");
        sample(fx, mon);
        assert_int_equal(
            find(fx, "pcie_aer_errors_total", "0000:01:00.0", "fatal_Undefined")->counter, 1);
        assert_int_equal(
            find(fx, "pcie_aer_errors_total", "0000:01:00.0", "correctable_RxErr")->counter, 0);
        pcie_monitor_free(mon);
}

/* The basic detail: no per-type AER, no policy predictions, no capacity. */
static void test_detail_basic(void **state)
{
        struct fixture *fx = *state;
        struct pcie_monitor *mon;

        fx->detail = PCIE_DETAIL_BASIC;
        mon = start(fx, fx->dump_a, true, NULL);
        sample(fx, mon);
        assert_null(find(fx, "pcie_aer_errors_total", "0000:01:00.0", "correctable_RxErr"));
        assert_int_equal(
            find(fx, "pcie_aer_device_errors_total", "0000:01:00.0", "correctable")->counter, 10);
        assert_null(find(fx, "pcie_policy_max_payload_size_bytes", "0000:01:00.0", "safe"));
        assert_null(find(fx, "pcie_link_capacity_bytes_per_second", "0000:01:00.0", "current"));
        assert_non_null(find(fx, "pcie_link_downtrained", "0000:01:00.0", ""));
        assert_non_null(find(fx, "pcie_audit_findings", "", "critical"));
        assert_non_null(find(fx, "pcie_max_read_request_size_bytes", "0000:01:00.0", ""));
        pcie_monitor_free(mon);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_samples, setup, teardown),
            cmocka_unit_test_setup_teardown(test_link_changes, setup, teardown),
            cmocka_unit_test_setup_teardown(test_filter, setup, teardown),
            cmocka_unit_test_setup_teardown(test_aer_unreadable_files, setup, teardown),
            cmocka_unit_test_setup_teardown(test_scan_failure_logged_once, setup, teardown),
            cmocka_unit_test_setup_teardown(test_truncated_config_one_line, setup, teardown),
            cmocka_unit_test_setup_teardown(test_detail_default, setup, teardown),
            cmocka_unit_test_setup_teardown(test_detail_basic, setup, teardown),
        };

        return cmocka_run_group_tests_name("pcie_monitor", tests, NULL, NULL);
}
