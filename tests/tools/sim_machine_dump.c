// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sim_machine_dump.c - test helper: print what the machine reader built.
 *
 *   sim_machine_dump MACHINE.json...
 *
 * For each file, a header line and every field of the parsed struct
 * sim_machine in a fixed order, one per line, numbers in a form that keeps
 * every bit (%.17g for doubles); a file the reader refuses prints its error
 * message instead. tests/integration/sim_machines.sh compares the output with
 * tests/golden/sim_machines/, so that a change to the reader that changes what
 * any shipped or fixture machine reads as shows up byte by byte. Exit status
 * 0, or 1 when a file could not be read at all.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include "sim_machine.h"

static void dist(const char *p, const struct sim_dist *d)
{
        printf("%s.count=%zu\n", p, d->count);
        for (size_t i = 0; i < d->count && i < SIM_DIST_MAX; i++)
                printf("%s[%zu]=%.17g@%.17g\n", p, i, d->value[i], d->weight[i]);
}

static void workload(const char *p, const struct sim_workload *w)
{
        char q[128];

        for (int k = 0; k < SIM_FLOW_KINDS; k++) {
                const struct sim_flow *f = &w->flow[k];

                printf("%s.flow[%d].bps=%.17g\n", p, k, f->bytes_per_second);
                snprintf(q, sizeof(q), "%s.flow[%d].size", p, k);
                dist(q, &f->size);
                snprintf(q, sizeof(q), "%s.flow[%d].latency", p, k);
                dist(q, &f->latency);
        }
        printf("%s.phases=%zu\n", p, w->phase_count);
        for (size_t i = 0; i < w->phase_count && i < SIM_PHASES_MAX; i++)
                printf("%s.phase[%zu]=%.17g x%.17g\n", p, i, w->phases[i].duration,
                       w->phases[i].scale);
        printf("%s.scale_cap=%.17g\n", p, w->scale_cap);
}

static void device(size_t i, const struct sim_device *d)
{
        char p[64];

        snprintf(p, sizeof(p), "dev[%zu]", i);
        printf("%s name=\"%s\" bdf=%04x:%02x:%02x.%u kind=%d\n", p, d->name, d->domain, d->bus,
               d->dev, d->fn, (int)d->kind);
        printf("%s id=%04x:%04x subsys=%04x:%04x class=%06x rev=%02x\n", p, d->vendor, d->device,
               d->subsys_vendor, d->subsys_device, d->class_code, d->revision);
        printf("%s mpss=%u mps=%u mrrs=%u\n", p, d->mpss, d->mps, d->mrrs);
        printf("%s link max=%u x%u cur=%u x%u flap=%.17g x%u hotplug=%d\n", p, d->max_speed,
               d->max_width, d->cur_speed, d->cur_width, d->flap_period_s, d->flap_width,
               d->hotplug);
        printf("%s sec=%u sub=%u parent=%zd core=%zd numa=%d\n", p, d->secondary, d->subordinate,
               (ssize_t)d->parent, (ssize_t)d->core, d->numa_node);
        printf("%s aer=%d\n", p, d->has_aer);
        for (int c = 0; c < SIM_AER_CLASSES; c++) {
                printf("%s aer[%d].count=%zu\n", p, c, d->aer_count[c]);
                for (size_t j = 0; j < d->aer_count[c] && j < SIM_AER_MAX; j++)
                        printf("%s aer[%d][%zu]=%s %llu %.17g\n", p, c, j, d->aer[c][j].name,
                               (unsigned long long)d->aer[c][j].initial, d->aer[c][j].per_second);
        }
        printf("%s workload=%d\n", p, d->has_workload);
        if (d->has_workload) {
                strcat(p, ".workload");
                workload(p, &d->workload);
        }
}

static void core(size_t i, const struct sim_core *c)
{
        printf(
            "core[%zu] sicl=%u id=%u numa=%d cpu=%d identifier=%08x pmu=%zd ptt=%zd bdf=%04x-%04x"
            " ports=%zu:",
            i, c->sicl, c->id, c->numa_node, c->cpu, c->identifier, (ssize_t)c->pmu_function,
            (ssize_t)c->ptt_function, c->bdf_min, c->bdf_max, c->port_count);
        for (size_t j = 0; j < c->port_count && j < 16; j++)
                printf(" %zu", c->ports[j]);
        printf("\n");
}

