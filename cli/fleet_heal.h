/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fleet_heal.h - the healthy base of a `pciescope fleet` host.
 *
 * A shipped description may carry faults of its own (a link trained
 * narrower or slower, a flapping link, an MPS above its link partner's,
 * AER counters that rise, a device that asks more than its link carries).
 * A fleet's faults are the planted ones, listed in --truth, so the base of
 * every machine is the description healed, by rules that look at nothing
 * but the description (no list of known faults); cmd_fleet.c then checks,
 * on the engine's own output, that no alerting condition holds on it
 * (docs/fleet.md, "The machine mix").
 */
#ifndef PCIESCOPE_FLEET_HEAL_H
#define PCIESCOPE_FLEET_HEAL_H

#include <json-c/json.h>

/* What was changed, by kind: links retrained, flaps removed, MPS values
 * made consistent, AER counters stilled, link directions scaled down. */
struct fleet_heal_counts {
        unsigned links, flaps, mps, aer, traffic;
};

/* Heals @machine (a parsed description, docs/simulator.md) in place: every
 * link trains at the best both ends support, no flap, one MPS per link,
 * uncorrectable AER counters still and correctable ones slow, and no link
 * direction asked for more than 70 % of its effective capacity (scaled to 60 %).
 * Adds what it changed to @counts. */
void fleet_heal_description(json_object *machine, struct fleet_heal_counts *counts);

/* A description's string member @key (NULL when absent) and integer member
 * (@dflt when absent): the getters healing and planting faults share. */
const char *fleet_jstr(json_object *o, const char *key);
int fleet_jint(json_object *o, const char *key, int dflt);

#endif
