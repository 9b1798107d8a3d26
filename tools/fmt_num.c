/*
 * Numbers in decimal for the formatters, without printf: the live view
 * writes a million lines a second, and printf's parsing of its format was
 * most of a line's cost.
 */
#include "ptools.h"

void pt_append_u64(GString *s, uint64_t v)
{
    char b[20];
    int i = (int)sizeof b;
    do {
        b[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    g_string_append_len(s, b + i, (gssize)sizeof b - i);
}

void pt_append_i64(GString *s, int64_t v)
{
    if (v < 0) {
        g_string_append_c(s, '-');
        pt_append_u64(s, (uint64_t)0 - (uint64_t)v);
    } else {
        pt_append_u64(s, (uint64_t)v);
    }
}

void pt_append_padded(GString *s, uint64_t v, int width)
{
    char b[20];
    int i = (int)sizeof b;
    while (i > 0 && (v != 0 || (int)sizeof b - i < width)) {
        b[--i] = (char)('0' + v % 10);
        v /= 10;
    }
    g_string_append_len(s, b + i, (gssize)sizeof b - i);
}

void pt_append_sec_us(GString *s, uint64_t ns)
{
    pt_append_u64(s, ns / 1000000000);
    g_string_append_c(s, '.');
    pt_append_padded(s, ns % 1000000000 / 1000, 6);
}
