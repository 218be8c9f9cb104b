/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sim.c - bundle a simulated machine into a hw_env. See sim.h.
 */
#include "sim.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hw_env.h"
#include "pci_addr.h"
#include "pci_source.h"
#include "pcie_link.h"
#include "sim_events.h"
#include "sim_hisi_ptt.h"
#include "sim_dwc_pcie.h"
#include "sim_intel_iio.h"
#include "sim_amd_df.h"
#include "sim_nvidia_pcie.h"
#include "sim_sysfs.h"

#ifndef PCIESCOPE_MACHINE_DIR
#define PCIESCOPE_MACHINE_DIR "/usr/share/pciescope/machines"
#endif

/*
 * A tree is <tmp>/pciescope-sim-<pid>-XXXXXX holding the marker file: when
 * its process was killed (collectd under kill -9), the next sim_open in the
 * same parent removes it. Only the pattern plus the marker make a tree ours
 * to remove.
 */
#define TREE_PREFIX "pciescope-sim-"
#define TREE_MARKER ".pciescope-sim"

struct sim {
        struct sim_machine *machine;
        struct sim_pmu *pmu;
        struct sim_iio *iio;      /* NULL without an Intel part */
        struct sim_df *df;        /* NULL without an AMD data fabric */
        struct sim_dwc *dwc;      /* NULL without DesignWare Root Ports */
        struct sim_nvpcie *nv;    /* NULL without a Grace part */
        struct sim_ptt *ptt;      /* PTT trace devices (cores with a PTT function) */
        struct perf_ops ops;      /* routes to pmu or iio */
        struct load_ops load_ops; /* calibration loads into the PMU model */
        /* CPU time of the callers' threads spent inside the simulation:
         * what a real machine's kernel and hardware would do instead. */
        _Atomic uint64_t perf_ns, refresh_ns;
        uint64_t *aer_written; /* what sim_refresh last wrote (sim_sysfs.h) */
        uint8_t *flapped;      /* per device: its flapping link shows flap_width */
        uint8_t *shown;        /* per device: its directory is in the tree (sim_events.h) */
        /* per core: the binding of its PMU whose directory the tree shows
         * (PMU_NOT_SHOWN: none, unbound) */
        unsigned int pmu_shown[SIM_MAX_CORES];
        unsigned int ptt_shown[SIM_MAX_CORES]; /* the same for each core's PTT device */
        unsigned int iio_shown[256];           /* ... and each IIO free-running PMU (box) */
        unsigned int df_shown;                 /* ... and amd_df */
        /* CPUs going offline and online (sim_events.h), replayed up to
         * cpu_done: which are offline, and each PMU's cpumask CPU (-1:
         * none online) as the drivers' CPU hotplug callbacks move it. */
        uint8_t *cpu_off;
        int pmu_cpu[SIM_MAX_CORES];
        int iio_cpu[SIM_MAX_SOCKETS]; /* per socket: the CPU its IIO PMUs count on */
        double cpu_done;
        pthread_mutex_t refresh_lock;
        _Atomic double next_pmu_change; /* when the event log next binds or unbinds a PMU */
        struct pci_source *pci;
        char root[4096];
        char sys[4200];
        char proc[4200];
};

const char *sim_default_machine_dir(void)
{
        const char *env = getenv("PCIESCOPE_MACHINE_DIR");

        return env && *env ? env : PCIESCOPE_MACHINE_DIR;
}

const char *sim_kernel_names(void)
{
        return "5.17, 6.2, 6.9, 6.12, 6.15";
}

int sim_kernel_parse(const char *text, enum sim_kernel *out)
{
        static const enum sim_kernel all[] = {SIM_KERNEL_5_17, SIM_KERNEL_6_2, SIM_KERNEL_6_9,
                                              SIM_KERNEL_6_12, SIM_KERNEL_6_15};

        for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
                if (!strcmp(text, sim_kernel_name(all[i]))) {
                        *out = all[i];
                        return 0;
                }
        }
        return -EINVAL;
}

/* ---- trees left by killed processes ---- */

/* Whether @name is TREE_PREFIX "<pid>-XXXXXX"; *@pid receives the pid. */
static bool tree_name(const char *name, pid_t *pid)
{
        const char *p = name + strlen(TREE_PREFIX);
        unsigned long v;
        char *end;

        if (strncmp(name, TREE_PREFIX, strlen(TREE_PREFIX)) || *p < '1' || *p > '9')
                return false;
        errno = 0;
        v = strtoul(p, &end, 10);
        if (errno || v > INT_MAX || *end != '-' || strlen(end + 1) != 6)
                return false;
        *pid = (pid_t)v;
        return true;
}

/*
 * Removes the trees in @parent whose process no longer exists: a directory
 * (never a symlink) named like ours, owned by us, holding our marker file.
 * Best effort: a tree that cannot be removed stays, and sim_open goes on.
 */
