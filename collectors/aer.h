/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * aer.h - AER error counters from sysfs (kernel 4.19 and later).
 *
 * Per device: aer_dev_correctable, aer_dev_fatal, aer_dev_nonfatal, each a
 * list of "<name> <count>" lines ending with TOTAL_ERR_COR/FATAL/NONFATAL.
 * Names differ by kernel ("RxErr" now, "Receiver Error" on 4.19; unnamed
 * bits as "dev_cor_errs_bit[9]"), so the count is always the last token and
 * the name is everything before it. Root Ports and Event Collectors also
 * have aer_rootport_total_err_{cor,fatal,nonfatal}: one number each.
 */
#ifndef PCIESCOPE_AER_H
#define PCIESCOPE_AER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum aer_class { AER_CORRECTABLE, AER_FATAL, AER_NONFATAL, AER_CLASS_COUNT };

/* "correctable", "fatal", "nonfatal" */
const char *aer_class_name(enum aer_class cls);

#define AER_MAX_COUNTERS 40 /* 32 status bits at most, with room to spare */
#define AER_NAME_LEN     48

struct aer_counter {
        char name[AER_NAME_LEN];
        uint64_t count;
};

struct aer_list {
        size_t count;
        struct aer_counter counters[AER_MAX_COUNTERS];
        bool has_total;
        uint64_t total;
};

/*
 * aer_parse - parse the text of one aer_dev_* file.
 * Returns 0; -EBADMSG for a line that is not "<name> <count>" or repeats
 * an earlier name (its 1-based number in *@bad_line); -ERANGE for a count
 * above INT64_MAX; -E2BIG for more than AER_MAX_COUNTERS lines or a name
 * longer than AER_NAME_LEN - 1.
 */
int aer_parse(const char *text, struct aer_list *out, unsigned int *bad_line);

struct aer_device {
        bool has_class[AER_CLASS_COUNT];
        struct aer_list classes[AER_CLASS_COUNT];
        bool has_rootport_total[AER_CLASS_COUNT];
        uint64_t rootport_total[AER_CLASS_COUNT];
};

/* The sysfs files of a device's AER statistics (Linux 4.19 on). */
enum aer_file {
        AER_DEV_CORRECTABLE, /* per error type, by class: aer_parse() */
        AER_DEV_FATAL,
        AER_DEV_NONFATAL,
        AER_ROOTPORT_TOTAL_COR, /* one number: errors reported to a Root Port */
        AER_ROOTPORT_TOTAL_FATAL,
        AER_ROOTPORT_TOTAL_NONFATAL,
        AER_FILES
};
/* "aer_dev_correctable", ..., "aer_rootport_total_err_nonfatal" */
const char *aer_file_name(enum aer_file file);

/*
 * aer_device_parse_file - parse the @text of @file into @dev (and mark that
 * part present). Returns 0, -EBADMSG (line in *@bad_line), -E2BIG, or
 * -EINVAL for an unknown @file.
 */
int aer_device_parse_file(struct aer_device *dev, enum aer_file file, const char *text,
                          unsigned int *bad_line);

/* A name safe for collectd's type_instance and Prometheus labels: spaces
 * and anything outside [A-Za-z0-9_] become '_', "[9]" becomes "9". */
void aer_sanitize_name(const char *name, char *out, size_t size);

#endif /* PCIESCOPE_AER_H */
