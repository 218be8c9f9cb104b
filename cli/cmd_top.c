// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cmd_top.c - `pciescope top`: a live full-screen view of every Root Port
 * (ncurses), refreshed each interval.
 *
 * Thin glue: the engine runs the monitor and the PMU sources in manual
 * mode on this thread (as `pciescope pmu` does), top_model.c turns their
 * samples into rows, and this file draws them and reads the keys. Between
 * two refreshes it waits in poll() on the terminal, so keys are answered
 * at once; SIGINT and SIGTERM end it like `q`, with the terminal restored.
 */
#define _GNU_SOURCE
#include <curses.h>
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "top_model.h"

/* ---- messages of the engine while the screen is ours ---- */

/* The engine's warnings cannot go to stderr under curses: the newest is
 * shown in the status line, and all of them are printed after the screen
 * is given back. */
#define TOP_LOG_LINES 32
static char top_log_lines[TOP_LOG_LINES][256];
static size_t top_log_count;

static void top_log(void *ctx, enum hw_log_level level, const char *msg)
{
        (void)ctx;
        if (level > HW_LOG_WARNING)
                return;
        snprintf(top_log_lines[top_log_count % TOP_LOG_LINES], sizeof(top_log_lines[0]), "%s: %s",
                 level == HW_LOG_ERROR ? "error" : "warning", msg);
        top_log_count++;
}

int cmd_top_prepare(struct cli_opts *opts, struct engine_host *host)
{
        host->log = top_log;
        opts->cfg.pmu.top_talkers = 1000;
        return 0;
}

static void top_log_flush(void)
{
        size_t first = top_log_count > TOP_LOG_LINES ? top_log_count - TOP_LOG_LINES : 0;

        for (size_t i = first; i < top_log_count; i++)
                fprintf(stderr, "pciescope: %s\n", top_log_lines[i % TOP_LOG_LINES]);
}

/* ---- state of the view ---- */

static volatile sig_atomic_t top_signal;

static void on_signal(int sig)
{
        top_signal = sig;
}

struct view {
        const struct cli_opts *opts;
        struct engine *e;
        struct top_model *model;
        size_t pmu_units, pmu_started;
        unsigned int refreshes;
        bool help;
        /* Expanded ports and the selected row, by id: they stay through a
         * refresh and a new order. */
        char (*expanded)[TOP_ID_LEN];
        size_t expanded_count;
        char selected[TOP_ID_LEN];
        size_t scroll;
};

/* A line of the table: a row, or a function below an expanded port. */
struct line {
        const struct top_row *row;
        const struct top_function *fn; /* NULL: the row itself */
};

static bool is_expanded(const struct view *v, const char *id)
{
        for (size_t i = 0; i < v->expanded_count; i++)
                if (!strcmp(v->expanded[i], id))
                        return true;
        return false;
}

static void set_expanded(struct view *v, const char *id, bool on)
{
        for (size_t i = 0; i < v->expanded_count; i++)
                if (!strcmp(v->expanded[i], id)) {
                        if (!on)
                                memmove(v->expanded[i], v->expanded[i + 1],
                                        (v->expanded_count - i - 1) * sizeof(v->expanded[0]));
                        v->expanded_count -= !on;
                        return;
                }
        if (on) {
                char(*grown)[TOP_ID_LEN] =
                    realloc(v->expanded, (v->expanded_count + 1) * sizeof(v->expanded[0]));

                if (!grown)
                        return; /* not expanded: the view goes on */
                v->expanded = grown;
                snprintf(v->expanded[v->expanded_count++], TOP_ID_LEN, "%s", id);
        }
}

/* 'e': expand every port with functions below it, or, when all are,
 * collapse them all. */
static void toggle_all(struct view *v)
{
        size_t n = top_model_row_count(v->model);
        bool all = true;

        for (size_t i = 0; i < n; i++) {
                const struct top_row *r = top_model_row(v->model, i);

                if (r->function_count && !is_expanded(v, r->id))
                        all = false;
        }
        for (size_t i = 0; i < n; i++) {
                const struct top_row *r = top_model_row(v->model, i);

                if (r->function_count)
                        set_expanded(v, r->id, !all);
        }
}