static void remove_stale_trees(const char *parent)
{
        DIR *dir = opendir(parent);
        struct dirent *de;

        if (!dir)
                return;
        while ((de = readdir(dir))) {
                char root[PATH_MAX], marker[PATH_MAX + 32];
                struct stat st;
                pid_t pid;

                if (!tree_name(de->d_name, &pid) || pid == getpid())
                        continue;
                if (kill(pid, 0) == 0 || errno != ESRCH)
                        continue; /* alive (EPERM: someone else's, alive too) */
                if (snprintf(root, sizeof(root), "%s/%s", parent, de->d_name) >= (int)sizeof(root))
                        continue;
                snprintf(marker, sizeof(marker), "%s/" TREE_MARKER, root);
                if (lstat(root, &st) || !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
                        continue;
                if (lstat(marker, &st) || !S_ISREG(st.st_mode) || unlink(marker))
                        continue;
                sim_sysfs_remove(root);
        }
        closedir(dir);
}

/* Marks @root as a tree of this process (see TREE_MARKER). */
static int write_marker(const char *root)
{
        char path[PATH_MAX + 32], text[64];
        int fd, n, ok;

        snprintf(path, sizeof(path), "%s/" TREE_MARKER, root);
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0)
                return -errno;
        n = snprintf(text, sizeof(text), "pciescope simulated machine of pid %ld\n",
                     (long)getpid());
        ok = write(fd, text, (size_t)n) == n;
        close(fd);
        return ok ? 0 : -EIO;
}

static void remove_tree(const char *root)
{
        char path[PATH_MAX + 32];

        snprintf(path, sizeof(path), "%s/" TREE_MARKER, root);
        unlink(path);
        sim_sysfs_remove(root);
}

/* ---- one perf_ops for both models: open by type, the rest by fd ---- */

static uint64_t thread_cpu_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Every entry into the simulation is timed on the calling thread, into
 * @counter (perf_ns or refresh_ns). */
#define SIM_TIMED(s, counter, call)                                                                \
        ({                                                                                         \
                uint64_t t0_ = thread_cpu_ns();                                                    \
                __typeof__(call) r_ = (call);                                                      \
                atomic_fetch_add_explicit(&(s)->counter, thread_cpu_ns() - t0_,                    \
                                          memory_order_relaxed);                                   \
                r_;                                                                                \
        })

double sim_cpu_seconds(const struct sim *s, double *refresh)
{
        if (refresh)
                *refresh = (double)atomic_load_explicit(&s->refresh_ns, memory_order_relaxed) / 1e9;
        return (double)atomic_load_explicit(&s->perf_ns, memory_order_relaxed) / 1e9;
}

static void refresh_if_due(struct sim *s);

static const struct perf_ops *ops_of_fd(struct sim *s, int fd)
{
        if (s->nv && fd >= SIM_NV_FD_BASE)
                return sim_nvpcie_ops(s->nv);
        if (s->ptt && fd >= SIM_PTT_FD_BASE)
                return sim_ptt_ops(s->ptt);
        if (s->df && fd >= SIM_DF_FD_BASE)
                return sim_df_ops(s->df);
        if (s->dwc && fd >= SIM_DWC_FD_BASE && fd < SIM_DF_FD_BASE)
                return sim_dwc_ops(s->dwc);
        if (s->iio && fd >= SIM_IIO_FD_BASE && fd < SIM_DWC_FD_BASE)
                return sim_iio_ops(s->iio);
        if (fd >= SIM_FD_BASE && fd < SIM_IIO_FD_BASE)
                return sim_pmu_ops(s->pmu);
        return NULL;
}

static int route_open(void *ctx, struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
                      unsigned long flags)
{
        struct sim *s = ctx;
        const struct perf_ops *o = NULL;

        if (!attr)
                return -EFAULT;
        if (attr->type >= SIM_PMU_TYPE_BASE &&
            attr->type - SIM_PMU_TYPE_BASE < SIM_MAX_CORES * SIM_PMU_GENERATIONS)
                o = sim_pmu_ops(s->pmu);
        else if (s->iio &&
                 ((attr->type >= SIM_IIO_TYPE_BASE && attr->type < SIM_IIO_TYPE_BASE + 0x100) ||
                  (attr->type >= SIM_IIO_REBIND_BASE &&
                   attr->type < SIM_IIO_REBIND_BASE + 0x100 * 15)))
                o = sim_iio_ops(s->iio);
        else if (s->df && attr->type >= SIM_DF_TYPE && attr->type < SIM_DF_TYPE + SIM_DF_TYPE_COUNT)
                o = sim_df_ops(s->df);
        else if (s->ptt && attr->type >= SIM_PTT_TYPE_BASE &&
                 attr->type - SIM_PTT_TYPE_BASE < SIM_MAX_CORES * SIM_PMU_GENERATIONS)
                o = sim_ptt_ops(s->ptt);
        else if (s->dwc && attr->type >= SIM_DWC_TYPE_BASE &&
                 attr->type - SIM_DWC_TYPE_BASE < SIM_MAX_DWC_PORTS)
                o = sim_dwc_ops(s->dwc);
        else if (s->nv && attr->type >= SIM_NV_TYPE_BASE &&
                 attr->type < SIM_NV_TYPE_BASE + SIM_MAX_SOCKETS)
                o = sim_nvpcie_ops(s->nv);
        if (!o)
                return -ENOENT;
        refresh_if_due(s);
        return SIM_TIMED(s, perf_ns, o->open(o->ctx, attr, pid, cpu, group_fd, flags));
}

static ssize_t route_read(void *ctx, int fd, void *buf, size_t len)
{
        struct sim *s = ctx;
        const struct perf_ops *o = ops_of_fd(s, fd);

        refresh_if_due(s);
        return o ? SIM_TIMED(s, perf_ns, o->read(o->ctx, fd, buf, len)) : -EBADF;
}

