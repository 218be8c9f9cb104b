// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * perf_pmu.c - read a dynamic perf PMU's type, cpumask, format/ and events/
 * files from sysfs and turn event names and field values into
 * perf_event_attr bits.
 *
 * The text parsers are strict on purpose: a value that is silently half-read
 * would program the wrong hardware event, so anything the kernel would not
 * print (spaces, signs, junk, overlapping bits) is rejected and the loader
 * skips that file with a warning instead.
 */
#define _GNU_SOURCE /* strtod_l, newlocale */
#include "perf_pmu.h"

#include <errno.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw_env.h"

#define DEVICES_DIR "bus/event_source/devices"

/* sysfs attributes are at most one (4 KiB) page, plus the NUL. */
#define PMU_FILE_MAX 4097

/* Highest CPU number a cpumask may name. Far above any NR_CPUS, and low
 * enough that the count of a list always fits in an int. */
#define CPU_ID_MAX ((1 << 20) - 1)

/* ---- small text helpers ---- */

static bool is_digit(char c)
{
        return c >= '0' && c <= '9';
}

static bool is_xdigit(char c)
{
        return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Term names as the kernel writes them: a letter or '_', then letters,
 * digits and '_'. */
static bool is_name_start(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_name_char(char c)
{
        return is_name_start(c) || is_digit(c);
}

/* The end of a sysfs value: the NUL, or one newline and then the NUL. */
static bool at_end(const char *p)
{
        return *p == '\0' || (*p == '\n' && p[1] == '\0');
}

/*
 * Decimal digits at *@p into *@value; *@p moves past them. strtoull alone
 * would also take leading blanks, a sign or (base 0) octal, so the first
 * character is checked here.
 */
static int parse_dec(const char **p, uint64_t *value)
{
        char *end;

        if (!is_digit(**p))
                return -EINVAL;
        errno = 0;
        *value = strtoull(*p, &end, 10);
        if (errno || end == *p)
                return -EINVAL;
        *p = end;
        return 0;
}

/*
 * A decimal or 0x-hex number, as perf writes event terms. The hex case
 * hands strtoull the "0x" as well: given only the digits, base 16 would
 * accept a second "0x" ("0x0x12").
 */
static int parse_number(const char **p, uint64_t *value)
{
        const char *s = *p;
        char *end;

        if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
                if (!is_xdigit(s[2]))
                        return -EINVAL;
                errno = 0;
                *value = strtoull(s, &end, 16);
                if (errno || end == s)
                        return -EINVAL;
                *p = end;
                return 0;
        }
        return parse_dec(p, value);
}

/* A whole sysfs number file: decimal or 0x hex, optional newline. */
static int parse_u64_text(const char *text, uint64_t *value)
{
        const char *p = text;

        if (parse_number(&p, value) || !at_end(p))
                return -EINVAL;
        return 0;
}

/* ---- format/ files ---- */

/* Bits lo..hi set; lo <= hi <= 63. */
static uint64_t bit_mask(unsigned int lo, unsigned int hi)
{
        uint64_t upto_hi = hi == 63 ? UINT64_MAX : (UINT64_C(1) << (hi + 1)) - 1;

        return upto_hi & ~((UINT64_C(1) << lo) - 1);
}

/* "config:", "config1:" ... at @p: the word, and *@p moved past the ':'. */
static int parse_word(const char **p, enum perf_config_word *word)
{
        static const struct {
                const char *prefix;
                enum perf_config_word word;
        } words[] = {
            {"config:", PERF_CONFIG},
            {"config1:", PERF_CONFIG1},
            {"config2:", PERF_CONFIG2},
            {"config3:", PERF_CONFIG3},
        };

        for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
                size_t len = strlen(words[i].prefix);

                /* strncmp stops at the first difference, so a short text
                 * is never read past its NUL. */
                if (!strncmp(*p, words[i].prefix, len)) {
                        *word = words[i].word;
                        *p += len;
                        return 0;
                }
        }
        return -EINVAL;
}

/* A bit number 0..63. */
static int parse_bit(const char **p, unsigned int *bit)
{
        uint64_t v;

        if (parse_dec(p, &v) || v > 63)
                return -EINVAL;
        *bit = (unsigned int)v;
        return 0;
}

/*
 * One word per field: the kernel never mixes words in one format file
 * ("config:0-7,32-35" lists ranges of config only), so a field is at most
 * 64 bits wide and the pieces never overlap.
 */