static void socket(size_t i, const struct sim_socket *s)
{
        printf("socket[%zu] id=%u numa=%d cpus=%u+%u discovery=%zd bar=%llx/%llx stride=%u\n", i,
               s->id, s->numa_node, s->first_cpu, s->cpu_count, (ssize_t)s->discovery_function,
               (unsigned long long)s->bar, (unsigned long long)s->bar_size, s->stride);
        printf("socket[%zu] other_dvsec=%zu:", i, s->other_dvsec_count);
        for (size_t j = 0; j < s->other_dvsec_count && j < 4; j++)
                printf(" %04x", s->other_dvsec_ids[j]);
        printf("\nsocket[%zu] units=%zu\n", i, s->unit_count);
        for (size_t j = 0; j < s->unit_count; j++) {
                const struct sim_uncore_unit *u = &s->units[j];

                printf("socket[%zu].unit[%zu] type=%u box=%u access=%d ctl=%llx regs=%u width=%u"
                       " off=%u/%u/%u\n",
                       i, j, u->type, u->box_id, (int)u->access, (unsigned long long)u->ctl,
                       u->num_regs, u->width, u->ctl_offset, u->ctr_offset, u->status_offset);
        }
        printf("socket[%zu] stacks=%zu\n", i, s->stack_count);
        for (size_t j = 0; j < s->stack_count && j < SIM_MAX_IIO_STACKS; j++) {
                const struct sim_iio_stack *t = &s->stacks[j];

                printf("socket[%zu].stack[%zu] box=%u bus=%04x:%02x ports=%zu:", i, j, t->box_id,
                       t->domain, t->bus, t->port_count);
                for (size_t k = 0; k < t->port_count && k < 8; k++)
                        printf(" %zu", t->ports[k]);
                printf("\n");
                if (s->msm_function != SIM_NONE)
                        printf("socket[%zu].stack[%zu] cpubus=%u sad=%zu\n", i, j, s->cpubus[j],
                               s->sad_function[j]);
        }
        if (s->msm_function != SIM_NONE)
                printf("socket[%zu] msm=%zu pcu=%zu\n", i, s->msm_function, s->pcu_function);
}

static void amd(const struct sim_amd *a)
{
        printf("amd family=%02x model=%02x df_counters=%u narrow_umask=%d sockets=%zu\n",
               a->cpu_family, a->cpu_model, a->df_counters, a->narrow_umask, a->socket_count);
        for (size_t i = 0; i < a->socket_count && i < SIM_MAX_SOCKETS; i++) {
                const struct sim_amd_socket *s = &a->sockets[i];

                printf("amd.socket[%zu] id=%u numa=%d cpus=%u+%u rcs=%zu\n", i, s->id, s->numa_node,
                       s->first_cpu, s->cpu_count, s->rc_count);
                for (size_t j = 0; j < s->rc_count && j < SIM_AMD_ROOT_COMPLEXES; j++) {
                        const struct sim_amd_rc *rc = &s->rcs[j];

                        printf("amd.socket[%zu].rc[%zu] index=%u bus=%04x:%02x remote=%.17g "
                               "ports=%zu:",
                               i, j, rc->index, rc->domain, rc->bus, rc->remote_share,
                               rc->port_count);
                        for (size_t k = 0; k < rc->port_count && k < 16; k++)
                                printf(" %zu", rc->ports[k]);
                        printf("\n");
                }
        }
}