static int route_ioctl(void *ctx, int fd, unsigned long request, unsigned long arg)
{
        struct sim *s = ctx;
        const struct perf_ops *o = ops_of_fd(s, fd);

        refresh_if_due(s);
        return o ? SIM_TIMED(s, perf_ns, o->ioctl(o->ctx, fd, request, arg)) : -EBADF;
}

static int route_mmap(void *ctx, int fd, size_t len, int prot, off_t offset, void **addr)
{
        const struct perf_ops *o = ops_of_fd(ctx, fd);

        if (!o) {
                *addr = NULL;
                return -EBADF;
        }
        return SIM_TIMED((struct sim *)ctx, perf_ns, o->mmap(o->ctx, fd, len, prot, offset, addr));
}

static int route_munmap(void *ctx, void *addr, size_t len)
{
        struct sim *s = ctx;
        const struct perf_ops *o = sim_pmu_ops(s->pmu);

        /* Only the trace model hands out areas (AUX and ring buffers). */
        if (s->ptt && sim_ptt_owns(s->ptt, addr))
                o = sim_ptt_ops(s->ptt);
        return SIM_TIMED(s, perf_ns, o->munmap(o->ctx, addr, len));
}

static int route_close(void *ctx, int fd)
{
        struct sim *s = ctx;
        const struct perf_ops *o = ops_of_fd(s, fd);

        return o ? SIM_TIMED(s, perf_ns, o->close(o->ctx, fd)) : -EBADF;
}

int sim_open(const char *name_or_path, const struct sim_opts *opts, struct sim **out, char *errbuf,
             size_t errlen)
{
        struct sim_opts none = {0};
        struct sim *s;
        char path[4096];
        const char *tmp;
        int ret;

        *out = NULL;
        if (!opts)
                opts = &none;
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        pthread_mutex_init(&s->refresh_lock, NULL);
        atomic_init(&s->next_pmu_change, INFINITY);
        /* A path: with a '/' or (issue 18, `--simulate snapshot.json`) ending in .json. */
        if (strchr(name_or_path, '/') ||
            (strlen(name_or_path) > 5 && !strcmp(name_or_path + strlen(name_or_path) - 5, ".json")))
                snprintf(path, sizeof(path), "%s", name_or_path);
        else
                snprintf(path, sizeof(path), "%s/%s.json",
                         opts->machine_dir ? opts->machine_dir : sim_default_machine_dir(),
                         name_or_path);
        ret = sim_machine_load(path, &s->machine, errbuf, errlen);
        if (ret)
                goto fail;
        for (size_t i = 0; i < SIM_MAX_CORES; i++) {
                s->pmu_shown[i] = 0; /* sim_sysfs_write: the first binding */
                s->ptt_shown[i] = 0;
        }
        s->cpu_done = -1;
        if (opts->kernel && sim_kernel_parse(opts->kernel, &s->machine->kernel)) {
                snprintf(errbuf, errlen, "unknown kernel version \"%s\" (%s)", opts->kernel,
                         sim_kernel_names());
                ret = -EINVAL;
                goto fail;
        }
        tmp = opts->tmp_dir ? opts->tmp_dir : getenv("TMPDIR");
        tmp = tmp && *tmp ? tmp : "/tmp";
        remove_stale_trees(tmp);
        snprintf(s->root, sizeof(s->root), "%s/" TREE_PREFIX "%ld-XXXXXX", tmp, (long)getpid());
        if (!mkdtemp(s->root)) {
                ret = -errno;
                snprintf(errbuf, errlen, "cannot create %s: %s", s->root, strerror(errno));
                s->root[0] = '\0';
                goto fail;
        }
        ret = write_marker(s->root);
        if (ret) {
                snprintf(errbuf, errlen, "cannot write %s/" TREE_MARKER ": %s", s->root,
                         strerror(-ret));
                goto fail;
        }
        ret = sim_sysfs_write(s->machine, s->root, SIM_PMU_TYPE_BASE, errbuf, errlen);
        if (!ret)
                ret = sim_ptt_sysfs_write(s->machine, s->root, SIM_PTT_TYPE_BASE, errbuf, errlen);
        if (!ret)
                ret = sim_dwc_sysfs_write(s->machine, s->root, errbuf, errlen);
        if (!ret && s->machine->amd.present)
                ret = sim_df_sysfs_write(s->machine, s->root, errbuf, errlen);
        if (ret)
                goto fail;
        snprintf(s->sys, sizeof(s->sys), "%s/sys", s->root);
        snprintf(s->proc, sizeof(s->proc), "%s/proc", s->root);
        ret = sim_pmu_new(s->machine, SIM_PMU_TYPE_BASE, opts->clock, opts->clock_ctx, &s->pmu);
        if (ret) {
                snprintf(errbuf, errlen, "cannot start the PMU model: %s", strerror(-ret));
                goto fail;
        }
        ret = sim_ptt_new(s->machine, SIM_PTT_TYPE_BASE, opts->clock, opts->clock_ctx, &s->ptt);
        if (ret) {
                snprintf(errbuf, errlen, "cannot start the PTT model: %s", strerror(-ret));
                goto fail;
        }
        if (s->machine->intel.present) {
                ret = sim_iio_new(s->machine, opts->clock, opts->clock_ctx, &s->iio);
                if (ret) {
                        snprintf(errbuf, errlen, "cannot start the IIO model: %s", strerror(-ret));
                        goto fail;
                }
        }
        if (s->machine->dwc.port_count) {
                ret = sim_dwc_new(s->machine, opts->clock, opts->clock_ctx, &s->dwc);
                if (ret) {
                        snprintf(errbuf, errlen, "cannot start the DesignWare PMU model: %s",
                                 strerror(-ret));
                        goto fail;
                }
        }
        if (s->machine->amd.present) {
                ret = sim_df_new(s->machine, opts->clock, opts->clock_ctx, &s->df);
                if (ret) {
                        snprintf(errbuf, errlen, "cannot start the data fabric model: %s",
                                 strerror(-ret));
                        goto fail;
                }
        }
        if (s->machine->nvidia.present) {
                ret = sim_nvpcie_new(s->machine, opts->clock, opts->clock_ctx, &s->nv);
                if (ret) {
                        snprintf(errbuf, errlen, "cannot start the Grace PCIe PMU model: %s",
                                 strerror(-ret));
                        goto fail;
                }
        }
        s->ops = (struct perf_ops){
            .open = route_open,
            .read = route_read,
            .ioctl = route_ioctl,
            .mmap = route_mmap,
            .munmap = route_munmap,
            .close = route_close,
            .ctx = s,
        };
        /* Changes the schedule makes at its start are there from the first. */
        ret = sim_refresh(s);
        if (ret) {
                snprintf(errbuf, errlen, "cannot bring the tree to its start: %s", strerror(-ret));
                goto fail;
        }
        *out = s;
        return 0;
fail:
        sim_close(s);
        return ret;
}

