/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * calibration_file.c - writing and reading the calibration file. See
 * calibration_file.h.
 */
#define _GNU_SOURCE
#include "calibration_file.h"
#include "amd_df.h"
#include "pci_addr.h"
#include "safe_file.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- writing ---- */

static json_object *value_json(const struct calib_value *v)
{
        json_object *o = json_object_new_object(), *samples = json_object_new_array();

        json_object_object_add(o, "value",
                               isfinite(v->value) ? json_object_new_double(v->value) : NULL);
        json_object_object_add(o, "verdict",
                               json_object_new_string(calib_verdict_name(v->verdict)));
        json_object_object_add(o, "spread", json_object_new_double(v->repeats ? v->spread : 0));
        json_object_object_add(o, "repeats", json_object_new_int64((int64_t)v->repeats));
        for (size_t i = 0; i < v->repeats; i++)
                json_object_array_add(samples, json_object_new_double(v->samples[i]));
        json_object_object_add(o, "samples", samples);
        json_object_object_add(o, "asked", json_object_new_int64((int64_t)v->asked));
        json_object_object_add(o, "dropped", json_object_new_int64((int64_t)v->dropped));
        if (v->dropped) {
                json_object *drops = json_object_new_array();

                for (size_t i = 0; i < CALIB_MAX_DROP_REASONS && v->drops[i].why; i++) {
                        json_object *d = json_object_new_object();

                        json_object_object_add(d, "why", json_object_new_string(v->drops[i].why));
                        json_object_object_add(d, "repeats",
                                               json_object_new_int64((int64_t)v->drops[i].count));
                        json_object_array_add(drops, d);
                }
                json_object_object_add(o, "drops", drops);
        }
        if (v->why[0])
                json_object_object_add(o, "why", json_object_new_string(v->why));
        return o;
}

static const char *time_mode_text(enum calib_time_mode m)
{
        return m == CALIB_TIME_ABSOLUTE ? "absolute" : m == CALIB_TIME_DELTA ? "delta" : NULL;
}

