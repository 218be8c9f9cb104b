/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * text_buf.h - appending text to a caller's buffer the way snprintf() does
 * (the same characters, truncation, terminating NUL and returned length),
 * for the few conversions the trace dump's per-entry text needs. A dump
 * describes millions of TLPs and vsnprintf() was most of its time, so the
 * appenders are inline; text_printf() is there for the rare lines.
 * Pure: bytes in, bytes out.
 */
#ifndef PCIESCOPE_TEXT_BUF_H
#define PCIESCOPE_TEXT_BUF_H

#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Once the buffer is full only the length grows, as snprintf() counts. */
struct text_buf {
        char *buf;
        size_t len; /* 0 (or buf NULL): count only */
        size_t pos;
};

static inline void text_put(struct text_buf *t, const char *s, size_t n)
{
        size_t room = t->buf && t->pos < t->len ? t->len - t->pos : 0;

        if (room) {
                size_t k = n < room - 1 ? n : room - 1;

                memcpy(t->buf + t->pos, s, k);
                t->buf[t->pos + k] = '\0';
        }
        t->pos += n;
}

/* %s */
static inline void text_str(struct text_buf *t, const char *s)
{
        text_put(t, s, strlen(s));
}

/* %0<width>x of @v (more digits when it needs them; width 0: %x). */
static inline void text_hex(struct text_buf *t, uint64_t v, unsigned int width)
{
        static const char digits[] = "0123456789abcdef";
        char tmp[16];
        unsigned int n = 0;

        do {
                tmp[sizeof(tmp) - 1 - n++] = digits[v & 0xf];
                v >>= 4;
        } while (v);
        while (n < width && n < sizeof(tmp))
                tmp[sizeof(tmp) - 1 - n++] = '0';
        text_put(t, tmp + sizeof(tmp) - n, n);
}

/* %#x: no 0x before a 0, as printf. */
static inline void text_hex_alt(struct text_buf *t, uint64_t v)
{
        if (v)
                text_put(t, "0x", 2);
        text_hex(t, v, 0);
}

/* %u */
static inline void text_dec(struct text_buf *t, unsigned int v)
{
        char tmp[10];
        unsigned int n = 0;

        do {
                tmp[sizeof(tmp) - 1 - n++] = (char)('0' + v % 10);
                v /= 10;
        } while (v);
        text_put(t, tmp + sizeof(tmp) - n, n);
}

static inline void text_printf(struct text_buf *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static inline void text_printf(struct text_buf *t, const char *fmt, ...)
{
        size_t room = t->buf && t->pos < t->len ? t->len - t->pos : 0;
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vsnprintf(room ? t->buf + t->pos : NULL, room, fmt, ap);
        va_end(ap);
        if (n > 0)
                t->pos += (size_t)n;
}

/* snprintf()'s return value. */
static inline int text_len(const struct text_buf *t)
{
        return t->pos > INT_MAX ? INT_MAX : (int)t->pos;
}

#endif /* PCIESCOPE_TEXT_BUF_H */
