/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ptt_tune.h - the tune side of HiSilicon's PCIe Tune and Trace device.
 *
 * Every hisi_ptt<sicl>_<core> PMU directory has a tune/ directory with five
 * files (kernel-facts §2.6): qos_tx_cpl, qos_tx_np, qos_tx_p (the weights
 * of outbound completions, non-posted and posted TLPs) and
 * rx_alloc_buf_level, tx_alloc_buf_level (buffer watermarks for inbound and
 * outbound requests). Reading one asks the hardware and prints "%u\n";
 * writing takes a decimal value, of which 0, 1 and 2 are meaningful (the
 * hardware turns larger values into 2). The seed document lists other names
 * (tx_path_rx_req_alloc_buf_level, qos_tx_dp...): those are wrong, the
 * driver creates the five above.
 *
 * A tuner reads all knobs of all devices as gauges, applies configured
 * values once and puts the original values back when it is freed; nothing
 * is ever written that was not configured.
 */
#ifndef PCIESCOPE_PTT_TUNE_H
#define PCIESCOPE_PTT_TUNE_H

#include <stddef.h>

struct hw_env;
struct sample_set;

enum ptt_knob {
        PTT_QOS_TX_CPL,
        PTT_QOS_TX_NP,
        PTT_QOS_TX_P,
        PTT_RX_ALLOC_BUF_LEVEL,
        PTT_TX_ALLOC_BUF_LEVEL,
        PTT_KNOBS,
};

#define PTT_TUNE_MAX 2 /* the highest meaningful level */

/* The file name of @knob ("qos_tx_cpl"...). */
const char *ptt_knob_name(enum ptt_knob knob);
/* The knob called @name, or -ENOENT (the message can list the names). */
int ptt_knob_parse(const char *name, enum ptt_knob *out);
/* "qos_tx_cpl, qos_tx_np, qos_tx_p, rx_alloc_buf_level, tx_alloc_buf_level" */
const char *ptt_knob_names(void);

/*
 * ptt_tune_value_check - a configured level: a whole number 0..2. Returns 0,
 * or -EINVAL (negative, fractional, not a number) or -ERANGE (above 2): a
 * wrong value is refused, never clamped.
 */
int ptt_tune_value_check(double value);

/* Parses what a tune file holds: "%u\n" of a u16. 0 or -EBADMSG. */
int ptt_tune_parse(const char *text, unsigned int *value);

struct ptt_tuner;

/*
 * ptt_tuner_new - find every hisi_ptt* PMU with a tune/ directory. Returns
 * 0 (possibly with no device), -ENOMEM, or the error of listing the PMUs.
 */
int ptt_tuner_new(const struct hw_env *env, struct ptt_tuner **out);

/* Devices found. */
size_t ptt_tuner_devices(const struct ptt_tuner *t);

/*
 * ptt_tuner_apply - set @knob to @value (0..2) on every device, after
 * reading and keeping the value it had. A device where it fails is logged
 * (with the driver's errno) and left alone; the others go on. Returns 0
 * when every device took the value, else the first error.
 */
int ptt_tuner_apply(struct ptt_tuner *t, enum ptt_knob knob, unsigned int value);

/* Appends pcie_ptt_tune{pmu, knob} for every readable knob of every device.
 * 0 or -ENOMEM. */
int ptt_tuner_samples(struct ptt_tuner *t, struct sample_set *out);

/*
 * ptt_tuner_restore - write back every value apply() changed (once).
 * Returns 0 or the first error (each logged).
 */
int ptt_tuner_restore(struct ptt_tuner *t);

/* Restores, then frees. NULL is fine. */
void ptt_tuner_free(struct ptt_tuner *t);

#endif /* PCIESCOPE_PTT_TUNE_H */
