// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_rw_config.c - libFuzzer target: the remote_write plugin's option
 * parser (plugin/remote_write.c, included here with collectd's functions
 * stubbed) and the endpoint check (rw_endpoint_cfg_check) on any
 * configuration text.
 *
 * Input: collectd-style lines, `Key value...` with "strings", numbers and
 * true/false, `<Endpoint "name">` ... `</Endpoint>` blocks.
 *
 * Invariants: parsing and freeing never crash or leak (ASan); a URL's
 * password never reaches a log line or an error message; nothing sends a
 * request (init is not called).
 */
#include "../../plugin/remote_write.c"

#include <ctype.h>
#include <strings.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ---- what collectd would provide ------------------------------------- */

static char secret[64]; /* a URL password of the current input */

static void no_secret(const char *text)
{
        if (secret[0] && strstr(text, secret))
                __builtin_trap();
}

void plugin_log(int level, const char *format, ...)
{
        char buf[4096];
        va_list ap;

        (void)level;
        va_start(ap, format);
        vsnprintf(buf, sizeof(buf), format, ap);
        va_end(ap);
        no_secret(buf);
}

void c_complain(int level, c_complain_t *c, const char *format, ...)
{
        (void)level;
        (void)c;
        (void)format;
}

int plugin_register_complex_config(const char *type, int (*cb)(oconfig_item_t *))
{
        (void)type;
        (void)cb;
        return 0;
}
int plugin_register_init(const char *name, plugin_init_cb cb)
{
        (void)name;
        (void)cb;
        return 0;
}
int plugin_register_read(const char *name, int (*cb)(void))
{
        (void)name;
        (void)cb;
        return 0;
}
int plugin_register_write(const char *name, plugin_write_cb cb, user_data_t const *ud)
{
        (void)name;
        (void)cb;
        (void)ud;
        return 0;
}
int plugin_register_flush(const char *name, plugin_flush_cb cb, user_data_t const *ud)
{
        (void)name;
        (void)cb;
        (void)ud;
        return 0;
}
int plugin_register_missing(const char *name, plugin_missing_cb cb, user_data_t const *ud)
{
        (void)name;
        (void)cb;
        (void)ud;
        return 0;
}
int plugin_register_shutdown(const char *name, plugin_shutdown_cb cb)
{
        (void)name;
        (void)cb;
        return 0;
}
int plugin_dispatch_values(value_list_t const *vl)
{
        (void)vl;
        return 0;
}
meta_data_t *meta_data_create(void)
{
        return NULL;
}
void meta_data_destroy(meta_data_t *md)
{
        (void)md;
}
int meta_data_type(meta_data_t *md, const char *key)
{
        (void)md;
        (void)key;
        return 0;
}
int meta_data_toc(meta_data_t *md, char ***toc)
{
        (void)md;
        *toc = NULL;
        return 0;
}
int meta_data_add_string(meta_data_t *md, const char *key, const char *value)
{
        (void)md;
        (void)key;
        (void)value;
        return 0;
}
int meta_data_get_string(meta_data_t *md, const char *key, char **value)
{
        (void)md;
        (void)key;
        *value = NULL;
        return -1;
}
cdtime_t cdtime(void)
{
        return 0;
}
char *sstrncpy(char *dest, const char *src, size_t n)
{
        snprintf(dest, n, "%s", src);
        return dest;
}
char *sstrerror(int errnum, char *buf, size_t buflen)
{
        snprintf(buf, buflen, "%s", strerror(errnum));
        return buf;
}
/* The encoder is not reached without init (no protobuf code here). */
struct rw_encoder *rw_encoder_new(bool metadata)
{
        (void)metadata;
        return NULL;
}
void rw_encoder_free(struct rw_encoder *e)
{
        (void)e;
}
int rw_encode(struct rw_encoder *e, const struct rw_sample *s, size_t n, const uint8_t **out,
              size_t *out_len, size_t *bytes)
{
        (void)e;
        (void)s;
        (void)n;
        (void)out;
        (void)out_len;
        (void)bytes;
        return -ENOSYS;
}
double rw_stale_nan(void)
{
        return 0;
}

/* ---- a small reader for the input ------------------------------------ */

static void item_add_value(oconfig_item_t *it, const char *tok, size_t n, bool quoted)
{
        oconfig_value_t *v;
        char *s = strndup(tok, n), *end;

        it->values = realloc(it->values, (size_t)(it->values_num + 1) * sizeof(*it->values));
        v = &it->values[it->values_num++];
        memset(v, 0, sizeof(*v));
        if (quoted) {
                v->type = OCONFIG_TYPE_STRING;
                v->value.string = s;
                return;
        }
        if (!strcmp(s, "true") || !strcmp(s, "false")) {
                v->type = OCONFIG_TYPE_BOOLEAN;
                v->value.boolean = s[0] == 't';
                free(s);
                return;
        }
        v->value.number = strtod(s, &end);
        if (*s && !*end) {
                v->type = OCONFIG_TYPE_NUMBER;
                free(s);
        } else {
                v->type = OCONFIG_TYPE_STRING;
                v->value.string = s;
        }
}

