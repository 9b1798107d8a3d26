/*
 * t010_fork: a trid is valid only in the process that created it.  In a
 * fork()ed child every function given it returns EINVAL; the child is not
 * traced (inheritance CLOSE_FOR_CHILD, the default); the child's calls and
 * its normal exit() do not disturb the parent's stream.  The child can create
 * and use a stream of its own.
 */
#include "tcommon.h"

#include <sys/wait.h>

static void child(trace_id_t trid, trace_event_id_t ev)
{
    trace_attr_t a;
    struct posix_trace_status_info st;
    trace_event_set_t set;
    struct posix_trace_event_info info;
    char data[64];
    char name[TRACE_EVENT_NAME_MAX + 1];
    size_t len;
    int un;
    trace_event_id_t id;
    struct timespec abst;

    tc_alarm_watchdog(20);   /* the parent's threads are not in the child */
    posix_trace_event(ev, "child", 5);   /* not traced: no effect */
    CHECK(posix_trace_attr_init(&a));
    CHECK(posix_trace_eventset_empty(&set));
    abst = tc_ns_ts(tc_now_ns() + 2000000000LL);
#define ONE(fn, ...) printf("child %s rc=%s\n", #fn, tc_errname(fn(__VA_ARGS__)))
    ONE(posix_trace_get_attr, trid, &a);
    ONE(posix_trace_get_status, trid, &st);
    ONE(posix_trace_get_filter, trid, &set);
    ONE(posix_trace_set_filter, trid, &set, POSIX_TRACE_SET_EVENTSET);
    ONE(posix_trace_eventid_get_name, trid, ev, name);
    ONE(posix_trace_trid_eventid_open, trid, "childname", &id);
    ONE(posix_trace_eventtypelist_getnext_id, trid, &id, &un);
    ONE(posix_trace_eventtypelist_rewind, trid);
    ONE(posix_trace_trygetnext_event, trid, &info, data, sizeof data, &len, &un);
    ONE(posix_trace_getnext_event, trid, &info, data, sizeof data, &len, &un);
    ONE(posix_trace_timedgetnext_event, trid, &info, data, sizeof data, &len, &un, &abst);
    ONE(posix_trace_stop, trid);
    ONE(posix_trace_start, trid);
    ONE(posix_trace_clear, trid);
    ONE(posix_trace_shutdown, trid);
#undef ONE
    posix_trace_event(ev, "child2", 6);
    /* the child may create a stream of its own, which traces the child */
    trace_id_t mine;
    SHOW("child create", posix_trace_create(0, NULL, &mine));
    CHECK(posix_trace_start(mine));
    posix_trace_event(ev, "mine", 4);
    CHECK(posix_trace_stop(mine));
    tc_drain_print(mine);
    SHOW("child shutdown own", posix_trace_shutdown(mine));
    CHECK(posix_trace_attr_destroy(&a));
    fflush(stdout);
    exit(0);   /* a normal exit: atexit handlers and destructors run */
}

int main(void)
{
    trace_id_t trid;
    trace_event_id_t ev;
    int status;
    tc_init();
    tc_watchdog(30);

    ev = tc_open("ev");
    CHECK(posix_trace_create(0, NULL, &trid));
    CHECK(posix_trace_start(trid));
    posix_trace_event(ev, "before", 6);
    fflush(stdout);
    pid_t pid = fork();
    TC_ASSERT(pid >= 0);
    if (pid == 0)
        child(trid, ev);
    TC_ASSERT(waitpid(pid, &status, 0) == pid);
    printf("child exited=%d status=%d\n", WIFEXITED(status), WEXITSTATUS(status));
    posix_trace_event(ev, "after", 5);
    tc_print_status("parent", trid);
    CHECK(posix_trace_stop(trid));
    tc_drain_print(trid);
    SHOW("parent shutdown", posix_trace_shutdown(trid));
    return 0;
}
