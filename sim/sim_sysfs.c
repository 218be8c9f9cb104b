// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sim_sysfs.c - write the sysfs/procfs tree of a simulated machine.
 *
 * The text of every file follows what the kernel of the machine prints
 * (drivers/pci/pci-sysfs.c, drivers/pci/pcie/aer.c, drivers/perf/hisilicon/
 * hisi_pcie_pmu.c; see kernel-facts.md sections 1 and 6), and the `config`
 * files are images that libpci (lspci) and our own decoder read like a real
 * device's configuration space. This is a SIMULATION: see docs/simulator.md.
 */
#define _GNU_SOURCE
#include "sim_sysfs.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pci_regs.h"
#include "sim_intel_iio.h"
#include "sim_nvidia_pcie.h"
#include "sim_machine.h"
#include "sim_events.h"

#define CAP_EXP 0x40  /* PCI Express capability */
#define CAP_AER 0x100 /* AER extended capability */

/* Bits pci_regs.h does not name (PCI Express Base Specification). */
#define CMD_MEMORY          0x0002
#define CMD_MASTER          0x0004
#define CMD_SERR            0x0100
#define DEVCAP_RBER         0x00008000 /* Role-Based Error Reporting */
#define DEVCTL_ERR_REPORT   0x000f     /* CorrErr, NonFatalErr, FatalErr, UnsupReq */
#define DEVCTL_RELAX_EN     0x0010
#define DEVCTL_NOSNOOP_EN   0x0800
#define LNKCAP_DLLLARC      0x00100000 /* DLL Link Active Reporting Capable */
#define LNKCAP_PN_SHIFT     24
#define LNKCTL_CCC          0x0040 /* common clock */
#define LNKSTA_SLC          0x1000 /* slot clock */
#define SLTCAP_PSN_SHIFT    19
#define SLTSTA_PDS          0x0040 /* presence detect state */
#define EXP_SLTSTA          0x1a
#define EXP_LNKCTL          0x10
#define EXP_LNKCTL2         0x30
#define AER_UNCOR_SEVER     0x0c
#define AER_COR_MASK        0x14
#define AER_UNCOR_SEVER_DEF 0x00462030 /* the specification's default severities */
#define AER_COR_MASK_DEF    0x00002000 /* Advisory Non-Fatal masked */

/* ---- configuration space ---- */

