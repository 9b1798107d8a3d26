/*
 * Looking values up in the generated tables (xlat.h).
 */
#include "xlat.h"

#include <stdio.h>
#include <string.h>

const char *pt_xlat_name(const struct pt_xlat *t, uint64_t v)
{
    for (; t->name != NULL; t++)
        if (t->val == v)
            return t->name;
    return NULL;
}

static int multi_bit(uint64_t v)
{
    return (v & (v - 1)) != 0;
}

/* Appends to buf at *len; the output is cut at size - 1 bytes. */
static void put(char *buf, size_t size, size_t *len, const char *sep, const char *str)
{
    if (*len < size)
        snprintf(buf + *len, size - *len, "%s%s", sep, str);
    *len += strlen(sep) + strlen(str);
}

/* Pass 0: the multi-bit flags, pass 1: the single-bit ones. */
static uint64_t names_pass(char *buf, size_t size, size_t *len, const struct pt_xlat *t,
                           uint64_t v, int pass)
{
    for (; t->name != NULL; t++) {
        if (t->val == 0 || multi_bit(t->val) == pass || (v & t->val) != t->val)
            continue;
        put(buf, size, len, *len ? "|" : "", t->name);
        v &= ~t->val;
    }
    return v;
}

char *pt_xlat_flags(char *buf, size_t size, const struct pt_xlat *t, uint64_t v)
{
    size_t len = 0;
    char hex[24];
    if (size == 0)
        return buf;
    buf[0] = '\0';
    v = names_pass(buf, size, &len, t, v, 0);
    v = names_pass(buf, size, &len, t, v, 1);
    if (v != 0 || len == 0) {
        if (v != 0)
            snprintf(hex, sizeof hex, "%#llx", (unsigned long long)v);
        else
            strcpy(hex, "0");
        put(buf, size, &len, len ? "|" : "", hex);
    }
    return buf;
}
