// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cmd_snapshot.c - `pciescope snapshot [-o FILE.tar.gz]`: what reproduces
 * this machine elsewhere, read-only and without secrets, in one tar.gz
 * (libarchive): the configuration space of every function in `lspci -xxxx`
 * form, the PMU directories, kernel release, redacted command line, CPU
 * model lines, NUMA layout, `audit --json`, a simulator description
 * generated from it all (machine_desc.h), and MANIFEST.json saying what
 * was collected, what was kept and removed (redact.h), what was missing
 * and why. The list of files read is fixed here and in machine_facts.c;
 * nothing else is copied. The archive and --description are written
 * through safe_file.h: never through a link planted at their names.
 */
#include "pciescope_config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>
#include <json-c/json.h>

#include "calibrate.h"
#include "cli.h"
#include "hw_env.h"
#include "machine_desc.h"
#include "machine_facts.h"
#include "perf_pmu.h"
#include "ptt_capture.h"
#include "redact.h"
#include "safe_file.h"
#include "sample.h"

/* The PMU directories a snapshot keeps, and their files. */
static const char *const pmu_prefixes[] = {"hisi_pcie", "hisi_ptt", "uncore_iio"};
static const char *const pmu_files[] = {"type", "cpumask", "identifier",
                                        "bus",  "bdf_min", "bdf_max"};
static const char *const pmu_dirs[] = {"format", "events", "root_port_filters",
                                       "requester_filters"};
/* /proc/cpuinfo lines that say which CPU this is (nothing else of it). */
static const char *const cpuinfo_keys[] = {"vendor_id",   "cpu family",      "model",
                                           "model name",  "CPU implementer", "CPU architecture",
                                           "CPU variant", "CPU part",        "CPU revision"};

struct snap {
        struct archive *a;
        struct hw_env *env;
        json_object *collected; /* {"what": ["file", ...]} */
        json_object *missing;   /* [{"what", "why"}] */
        time_t now;
        int error; /* first archive error, as -errno */
};

static void add_missing(struct snap *s, const char *what, const char *why)
{
        json_object *o = json_object_new_object();

        json_object_object_add(o, "what", json_object_new_string(what));
        json_object_object_add(o, "why", json_object_new_string(why));
        json_object_array_add(s->missing, o);
}

/* One regular file of @len bytes into the archive. */
static int put(struct snap *s, const char *name, const void *data, size_t len, const char *what)
{
        struct archive_entry *e;

        if (s->error)
                return s->error;
        e = archive_entry_new();
        if (!e)
                return s->error = -ENOMEM;
        archive_entry_set_pathname(e, name);
        archive_entry_set_size(e, (la_int64_t)len);
        archive_entry_set_filetype(e, AE_IFREG);
        archive_entry_set_perm(e, 0644);
        archive_entry_set_mtime(e, s->now, 0);
        if (archive_write_header(s->a, e) != ARCHIVE_OK ||
            (len && archive_write_data(s->a, data, len) != (la_ssize_t)len)) {
                cli_error("snapshot: writing %s into the archive: %s", name,
                          archive_error_string(s->a));
                s->error = -EIO;
        }
        archive_entry_free(e);
        if (!s->error && what) {
                json_object *files;

                if (!json_object_object_get_ex(s->collected, what, &files)) {
                        files = json_object_new_array();
                        json_object_object_add(s->collected, what, files);
                }
                json_object_array_add(files, json_object_new_string(name));
        }
        return s->error;
}

static int put_text(struct snap *s, const char *name, const char *text, const char *what)
{
        return put(s, name, text, strlen(text), what);
}

/* A sysfs/procfs file copied as it is under the same relative path; false
 * when it could not be read (absent files are normal: no note). */
static bool copy_file(struct snap *s, enum hw_fs fs, const char *rel, const char *what)
{
        char buf[8192], name[512];
        ssize_t n = hw_read_file(s->env, fs, buf, sizeof(buf), "%s", rel);

        if (n < 0)
                return false;
        snprintf(name, sizeof(name), "%s/%s", fs == HW_SYSFS ? "sys" : "proc", rel);
        put(s, name, buf, (size_t)n, what);
        return true;
}