int perf_format_parse(const char *text, struct perf_format *out)
{
        struct perf_format_piece pieces[PERF_FORMAT_PIECES];
        enum perf_config_word word;
        const char *p = text;
        uint64_t used = 0;
        size_t count = 0;

        if (!text || !out || parse_word(&p, &word))
                return -EINVAL;
        for (;;) {
                unsigned int lo, hi;
                uint64_t mask;

                if (parse_bit(&p, &lo))
                        return -EINVAL;
                hi = lo;
                if (*p == '-') {
                        p++;
                        if (parse_bit(&p, &hi))
                                return -EINVAL;
                }
                if (lo > hi || count == PERF_FORMAT_PIECES)
                        return -EINVAL;
                mask = bit_mask(lo, hi);
                if (used & mask)
                        return -EINVAL;
                used |= mask;
                pieces[count].word = word;
                pieces[count].lo = (uint8_t)lo;
                pieces[count].hi = (uint8_t)hi;
                count++;
                if (*p != ',')
                        break;
                p++;
        }
        if (!at_end(p))
                return -EINVAL;
        out->piece_count = count;
        memcpy(out->pieces, pieces, count * sizeof(pieces[0]));
        return 0;
}

unsigned int perf_format_width(const struct perf_format *fmt)
{
        unsigned int width = 0;

        for (size_t i = 0; i < fmt->piece_count && i < PERF_FORMAT_PIECES; i++)
                if (fmt->pieces[i].lo <= fmt->pieces[i].hi)
                        width += fmt->pieces[i].hi - fmt->pieces[i].lo + 1u;
        return width;
}

/*
 * The attr word a piece lives in, or NULL. config3 arrived with
 * PERF_ATTR_SIZE_VER8 (Linux 6.3); Debian 12's linux-libc-dev (6.1) has no
 * such field, so there a config3 format still parses (the PMU loads and
 * lists it) but applying it fails with -EOPNOTSUPP.
 */
static __u64 *attr_word(struct perf_event_attr *attr, enum perf_config_word word)
{
        switch (word) {
        case PERF_CONFIG:
                return &attr->config;
        case PERF_CONFIG1:
                return &attr->config1;
        case PERF_CONFIG2:
                return &attr->config2;
        case PERF_CONFIG3:
#ifdef PERF_ATTR_SIZE_VER8
                return &attr->config3;
#else
                return NULL;
#endif
        }
        return NULL;
}

/* The read-only twin of attr_word(): false when the word does not exist. */
static bool attr_word_get(const struct perf_event_attr *attr, enum perf_config_word word,
                          uint64_t *value)
{
        switch (word) {
        case PERF_CONFIG:
                *value = attr->config;
                return true;
        case PERF_CONFIG1:
                *value = attr->config1;
                return true;
        case PERF_CONFIG2:
                *value = attr->config2;
                return true;
        case PERF_CONFIG3:
#ifdef PERF_ATTR_SIZE_VER8
                *value = attr->config3;
                return true;
#else
                return false;
#endif
        }
        return false;
}

/* A piece a caller built by hand may be out of range; never shift by it. */
static bool piece_ok(const struct perf_format_piece *pc)
{
        return pc->lo <= pc->hi && pc->hi <= 63;
}

/*
 * Everything is checked before the first bit is written, so a failed apply
 * leaves @attr as it was. Besides -ERANGE: -EOPNOTSUPP for a config3 field
 * when this build's perf_event_attr has no config3, -EINVAL for a format
 * whose pieces are out of range.
 */
int perf_format_apply(const struct perf_format *fmt, uint64_t value, struct perf_event_attr *attr)
{
        unsigned int width = perf_format_width(fmt), shift = 0;

        if (fmt->piece_count > PERF_FORMAT_PIECES || width > 64)
                return -EINVAL;
        if (width < 64 && value >> width)
                return -ERANGE;
        for (size_t i = 0; i < fmt->piece_count; i++) {
                if (!piece_ok(&fmt->pieces[i]))
                        return -EINVAL;
                if (!attr_word(attr, fmt->pieces[i].word))
                        return fmt->pieces[i].word == PERF_CONFIG3 ? -EOPNOTSUPP : -EINVAL;
        }
        for (size_t i = 0; i < fmt->piece_count; i++) {
                const struct perf_format_piece *pc = &fmt->pieces[i];
                unsigned int len = pc->hi - pc->lo + 1u;
                __u64 *w = attr_word(attr, pc->word);
                uint64_t bits = shift < 64 ? value >> shift : 0;

                bits &= len == 64 ? UINT64_MAX : (UINT64_C(1) << len) - 1;
                *w = (*w & ~bit_mask(pc->lo, pc->hi)) | (bits << pc->lo);
                shift += len;
        }
        return 0;
}

