/*
 * t007_sysmax: TRACE_SYS_MAX (64) streams created and not yet shut down per
 * process; one more gives EAGAIN; shutting one down makes room again.
 */
#include "tcommon.h"

int main(void)
{
    trace_attr_t a;
    trace_id_t t[TRACE_SYS_MAX + 2];
    int ok = 0, distinct = 1;
    tc_init();
    tc_watchdog(50);

    CHECK(posix_trace_attr_init(&a));
    CHECK(posix_trace_attr_setstreamsize(&a, 4096));
    for (int i = 0; i < TRACE_SYS_MAX; i++) {
        int rc = posix_trace_create(0, &a, &t[i]);
        if (rc == 0)
            ok++;
        else
            printf("create #%d rc=%s\n", i, tc_errname(rc));
    }
    for (int i = 0; i < ok; i++)
        for (int j = 0; j < i; j++)
            if (t[i] == t[j])
                distinct = 0;
    printf("created=%d distinct=%d\n", ok, distinct);
    SHOW("create #64", posix_trace_create(0, &a, &t[TRACE_SYS_MAX]));
    SHOW("create #64 NULL attr", posix_trace_create(0, NULL, &t[TRACE_SYS_MAX]));
    /* every stream is usable */
    int usable = 0;
    for (int i = 0; i < ok; i++) {
        struct posix_trace_status_info st;
        if (posix_trace_get_status(t[i], &st) == 0 &&
            st.posix_stream_status == POSIX_TRACE_SUSPENDED)
            usable++;
    }
    printf("usable=%d\n", usable);

    SHOW("shutdown #10", posix_trace_shutdown(t[10]));
    SHOW("create again", posix_trace_create(0, &a, &t[10]));
    SHOW("create #64 again", posix_trace_create(0, &a, &t[TRACE_SYS_MAX]));

    int down = 0;
    for (int i = 0; i < ok; i++)
        if (posix_trace_shutdown(t[i]) == 0)
            down++;
    printf("shut down=%d\n", down);
    /* all gone: creating works */
    SHOW("create after all shut down", posix_trace_create(0, &a, &t[0]));
    SHOW("shutdown", posix_trace_shutdown(t[0]));
    CHECK(posix_trace_attr_destroy(&a));
    return 0;
}
