// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cmd_exporter.c - `pciescope exporter`: the engine hosted without
 * collectd, node_exporter style, serving the same page as the collectd
 * openmetrics plugin.
 *
 * The engine runs its threads as under collectd; every interval this host
 * takes what each unit finished (engine_read) and puts it into the page's
 * store under the same names and labels remote_write sends (cli_series:
 * the samples go through the naming code the plugin's value lists do).
 * A unit's series that its newest interval no longer has leave the page
 * at once; a unit that stops publishing loses its series after three
 * intervals. The HTTP server (writer/om_http) runs on threads of its own.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cli_series.h"
#include "om_http.h"
#include "om_store.h"
#include "secret_file.h"

static atomic_bool stop_requested;
static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
        stop_signal = sig;
        atomic_store(&stop_requested, true);
}

/* A daemon's log: every level down to info, one line each, on stderr
 * (journald keeps it under systemd). */
static void exporter_log(void *ctx, enum hw_log_level level, const char *msg)
{
        static const char *const names[] = {
            [HW_LOG_ERROR] = "error", [HW_LOG_WARNING] = "warning", [HW_LOG_NOTICE] = "notice",
            [HW_LOG_INFO] = "info",   [HW_LOG_DEBUG] = "debug",
        };

        (void)ctx;
        if (level <= HW_LOG_INFO)
                fprintf(stderr, "pciescope exporter: %s: %s\n", names[level], msg);
}

static void http_log(void *ctx, int level, const char *msg)
{
        /* syslog levels: 3 error, 4 warning, 6 info, 7 debug */
        exporter_log(ctx,
                     level <= 3   ? HW_LOG_ERROR
                     : level == 4 ? HW_LOG_WARNING
                     : level <= 6 ? HW_LOG_INFO
                                  : HW_LOG_DEBUG,
                     msg);
}

struct exporter {
        struct om_store *store;
        const char *instance; /* --instance, or "" */
        double now;           /* this round's time */
        unsigned long failed; /* samples that could not be named or stored */
};

/* One sample into the page under the series remote_write sends for it. */
static int put_sample(struct exporter *x, const char *source, const struct pcie_sample *s)
{
        struct rw_labelset set;
        enum rw_kind kind;
        size_t len;
        char *packed;
        int rc = cli_series_of_sample(s, x->instance, &set, &kind);

        if (rc)
                return rc < 0 ? rc : 0;
        packed = rw_series_pack(&set, kind, &len);
        if (!packed)
                return -ENOMEM;
        rc = om_store_put(x->store, source, packed, len, cli_series_value(s), x->now, NULL);
        free(packed);
        return rc;
}

static void sink(void *ctx, const struct engine_unit *unit, const struct sample_set *set)
{
        struct exporter *x = ctx;
        const char *source = unit ? engine_unit_name(unit) : "engine";

        for (size_t i = 0; i < set->count; i++)
                if (put_sample(x, source, &set->samples[i]))
                        x->failed++;
        /* What this interval of the unit no longer has leaves the page. */
        om_store_drop(x->store, source, x->now);
}

/* "ADDR:PORT", "[V6ADDR]:PORT" or ":PORT" (every address). */
static int parse_listen(const char *arg, char *addr, size_t addrlen, unsigned int *port)
{
        const char *colon = strrchr(arg, ':');
        const char *a = arg, *a_end = colon;
        unsigned long p;
        char *end;

        if (!colon)
                return -EINVAL;
        if (*a == '[') {
                a++;
                if (a_end == arg || a_end[-1] != ']')
                        return -EINVAL;
                a_end--;
        }
        if ((size_t)(a_end - a) >= addrlen)
                return -EINVAL;
        memcpy(addr, a, (size_t)(a_end - a));
        addr[a_end - a] = '\0';
        errno = 0;
        p = strtoul(colon + 1, &end, 10);
        if (errno || end == colon + 1 || *end || p < 1 || p > 65535)
                return -EINVAL;
        *port = (unsigned int)p;
        return 0;
}

/* Whether @addr (parse_listen's) is a loopback address: "" is every address. */
static bool loopback_only(const char *addr)
{
        return !strncmp(addr, "127.", 4) || !strcmp(addr, "::1") || !strcmp(addr, "localhost");
}

/* The first line of @path (a password), or NULL with the reason said; a
 * file others may read is warned about. */
static char *read_first_line(const char *flag, const char *path)
{
        char warn[512], why[512];
        char *secret = NULL;

        if (secret_file_read(path, flag, SECRET_FILE_MAX, &secret, warn, sizeof(warn), why,
                             sizeof(why))) {
                cli_error("%s", why);
                return NULL;
        }
        if (*warn)
                fprintf(stderr, "pciescope exporter: warning: %s\n", warn);
        return secret;
}

static void sleep_until(double deadline)
{
        while (!atomic_load(&stop_requested)) {
                double left = deadline - cli_now();
                struct timespec ts;

                if (left <= 0)
                        return;
                /* Short naps: a signal ends the wait within 0.1 s even
                 * when it lands on another thread. */
                left = left > 0.1 ? 0.1 : left;
                ts.tv_sec = (time_t)left;
                ts.tv_nsec = (long)((left - (double)ts.tv_sec) * 1e9);
                nanosleep(&ts, NULL);
        }
}

