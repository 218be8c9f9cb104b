// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_redact.c - what `pciescope snapshot` removes (redact.h):
 *
 * - configuration space: the Device Serial Number's 8 serial bytes and the
 *   VPD data register are zeroed wherever they sit in the capability
 *   lists, their headers and every other byte kept; looping, misaligned,
 *   all-ones and truncated lists end; a real dump (82576 NIC, its DSN
 *   e0-46-2b-ff-ff-21-1b-00) loses its serial and nothing else;
 * - the kernel command line: each form of secret and address (ip=, BOOTIF=,
 *   nfsroot=, rootpw=, inst.rootpw=, ks= with user:password, --password
 *   VALUE and --password=VALUE, everything after "--", quoted values with
 *   blanks, repeated parameters, first and last parameters, names in any
 *   case), what is kept, the length bound and idempotence on every case,
 *   and a buffer too small.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pci_regs.h"
#include "redact.h"

/* The rows "off: 16 hex bytes" of an lspci -xxxx dump of one function. */
static size_t load_dump(const char *path, uint8_t *cfg, size_t size)
{
        FILE *f = fopen(path, "r");
        char line[256];
        size_t len = 0;

        assert_non_null(f);
        while (fgets(line, sizeof(line), f)) {
                unsigned int off, b[16];

                if (sscanf(line, "%x: %x %x %x %x %x %x %x %x %x %x %x %x %x %x %x %x", &off, &b[0],
                           &b[1], &b[2], &b[3], &b[4], &b[5], &b[6], &b[7], &b[8], &b[9], &b[10],
                           &b[11], &b[12], &b[13], &b[14], &b[15]) != 17 ||
                    off != len || off + 16 > size)
                        continue;
                for (int i = 0; i < 16; i++)
                        cfg[off + (size_t)i] = (uint8_t)b[i];
                len += 16;
        }
        fclose(f);
        return len;
}