uint64_t perf_format_extract(const struct perf_format *fmt, const struct perf_event_attr *attr)
{
        unsigned int shift = 0;
        uint64_t value = 0;

        for (size_t i = 0; i < fmt->piece_count && i < PERF_FORMAT_PIECES; i++) {
                const struct perf_format_piece *pc = &fmt->pieces[i];
                uint64_t w;

                if (!piece_ok(pc))
                        continue;
                if (shift < 64 && attr_word_get(attr, pc->word, &w))
                        value |= ((w & bit_mask(pc->lo, pc->hi)) >> pc->lo) << shift;
                shift += pc->hi - pc->lo + 1u;
        }
        return value;
}

/* ---- events/ files ---- */

/* Names longer than PERF_PMU_NAME_MAX - 1 are rejected, not cut short:
 * a cut name could match another field. */
int perf_event_terms_parse(const char *text, struct perf_pmu_event *out)
{
        struct perf_event_term terms[PERF_EVENT_TERMS];
        const char *p = text;
        size_t count = 0;

        if (!text || !out)
                return -EINVAL;
        for (;;) {
                const char *start = p;
                uint64_t value = 1;
                size_t len = 0;

                if (!is_name_start(*p))
                        return -EINVAL;
                while (is_name_char(*p) && len < PERF_PMU_NAME_MAX) {
                        p++;
                        len++;
                }
                if (len == PERF_PMU_NAME_MAX || count == PERF_EVENT_TERMS)
                        return -EINVAL;
                bool asked = false;

                if (*p == '=') {
                        p++;
                        /* "lane=?": perf's parameterised event, the user
                         * gives the value (dwc_pcie's lane events). */
                        if (*p == '?') {
                                p++;
                                value = 0;
                                asked = true;
                        } else if (parse_number(&p, &value)) {
                                return -EINVAL;
                        }
                }
                memcpy(terms[count].name, start, len);
                terms[count].name[len] = '\0';
                terms[count].value = value;
                terms[count].asked = asked;
                count++;
                if (*p != ',')
                        break;
                p++;
                /* The kernel's own strings may end in a comma
                 * ("event=0xff,umask=0x20,"). */
                if (at_end(p))
                        break;
        }
        if (!at_end(p))
                return -EINVAL;
        out->term_count = count;
        memcpy(out->terms, terms, count * sizeof(terms[0]));
        return 0;
}

/* ---- cpumask ---- */

/*
 * One pass over a CPU list: fills at most @max CPUs and returns how many the
 * list holds. Ascending, non-overlapping ranges only, as the kernel's %*pbl
 * prints them.
 */
static int cpu_list_walk(const char *text, int *cpus, size_t max)
{
        const char *p = text;
        int64_t prev = -1;
        size_t total = 0, filled = 0;

        if (at_end(p))
                return 0;
        for (;;) {
                uint64_t lo, hi;

                if (parse_dec(&p, &lo))
                        return -EINVAL;
                hi = lo;
                if (*p == '-') {
                        p++;
                        if (parse_dec(&p, &hi))
                                return -EINVAL;
                }
                if (lo > hi || hi > CPU_ID_MAX || (int64_t)lo <= prev)
                        return -EINVAL;
                /* Ascending order means the first @max CPUs are final as
                 * soon as they are written; the rest is only counted. */
                for (uint64_t c = lo; c <= hi && filled < max; c++)
                        cpus[filled++] = (int)c;
                total += (size_t)(hi - lo + 1);
                prev = (int64_t)hi;
                if (*p != ',')
                        break;
                p++;
        }
        return at_end(p) ? (int)total : -EINVAL;
}

/* Checked whole before anything is written: a bad list leaves @cpus alone. */
int perf_cpu_list_parse(const char *text, int *cpus, size_t max)
{
        int n;

        if (!text || (!cpus && max))
                return -EINVAL;
        n = cpu_list_walk(text, NULL, 0);
        if (n <= 0 || !max)
                return n;
        return cpu_list_walk(text, cpus, max);
}

/* ---- a PMU read from sysfs ---- */