/* ---- lspci -xxxx ---- */

/* The configuration space of every function as `lspci -xxxx` prints it:
 * a line naming the function, then 16 bytes a line; `lspci -F` and
 * `pciescope --pci-dump` read it back. */
static int put_lspci(struct snap *s, const struct md_facts *f)
{
        size_t cap = 256 + f->function_count * (80 + 4096 / 16 * 60), len = 0; /* 53 a row */
        char *text = malloc(cap);
        int ret;

        if (!text)
                return -ENOMEM;
        for (size_t i = 0; i < f->function_count; i++) {
                const struct md_function *fn = &f->functions[i];
                char bdf[PCI_BDF_LEN];

                pci_addr_format(&fn->addr, bdf);
                len += (size_t)snprintf(text + len, cap - len, "%s", bdf);
                if (fn->cfg_len >= 12)
                        len += (size_t)snprintf(text + len, cap - len,
                                                " Class %02x%02x: Device %02x%02x:%02x%02x",
                                                fn->cfg[11], fn->cfg[10], fn->cfg[1], fn->cfg[0],
                                                fn->cfg[3], fn->cfg[2]);
                len += (size_t)snprintf(text + len, cap - len, "\n");
                for (size_t off = 0; off + 16 <= fn->cfg_len; off += 16) {
                        len += (size_t)snprintf(text + len, cap - len, "%02zx:", off);
                        for (size_t k = 0; k < 16; k++)
                                len += (size_t)snprintf(text + len, cap - len, " %02x",
                                                        fn->cfg[off + k]);
                        len += (size_t)snprintf(text + len, cap - len, "\n");
                }
                len += (size_t)snprintf(text + len, cap - len, "\n");
        }
        ret = put(s, "lspci-xxxx.txt", text, len,
                  "configuration space of every function, `lspci -xxxx` format, serial numbers "
                  "and VPD data zeroed");
        free(text);
        return ret;
}

/* ---- sysfs ---- */

struct dir_ctx {
        struct snap *s;
        const char *dir; /* relative to the sysfs root */
        const char *what;
        bool dies; /* also die* files */
};

static int visit_file(void *ctx, const char *name)
{
        struct dir_ctx *d = ctx;
        char rel[512];

        if (d->dies && strncmp(name, "die", 3))
                return 0;
        snprintf(rel, sizeof(rel), "%s/%s", d->dir, name);
        copy_file(d->s, HW_SYSFS, rel, d->what);
        return d->s->error;
}

static void put_pmus(struct snap *s)
{
        for (size_t p = 0; p < sizeof(pmu_prefixes) / sizeof(pmu_prefixes[0]); p++) {
                char **names = NULL;
                int n = perf_pmu_list(s->env, pmu_prefixes[p], &names);

                for (int i = 0; i < n && !s->error; i++) {
                        char dir[256], rel[512];
                        struct dir_ctx d = {.s = s, .dir = dir, .what = "PMU sysfs files"};

                        snprintf(dir, sizeof(dir), "bus/event_source/devices/%s", names[i]);
                        for (size_t k = 0; k < sizeof(pmu_files) / sizeof(pmu_files[0]); k++) {
                                snprintf(rel, sizeof(rel), "%s/%s", dir, pmu_files[k]);
                                copy_file(s, HW_SYSFS, rel, d.what);
                        }
                        d.dies = true;
                        hw_list_dir(s->env, HW_SYSFS, visit_file, &d, "%s", dir);
                        d.dies = false;
                        for (size_t k = 0; k < sizeof(pmu_dirs) / sizeof(pmu_dirs[0]); k++) {
                                char sub[300];
                                struct dir_ctx e = d;

                                snprintf(sub, sizeof(sub), "%s/%s", dir, pmu_dirs[k]);
                                e.dir = sub;
                                hw_list_dir(s->env, HW_SYSFS, visit_file, &e, "%s", sub);
                        }
                }
                perf_pmu_list_free(names);
        }
}