json_object *calibration_json(const struct calibration *c, const char *machine)
{
        json_object *o = json_object_new_object(), *load = json_object_new_object();
        json_object *tm = json_object_new_object(), *out = json_object_new_array();
        const char *mode = time_mode_text(c->ptt_time_mode);

        json_object_object_add(o, "pciescope_calibration", json_object_new_int(CALIBRATION_FORMAT));
        json_object_object_add(o, "machine", json_object_new_string(machine ? machine : ""));
        json_object_object_add(o, "device", json_object_new_string(c->device));
        json_object_object_add(o, "root_port", json_object_new_string(c->root_port));
        json_object_object_add(o, "pmu", json_object_new_string(c->pmu));
        json_object_object_add(o, "ptt", json_object_new_string(c->ptt));
        json_object_object_add(load, "what", json_object_new_string(c->load));
        json_object_object_add(load, "bytes", json_object_new_int64((int64_t)c->load_bytes));
        json_object_object_add(load, "seconds", json_object_new_double(c->load_seconds));
        json_object_object_add(o, "load", load);
        json_object_object_add(o, "flux_unit_bytes", value_json(&c->flux_unit_bytes));
        json_object_object_add(o, "time_clock_hz", value_json(&c->time_clock_hz));
        json_object_object_add(o, "latency_clock_hz", value_json(&c->latency_clock_hz));
        json_object_object_add(o, "ptt_clock_hz", value_json(&c->ptt_clock_hz));
        json_object_object_add(tm, "value", mode ? json_object_new_string(mode) : NULL);
        json_object_object_add(tm, "verdict",
                               json_object_new_string(mode ? "consistent" : "not measurable"));
        json_object_object_add(tm, "rising_share", json_object_new_double(c->ptt_rising_share));
        if (c->ptt_time_why[0])
                json_object_object_add(tm, "why", json_object_new_string(c->ptt_time_why));
        json_object_object_add(o, "ptt_time_mode", tm);
        for (size_t i = 0; i < c->outbound_count; i++) {
                json_object *r = json_object_new_object();
                char rid[16];

                snprintf(rid, sizeof(rid), "%02x:%02x.%u", c->outbound[i].requester_id >> 8,
                         (c->outbound[i].requester_id >> 3) & 0x1f,
                         c->outbound[i].requester_id & 7u);
                json_object_object_add(r, "requester", json_object_new_string(rid));
                json_object_object_add(r, "tlps",
                                       json_object_new_int64((int64_t)c->outbound[i].tlps));
                json_object_array_add(out, r);
        }
        json_object_object_add(o, "outbound_requesters", out);
        if (c->outbound_why[0])
                json_object_object_add(o, "outbound_why", json_object_new_string(c->outbound_why));
        json_object_object_add(o, "notes", json_object_new_string(c->notes));
        if (c->port_map) {
                json_object *pm = json_object_new_object();

                json_object_object_add(pm, "node", json_object_new_int64(c->port_map_node));
                json_object_object_add(
                    pm, "bit", c->port_map_bit >= 0 ? json_object_new_int(c->port_map_bit) : NULL);
                json_object_object_add(pm, "root_port", json_object_new_string(c->root_port));
                json_object_object_add(
                    pm, "verdict", json_object_new_string(calib_verdict_name(c->port_map_verdict)));
                json_object_object_add(pm, "repeats", json_object_new_int64(c->port_map_agree));
                json_object_object_add(pm, "asked", json_object_new_int64(c->port_map_asked));
                if (c->port_map_why[0])
                        json_object_object_add(pm, "why", json_object_new_string(c->port_map_why));
                json_object_object_add(o, "nvidia_port_map", pm);
        }
        if (c->df_map) {
                json_object *dm = json_object_new_object();
                bool found = c->df_socket >= 0 && c->df_rc >= 0;

                json_object_object_add(dm, "root_bus", json_object_new_string(c->df_root_bus));
                json_object_object_add(dm, "socket",
                                       found ? json_object_new_int(c->df_socket) : NULL);
                json_object_object_add(dm, "root_complex",
                                       found ? json_object_new_int(c->df_rc) : NULL);
                if (found) {
                        json_object_object_add(
                            dm, "direction",
                            json_object_new_string(c->df_dir == AMD_DF_WRITE ? "write" : "read"));
                        json_object_object_add(dm, "rise_bytes_per_second",
                                               json_object_new_double(c->df_rise));
                        json_object_object_add(dm, "load_bytes_per_second",
                                               json_object_new_double(c->df_load_rate));
                }
                json_object_object_add(dm, "verdict",
                                       json_object_new_string(calib_verdict_name(c->df_verdict)));
                json_object_object_add(dm, "repeats", json_object_new_int64(c->df_agree));
                json_object_object_add(dm, "asked", json_object_new_int64(c->df_asked));
                if (c->df_why[0])
                        json_object_object_add(dm, "why", json_object_new_string(c->df_why));
                json_object_object_add(o, "amd_df_root_complex", dm);
        }
        return o;
}

/* The file is written through safe_file (a fresh random name beside it,
 * O_EXCL|O_NOFOLLOW, then rename): a link planted at a name calibrate
 * would use is never followed. Mode 0644 less the umask: collectd and
 * other users read it like a configuration file. */
#define CALIBRATION_FILE_MODE 0644

static int refuse_directory(const char *path, char *why, size_t whylen)
{
        struct stat st;

        if (!stat(path, &st) && S_ISDIR(st.st_mode)) {
                snprintf(why, whylen, "%s: %s", path, strerror(EISDIR));
                return -EISDIR;
        }
        return 0;
}

int calibration_file_check(const char *path, char *why, size_t whylen)
{
        struct safe_file f;
        int ret = refuse_directory(path, why, whylen);

        if (ret)
                return ret;
        ret = safe_file_open(&f, path, CALIBRATION_FILE_MODE);
        if (ret) {
                snprintf(why, whylen, "%s: cannot create a file beside it: %s", path,
                         strerror(-ret));
                return ret;
        }
        safe_file_abort(&f);
        return 0;
}

int calibration_file_write(json_object *o, const char *path, char *why, size_t whylen)
{
        const char *text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
                                                                 JSON_C_TO_STRING_NOSLASHESCAPE);
        size_t len = strlen(text);
        char *buf;
        int ret = refuse_directory(path, why, whylen);

        if (ret)
                return ret;
        buf = malloc(len + 1);
        if (!buf) {
                snprintf(why, whylen, "%s: %s", path, strerror(ENOMEM));
                return -ENOMEM;
        }
        memcpy(buf, text, len);
        buf[len] = '\n'; /* the text, then its final newline */
        ret = safe_file_write(path, buf, len + 1, CALIBRATION_FILE_MODE);
        free(buf);
        if (ret)
                snprintf(why, whylen, "%s: %s", path, strerror(-ret));
        return ret;
}