struct perf_pmu {
        char name[PERF_PMU_NAME_MAX];
        uint32_t type;
        int *cpus;
        size_t cpu_count;
        size_t format_count;
        struct perf_format formats[PERF_PMU_MAX_FORMATS];
        size_t event_count, event_cap;
        struct perf_pmu_event *events; /* sorted by name once loaded */
};

/* A name that can go into a path as one component. */
static bool name_ok(const char *name)
{
        size_t len;

        if (!name)
                return false;
        len = strnlen(name, PERF_PMU_NAME_MAX);
        return len > 0 && len < PERF_PMU_NAME_MAX && !strchr(name, '/') && strcmp(name, ".") &&
               strcmp(name, "..");
}

/* @text cut to fit @out, control bytes as '?': file content is untrusted
 * and goes into a log line. */
static const char *excerpt(const char *text, char *out, size_t size)
{
        size_t i = 0;

        for (; text[i] && i + 1 < size; i++)
                out[i] =
                    (unsigned char)text[i] < 0x20 || (unsigned char)text[i] >= 0x7f ? '?' : text[i];
        out[i] = '\0';
        return out;
}

/* One warning per skipped file, naming the PMU and the full path. @sub is
 * "format", "events" or NULL for a file in the PMU directory itself. */
static void warn_file(const struct hw_env *env, const char *pmu, const char *sub, const char *file,
                      const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void warn_file(const struct hw_env *env, const char *pmu, const char *sub, const char *file,
                      const char *fmt, ...)
{
        char problem[256];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(problem, sizeof(problem), fmt, ap);
        va_end(ap);
        hw_logf(env, HW_LOG_WARNING, "perf PMU %s: %s/" DEVICES_DIR "/%s/%s%s%s: %s; skipped", pmu,
                env->sysfs_root, pmu, sub ? sub : "", sub ? "/" : "", file, problem);
}

static ssize_t read_pmu_file(const struct hw_env *env, const char *pmu, const char *sub,
                             const char *file, char *buf, size_t size)
{
        if (sub)
                return hw_read_file(env, HW_SYSFS, buf, size, DEVICES_DIR "/%s/%s/%s", pmu, sub,
                                    file);
        return hw_read_file(env, HW_SYSFS, buf, size, DEVICES_DIR "/%s/%s", pmu, file);
}

/* Keeps listing while nothing failed. */
static int dir_exists(void *ctx, const char *name)
{
        (void)ctx, (void)name;
        return 1; /* one entry is enough: stop */
}

static int load_type(const struct hw_env *env, struct perf_pmu *pmu)
{
        char text[64];
        uint64_t type;

        if (read_pmu_file(env, pmu->name, NULL, "type", text, sizeof(text)) < 0 ||
            parse_u64_text(text, &type) || type > UINT32_MAX)
                return -EBADMSG;
        pmu->type = (uint32_t)type;
        return 0;
}

int perf_pmu_reload_type(const struct hw_env *env, struct perf_pmu *pmu)
{
        char text[64];
        uint64_t type;
        ssize_t n = read_pmu_file(env, pmu->name, NULL, "type", text, sizeof(text));

        if (n < 0)
                return (int)n;
        if (parse_u64_text(text, &type) || type > UINT32_MAX)
                return -EBADMSG;
        pmu->type = (uint32_t)type;
        return 0;
}

/* `cpumask` (uncore PMUs) or `cpus` (hybrid core PMUs); optional, and a bad
 * one only costs the CPU list. */
static int load_cpus(const struct hw_env *env, struct perf_pmu *pmu)
{
        char text[PMU_FILE_MAX];
        const char *file = "cpumask";
        ssize_t n;
        int count;

        n = read_pmu_file(env, pmu->name, NULL, file, text, sizeof(text));
        if (n == -ENOENT) {
                file = "cpus";
                n = read_pmu_file(env, pmu->name, NULL, file, text, sizeof(text));
        }
        if (n == -ENOENT)
                return 0;
        if (n < 0) {
                warn_file(env, pmu->name, NULL, file, "unreadable: %s", strerror((int)-n));
                return 0;
        }
        count = perf_cpu_list_parse(text, NULL, 0);
        if (count < 0) {
                char shown[40];

                warn_file(env, pmu->name, NULL, file, "not a CPU list: \"%s\"",
                          excerpt(text, shown, sizeof(shown)));
                return 0;
        }
        if (!count)
                return 0;
        pmu->cpus = calloc((size_t)count, sizeof(*pmu->cpus));
        if (!pmu->cpus)
                return -ENOMEM;
        pmu->cpu_count = (size_t)perf_cpu_list_parse(text, pmu->cpus, (size_t)count);
        return 0;
}

int perf_pmu_reload_cpus(const struct hw_env *env, struct perf_pmu *pmu)
{
        int *old = pmu->cpus;
        size_t old_count = pmu->cpu_count;
        int ret;

        pmu->cpus = NULL;
        pmu->cpu_count = 0;
        ret = load_cpus(env, pmu);
        if (ret) {
                pmu->cpus = old;
                pmu->cpu_count = old_count;
                return ret;
        }
        free(old);
        return 0;
}

/* 0 also when the file was skipped; only the limit fails the load. */
static int load_format(const struct hw_env *env, struct perf_pmu *pmu, const char *field)
{
        char text[PMU_FILE_MAX], shown[40];
        struct perf_format fmt;
        ssize_t n;

        if (!name_ok(field)) {
                warn_file(env, pmu->name, "format", field, "name longer than %d bytes",
                          PERF_PMU_NAME_MAX - 1);
                return 0;
        }
        n = read_pmu_file(env, pmu->name, "format", field, text, sizeof(text));
        if (n < 0) {
                warn_file(env, pmu->name, "format", field, "unreadable: %s", strerror((int)-n));
                return 0;
        }
        memset(&fmt, 0, sizeof(fmt));
        if (perf_format_parse(text, &fmt)) {
                warn_file(env, pmu->name, "format", field, "not a format: \"%s\"",
                          excerpt(text, shown, sizeof(shown)));
                return 0;
        }
        if (pmu->format_count == PERF_PMU_MAX_FORMATS)
                return -E2BIG;
        snprintf(fmt.name, sizeof(fmt.name), "%s", field);
        pmu->formats[pmu->format_count++] = fmt;
        return 0;
}

/* events/<name>.<suffix> files describe <name>; they are not events. */
static bool is_event_sibling(const char *name)
{
        static const char *const suffixes[] = {".scale", ".unit", ".per-pkg", ".snapshot"};
        size_t len = strlen(name);

        for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
                size_t slen = strlen(suffixes[i]);

                if (len > slen && !strcmp(name + len - slen, suffixes[i]))
                        return true;
        }
        return false;
}