static void put_function_files(struct snap *s, const struct md_facts *f)
{
        static const char *const files[] = {"numa_node", "aer_dev_correctable", "aer_dev_fatal",
                                            "aer_dev_nonfatal"};

        for (size_t i = 0; i < f->function_count && !s->error; i++) {
                char bdf[PCI_BDF_LEN], rel[256];

                pci_addr_format(&f->functions[i].addr, bdf);
                for (size_t k = 0; k < sizeof(files) / sizeof(files[0]); k++) {
                        snprintf(rel, sizeof(rel), "bus/pci/devices/%s/%s", bdf, files[k]);
                        copy_file(s, HW_SYSFS, rel, "NUMA node and AER counters per function");
                }
        }
}

static int visit_node(void *ctx, const char *name)
{
        struct snap *s = ctx;
        char rel[256];
        unsigned int n;

        if (sscanf(name, "node%u", &n) != 1)
                return 0;
        snprintf(rel, sizeof(rel), "devices/system/node/%s/cpulist", name);
        copy_file(s, HW_SYSFS, rel, "NUMA layout: the CPUs of each node");
        return s->error;
}

/* Only the lines of /proc/cpuinfo that name the CPU, each once. */
static void put_cpuinfo(struct snap *s)
{
        size_t size = 8u << 20, len = 0;
        char *text = malloc(size), *out = malloc(4096), *line, *save = NULL;
        ssize_t n;

        if (!text || !out)
                goto out;
        n = hw_read_file(s->env, HW_PROCFS, text, size, "cpuinfo");
        if (n < 0) {
                add_missing(s, "CPU model", "/proc/cpuinfo unreadable");
                goto out;
        }
        out[0] = '\0';
        for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                size_t klen = strcspn(line, ":");
                bool keep = false;

                while (klen && (line[klen - 1] == '\t' || line[klen - 1] == ' '))
                        klen--;
                for (size_t k = 0; k < sizeof(cpuinfo_keys) / sizeof(cpuinfo_keys[0]); k++)
                        keep |= strlen(cpuinfo_keys[k]) == klen &&
                                !strncmp(line, cpuinfo_keys[k], klen);
                if (!keep || len + strlen(line) + 2 >= 4096)
                        continue;
                /* each distinct line once */
                {
                        char *hit = strstr(out, line);
                        size_t l = strlen(line);

                        if (hit && (hit == out || hit[-1] == '\n') && hit[l] == '\n')
                                continue;
                }
                len += (size_t)snprintf(out + len, 4096 - len, "%s\n", line);
        }
        put(s, "cpuinfo-model.txt", out, len, "CPU model lines of /proc/cpuinfo, each once");
out:
        free(text);
        free(out);
}

static void put_system(struct snap *s, const struct machine_facts *mf)
{
        const struct md_facts *f = machine_facts_get(mf);

        copy_file(s, HW_PROCFS, "sys/kernel/osrelease", "kernel release");
        if (f->cmdline) {
                size_t len = strlen(f->cmdline);
                char *text = malloc(len + 2);

                if (!text) {
                        s->error = -ENOMEM;
                        return;
                }
                memcpy(text, f->cmdline, len);
                text[len] = '\n';
                put(s, "proc/cmdline", text, len + 1,
                    "kernel command line, addresses and secrets replaced by <redacted>");
                free(text);
        }
        copy_file(s, HW_SYSFS, "devices/system/cpu/online", "online CPUs");
        hw_list_dir(s->env, HW_SYSFS, visit_node, s, "devices/system/node");
        put_cpuinfo(s);
}

/* ---- PTT (--trace) ---- */

static void sleep_until(double t)
{
        double now = cli_now();

        if (t > now) {
                struct timespec ts = {.tv_sec = (time_t)(t - now),
                                      .tv_nsec =
                                          (long)((t - now - (double)(time_t)(t - now)) * 1e9)};

                nanosleep(&ts, NULL);
        }
}

/* One short window of every hisi_ptt device with the capture the plugin
 * uses (ptt_capture.h): its summary samples, as JSON. */
