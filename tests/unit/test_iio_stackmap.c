// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_iio_stackmap.c - the IIO stack to root bus decoder: CPUBUSNO and
 * CPUBUSNO_VALID of the MSM function, SAD_CONTROL_CFG's package, CAPID4's
 * chop, the per-layout tables, and bad, absent and inconsistent values.
 *
 * Every configuration image is built here byte by byte at the offsets the
 * header names (SYNTHETIC: no captured data); expected values are written
 * out by hand from Intel PCM's tables, not computed with the decoder's.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "iio_stackmap.h"

static void put32(uint8_t *cfg, size_t off, uint32_t v)
{
        cfg[off] = (uint8_t)v;
        cfg[off + 1] = (uint8_t)(v >> 8);
        cfg[off + 2] = (uint8_t)(v >> 16);
        cfg[off + 3] = (uint8_t)(v >> 24);
}

/* An MSM image: CPU buses 1, 2, 3 valid at root buses 0x15, 0x26, 0x37,
 * CPU bus 17 (a non-IIO bus on SPR) at 0x7e. */
static void msm_image(uint8_t cfg[4096])
{
        memset(cfg, 0, 4096);
        put32(cfg, 0x00, 0x09a68086);
        put32(cfg, 0x190, 0x37261500); /* CPU buses 0..3 */
        put32(cfg, 0x1c0, 0x00007e00); /* CPU buses 16..19 */
        put32(cfg, 0x1a0, 1u << 1 | 1u << 2 | 1u << 3 | 1u << 17);
}

static void test_cpubus(void **state)
{
        uint8_t cfg[4096];
        struct iio_cpubus cb;

        (void)state;
        msm_image(cfg);
        assert_int_equal(iio_cpubus_decode(cfg, sizeof(cfg), &cb), 0);
        assert_int_equal(cb.valid, 0x2000eu);
        assert_int_equal(cb.bus[1], 0x15);
        assert_int_equal(cb.bus[2], 0x26);
        assert_int_equal(cb.bus[3], 0x37);
        assert_int_equal(cb.bus[17], 0x7e);
        assert_int_equal(iio_cpubus_first(&cb), 0x15);

        /* Exactly the bytes it needs are enough; one fewer is not. */
        assert_int_equal(iio_cpubus_decode(cfg, 0x1d0, &cb), 0);
        assert_int_equal(iio_cpubus_decode(cfg, 0x1cf, &cb), -ENODATA);
        /* Without root the kernel gives the 64-byte header only. */
        assert_int_equal(iio_cpubus_decode(cfg, 64, &cb), -ENODATA);
        assert_int_equal(iio_cpubus_decode(NULL, 0, &cb), -ENODATA);

        /* A failed read (all ones) in any register. */
        put32(cfg, 0x1a0, UINT32_MAX);
        assert_int_equal(iio_cpubus_decode(cfg, sizeof(cfg), &cb), -EBADMSG);
        msm_image(cfg);
        put32(cfg, 0x1cc, UINT32_MAX);
        assert_int_equal(iio_cpubus_decode(cfg, sizeof(cfg), &cb), -EBADMSG);

        /* Nothing valid. */
        msm_image(cfg);
        put32(cfg, 0x1a0, 0);
        assert_int_equal(iio_cpubus_decode(cfg, sizeof(cfg), &cb), -ENOENT);
        assert_int_equal(iio_cpubus_first(&cb), -1);
}

static void test_package_and_chop(void **state)
{
        uint8_t cfg[4096] = {0};
        unsigned int package;
        int chop;

        (void)state;
        put32(cfg, 0x3f4, 0xabcdef31); /* bits [3:0] only */
        assert_int_equal(iio_package_decode(cfg, sizeof(cfg), &package), 0);
        assert_int_equal(package, 1);
        assert_int_equal(iio_package_decode(cfg, 0x3f7, &package), -ENODATA);
        put32(cfg, 0x3f4, UINT32_MAX);
        assert_int_equal(iio_package_decode(cfg, sizeof(cfg), &package), -EBADMSG);

        put32(cfg, 0x94, 0x3u << 6 | 0x1234u << 8);
        assert_int_equal(iio_chop_decode(cfg, sizeof(cfg), &chop), 0);
        assert_int_equal(chop, IIO_CHOP_XCC);
        put32(cfg, 0x94, 0x1u << 6);
        assert_int_equal(iio_chop_decode(cfg, sizeof(cfg), &chop), 0);
        assert_int_equal(chop, IIO_CHOP_MCC);
        put32(cfg, 0x94, 0x2u << 6);
        assert_int_equal(iio_chop_decode(cfg, sizeof(cfg), &chop), -ERANGE);
        assert_int_equal(chop, 2);
        put32(cfg, 0x94, UINT32_MAX);
        assert_int_equal(iio_chop_decode(cfg, sizeof(cfg), &chop), -EBADMSG);
        assert_int_equal(iio_chop_decode(cfg, 64, &chop), -ENODATA);
}