/*
 * A positive decimal multiplier such as "6.103515625e-5". strtod_l with the
 * C locale: the daemon's locale may use a decimal comma. Hex floats, inf
 * and nan are kept out by the character check.
 */
static int parse_scale(const char *text, double *scale)
{
        locale_t c_locale;
        char *end;
        double v;

        for (const char *q = text; *q && *q != '\n'; q++)
                if (!is_digit(*q) && *q != '.' && *q != 'e' && *q != 'E' && *q != '+' && *q != '-')
                        return -EINVAL;
        if (!is_digit(text[0]) && text[0] != '.')
                return -EINVAL;
        c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
        if (!c_locale)
                return -ENOMEM;
        errno = 0;
        v = strtod_l(text, &end, c_locale);
        freelocale(c_locale);
        if (errno || end == text || !at_end(end) || !isfinite(v) || v <= 0.0)
                return -EINVAL;
        *scale = v;
        return 0;
}

/* One line of printable ASCII that fits, newline dropped. */
static int parse_unit(const char *text, char *unit, size_t size)
{
        size_t len = 0;

        while (text[len] && text[len] != '\n') {
                if ((unsigned char)text[len] < 0x20 || (unsigned char)text[len] >= 0x7f ||
                    len + 1 >= size)
                        return -EINVAL;
                len++;
        }
        if (!at_end(text + len))
                return -EINVAL;
        memcpy(unit, text, len);
        unit[len] = '\0';
        return 0;
}

/* 1 with the text in @buf when events/<event>.<suffix> exists, 0 when it
 * does not, negative (after a warning) when it cannot be read. */
static int read_sibling(const struct hw_env *env, const struct perf_pmu *pmu, const char *event,
                        const char *suffix, char *buf, size_t size)
{
        char file[PERF_PMU_NAME_MAX + 16];
        ssize_t n;

        snprintf(file, sizeof(file), "%s.%s", event, suffix);
        n = read_pmu_file(env, pmu->name, "events", file, buf, size);
        if (n == -ENOENT)
                return 0;
        if (n < 0) {
                warn_file(env, pmu->name, "events", file, "unreadable: %s", strerror((int)-n));
                return (int)n;
        }
        return 1;
}