static void put_traces(struct snap *s, const struct cli_opts *opts)
{
        char **names = NULL;
        int n = perf_pmu_list(s->env, "hisi_ptt", &names);

        if (n <= 0) {
                add_missing(s, "PTT recording (--trace)", "no hisi_ptt devices");
                perf_pmu_list_free(names);
                return;
        }
        for (int i = 0; i < n && !s->error; i++) {
                struct ptt_capture_opts o = opts->cfg.trace;
                struct sample_set set = SAMPLE_SET_INIT;
                struct ptt_capture *c;
                char err[256] = "", file[128];
                double t0 = cli_now();
                json_object *arr;

                o.period_s = o.duration_s * 2 + 1;
                if (ptt_capture_new(s->env, names[i], &o, NULL, 0, 1, t0, &c, err, sizeof(err))) {
                        add_missing(s, names[i], *err ? err : "the trace could not start");
                        continue;
                }
                /* one window: start, poll until it ends */
                while (ptt_capture_stats(c)->windows[PTT_WINDOW_OK] +
                               ptt_capture_stats(c)->windows[PTT_WINDOW_STOPPED] +
                               ptt_capture_stats(c)->windows[PTT_WINDOW_BUSY] +
                               ptt_capture_stats(c)->windows[PTT_WINDOW_ERROR] ==
                           0 &&
                       cli_now() < t0 + o.period_s) {
                        ptt_capture_tick(c, cli_now());
                        sleep_until(ptt_capture_next_tick(c));
                }
                arr = json_object_new_array();
                if (!ptt_capture_samples(c, &set))
                        for (size_t k = 0; k < set.count; k++)
                                json_object_array_add(arr, cli_sample_json(&set.samples[k]));
                snprintf(file, sizeof(file), "ptt/%s.json", names[i]);
                put_text(s, file,
                         json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PRETTY |
                                                                 JSON_C_TO_STRING_NOSLASHESCAPE),
                         "a short PTT trace window summarised (TLP mix, sizes, requesters, "
                         "latency)");
                json_object_put(arr);
                sample_set_free(&set);
                ptt_capture_free(c);
        }
        perf_pmu_list_free(names);
}

/*
 * A calibration run (`snapshot --device BDF`, with calibrate's --bytes,
 * --run, --repeat): its file goes into the archive as calibration.json,
 * and what it settled becomes the description's hidden units, so the
 * simulated copy counts like this machine.
 */
static void put_calibration(struct snap *s, const struct cli_opts *opts, struct engine *e,
                            struct md_units *u)
{
        struct calibration c;
        json_object *o = NULL;

        memset(u, 0, sizeof(*u));
        if (!opts->calib_device)
                return;
        if (cli_calibrate_run(opts, e, &c, &o)) {
                add_missing(s, "calibration", "calibrate could not run (said on stderr)");
                return;
        }
        put_text(s, "calibration.json",
                 json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
                                                       JSON_C_TO_STRING_NOSLASHESCAPE),
                 "`pciescope calibrate` of the --device (docs/real-hardware.md)");
        json_object_put(o);
        u->have_flux = c.flux_unit_bytes.verdict == CALIB_CONSISTENT;
        u->flux_unit_bytes = c.flux_unit_bytes.value;
        u->have_time_clock = c.time_clock_hz.verdict == CALIB_CONSISTENT;
        u->time_clock_hz = c.time_clock_hz.value;
        u->have_latency_clock = c.latency_clock_hz.verdict == CALIB_CONSISTENT;
        u->latency_clock_hz = c.latency_clock_hz.value;
        u->have_ptt_clock = c.ptt_clock_hz.verdict == CALIB_CONSISTENT;
        u->ptt_clock_hz = c.ptt_clock_hz.value;
        u->have_ptt_time = c.ptt_time_mode != CALIB_TIME_UNDECIDED;
        u->ptt_time_absolute = c.ptt_time_mode == CALIB_TIME_ABSOLUTE;
}

/* ---- the whole snapshot ---- */

/* IIOStackBus lines of the configuration, as the generator takes them. */
static size_t stack_buses(const struct cli_opts *opts, struct md_stack_bus *out, size_t max)
{
        const struct intel_iio_opts *io = &opts->cfg.iio;
        size_t n = 0;

        for (size_t i = 0; i < io->map_count && n < max; i++) {
                const char *num = strrchr(io->maps[i].pmu, '_');

                if (!num)
                        continue;
                out[n] = (struct md_stack_bus){
                    .box = (unsigned int)atoi(num + 1),
                    .socket = io->maps[i].socket,
                    .bus = {.domain = io->maps[i].domain, .bus = io->maps[i].bus}};
                n++;
        }
        return n;
}

