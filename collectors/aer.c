// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * aer.c - AER error counters from sysfs.
 */
#include "aer.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hw_env.h"

const char *aer_class_name(enum aer_class cls)
{
        static const char *const names[AER_CLASS_COUNT] = {"correctable", "fatal", "nonfatal"};

        return cls < AER_CLASS_COUNT ? names[cls] : "unknown";
}

static bool is_space(char c)
{
        return c == ' ' || c == '\t' || c == '\r';
}

/* Parses one line [start, end): "<name...> <count>". */
static int parse_line(const char *start, const char *end, struct aer_list *out)
{
        const char *count_start, *name_end;
        uint64_t count = 0;
        size_t name_len;

        while (end > start && is_space(end[-1]))
                end--;
        while (start < end && is_space(*start))
                start++;
        if (start == end)
                return 0; /* blank line */
        count_start = end;
        while (count_start > start && !is_space(count_start[-1]))
                count_start--;
        name_end = count_start;
        while (name_end > start && is_space(name_end[-1]))
                name_end--;
        if (count_start == end || name_end == start)
                return -EBADMSG;
        for (const char *p = count_start; p < end; p++) {
                if (*p < '0' || *p > '9')
                        return -EBADMSG;
                if (count > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
                        return -EBADMSG;
                count = count * 10 + (uint64_t)(*p - '0');
        }
        name_len = (size_t)(name_end - start);
        if (name_len >= AER_NAME_LEN)
                return -E2BIG;
        if (name_len > 10 && !strncmp(start, "TOTAL_ERR_", 10)) {
                out->has_total = true;
                out->total = count;
                return 0;
        }
        if (out->count == AER_MAX_COUNTERS)
                return -E2BIG;
        memcpy(out->counters[out->count].name, start, name_len);
        out->counters[out->count].name[name_len] = '\0';
        out->counters[out->count].count = count;
        out->count++;
        return 0;
}

int aer_parse(const char *text, struct aer_list *out, unsigned int *bad_line)
{
        unsigned int line = 0;
        const char *p = text;

        memset(out, 0, sizeof(*out));
        *bad_line = 0;
        while (*p) {
                const char *nl = strchr(p, '\n');
                const char *end = nl ? nl : p + strlen(p);
                int err;

                line++;
                err = parse_line(p, end, out);
                if (err) {
                        *bad_line = line;
                        return err;
                }
                if (!nl)
                        break;
                p = nl + 1;
        }
        return 0;
}

static int read_u64(const char *text, uint64_t *out)
{
        char *end;

        if (*text < '0' || *text > '9')
                return -EBADMSG;
        errno = 0;
        *out = strtoull(text, &end, 10);
        while (is_space(*end) || *end == '\n')
                end++;
        return errno || *end ? -EBADMSG : 0;
}

int aer_read(const struct hw_env *env, const char *bdf, struct aer_device *out, const char **what,
             unsigned int *bad_line)
{
        static const char *const dev_files[AER_CLASS_COUNT] = {"aer_dev_correctable",
                                                               "aer_dev_fatal", "aer_dev_nonfatal"};
        static const char *const rp_files[AER_CLASS_COUNT] = {"aer_rootport_total_err_cor",
                                                              "aer_rootport_total_err_fatal",
                                                              "aer_rootport_total_err_nonfatal"};
        char buf[4096];
        bool any = false;

        memset(out, 0, sizeof(*out));
        *bad_line = 0;
        *what = NULL;
        for (int c = 0; c < AER_CLASS_COUNT; c++) {
                ssize_t n = hw_read_file(env, HW_SYSFS, buf, sizeof(buf), "bus/pci/devices/%s/%s",
                                         bdf, dev_files[c]);
                int err;

                if (n == -ENOENT)
                        continue;
                *what = dev_files[c];
                if (n < 0)
                        return (int)n;
                err = aer_parse(buf, &out->classes[c], bad_line);
                if (err)
                        return err;
                out->has_class[c] = true;
                any = true;
        }
        for (int c = 0; c < AER_CLASS_COUNT; c++) {
                ssize_t n = hw_read_file(env, HW_SYSFS, buf, sizeof(buf), "bus/pci/devices/%s/%s",
                                         bdf, rp_files[c]);
                int err;

                if (n == -ENOENT)
                        continue;
                *what = rp_files[c];
                if (n < 0)
                        return (int)n;
                err = read_u64(buf, &out->rootport_total[c]);
                if (err) {
                        *bad_line = 1;
                        return err;
                }
                out->has_rootport_total[c] = true;
                any = true;
        }
        *what = NULL;
        return any ? 0 : -ENOENT;
}

void aer_sanitize_name(const char *name, char *out, size_t size)
{
        size_t o = 0;

        if (!size)
                return;
        for (const char *p = name; *p && o + 1 < size; p++) {
                char c = *p;

                if (c == '[' || c == ']')
                        continue;
                if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
                        c = '_';
                out[o++] = c;
        }
        out[o] = '\0';
}