static oconfig_item_t *item_new(oconfig_item_t *parent, const char *key, size_t n)
{
        oconfig_item_t *it;

        parent->children = realloc(parent->children,
                                   (size_t)(parent->children_num + 1) * sizeof(*parent->children));
        it = &parent->children[parent->children_num++];
        memset(it, 0, sizeof(*it));
        it->key = strndup(key, n);
        it->parent = parent;
        return it;
}

/* Parses one line's values after the key into it. */
static void read_values(oconfig_item_t *it, const char *p, const char *end)
{
        while (p < end) {
                const char *q;

                while (p < end && (*p == ' ' || *p == '\t'))
                        p++;
                if (p >= end || *p == '>')
                        break;
                if (*p == '"') {
                        q = memchr(p + 1, '"', (size_t)(end - p - 1));
                        if (!q)
                                q = end;
                        item_add_value(it, p + 1, (size_t)(q - p - 1), true);
                        p = q + 1;
                } else {
                        for (q = p; q < end && *q != ' ' && *q != '\t' && *q != '>'; q++)
                                ;
                        item_add_value(it, p, (size_t)(q - p), false);
                        p = q;
                }
        }
}

/* A key is a word of letters, digits and '_' (as collectd's parser has
 * it); what follows it is values. */
static const char *key_end(const char *k, const char *eol)
{
        while (k < eol && (isalnum((unsigned char)*k) || *k == '_'))
                k++;
        return k;
}

static void free_items(oconfig_item_t *it)
{
        for (int i = 0; i < it->children_num; i++)
                free_items(&it->children[i]);
        for (int i = 0; i < it->values_num; i++)
                if (it->values[i].type == OCONFIG_TYPE_STRING)
                        free(it->values[i].value.string);
        free(it->values);
        free(it->children);
        free(it->key);
}

/* The password in the first `URL "scheme://user:password@host..."` line
 * (6+ characters and found once in the input, so that it is not a piece of
 * something else by chance): it must never be logged. Other options may
 * hold anything, the operator's own text. */
static void find_secret(const char *text)
{
        const char *line = text;

        secret[0] = '\0';
        for (; *line; line += strcspn(line, "\n"), line += *line == '\n') {
                const char *u = line, *at, *colon, *end;

                while (*u == ' ' || *u == '\t')
                        u++;
                if (strncasecmp(u, "URL", 3) || (u[3] != ' ' && u[3] != '\t'))
                        continue;
                u = strchr(u, '"');
                end = line + strcspn(line, "\n");
                if (!u || u > end || !(u = strstr(u, "://")) || u > end)
                        return;
                u += 3;
                end = u + strcspn(u, "/?#\"\n");
                at = memchr(u, '@', (size_t)(end - u));
                colon = memchr(u, ':', (size_t)(end - u));
                if (at && colon && colon < at && at - colon - 1 >= 6 &&
                    (size_t)(at - colon - 1) < sizeof(secret)) {
                        memcpy(secret, colon + 1, (size_t)(at - colon - 1));
                        secret[at - colon - 1] = '\0';
                        if (strstr(strstr(text, secret) + 1, secret))
                                secret[0] = '\0';
                }
                return;
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *text = strndup((const char *)data, size);
        oconfig_item_t root = {0}, *block = NULL;
        const char *p;

        if (!text)
                return 0;
        find_secret(text);
        for (p = text; *p;) {
                const char *eol = p + strcspn(p, "\n"), *k = p, *ke;

                while (k < eol && (*k == ' ' || *k == '\t'))
                        k++;
                if (k + 2 <= eol && k[0] == '<' && k[1] == '/') {
                        block = NULL;
                } else if (k < eol && *k == '<') {
                        k++;
                        ke = key_end(k, eol);
                        block = item_new(&root, k, (size_t)(ke - k));
                        read_values(block, ke, eol);
                } else if (k < eol && key_end(k, eol) > k) {
                        ke = key_end(k, eol);
                        read_values(item_new(block ? block : &root, k, (size_t)(ke - k)), ke, eol);
                        /* item_new may move root's children: find it again */
                        if (block)
                                block = &root.children[root.children_num - 1];
                }
                p = *eol ? eol + 1 : eol;
        }
        rw_config(&root);
        for (size_t i = 0; i < g.n; i++) {
                char err[1024] = "";

                if (g.eps[i].cfg.url && rw_endpoint_cfg_check(&g.eps[i].cfg, err, sizeof(err)))
                        no_secret(err);
        }
        free_confs();
        memset(&g, 0, sizeof(g));
        g.self_metrics = true;
        g.stale_on_shutdown = true;
        free_items(&root);
        free(text);
        return 0;
}