void sim_close(struct sim *s)
{
        if (!s)
                return;
        pci_source_close(s->pci);
        sim_pmu_free(s->pmu);
        sim_iio_free(s->iio);
        sim_df_free(s->df);
        sim_dwc_free(s->dwc);
        sim_nvpcie_free(s->nv);
        sim_ptt_free(s->ptt);
        if (s->root[0])
                remove_tree(s->root);
        sim_machine_free(s->machine);
        free(s->aer_written);
        free(s->flapped);
        free(s->shown);
        free(s->cpu_off);
        pthread_mutex_destroy(&s->refresh_lock);
        free(s);
}

/* ---- the load ops: `pciescope calibrate` on a simulated machine ---- */

/* How fast a simulated load moves its bytes: like O_DIRECT reads of a fast
 * drive, 2 GB/s, or 80 % of what the device's link carries if less. */
#define SIM_LOAD_MAX_RATE 2e9

struct hw_load {
        double t_end, seconds;
        uint64_t bytes;
        /* --run: the command runs for real (load_ops_system: its process
         * group, its time limit); the simulated device carries its bytes */
        struct hw_load *command;
        bool command_ended;
};

static int sim_load_start(void *ctx, const struct hw_load_request *req, struct hw_load **out,
                          char *why, size_t whylen)
{
        struct sim *s = ctx;
        const struct sim_machine *m = s->machine;
        struct pci_addr a;
        struct hw_load *l;
        size_t dev;
        double rate = SIM_LOAD_MAX_RATE, now;
        int ret;

        *out = NULL;
        if (pci_addr_parse(req->bdf, &a) ||
            (dev = sim_machine_find(m, (uint16_t)a.domain, a.bus, a.dev, a.func)) == SIM_NONE) {
                snprintf(why, whylen, "%s: no such function on the simulated machine \"%s\"",
                         req->bdf, m->name);
                return -ENODEV;
        }
        if (m->devices[dev].kind != SIM_ENDPOINT) {
                snprintf(why, whylen, "%s is not an endpoint: only a device moves data", req->bdf);
                return -ENODEV;
        }
        if (req->bytes == 0 || req->io_size == 0) {
                snprintf(why, whylen, "a load needs bytes and a read size");
                return -EINVAL;
        }
        const struct sim_device *d = &m->devices[dev];
        uint64_t cap = pcie_link_capacity_bytes(d->cur_speed, d->cur_width);

        if (cap && 0.8 * (double)cap < rate)
                rate = 0.8 * (double)cap;
        l = calloc(1, sizeof(*l));
        if (!l)
                return -ENOMEM;
        l->bytes = req->bytes;
        l->seconds = (double)req->bytes / rate;
        if (req->command) {
                ret = load_ops_system.start(NULL, req, &l->command, why, whylen);
                if (ret) {
                        free(l);
                        return ret;
                }
        }
        now = sim_pmu_now(s->pmu);
        l->t_end = now + l->seconds;
        ret = sim_pmu_add_load(s->pmu, dev, (double)req->bytes, req->io_size, now, l->t_end);
        if (!ret && s->nv)
                ret = sim_nvpcie_add_load(s->nv, dev, (double)req->bytes, sim_nvpcie_now(s->nv),
                                          sim_nvpcie_now(s->nv) + l->seconds);
        if (!ret && s->df)
                ret = sim_df_add_load(s->df, dev, (double)req->bytes, sim_df_now(s->df),
                                      sim_df_now(s->df) + l->seconds);
        if (ret) {
                snprintf(why, whylen, "the simulated device cannot take another load now");
                if (l->command)
                        load_ops_system.release(NULL, l->command);
                free(l);
                return ret;
        }
        *out = l;
        return 0;
}