static int write_description(const char *path, const char *text)
{
        int ret = safe_file_write(path, text, strlen(text), 0666);

        if (ret) {
                cli_error("snapshot: cannot write the description to %s: %s", path, strerror(-ret));
                return -1;
        }
        return 0;
}

static json_object *string_array(const char *const *v)
{
        json_object *arr = json_object_new_array();

        for (; *v; v++)
                json_object_array_add(arr, json_object_new_string(*v));
        return arr;
}

/* What the archive keeps of the machine, and what was taken out of it. */
static void kept_and_removed(json_object *m, const struct machine_facts *mf)
{
        static const char *const kept[] = {
            "lspci-xxxx.txt: the configuration space of every function (header, IDs, "
            "capabilities, link and error registers, BAR values) less the fields under "
            "removed.configuration_space",
            "sys/bus/pci/devices/<bdf>/: numa_node and the aer_dev_* counts",
            "sys/bus/event_source/devices/: the hisi_pcie, hisi_ptt and uncore_iio PMU files",
            "proc/cmdline: the kernel command line less the values under "
            "removed.kernel_command_line",
            "proc/sys/kernel/osrelease, the online CPUs and the NUMA layout",
            "cpuinfo-model.txt: the lines of /proc/cpuinfo naming the CPU, each once",
            "audit.json, machine.json (from the above), ptt/*.json with --trace, "
            "calibration.json with --device",
            NULL};
        json_object *removed = json_object_new_object();
        size_t dsn, vpd;

        machine_facts_cfg_redacted(mf, &dsn, &vpd);
        json_object_object_add(m, "kept", string_array(kept));
        json_object_object_add(removed, "configuration_space", string_array(redact_rules(true)));
        json_object_object_add(removed, "kernel_command_line", string_array(redact_rules(false)));
        json_object_object_add(m, "removed", removed);
        json_object_object_add(m, "cmdline_values_redacted",
                               json_object_new_int(machine_facts_redacted(mf)));
        json_object_object_add(m, "device_serial_numbers_zeroed",
                               json_object_new_int64((int64_t)dsn));
        json_object_object_add(m, "vpd_data_registers_zeroed", json_object_new_int64((int64_t)vpd));
}

static json_object *manifest(struct snap *s, const struct machine_facts *mf, const char *source,
                             bool simulated, const char *desc_file, const struct md_notes *notes,
                             const char *kernel, const char *kernel_why)
{
        json_object *m = json_object_new_object(), *d = json_object_new_object();
        json_object *arr = json_object_new_array();
        char when[32];

        strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&s->now));
        json_object_object_add(m, "pciescope_version", json_object_new_string(PACKAGE_VERSION));
        json_object_object_add(m, "created", json_object_new_string(when));
        json_object_object_add(m, "source", json_object_new_string(source));
        json_object_object_add(m, "simulated", json_object_new_boolean(simulated));
        json_object_object_add(m, "collected", json_object_get(s->collected));
        json_object_object_add(m, "missing", json_object_get(s->missing));
        kept_and_removed(m, mf);
        json_object_object_add(
            m, "never_collected",
            json_object_new_string("host name, network and MAC addresses, serial numbers, user "
                                   "names, passwords, files outside the list above, "
                                   "environment, the rest of /proc/cpuinfo, BAR contents, "
                                   "device memory, logs"));
        json_object_object_add(d, "file", desc_file ? json_object_new_string(desc_file) : NULL);
        json_object_object_add(d, "kernel", json_object_new_string(kernel));
        json_object_object_add(d, "kernel_from", json_object_new_string(kernel_why));
        for (size_t i = 0; i < notes->count; i++)
                json_object_array_add(arr, json_object_new_string(notes->text[i]));
        if (notes->dropped) {
                char more[64];

                snprintf(more, sizeof(more), "... and %zu more", notes->dropped);
                json_object_array_add(arr, json_object_new_string(more));
        }
        json_object_object_add(d, "approximated_or_left_out", arr);
        json_object_object_add(m, "machine_description", d);
        return m;
}

