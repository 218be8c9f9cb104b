// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_cmdline_policy.c - libFuzzer target: the MPS policy the kernel
 * command line selects (pcie_policy_from_cmdline, on /proc/cmdline text of
 * any content) and the policy names of MPSPolicy/--policy. A policy found
 * is one of the five; a name that parses prints back as itself.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "pcie_audit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char text[4096];
        enum pcie_policy p = PCIE_POLICY_COUNT;
        size_t n = size < sizeof(text) - 1 ? size : sizeof(text) - 1;
        int ret;

        memcpy(text, data, n);
        text[n] = '\0';
        ret = pcie_policy_from_cmdline(text, &p);
        if (ret > 0 && (int)p >= PCIE_POLICY_COUNT)
                __builtin_trap();
        if (pcie_policy_parse(text, &p) == 0 && strcasecmp(pcie_policy_name(p), text) &&
            strcmp(pcie_policy_param(p), text))
                __builtin_trap();
        return 0;
}
