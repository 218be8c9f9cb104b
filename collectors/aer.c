// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * aer.c - AER error counters: the text of the sysfs aer_* files, parsed.
 * Pure: the caller reads the files (pcie_monitor_read_aer).
 */
#include "aer.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const char *aer_class_name(enum aer_class cls)
{
        static const char *const names[AER_CLASS_COUNT] = {"correctable", "fatal", "nonfatal"};

        return cls < AER_CLASS_COUNT ? names[cls] : "unknown";
}

static bool is_space(char c)
{
        return c == ' ' || c == '\t' || c == '\r';
}

static bool same_label(const char *a, const char *b)
{
        char sa[AER_NAME_LEN], sb[AER_NAME_LEN];

        aer_sanitize_name(a, sa, sizeof(sa));
        aer_sanitize_name(b, sb, sizeof(sb));
        return !strcmp(sa, sb);
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
        /* collectd's DERIVE is signed: a count beyond it is no count. */
        if (count > INT64_MAX)
                return -ERANGE;
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
        /* Two lines of one name (or of names that read the same as a label)
         * would be one series twice: the file is broken. */
        for (size_t i = 0; i < out->count; i++)
                if (same_label(out->counters[i].name, out->counters[out->count].name))
                        return -EBADMSG;
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

/* One count and nothing else; within collectd's signed DERIVE. */
static int read_count(const char *text, uint64_t *out)
{
        char *end;

        if (*text < '0' || *text > '9')
                return -EBADMSG;
        errno = 0;
        *out = strtoull(text, &end, 10);
        while (is_space(*end) || *end == '\n')
                end++;
        if (errno || *end)
                return -EBADMSG;
        return *out > INT64_MAX ? -ERANGE : 0;
}

const char *aer_file_name(enum aer_file file)
{
        static const char *const names[AER_FILES] = {
            [AER_DEV_CORRECTABLE] = "aer_dev_correctable",
            [AER_DEV_FATAL] = "aer_dev_fatal",
            [AER_DEV_NONFATAL] = "aer_dev_nonfatal",
            [AER_ROOTPORT_TOTAL_COR] = "aer_rootport_total_err_cor",
            [AER_ROOTPORT_TOTAL_FATAL] = "aer_rootport_total_err_fatal",
            [AER_ROOTPORT_TOTAL_NONFATAL] = "aer_rootport_total_err_nonfatal",
        };

        return file < AER_FILES ? names[file] : "unknown";
}

int aer_device_parse_file(struct aer_device *dev, enum aer_file file, const char *text,
                          unsigned int *bad_line)
{
        int err;

        *bad_line = 0;
        if (file <= AER_DEV_NONFATAL) {
                enum aer_class c = (enum aer_class)(file - AER_DEV_CORRECTABLE);

                err = aer_parse(text, &dev->classes[c], bad_line);
                if (!err)
                        dev->has_class[c] = true;
                return err;
        }
        if (file < AER_FILES) {
                enum aer_class c = (enum aer_class)(file - AER_ROOTPORT_TOTAL_COR);

                err = read_count(text, &dev->rootport_total[c]);
                if (err) {
                        *bad_line = 1;
                        return err;
                }
                dev->has_rootport_total[c] = true;
                return 0;
        }
        return -EINVAL;
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