/*
 * A signal that ends the run while the archive is being written removes
 * its temporary file first (then does what it would have done): Ctrl-C or
 * a file size limit (SIGXFSZ) leave no half archive behind either.
 */
static const int cleanup_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGXFSZ};
static char cleanup_path[sizeof(((struct safe_file *)0)->tmp)];
static volatile sig_atomic_t cleanup_armed;
static struct sigaction cleanup_old[sizeof(cleanup_signals) / sizeof(cleanup_signals[0])];

static void cleanup_on_signal(int sig)
{
        if (cleanup_armed)
                unlink(cleanup_path);
        signal(sig, SIG_DFL);
        raise(sig);
}

static void cleanup_arm(const char *tmp)
{
        struct sigaction sa = {.sa_handler = cleanup_on_signal};

        snprintf(cleanup_path, sizeof(cleanup_path), "%s", tmp);
        cleanup_armed = 1;
        sigemptyset(&sa.sa_mask);
        for (size_t i = 0; i < sizeof(cleanup_signals) / sizeof(cleanup_signals[0]); i++) {
                sigaction(cleanup_signals[i], NULL, &cleanup_old[i]);
                if (cleanup_old[i].sa_handler != SIG_IGN) /* ignored stays ignored */
                        sigaction(cleanup_signals[i], &sa, NULL);
        }
}

static void cleanup_disarm(void)
{
        if (!cleanup_armed)
                return;
        for (size_t i = 0; i < sizeof(cleanup_signals) / sizeof(cleanup_signals[0]); i++)
                if (cleanup_old[i].sa_handler != SIG_IGN)
                        sigaction(cleanup_signals[i], &cleanup_old[i], NULL);
        cleanup_armed = 0;
}

/* "pciescope-snapshot-20261126-014500.tar.gz" */
static void default_name(time_t now, char *out, size_t size)
{
        char when[32];

        strftime(when, sizeof(when), "%Y%m%d-%H%M%S", gmtime(&now));
        snprintf(out, size, "pciescope-snapshot-%s.tar.gz", when);
}