static void put32(uint8_t *cfg, size_t off, uint32_t v)
{
        for (int i = 0; i < 4; i++)
                cfg[off + (size_t)i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *cfg, size_t off)
{
        return (uint32_t)cfg[off] | (uint32_t)cfg[off + 1] << 8 | (uint32_t)cfg[off + 2] << 16 |
               (uint32_t)cfg[off + 3] << 24;
}

/* An extended capability header: id, version 1, next. */
static uint32_t ext(uint16_t id, uint16_t next)
{
        return (uint32_t)id | 1u << 16 | (uint32_t)next << 20;
}

/* A function with a VPD capability at 0x48 (behind a PM one at 0x40) and
 * AER at 0x100, DSN at 0x140, a vendor-specific one at 0x200. */
static void build(uint8_t *cfg)
{
        memset(cfg, 0, 4096);
        cfg[0] = 0x86;
        cfg[1] = 0x80;
        cfg[PCI_STATUS] = PCI_STATUS_CAP_LIST;
        cfg[PCI_CAPABILITY_LIST] = 0x40;
        cfg[0x40] = 0x01; /* power management */
        cfg[0x41] = 0x48;
        cfg[0x48] = 0x03; /* VPD */
        cfg[0x49] = 0x00;
        cfg[0x4a] = 0x04; /* address register */
        put32(cfg, 0x4c, 0x12345678);
        put32(cfg, 0x100, ext(0x0001, 0x140));
        put32(cfg, 0x104, 0xdeadbeef); /* AER status: kept */
        put32(cfg, 0x140, ext(0x0003, 0x200));
        put32(cfg, 0x144, 0xff2b46e0);
        put32(cfg, 0x148, 0x001b21ff);
        put32(cfg, 0x200, ext(0x000b, 0));
        put32(cfg, 0x204, 0xcafef00d);
}

/* Every byte of @b equals @a's except [off, off+n) of each range, zero. */
static void assert_only_zeroed(const uint8_t *a, const uint8_t *b, size_t len, const size_t *offs,
                               const size_t *lens, size_t count)
{
        for (size_t i = 0; i < len; i++) {
                bool in = false;

                for (size_t k = 0; k < count; k++)
                        in |= i >= offs[k] && i < offs[k] + lens[k];
                if (in)
                        assert_int_equal(b[i], 0);
                else if (a[i] != b[i])
                        fail_msg("byte 0x%zx changed: %02x -> %02x", i, a[i], b[i]);
        }
}

static void test_cfg_dsn_and_vpd(void **state)
{
        static uint8_t cfg[4096], orig[4096];
        static const size_t offs[] = {0x4c, 0x144}, lens[] = {4, 8};

        (void)state;
        build(cfg);
        memcpy(orig, cfg, sizeof(cfg));
        assert_int_equal(redact_cfg(cfg, sizeof(cfg)), REDACT_CFG_DSN | REDACT_CFG_VPD);
        assert_only_zeroed(orig, cfg, sizeof(cfg), offs, lens, 2);
        /* again: the same bytes, the same fields found */
        memcpy(orig, cfg, sizeof(cfg));
        assert_int_equal(redact_cfg(cfg, sizeof(cfg)), REDACT_CFG_DSN | REDACT_CFG_VPD);
        assert_memory_equal(orig, cfg, sizeof(cfg));
}

static void test_cfg_short_and_broken(void **state)
{
        static uint8_t cfg[4096], orig[4096];
        static const size_t vpd_off[] = {0x4c}, vpd_len[] = {4};

        (void)state;
        /* 256 bytes: no extended space, the VPD data still zeroed */
        build(cfg);
        memcpy(orig, cfg, sizeof(cfg));
        assert_int_equal(redact_cfg(cfg, 256), REDACT_CFG_VPD);
        assert_only_zeroed(orig, cfg, sizeof(cfg), vpd_off, vpd_len, 1);
        /* 64 bytes (not root): nothing */
        build(cfg);
        assert_int_equal(redact_cfg(cfg, 64), 0);
        /* the serial cut by the end of what was read: left alone (not there) */
        build(cfg);
        assert_int_equal(redact_cfg(cfg, 0x14b), REDACT_CFG_VPD);
        assert_int_equal(cfg[0x144], 0xe0);
        assert_int_equal(redact_cfg(cfg, 0x14c), REDACT_CFG_VPD | REDACT_CFG_DSN);
        assert_int_equal(redact_cfg(NULL, 4096), 0);
        assert_int_equal(redact_cfg(cfg, 0), 0);
        /* no capability list bit: the standard list is not walked */
        build(cfg);
        cfg[PCI_STATUS] = 0;
        assert_int_equal(redact_cfg(cfg, 4096), REDACT_CFG_DSN);
        assert_int_equal(cfg[0x4c], 0x78);
        /* loops: standard 0x48 -> 0x40, extended 0x200 -> 0x100 */
        build(cfg);
        cfg[0x49] = 0x40;
        put32(cfg, 0x200, ext(0x000b, 0x100));
        assert_int_equal(redact_cfg(cfg, 4096), REDACT_CFG_DSN | REDACT_CFG_VPD);
        /* a misaligned next pointer is masked to the dword (0x143 -> 0x140) */
        build(cfg);
        put32(cfg, 0x100, ext(0x0001, 0x140) | 3u << 20);
        assert_int_equal(redact_cfg(cfg, 4096), REDACT_CFG_DSN | REDACT_CFG_VPD);
        assert_int_equal(cfg[0x144], 0);
        /* an all-ones or all-zero header ends the list before the DSN */
        build(cfg);
        put32(cfg, 0x100, 0xffffffff);
        assert_int_equal(redact_cfg(cfg, 4096), REDACT_CFG_VPD);
        assert_int_equal(cfg[0x144], 0xe0);
        build(cfg);
        put32(cfg, 0x100, 0);
        assert_int_equal(redact_cfg(cfg, 4096), REDACT_CFG_VPD);
        /* a pointer below 0x100 ends it; one into the last dword too */
        build(cfg);
        put32(cfg, 0x100, ext(0x0001, 0x0fc));
        assert_int_equal(redact_cfg(cfg, 4096), REDACT_CFG_VPD);
        build(cfg);
        put32(cfg, 0x100, ext(0x0001, 0xffc));
        put32(cfg, 0xffc, ext(0x0003, 0));
        assert_int_equal(redact_cfg(cfg, 4096), REDACT_CFG_VPD);
        /* a header inside a serial zeroed later in the walk (0x100 -> 0x208
         * -> 0x204, a DSN whose body holds 0x208): the same bytes again,
         * found once */
        build(cfg);
        put32(cfg, 0x100, ext(0x0001, 0x208));
        put32(cfg, 0x208, ext(0x000b, 0x204));
        put32(cfg, 0x204, ext(0x0003, 0));
        assert_int_equal(redact_cfg(cfg, 4096), REDACT_CFG_VPD | REDACT_CFG_DSN);
        assert_int_equal(get32(cfg, 0x208), 0);
        memcpy(orig, cfg, sizeof(cfg));
        assert_int_equal(redact_cfg(cfg, 4096), REDACT_CFG_VPD);
        assert_memory_equal(orig, cfg, sizeof(cfg));
        /* the DSN first, at 0x100 */
        build(cfg);
        put32(cfg, 0x100, ext(0x0003, 0));
        put32(cfg, 0x104, 0x11223344);
        assert_int_equal(redact_cfg(cfg, 4096), REDACT_CFG_VPD | REDACT_CFG_DSN);
        assert_int_equal(cfg[0x104], 0);
        assert_int_equal(cfg[0x100], 0x03);
}

/* A real dump: the 82576's DSN at 0x140 goes, nothing else changes. */
static void test_cfg_real_dump(void **state)
{
        static uint8_t cfg[4096], orig[4096];
        static const size_t offs[] = {0x144}, lens[] = {8};
        size_t len;

        (void)state;
        len = load_dump(TOP_SRCDIR "/tests/fixtures/pcidump/"
                                   "pciutils-intel-82576-nic.lspci-vvxxxx.txt",
                        cfg, sizeof(cfg));
        assert_int_equal(len, 4096);
        /* lspci -vv: "Capabilities: [140] Device Serial Number e0-46-2b-..." */
        assert_int_equal(cfg[0x140], 0x03);
        assert_int_equal(cfg[0x144], 0xe0);
        assert_int_equal(cfg[0x14a], 0x1b);
        memcpy(orig, cfg, sizeof(cfg));
        assert_int_equal(redact_cfg(cfg, len) & REDACT_CFG_DSN, REDACT_CFG_DSN);
        assert_only_zeroed(orig, cfg, len, offs, lens, 1);
}

/* @in redacted to exactly @want with @count values; then the bound and
 * idempotence. */
static void check(const char *in, const char *want, int count)
{
        char out[1024], again[1024];
        int n = redact_cmdline(in, out, sizeof(out));

        if (n != count || strcmp(out, want))
                fail_msg("redact_cmdline(\"%s\")\n  got  %d \"%s\"\n  want %d \"%s\"", in, n,
                         n >= 0 ? out : "", count, want);
        assert_true(strlen(out) <= strlen(in) + strlen(REDACT_MARKER) * (size_t)n);
        assert_true(redact_cmdline(out, again, sizeof(again)) >= 0);
        assert_string_equal(again, out);
}

static void test_cmdline_secrets(void **state)
{
        (void)state;
        /* kept as it is */
        check("BOOT_IMAGE=/vmlinuz-6.1 ro root=/dev/sda1 pci=pcie_bus_safe quiet",
              "BOOT_IMAGE=/vmlinuz-6.1 ro root=/dev/sda1 pci=pcie_bus_safe quiet", 0);
        check("root=UUID=0b1c-44 init=/bin/passwd console=ttyS0,115200n8",
              "root=UUID=0b1c-44 init=/bin/passwd console=ttyS0,115200n8", 0);
        check("pci=resource_alignment=0000:00:1c.0 isolcpus=1-3",
              "pci=resource_alignment=0000:00:1c.0 isolcpus=1-3", 0);
        /* names that say secret (the earlier rules) */
        check("ro password=hunter2 api_token=abc rd.luks.key=/k MySecret=\"a b\" quiet",
              "ro password=<redacted> api_token=<redacted> rd.luks.key=<redacted> "
              "MySecret=<redacted> quiet",
              4);
        check("PASS=x", "PASS=<redacted>", 1);
        check("systemd.set_credential=pw:s3cr3t rd.iscsi.username=alice",
              "systemd.set_credential=<redacted> rd.iscsi.username=<redacted>", 2);
        /* root passwords of installers */
        check("rootpw=Pl4inT3xt inst.rootpw=An0ther ro",
              "rootpw=<redacted> inst.rootpw=<redacted> ro", 2);
        /* addresses, host names, MACs */
        check("ip=192.168.7.21::192.168.7.1:255.255.255.0:myhost.example.com:eth0:none ro",
              "ip=<redacted> ro", 1);
        check("ip=dhcp IP=[fe80::1]", "ip=<redacted> IP=<redacted>", 2);
        check("BOOTIF=01-52-54-00-12-34-56 quiet", "BOOTIF=<redacted> quiet", 1);
        check("nfsroot=10.0.0.5:/srv/nfs/root,vers=4 root=/dev/nfs",
              "nfsroot=<redacted> root=/dev/nfs", 1);
        check("root=nfs:fileserver.corp:/export/root rw", "root=<redacted> rw", 1);
        check("netroot=iscsi:target.corp::::iqn.2020-01.corp:disk hostname=build7",
              "netroot=<redacted> hostname=<redacted>", 2);
        check("ifname=lan0:52:54:00:12:34:56 netconsole=6665@10.1.1.2/eth0,6666@10.1.1.1/",
              "ifname=<redacted> netconsole=<redacted>", 2);
        /* kickstart URL with user and password */
        check("ks=http://admin:Sup3rS3cret@deploy.corp/ks.cfg inst.ks=nfs:srv:/ks.cfg",
              "ks=<redacted> inst.ks=<redacted>", 2);
        /* any value holding a URL, an IPv4 or a MAC; a bare one too */
        check("inst.repo=http://mirror/x foo=https://u:p@h/ bar=10.2.3.4 baz=aa:bb:cc:dd:ee:ff",
              "inst.repo=<redacted> foo=<redacted> bar=<redacted> baz=<redacted>", 4);
        check("single 172.16.0.9 00-1b-21-ff-2b-46", "single <redacted> <redacted>", 2);
        /* --password VALUE and --password=VALUE */
        check("--password Hunt3r2 quiet", "--password <redacted> quiet", 1);
        check("x --password=Hunt3r2 -p1 --api-key \"two words\" y",
              "x --password=<redacted> -p1 --api-key <redacted> y", 2);
        check("quiet --password", "quiet --password", 0);
        /* everything after a standalone "--" */
        check("ro quiet -- --password hunter2 single", "ro quiet -- <redacted>", 1);
        check("-- init-arg", "-- <redacted>", 1);
        check("ro --", "ro --", 0);
        check("ro --   ", "ro --", 0);
        check("ro ---x --x", "ro ---x --x", 0);
        /* quoted values with blanks, as the kernel takes them */
        check("dyndbg=\"file a.c +p\" ip=\"10.0.0.1 x\" \"nfsroot=srv:/a b\" quiet",
              "dyndbg=\"file a.c +p\" ip=<redacted> nfsroot=<redacted> quiet", 2);
        /* an unterminated quote runs to the end, as in the kernel */
        check("a=1 ip=\"10.0.0.1 quiet ro", "a=1 ip=<redacted>", 1);
        check("a=\"x ip=10.0.0.1", "a=<redacted>", 1);
        check("b\" root=n -pw  ", "b\" root=n -pw  ", 0); /* blanks inside it stay */
        /* quoted text up to an '=' is no name: the whole word goes if it
         * looks secret or identifying, and is kept otherwise */
        check("x b\" 10.1.2.3 rootpw=x\" quiet", "x <redacted> quiet", 1);
        check("x b\" plantedhost rootpw=x\" quiet", "x <redacted> quiet", 1);
        check("x \"b ip=myhost\"", "x <redacted>", 1);
        check("a\"b c\"=d e", "a\"b c\"=d e", 0);
        check("\"--password\" x y", "<redacted> <redacted> y", 2);
        /* a name holding an address */
        check("192.168.1.1=foo ro", "<redacted> ro", 1);
        /* repeated, first and last */
        check("ip=1.2.3.4 ro ip=5.6.7.8 BOOTIF=01-aa-bb-cc-dd-ee-ff ip=eth0:dhcp",
              "ip=<redacted> ro ip=<redacted> BOOTIF=<redacted> ip=<redacted>", 4);
        /* blanks: tabs, newlines, the kernel's no-break space */
        check("ro\tip=1.2.3.4\nquiet\n", "ro ip=<redacted> quiet", 1);
        check("ro\xa0ip=myhost", "ro ip=<redacted>", 1);
        check("", "", 0);
        check("   ", "", 0);
        /* the name alone counts, not the value */
        check("key=", "key=<redacted>", 1);
        check("=10.0.0.1", "=<redacted>", 1);
        /* a long name: the word is found wherever it sits */
        {
                char in[400], want[400];

                memset(in, 'a', 300);
                strcpy(in + 300, "password=x");
                memcpy(want, in, 308); /* up to "password" */
                strcpy(want + 308, "=<redacted>");
                check(in, want, 1);
        }
}

static void test_cmdline_space(void **state)
{
        char out[64];

        (void)state;
        assert_int_equal(redact_cmdline("a=b password=x", out, 8), -ENOSPC);
        assert_int_equal(redact_cmdline("a=b", out, 0), -ENOSPC);
        assert_int_equal(redact_cmdline("abc", out, 3), -ENOSPC);
        assert_int_equal(redact_cmdline("abc", out, 4), 0);
        assert_string_equal(out, "abc");
        assert_int_equal(redact_cmdline("ro -- x", out, 13), -ENOSPC);
        assert_int_equal(redact_cmdline("ro -- x", out, 17), 1);
        assert_string_equal(out, "ro -- <redacted>");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_cfg_dsn_and_vpd), cmocka_unit_test(test_cfg_short_and_broken),
            cmocka_unit_test(test_cfg_real_dump),   cmocka_unit_test(test_cmdline_secrets),
            cmocka_unit_test(test_cmdline_space),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
