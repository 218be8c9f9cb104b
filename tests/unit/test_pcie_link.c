// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_pcie_link.c - speed codes, raw capacity, speed vectors, downtraining,
 * payload efficiency and the link-change tracker.
 *
 * Expected capacities are worked out by hand from the formula pcie_link.h
 * documents: GT/s * width * encoding / 8 bits, in integer arithmetic
 * (multiply first, then divide by the encoding denominator, then by 8), so
 * 8 GT/s x16 = 8e9 * 16 * 128 / 130 / 8 = 15753846153 (not ...154).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "pcie_link.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static void test_speed_gts(void **state)
{
        static const double gts[] = {0.0, 2.5, 5.0, 8.0, 16.0, 32.0, 64.0, 0.0, 0.0};
        int bad = 0;

        (void)state;
        for (unsigned int code = 0; code < ARRAY_SIZE(gts); code++) {
                double got = pcie_speed_gts(code);

                if (got != gts[code]) {
                        print_message("# speed code %u: %g GT/s, expected %g\n", code, got,
                                      gts[code]);
                        bad++;
                }
        }
        assert_int_equal(bad, 0);
        assert_true(pcie_speed_gts(15) == 0.0);
        assert_true(pcie_speed_gts(0xffffffffu) == 0.0);
}

static const struct {
        unsigned int speed, width;
        uint64_t bytes;
} capacity_rows[] = {
    {1, 1, 250000000ull},    /* 2.5e9 * 8/10 / 8 */
    {1, 32, 8000000000ull},  /* 2.5e9 * 32 * 8/10 / 8 */
    {2, 1, 500000000ull},    /* 5e9 * 8/10 / 8 */
    {2, 16, 8000000000ull},  /* 5e9 * 16 * 8/10 / 8 */
    {3, 1, 984615384ull},    /* 8e9 * 128 / 130 / 8 = 984615384.6 */
    {3, 16, 15753846153ull}, /* 8e9 * 16 * 128 = 16384e9; / 130 = 126030769230; / 8 */
    {4, 4, 7876923076ull},   /* 16e9 * 4 * 128 = 8192e9; / 130 = 63015384615; / 8 */
    {4, 16, 31507692307ull}, /* 16e9 * 16 * 128 / 130 / 8 = 31507692307.7 */
    {5, 1, 3938461538ull},   /* 32e9 * 128 / 130 / 8 = 3938461538.5 */
    {5, 16, 63015384615ull}, /* 32e9 * 16 * 128 = 65536e9; / 130 = 504123076923; / 8 */
    {6, 1, 8000000000ull},   /* 64e9 / 8, FLIT mode counted 1:1 */
    {6, 16, 128000000000ull},
    {3, 0, 0}, /* width 0: link down */
    {6, 0, 0},
    {0, 4, 0},  /* reserved speed codes */
    {7, 16, 0}, /* 128 GT/s is not defined yet */
    {8, 16, 0},
    {15, 16, 0},
};

static void test_link_capacity(void **state)
{
        int bad = 0;

        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(capacity_rows); i++) {
                uint64_t got =
                    pcie_link_capacity_bytes(capacity_rows[i].speed, capacity_rows[i].width);

                if (got != capacity_rows[i].bytes) {
                        print_message("# speed %u x%u: %llu B/s, expected %llu\n",
                                      capacity_rows[i].speed, capacity_rows[i].width,
                                      (unsigned long long)got,
                                      (unsigned long long)capacity_rows[i].bytes);
                        bad++;
                }
        }
        assert_int_equal(bad, 0);
}

static void test_speed_vector(void **state)
{
        static const struct {
                const char *name;
                struct pcie_link_regs regs;
                uint8_t vector;
        } rows[] = {
            {"LNKCAP2 present", {.max_speed_code = 3, .speed_vector = 0x0e}, 0x0e},
            /* LNKCAP2 wins over LNKCAP, even where they disagree. */
            {"LNKCAP2 with a gap", {.max_speed_code = 3, .speed_vector = 0x0a}, 0x0a},
            {"LNKCAP2 above LNKCAP", {.max_speed_code = 3, .speed_vector = 0x3e}, 0x3e},
            {"no LNKCAP2, 2.5 GT/s", {.max_speed_code = 1}, 0x02},
            {"no LNKCAP2, 5 GT/s", {.max_speed_code = 2}, 0x06},
            {"no LNKCAP2, 8 GT/s", {.max_speed_code = 3}, 0x0e},
            {"no LNKCAP2, 64 GT/s", {.max_speed_code = 6}, 0x7e},
            {"nothing known", {.max_speed_code = 0}, 0x00},
        };
        int bad = 0;

        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
                uint8_t got = pcie_link_speed_vector(&rows[i].regs);

                if (got != rows[i].vector) {
                        print_message("# row '%s': vector %#x, expected %#x\n", rows[i].name, got,
                                      rows[i].vector);
                        bad++;
                }
        }
        assert_int_equal(bad, 0);
}