static void dump(const struct sim_machine *m)
{
        printf("name=\"%s\"\ndescription=\"%s\"\nkernel=%s\ncpus=%u\ncmdline=\"%s\"\n", m->name,
               m->description, sim_kernel_name(m->kernel), m->cpus, m->cmdline);
        printf("clocks flux=%.17g time=%.17g latency=%.17g ptt=%.17g ptt_abs=%d\n",
               m->clocks.flux_unit_bytes, m->clocks.time_clock_hz, m->clocks.latency_clock_hz,
               m->clocks.ptt_clock_hz, m->clocks.ptt_time_absolute);
        printf("cores=%zu\n", m->core_count);
        for (size_t i = 0; i < m->core_count; i++)
                core(i, &m->cores[i]);
        printf("devices=%zu\n", m->device_count);
        for (size_t i = 0; i < m->device_count; i++)
                device(i, &m->devices[i]);
        printf("injections=%zu\n", m->injection_count);
        for (size_t i = 0; i < m->injection_count && i < 8; i++)
                printf("injection[%zu] pmu=\"%s\" err=%d count=%ld\n", i, m->injections[i].pmu,
                       m->injections[i].err, m->injections[i].count);
        printf(
            "intel present=%d model=%u in=%.17g out=%.17g ioclk=%.17g die_files=%d sockets=%zu\n",
            m->intel.present, m->intel.cpu_model, m->intel.iio_in_bytes_per_count,
            m->intel.iio_out_bytes_per_count, m->intel.ioclk_hz, m->intel.die_files,
            m->intel.socket_count);
        if (m->intel.stack_registers)
                printf("intel stack_registers chop=%u\n", m->intel.chop);
        for (size_t i = 0; i < m->intel.socket_count && i < SIM_MAX_SOCKETS; i++)
                socket(i, &m->intel.sockets[i]);
        /* Only machines with DesignWare root complexes (the older goldens
         * stay as they were). */
        if (m->dwc.rc_count)
                printf("root_complexes=%zu ports=%zu\n", m->dwc.rc_count, m->dwc.port_count);
        for (size_t i = 0; i < m->dwc.rc_count && i < SIM_MAX_DWC_RCS; i++)
                printf("root_complex[%zu] id=%u numa=%d cpu=%d\n", i, m->dwc.rcs[i].id,
                       m->dwc.rcs[i].numa_node, m->dwc.rcs[i].cpu);
        for (size_t i = 0; i < m->dwc.port_count && i < SIM_MAX_DWC_PORTS; i++)
                printf("dwc_port[%zu] dev=%zu rc=%zu pmu=%d\n", i, m->dwc.ports[i],
                       m->dwc.port_rc[i], sim_dwc_has_pmu(m, i));
        /* Only on AMD machines, so the others read as they always did. */
        if (m->amd.present)
                amd(&m->amd);
        /* Only where there is one: the other machines' dumps stay as recorded. */
        if (m->nvidia.present) {
                printf("nvidia identifier=0x%x cycles_hz=%.17g counters=%u sockets=%zu\n",
                       m->nvidia.identifier, m->nvidia.cycles_hz, m->nvidia.counters,
                       m->nvidia.socket_count);
                for (size_t i = 0; i < m->nvidia.socket_count && i < SIM_MAX_SOCKETS; i++) {
                        const struct sim_nv_socket *s = &m->nvidia.sockets[i];

                        printf("nvidia[%zu] node=%u cpus=%u+%u remote=%.17g ports=%zu:", i, s->node,
                               s->first_cpu, s->cpu_count, s->remote_share, s->port_count);
                        for (size_t k = 0; k < s->port_count && k < SIM_NV_PORT_BITS; k++)
                                printf(" %zu@%u", s->ports[k], s->bits[k]);
                        printf("\n");
                }
        }
        printf("cpu_sicl:");
        for (size_t i = 0; i < sizeof(m->cpu_sicl); i++)
                if (m->cpu_sicl[i])
                        printf(" %zu=%u", i, m->cpu_sicl[i]);
        printf("\nevents=%zu/%zu\n", m->schedule_count, m->event_count);
        for (size_t i = 0; i < m->event_count && i < SIM_EVENT_LOG; i++) {
                const struct sim_event *e = &m->events[i];

                printf("event[%zu] kind=%d pmu=%d at=%.17g every=%.17g dev=%zd cpu=%u core=%zd\n",
                       i, (int)e->kind, (int)e->pmu, e->at_s, e->every_s, (ssize_t)e->dev, e->cpu,
                       (ssize_t)e->core);
        }
}

int main(int argc, char **argv)
{
        int status = 0;

        for (int i = 1; i < argc; i++) {
                struct sim_machine *m = NULL;
                char err[1024] = "";
                const char *base = strrchr(argv[i], '/');
                int r = sim_machine_load(argv[i], &m, err, sizeof(err));

                printf("== %s\n", base ? base + 1 : argv[i]);
                if (r == 0)
                        dump(m);
                else
                        printf("error %d: %s\n", r, err);
                if (r == -ENOENT || r == -ENOMEM)
                        status = 1;
                sim_machine_free(m);
        }
        return status;
}
