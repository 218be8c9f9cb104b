// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sim_write.c - test helper: write the sysfs/procfs tree of a simulated
 * machine and print what an outside tool (lspci) must see.
 *
 *   sim_write [--expect] [--type-base N] MACHINE.json ROOT
 *
 * ROOT must be an existing, empty directory; the tree goes to ROOT/sys and
 * ROOT/proc. With --expect, one line per function on stdout:
 *   <dddd:bb:dd.f> <port type> <LnkCap speed> x<width> <LnkSta speed> x<width>
 *   <MPSS> <MPS> <MRRS>
 * with speeds spelled as lspci prints them ("16GT/s"; "-" for an RCiEP,
 * which has no link registers). Exit status 0, or 1 with a message.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_machine.h"
#include "sim_sysfs.h"

static const char *lspci_speed(unsigned int code)
{
        static const char *const names[] = {"unknown", "2.5GT/s", "5GT/s", "8GT/s",
                                            "16GT/s",  "32GT/s",  "64GT/s"};

        return code < sizeof(names) / sizeof(names[0]) ? names[code] : "unknown";
}

static const char *type_name(enum sim_dev_kind kind)
{
        switch (kind) {
        case SIM_ROOT_PORT:
                return "root_port";
        case SIM_SWITCH_UP:
                return "upstream";
        case SIM_SWITCH_DOWN:
                return "downstream";
        case SIM_ENDPOINT:
                return "endpoint";
        case SIM_RCIEP:
                return "rciep";
        }
        return "unknown";
}

static void usage(void)
{
        fprintf(stderr, "usage: sim_write [--expect] [--type-base N] MACHINE.json ROOT\n");
}

int main(int argc, char **argv)
{
        struct sim_machine *m = NULL;
        unsigned long type_base = 64;
        char err[1024];
        bool expect = false;
        int argi = 1, r;

        while (argi < argc && argv[argi][0] == '-') {
                if (!strcmp(argv[argi], "--expect")) {
                        expect = true;
                        argi++;
                } else if (!strcmp(argv[argi], "--type-base") && argi + 1 < argc) {
                        char *end;

                        errno = 0;
                        type_base = strtoul(argv[argi + 1], &end, 0);
                        if (errno || *end || type_base > 0xffff0000UL) {
                                usage();
                                return 1;
                        }
                        argi += 2;
                } else {
                        usage();
                        return 1;
                }
        }
        if (argc - argi != 2) {
                usage();
                return 1;
        }
        r = sim_machine_load(argv[argi], &m, err, sizeof(err));
        if (r) {
                fprintf(stderr, "sim_write: %s\n", err[0] ? err : strerror(-r));
                return 1;
        }
        r = sim_sysfs_write(m, argv[argi + 1], (uint32_t)type_base, err, sizeof(err));
        if (r) {
                fprintf(stderr, "sim_write: %s\n", err[0] ? err : strerror(-r));
                sim_machine_free(m);
                return 1;
        }
        for (size_t i = 0; expect && i < m->device_count; i++) {
                const struct sim_device *d = &m->devices[i];
                char bdf[16];

                sim_device_bdf(d, bdf, sizeof(bdf));
                if (d->kind == SIM_RCIEP)
                        printf("%s %s - - - - %u %u %u\n", bdf, type_name(d->kind), d->mpss, d->mps,
                               d->mrrs);
                else
                        printf("%s %s %s x%u %s x%u %u %u %u\n", bdf, type_name(d->kind),
                               lspci_speed(d->max_speed), d->max_width,
                               lspci_speed(d->cur_width ? d->cur_speed : 0), d->cur_width, d->mpss,
                               d->mps, d->mrrs);
        }
        sim_machine_free(m);
        return 0;
}