static void test_speed_vector_max(void **state)
{
        static const struct {
                uint8_t vector;
                unsigned int max;
        } rows[] = {
            {0x00, 0}, {0x01, 0}, /* bit 0 is reserved */
            {0x02, 1}, {0x06, 2}, {0x0e, 3}, {0x1e, 4}, {0x3e, 5},
            {0x7e, 6}, {0x0a, 3}, {0x10, 4}, {0x80, 7}, {0xff, 7},
        };
        int bad = 0;

        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
                unsigned int got = pcie_speed_vector_max(rows[i].vector);

                if (got != rows[i].max) {
                        print_message("# vector %#x: max %u, expected %u\n", rows[i].vector, got,
                                      rows[i].max);
                        bad++;
                }
        }
        assert_int_equal(bad, 0);
}

static void test_link_is_up(void **state)
{
        static const struct {
                struct pcie_link_regs regs;
                bool up;
        } rows[] = {
            {{.cur_speed_code = 3, .cur_width = 4}, true},
            {{.cur_speed_code = 1, .cur_width = 1}, true},
            {{.cur_speed_code = 6, .cur_width = 16}, true},
            {{.cur_speed_code = 3, .cur_width = 0}, false},
            {{.cur_speed_code = 0, .cur_width = 4}, false},
            {{.cur_speed_code = 7, .cur_width = 4}, false},
            {{.cur_speed_code = 0xf, .cur_width = 0x3f}, false},
            /* DLL Link Active alone does not make a trained link. */
            {{.cur_speed_code = 0, .cur_width = 0, .dll_link_active = true}, false},
        };
        int bad = 0;

        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
                bool got = pcie_link_is_up(&rows[i].regs);

                if (got != rows[i].up) {
                        print_message("# speed %u x%u: up %d, expected %d\n",
                                      rows[i].regs.cur_speed_code, rows[i].regs.cur_width, got,
                                      rows[i].up);
                        bad++;
                }
        }
        assert_int_equal(bad, 0);
}

/* Gen4 x16 port with LNKCAP2. */
#define GEN4_X16                                                                                   \
        {                                                                                          \
                .max_speed_code = 4, .max_width = 16, .speed_vector = 0x1e                         \
        }