static int sim_load_poll(void *ctx, struct hw_load *l, struct hw_load_result *res, char *why,
                         size_t whylen)
{
        struct sim *s = ctx;

        if (l->command && !l->command_ended) {
                struct hw_load_result cres = {0};
                int ret = load_ops_system.poll(NULL, l->command, &cres, why, whylen);

                if (ret <= 0)
                        return ret;
                l->command_ended = true;
        }
        if (sim_pmu_now(s->pmu) < l->t_end)
                return 0;
        res->bytes = l->bytes;
        res->seconds = l->seconds;
        snprintf(res->what, sizeof(res->what), "%s",
                 l->command ? "command (simulated DMA writes)" : "simulated DMA writes");
        return 1;
}

static void sim_load_release(void *ctx, struct hw_load *l)
{
        (void)ctx;
        if (l->command)
                load_ops_system.release(NULL, l->command);
        free(l); /* a simulated load runs to its end: its counts are its truth */
}

int sim_env(struct sim *s, struct hw_env *env)
{
        int ret;

        if (!s->pci) {
                ret = pci_source_open_live(s->sys, &s->pci);
                if (ret)
                        return ret;
        }
        env->sysfs_root = s->sys;
        env->proc_root = s->proc;
        env->pci = s->pci;
        env->perf = &s->ops;
        s->load_ops = (struct load_ops){
            .start = sim_load_start, .poll = sim_load_poll, .release = sim_load_release, .ctx = s};
        env->load = &s->load_ops;
        return 0;
}

/* Flapping links: every flap_period_s the link below a port retrains
 * between its trained width and flap_width; both ends show it. */
static int refresh_links(struct sim *s, double elapsed)
{
        const struct sim_machine *m = s->machine;
        int ret = 0;

        for (size_t i = 0; i < m->device_count; i++) {
                const struct sim_device *d = &m->devices[i];
                uint8_t phase;
                unsigned int width;

                if (!(d->flap_period_s > 0) || d->parent == SIM_NONE || !s->shown[i] ||
                    !s->shown[d->parent])
                        continue;
                phase = (uint8_t)((uint64_t)floor(elapsed / d->flap_period_s) & 1);
                if (phase == s->flapped[i])
                        continue;
                width = phase ? d->flap_width : d->cur_width;
                ret = sim_sysfs_set_link_width(m, s->root, i, width);
                if (!ret)
                        ret = sim_sysfs_set_link_width(m, s->root, d->parent, width);
                if (ret)
                        return ret;
                s->flapped[i] = phase;
        }
        return 0;
}

/*
 * Functions removed or back (sim_events.h): a removed one's directory goes
 * (those below it go in the same pass: each has its own entry), one that
 * came back is written again as a new pci_dev: its files as described,
 * its link trained, its AER files rewritten by the next update.
 */
static int refresh_presence(struct sim *s, double elapsed)
{
        const struct sim_machine *m = s->machine;
        int ret;

        for (size_t i = 0; i < m->device_count; i++) {
                uint8_t present;

                if (!s->shown[i] && !sim_device_has_events(m, i))
                        continue;
                present = sim_device_present(m, i, elapsed);
                if (present == s->shown[i])
                        continue;
                if (present) {
                        ret = sim_sysfs_device_write(m, s->root, i);
                        memset(s->aer_written + i * SIM_AER_WRITTEN_SLOTS, 0,
                               SIM_AER_WRITTEN_SLOTS * sizeof(*s->aer_written));
                        s->flapped[i] = 0;
                } else {
                        ret = sim_sysfs_device_remove(m, s->root, i);
                }
                if (ret)
                        return ret;
                s->shown[i] = present;
        }
        return 0;
}

#define PMU_NOT_SHOWN  UINT_MAX
#define CPU_EVENTS_MAX 4096 /* occurrences replayed by one refresh */

/* Core @core's PMU (or, @ptt, its PTT device: hisi_ptt_cpu_teardown()
 * moves it to a CPU of the same node, which the simulation's die is). */
static int write_cpumask_of(struct sim *s, size_t core, bool ptt)
{
        char dir[128], text[16], name[64], path[4400];
        struct stat st;

        if (ptt)
                sim_ptt_name(s->machine, core, name, sizeof(name));
        else
                sim_pmu_name(s->machine, core, name, sizeof(name));
        snprintf(dir, sizeof(dir), "sys/bus/event_source/devices/%s", name);
        snprintf(path, sizeof(path), "%s/%s", s->root, dir);
        if (ptt && (stat(path, &st) || !S_ISDIR(st.st_mode)))
                return 0; /* no PTT device (or its kernel has none) */
        /* cpumap_print_to_pagebuf(): an empty mask is an empty line. */
        if (s->pmu_cpu[core] < 0)
                snprintf(text, sizeof(text), "\n");
        else
                snprintf(text, sizeof(text), "%d\n", s->pmu_cpu[core]);
        return sim_sysfs_put(s->root, dir, "cpumask", text);
}

static int write_cpumask(struct sim *s, size_t core)
{
        return write_cpumask_of(s, core, false);
}

/* The IIO PMUs' CPU for socket @sock when CPU @gone goes offline, as
 * uncore_event_cpu_offline() picks it: another online CPU of the same die
 * (here: socket), else none (-1). */