int cmd_snapshot(const struct cli_opts *opts, struct engine *e)
{
        struct snap s = {.env = engine_env(e), .now = time(NULL)};
        struct md_stack_bus buses[64];
        struct machine_facts *mf = NULL;
        struct md_facts facts;
        struct md_units units;
        struct md_notes *notes = calloc(1, sizeof(*notes));
        char out_name[128] = "", why[512] = "", source[160], kernel_why[160], machine_name[64];
        struct safe_file file = {.fd = -1};
        const char *out = opts->snapshot_out, *sim = engine_simulated(e), *kernel;
        char *audit = NULL, *desc = NULL;
        json_object *m = NULL;
        int ret, status = CLI_EXIT_ERROR;
        bool opened = false, finished = false;

        if (!notes)
                return CLI_EXIT_ERROR;
        if (!out) {
                default_name(s.now, out_name, sizeof(out_name));
                out = out_name;
        }
        if (sim)
                snprintf(source, sizeof(source), "the SIMULATED machine %s (Linux %s drivers)", sim,
                         engine_simulated_kernel(e));
        else if (opts->cfg.pci_dump)
                snprintf(source, sizeof(source), "an lspci dump");
        else
                snprintf(source, sizeof(source), "a live machine");
        ret = machine_facts_read(s.env, buses, stack_buses(opts, buses, 64), source, &mf, why,
                                 sizeof(why));
        if (ret) {
                cli_error("snapshot: cannot read the PCI functions: %s",
                          *why ? why : strerror(-ret));
                goto out;
        }
        s.collected = json_object_new_object();
        s.missing = json_object_new_array();
        s.a = archive_write_new();
        if (!s.a || archive_write_add_filter_gzip(s.a) != ARCHIVE_OK ||
            archive_write_set_format_pax_restricted(s.a) != ARCHIVE_OK) {
                cli_error("snapshot: libarchive: %s",
                          s.a ? archive_error_string(s.a) : "no memory");
                goto out;
        }
        /* Written next to @out under a fresh name (O_EXCL|O_NOFOLLOW) and
         * renamed at the end: a failed run leaves neither half an archive
         * nor a lost earlier one of that name, and a link planted at either
         * name is never written through. */
        ret = safe_file_open(&file, out, 0666);
        if (ret) {
                cli_error("snapshot: cannot write %s: %s", out, strerror(-ret));
                goto out;
        }
        opened = true;
        cleanup_arm(file.tmp);
        if (archive_write_open_fd(s.a, file.fd) != ARCHIVE_OK) {
                cli_error("snapshot: cannot write %s: %s", out,
                          archive_errno(s.a) > 0 ? strerror(archive_errno(s.a))
                                                 : archive_error_string(s.a));
                goto out;
        }
        for (size_t i = 0; i < machine_facts_missing_count(mf); i++) {
                const char *what, *w;

                machine_facts_missing(mf, i, &what, &w);
                add_missing(&s, what, w);
        }

        put_lspci(&s, machine_facts_get(mf));
        put_function_files(&s, machine_facts_get(mf));
        put_pmus(&s);
        put_system(&s, mf);
        audit = cli_audit_json(opts, s.env);
        if (audit)
                put_text(&s, "audit.json", audit, "`pciescope audit --json`");
        else
                add_missing(&s, "audit", "the audit could not run (said on stderr)");
        if (opts->snapshot_trace)
                put_traces(&s, opts);
        put_calibration(&s, opts, e, &units);
        facts = *machine_facts_get(mf);
        facts.units = &units;

        kernel = machine_desc_kernel(&facts, kernel_why, sizeof(kernel_why));
        strftime(machine_name, sizeof(machine_name), "snapshot-%Y%m%d-%H%M%S", gmtime(&s.now));
        ret = machine_desc_build(&facts, machine_name, &desc, notes);
        if (ret == -ENOMEM)
                goto out;
        if (desc)
                put_text(&s, "machine.json", desc,
                         "simulator description generated from the above (docs/simulator.md)");
        else
                add_missing(&s, "machine description",
                            notes->count ? notes->text[notes->count - 1] : "nothing simulatable");
        m = manifest(&s, mf, source, sim != NULL, desc ? "machine.json" : NULL, notes, kernel,
                     kernel_why);
        put_text(&s, "MANIFEST.json",
                 json_object_to_json_string_ext(m, JSON_C_TO_STRING_PRETTY |
                                                       JSON_C_TO_STRING_NOSLASHESCAPE),
                 NULL);
        if (s.error || archive_write_close(s.a) != ARCHIVE_OK) {
                if (!s.error)
                        cli_error("snapshot: cannot finish %s: %s", out,
                                  archive_errno(s.a) > 0 ? strerror(archive_errno(s.a))
                                                         : archive_error_string(s.a));
                goto out;
        }
        ret = safe_file_commit(&file);
        cleanup_disarm();
        if (ret) {
                cli_error("snapshot: cannot write %s: %s", out, strerror(-ret));
                goto out;
        }
        finished = true;
        fprintf(stderr, "pciescope: snapshot written to %s (%zu functions, %s)\n", out,
                machine_facts_get(mf)->function_count,
                desc ? "with a machine description" : "no machine description: see MANIFEST.json");
        status = CLI_EXIT_OK;
        if (opts->snapshot_description) {
                if (!desc) {
                        cli_error("snapshot: no machine description to write to %s: %s",
                                  opts->snapshot_description,
                                  notes->count ? notes->text[notes->count - 1]
                                               : "nothing simulatable");
                        status = CLI_EXIT_ERROR;
                } else if (write_description(opts->snapshot_description, desc)) {
                        status = CLI_EXIT_ERROR;
                }
        }
out:
        if (s.a)
                archive_write_free(s.a);
        if (opened && !finished)
                safe_file_abort(&file); /* never leave half an archive */
        cleanup_disarm();
        json_object_put(m);
        json_object_put(s.collected);
        json_object_put(s.missing);
        free(audit);
        free(desc);
        free(notes);
        machine_facts_free(mf);
        return status;
}
