/*
 * Building an event payload (<posixtrace/events.h>): fixed fields are added
 * inline (shim.h), variable fields here, each cut so that the whole payload
 * stays within 1024 bytes (every later variable field keeps room for its
 * length word); a cut field sets POSIXTRACE_CALL_DATA_CUT.
 */
#include "shim.h"

#include <string.h>

/* Copy n bytes. The usual fields are short (a path, the first 32 bytes of a
 * buffer): GCC's inline expansion of a variable-size memcpy here is a
 * `rep movsq`, which costs tens of cycles to start; 8-byte moves (the last one
 * overlapping) do it in a few. Longer copies go to the C library. */
static inline void copy_bytes(unsigned char *d, const unsigned char *s, size_t n)
{
    if (n > 64) {
        memcpy(d, s, n);
    } else if (n >= 8) {
        uint64_t w;
        for (size_t i = 0; i + 8 < n; i += 8) {
            __builtin_memcpy(&w, s + i, 8);
            __builtin_memcpy(d + i, &w, 8);
        }
        __builtin_memcpy(&w, s + n - 8, 8);
        __builtin_memcpy(d + n - 8, &w, 8);
    } else if (n >= 4) {
        uint32_t a, b;
        __builtin_memcpy(&a, s, 4);
        __builtin_memcpy(&b, s + n - 4, 4);
        __builtin_memcpy(d, &a, 4);
        __builtin_memcpy(d + n - 4, &b, 4);
    } else {
        for (size_t i = 0; i < n; i++)
            d[i] = s[i];
    }
}

void shim_var(struct shim_call *c, const void *p, size_t len, size_t limit, unsigned after)
{
    uint32_t room = shim_room(c, after);
    size_t n = len;
    if (n > limit)
        n = limit;
    if (n > room)
        n = room;
    if (n < len)
        c->flags |= POSIXTRACE_CALL_DATA_CUT;
    uint32_t n32 = (uint32_t)n;
    __builtin_memcpy(c->p.buf + c->n, &n32, 4);
    copy_bytes(c->p.buf + c->n + 4, p, n);
    c->n += 4 + n32;
}

void shim_nodata(struct shim_call *c, unsigned after)
{
    c->flags |= POSIXTRACE_CALL_NODATA;
    shim_var(c, NULL, 0, 0, after);
}

void shim_str(struct shim_call *c, const char *s, unsigned after)
{
    if (s == NULL) {
        shim_var(c, NULL, 0, 0, after);
        return;
    }
    /* never read past what can be stored: strnlen to the room + 1 */
    size_t room = shim_room(c, after);
    shim_var(c, s, strnlen(s, room + 1), SIZE_MAX, after);
}

void shim_buf(struct shim_call *c, const void *p, ssize_t len, unsigned after)
{
    if (len < 0)
        shim_nodata(c, after);
    else
        shim_var(c, p, p != NULL ? (size_t)len : 0, shim_cfg.strsize, after);
}

void shim_argv(struct shim_call *c, char *const *argv, unsigned after)
{
    if (argv == NULL) {
        shim_var(c, NULL, 0, 0, after);
        return;
    }
    uint32_t room = shim_room(c, after);
    uint32_t start = c->n, n = 0;
    c->n += 4;
    for (size_t i = 0; argv[i] != NULL; i++) {
        size_t len = strnlen(argv[i], room - n) + 1;
        if (n + len > room) { /* no room for this string and its NUL */
            c->flags |= POSIXTRACE_CALL_DATA_CUT;
            break;
        }
        copy_bytes(c->p.buf + c->n, (const unsigned char *)argv[i], len);
        c->n += (uint32_t)len;
        n += (uint32_t)len;
    }
    __builtin_memcpy(c->p.buf + start, &n, 4);
}