static int pick_iio_cpu(const struct sim *s, size_t sock, unsigned int gone)
{
        const struct sim_socket *k = &s->machine->intel.sockets[sock];

        for (unsigned int c = k->first_cpu; c < k->first_cpu + k->cpu_count && c < s->machine->cpus;
             c++)
                if (c != gone && !s->cpu_off[c])
                        return (int)c;
        return -1;
}

/* CPU @cpu went offline (@off) or online: the IIO PMUs of its socket move
 * (uncore_change_context() migrates their events: they count on), or,
 * online, it takes a socket that had no CPU left. Whether any moved. */
static bool move_iio(struct sim *s, unsigned int cpu, bool off)
{
        const struct sim_machine *m = s->machine;
        bool moved = false;

        for (size_t i = 0; i < m->intel.socket_count && i < SIM_MAX_SOCKETS; i++) {
                const struct sim_socket *k = &m->intel.sockets[i];

                if (cpu < k->first_cpu || cpu >= k->first_cpu + k->cpu_count)
                        continue;
                if (off && s->iio_cpu[i] == (int)cpu)
                        s->iio_cpu[i] = pick_iio_cpu(s, i, cpu);
                else if (!off && s->iio_cpu[i] < 0)
                        s->iio_cpu[i] = (int)cpu;
                else
                        continue;
                moved = true;
        }
        return moved;
}

/* devices/system/cpu/online in list format ("0-63,65-127"). */
static int write_online(struct sim *s)
{
        unsigned int n = s->machine->cpus;
        size_t len = 0, cap = (size_t)n * 12 + 2;
        char *text = malloc(cap);
        int ret;

        if (!text)
                return -ENOMEM;
        text[0] = '\0';
        for (unsigned int c = 0; c < n; c++) {
                unsigned int end = c;

                if (s->cpu_off[c])
                        continue;
                while (end + 1 < n && !s->cpu_off[end + 1])
                        end++;
                len += (size_t)snprintf(text + len, cap - len, end > c ? "%s%u-%u" : "%s%u",
                                        len ? "," : "", c, end);
                c = end;
        }
        snprintf(text + len, cap - len, "\n");
        ret = sim_sysfs_put(s->root, "sys/devices/system/cpu", "online", text);
        free(text);
        return ret;
}

/* The CPU a PMU moves to when its CPU @gone goes offline, as
 * hisi_pcie_pmu_offline_cpu() picks it: an online CPU of its die (here:
 * its SICL's CPUs), else any online CPU, else none (-1). */
static int pick_cpu(const struct sim *s, size_t core, unsigned int gone)
{
        const struct sim_machine *m = s->machine;
        unsigned char die =
            (unsigned int)m->cores[core].cpu < m->cpus ? m->cpu_sicl[m->cores[core].cpu] : 0;

        for (unsigned int c = 0; die && c < m->cpus; c++)
                if (c != gone && !s->cpu_off[c] && m->cpu_sicl[c] == die)
                        return (int)c;
        for (unsigned int c = 0; c < m->cpus; c++)
                if (c != gone && !s->cpu_off[c])
                        return (int)c;
        return -1;
}

/*
 * CPUs going offline and online: replayed in time order. Offline, every
 * PMU on that CPU moves its cpumask to another CPU of its die and the
 * kernel migrates its open events (perf_pmu_migrate_context()): they go
 * on counting; a new perf_event_open() on the offline CPU fails (-ENODEV).
 * That is a hisi_pcie PMU, the PTT device of the same core
 * (hisi_ptt_cpu_teardown(): a CPU of its node) and the Intel IIO PMUs of
 * the CPU's socket (uncore_event_cpu_offline()). Online, a CPU takes only
 * a PMU that had none (hisi_pcie_pmu_online_cpu(): on_cpu == -1;
 * uncore_event_cpu_online(): a die without a collecting CPU); the others
 * stay where they moved.
 */
static int refresh_cpus(struct sim *s, double elapsed)
{
        const struct sim_machine *m = s->machine;
        struct sim_event_at *at;
        size_t n;
        bool moved[SIM_MAX_CORES] = {false}, online_changed = false, iio_moved = false;
        int ret = 0;

        if (!s->cpu_off) {
                s->cpu_off = calloc(m->cpus, 1);
                if (!s->cpu_off)
                        return -ENOMEM;
                for (size_t i = 0; i < m->core_count; i++)
                        s->pmu_cpu[i] = m->cores[i].cpu;
                for (size_t i = 0; i < m->intel.socket_count && i < SIM_MAX_SOCKETS; i++)
                        s->iio_cpu[i] = (int)m->intel.sockets[i].first_cpu;
        }
        if (!(elapsed > s->cpu_done))
                return 0;
        at = malloc(CPU_EVENTS_MAX * sizeof(*at));
        if (!at)
                return -ENOMEM;
        n = sim_events_between(m, s->cpu_done, elapsed, at, CPU_EVENTS_MAX);
        for (size_t k = 0; k < n; k++) {
                const struct sim_event *e = &m->events[at[k].index];
                bool off = e->kind == SIM_EV_CPU_OFFLINE;

                if ((e->kind != SIM_EV_CPU_OFFLINE && e->kind != SIM_EV_CPU_ONLINE) ||
                    e->cpu >= m->cpus || s->cpu_off[e->cpu] == off)
                        continue;
                s->cpu_off[e->cpu] = off;
                online_changed = true;
                iio_moved |= move_iio(s, e->cpu, off);
                for (size_t i = 0; i < m->core_count; i++) {
                        if (off && s->pmu_cpu[i] == (int)e->cpu)
                                s->pmu_cpu[i] = pick_cpu(s, i, e->cpu);
                        else if (!off && s->pmu_cpu[i] < 0)
                                s->pmu_cpu[i] = pick_cpu(s, i, m->cpus);
                        else
                                continue;
                        moved[i] = true;
                }
        }
        free(at);
        s->cpu_done = elapsed;
        for (size_t i = 0; i < m->core_count && !ret; i++) {
                unsigned int generation;

                if (moved[i] && sim_pmu_bound(m, i, elapsed, &generation))
                        ret = write_cpumask(s, i);
                if (!ret && moved[i] && m->cores[i].ptt_function != SIM_NONE)
                        ret = write_cpumask_of(s, i, true);
        }
        if (!ret && iio_moved)
                ret = sim_sysfs_iio_cpumasks(m, s->root, s->iio_cpu);
        if (!ret && online_changed)
                ret = write_online(s);
        return ret;
}

