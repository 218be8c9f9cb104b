// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_machine_desc.c - the simulator description `pciescope snapshot`
 * generates (machine_desc.h) from the facts it reads (machine_facts.h):
 *
 * - every shipped machine: facts of the simulation -> description -> the
 *   loader accepts it -> a simulation of it has the same configuration
 *   space (slot numbers aside: the simulator numbers slots itself), NUMA
 *   nodes, AER counts and PMU set, and describing it again gives the same
 *   text;
 * - robustness: each function of kunpeng930-misconfig cut to 64 bytes in
 *   turn still gives a description the loader accepts, and a note;
 * - a machine the schema cannot hold (conventional PCI only): -ENOTSUP;
 * - the kernel guessed from the PMU files (the command line redaction:
 *   test_redact.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "hw_env.h"
#include "machine_desc.h"
#include "machine_facts.h"
#include "pci_regs.h"
#include "sim.h"
#include "support.h"

#define MACHINES TOP_SRCDIR "/sim/machines"

struct opened {
        struct sim *sim;
        struct hw_env env;
        struct machine_facts *mf;
};

static void open_machine(const char *name_or_path, struct opened *o)
{
        struct sim_opts so = {.machine_dir = MACHINES, .clock = fake_clock};
        char err[512] = "";

        fake_now = 0;
        memset(o, 0, sizeof(*o));
        if (sim_open(name_or_path, &so, &o->sim, err, sizeof(err)))
                fail_msg("sim_open %s: %s", name_or_path, err);
        hw_env_init_system(&o->env);
        o->env.log = capture_log;
        assert_int_equal(sim_env(o->sim, &o->env), 0);
        if (machine_facts_read(&o->env, NULL, 0, "a test", &o->mf, err, sizeof(err)))
                fail_msg("machine_facts_read: %s", err);
}

static void close_machine(struct opened *o)
{
        machine_facts_free(o->mf);
        sim_close(o->sim);
}

static char *describe(const struct md_facts *f, struct md_notes *notes)
{
        char *json = NULL;

        assert_int_equal(machine_desc_build(f, "described", &json, notes), 0);
        assert_non_null(json);
        return json;
}

/* The PCIe capability's SLTCAP dword: the simulator numbers slots by
 * description order, which the schema does not carry. */
static bool in_sltcap(const struct md_function *f, size_t off)
{
        size_t cap = f->cfg[PCI_CAPABILITY_LIST];

        /* every simulated function has its PCIe capability first */
        return cap && off >= cap + 0x14 && off < cap + 0x18;
}

static void same_facts(const struct md_facts *a, const struct md_facts *b)
{
        assert_int_equal(a->function_count, b->function_count);
        assert_int_equal(a->cpus, b->cpus);
        assert_string_equal(a->cmdline, b->cmdline);
        for (size_t i = 0; i < a->function_count; i++) {
                const struct md_function *x = &a->functions[i], *y = &b->functions[i];

                assert_int_equal(pci_addr_compare(&x->addr, &y->addr), 0);
                assert_int_equal(x->cfg_len, y->cfg_len);
                for (size_t k = 0; k < x->cfg_len; k++)
                        if (x->cfg[k] != y->cfg[k] && !in_sltcap(x, k))
                                fail_msg("function %u:%02x:%02x.%u: config byte %#zx %#x != %#x",
                                         x->addr.domain, x->addr.bus, x->addr.dev, x->addr.func, k,
                                         x->cfg[k], y->cfg[k]);
                assert_int_equal(x->numa_node, y->numa_node);
                assert_int_equal(x->aer_known, y->aer_known);
                for (int c = 0; c < AER_CLASS_COUNT; c++) {
                        assert_int_equal(x->aer.classes[c].count, y->aer.classes[c].count);
                        for (size_t k = 0; k < x->aer.classes[c].count; k++) {
                                assert_string_equal(x->aer.classes[c].counters[k].name,
                                                    y->aer.classes[c].counters[k].name);
                                assert_int_equal(x->aer.classes[c].counters[k].count,
                                                 y->aer.classes[c].counters[k].count);
                        }
                }
        }
        assert_int_equal(a->hisi_count, b->hisi_count);
        for (size_t i = 0; i < a->hisi_count; i++) {
                assert_int_equal(a->hisi[i].sicl, b->hisi[i].sicl);
                assert_int_equal(a->hisi[i].core, b->hisi[i].core);
                assert_int_equal(a->hisi[i].cpu, b->hisi[i].cpu);
                assert_int_equal(a->hisi[i].identifier, b->hisi[i].identifier);
                assert_int_equal(a->hisi[i].bdf_min, b->hisi[i].bdf_min);
                assert_int_equal(a->hisi[i].bdf_max, b->hisi[i].bdf_max);
                assert_int_equal(a->hisi[i].event_count, b->hisi[i].event_count);
        }
        assert_int_equal(a->ptt_count, b->ptt_count);
        for (size_t i = 0; i < a->ptt_count; i++) {
                assert_int_equal(a->ptt[i].sicl, b->ptt[i].sicl);
                assert_int_equal(a->ptt[i].core, b->ptt[i].core);
        }
        assert_int_equal(a->box_count, b->box_count);
        for (size_t i = 0; i < a->box_count; i++) {
                assert_int_equal(a->boxes[i].box, b->boxes[i].box);
                assert_int_equal(a->boxes[i].cpu_count, b->boxes[i].cpu_count);
                assert_int_equal(a->boxes[i].bw_out, b->boxes[i].bw_out);
        }
        assert_int_equal(a->socket_count, b->socket_count);
}

static void roundtrip(const char *machine)
{
        struct opened a, b;
        struct md_notes *notes = calloc(1, sizeof(*notes));
        struct sim_machine *m = NULL;
        char err[512] = "", path[] = "/tmp/test_machine_desc-XXXXXX.json";
        char *json, *again;
        FILE *f;
        int fd;

        assert_non_null(notes);
        open_machine(machine, &a);
        json = describe(machine_facts_get(a.mf), notes);
        if (sim_machine_parse(json, "described.json", &m, err, sizeof(err)))
                fail_msg("%s: the loader refuses the description: %s\n%s", machine, err, json);
        sim_machine_free(m);
        fd = mkstemps(path, 5);
        assert_true(fd >= 0);
        f = fdopen(fd, "w");
        assert_non_null(f);
        fputs(json, f);
        fclose(f);
        open_machine(path, &b);
        unlink(path);
        same_facts(machine_facts_get(a.mf), machine_facts_get(b.mf));
        again = describe(machine_facts_get(b.mf), notes);
        assert_string_equal(json, again);
        free(json);
        free(again);
        free(notes);
        close_machine(&a);
        close_machine(&b);
}

static void test_roundtrip_kunpeng930_2p(void **state)
{
        (void)state;
        roundtrip("kunpeng930-2p");
}

static void test_roundtrip_misconfig(void **state)
{
        (void)state;
        roundtrip("kunpeng930-misconfig");
}

static void test_roundtrip_spr_2s(void **state)
{
        (void)state;
        roundtrip("spr-2s");
}

/* The generator's view of the misconfigured machine: the AER counts, the
 * downtrained link stated once, the PTT functions paired by order (the
 * simulated sysfs has plain directories, not links) and said so. */
static void test_misconfig_content(void **state)
{
        struct opened a;
        struct md_notes *notes = calloc(1, sizeof(*notes));
        char *json;
        bool ptt_note = false;

        (void)state;
        open_machine("kunpeng930-misconfig", &a);
        json = describe(machine_facts_get(a.mf), notes);
        assert_non_null(strstr(json, "\"MalfTLP\": 1"));
        assert_non_null(strstr(json, "\"CmpltTO\": 2"));
        assert_non_null(strstr(json, "\"speed\": \"8GT/s\""));
        assert_non_null(strstr(json, "\"ptt\": \"0000:7e:01.1\""));
        assert_non_null(strstr(json, "pci=pcie_bus_tune_off"));
        for (size_t i = 0; i < notes->count; i++)
                ptt_note |= strstr(notes->text[i], "taken to be 0000:7e:00.1") != NULL;
        assert_true(ptt_note);
        free(json);
        free(notes);
        close_machine(&a);
}

/* A copy of spr-2s without the CPU bus register functions, in @path. */
static void spr_without_registers(char *path)
{
        static char text[1 << 17];
        FILE *in = fopen(MACHINES "/spr-2s.json", "r"), *out;
        const char *from = "\"stack_registers\": true";
        char *at;
        size_t n;
        int fd;

        assert_non_null(in);
        n = fread(text, 1, sizeof(text) - 1, in);
        fclose(in);
        text[n] = '\0';
        at = strstr(text, from);
        assert_non_null(at);
        memcpy(at, "\"stack_registers\":false", strlen(from));
        fd = mkstemps(path, 5);
        assert_true(fd >= 0);
        out = fdopen(fd, "w");
        assert_non_null(out);
        fputs(text, out);
        fclose(out);
}

/* spr-2s: the kernel does not map IIO stacks to buses (no die files); the
 * CPU bus registers do, and the description has the simulator write them
 * again. Without them the generator pairs stacks in order and says so;
 * IIOStackBus lines win. */
static void test_iio_stack_buses(void **state)
{
        struct opened a;
        struct md_notes *notes = calloc(1, sizeof(*notes));
        struct md_stack_bus given[] = {{.box = 2, .socket = 0, .bus = {.bus = 0x26}},
                                       {.box = 4, .socket = 0, .bus = {.bus = 0x15}},
                                       {.box = 6, .socket = 0, .bus = {.bus = 0x37}}};
        char path[] = "/tmp/test_machine_desc-noregs-XXXXXX.json";
        struct md_facts f;
        char *json;
        int guessed = 0;

        (void)state;
        open_machine("spr-2s", &a);
        json = describe(machine_facts_get(a.mf), notes);
        assert_non_null(strstr(json, "\"stack_registers\": true"));
        assert_non_null(strstr(json, "\"chop\": \"xcc\""));
        assert_non_null(strstr(strstr(json, "\"box_id\": 4"), "\"bus\": \"0x26\""));
        for (size_t i = 0; i < notes->count; i++)
                guessed += strstr(notes->text[i], "which root bus each IIO stack owns") != NULL;
        assert_int_equal(guessed, 0);
        free(json);
        close_machine(&a);
        notes->count = 0;

        spr_without_registers(path);
        open_machine(path, &a);
        unlink(path);

        f = *machine_facts_get(a.mf);
        json = describe(&f, notes);
        assert_non_null(strstr(strstr(json, "\"box_id\": 2"), "\"bus\": \"0x15\""));
        for (size_t i = 0; i < notes->count; i++)
                guessed += strstr(notes->text[i], "which root bus each IIO stack owns") != NULL;
        assert_int_equal(guessed, 2); /* both sockets */
        free(json);
        f.stack_buses = given;
        f.stack_bus_count = 3;
        json = describe(&f, notes);
        {
                const char *b2 = strstr(json, "\"box_id\": 2");
                const char *b4 = strstr(json, "\"box_id\": 4");

                assert_non_null(b2);
                assert_non_null(b4);
                assert_non_null(strstr(b2, "\"bus\": \"0x26\""));
                assert_true(strstr(b2, "\"bus\": \"0x26\"") < b4);
                assert_non_null(strstr(b4, "\"bus\": \"0x15\""));
        }
        guessed = 0;
        for (size_t i = 0; i < notes->count; i++)
                guessed += strstr(notes->text[i], "which root bus each IIO stack owns") != NULL;
        assert_int_equal(guessed, 1); /* socket 1 only */
        free(json);
        free(notes);
        close_machine(&a);
}

/* Each function cut to its 64-byte header (what a non-root reader gets) in
 * turn: the description stays loadable and the cut is noted. */
static void test_truncated_functions(void **state)
{
        struct opened a;
        struct md_notes *notes = calloc(1, sizeof(*notes));
        const struct md_facts *orig;

        (void)state;
        open_machine("kunpeng930-misconfig", &a);
        orig = machine_facts_get(a.mf);
        for (size_t i = 0; i < orig->function_count; i++) {
                struct md_facts f = *orig;
                struct md_function *fns = calloc(f.function_count, sizeof(*fns));
                struct sim_machine *m = NULL;
                char err[512] = "", *json = NULL;
                bool noted = false;
                int r;

                memcpy(fns, orig->functions, f.function_count * sizeof(*fns));
                fns[i].cfg_len = 64;
                f.functions = fns;
                r = machine_desc_build(&f, "cut", &json, notes);
                if (r == -ENOTSUP) { /* the only Root Port of every core cut */
                        free(fns);
                        continue;
                }
                assert_int_equal(r, 0);
                if (sim_machine_parse(json, "cut.json", &m, err, sizeof(err)))
                        fail_msg("function %zu cut: %s\n%s", i, err, json);
                sim_machine_free(m);
                for (size_t k = 0; k < notes->count; k++)
                        noted |= strstr(notes->text[k], "no PCI Express capability") != NULL;
                assert_true(noted);
                free(json);
                free(fns);
        }
        free(notes);
        close_machine(&a);
}

/* A conventional PCI machine (this VM's kind): nothing the schema holds. */
static void test_not_simulatable(void **state)
{
        uint8_t cfg[256] = {0};
        struct md_function fn = {
            .addr = {.bus = 0, .dev = 3}, .cfg = cfg, .cfg_len = 256, .numa_node = -1};
        struct md_facts f = {
            .cpus = 2, .function_count = 1, .functions = &fn, .osrelease = "6.1.0"};
        struct md_notes *notes = calloc(1, sizeof(*notes));
        char *json = NULL;
        bool said = false;

        (void)state;
        cfg[0] = 0xf4, cfg[1] = 0x1a, cfg[2] = 0x41, cfg[3] = 0x10; /* 1af4:1041 */
        cfg[0x0b] = 0x02;                                           /* network */
        assert_int_equal(machine_desc_build(&f, "vm", &json, notes), -ENOTSUP);
        assert_null(json);
        for (size_t i = 0; i < notes->count; i++)
                said |= strstr(notes->text[i], "0000:00:03.0 [1af4:1041]: no PCI Express") != NULL;
        assert_true(said);
        free(notes);
}

static void test_kernel(void **state)
{
        struct md_hisi_pmu p = {.has_range = true};
        struct md_iio_box box = {.bw_out = true};
        struct md_facts f = {.hisi_count = 1, .hisi = &p};
        char why[160];

        (void)state;
        assert_string_equal(machine_desc_kernel(&f, why, sizeof(why)), "6.12");
        p = (struct md_hisi_pmu){.event_count = 18, .has_len_mode = true};
        assert_string_equal(machine_desc_kernel(&f, why, sizeof(why)), "6.9");
        p = (struct md_hisi_pmu){.event_count = 10, .has_len_mode = true};
        assert_string_equal(machine_desc_kernel(&f, why, sizeof(why)), "6.2");
        p = (struct md_hisi_pmu){.event_count = 10, .old_mrd_codes = true};
        assert_string_equal(machine_desc_kernel(&f, why, sizeof(why)), "5.17");
        f = (struct md_facts){.box_count = 1, .boxes = &box};
        assert_string_equal(machine_desc_kernel(&f, why, sizeof(why)), "6.12");
        box.bw_out = false;
        assert_string_equal(machine_desc_kernel(&f, why, sizeof(why)), "6.15");
        f = (struct md_facts){.osrelease = "6.13.2-generic"};
        assert_string_equal(machine_desc_kernel(&f, why, sizeof(why)), "6.12");
        assert_non_null(strstr(why, "6.13.2-generic"));
        f.osrelease = "5.10.0";
        assert_string_equal(machine_desc_kernel(&f, why, sizeof(why)), "5.17");
        f.osrelease = "junk";
        assert_string_equal(machine_desc_kernel(&f, why, sizeof(why)), "6.12");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_roundtrip_kunpeng930_2p),
            cmocka_unit_test(test_roundtrip_misconfig),
            cmocka_unit_test(test_roundtrip_spr_2s),
            cmocka_unit_test(test_misconfig_content),
            cmocka_unit_test(test_iio_stack_buses),
            cmocka_unit_test(test_truncated_functions),
            cmocka_unit_test(test_not_simulatable),
            cmocka_unit_test(test_kernel),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