/* A fleet's endpoint: the plugin's defaults (Detail "default", its
 * TopTalkers), not a terminal's; --detail or --option Detail=... win. */
int cmd_exporter_prepare(struct cli_opts *opts, struct engine_host *host)
{
        struct engine_value v = {.type = ENGINE_VALUE_STRING, .string = "default"};
        char why[256];

        (void)host;
        opts->cfg.pmu.top_talkers = opts->plugin_top_talkers;
        if (opts->detail_given || !engine_config_set(&opts->cfg, "Detail", &v, 1, why, sizeof(why)))
                return 0;
        cli_error("--detail default: %s", why);
        return CLI_EXIT_ERROR;
}

int cmd_exporter(const struct cli_opts *opts, struct engine *unused)
{
        struct engine_host host = {.log = exporter_log,
                                   .interval = opts->interval,
                                   .label_simulated = true,
                                   .baseline_at_start = true};
        struct om_http_cfg hc = {.tls_cert_file = opts->tls_cert,
                                 .tls_key_file = opts->tls_key,
                                 .auth_user = opts->auth_user,
                                 .max_connections = opts->max_connections,
                                 .max_per_client = opts->max_per_client,
                                 .timeout_s = opts->timeout_s,
                                 .name = "pciescope exporter"};
        struct exporter x = {.instance = opts->instance ? opts->instance : ""};
        struct sigaction sa = {.sa_handler = on_signal};
        struct om_http *http = NULL;
        struct engine *e = NULL;
        char addr[256], why[512] = "", *password = NULL;
        int status = CLI_EXIT_ERROR;
        double next;

        (void)unused; /* it opens the machine itself, with its own host */

        if (parse_listen(opts->listen ? opts->listen : "127.0.0.1:9943", addr, sizeof(addr),
                         &hc.port)) {
                cli_error("--listen %s: want ADDRESS:PORT, [IPV6]:PORT or :PORT (port 1..65535)",
                          opts->listen);
                return CLI_EXIT_ERROR;
        }
        hc.listen = addr;
        if (!loopback_only(addr) && !opts->auth_user)
                fprintf(stderr,
                        "pciescope exporter: warning: serving on %s port %u without "
                        "authentication: whoever reaches the port reads this machine's PCIe "
                        "topology and traffic (--basic-auth-user with --tls-cert, or a "
                        "firewall)\n",
                        addr[0] ? addr : "every address", hc.port);
        if (!opts->auth_user != !opts->auth_password_file) {
                cli_error("--basic-auth-user and --basic-auth-password-file go together");
                return CLI_EXIT_ERROR;
        }
        if (opts->auth_password_file) {
                password = read_first_line("--basic-auth-password-file", opts->auth_password_file);
                if (!password)
                        return CLI_EXIT_ERROR;
                hc.auth_password = password;
        }
        if (engine_config_check(&opts->cfg, why, sizeof(why))) {
                cli_error("%s", why);
                goto out;
        }
        x.store = om_store_new();
        if (!x.store)
                goto out;
        if (engine_open(&opts->cfg, &host, &e, why, sizeof(why))) {
                cli_error("%s", why);
                goto out;
        }
        if (engine_simulated(e))
                fprintf(stderr,
                        "pciescope exporter: SIMULATED machine \"%s\" (drivers of Linux %s): "
                        "nothing served is read from this machine's hardware; every series "
                        "carries simulated=\"%s\"\n",
                        engine_simulated(e), engine_simulated_kernel(e), engine_simulated(e));
        if (om_http_start(&hc, x.store, http_log, NULL, &http, why, sizeof(why))) {
                cli_error("%s", why);
                goto out;
        }
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        signal(SIGPIPE, SIG_IGN);
        if (engine_start(e))
                goto out;
        next = cli_now();
        while (!atomic_load(&stop_requested)) {
                x.now = cli_now();
                engine_read(e, sink, &x);
                /* A unit that stopped publishing (a thread gone quiet). */
                om_store_expire(x.store, x.now - 3 * opts->interval - 1);
                next += opts->interval;
                if (next < cli_now())
                        next = cli_now();
                sleep_until(next);
        }
        fprintf(stderr, "pciescope exporter: %s: stopping\n",
                stop_signal == SIGINT ? "SIGINT" : "SIGTERM");
        status = CLI_EXIT_OK;
out:
        if (http) {
                struct om_http_stats s;

                om_http_stats(http, &s);
                fprintf(stderr,
                        "pciescope exporter: served %llu pages; refused %llu unknown paths, %llu "
                        "other methods, %llu without credentials, %llu with bad framing "
                        "headers, %llu connections past a limit; dropped %llu past their "
                        "timeout; %lu samples not stored\n",
                        (unsigned long long)s.pages, (unsigned long long)s.not_found,
                        (unsigned long long)s.bad_method, (unsigned long long)s.unauthorized,
                        (unsigned long long)s.bad_request, (unsigned long long)s.refused,
                        (unsigned long long)s.timed_out, x.failed);
        }
        om_http_stop(http);
        engine_close(e);
        om_store_free(x.store);
        secret_free(password);
        return status;
}