/* PMU drivers unbound and bound again (sim_events.h): the directory goes,
 * and comes back with the new binding's perf type. */
static int refresh_pmus(struct sim *s, double elapsed)
{
        const struct sim_machine *m = s->machine;
        int ret = 0;

        for (size_t i = 0; i < m->core_count && !ret; i++) {
                unsigned int generation, want;

                want = sim_pmu_bound(m, i, elapsed, &generation) ? generation : PMU_NOT_SHOWN;
                if (want == s->pmu_shown[i])
                        continue;
                ret = sim_sysfs_pmu_remove(m, s->root, i);
                if (!ret && want != PMU_NOT_SHOWN)
                        ret = sim_sysfs_pmu_write(
                            m, s->root, i, sim_pmu_type_of(SIM_PMU_TYPE_BASE, i, generation));
                if (!ret && want != PMU_NOT_SHOWN && s->cpu_off && s->pmu_cpu[i] != m->cores[i].cpu)
                        ret = write_cpumask(s, i);
                if (!ret)
                        s->pmu_shown[i] = want;
        }
        for (size_t i = 0; i < m->core_count && !ret; i++) {
                unsigned int generation, want;
                char name[64];

                if (m->cores[i].ptt_function == SIM_NONE || !s->ptt)
                        continue;
                want = sim_pmu_kind_bound(m, SIM_PMUK_HISI_PTT, i, elapsed, &generation)
                           ? generation
                           : PMU_NOT_SHOWN;
                if (want == s->ptt_shown[i])
                        continue;
                sim_ptt_name(m, i, name, sizeof(name));
                ret = sim_sysfs_pmu_dir_remove(s->root, name);
                if (!ret && want != PMU_NOT_SHOWN)
                        ret =
                            sim_ptt_sysfs_write_one(m, s->root, i, sim_ptt_type_of(i, generation));
                if (!ret && want != PMU_NOT_SHOWN && s->cpu_off && s->pmu_cpu[i] != m->cores[i].cpu)
                        ret = write_cpumask_of(s, i, true);
                if (!ret)
                        s->ptt_shown[i] = want;
        }
        for (unsigned int box = 0; s->iio && box < 256 && !ret; box++) {
                unsigned int generation, want;
                char name[64];

                if (!sim_pmu_kind_has_events(m, SIM_PMUK_IIO, box))
                        continue;
                want = sim_pmu_kind_bound(m, SIM_PMUK_IIO, box, elapsed, &generation)
                           ? generation
                           : PMU_NOT_SHOWN;
                if (want == s->iio_shown[box])
                        continue;
                snprintf(name, sizeof(name), "uncore_iio_free_running_%u", box);
                ret = sim_sysfs_pmu_dir_remove(s->root, name);
                if (!ret && want != PMU_NOT_SHOWN)
                        ret = sim_sysfs_iio_pmu_write(m, s->root, box,
                                                      sim_iio_type_of(box, generation));
                if (!ret && want != PMU_NOT_SHOWN && s->cpu_off)
                        ret = sim_sysfs_iio_cpumasks(m, s->root, s->iio_cpu);
                if (!ret)
                        s->iio_shown[box] = want;
        }
        if (s->df && !ret && sim_pmu_kind_has_events(m, SIM_PMUK_AMD_DF, 0)) {
                unsigned int generation, want;

                want = sim_pmu_kind_bound(m, SIM_PMUK_AMD_DF, 0, elapsed, &generation)
                           ? generation
                           : PMU_NOT_SHOWN;
                if (want != s->df_shown) {
                        ret = sim_sysfs_pmu_dir_remove(s->root, "amd_df");
                        if (!ret && want != PMU_NOT_SHOWN)
                                ret = sim_df_sysfs_pmu_write(m, s->root, sim_df_type_of(want), NULL,
                                                             0);
                        if (!ret)
                                s->df_shown = want;
                }
        }
        return ret;
}