/*
 * .scale, .unit, .per-pkg and .snapshot of @ev. A bad .scale or .unit costs
 * the whole event: counting it unscaled would report wrong numbers.
 * .per-pkg and .snapshot count by their presence, as perf reads them.
 */
static int load_event_siblings(const struct hw_env *env, const struct perf_pmu *pmu,
                               struct perf_pmu_event *ev)
{
        char text[PMU_FILE_MAX], file[PERF_PMU_NAME_MAX + 16], shown[40];
        int r;

        r = read_sibling(env, pmu, ev->name, "scale", text, sizeof(text));
        if (r > 0 && parse_scale(text, &ev->scale)) {
                snprintf(file, sizeof(file), "%s.scale", ev->name);
                warn_file(env, pmu->name, "events", file, "not a positive decimal: \"%s\"",
                          excerpt(text, shown, sizeof(shown)));
                return -EINVAL;
        }
        if (r < 0)
                return r;
        r = read_sibling(env, pmu, ev->name, "unit", text, sizeof(text));
        if (r > 0 && parse_unit(text, ev->unit, sizeof(ev->unit))) {
                snprintf(file, sizeof(file), "%s.unit", ev->name);
                warn_file(env, pmu->name, "events", file, "not a unit of at most %d characters",
                          PERF_PMU_UNIT_MAX - 1);
                return -EINVAL;
        }
        if (r < 0)
                return r;
        r = read_sibling(env, pmu, ev->name, "per-pkg", text, sizeof(text));
        if (r < 0)
                return r;
        ev->per_pkg = r > 0;
        r = read_sibling(env, pmu, ev->name, "snapshot", text, sizeof(text));
        if (r < 0)
                return r;
        ev->snapshot = r > 0;
        return 0;
}

static int add_event(struct perf_pmu *pmu, const struct perf_pmu_event *ev)
{
        if (pmu->event_count == PERF_PMU_MAX_EVENTS)
                return -E2BIG;
        if (pmu->event_count == pmu->event_cap) {
                size_t cap = pmu->event_cap ? pmu->event_cap * 2 : 32;
                struct perf_pmu_event *grown;

                if (cap > PERF_PMU_MAX_EVENTS)
                        cap = PERF_PMU_MAX_EVENTS;
                grown = realloc(pmu->events, cap * sizeof(*grown));
                if (!grown)
                        return -ENOMEM;
                pmu->events = grown;
                pmu->event_cap = cap;
        }
        pmu->events[pmu->event_count++] = *ev;
        return 0;
}

/* 0 also when the file was skipped; only the limit or memory fail the load. */
static int load_event(const struct hw_env *env, struct perf_pmu *pmu, const char *name)
{
        char text[PMU_FILE_MAX], shown[40];
        struct perf_pmu_event ev;
        ssize_t n;

        if (is_event_sibling(name))
                return 0; /* read with its event */
        if (!name_ok(name)) {
                warn_file(env, pmu->name, "events", name, "name longer than %d bytes",
                          PERF_PMU_NAME_MAX - 1);
                return 0;
        }
        n = read_pmu_file(env, pmu->name, "events", name, text, sizeof(text));
        if (n < 0) {
                warn_file(env, pmu->name, "events", name, "unreadable: %s", strerror((int)-n));
                return 0;
        }
        memset(&ev, 0, sizeof(ev));
        if (perf_event_terms_parse(text, &ev)) {
                warn_file(env, pmu->name, "events", name, "not an event term list: \"%s\"",
                          excerpt(text, shown, sizeof(shown)));
                return 0;
        }
        snprintf(ev.name, sizeof(ev.name), "%s", name);
        ev.scale = 1.0;
        if (load_event_siblings(env, pmu, &ev))
                return 0;
        return add_event(pmu, &ev);
}

/* Every entry of format/ or events/ except dot files, through @load. A
 * missing directory is an empty one. */
struct load_ctx {
        const struct hw_env *env;
        struct perf_pmu *pmu;
        int (*load)(const struct hw_env *, struct perf_pmu *, const char *);
        int err; /* the loader's failure, told apart from the listing's */
};

static int load_entry(void *ctx, const char *name)
{
        struct load_ctx *lc = ctx;

        if (name[0] == '.')
                return 0;
        lc->err = lc->load(lc->env, lc->pmu, name);
        return lc->err ? 1 : 0;
}