static const struct partner_row {
        const char *name;
        struct pcie_link_regs self, partner;
        bool has_partner;
        unsigned int speed, width; /* pcie_link_common_max() */
        bool downtrained;          /* with self's cur_* as given */
} partner_rows[] = {
    {
        .name = "no partner: self decides",
        .self = {.max_speed_code = 4,
                 .max_width = 16,
                 .speed_vector = 0x1e,
                 .cur_speed_code = 4,
                 .cur_width = 16},
        .speed = 4,
        .width = 16,
        .downtrained = false,
    },
    {
        .name = "no partner, speed down",
        .self = {.max_speed_code = 4,
                 .max_width = 16,
                 .speed_vector = 0x1e,
                 .cur_speed_code = 3,
                 .cur_width = 16},
        .speed = 4,
        .width = 16,
        .downtrained = true,
    },
    {
        .name = "no partner, width down",
        .self = {.max_speed_code = 4,
                 .max_width = 16,
                 .speed_vector = 0x1e,
                 .cur_speed_code = 4,
                 .cur_width = 8},
        .speed = 4,
        .width = 16,
        .downtrained = true,
    },
    {
        .name = "no partner, link down",
        .self = {.max_speed_code = 4,
                 .max_width = 16,
                 .speed_vector = 0x1e,
                 .cur_speed_code = 1,
                 .cur_width = 0},
        .speed = 4,
        .width = 16,
        .downtrained = false,
    },
    {
        .name = "no partner, no LNKCAP2",
        .self = {.max_speed_code = 2, .max_width = 4, .cur_speed_code = 1, .cur_width = 4},
        .speed = 2,
        .width = 4,
        .downtrained = true,
    },
    {
        .name = "partner narrower: limits width",
        .self = {.max_speed_code = 4,
                 .max_width = 16,
                 .speed_vector = 0x1e,
                 .cur_speed_code = 4,
                 .cur_width = 8},
        .partner = {.max_speed_code = 4, .max_width = 8, .speed_vector = 0x1e},
        .has_partner = true,
        .speed = 4,
        .width = 8,
        .downtrained = false,
    },
    {
        .name = "partner slower: limits speed",
        .self = {.max_speed_code = 4,
                 .max_width = 16,
                 .speed_vector = 0x1e,
                 .cur_speed_code = 3,
                 .cur_width = 16},
        .partner = {.max_speed_code = 3, .max_width = 16, .speed_vector = 0x0e},
        .has_partner = true,
        .speed = 3,
        .width = 16,
        .downtrained = false,
    },
    {
        .name = "partner slower without LNKCAP2",
        .self = {.max_speed_code = 4,
                 .max_width = 16,
                 .speed_vector = 0x1e,
                 .cur_speed_code = 2,
                 .cur_width = 16},
        .partner = {.max_speed_code = 2, .max_width = 16},
        .has_partner = true,
        .speed = 2,
        .width = 16,
        .downtrained = false,
    },
    {
        .name = "partner slower and narrower, but width still down",
        .self = {.max_speed_code = 4,
                 .max_width = 16,
                 .speed_vector = 0x1e,
                 .cur_speed_code = 3,
                 .cur_width = 4},
        .partner = {.max_speed_code = 3, .max_width = 8, .speed_vector = 0x0e},
        .has_partner = true,
        .speed = 3,
        .width = 8,
        .downtrained = true,
    },
    {
        .name = "partner faster and wider: self decides",
        .self = {.max_speed_code = 3,
                 .max_width = 4,
                 .speed_vector = 0x0e,
                 .cur_speed_code = 2,
                 .cur_width = 4},
        .partner = GEN4_X16,
        .has_partner = true,
        .speed = 3,
        .width = 4,
        .downtrained = true,
    },
    {
        .name = "partner width unknown (0): self's width",
        .self = {.max_speed_code = 4,
                 .max_width = 16,
                 .speed_vector = 0x1e,
                 .cur_speed_code = 4,
                 .cur_width = 16},
        .partner = {.max_speed_code = 4, .max_width = 0, .speed_vector = 0x1e},
        .has_partner = true,
        .speed = 4,
        .width = 16,
        .downtrained = false,
    },
    {
        .name = "partner all zero (nothing read): like no partner",
        .self = {.max_speed_code = 4,
                 .max_width = 16,
                 .speed_vector = 0x1e,
                 .cur_speed_code = 3,
                 .cur_width = 16},
        .has_partner = true,
        .speed = 4,
        .width = 16,
        .downtrained = true,
    },
    {
        /* Only speeds both list can train; with no speed in common the
         * code keeps self's vector rather than reporting speed 0. */
        .name = "disjoint vectors: self's vector",
        .self = {.max_speed_code = 5,
                 .max_width = 8,
                 .speed_vector = 0x30,
                 .cur_speed_code = 5,
                 .cur_width = 8},
        .partner = {.max_speed_code = 3, .max_width = 8, .speed_vector = 0x0e},
        .has_partner = true,
        .speed = 5,
        .width = 8,
        .downtrained = false,
    },
    {
        .name = "common speed is the highest shared bit, not min of maxima",
        .self = {.max_speed_code = 4,
                 .max_width = 4,
                 .speed_vector = 0x16,
                 .cur_speed_code = 2,
                 .cur_width = 4},
        .partner = {.max_speed_code = 3, .max_width = 4, .speed_vector = 0x0e},
        .has_partner = true,
        .speed = 2,
        .width = 4,
        .downtrained = false,
    },
    {
        .name = "partner limits, link down",
        .self = {.max_speed_code = 4,
                 .max_width = 16,
                 .speed_vector = 0x1e,
                 .cur_speed_code = 0,
                 .cur_width = 0},
        .partner = {.max_speed_code = 3, .max_width = 8, .speed_vector = 0x0e},
        .has_partner = true,
        .speed = 3,
        .width = 8,
        .downtrained = false,
    },
};

static void test_common_max_and_downtrained(void **state)
{
        int bad = 0;

        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(partner_rows); i++) {
                const struct partner_row *r = &partner_rows[i];
                const struct pcie_link_regs *partner = r->has_partner ? &r->partner : NULL;
                struct pcie_link_common common;
                bool down;

                common = pcie_link_common_max(&r->self, partner);
                down = pcie_link_is_downtrained(&r->self, partner);
                if (common.speed_code != r->speed || common.width != r->width ||
                    down != r->downtrained) {
                        print_message("# row '%s': common %u x%u downtrained %d, expected %u x%u "
                                      "%d\n",
                                      r->name, common.speed_code, common.width, down, r->speed,
                                      r->width, r->downtrained);
                        bad++;
                }
        }
        assert_int_equal(bad, 0);
}