/* ---- reading ---- */

static int bad(char *why, size_t whylen, const char *name, const char *key, const char *what)
{
        snprintf(why, whylen, "%s: %s%s%s", name, key ? key : "", key ? ": " : "", what);
        return -EBADMSG;
}

/* A result object: applied when consistent with a number in @min..@max
 * (@unit names it in messages). */
static int read_value(json_object *top, const char *key, const char *name, bool *have, double *out,
                      double min, double max, const char *unit, char *why, size_t whylen)
{
        json_object *o, *verdict, *value;

        *have = false;
        if (!json_object_object_get_ex(top, key, &o))
                return 0; /* an older or partial file: that unit stays as configured */
        if (!json_object_is_type(o, json_type_object))
                return bad(why, whylen, name, key, "not an object");
        if (!json_object_object_get_ex(o, "verdict", &verdict) ||
            !json_object_is_type(verdict, json_type_string))
                return bad(why, whylen, name, key, "no \"verdict\" string");
        if (!json_object_object_get_ex(o, "value", &value))
                return bad(why, whylen, name, key, "no \"value\"");
        if (strcmp(json_object_get_string(verdict), "consistent"))
                return 0; /* measured, but not to be trusted: not applied */
        if (!json_object_is_type(value, json_type_double) &&
            !json_object_is_type(value, json_type_int))
                return bad(why, whylen, name, key, "a consistent value must be a number");
        *out = json_object_get_double(value);
        if (!isfinite(*out) || *out <= 0)
                return bad(why, whylen, name, key, "the value must be a number above 0");
        if (*out < min || *out > max) {
                char what[160];

                snprintf(what, sizeof(what), "value %.17g is outside the plausible range %g..%g %s",
                         *out, min, max, unit);
                return bad(why, whylen, name, key, what);
        }
        *have = true;
        return 0;
}

/* "nvidia_port_map": applied when consistent, with a bit 0..9, a node and
 * a Root Port BDF. */
static int read_port_map(json_object *top, const char *name, struct calibration_units *u, char *why,
                         size_t whylen)
{
        const char *key = "nvidia_port_map";
        json_object *o, *verdict, *bit, *node, *port;
        struct pci_addr a;

        if (!json_object_object_get_ex(top, key, &o))
                return 0;
        if (!json_object_is_type(o, json_type_object))
                return bad(why, whylen, name, key, "not an object");
        if (!json_object_object_get_ex(o, "verdict", &verdict) ||
            !json_object_is_type(verdict, json_type_string))
                return bad(why, whylen, name, key, "no \"verdict\" string");
        if (strcmp(json_object_get_string(verdict), "consistent"))
                return 0;
        if (!json_object_object_get_ex(o, "bit", &bit) ||
            !json_object_is_type(bit, json_type_int) || json_object_get_int64(bit) < 0 ||
            json_object_get_int64(bit) > 9)
                return bad(why, whylen, name, key, "a consistent map needs a \"bit\" 0..9");
        if (!json_object_object_get_ex(o, "node", &node) ||
            !json_object_is_type(node, json_type_int) || json_object_get_int64(node) < 0 ||
            json_object_get_int64(node) > 4095)
                return bad(why, whylen, name, key, "a consistent map needs a \"node\" 0..4095");
        if (!json_object_object_get_ex(o, "root_port", &port) ||
            !json_object_is_type(port, json_type_string) ||
            pci_addr_parse(json_object_get_string(port), &a))
                return bad(why, whylen, name, key,
                           "a consistent map needs a \"root_port\" BDF (dddd:bb:dd.f)");
        u->have_port_map = true;
        u->port_map_node = (unsigned int)json_object_get_int64(node);
        u->port_map_bit = (unsigned int)json_object_get_int64(bit);
        pci_addr_format(&a, u->port_map_port);
        return 0;
}

/* "amd_df_root_complex": applied when consistent, with a socket 0..255, a
 * root complex 0..7 and a root bus "dddd:bb"; the rest is for people. */
