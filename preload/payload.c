/*
 * Building an event payload (<posixtrace/events.h>): fixed fields are added
 * inline (shim.h), variable fields here, each cut so that the whole payload
 * stays within 1024 bytes (every later variable field keeps room for its
 * length word); a cut field sets POSIXTRACE_CALL_DATA_CUT.
 */
#include "shim.h"

#include <string.h>

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
    memcpy(c->p.buf + c->n, &n32, 4);
    if (n != 0)
        memcpy(c->p.buf + c->n + 4, p, n);
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
        memcpy(c->p.buf + c->n, argv[i], len);
        c->n += (uint32_t)len;
        n += (uint32_t)len;
    }
    memcpy(c->p.buf + start, &n, 4);
}