static void put16(uint8_t *c, size_t off, uint16_t v)
{
        c[off] = (uint8_t)v;
        c[off + 1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *c, size_t off, uint32_t v)
{
        put16(c, off, (uint16_t)v);
        put16(c, off + 2, (uint16_t)(v >> 16));
}

/* 128 -> 0, 256 -> 1, ... 4096 -> 5 (MPSS, MPS and MRRS encoding). */
static unsigned int size_code(unsigned int bytes)
{
        unsigned int code = 0;

        while (code < 5 && (128u << code) < bytes)
                code++;
        return code;
}

static bool is_bridge(enum sim_dev_kind kind)
{
        return kind == SIM_ROOT_PORT || kind == SIM_SWITCH_UP || kind == SIM_SWITCH_DOWN;
}

static bool is_downstream_port(enum sim_dev_kind kind)
{
        return kind == SIM_ROOT_PORT || kind == SIM_SWITCH_DOWN;
}

static unsigned int port_type(enum sim_dev_kind kind)
{
        switch (kind) {
        case SIM_ROOT_PORT:
                return PCI_EXP_TYPE_ROOT_PORT;
        case SIM_SWITCH_UP:
                return PCI_EXP_TYPE_UPSTREAM;
        case SIM_SWITCH_DOWN:
                return PCI_EXP_TYPE_DOWNSTREAM;
        case SIM_ENDPOINT:
                return PCI_EXP_TYPE_ENDPOINT;
        case SIM_RCIEP:
                return PCI_EXP_TYPE_RC_END;
        }
        return PCI_EXP_TYPE_ENDPOINT;
}

static bool multifunction(const struct sim_machine *m, const struct sim_device *d)
{
        for (size_t i = 0; i < m->device_count; i++) {
                const struct sim_device *o = &m->devices[i];

                if (o != d && o->domain == d->domain && o->bus == d->bus && o->dev == d->dev)
                        return true;
        }
        return false;
}

static void put64(uint8_t *c, size_t off, uint64_t v)
{
        put32(c, off, (uint32_t)v);
        put32(c, off + 4, (uint32_t)(v >> 32));
}

/* Socket whose PMON discovery function is device @idx, or NULL. */
static const struct sim_socket *discovery_socket(const struct sim_machine *m, size_t idx)
{
        for (size_t i = 0; m->intel.present && i < m->intel.socket_count; i++) {
                if (m->intel.sockets[i].discovery_function == idx)
                        return &m->intel.sockets[i];
        }
        return NULL;
}

#define DVSEC_LEN 0x10

/* BAR 0 (64-bit memory) and the Intel DVSEC chain at 0x100: the other
 * DVSECs first, then PMON discovery (id 1, BIR 0). */
static void discovery_config(const struct sim_socket *s, uint8_t *cfg)
{
        size_t n = s->other_dvsec_count + 1;

        put32(cfg, 0x10, (uint32_t)(s->bar & ~0xfULL) | 0x4); /* memory, 64-bit type */
        put32(cfg, 0x14, (uint32_t)(s->bar >> 32));
        for (size_t i = 0; i < n; i++) {
                size_t off = 0x100 + i * DVSEC_LEN;
                uint32_t next = i + 1 < n ? (uint32_t)(off + DVSEC_LEN) : 0;
                uint16_t id = i + 1 < n ? s->other_dvsec_ids[i] : 1;

                put32(cfg, off, 0x0023u | 1u << 16 | next << 20);
                put32(cfg, off + 4, 0x8086u | 1u << 16 | (uint32_t)DVSEC_LEN << 20);
                put32(cfg, off + 8, id);
                put32(cfg, off + 0xc, 0); /* BIR 0, the rest 0 */
        }
}

int sim_discovery_image(const struct sim_machine *m, size_t socket, uint8_t *buf, size_t size)
{
        const struct sim_socket *s;
        size_t stride;

        if (!m || !m->intel.present || socket >= m->intel.socket_count)
                return -EINVAL;
        s = &m->intel.sockets[socket];
        stride = (size_t)s->stride * 8;
        if (size < s->bar_size || (s->unit_count + 1) * stride > size)
                return -ENOSPC;
        memset(buf, 0, s->bar_size);
        put64(buf, 0,
              0 | (uint64_t)s->stride << 8 | (uint64_t)s->unit_count << 16 |
                  (uint64_t)SIM_ACCESS_MMIO << 62);
        put64(buf, 8, sim_discovery_global_ctl(s));
        put64(buf, 16, 0 | (uint64_t)((s->unit_count + 63) / 64) << 8);
        for (size_t i = 0; i < s->unit_count; i++) {
                const struct sim_uncore_unit *u = &s->units[i];
                size_t off = (i + 1) * stride;

                put64(buf, off,
                      (uint64_t)u->num_regs | (uint64_t)u->ctl_offset << 8 |
                          (uint64_t)u->width << 16 | (uint64_t)u->ctr_offset << 24 |
                          (uint64_t)u->status_offset << 32 | (uint64_t)u->access << 62);
                put64(buf, off + 8, u->ctl);
                put64(buf, off + 16, (uint64_t)u->type | (uint64_t)u->box_id << 16);
        }
        return 0;
}

void sim_config_image(const struct sim_machine *m, size_t idx, uint8_t cfg[4096])
{
        const struct sim_socket *disc;
        const struct sim_device *d;
        const size_t cap = CAP_EXP;
        bool slot, link_up;
        uint16_t devctl;

        memset(cfg, 0, PCI_CFG_SPACE_EXP_SIZE);
        if (!m || idx >= m->device_count)
                return;
        d = &m->devices[idx];
        slot = is_downstream_port(d->kind) && d->hotplug;
        link_up = d->kind != SIM_RCIEP && d->cur_width > 0 && d->cur_speed > 0;

        put16(cfg, PCI_VENDOR_ID, d->vendor);
        put16(cfg, PCI_DEVICE_ID, d->device);
        put16(cfg, 0x04, CMD_MEMORY | CMD_MASTER | (d->has_aer ? CMD_SERR : 0));
        put16(cfg, PCI_STATUS, PCI_STATUS_CAP_LIST);
        put32(cfg, PCI_CLASS_REVISION, (d->class_code & 0xffffff) << 8 | d->revision);
        cfg[PCI_HEADER_TYPE] = is_bridge(d->kind) ? PCI_HEADER_TYPE_BRIDGE : PCI_HEADER_TYPE_NORMAL;
        if (multifunction(m, d))
                cfg[PCI_HEADER_TYPE] |= PCI_HEADER_MULTIFUNCTION;
        if (is_bridge(d->kind)) {
                cfg[PCI_PRIMARY_BUS] = d->bus;
                cfg[PCI_SECONDARY_BUS] = d->secondary;
                cfg[PCI_SUBORDINATE_BUS] = d->subordinate;
                /* No windows: I/O, memory and prefetchable base above limit. */
                cfg[0x1c] = 0xf0;
                cfg[0x1d] = 0x00;
                put16(cfg, 0x20, 0xfff0);
                put16(cfg, 0x22, 0x0000);
                put16(cfg, 0x24, 0xfff1);
                put16(cfg, 0x26, 0x0001);
        } else {
                put16(cfg, 0x2c, d->subsys_vendor);
                put16(cfg, 0x2e, d->subsys_device);
        }
        cfg[PCI_CAPABILITY_LIST] = (uint8_t)cap;

        /* PCI Express capability, version 2 (so LNKCAP2 exists). */
        cfg[cap + PCI_CAP_LIST_ID] = PCI_CAP_ID_EXP;
        cfg[cap + PCI_CAP_LIST_NEXT] = 0;
        put16(cfg, cap + PCI_EXP_FLAGS,
              (uint16_t)(2 | port_type(d->kind) << PCI_EXP_FLAGS_TYPE_SHIFT |
                         (slot ? PCI_EXP_FLAGS_SLOT : 0)));
        put32(cfg, cap + PCI_EXP_DEVCAP, size_code(d->mpss) | DEVCAP_RBER);
        devctl = (uint16_t)(size_code(d->mps) << PCI_EXP_DEVCTL_PAYLOAD_SHIFT |
                            size_code(d->mrrs) << PCI_EXP_DEVCTL_READRQ_SHIFT | DEVCTL_RELAX_EN |
                            DEVCTL_NOSNOOP_EN | (d->has_aer ? DEVCTL_ERR_REPORT : 0));
        put16(cfg, cap + PCI_EXP_DEVCTL, devctl);
        /* An RCiEP has no link: its link registers read as zero. */
        if (d->kind != SIM_RCIEP) {
                uint32_t lnkcap = (d->max_speed & 0xf) | (d->max_width & 0x3f) << 4;
                uint16_t lnksta = 0;

                /* Port number: the device number of a Root or downstream port. */
                if (is_downstream_port(d->kind))
                        lnkcap |= LNKCAP_DLLLARC | (uint32_t)d->dev << LNKCAP_PN_SHIFT;
                put32(cfg, cap + PCI_EXP_LNKCAP, lnkcap);
                if (link_up) {
                        lnksta = (uint16_t)((d->cur_speed & 0xf) | (d->cur_width & 0x3f) << 4 |
                                            LNKSTA_SLC);
                        if (is_downstream_port(d->kind))
                                lnksta |= PCI_EXP_LNKSTA_DLLLA;
                        put16(cfg, cap + EXP_LNKCTL, LNKCTL_CCC);
                }
                put16(cfg, cap + PCI_EXP_LNKSTA, lnksta);
                if (slot) {
                        put32(cfg, cap + PCI_EXP_SLTCAP,
                              PCI_EXP_SLTCAP_HPC | (uint32_t)((idx + 1) & 0x1fff)
                                                       << SLTCAP_PSN_SHIFT);
                        put16(cfg, cap + EXP_SLTSTA, link_up ? SLTSTA_PDS : 0);
                }
                /* Supported Link Speeds Vector: bits 1..max_speed. */
                put32(cfg, cap + PCI_EXP_LNKCAP2,
                      ((1u << ((d->max_speed & 7) + 1)) - 2) & PCI_EXP_LNKCAP2_SLS);
                put16(cfg, cap + EXP_LNKCTL2, (uint16_t)(d->max_speed & 0xf));
        }
        if (d->has_aer) { /* AER extended capability, version 2, last in the list */
                put32(cfg, CAP_AER, PCI_EXT_CAP_ID_ERR | 2u << 16);
                put32(cfg, CAP_AER + AER_UNCOR_SEVER, AER_UNCOR_SEVER_DEF);
                put32(cfg, CAP_AER + AER_COR_MASK, AER_COR_MASK_DEF);
        }
        disc = discovery_socket(m, idx);
        if (disc)
                discovery_config(disc, cfg);
        sim_iio_register_config(m, idx, cfg);
}

/* ---- file helpers ---- */

struct out {
        char *err;
        size_t errlen;
};

static int report(struct out *o, int err, const char *path, const char *what)
{
        if (o && o->err && o->errlen)
                snprintf(o->err, o->errlen, "%s %s: %s", what, path, strerror(err));
        return -err;
}

static int join(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int join(char *buf, size_t size, const char *fmt, ...)
{
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vsnprintf(buf, size, fmt, ap);
        va_end(ap);
        return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

static int make_dir(struct out *o, const char *path)
{
        if (mkdir(path, 0755) && errno != EEXIST)
                return report(o, errno, path, "cannot create");
        return 0;
}

static int write_all(int fd, const void *data, size_t len)
{
        const char *p = data;

        while (len) {
                ssize_t n = write(fd, p, len);

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                p += n;
                len -= (size_t)n;
        }
        return 0;
}

static int put_file(struct out *o, const char *path, const void *data, size_t len)
{
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        int r;

        if (fd < 0)
                return report(o, errno, path, "cannot create");
        r = write_all(fd, data, len);
        if (close(fd) && !r)
                r = -errno;
        if (r)
                return report(o, -r, path, "cannot write");
        return 0;
}

static int put_text(struct out *o, const char *dir, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int put_text(struct out *o, const char *dir, const char *name, const char *fmt, ...)
{
        char path[PATH_MAX], text[SIM_TEXT_MAX + 64];
        va_list ap;
        int n;

        if (join(path, sizeof(path), "%s/%s", dir, name))
                return report(o, ENAMETOOLONG, dir, "path too long below");
        va_start(ap, fmt);
        n = vsnprintf(text, sizeof(text), fmt, ap);
        va_end(ap);
        if (n < 0 || (size_t)n >= sizeof(text))
                return report(o, EOVERFLOW, path, "text too long for");
        return put_file(o, path, text, (size_t)n);
}

/* Writes dir/.name.tmp and renames it over dir/name: a reader sees the old
 * or the new file, never a part of one. */
static int put_atomic(struct out *o, const char *dir, const char *name, const char *text,
                      size_t len)
{
        char path[PATH_MAX], tmp[PATH_MAX];
        int r;

        if (join(path, sizeof(path), "%s/%s", dir, name) ||
            join(tmp, sizeof(tmp), "%s/.%s.tmp", dir, name))
                return report(o, ENAMETOOLONG, dir, "path too long below");
        r = put_file(o, tmp, text, len);
        if (r)
                return r;
        if (rename(tmp, path)) {
                r = errno;
                unlink(tmp);
                return report(o, r, path, "cannot rename over");
        }
        return 0;
}

/* ---- PCI devices ---- */

/* The kernel's text for a speed code (pci_speed_string() in 5.7 and later). */
static const char *speed_text(unsigned int code)
{
        static const char *const text[] = {"Unknown",       "2.5 GT/s PCIe",  "5.0 GT/s PCIe",
                                           "8.0 GT/s PCIe", "16.0 GT/s PCIe", "32.0 GT/s PCIe",
                                           "64.0 GT/s PCIe"};

        return code < sizeof(text) / sizeof(text[0]) ? text[code] : "Unknown";
}

static const char *const aer_file[SIM_AER_CLASSES] = {"aer_dev_correctable", "aer_dev_nonfatal",
                                                      "aer_dev_fatal"};
static const char *const aer_total[SIM_AER_CLASSES] = {"TOTAL_ERR_COR", "TOTAL_ERR_NONFATAL",
                                                       "TOTAL_ERR_FATAL"};
static const char *const aer_rp_file[SIM_AER_CLASSES] = {"aer_rootport_total_err_cor",
                                                         "aer_rootport_total_err_nonfatal",
                                                         "aer_rootport_total_err_fatal"};
static const char *const aer_unnamed[SIM_AER_CLASSES] = {
    "dev_cor_errs_bit", "dev_nonfatal_errs_bit", "dev_fatal_errs_bit"};

/* A counter @elapsed seconds into its pci_dev's life; a function that a
 * rescan brought back (@fresh) counts from 0, not from the boot's count. */
static uint64_t counter_at(const struct sim_aer_counter *c, double elapsed, bool fresh)
{
        double add = c->per_second * elapsed;
        uint64_t initial = fresh ? 0 : c->initial;

        if (!(add > 0))
                return initial;
        if (add > 9e18)
                add = 9e18;
        return initial + (uint64_t)add; /* rounded down */
}

static uint64_t counter_value(const struct sim_device *d, int cls, const char *name, double elapsed,
                              bool fresh)
{
        for (size_t i = 0; i < d->aer_count[cls] && i < SIM_AER_MAX; i++) {
                if (!strcmp(d->aer[cls][i].name, name))
                        return counter_at(&d->aer[cls][i], elapsed, fresh);
        }
        return 0;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
        return a + b < a ? UINT64_MAX : a + b;
}

static void append(char *buf, size_t size, size_t *len, const char *name, uint64_t v)
{
        int n = snprintf(buf + *len, size - *len, "%s %llu\n", name, (unsigned long long)v);

        if (n > 0 && (size_t)n < size - *len)
                *len += (size_t)n;
}

/* The text of one aer_dev_* file (@buf may be NULL); returns its length.
 * TOTAL_ERR_* counts one ERR_* message per error. */
static size_t aer_text(const struct sim_device *d, int cls, double elapsed, bool fresh, char *buf,
                       size_t size, uint64_t *total)
{
        int bits = sim_aer_bits(cls);
        size_t len = 0;
        uint64_t sum = 0;

        for (int bit = 0; bit < bits; bit++) {
                char unnamed[48];
                const char *name = sim_aer_bit_name(cls, bit);
                bool named = name != NULL;
                uint64_t v;

                if (!name) {
                        snprintf(unnamed, sizeof(unnamed), "%s[%d]", aer_unnamed[cls], bit);
                        name = unnamed;
                }
                v = counter_value(d, cls, name, elapsed, fresh);
                sum = sat_add(sum, v);
                if (buf && (named || v))
                        append(buf, size, &len, name, v);
        }
        if (buf)
                append(buf, size, &len, aer_total[cls], sum);
        *total = sum;
        return len;
}

static int device_dir(char *buf, size_t size, const char *root, const struct sim_device *d)
{
        char bdf[16];

        sim_device_bdf(d, bdf, sizeof(bdf));
        return join(buf, size, "%s/sys/bus/pci/devices/%s", root, bdf);
}

_Static_assert(SIM_AER_WRITTEN_SLOTS == 2 * SIM_AER_CLASSES,
               "a device's AER files: one per class, and the Root Port totals");

/* Whether a file holding @total needs writing: always without a record;
 * with one, when the total moved (counts only rise, so an unchanged total
 * is unchanged text). The record holds total + 1; 0 is "never written". */
static bool aer_moved(uint64_t *written, size_t slot, uint64_t total)
{
        if (!written)
                return true;
        if (written[slot] == total + 1)
                return false;
        written[slot] = total + 1;
        return true;
}

static int write_aer(struct out *o, const struct sim_machine *m, const char *root, double elapsed,
                     uint64_t *written)
{
        char text[4096], dir[PATH_MAX];
        int r;

        if (!(elapsed >= 0))
                elapsed = 0;
        for (size_t i = 0; i < m->device_count; i++) {
                const struct sim_device *d = &m->devices[i];
                double origin;
                uint64_t total;

                if (!d->has_aer)
                        continue;
                /* A removed function has no files; one a rescan brought
                 * back counts since then (sim_events.h). */
                origin = sim_device_origin(m, i, elapsed);
                if (origin < 0)
                        continue;
                if (device_dir(dir, sizeof(dir), root, d))
                        return report(o, ENAMETOOLONG, root, "path too long below");
                for (int cls = 0; cls < SIM_AER_CLASSES; cls++) {
                        size_t len = aer_text(d, cls, elapsed - origin, origin > 0, text,
                                              sizeof(text), &total);

                        if (!aer_moved(written, i * SIM_AER_WRITTEN_SLOTS + (size_t)cls, total))
                                continue;
                        r = put_atomic(o, dir, aer_file[cls], text, len);
                        if (r)
                                return r;
                }
                if (d->kind != SIM_ROOT_PORT)
                        continue;
                /* The Root Port counts the ERR_* messages of its hierarchy,
                 * its own included. */
                for (int cls = 0; cls < SIM_AER_CLASSES; cls++) {
                        uint64_t sum = 0;
                        int n;

                        /* What each function reported while it existed
                         * since this port's own pci_dev appeared: the
                         * totals never go down when a function goes. */
                        for (size_t j = 0; j < m->device_count; j++) {
                                if (!m->devices[j].has_aer || sim_machine_root_port(m, j) != i)
                                        continue;
                                aer_text(&m->devices[j], cls,
                                         sim_device_present_seconds(m, j, origin, elapsed),
                                         origin > 0, NULL, 0, &total);
                                sum = sat_add(sum, total);
                        }
                        if (!aer_moved(written,
                                       i * SIM_AER_WRITTEN_SLOTS + SIM_AER_CLASSES + (size_t)cls,
                                       sum))
                                continue;
                        n = snprintf(text, sizeof(text), "%llu\n", (unsigned long long)sum);
                        r = put_atomic(o, dir, aer_rp_file[cls], text, (size_t)n);
                        if (r)
                                return r;
                }
        }
        return 0;
}

static int write_device(struct out *o, const struct sim_machine *m, const char *root, size_t idx)
{
        const struct sim_device *d = &m->devices[idx];
        uint8_t cfg[PCI_CFG_SPACE_EXP_SIZE];
        char dir[PATH_MAX], path[PATH_MAX], resource[2048];
        bool rciep = d->kind == SIM_RCIEP;
        const struct sim_socket *disc;
        size_t rlen = 0;
        int r;

        if (device_dir(dir, sizeof(dir), root, d) || join(path, sizeof(path), "%s/config", dir))
                return report(o, ENAMETOOLONG, root, "path too long below");
        r = make_dir(o, dir);
        if (r)
                return r;
        sim_config_image(m, idx, cfg);
        r = put_file(o, path, cfg, sizeof(cfg));
        if (r)
                return r;
        /* libpci's sysfs access needs `irq` and `resource` too: no BARs here,
         * except BAR 0 of a PMON discovery function (64-bit memory). */
        disc = discovery_socket(m, idx);
        for (int i = 0; i < (is_bridge(d->kind) ? 17 : 13); i++) {
                if (i == 0 && disc)
                        rlen += (size_t)snprintf(
                            resource + rlen, sizeof(resource) - rlen,
                            "0x%016llx 0x%016llx 0x%016llx\n", (unsigned long long)disc->bar,
                            (unsigned long long)(disc->bar + disc->bar_size - 1), 0x140204ULL);
                else
                        rlen += (size_t)snprintf(resource + rlen, sizeof(resource) - rlen,
                                                 "0x%016x 0x%016x 0x%016x\n", 0, 0, 0);
        }
        if (join(path, sizeof(path), "%s/resource", dir))
                return report(o, ENAMETOOLONG, dir, "path too long below");
        r = put_file(o, path, resource, rlen);
        if (!r)
                r = put_text(o, dir, "vendor", "0x%04x\n", d->vendor);
        if (!r)
                r = put_text(o, dir, "device", "0x%04x\n", d->device);
        if (!r)
                r = put_text(o, dir, "subsystem_vendor", "0x%04x\n", d->subsys_vendor);
        if (!r)
                r = put_text(o, dir, "subsystem_device", "0x%04x\n", d->subsys_device);
        if (!r)
                r = put_text(o, dir, "class", "0x%06x\n", d->class_code & 0xffffff);
        if (!r)
                r = put_text(o, dir, "revision", "0x%02x\n", d->revision);
        if (!r)
                r = put_text(o, dir, "irq", "0\n");
        if (!r)
                r = put_text(o, dir, "numa_node", "%d\n", d->numa_node);
        /* The link files exist for every PCIe function; an RCiEP's link
         * registers read as zero, so it shows "Unknown" and 0. */
        if (!r)
                r = put_text(o, dir, "current_link_speed", "%s\n",
                             speed_text(rciep || !d->cur_width ? 0 : d->cur_speed));
        if (!r)
                r = put_text(o, dir, "current_link_width", "%u\n", rciep ? 0 : d->cur_width);
        if (!r)
                r = put_text(o, dir, "max_link_speed", "%s\n",
                             speed_text(rciep ? 0 : d->max_speed));
        if (!r)
                r = put_text(o, dir, "max_link_width", "%u\n", rciep ? 0 : d->max_width);
        if (!r && is_bridge(d->kind))
                r = put_text(o, dir, "secondary_bus_number", "%u\n", d->secondary);
        if (!r && is_bridge(d->kind))
                r = put_text(o, dir, "subordinate_bus_number", "%u\n", d->subordinate);
        if (!r && disc) { /* resource0: the BAR, holding the discovery table */
                uint8_t *img = malloc(disc->bar_size);

                if (!img)
                        return report(o, ENOMEM, dir, "no memory for resource0 of");
                r = sim_discovery_image(m, (size_t)(disc - m->intel.sockets), img, disc->bar_size);
                if (!r && join(path, sizeof(path), "%s/resource0", dir))
                        r = report(o, ENAMETOOLONG, dir, "path too long below");
                else if (!r)
                        r = put_file(o, path, img, disc->bar_size);
                else
                        r = report(o, -r, dir, "cannot build the discovery table of");
                free(img);
        }
        return r;
}

/* ---- the hisi_pcie PMUs ---- */

struct pmu_event {
        const char *name;
        unsigned int code;
        enum sim_kernel from, to; /* published from .. to, inclusive */
};

/* events/ per kernel (kernel-facts.md 1.4 and 1.8). */
static const struct pmu_event pmu_events[] = {
    {"rx_mwr_latency", 0x0010, SIM_KERNEL_5_17, SIM_KERNEL_6_15},
    {"rx_mwr_cnt", 0x10010, SIM_KERNEL_5_17, SIM_KERNEL_6_15},
    {"rx_mrd_latency", 0x0210, SIM_KERNEL_5_17, SIM_KERNEL_6_15},
    {"rx_mrd_cnt", 0x10210, SIM_KERNEL_5_17, SIM_KERNEL_6_15},
    {"tx_mrd_latency", 0x0011, SIM_KERNEL_5_17, SIM_KERNEL_6_15},
    {"tx_mrd_cnt", 0x10011, SIM_KERNEL_5_17, SIM_KERNEL_6_15},
    /* v5.17 shipped two flux pairs with the wrong codes; v6.2 fixed them. */
    {"rx_mrd_flux", 0x1005, SIM_KERNEL_5_17, SIM_KERNEL_5_17},
    {"rx_mrd_time", 0x11005, SIM_KERNEL_5_17, SIM_KERNEL_5_17},
    {"tx_mrd_flux", 0x2004, SIM_KERNEL_5_17, SIM_KERNEL_5_17},
    {"tx_mrd_time", 0x12004, SIM_KERNEL_5_17, SIM_KERNEL_5_17},
    {"rx_mrd_flux", 0x0804, SIM_KERNEL_6_2, SIM_KERNEL_6_15},
    {"rx_mrd_time", 0x10804, SIM_KERNEL_6_2, SIM_KERNEL_6_15},
    {"tx_mrd_flux", 0x0405, SIM_KERNEL_6_2, SIM_KERNEL_6_15},
    {"tx_mrd_time", 0x10405, SIM_KERNEL_6_2, SIM_KERNEL_6_15},
    /* v6.9: four more flux/time pairs. */
    {"rx_mwr_flux", 0x0104, SIM_KERNEL_6_9, SIM_KERNEL_6_15},
    {"rx_mwr_time", 0x10104, SIM_KERNEL_6_9, SIM_KERNEL_6_15},
    {"rx_cpl_flux", 0x2004, SIM_KERNEL_6_9, SIM_KERNEL_6_15},
    {"rx_cpl_time", 0x12004, SIM_KERNEL_6_9, SIM_KERNEL_6_15},
    {"tx_mwr_flux", 0x0105, SIM_KERNEL_6_9, SIM_KERNEL_6_15},
    {"tx_mwr_time", 0x10105, SIM_KERNEL_6_9, SIM_KERNEL_6_15},
    {"tx_cpl_flux", 0x1005, SIM_KERNEL_6_9, SIM_KERNEL_6_15},
    {"tx_cpl_time", 0x11005, SIM_KERNEL_6_9, SIM_KERNEL_6_15},
};

struct pmu_format {
        const char *name;
        const char *text;
        enum sim_kernel from;
};

static const struct pmu_format pmu_formats[] = {
    {"event", "config:0-16", SIM_KERNEL_5_17},   {"thr_len", "config1:0-3", SIM_KERNEL_5_17},
    {"thr_mode", "config1:4", SIM_KERNEL_5_17},  {"trig_len", "config1:5-8", SIM_KERNEL_5_17},
    {"trig_mode", "config1:9", SIM_KERNEL_5_17}, {"len_mode", "config1:10-11", SIM_KERNEL_6_2},
    {"port", "config2:0-15", SIM_KERNEL_5_17},   {"bdf", "config2:16-31", SIM_KERNEL_5_17},
};

void sim_pmu_name(const struct sim_machine *m, size_t core, char *buf, size_t size)
{
        if (!buf || !size)
                return;
        if (!m || core >= m->core_count) {
                buf[0] = '\0';
                return;
        }
        snprintf(buf, size, "hisi_pcie%u_core%u", m->cores[core].sicl, m->cores[core].id);
}

static int write_pmu(struct out *o, const struct sim_machine *m, const char *root, size_t ci,
                     uint32_t type)
{
        const struct sim_core *core = &m->cores[ci];
        char name[64], dir[PATH_MAX], sub[PATH_MAX];
        int r;

        sim_pmu_name(m, ci, name, sizeof(name));
        if (join(dir, sizeof(dir), "%s/sys/bus/event_source/devices/%s", root, name))
                return report(o, ENAMETOOLONG, root, "path too long below");
        r = make_dir(o, dir);
        if (!r)
                r = put_text(o, dir, "type", "%u\n", type);
        if (!r) /* cpumap_print_to_pagebuf() list format: one CPU */
                r = put_text(o, dir, "cpumask", "%d\n", core->cpu);
        /* The kernel's %#x and %#04x print the 0x prefix even for zero, so
         * %#04x is "0x" and at least two digits. */
        if (!r)
                r = put_text(o, dir, "identifier", "0x%x\n", core->identifier);
        if (!r)
                r = put_text(o, dir, "bus", "0x%02x\n", core->bdf_min >> 8);
        if (!r && m->kernel >= SIM_KERNEL_6_12)
                r = put_text(o, dir, "bdf_min", "0x%02x\n", core->bdf_min);
        if (!r && m->kernel >= SIM_KERNEL_6_12)
                r = put_text(o, dir, "bdf_max", "0x%02x\n", core->bdf_max);
        if (r)
                return r;
        if (join(sub, sizeof(sub), "%s/format", dir))
                return report(o, ENAMETOOLONG, dir, "path too long below");
        r = make_dir(o, sub);
        for (size_t i = 0; !r && i < sizeof(pmu_formats) / sizeof(pmu_formats[0]); i++) {
                if (m->kernel >= pmu_formats[i].from)
                        r = put_text(o, sub, pmu_formats[i].name, "%s\n", pmu_formats[i].text);
        }
        if (r)
                return r;
        if (join(sub, sizeof(sub), "%s/events", dir))
                return report(o, ENAMETOOLONG, dir, "path too long below");
        r = make_dir(o, sub);
        for (size_t i = 0; !r && i < sizeof(pmu_events) / sizeof(pmu_events[0]); i++) {
                if (m->kernel >= pmu_events[i].from && m->kernel <= pmu_events[i].to)
                        r = put_text(o, sub, pmu_events[i].name, "config=0x%x\n",
                                     pmu_events[i].code);
        }
        return r;
}

/* ---- Intel: uncore IIO PMUs, CPU topology, /proc/cpuinfo ---- */

/* "%s/%s" directory made, into @out. */
static int sub_dir(struct out *o, char *out, size_t size, const char *dir, const char *name)
{
        if (join(out, size, "%s/%s", dir, name))
                return report(o, ENAMETOOLONG, dir, "path too long below");
        return make_dir(o, out);
}

/* The cpumask of an IIO PMU with box @box: the CPU that counts for each
 * socket that has the stack (@socket_cpu[i], < 0: none online; NULL: the
 * first CPU of each, as at boot), as a list ("0,56"). */
static void iio_cpumask_of(const struct sim_machine *m, unsigned int box, const int *socket_cpu,
                           char *buf, size_t size)
{
        size_t len = 0;

        buf[0] = '\0';
        for (size_t i = 0; i < m->intel.socket_count; i++) {
                const struct sim_socket *s = &m->intel.sockets[i];

                for (size_t k = 0; k < s->stack_count; k++) {
                        int cpu = socket_cpu ? socket_cpu[i] : (int)s->first_cpu;

                        if (s->stacks[k].box_id != box || cpu < 0)
                                continue;
                        len += (size_t)snprintf(buf + len, size - len, "%s%d", len ? "," : "", cpu);
                        if (len >= size)
                                len = size - 1;
                }
        }
}

static void iio_cpumask(const struct sim_machine *m, unsigned int box, char *buf, size_t size)
{
        iio_cpumask_of(m, box, NULL, buf, size);
}

/* The kernel's uncore event attributes print without a newline
 * (uncore_event_show: "%s"); format attributes end in one. */
static int put_event(struct out *o, const char *dir, const char *name, const char *text)
{
        char path[PATH_MAX];

        if (join(path, sizeof(path), "%s/%s", dir, name))
                return report(o, ENAMETOOLONG, dir, "path too long below");
        return put_file(o, path, text, strlen(text));
}

static int write_iio_free_running(struct out *o, const struct sim_machine *m, const char *root,
                                  unsigned int box, uint32_t type)
{
        bool v615 = m->kernel >= SIM_KERNEL_6_15;
        const char *scale = v615 ? "3.0517578125e-5" : "3.814697266e-6";
        char dir[PATH_MAX], sub[PATH_MAX], name[64], text[64], mask[256];
        int r;

        if (join(dir, sizeof(dir), "%s/sys/bus/event_source/devices/uncore_iio_free_running_%u",
                 root, box))
                return report(o, ENAMETOOLONG, root, "path too long below");
        iio_cpumask(m, box, mask, sizeof(mask));
        r = make_dir(o, dir);
        if (!r)
                r = put_text(o, dir, "type", "%u\n", type);
        if (!r)
                r = put_text(o, dir, "cpumask", "%s\n", mask);
        if (!r)
                r = sub_dir(o, sub, sizeof(sub), dir, "format");
        if (!r)
                r = put_text(o, sub, "event", "config:0-7\n");
        if (!r)
                r = put_text(o, sub, "umask", "config:8-15\n");
        if (!r)
                r = sub_dir(o, sub, sizeof(sub), dir, "events");
        if (!r)
                r = put_event(o, sub, "ioclk", "event=0xff,umask=0x10");
        for (unsigned int part = 0; !r && part < 8; part++) {
                snprintf(name, sizeof(name), "bw_in_port%u", part);
                snprintf(text, sizeof(text), "event=0xff,umask=0x2%u", part);
                r = put_event(o, sub, name, text);
                snprintf(name, sizeof(name), "bw_in_port%u.scale", part);
                if (!r)
                        r = put_event(o, sub, name, scale);
                snprintf(name, sizeof(name), "bw_in_port%u.unit", part);
                if (!r)
                        r = put_event(o, sub, name, "MiB");
                if (v615)
                        continue;
                snprintf(name, sizeof(name), "bw_out_port%u", part);
                snprintf(text, sizeof(text), "event=0xff,umask=0x3%u", part);
                if (!r)
                        r = put_event(o, sub, name, text);
                snprintf(name, sizeof(name), "bw_out_port%u.scale", part);
                if (!r)
                        r = put_event(o, sub, name, scale);
                snprintf(name, sizeof(name), "bw_out_port%u.unit", part);
                if (!r)
                        r = put_event(o, sub, name, "MiB");
        }
        return r;
}

static int write_iio_programmable(struct out *o, const struct sim_machine *m, const char *root,
                                  unsigned int box)
{
        static const char *const formats[][2] = {
            {"event", "config:0-7"},     {"umask", "config:8-15"},   {"edge", "config:18"},
            {"inv", "config:23"},        {"thresh", "config:24-35"}, {"ch_mask", "config:36-47"},
            {"fc_mask", "config:48-50"},
        };
        char dir[PATH_MAX], sub[PATH_MAX], name[32], mask[256];
        int r;

        if (join(dir, sizeof(dir), "%s/sys/bus/event_source/devices/uncore_iio_%u", root, box))
                return report(o, ENAMETOOLONG, root, "path too long below");
        iio_cpumask(m, box, mask, sizeof(mask));
        r = make_dir(o, dir);
        if (!r)
                r = put_text(o, dir, "type", "%u\n", SIM_IIO_TYPE_BASE + 0x100 + box);
        if (!r)
                r = put_text(o, dir, "cpumask", "%s\n", mask);
        if (!r)
                r = sub_dir(o, sub, sizeof(sub), dir, "format");
        for (size_t i = 0; !r && i < sizeof(formats) / sizeof(formats[0]); i++)
                r = put_text(o, sub, formats[i][0], "%s\n", formats[i][1]);
        for (size_t i = 0; !r && m->intel.die_files && i < m->intel.socket_count; i++) {
                const struct sim_socket *s = &m->intel.sockets[i];

                for (size_t k = 0; !r && k < s->stack_count; k++) {
                        if (s->stacks[k].box_id != box)
                                continue;
                        snprintf(name, sizeof(name), "die%u", s->id);
                        r = put_text(o, dir, name, "%04x:%02x\n", s->stacks[k].domain,
                                     s->stacks[k].bus);
                }
        }
        return r;
}

/* nvidia_pcie_pmu_<node> as arm_cspmu and its nvidia backend write it:
 * type, cpumask (one CPU), associated_cpus, identifier (PMIIDR), format/
 * (event config:0-32, root_port config1:0-9) and events/ ("event=0x.."). */
static int write_nvidia(struct out *o, const struct sim_machine *m, const char *root)
{
        static const char *const names[] = {
            "rd_bytes_loc",    "rd_bytes_rem",    "wr_bytes_loc",  "wr_bytes_rem",
            "total_bytes_loc", "total_bytes_rem", "rd_req_loc",    "rd_req_rem",
            "wr_req_loc",      "wr_req_rem",      "total_req_loc", "total_req_rem",
            "rd_cum_outs_loc", "rd_cum_outs_rem",
        };
        const struct sim_nvidia *nv = &m->nvidia;
        char dir[PATH_MAX], sub[PATH_MAX], text[32];
        int r = 0;

        for (size_t i = 0; !r && i < nv->socket_count; i++) {
                const struct sim_nv_socket *s = &nv->sockets[i];

                if (join(dir, sizeof(dir), "%s/sys/bus/event_source/devices/nvidia_pcie_pmu_%u",
                         root, s->node))
                        return report(o, ENAMETOOLONG, root, "path too long below");
                r = make_dir(o, dir);
                if (!r)
                        r = put_text(o, dir, "type", "%u\n", SIM_NV_TYPE_BASE + (unsigned int)i);
                if (!r)
                        r = put_text(o, dir, "cpumask", "%u\n", s->first_cpu);
                if (!r)
                        r = s->cpu_count > 1
                                ? put_text(o, dir, "associated_cpus", "%u-%u\n", s->first_cpu,
                                           s->first_cpu + s->cpu_count - 1)
                                : put_text(o, dir, "associated_cpus", "%u\n", s->first_cpu);
                if (!r)
                        r = put_text(o, dir, "identifier", "0x%x\n", nv->identifier);
                if (!r)
                        r = sub_dir(o, sub, sizeof(sub), dir, "format");
                if (!r)
                        r = put_text(o, sub, "event", "config:0-32\n");
                if (!r)
                        r = put_text(o, sub, "root_port", "config1:0-9\n");
                if (!r)
                        r = sub_dir(o, sub, sizeof(sub), dir, "events");
                for (unsigned int e = 0; !r && e < sizeof(names) / sizeof(names[0]); e++) {
                        snprintf(text, sizeof(text), "event=0x%x", e);
                        r = put_event(o, sub, names[e], text);
                }
                if (!r)
                        r = put_event(o, sub, "cycles", "event=0x100000000");
        }
        return r;
}

static int write_intel(struct out *o, const struct sim_machine *m, const char *root)
{
        const struct sim_intel *in = &m->intel;
        bool done[256] = {false};
        char dir[PATH_MAX], sub[PATH_MAX], path[PATH_MAX];
        char *text;
        size_t len = 0, cap;
        int r = 0;

        for (size_t i = 0; i < in->socket_count; i++) {
                const struct sim_socket *s = &in->sockets[i];

                for (size_t k = 0; k < s->stack_count; k++) {
                        unsigned int box = s->stacks[k].box_id & 0xff;

                        if (done[box])
                                continue;
                        done[box] = true;
                        r = write_iio_free_running(o, m, root, box, SIM_IIO_TYPE_BASE + box);
                        if (!r)
                                r = write_iio_programmable(o, m, root, box);
                        if (r)
                                return r;
                }
        }
        /* CPU topology: package = socket id, one die per package. */
        for (size_t i = 0; i < in->socket_count; i++) {
                const struct sim_socket *s = &in->sockets[i];

                for (unsigned int cpu = s->first_cpu; cpu < s->first_cpu + s->cpu_count; cpu++) {
                        if (join(dir, sizeof(dir), "%s/sys/devices/system/cpu/cpu%u", root, cpu))
                                return report(o, ENAMETOOLONG, root, "path too long below");
                        r = make_dir(o, dir);
                        if (!r)
                                r = sub_dir(o, sub, sizeof(sub), dir, "topology");
                        if (!r)
                                r = put_text(o, sub, "physical_package_id", "%u\n", s->id);
                        if (!r)
                                r = put_text(o, sub, "die_id", "0\n");
                        if (r)
                                return r;
                }
        }
        /* /proc/cpuinfo: a short block per CPU, in CPU order. */
        cap = (size_t)m->cpus * 200 + 1;
        text = malloc(cap);
        if (!text)
                return report(o, ENOMEM, root, "no memory for /proc/cpuinfo below");
        for (unsigned int cpu = 0; cpu < m->cpus; cpu++) {
                unsigned int pkg = 0;

                for (size_t i = 0; i < in->socket_count; i++) {
                        const struct sim_socket *s = &in->sockets[i];

                        if (cpu >= s->first_cpu && cpu < s->first_cpu + s->cpu_count)
                                pkg = s->id;
                }
                len += (size_t)snprintf(text + len, cap - len,
                                        "processor\t: %u\nvendor_id\t: GenuineIntel\n"
                                        "cpu family\t: 6\nmodel\t\t: %u\n"
                                        "model name\t: Intel(R) Xeon(R) CPU (SIMULATED)\n"
                                        "physical id\t: %u\n\n",
                                        cpu, in->cpu_model, pkg);
                if (len >= cap)
                        len = cap - 1;
        }
        if (join(path, sizeof(path), "%s/proc/cpuinfo", root))
                r = report(o, ENAMETOOLONG, root, "path too long below");
        else
                r = put_file(o, path, text, len);
        free(text);
        return r;
}

/* ---- the tree ---- */

int sim_sysfs_write(const struct sim_machine *m, const char *root, uint32_t pmu_type_base,
                    char *errbuf, size_t errlen)
{
        static const char *const dirs[] = {
            "sys",
            "sys/bus",
            "sys/bus/pci",
            "sys/bus/pci/devices",
            "sys/bus/event_source",
            "sys/bus/event_source/devices",
            "sys/devices",
            "sys/devices/system",
            "sys/devices/system/cpu",
            "proc",
        };
        const size_t ndirs = sizeof(dirs) / sizeof(dirs[0]);
        struct out o = {errbuf, errlen};
        char path[PATH_MAX], file[PATH_MAX], line[SIM_TEXT_MAX + 2];
        struct stat st;
        int r, n;

        if (errbuf && errlen)
                errbuf[0] = '\0';
        if (!m || !root)
                return -EINVAL;
        if (stat(root, &st))
                return report(&o, errno, root, "cannot use");
        if (!S_ISDIR(st.st_mode))
                return report(&o, ENOTDIR, root, "cannot use");
        for (size_t i = 0; i < ndirs; i++) {
                if (join(path, sizeof(path), "%s/%s", root, dirs[i]))
                        return report(&o, ENAMETOOLONG, root, "path too long below");
                if (i == 0 || i == ndirs - 1) {
                        /* sys/ and proc/ must be new: @root is to be empty. */
                        if (mkdir(path, 0755))
                                return report(&o, errno, path, "cannot create");
                } else {
                        r = make_dir(&o, path);
                        if (r)
                                return r;
                }
        }
        for (size_t i = 0; i < m->device_count; i++) {
                r = write_device(&o, m, root, i);
                if (r)
                        return r;
        }
        r = write_aer(&o, m, root, 0, NULL);
        if (r)
                return r;
        /* One PMU per core, whether or not its PMU function is described
         * (the function is what lspci shows; the PMU model serves all). */
        for (size_t i = 0; i < m->core_count; i++) {
                r = write_pmu(&o, m, root, i, pmu_type_base + (uint32_t)i);
                if (r)
                        return r;
        }
        if (m->intel.present) {
                r = write_intel(&o, m, root);
                if (r)
                        return r;
        }
        if (m->nvidia.present) {
                r = write_nvidia(&o, m, root);
                if (r)
                        return r;
        }
        if (join(path, sizeof(path), "%s/sys/devices/system/cpu", root))
                return report(&o, ENAMETOOLONG, root, "path too long below");
        r = m->cpus > 1 ? put_text(&o, path, "online", "0-%u\n", m->cpus - 1)
                        : put_text(&o, path, "online", "0\n");
        if (r)
                return r;
        if (join(file, sizeof(file), "%s/proc/cmdline", root))
                return report(&o, ENAMETOOLONG, root, "path too long below");
        n = snprintf(line, sizeof(line), "%s\n", m->cmdline);
        return put_file(&o, file, line, n > 0 && (size_t)n < sizeof(line) ? (size_t)n : 0);
}

int sim_sysfs_set_link_width(const struct sim_machine *m, const char *root, size_t idx,
                             unsigned int width)
{
        uint8_t cfg[PCI_CFG_SPACE_EXP_SIZE];
        char dir[PATH_MAX], text[16];
        const struct sim_device *d;
        size_t off = CAP_EXP + PCI_EXP_LNKSTA;
        uint16_t lnksta;
        int n, r;

        if (!m || !root || idx >= m->device_count)
                return -EINVAL;
        d = &m->devices[idx];
        if (d->kind == SIM_RCIEP || !d->cur_width || !width || width > d->max_width)
                return -EINVAL;
        if (device_dir(dir, sizeof(dir), root, d))
                return -ENAMETOOLONG;
        /* The image as described, with the Negotiated Link Width changed. */
        sim_config_image(m, idx, cfg);
        lnksta = (uint16_t)(cfg[off] | cfg[off + 1] << 8);
        lnksta = (uint16_t)((lnksta & ~0x03f0u) | (width & 0x3fu) << 4);
        put16(cfg, off, lnksta);
        r = put_atomic(NULL, dir, "config", (const char *)cfg, sizeof(cfg));
        if (r)
                return r;
        n = snprintf(text, sizeof(text), "%u\n", width);
        return put_atomic(NULL, dir, "current_link_width", text, (size_t)n);
}

int sim_sysfs_device_write(const struct sim_machine *m, const char *root, size_t idx)
{
        if (!m || !root || idx >= m->device_count)
                return -EINVAL;
        return write_device(NULL, m, root, idx);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw);

/* rm -rf @dir; gone already is fine. */
static int remove_dir(const char *dir)
{
        int r = nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);

        if (r == -1 && errno == ENOENT)
                return 0;
        return r == -1 ? -errno : r < 0 ? r : r ? -EIO : 0;
}

int sim_sysfs_device_remove(const struct sim_machine *m, const char *root, size_t idx)
{
        char dir[PATH_MAX];

        if (!m || !root || idx >= m->device_count)
                return -EINVAL;
        if (device_dir(dir, sizeof(dir), root, &m->devices[idx]))
                return -ENAMETOOLONG;
        return remove_dir(dir);
}

int sim_sysfs_pmu_write(const struct sim_machine *m, const char *root, size_t core, uint32_t type)
{
        if (!m || !root || core >= m->core_count)
                return -EINVAL;
        return write_pmu(NULL, m, root, core, type);
}

int sim_sysfs_put(const char *root, const char *dir, const char *name, const char *text)
{
        char path[PATH_MAX];

        if (!root || !dir || !name || !text || join(path, sizeof(path), "%s/%s", root, dir))
                return -EINVAL;
        return put_atomic(NULL, path, name, text, strlen(text));
}

int sim_sysfs_iio_cpumasks(const struct sim_machine *m, const char *root, const int *socket_cpu)
{
        static const char *const kinds[] = {"uncore_iio_free_running_", "uncore_iio_"};
        char dir[PATH_MAX], mask[256], text[260];
        struct stat st;
        int r = 0;

        if (!m || !root || !socket_cpu)
                return -EINVAL;
        for (unsigned int box = 0; !r && box < 256; box++) {
                iio_cpumask_of(m, box, socket_cpu, mask, sizeof(mask));
                snprintf(text, sizeof(text), "%s\n", mask);
                for (size_t k = 0; !r && k < sizeof(kinds) / sizeof(kinds[0]); k++) {
                        char name[64];

                        snprintf(name, sizeof(name), "%s%u", kinds[k], box);
                        if (join(dir, sizeof(dir), "%s/sys/bus/event_source/devices/%s", root,
                                 name))
                                return -ENAMETOOLONG;
                        if (stat(dir, &st) || !S_ISDIR(st.st_mode))
                                continue; /* no such box, or unbound */
                        snprintf(dir, sizeof(dir), "sys/bus/event_source/devices/%s", name);
                        r = sim_sysfs_put(root, dir, "cpumask", text);
                }
        }
        return r;
}

int sim_sysfs_iio_pmu_write(const struct sim_machine *m, const char *root, unsigned int box,
                            uint32_t type)
{
        struct out o = {NULL, 0};

        if (!m || !root || box > 0xff)
                return -EINVAL;
        return write_iio_free_running(&o, m, root, box, type);
}

int sim_sysfs_pmu_dir_remove(const char *root, const char *name)
{
        char dir[PATH_MAX];

        if (!root || !name || !*name || strchr(name, '/'))
                return -EINVAL;
        if (join(dir, sizeof(dir), "%s/sys/bus/event_source/devices/%s", root, name))
                return -ENAMETOOLONG;
        return remove_dir(dir);
}

int sim_sysfs_pmu_remove(const struct sim_machine *m, const char *root, size_t core)
{
        char name[64], dir[PATH_MAX];

        if (!m || !root || core >= m->core_count)
                return -EINVAL;
        sim_pmu_name(m, core, name, sizeof(name));
        if (join(dir, sizeof(dir), "%s/sys/bus/event_source/devices/%s", root, name))
                return -ENAMETOOLONG;
        return remove_dir(dir);
}

int sim_sysfs_update_aer(const struct sim_machine *m, const char *root, double elapsed,
                         uint64_t *written)
{
        if (!m || !root)
                return -EINVAL;
        return write_aer(NULL, m, root, elapsed, written);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void)st;
        (void)ftw;
        if (flag == FTW_DP)
                return rmdir(path) ? -errno : 0;
        return unlink(path) ? -errno : 0;
}

int sim_sysfs_remove(const char *root)
{
        static const char *const tops[] = {"sys", "proc"};
        char path[PATH_MAX];
        int r;

        if (!root || !*root || !strcmp(root, "/"))
                return -EINVAL;
        for (size_t i = 0; i < sizeof(tops) / sizeof(tops[0]); i++) {
                struct stat st;

                if (join(path, sizeof(path), "%s/%s", root, tops[i]))
                        return -ENAMETOOLONG;
                if (lstat(path, &st)) {
                        if (errno == ENOENT)
                                continue;
                        return -errno;
                }
                if (!S_ISDIR(st.st_mode))
                        return -ENOTDIR;
                r = nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
                if (r)
                        return r == -1 ? -errno : r < 0 ? r : -EIO;
        }
        return rmdir(root) ? -errno : 0;
}