/* The table's lines in order; returns their count (@lines may be NULL). */
static size_t table_lines(const struct view *v, struct line *lines)
{
        size_t n = 0;

        for (size_t i = 0; i < top_model_row_count(v->model); i++) {
                const struct top_row *r = top_model_row(v->model, i);

                if (lines)
                        lines[n] = (struct line){r, NULL};
                n++;
                if (!is_expanded(v, r->id))
                        continue;
                for (size_t k = 0; k < r->function_count; k++) {
                        if (lines)
                                lines[n] = (struct line){
                                    r, top_model_function(v->model, r->first_function + k)};
                        n++;
                }
        }
        return n;
}

static size_t selected_index(const struct view *v)
{
        for (size_t i = 0; i < top_model_row_count(v->model); i++)
                if (!strcmp(top_model_row(v->model, i)->id, v->selected))
                        return i;
        return 0;
}

static void select_index(struct view *v, long i)
{
        long n = (long)top_model_row_count(v->model);

        if (!n)
                return;
        i = i < 0 ? 0 : i >= n ? n - 1 : i;
        snprintf(v->selected, sizeof(v->selected), "%s", top_model_row(v->model, (size_t)i)->id);
}

/* ---- drawing ---- */

/* Columns, left to right; what does not fit the width is cut. */
#define COL_ID    14
#define COL_LINK  9
#define COL_FLAGS 15
#define COL_RATE  6
#define COL_TLP   5
#define COL_LAT   4
#define COL_AER   9
#define COL_GROUP 16
#define BAR_MIN   6
#define BAR_MAX   20

/* The bars' width for this terminal: what is left of COLS after the other
 * columns (160 columns show every one, the PMU's name included). */
static int bar_width(void)
{
        int fixed = COL_ID + 1 + COL_LINK + 1 + COL_FLAGS + 1 + 2 * (COL_RATE + 1) +
                    6 * (COL_TLP + 1) + 3 * (COL_LAT + 1) + COL_AER + 1 + COL_GROUP;
        int w = (COLS - fixed) / 2 - 3;

        return w < BAR_MIN ? BAR_MIN : w > BAR_MAX ? BAR_MAX : w;
}