static void test_layouts(void **state)
{
        /* PCM's tables, CPU bus -> box, written out by hand. */
        static const struct {
                enum iio_layout layout;
                int box[IIO_CPU_BUSES];
        } rows[] = {
            {IIO_LAYOUT_SPR_XCC, {1,  2,  4,  6,  7,  9,  -1, -1, 0,  3,  5,  8,  -1, -1, -1, -1,
                                  -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
            {IIO_LAYOUT_SPR_MCC, {0,  1,  2,  10, 4,  5,  -1, -1, 3,  -1, -1, -1, -1, -1, -1, -1,
                                  -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
            {IIO_LAYOUT_EMR, {7,  1,  2,  3,  8,  6,  -1, -1, 0,  4,  5,  9,  -1, -1, -1, -1,
                              -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
            {IIO_LAYOUT_XEON6, {0, 2,  3,  4,  5,  7,  -1, -1, 1,  -1, -1, -1, 6, -1, -1, -1,
                                9, -1, -1, -1, 14, -1, -1, -1, -1, -1, 12, -1, 8, 11, -1, -1}},
        };

        (void)state;
        for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
                for (unsigned int c = 0; c < IIO_CPU_BUSES; c++) {
                        int box = rows[r].box[c];

                        if (iio_layout_box(rows[r].layout, c) != box)
                                fail_msg("%s: CPU bus %u: box %d, expected %d",
                                         iio_layout_name(rows[r].layout), c,
                                         iio_layout_box(rows[r].layout, c), box);
                        if (box >= 0)
                                assert_int_equal(
                                    iio_layout_cpubus(rows[r].layout, (unsigned int)box), (int)c);
                }
        }
        assert_int_equal(iio_layout_box(IIO_LAYOUT_SPR_XCC, 32), -1);
        assert_int_equal(iio_layout_box(IIO_LAYOUT_UNKNOWN, 0), -1);
        assert_int_equal(iio_layout_cpubus(IIO_LAYOUT_SPR_XCC, 10), -1);

        assert_int_equal(iio_layout_of(6, 0x8f, IIO_CHOP_XCC), IIO_LAYOUT_SPR_XCC);
        assert_int_equal(iio_layout_of(6, 0x8f, IIO_CHOP_MCC), IIO_LAYOUT_SPR_MCC);
        assert_int_equal(iio_layout_of(6, 0x8f, IIO_CHOP_UNKNOWN), IIO_LAYOUT_UNKNOWN);
        assert_int_equal(iio_layout_of(6, 0xcf, IIO_CHOP_UNKNOWN), IIO_LAYOUT_EMR);
        assert_int_equal(iio_layout_of(6, 0xad, IIO_CHOP_UNKNOWN), IIO_LAYOUT_XEON6);
        assert_int_equal(iio_layout_of(6, 0xaf, IIO_CHOP_UNKNOWN), IIO_LAYOUT_XEON6);
        assert_int_equal(iio_layout_of(6, 0x6a, IIO_CHOP_XCC), IIO_LAYOUT_UNKNOWN); /* ICX */
        assert_int_equal(iio_layout_of(0x19, 0x11, IIO_CHOP_XCC), IIO_LAYOUT_UNKNOWN);
        assert_true(iio_layout_needs_chop(6, 0x8f));
        assert_false(iio_layout_needs_chop(6, 0xcf));
        assert_int_equal(iio_layout_port_device0(IIO_LAYOUT_SPR_XCC), 1);
        assert_int_equal(iio_layout_port_device0(IIO_LAYOUT_EMR), 1);
        assert_int_equal(iio_layout_port_device0(IIO_LAYOUT_XEON6), 2);
        assert_string_equal(iio_layout_name(IIO_LAYOUT_SPR_MCC), "spr-mcc");
        assert_string_equal(iio_layout_name(IIO_LAYOUT_UNKNOWN), "unknown");
}

static void test_stackmap(void **state)
{
        static struct iio_stackmap map;
        const struct iio_stack_root *r;
        struct iio_cpubus s0, s1;
        uint8_t cfg[4096];
        char why[160];

        (void)state;
        memset(&map, 0, sizeof(map));
        map.layout = IIO_LAYOUT_SPR_XCC;
        msm_image(cfg);
        assert_int_equal(iio_cpubus_decode(cfg, sizeof(cfg), &s0), 0);
        assert_int_equal(iio_stackmap_add(&map, 0, 0, &s0, why, sizeof(why)), 0);
        /* CPU buses 1, 2, 3 are boxes 2, 4, 6; bus 17 is no IIO stack. */
        assert_int_equal(map.count, 3);
        assert_int_equal(map.not_iio, 1);
        r = iio_stackmap_find(&map, 0, 4);
        assert_non_null(r);
        assert_int_equal(r->bus, 0x26);
        assert_int_equal(r->cpubus, 2);
        assert_null(iio_stackmap_find(&map, 0, 1));
        assert_null(iio_stackmap_find(&map, 1, 4));

        /* Socket 1: CPU buses 1 and 2 at 0x97 and 0xa8. */
        memset(&s1, 0, sizeof(s1));
        s1.valid = 0x6;
        s1.bus[1] = 0x97;
        s1.bus[2] = 0xa8;
        assert_int_equal(iio_stackmap_add(&map, 1, 0, &s1, why, sizeof(why)), 0);
        assert_int_equal(map.count, 5);
        r = iio_stackmap_find(&map, 1, 2);
        assert_non_null(r);
        assert_int_equal(r->bus, 0x97);

        /* The same package twice: refused, nothing added. */
        assert_int_equal(iio_stackmap_add(&map, 1, 0, &s1, why, sizeof(why)), -EEXIST);
        assert_non_null(strstr(why, "package 1"));
        assert_int_equal(map.count, 5);

        /* A root bus another socket owns: inconsistent, nothing added. */
        s1.bus[1] = 0x99;
        s1.bus[2] = 0x26;
        assert_int_equal(iio_stackmap_add(&map, 2, 0, &s1, why, sizeof(why)), -EBADMSG);
        assert_non_null(strstr(why, "0x26"));
        assert_int_equal(map.count, 5);
        /* ... in another domain it is another bus. */
        assert_int_equal(iio_stackmap_add(&map, 2, 1, &s1, why, sizeof(why)), 0);
        assert_int_equal(map.count, 7);

        /* Two CPU buses of one socket on one root bus. */
        memset(&map, 0, sizeof(map));
        map.layout = IIO_LAYOUT_SPR_XCC;
        s0.bus[3] = 0x15;
        assert_int_equal(iio_stackmap_add(&map, 0, 0, &s0, why, sizeof(why)), -EBADMSG);
        assert_non_null(strstr(why, "CPU buses 1 and 3"));
        assert_int_equal(map.count, 0);
        assert_int_equal(map.not_iio, 0);

        /* No table for the CPU. */
        memset(&map, 0, sizeof(map));
        assert_int_equal(iio_stackmap_add(&map, 0, 0, &s1, why, sizeof(why)), -EINVAL);

        /* More sockets than a map holds. */
        memset(&map, 0, sizeof(map));
        map.layout = IIO_LAYOUT_SPR_XCC;
        for (unsigned int p = 0; p < IIO_STACKMAP_MAX_SOCKETS; p++)
                assert_int_equal(iio_stackmap_add(&map, p, p, &s1, why, sizeof(why)), 0);
        assert_int_equal(iio_stackmap_add(&map, 99, 99, &s1, why, sizeof(why)), -ENOSPC);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_cpubus),
            cmocka_unit_test(test_package_and_chop),
            cmocka_unit_test(test_layouts),
            cmocka_unit_test(test_stackmap),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
