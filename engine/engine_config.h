/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * engine_config.h - the one configuration of the engine and the one table
 * of its options, shared by every front end (collectd's <Plugin pcie>
 * block, the CLI's flags, Netdata's pcie.conf...).
 *
 * A front end hands each option as it was written: a key and a list of
 * values (strings, numbers, booleans, as collectd's config parser types
 * them). The table checks the value's type and range (finite, within
 * bounds, whole where a whole number is meant), and the setter stores it.
 * The error text says what is wrong; the front end names the key and value
 * in its own spelling ("option TraceClock 0: ..." or "--clock-hz 0: ...").
 * docs/configuration.md's configuration reference is generated from the same table
 * (`pciescope options --markdown`), and a test keeps the two equal.
 */
#ifndef PCIESCOPE_ENGINE_CONFIG_H
#define PCIESCOPE_ENGINE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bdf_match.h"
#include "dwc_pcie.h"
#include "hisi_pcie_core.h"
#include "intel_iio.h"
#include "amd_df.h"
#include "nvidia_pcie.h"
#include "pcie_monitor.h"
#include "ptt_capture.h"
#include "ptt_tune.h"

#define ENGINE_MAX_TUNES 32

struct engine_config {
        /* The machine: live (default), an lspci dump, or a simulation. */
        char *sysfs_root, *proc_root, *pci_dump;
        char *simulate, *simulate_kernel, *machine_dir;

        enum pcie_detail detail; /* Detail: copied into every source's options */

        /* Topology, link, MPS/MRRS audit, AER. */
        struct bdf_filter filter; /* Device / IgnoreDevice */
        struct pcie_monitor_opts monitor;

        /* HiSilicon PCIe PMU. */
        bool collect_pmu;
        struct hisi_pcie_opts pmu;
        struct bdf_filter endpoints; /* Endpoint */
        bool endpoints_given;
        double retry_seconds; /* PMURetryInterval */

        /* Intel uncore. */
        bool collect_iio;
        struct intel_iio_opts iio;
        bool collect_amd_df;
        struct amd_df_opts amd_df;
        bool collect_uncore;

        /* Synopsys DesignWare PCIe PMU. */
        bool collect_dwc;
        struct dwc_pcie_opts dwc;
        /* NVIDIA Grace PCIe PMU. */
        bool collect_nvidia;
        struct nvidia_pcie_opts nvidia;

        /* HiSilicon PTT. */
        bool collect_trace;
        struct ptt_capture_opts trace;
        unsigned int max_traces; /* MaxConcurrentTraces */

        /* CalibrationFile: the file's consistent units set FluxUnit,
         * LatencyClock, TraceClock and TraceTimeMode, except those the
         * configuration gives itself (ENGINE_UNIT_* bits of units_given). */
        char *calibration_file;
        unsigned int units_given;
        bool applying_calibration;
        bool collect_tune;
        size_t tune_count; /* Tune lines, applied in order at start */
        struct {
                enum ptt_knob knob;
                unsigned int value;
        } tunes[ENGINE_MAX_TUNES];
};

enum {
        ENGINE_UNIT_FLUX = 1u << 0,          /* FluxUnit */
        ENGINE_UNIT_LATENCY_CLOCK = 1u << 1, /* LatencyClock */
        ENGINE_UNIT_TRACE_CLOCK = 1u << 2,   /* TraceClock */
        ENGINE_UNIT_TIME_MODE = 1u << 3,     /* TraceTimeMode */
};

/* Every option at its default. 0 or -ENOMEM. */
int engine_config_init(struct engine_config *c);
void engine_config_clear(struct engine_config *c);

enum engine_value_type {
        ENGINE_VALUE_STRING,
        ENGINE_VALUE_NUMBER,
        ENGINE_VALUE_BOOLEAN,
};

/* One value of an option line, typed as written. */
struct engine_value {
        enum engine_value_type type;
        const char *string;
        double number;
        bool boolean;
};

struct engine_option;
typedef int (*engine_option_set_fn)(struct engine_config *c, const struct engine_option *o,
                                    const struct engine_value *v, size_t n, char *why,
                                    size_t whylen);

/* What an option takes; checked before its setter runs. */
enum engine_option_kind {
        ENGINE_OPT_BOOLEAN,
        ENGINE_OPT_STRING,
        ENGINE_OPT_DIRECTORY, /* an existing directory */
        ENGINE_OPT_FILE,      /* an existing regular file */
        ENGINE_OPT_NUMBER,    /* a finite number in [min, max] */
        ENGINE_OPT_WHOLE,     /* a whole number in [min, max] */
        ENGINE_OPT_SPECIAL,   /* the setter checks everything */
};

struct engine_option {
        const char *name; /* as in collectd's block: "TraceClock" */
        enum engine_option_kind kind;
        double min, max;          /* NUMBER, WHOLE */
        bool min_exclusive;       /* NUMBER: above min, not at it */
        engine_option_set_fn set; /* stores the checked value */
        size_t offset;            /* of the field in engine_config, for the plain setters */
        /* For the reference tables: argument, default, meaning (Markdown). */
        const char *value_text;
        const char *default_text;
        const char *help;
};

/* The table, in the order of docs/configuration.md's reference. */
const struct engine_option *engine_options(size_t *count);
/* The option called @name (case-insensitive, as collectd keys), or NULL. */
const struct engine_option *engine_option_find(const char *name);

/*
 * engine_config_set - apply one option line. Returns 0, -ENOENT for an
 * unknown key ("unknown option" in @why), -EINVAL for a bad value, or
 * -ENOMEM; @why says what is wrong without repeating the key.
 */
int engine_config_set(struct engine_config *c, const char *key, const struct engine_value *v,
                      size_t n, char *why, size_t whylen);

/* The same for a front end's single value of any type. */
int engine_config_set_string(struct engine_config *c, const char *key, const char *value, char *why,
                             size_t whylen);
int engine_config_set_number(struct engine_config *c, const char *key, double value, char *why,
                             size_t whylen);
int engine_config_set_boolean(struct engine_config *c, const char *key, bool value, char *why,
                              size_t whylen);

/*
 * engine_config_check - the checks across options, once the whole
 * configuration is read (Simulate with SysfsRoot, the PTT trace options
 * together, SimulateKernel without Simulate). 0 or -EINVAL with @why.
 */
int engine_config_check(const struct engine_config *c, char *why, size_t whylen);

/* The option table as docs/configuration.md's Markdown table (header included). */
void engine_options_markdown(void (*write)(void *ctx, const char *text), void *ctx);

#endif /* PCIESCOPE_ENGINE_CONFIG_H */