static int refresh_locked(struct sim *s)
{
        size_t n = s->machine->device_count ? s->machine->device_count : 1;
        double elapsed = sim_pmu_now(s->pmu);
        int ret;

        if (!s->flapped) {
                s->flapped = calloc(n, 1);
                if (!s->flapped)
                        return -ENOMEM;
        }
        if (!s->shown) {
                s->shown = malloc(n);
                if (!s->shown)
                        return -ENOMEM;
                memset(s->shown, 1, n); /* sim_sysfs_write wrote every function */
        }
        if (!s->aer_written) {
                s->aer_written = calloc(n, SIM_AER_WRITTEN_SLOTS * sizeof(*s->aer_written));
                if (!s->aer_written)
                        return -ENOMEM;
        }
        if (!(elapsed >= 0))
                elapsed = 0;
        ret = SIM_TIMED(s, refresh_ns, refresh_presence(s, elapsed));
        if (!ret)
                ret = SIM_TIMED(s, refresh_ns, refresh_cpus(s, elapsed));
        if (!ret)
                ret = SIM_TIMED(s, refresh_ns, refresh_pmus(s, elapsed));
        if (ret)
                return ret;
        ret = SIM_TIMED(s, refresh_ns, refresh_links(s, elapsed));
        if (ret)
                return ret;
        atomic_store(&s->next_pmu_change, sim_events_next(s->machine, elapsed, true));
        return SIM_TIMED(s, refresh_ns,
                         sim_sysfs_update_aer(s->machine, s->root, elapsed, s->aer_written));
}

/* A perf call brings the PMU directories up to now when a PMU was bound or
 * unbound, or a CPU went offline or online, since (the kernel shows it at
 * once: a cpumask moves as the CPU goes), not only the host's read;
 * functions come and go at the host's read, between two topology scans. */
static void refresh_if_due(struct sim *s)
{
        double now = sim_pmu_now(s->pmu);

        if (!(now >= atomic_load(&s->next_pmu_change)))
                return;
        pthread_mutex_lock(&s->refresh_lock);
        if (refresh_cpus(s, now) == 0 && refresh_pmus(s, now) == 0)
                atomic_store(&s->next_pmu_change, sim_events_next(s->machine, now, true));
        pthread_mutex_unlock(&s->refresh_lock);
}

int sim_refresh(struct sim *s)
{
        int ret;

        pthread_mutex_lock(&s->refresh_lock);
        ret = refresh_locked(s);
        pthread_mutex_unlock(&s->refresh_lock);
        return ret;
}

/* ---- changes made at run time (sim_events.h) ---- */

static int device_event(struct sim *s, const char *bdf, enum sim_event_kind kind)
{
        struct sim_event e = {.kind = kind, .dev = SIM_NONE, .core = SIM_NONE};
        struct pci_addr a;
        double now = sim_pmu_now(s->pmu);
        int ret;

        if (!bdf || pci_addr_parse(bdf, &a) ||
            (e.dev = sim_machine_find(s->machine, (uint16_t)a.domain, a.bus, a.dev, a.func)) ==
                SIM_NONE)
                return -ENODEV;
        e.at_s = now >= 0 ? now : 0;
        ret = sim_events_append(s->machine, &e);
        return ret ? ret : sim_refresh(s);
}

int sim_device_remove(struct sim *s, const char *bdf)
{
        return device_event(s, bdf, SIM_EV_REMOVE);
}

int sim_device_add(struct sim *s, const char *bdf)
{
        return device_event(s, bdf, SIM_EV_ADD);
}

static int pmu_event(struct sim *s, const char *pmu, enum sim_event_kind kind)
{
        struct sim_event e = {.kind = kind, .dev = SIM_NONE};
        double now = sim_pmu_now(s->pmu);
        int ret;

        if (!pmu || sim_pmu_any_find(s->machine, pmu, &e.pmu, &e.core))
                return -ENODEV;
        e.at_s = now >= 0 ? now : 0;
        ret = sim_events_append(s->machine, &e);
        return ret ? ret : sim_refresh(s);
}

int sim_pmu_unbind(struct sim *s, const char *pmu)
{
        return pmu_event(s, pmu, SIM_EV_PMU_UNBIND);
}

int sim_pmu_bind(struct sim *s, const char *pmu)
{
        return pmu_event(s, pmu, SIM_EV_PMU_BIND);
}

static int cpu_event(struct sim *s, unsigned int cpu, enum sim_event_kind kind)
{
        struct sim_event e = {.kind = kind, .dev = SIM_NONE, .core = SIM_NONE, .cpu = cpu};
        double now = sim_pmu_now(s->pmu);
        int ret;

        if (cpu >= s->machine->cpus)
                return -ENODEV;
        e.at_s = now >= 0 ? now : 0;
        ret = sim_events_append(s->machine, &e);
        return ret ? ret : sim_refresh(s);
}

int sim_cpu_down(struct sim *s, unsigned int cpu)
{
        return cpu_event(s, cpu, SIM_EV_CPU_OFFLINE);
}

int sim_cpu_up(struct sim *s, unsigned int cpu)
{
        return cpu_event(s, cpu, SIM_EV_CPU_ONLINE);
}

const struct sim_machine *sim_machine(const struct sim *s)
{
        return s->machine;
}

struct sim_pmu *sim_pmu(struct sim *s)
{
        return s->pmu;
}

struct sim_dwc *sim_dwc(struct sim *s)
{
        return s->dwc;
}

struct sim_iio *sim_iio(struct sim *s)
{
        return s->iio;
}

struct sim_df *sim_df(struct sim *s)
{
        return s->df;
}

struct sim_nvpcie *sim_nvpcie(struct sim *s)
{
        return s->nv;
}

struct sim_ptt *sim_ptt(struct sim *s)
{
        return s->ptt;
}

const char *sim_root(const struct sim *s)
{
        return s->root;
}