static int load_dir(const struct hw_env *env, struct perf_pmu *pmu, const char *sub,
                    int (*load)(const struct hw_env *, struct perf_pmu *, const char *))
{
        struct load_ctx lc = {env, pmu, load, 0};
        int err = hw_list_dir(env, HW_SYSFS, load_entry, &lc, DEVICES_DIR "/%s/%s", pmu->name, sub);

        if (lc.err)
                return lc.err;
        if (err && err != -ENOENT)
                warn_file(env, pmu->name, NULL, sub, "cannot list: %s", strerror(-err));
        return 0;
}

static int cmp_format(const void *a, const void *b)
{
        return strcmp(((const struct perf_format *)a)->name, ((const struct perf_format *)b)->name);
}

static int cmp_event(const void *a, const void *b)
{
        return strcmp(((const struct perf_pmu_event *)a)->name,
                      ((const struct perf_pmu_event *)b)->name);
}

/*
 * Beyond the documented results: -EINVAL for a NULL argument or a @name that
 * cannot be one path component, and the errno of opendir() when the PMU
 * directory exists but cannot be listed (e.g. -EACCES).
 */
int perf_pmu_load(const struct hw_env *env, const char *name, struct perf_pmu **out)
{
        struct perf_pmu *pmu;
        int err;

        if (!out)
                return -EINVAL;
        *out = NULL;
        if (!env || !name_ok(name))
                return -EINVAL;
        /* The PMU's directory must exist and be listable (1: it has an
         * entry, 0: empty). */
        err = hw_list_dir(env, HW_SYSFS, dir_exists, NULL, DEVICES_DIR "/%s", name);
        if (err < 0)
                return err == -ENOTDIR ? -ENOENT : err;

        pmu = calloc(1, sizeof(*pmu));
        if (!pmu)
                return -ENOMEM;
        snprintf(pmu->name, sizeof(pmu->name), "%s", name);
        err = load_type(env, pmu);
        if (!err)
                err = load_cpus(env, pmu);
        if (!err)
                err = load_dir(env, pmu, "format", load_format);
        if (!err)
                err = load_dir(env, pmu, "events", load_event);
        if (err) {
                perf_pmu_free(pmu);
                return err;
        }
        /* readdir() order is arbitrary; sorted tables make _at() stable. */
        qsort(pmu->formats, pmu->format_count, sizeof(pmu->formats[0]), cmp_format);
        if (pmu->event_count)
                qsort(pmu->events, pmu->event_count, sizeof(pmu->events[0]), cmp_event);
        *out = pmu;
        return 0;
}

void perf_pmu_free(struct perf_pmu *pmu)
{
        if (!pmu)
                return;
        free(pmu->cpus);
        free(pmu->events);
        free(pmu);
}

