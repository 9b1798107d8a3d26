/*
 * The structures of the polling system calls, as the system-call mode
 * records them (<posixtrace/syscalls.def>): struct pollfd arrays, struct
 * epoll_event, struct timespec and timeval, in the text form (strace's:
 * [{fd=3, events=POLLIN, revents=POLLIN|POLLHUP}]) and as JSON values
 * (doc/json-schema.md). Flag names from the generated tables of xlat.h.
 */
#include "ptools.h"
#include "xlat.h"

#include <poll.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/time.h>
#include <time.h>

static void flags_json(GString *s, const char *key, const struct pt_xlat *t, uint64_t v)
{
    char b[256];
    const char *f = pt_xlat_flags(b, sizeof b, t, v);
    g_string_append_printf(s, "\"%s\":", key);
    pt_esc_json(s, (const unsigned char *)f, strlen(f));
}

/* One struct pollfd; revents only when set (the shim records 0 for a
 * call that failed or was recorded before it returned). */
static void pollfd_fmt(GString *s, const struct pollfd *pf, int json)
{
    char b[256];
    if (json) {
        g_string_append_printf(s, "{\"fd\":%d,", pf->fd);
        flags_json(s, "events", pt_xlat_poll_events, (uint16_t)pf->events);
        if (pf->revents != 0) {
            g_string_append_c(s, ',');
            flags_json(s, "revents", pt_xlat_poll_events, (uint16_t)pf->revents);
        }
        g_string_append_c(s, '}');
        return;
    }
    g_string_append_printf(s, "{fd=%d, events=%s", pf->fd,
                           pt_xlat_flags(b, sizeof b, pt_xlat_poll_events, (uint16_t)pf->events));
    if (pf->revents != 0)
        g_string_append_printf(s, ", revents=%s",
                               pt_xlat_flags(b, sizeof b, pt_xlat_poll_events,
                                             (uint16_t)pf->revents));
    g_string_append_c(s, '}');
}

static void epollev_fmt(GString *s, const struct epoll_event *ev, int json)
{
    char b[256];
    if (json) {
        g_string_append_c(s, '{');
        flags_json(s, "events", pt_xlat_epoll_events, ev->events);
        g_string_append_printf(s, ",\"data\":\"%#" G_GINT64_MODIFIER "x\"}", (guint64)ev->data.u64);
        return;
    }
    g_string_append_printf(s, "{events=%s, data=%#" G_GINT64_MODIFIER "x}",
                           pt_xlat_flags(b, sizeof b, pt_xlat_epoll_events, ev->events),
                           (guint64)ev->data.u64);
}

/* An array of `size`-byte structures (a cut last one left out). */
static void array_fmt(GString *s, const unsigned char *p, size_t n, size_t size, int json,
                      void (*one)(GString *, const void *, int))
{
    g_string_append_c(s, '[');
    for (size_t i = 0; i + size <= n; i += size) {
        if (i)
            g_string_append(s, json ? "," : ", ");
        one(s, p + i, json);
    }
    g_string_append_c(s, ']');
}

static void pollfd_one(GString *s, const void *p, int json)
{
    struct pollfd pf;
    memcpy(&pf, p, sizeof pf);
    pollfd_fmt(s, &pf, json);
}

static void epollev_one(GString *s, const void *p, int json)
{
    struct epoll_event ev;
    memcpy(&ev, p, sizeof ev);
    epollev_fmt(s, &ev, json);
}

/* A struct timespec or timeval (the second member's name): NULL if empty. */
static void time_fmt(GString *s, const unsigned char *p, size_t n, const char *sub, int json)
{
    int64_t t[2];
    if (n < sizeof t) {
        g_string_append(s, json ? "null" : "NULL");
        return;
    }
    memcpy(t, p, sizeof t);
    g_string_append_printf(s, json ? "{\"tv_sec\":%" G_GINT64_FORMAT ",\"%s\":%" G_GINT64_FORMAT "}"
                                   : "{tv_sec=%" G_GINT64_FORMAT ", %s=%" G_GINT64_FORMAT "}",
                           (gint64)t[0], sub, (gint64)t[1]);
}

gboolean pt_fmt_poll_field(GString *s, const struct pt_field *f, int json)
{
    _Static_assert(sizeof(struct timespec) == 16 && sizeof(struct timeval) == 16,
                   "64-bit time structures");
    switch (f->type) {
    case POSIXTRACE_F_POLLFDS:
        array_fmt(s, f->p, f->n, sizeof(struct pollfd), json, pollfd_one);
        return TRUE;
    case POSIXTRACE_F_EPOLLEVS:
        array_fmt(s, f->p, f->n, sizeof(struct epoll_event), json, epollev_one);
        return TRUE;
    case POSIXTRACE_F_TIMESPEC: time_fmt(s, f->p, f->n, "tv_nsec", json); return TRUE;
    case POSIXTRACE_F_TIMEVAL: time_fmt(s, f->p, f->n, "tv_usec", json); return TRUE;
    default: return FALSE;
    }
}
