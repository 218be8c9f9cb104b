// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_bdf_match.c - Device/IgnoreDevice BDF patterns and filters.
 *
 * Fields without a wildcard are compared as numbers (bdf_match.h: "each of
 * the four fields is hex digits"), so "003b" matches bus 0x3b; fields with
 * '*' or '?' are matched against the zero-padded lower-case text of the
 * value (4 digits for the domain, 2 for bus and device, 1 for the function).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <errno.h>

#include "bdf_match.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const struct {
        const char *text;
        bool valid;
} compile_rows[] = {
    {"0000:3b:00.0", true},
    {"3b:00.0", true},
    {"3b:*.*", true},
    {"*:00.0", true},
    {"0001:*:*.*", true},
    {"??:00.0", true},
    {"0000:3B:00.0", true},
    {"*:*:*.*", true},
    {"ffffffff:ff:1f.7", true},
    {"10000:00:00.0", true}, /* VMD domains have 5 digits */
    {"003b:00.0", true},     /* numeric: 0x3b */
    {"3b:1?.?", true},
    {"", false},
    {"3b", false},
    {"3b:00", false},
    {"3b:00.8", false},  /* func > 7 */
    {"3b:20.0", false},  /* dev > 1f */
    {"100:00.0", false}, /* bus > ff */
    {"0000:3b:00.0.1", false},
    {"x:00.0", false},
    {"3b::00.0", false},
    {"0000:3b:00:00.0", false},
    {":00.0", false},
    {"3b:.0", false},
    {"3b:00.", false},
    {"3b:00.-1", false},
    {"0x3b:00.0", false},
    {" 3b:00.0", false},
    {"3b:00.0 ", false},
    {"123456789:00:00.0", false}, /* domain of 9 digits */
    {"100000000:00:00.0", false}, /* domain > ffffffff */
    {"3b.0:00", false},
    {"3b:00.0\n", false},
};

static void test_compile_validity(void **state)
{
        int bad = 0;

        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(compile_rows); i++) {
                struct bdf_pattern pat;
                int ret;

                memset(&pat, 0xff, sizeof(pat));
                ret = bdf_pattern_compile(compile_rows[i].text, &pat);
                if (ret != (compile_rows[i].valid ? 0 : -EINVAL)) {
                        print_message("# pattern '%s': returned %d, expected %s\n",
                                      compile_rows[i].text, ret,
                                      compile_rows[i].valid ? "0" : "-EINVAL");
                        bad++;
                }
        }
        assert_int_equal(bad, 0);
}

/* The compiled form: normalised, lower-case, "*" for an omitted domain. */
static void test_compile_fields(void **state)
{
        static const struct {
                const char *text;
                const char *field[4];
        } rows[] = {
            {"0000:3B:00.0", {"0000", "3b", "00", "0"}},
            {"3b:00.0", {"*", "3b", "00", "0"}},
            {"0001:*:*.*", {"0001", "*", "*", "*"}},
            {"??:1F.?", {"*", "??", "1f", "?"}},
        };
        int bad = 0;

        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
                struct bdf_pattern pat;

                memset(&pat, 0xff, sizeof(pat));
                assert_int_equal(bdf_pattern_compile(rows[i].text, &pat), 0);
                for (int f = 0; f < 4; f++) {
                        if (memchr(pat.field[f], '\0', sizeof(pat.field[f])) == NULL ||
                            strcmp(pat.field[f], rows[i].field[f])) {
                                print_message("# pattern '%s': field %d = '%.9s', expected '%s'\n",
                                              rows[i].text, f, pat.field[f], rows[i].field[f]);
                                bad++;
                        }
                }
        }
        assert_int_equal(bad, 0);
}