static void test_payload_efficiency(void **state)
{
        static const unsigned int payloads[] = {128, 256, 512, 1024, 2048, 4096, 1, 4};
        static const double expected[] = {128.0 / 152.0,   256.0 / 280.0,   512.0 / 536.0,
                                          1024.0 / 1048.0, 2048.0 / 2072.0, 4096.0 / 4120.0,
                                          1.0 / 25.0,      4.0 / 28.0};

        (void)state;
        assert_int_equal(PCIE_TLP_OVERHEAD_BYTES, 24);
        for (size_t i = 0; i < ARRAY_SIZE(payloads); i++) {
                double got = pcie_payload_efficiency(payloads[i]);

                if (got < expected[i] - 1e-12 || got > expected[i] + 1e-12)
                        print_message("# payload %u: %.12f, expected %.12f\n", payloads[i], got,
                                      expected[i]);
                assert_float_equal(got, expected[i], 1e-12);
        }
        assert_true(pcie_payload_efficiency(0) == 0.0);
        /* More payload per TLP is always more efficient. */
        for (unsigned int p = 128; p < 4096; p *= 2)
                assert_true(pcie_payload_efficiency(p) < pcie_payload_efficiency(p * 2));
}

static void test_link_tracker(void **state)
{
        static const struct {
                const char *name;
                uint8_t speed, width;
                bool changed;
                uint64_t changes;
        } steps[] = {
            {"first sample is not a change", 3, 8, false, 0},
            {"same again", 3, 8, false, 0},
            {"width change", 3, 4, true, 1},
            {"no change", 3, 4, false, 1},
            {"speed change", 2, 4, true, 2},
            {"both change", 3, 8, true, 3},
            {"link down", 1, 0, true, 4},
            {"still down", 1, 0, false, 4},
            {"back up", 3, 8, true, 5},
        };
        struct pcie_link_tracker t;
        int bad = 0;

        (void)state;
        memset(&t, 0, sizeof(t));
        for (size_t i = 0; i < ARRAY_SIZE(steps); i++) {
                struct pcie_link_regs regs = {.max_speed_code = 4,
                                              .max_width = 8,
                                              .cur_speed_code = steps[i].speed,
                                              .cur_width = steps[i].width};
                bool changed = pcie_link_tracker_update(&t, &regs);

                if (changed != steps[i].changed || t.changes != steps[i].changes || !t.seen ||
                    t.speed_code != steps[i].speed || t.width != steps[i].width) {
                        print_message("# step %zu '%s': changed %d, changes %llu, state %u x%u; "
                                      "expected %d, %llu\n",
                                      i, steps[i].name, changed, (unsigned long long)t.changes,
                                      t.speed_code, t.width, steps[i].changed,
                                      (unsigned long long)steps[i].changes);
                        bad++;
                }
        }
        assert_int_equal(bad, 0);

        /* A first sample of a down link (all zero, like the fresh tracker)
         * is still not a change, and the next one is. */
        memset(&t, 0, sizeof(t));
        {
                struct pcie_link_regs down = {0}, up = {.cur_speed_code = 3, .cur_width = 8};

                assert_false(pcie_link_tracker_update(&t, &down));
                assert_true(t.seen);
                assert_true(pcie_link_tracker_update(&t, &up));
                assert_int_equal(t.changes, 1);
        }
}

/* The kernel's sysfs speed texts, old and new, and what is not one. */
static void test_speed_code_parse(void **state)
{
        static const struct {
                const char *text;
                int ret;
                uint8_t code;
        } rows[] = {
            {"2.5 GT/s PCIe\n", 0, 1},  {"5.0 GT/s PCIe", 0, 2},    {"8.0 GT/s PCIe\n", 0, 3},
            {"16.0 GT/s PCIe\n", 0, 4}, {"32.0 GT/s PCIe\n", 0, 5}, {"64.0 GT/s PCIe\n", 0, 6},
            {"8 GT/s\n", 0, 3},         {"2.5 GT/s", 0, 1},         {"Unknown\n", 0, 0},
            {"Unknown", 0, 0},          {"Unknownx", -EINVAL, 0},   {"16.0 GT/s PCIex", -EINVAL, 0},
            {"12 GT/s", -EINVAL, 0},    {"", -EINVAL, 0},           {" 8 GT/s", -EINVAL, 0},
            {"8.0 GB/s", -EINVAL, 0},
        };

        (void)state;
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                uint8_t code = 0xff;

                assert_int_equal(pcie_speed_code_parse(rows[i].text, &code), rows[i].ret);
                if (!rows[i].ret)
                        assert_int_equal(code, rows[i].code);
        }
}

int main(void)
{
        const struct CMUnitTest test_pcie_link[] = {
            cmocka_unit_test(test_speed_code_parse),
            cmocka_unit_test(test_speed_gts),
            cmocka_unit_test(test_link_capacity),
            cmocka_unit_test(test_speed_vector),
            cmocka_unit_test(test_speed_vector_max),
            cmocka_unit_test(test_link_is_up),
            cmocka_unit_test(test_common_max_and_downtrained),
            cmocka_unit_test(test_payload_efficiency),
            cmocka_unit_test(test_link_tracker),
        };

        return cmocka_run_group_tests(test_pcie_link, NULL, NULL);
}
