/*
 * Escaping byte strings for the text output (C-like) and for JSON.
 */
#include "ptools.h"

void pt_hex(GString *s, const unsigned char *p, size_t n)
{
    static const char dig[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        g_string_append_c(s, dig[p[i] >> 4]);
        g_string_append_c(s, dig[p[i] & 15]);
    }
}

int pt_is_text(const unsigned char *p, size_t n)
{
    if (n > 0 && p[n - 1] == '\0')
        n--;
    if (n == 0)
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((p[i] < 0x20 && p[i] != '\n' && p[i] != '\t' && p[i] != '\r') || p[i] == 0x7f)
            return 0;
    return g_utf8_validate((const char *)p, (gssize)n, NULL);
}

void pt_esc_c(GString *s, const unsigned char *p, size_t n, size_t max, int more)
{
    if (max != 0 && n > max) {
        n = max;
        more = 1;
    }
    int utf8 = g_utf8_validate((const char *)p, (gssize)n, NULL);
    g_string_append_c(s, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = p[i];
        switch (c) {
        case '"': g_string_append(s, "\\\""); break;
        case '\\': g_string_append(s, "\\\\"); break;
        case '\n': g_string_append(s, "\\n"); break;
        case '\t': g_string_append(s, "\\t"); break;
        case '\r': g_string_append(s, "\\r"); break;
        default:
            if (c < 0x20 || c == 0x7f || (c >= 0x80 && !utf8)) {
                g_string_append(s, "\\x");
                pt_hex(s, &c, 1);
            } else
                g_string_append_c(s, (char)c);
        }
    }
    g_string_append_c(s, '"');
    if (more)
        g_string_append(s, "...");
}

void pt_esc_json(GString *s, const unsigned char *p, size_t n)
{
    const char *c = (const char *)p, *end = c + n;
    g_string_append_c(s, '"');
    while (c < end) {
        unsigned char b = (unsigned char)*c;
        if (b >= 0x80) {
            gunichar u = g_utf8_get_char_validated(c, end - c);
            if (u != (gunichar)-1 && u != (gunichar)-2 && u != 0) {
                const char *nx = g_utf8_next_char(c);
                g_string_append_len(s, c, nx - c);
                c = nx;
                continue;
            }
            g_string_append_printf(s, "\\u%04x", b); /* not UTF-8: the byte as U+00XX */
        } else if (b == '"' || b == '\\') {
            g_string_append_c(s, '\\');
            g_string_append_c(s, (char)b);
        } else if (b == '\n') {
            g_string_append(s, "\\n");
        } else if (b == '\t') {
            g_string_append(s, "\\t");
        } else if (b == '\r') {
            g_string_append(s, "\\r");
        } else if (b < 0x20 || b == 0x7f) {
            g_string_append_printf(s, "\\u%04x", b);
        } else {
            g_string_append_c(s, (char)b);
        }
        c++;
    }
    g_string_append_c(s, '"');
}

void pt_esc_json_str(GString *s, const char *str)
{
    pt_esc_json(s, (const unsigned char *)str, strlen(str));
}