static const struct match_row {
        const char *pattern;
        struct pci_addr addr;
        bool match;
} match_rows[] = {
    {"0000:3b:00.0", {0x0000, 0x3b, 0x00, 0}, true},
    {"0000:3b:00.0", {0x0001, 0x3b, 0x00, 0}, false},
    {"0000:3b:00.0", {0x0000, 0x3b, 0x00, 1}, false},
    {"0000:3b:00.0", {0x0000, 0x3c, 0x00, 0}, false},
    {"0000:3b:00.0", {0x0000, 0x3b, 0x01, 0}, false},
    /* No domain: any domain. */
    {"3b:00.0", {0x0000, 0x3b, 0x00, 0}, true},
    {"3b:00.0", {0x0001, 0x3b, 0x00, 0}, true},
    {"3b:00.0", {0x10000, 0x3b, 0x00, 0}, true},
    {"3b:00.0", {0x0000, 0x3b, 0x00, 2}, false},
    {"3b:*.*", {0x0000, 0x3b, 0x1f, 7}, true},
    {"3b:*.*", {0x0002, 0x3b, 0x00, 0}, true},
    {"3b:*.*", {0x0000, 0x3c, 0x00, 0}, false},
    {"*:00.0", {0x0005, 0xab, 0x00, 0}, true},
    {"*:00.0", {0x0000, 0x00, 0x00, 1}, false},
    {"0001:*:*.*", {0x0001, 0xff, 0x1f, 7}, true},
    {"0001:*:*.*", {0x0000, 0x00, 0x00, 0}, false},
    {"*:*:*.*", {0x10000, 0xe1, 0x00, 0}, true},
    /* '?' stands for exactly one hex digit of the padded value. */
    {"??:00.0", {0x0000, 0x3b, 0x00, 0}, true},
    {"??:00.0", {0x0000, 0x00, 0x00, 0}, true},
    {"3?:00.0", {0x0000, 0x3b, 0x00, 0}, true},
    {"3?:00.0", {0x0000, 0x4b, 0x00, 0}, false},
    {"3?:00.0", {0x0000, 0x03, 0x00, 0}, false},
    {"?b:00.0", {0x0000, 0x0b, 0x00, 0}, true},
    {"3b:1?.?", {0x0000, 0x3b, 0x1a, 3}, true},
    {"3b:1?.?", {0x0000, 0x3b, 0x0a, 3}, false},
    {"3b:00.?", {0x0000, 0x3b, 0x00, 7}, true},
    {"????:00:00.0", {0x0001, 0x00, 0x00, 0}, true},
    {"????:00:00.0", {0x10000, 0x00, 0x00, 0}, false}, /* 5 digits */
    {"1????:*:*.*", {0x10000, 0x00, 0x00, 0}, true},
    /* Case does not matter, and numbers compare as numbers. */
    {"0000:3B:00.0", {0x0000, 0x3b, 0x00, 0}, true},
    {"0000:3b:0A.0", {0x0000, 0x3b, 0x0a, 0}, true},
    {"003b:00.0", {0x0000, 0x3b, 0x00, 0}, true},
    {"0:3b:0.0", {0x0000, 0x3b, 0x00, 0}, true},
    {"0:3b:0.0", {0x0010, 0x3b, 0x00, 0}, false},
    {"ffffffff:ff:1f.7", {0xffffffffu, 0xff, 0x1f, 7}, true},
};

static void test_match_table(void **state)
{
        int bad = 0;

        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(match_rows); i++) {
                const struct match_row *r = &match_rows[i];
                struct bdf_pattern pat;
                bool got;

                memset(&pat, 0xff, sizeof(pat));
                if (bdf_pattern_compile(r->pattern, &pat)) {
                        print_message("# pattern '%s' did not compile\n", r->pattern);
                        bad++;
                        continue;
                }
                got = bdf_pattern_match(&pat, &r->addr);
                if (got != r->match) {
                        print_message("# pattern '%s' vs %04x:%02x:%02x.%u: %s, expected %s\n",
                                      r->pattern, r->addr.domain, r->addr.bus, r->addr.dev,
                                      r->addr.func, got ? "match" : "no match",
                                      r->match ? "match" : "no match");
                        bad++;
                }
        }
        assert_int_equal(bad, 0);
}

static const struct pci_addr A_3B_00_0 = {0, 0x3b, 0x00, 0};
static const struct pci_addr A_3B_00_1 = {0, 0x3b, 0x00, 1};
static const struct pci_addr A_3C_00_0 = {0, 0x3c, 0x00, 0};
static const struct pci_addr A_5E_00_0 = {1, 0x5e, 0x00, 0};

struct filter_case {
        const char *name;
        const char *include[3];
        const char *exclude[3];
        bool selects[4]; /* A_3B_00_0, A_3B_00_1, A_3C_00_0, A_5E_00_0 */
};