static int cmp_name(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

struct list_ctx {
        const char *prefix;
        size_t plen;
        char **list;
        size_t count, cap;
};

static int list_entry(void *ctx, const char *name)
{
        struct list_ctx *lc = ctx;

        if (name[0] == '.' || strncmp(name, lc->prefix, lc->plen) || !name_ok(name))
                return 0;
        /* Room for this name and the closing NULL. */
        if (lc->count + 2 > lc->cap) {
                size_t grown_cap = lc->cap ? lc->cap * 2 : 16;
                char **grown;

                if (grown_cap > INT_MAX)
                        return -E2BIG;
                grown = realloc(lc->list, grown_cap * sizeof(*grown));
                if (!grown)
                        return -ENOMEM;
                lc->list = grown;
                lc->cap = grown_cap;
        }
        lc->list[lc->count] = strdup(name);
        if (!lc->list[lc->count])
                return -ENOMEM;
        lc->count++;
        return 0;
}

/* Names that could not be loaded (too long) are left out. */
int perf_pmu_list(const struct hw_env *env, const char *prefix, char ***names)
{
        struct list_ctx lc = {0};
        char **list;
        size_t count;
        int err;

        if (!names)
                return -EINVAL;
        *names = NULL;
        if (!env)
                return -EINVAL;
        lc.prefix = prefix ? prefix : "";
        lc.plen = strlen(lc.prefix);
        err = hw_list_dir(env, HW_SYSFS, list_entry, &lc, "%s", DEVICES_DIR);
        list = lc.list;
        count = lc.count;
        if (!err && !list) {
                list = calloc(1, sizeof(*list));
                if (!list)
                        err = -ENOMEM;
        }
        if (err) {
                for (size_t i = 0; i < count; i++)
                        free(list[i]);
                free(list);
                return err;
        }
        list[count] = NULL;
        qsort(list, count, sizeof(*list), cmp_name);
        *names = list;
        return (int)count;
}

void perf_pmu_list_free(char **names)
{
        if (!names)
                return;
        for (char **p = names; *p; p++)
                free(*p);
        free(names);
}

const char *perf_pmu_name(const struct perf_pmu *pmu)
{
        return pmu->name;
}

uint32_t perf_pmu_type(const struct perf_pmu *pmu)
{
        return pmu->type;
}

size_t perf_pmu_cpu_count(const struct perf_pmu *pmu)
{
        return pmu->cpu_count;
}

int perf_pmu_cpu(const struct perf_pmu *pmu, size_t i)
{
        return i < pmu->cpu_count ? pmu->cpus[i] : -1;
}

const struct perf_format *perf_pmu_format(const struct perf_pmu *pmu, const char *field)
{
        for (size_t i = 0; i < pmu->format_count; i++)
                if (!strcmp(pmu->formats[i].name, field))
                        return &pmu->formats[i];
        return NULL;
}

size_t perf_pmu_format_count(const struct perf_pmu *pmu)
{
        return pmu->format_count;
}

const struct perf_format *perf_pmu_format_at(const struct perf_pmu *pmu, size_t i)
{
        return i < pmu->format_count ? &pmu->formats[i] : NULL;
}

const struct perf_pmu_event *perf_pmu_event(const struct perf_pmu *pmu, const char *event)
{
        for (size_t i = 0; i < pmu->event_count; i++)
                if (!strcmp(pmu->events[i].name, event))
                        return &pmu->events[i];
        return NULL;
}

size_t perf_pmu_event_count(const struct perf_pmu *pmu)
{
        return pmu->event_count;
}

const struct perf_pmu_event *perf_pmu_event_at(const struct perf_pmu *pmu, size_t i)
{
        return i < pmu->event_count ? &pmu->events[i] : NULL;
}

int perf_pmu_set(const struct perf_pmu *pmu, struct perf_event_attr *attr, const char *field,
                 uint64_t value)
{
        const struct perf_format *fmt = perf_pmu_format(pmu, field);

        if (!fmt)
                return -ENOENT;
        return perf_format_apply(fmt, value, attr);
}

/* A term named after an attr word sets that word whole, before or after
 * the field terms in the order the event lists them (perf does the same). */
static bool term_word(const char *name, enum perf_config_word *word)
{
        static const struct {
                const char *name;
                enum perf_config_word word;
        } words[] = {
            {"config", PERF_CONFIG},
            {"config1", PERF_CONFIG1},
            {"config2", PERF_CONFIG2},
            {"config3", PERF_CONFIG3},
        };

        for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
                if (!strcmp(name, words[i].name)) {
                        *word = words[i].word;
                        return true;
                }
        }
        return false;
}

/* Also -EOPNOTSUPP: a config3 term or field on a build without config3. */
int perf_pmu_event_attr(const struct perf_pmu *pmu, const char *event, struct perf_event_attr *attr)
{
        const struct perf_pmu_event *ev = perf_pmu_event(pmu, event);

        if (!ev)
                return -ENOENT;
        memset(attr, 0, sizeof(*attr));
        attr->size = sizeof(*attr);
        attr->type = pmu->type;
        for (size_t i = 0; i < ev->term_count; i++) {
                const struct perf_event_term *t = &ev->terms[i];
                enum perf_config_word word;
                int err;

                if (term_word(t->name, &word)) {
                        __u64 *w = attr_word(attr, word);

                        if (!w)
                                return -EOPNOTSUPP;
                        *w = t->value;
                        continue;
                }
                err = perf_pmu_set(pmu, attr, t->name, t->value);
                if (err)
                        return err;
        }
        return 0;
}

/* Read errors other than a missing file come back as they are; a value
 * that does not fit the buffer is not a number. */
int perf_pmu_read_u64(const struct hw_env *env, const struct perf_pmu *pmu, const char *file,
                      uint64_t *value)
{
        char text[128];
        ssize_t n;

        if (!name_ok(file))
                return -EINVAL;
        n = read_pmu_file(env, pmu->name, NULL, file, text, sizeof(text));
        if (n == -EFBIG)
                return -EBADMSG;
        if (n < 0)
                return (int)n;
        return parse_u64_text(text, value) ? -EBADMSG : 0;
}