static int read_df_map(json_object *top, const char *name, struct calibration_units *u, char *why,
                       size_t whylen)
{
        const char *key = "amd_df_root_complex";
        json_object *o, *verdict, *sock, *rc, *bus;
        const char *text;

        if (!json_object_object_get_ex(top, key, &o))
                return 0;
        if (!json_object_is_type(o, json_type_object))
                return bad(why, whylen, name, key, "not an object");
        if (!json_object_object_get_ex(o, "verdict", &verdict) ||
            !json_object_is_type(verdict, json_type_string))
                return bad(why, whylen, name, key, "no \"verdict\" string");
        if (strcmp(json_object_get_string(verdict), "consistent"))
                return 0;
        if (!json_object_object_get_ex(o, "socket", &sock) ||
            !json_object_is_type(sock, json_type_int) || json_object_get_int64(sock) < 0 ||
            json_object_get_int64(sock) > 255)
                return bad(why, whylen, name, key, "a consistent map needs a \"socket\" 0..255");
        if (!json_object_object_get_ex(o, "root_complex", &rc) ||
            !json_object_is_type(rc, json_type_int) || json_object_get_int64(rc) < 0 ||
            json_object_get_int64(rc) >= AMD_DF_ROOT_COMPLEXES)
                return bad(why, whylen, name, key,
                           "a consistent map needs a \"root_complex\" 0..7");
        _Static_assert(AMD_DF_ROOT_COMPLEXES == 8, "the message says 0..7");
        /* Only "dddd:bb": the file is written whole, never abbreviated. */
        if (!json_object_object_get_ex(o, "root_bus", &bus) ||
            !json_object_is_type(bus, json_type_string) ||
            strlen(text = json_object_get_string(bus)) != 7 || !strchr(text, ':') ||
            amd_df_parse_bus(text, &u->df_domain, &u->df_bus))
                return bad(why, whylen, name, key,
                           "a consistent map needs a \"root_bus\" dddd:bb (hex)");
        u->have_df_map = true;
        u->df_socket = (unsigned int)json_object_get_int64(sock);
        u->df_rc = (unsigned int)json_object_get_int64(rc);
        return 0;
}

static int read_time_mode(json_object *top, const char *name, struct calibration_units *u,
                          char *why, size_t whylen)
{
        json_object *o, *value;
        const char *text;

        if (!json_object_object_get_ex(top, "ptt_time_mode", &o))
                return 0;
        if (!json_object_is_type(o, json_type_object))
                return bad(why, whylen, name, "ptt_time_mode", "not an object");
        if (!json_object_object_get_ex(o, "value", &value))
                return bad(why, whylen, name, "ptt_time_mode", "no \"value\"");
        if (!value)
                return 0; /* undecided */
        if (!json_object_is_type(value, json_type_string))
                return bad(why, whylen, name, "ptt_time_mode",
                           "value must be \"delta\", \"absolute\" or null");
        text = json_object_get_string(value);
        if (ptt_time_mode_parse(text, &u->time_mode))
                return bad(why, whylen, name, "ptt_time_mode",
                           "value must be \"delta\", \"absolute\" or null");
        u->have_time_mode = true;
        return 0;
}