static const struct filter_case filter_cases[] = {
    {"empty filter selects all", {NULL}, {NULL}, {true, true, true, true}},
    {"include only", {"3b:*.*", NULL}, {NULL}, {true, true, false, false}},
    {"two includes", {"3b:00.0", "0001:5e:00.0", NULL}, {NULL}, {true, false, false, true}},
    {"exclude only", {NULL}, {"*:00.1", NULL}, {true, false, true, true}},
    {"include and exclude", {"3b:*.*", NULL}, {"3b:00.1", NULL}, {true, false, false, false}},
    {"exclude wins over include", {"*:*.*", NULL}, {"3?:*.*", NULL}, {false, false, false, true}},
};

static void test_filter(void **state)
{
        const struct pci_addr *addrs[4] = {&A_3B_00_0, &A_3B_00_1, &A_3C_00_0, &A_5E_00_0};
        int bad = 0;

        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(filter_cases); i++) {
                const struct filter_case *c = &filter_cases[i];
                struct bdf_filter f = {0};

                for (int k = 0; k < 3 && c->include[k]; k++)
                        assert_int_equal(bdf_filter_add(&f, c->include[k], false), 0);
                for (int k = 0; k < 3 && c->exclude[k]; k++)
                        assert_int_equal(bdf_filter_add(&f, c->exclude[k], true), 0);
                for (int a = 0; a < 4; a++) {
                        bool got = bdf_filter_selects(&f, addrs[a]);

                        if (got != c->selects[a]) {
                                print_message("# filter '%s', address %d: %d, expected %d\n",
                                              c->name, a, got, c->selects[a]);
                                bad++;
                        }
                }
                bdf_filter_clear(&f);
        }
        assert_int_equal(bad, 0);
}

static void test_filter_add_and_clear(void **state)
{
        struct bdf_filter f = {0};

        (void)state;
        /* A bad pattern is refused and leaves the filter as it was. */
        assert_int_equal(bdf_filter_add(&f, "3b:00.8", false), -EINVAL);
        assert_int_equal(bdf_filter_add(&f, "nonsense", true), -EINVAL);
        assert_int_equal(f.include_count, 0);
        assert_int_equal(f.exclude_count, 0);
        assert_true(bdf_filter_selects(&f, &A_3C_00_0));

        /* Many patterns: the arrays grow. */
        for (int i = 0; i < 20; i++)
                assert_int_equal(bdf_filter_add(&f, "3b:*.*", false), 0);
        assert_int_equal(bdf_filter_add(&f, "3b:00.1", true), 0);
        assert_int_equal(f.include_count, 20);
        assert_int_equal(f.exclude_count, 1);
        assert_int_equal(bdf_filter_add(&f, "3b:00.", false), -EINVAL);
        assert_int_equal(f.include_count, 20);
        assert_true(bdf_filter_selects(&f, &A_3B_00_0));
        assert_false(bdf_filter_selects(&f, &A_3B_00_1));
        assert_false(bdf_filter_selects(&f, &A_3C_00_0));

        bdf_filter_clear(&f);
        assert_int_equal(f.include_count, 0);
        assert_int_equal(f.exclude_count, 0);
        assert_null(f.include);
        assert_null(f.exclude);
        assert_true(bdf_filter_selects(&f, &A_3C_00_0));
        assert_true(bdf_filter_selects(&f, &A_3B_00_1));

        /* Clearing twice, and reusing after a clear, are fine. */
        bdf_filter_clear(&f);
        assert_int_equal(bdf_filter_add(&f, "3c:00.0", false), 0);
        assert_false(bdf_filter_selects(&f, &A_3B_00_0));
        assert_true(bdf_filter_selects(&f, &A_3C_00_0));
        bdf_filter_clear(&f);
}

int main(void)
{
        const struct CMUnitTest test_bdf_match[] = {
            cmocka_unit_test(test_compile_validity),     cmocka_unit_test(test_compile_fields),
            cmocka_unit_test(test_match_table),          cmocka_unit_test(test_filter),
            cmocka_unit_test(test_filter_add_and_clear),
        };

        return cmocka_run_group_tests(test_bdf_match, NULL, NULL);
}