static void append(char *line, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void append(char *line, size_t len, const char *fmt, ...)
{
        size_t used = strlen(line);
        va_list ap;

        if (used >= len - 1)
                return;
        va_start(ap, fmt);
        vsnprintf(line + used, len - used, fmt, ap);
        va_end(ap);
}

/* "[####....40%]": the bar with its percentage at the right end, or "-"
 * in the same width. */
static void append_bar(char *line, size_t len, double ratio, int width)
{
        char bar[BAR_MAX + 8], pct[8];
        int fill, n;

        if (isnan(ratio)) {
                append(line, len, "%-*s ", width + 2, "-");
                return;
        }
        fill = (int)lround(ratio * width);
        fill = fill < 0 ? 0 : fill > width ? width : fill;
        memset(bar, '#', (size_t)fill);
        memset(bar + fill, '.', (size_t)(width - fill));
        n = snprintf(pct, sizeof(pct), "%.0f%%", ratio * 100);
        if (n > 0 && n <= width)
                memcpy(bar + width - n, pct, (size_t)n);
        bar[width] = '\0';
        append(line, len, "[%s] ", bar);
}

/* Nanoseconds in 4 characters: "1050", "12u" (microseconds), "-". */
static void append_latency(char *line, size_t len, double seconds)
{
        double ns = seconds * 1e9;

        if (isnan(seconds) || ns < 0)
                append(line, len, "%*s ", COL_LAT, "-");
        else if (ns < 9999.5)
                append(line, len, "%*.0f ", COL_LAT, ns);
        else if (ns < 999.5e3)
                append(line, len, "%*.0fu", COL_LAT - 1, ns / 1e3);
        else
                append(line, len, "%*.0fm", COL_LAT - 1, ns / 1e6);
}

static void append_rate(char *line, size_t len, double v, int width)
{
        char buf[16];

        top_format_rate(buf, sizeof(buf), v);
        append(line, len, "%*s ", width, buf);
}

static void link_text(char *buf, size_t len, const struct top_link *l)
{
        if (!l->known)
                snprintf(buf, len, "-");
        else if (!l->up)
                snprintf(buf, len, "down");
        else
                snprintf(buf, len, "%gGT x%d", l->speed / 1e9, l->width);
}

/* "DOWNTRAINED,MPS": the link below what both ends support, an mps_*
 * audit finding (MPS above the partner's or MPSS, or below the path's),
 * or an mrrs_* one. */
static void flags_text(char *buf, size_t len, const struct top_link *l, bool mps,
                       const char *finding)
{
        snprintf(buf, len, "%s%s%s%s", l->downtrained ? "DOWNTRAINED" : "",
                 l->downtrained && (mps || *finding) ? "," : "", mps ? "MPS" : "",
                 !mps && *finding ? "MRRS" : "");
        if (!*buf)
                snprintf(buf, len, "-");
}

static void aer_text(char *buf, size_t len, const struct top_aer *a)
{
        if (!a->known || !a->delta_known)
                snprintf(buf, len, "-");
        else
                snprintf(buf, len, "%llu/%llu/%llu", (unsigned long long)a->delta[TOP_AER_COR],
                         (unsigned long long)a->delta[TOP_AER_NONFATAL],
                         (unsigned long long)a->delta[TOP_AER_FATAL]);
}

static void header_line(char *line, size_t len, int bar)
{
        line[0] = '\0';
        append(line, len, "%-*s %-*s %-*s ", COL_ID, "  PORT", COL_LINK, "LINK", COL_FLAGS,
               "FLAGS");
        append(line, len, "%-*s %-*s ", bar + 2, "RX UTIL", bar + 2, "TX UTIL");
        append(line, len, "%*s %*s ", COL_RATE, "RX B/s", COL_RATE, "TX B/s");
        append(line, len, "%*s %*s %*s ", COL_TLP, "rxMWr", COL_TLP, "rxMRd", COL_TLP, "rxCpl");
        append(line, len, "%*s %*s %*s ", COL_TLP, "txMWr", COL_TLP, "txMRd", COL_TLP, "txCpl");
        append(line, len, "%*s %*s %*s ", COL_LAT, "wrNs", COL_LAT, "rdNs", COL_LAT, "txNs");
        append(line, len, "%-*s %s", COL_AER, "AER c/n/f", "PMU / DEVICE");
}

static void row_line(char *line, size_t len, const struct view *v, const struct top_row *r, int bar)
{
        char link[32], flags[48], aer[48];
        const char *mark = !r->function_count ? " " : is_expanded(v, r->id) ? "-" : "+";

        line[0] = '\0';
        link_text(link, sizeof(link), &r->link);
        flags_text(flags, sizeof(flags), &r->link, r->mps_finding, r->finding);
        aer_text(aer, sizeof(aer), &r->aer);
        append(line, len, "%s %-*s %-*s %-*s ", mark, COL_ID - 2, r->id, COL_LINK, link, COL_FLAGS,
               flags);
        append_bar(line, len, r->util[TOP_RX], bar);
        append_bar(line, len, r->util[TOP_TX], bar);
        append_rate(line, len, top_row_bandwidth(r, TOP_RX), COL_RATE);
        append_rate(line, len, top_row_bandwidth(r, TOP_TX), COL_RATE);
        for (int d = 0; d < TOP_DIRS; d++)
                for (int t = 0; t < TOP_TLP_ALL; t++)
                        append_rate(line, len, r->bw[d][t], COL_TLP);
        for (int i = 0; i < TOP_LATS; i++)
                append_latency(line, len, r->latency[i]);
        append(line, len, "%-*s %s", COL_AER, aer,
               *r->group                             ? r->group
               : top_model_counts(v->model).unmapped ? "(stack unmapped)"
                                                     : "(no PMU)");
}

static void function_line(char *line, size_t len, const struct top_function *f, int bar)
{
        char link[32], flags[48], aer[48];
        /* "`-01:00.0": the domain is the port's, said on its row. */
        const char *short_bdf = strchr(f->bdf, ':') ? strchr(f->bdf, ':') + 1 : f->bdf;

        line[0] = '\0';
        link_text(link, sizeof(link), &f->link);
        flags_text(flags, sizeof(flags), &f->link, f->mps_finding, f->finding);
        aer_text(aer, sizeof(aer), &f->aer);
        append(line, len, "   `-%-*s %-*s %-*s ", COL_ID - 5, short_bdf, COL_LINK, link, COL_FLAGS,
               flags);
        append(line, len, "%-*s %-*s ", bar + 2, "", bar + 2, "");
        append_rate(line, len, f->bw[TOP_RX], COL_RATE);
        append_rate(line, len, f->bw[TOP_TX], COL_RATE);
        append(line, len, "%*s", 2 * (3 * (COL_TLP + 1)) + 3 * (COL_LAT + 1), "");
        append(line, len, "%-*s %s %s", COL_AER, aer, f->type, f->name);
}

/* The second line: why a column may be empty, or the engine's news. */
static void status_text(char *buf, size_t len, const struct view *v)
{
        struct top_counts c = top_model_counts(v->model);

        if (!v->pmu_units && v->opts->cfg.pci_dump)
                snprintf(buf, len,
                         "no bandwidth, utilisation or latency: an lspci dump has no "
                         "PMU to count with; link state and audit only");
        else if (!v->pmu_units)
                snprintf(buf, len,
                         "no bandwidth, utilisation or latency: this machine has no PCIe PMU that "
                         "pciescope reads (hisi_pcie*, uncore_iio_free_running*); link state and "
                         "AER only");
        else if (!v->pmu_started)
                snprintf(buf, len,
                         "no bandwidth: none of the %zu PMUs could be started (see the "
                         "messages after quitting)",
                         v->pmu_units);
        else if (c.root_complexes && !c.unmapped)
                snprintf(buf, len,
                         "%zu IO root complexes of the AMD data fabric, counted per root complex "
                         "and not per Root Port: rows sN ioM (AMDDFRootComplexBus maps one for "
                         "its utilisation)",
                         c.root_complexes);
        else if (c.unmapped)
                snprintf(buf, len,
                         "%zu IIO stack parts (%zu idle, hidden) that the kernel maps to no Root "
                         "Port: rows sN iioM pP; --iio-stack-bus PMU,SOCKET,BUS maps a stack",
                         c.unmapped, c.idle_unmapped);
        else if (!c.measured && v->refreshes < 2)
                snprintf(buf, len, "counting: rates after the first interval");
        else
                snprintf(buf, len, "%zu of %zu Root Ports counted by %zu PMUs", c.measured, c.ports,
                         v->pmu_units);
        if (top_log_count) {
                size_t used = strlen(buf);

                snprintf(buf + used, len - used, " | %s",
                         top_log_lines[(top_log_count - 1) % TOP_LOG_LINES]);
        }
}

static const char *const help_text[] = {
    "pciescope top: one row per Root Port, refreshed every interval",
    "",
    "  q             quit (also Ctrl-C)",
    "  ?  h          this help; any key closes it",
    "  s             next sort key: port, rx, tx, latency, errors",
    "  p r t l a     sort by port, rx, tx, latency, AER errors",
    "  Enter Space   show/hide the functions below the selected port",
    "  e             show/hide the functions below every port",
    "  Up Down j k   select a port; PgUp PgDn Home End",
    "",
    "RX/TX UTIL  link utilisation per direction (raw capacity)",
    "RX/TX B/s   bandwidth; rxMWr.. by TLP type (HiSilicon PMU)",
    "wr/rd/txNs  latency of rx MWr, rx MRd, tx MRd in ns",
    "FLAGS       DOWNTRAINED link, MPS or MRRS audit finding",
    "AER c/n/f   correctable/nonfatal/fatal errors this interval",
    "            (the port and every function below it)",
};

static void draw_help(void)
{
        int rows = (int)(sizeof(help_text) / sizeof(help_text[0])) + 2, cols = 70;
        int y = (LINES - rows) / 2, x = (COLS - cols) / 2;
        WINDOW *w;

        if (y < 0 || x < 0) {
                y = y < 0 ? 0 : y;
                x = x < 0 ? 0 : x;
        }
        w = newwin(rows < LINES ? rows : LINES, cols < COLS ? cols : COLS, y, x);
        if (!w)
                return;
        werase(w);
        box(w, '|', '-'); /* ASCII: the same in every terminal and capture */
        for (size_t i = 0; i < sizeof(help_text) / sizeof(help_text[0]); i++)
                mvwaddnstr(w, (int)i + 1, 2, help_text[i], cols - 4);
        wnoutrefresh(w);
        delwin(w);
}

static void draw(struct view *v)
{
        char line[1024], text[512], when[32];
        int bar = bar_width(), body = LINES - 4;
        size_t n = table_lines(v, NULL), sel_row = selected_index(v), sel_line = 0;
        struct line *lines = calloc(n ? n : 1, sizeof(*lines));
        struct top_counts c = top_model_counts(v->model);
        time_t now = time(NULL);
        struct tm tm;

        erase();
        strftime(when, sizeof(when), "%H:%M:%S", localtime_r(&now, &tm));
        if (engine_simulated(v->e))
                snprintf(text, sizeof(text),
                         "SIMULATED machine %s (drivers of Linux %s): not this machine's hardware",
                         engine_simulated(v->e), engine_simulated_kernel(v->e));
        else
                snprintf(text, sizeof(text), "%s",
                         v->opts->cfg.pci_dump ? v->opts->cfg.pci_dump : "this machine");
        snprintf(line, sizeof(line),
                 "pciescope top | %s | every %g s | sort: %s | %zu Root Ports | %s", text,
                 v->opts->interval, top_sort_name(top_model_sort_key(v->model)), c.ports, when);
        attron(A_BOLD);
        mvaddnstr(0, 0, line, COLS);
        attroff(A_BOLD);
        status_text(text, sizeof(text), v);
        mvaddnstr(1, 0, text, COLS);
        header_line(line, sizeof(line), bar);
        attron(A_REVERSE);
        mvhline(2, 0, ' ', COLS);
        mvaddnstr(2, 0, line, COLS);
        attroff(A_REVERSE);

        if (lines) {
                table_lines(v, lines);
                for (size_t i = 0; i < n; i++)
                        if (!lines[i].fn && lines[i].row == top_model_row(v->model, sel_row))
                                sel_line = i;
        }
        /* Keep the selected row on screen. */
        if (body < 1)
                body = 1;
        if (sel_line < v->scroll)
                v->scroll = sel_line;
        else if (sel_line >= v->scroll + (size_t)body)
                v->scroll = sel_line - (size_t)body + 1;
        if (v->scroll > n)
                v->scroll = 0;
        for (size_t i = v->scroll; lines && i < n && i < v->scroll + (size_t)body; i++) {
                int y = 3 + (int)(i - v->scroll);

                if (lines[i].fn)
                        function_line(line, sizeof(line), lines[i].fn, bar);
                else
                        row_line(line, sizeof(line), v, lines[i].row, bar);
                if (i == sel_line && !lines[i].fn)
                        attron(A_REVERSE);
                mvaddnstr(y, 0, line, COLS);
                if (i == sel_line && !lines[i].fn)
                        attroff(A_REVERSE);
        }
        if (!n)
                mvaddnstr(3, 0,
                          "  no Root Port: no PCIe function of this machine says it is one "
                          "(a VM without PCIe, or no access to the PCI devices)",
                          COLS);
        snprintf(line, sizeof(line),
                 "q quit  ? help  s sort  Enter expand  e expand all  Up/Down select  "
                 "| lines %zu-%zu of %zu",
                 n ? v->scroll + 1 : 0, v->scroll + (size_t)body < n ? v->scroll + (size_t)body : n,
                 n);
        mvaddnstr(LINES - 1, 0, line, COLS);
        free(lines);
        wnoutrefresh(stdscr);
        if (v->help)
                draw_help();
        doupdate();
}

/* ---- the loop ---- */

static void top_sink(void *ctx, const struct engine_unit *unit, const struct sample_set *set)
{
        struct view *v = ctx;

        /* The engine's own samples (the simulation's info) are in the
         * header already. */
        if (unit && top_model_update(v->model, engine_unit_name(unit), set))
                top_log(NULL, HW_LOG_WARNING, "out of memory: a unit's interval is not shown");
}

static void refresh_data(struct view *v)
{
        double now = cli_now();

        while (engine_next_due(v->e) <= now)
                engine_advance(v->e, now);
        engine_read(v->e, top_sink, v);
        if (top_model_build(v->model))
                top_log(NULL, HW_LOG_WARNING, "out of memory: the rows were not rebuilt");
        v->refreshes++;
}

/* One key; returns false to quit. */
static bool key(struct view *v, int ch)
{
        static const char sort_keys[] = "prtla";
        long sel = (long)selected_index(v);
        const char *k;

        if (v->help && ch != KEY_RESIZE) {
                v->help = false;
                return ch != 'q' && ch != 'Q';
        }
        switch (ch) {
        case 'q':
        case 'Q':
                return false;
        case '?':
        case 'h':
                v->help = true;
                break;
        case 's':
                top_model_sort(v->model, (top_model_sort_key(v->model) + 1) % TOP_SORT_COUNT);
                break;
        case 'e':
                toggle_all(v);
                break;
        case '\n':
        case '\r':
        case ' ':
        case KEY_ENTER:
                set_expanded(v, v->selected, !is_expanded(v, v->selected));
                break;
        case KEY_UP:
        case 'k':
                select_index(v, sel - 1);
                break;
        case KEY_DOWN:
        case 'j':
                select_index(v, sel + 1);
                break;
        case KEY_PPAGE:
                select_index(v, sel - (LINES - 4));
                break;
        case KEY_NPAGE:
                select_index(v, sel + (LINES - 4));
                break;
        case KEY_HOME:
                select_index(v, 0);
                break;
        case KEY_END:
                select_index(v, (long)top_model_row_count(v->model) - 1);
                break;
        default:
                k = ch > 0 && ch < 256 ? strchr(sort_keys, ch) : NULL;
                if (k)
                        top_model_sort(v->model, (enum top_sort)(k - sort_keys));
                break;
        }
        return true;
}

static int run(struct view *v)
{
        double next = cli_now() + v->opts->interval;
        bool quit = false;

        refresh_data(v);
        select_index(v, 0);
        draw(v);
        while (!quit && !top_signal) {
                double before = cli_now(), due = engine_next_due(v->e);
                double wake = fmin(next, due), left = wake - before;
                struct pollfd pfd = {.fd = STDIN_FILENO, .events = POLLIN};
                int ms, ch, rc;

                if (next <= before) {
                        refresh_data(v);
                        next += v->opts->interval;
                        if (next < cli_now())
                                next = cli_now() + v->opts->interval;
                        draw(v);
                        continue;
                }
                if (due <= before) {
                        /* A unit that ticks between refreshes (one that
                         * switches its counters within an interval). */
                        engine_advance(v->e, before);
                        continue;
                }
                ms = left > 1.0 ? 1000 : (int)(left * 1000) + 1;
                rc = poll(&pfd, 1, ms);
                if (rc < 0 && errno != EINTR)
                        return -errno;
                if (rc == 0) {
                        /* Nothing on a real clock (the time has passed in
                         * poll); PCIESCOPE_VIRTUAL_CLOCK moves only here. */
                        cli_sleep_until(fmin(wake, before + ms / 1000.0));
                        continue;
                }
                if (rc > 0 && (pfd.revents & (POLLHUP | POLLERR | POLLNVAL)))
                        return -EIO; /* the terminal went away */
                /* EINTR: SIGWINCH makes a KEY_RESIZE, SIGINT/SIGTERM set
                 * top_signal. */
                while (!quit && (ch = getch()) != ERR)
                        quit = !key(v, ch);
                draw(v);
        }
        return 0;
}

int cmd_top(const struct cli_opts *opts, struct engine *e)
{
        struct view v = {.opts = opts, .e = e};
        struct sigaction sa = {.sa_handler = on_signal}, old_int, old_term;
        SCREEN *screen;
        int err;

        v.pmu_units = engine_unit_count(
            e, ENGINE_SOURCE_PORT_PMUS | ENGINE_SOURCE_INTEL_IIO | ENGINE_SOURCE_AMD_DF,
            &v.pmu_started);
        v.model = top_model_new();
        if (!v.model) {
                cli_error("top: out of memory");
                return CLI_EXIT_ERROR;
        }
        /* Ours, not curses' own handlers: the loop ends and endwin() runs
         * on this thread, never inside a handler. */
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, &old_int);
        sigaction(SIGTERM, &sa, &old_term);
        screen = newterm(NULL, stdout, stdin);
        if (!screen) {
                const char *term = getenv("TERM");

                sigaction(SIGINT, &old_int, NULL);
                sigaction(SIGTERM, &old_term, NULL);
                top_model_free(v.model);
                cli_error("top: cannot drive this terminal (TERM=%s)", term ? term : "unset");
                return CLI_EXIT_ERROR;
        }
        set_term(screen);
        cbreak();
        noecho();
        nonl();
        keypad(stdscr, TRUE);
        nodelay(stdscr, TRUE);
        curs_set(0);

        err = run(&v);

        endwin();
        delscreen(screen);
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGTERM, &old_term, NULL);
        top_log_flush();
        top_model_free(v.model);
        free(v.expanded);
        if (err) {
                cli_error("top: the terminal could not be read: %s", strerror(-err));
                return CLI_EXIT_ERROR;
        }
        /* A signal ends it like `q`, with the status a shell expects. */
        return top_signal ? 128 + top_signal : CLI_EXIT_OK;
}