int calibration_parse(const char *text, size_t len, const char *name, struct calibration_units *u,
                      char *why, size_t whylen)
{
        static const char *const known[] = {"pciescope_calibration",
                                            "pciescope_version",
                                            "machine",
                                            "device",
                                            "root_port",
                                            "pmu",
                                            "ptt",
                                            "load",
                                            "flux_unit_bytes",
                                            "time_clock_hz",
                                            "latency_clock_hz",
                                            "ptt_clock_hz",
                                            "ptt_time_mode",
                                            "outbound_requesters",
                                            "outbound_why",
                                            "notes",
                                            "nvidia_port_map",
                                            "amd_df_root_complex",
                                            NULL};
        struct json_tokener *tok = json_tokener_new();
        json_object *top, *format;
        double time_clock;
        bool have_time_clock;
        int ret;

        memset(u, 0, sizeof(*u));
        if (!tok)
                return -ENOMEM;
        /* Written by a program: no comments, no trailing commas. */
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
        if (len > CALIBRATION_MAX_BYTES) {
                json_tokener_free(tok);
                return bad(why, whylen, name, NULL, "larger than 1 MiB: not a calibration file");
        }
        top = json_tokener_parse_ex(tok, text, (int)len);
        enum json_tokener_error err = json_tokener_get_error(tok);
        size_t at = json_tokener_get_parse_end(tok);

        /* Only white space may follow the object. */
        while (top && err == json_tokener_success && at < len && strchr(" \t\r\n", text[at]) &&
               text[at])
                at++;
        if (!top || err != json_tokener_success || at < len) {
                json_object_put(top);
                json_tokener_free(tok);
                snprintf(why, whylen, "%s: byte %zu: JSON syntax error: %s", name, at,
                         err == json_tokener_success ? "text after the object"
                                                     : json_tokener_error_desc(err));
                return -EBADMSG;
        }
        json_tokener_free(tok);
        ret = 0;
        if (!json_object_is_type(top, json_type_object))
                ret = bad(why, whylen, name, NULL, "not a JSON object");
        if (!ret && (!json_object_object_get_ex(top, "pciescope_calibration", &format) ||
                     !json_object_is_type(format, json_type_int) ||
                     json_object_get_int(format) != CALIBRATION_FORMAT))
                ret = bad(why, whylen, name, "pciescope_calibration",
                          "missing or not 1: not a calibration file of this version");
        if (!ret) {
                json_object_object_foreach(top, key, val)
                {
                        bool ok = false;

                        (void)val;
                        for (size_t i = 0; known[i] && !ok; i++)
                                ok = !strcmp(key, known[i]);
                        if (!ok) {
                                ret = bad(why, whylen, name, key, "unknown key");
                                break;
                        }
                }
        }
        if (!ret)
                ret = read_value(top, "flux_unit_bytes", name, &u->have_flux_unit,
                                 &u->flux_unit_bytes, CALIB_FLUX_UNIT_MIN, CALIB_FLUX_UNIT_MAX,
                                 "bytes per count", why, whylen);
        if (!ret)
                ret = read_value(top, "latency_clock_hz", name, &u->have_latency_clock,
                                 &u->latency_clock_hz, CALIB_CLOCK_MIN_HZ, CALIB_CLOCK_MAX_HZ, "Hz",
                                 why, whylen);
        if (!ret)
                ret =
                    read_value(top, "ptt_clock_hz", name, &u->have_trace_clock, &u->trace_clock_hz,
                               CALIB_CLOCK_MIN_HZ, CALIB_CLOCK_MAX_HZ, "Hz", why, whylen);
        /* Checked like the others, though no option takes it. */
        if (!ret)
                ret = read_value(top, "time_clock_hz", name, &have_time_clock, &time_clock,
                                 CALIB_CLOCK_MIN_HZ, CALIB_CLOCK_MAX_HZ, "Hz", why, whylen);
        if (!ret)
                ret = read_time_mode(top, name, u, why, whylen);
        if (!ret)
                ret = read_port_map(top, name, u, why, whylen);
        if (!ret)
                ret = read_df_map(top, name, u, why, whylen);
        json_object_put(top);
        if (ret)
                memset(u, 0, sizeof(*u));
        return ret;
}

int calibration_file_read(const char *path, struct calibration_units *u, char *why, size_t whylen)
{
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        struct stat st;
        char *text;
        ssize_t n;
        int ret;

        memset(u, 0, sizeof(*u));
        if (fd < 0) {
                ret = -errno;
                snprintf(why, whylen, "%s: %s", path, strerror(errno));
                return ret;
        }
        if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
                close(fd);
                snprintf(why, whylen, "%s: not a regular file", path);
                return -EINVAL;
        }
        if (st.st_size > CALIBRATION_MAX_BYTES) {
                close(fd);
                snprintf(why, whylen, "%s: larger than 1 MiB: not a calibration file", path);
                return -EFBIG;
        }
        text = malloc((size_t)st.st_size + 1);
        if (!text) {
                close(fd);
                return -ENOMEM;
        }
        n = read(fd, text, (size_t)st.st_size);
        ret = n < 0 ? -errno : 0;
        close(fd);
        if (ret) {
                snprintf(why, whylen, "%s: %s", path, strerror(-ret));
        } else {
                text[n] = '\0';
                ret = calibration_parse(text, (size_t)n, path, u, why, whylen);
        }
        free(text);
        return ret;
}
