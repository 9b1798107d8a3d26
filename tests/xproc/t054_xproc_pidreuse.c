/*
 * t054_xproc_pidreuse: a stream created for a process that has exited is not
 * recorded into by a later process that got the same pid (issue 4: targets are
 * identified by pid and start time).
 *
 * A (a scripted target, xproc.h) is traced by stream S; it records 10 events
 * and "done", which S gets; then A exits.  Its pid is handed out again by
 * writing pid-1 into /proc/sys/kernel/ns_last_pid before a fork() (root only;
 * retried up to 50 times, since other processes fork too): B gets A's pid.  B
 * records 100 events and "done" while S is still running: S gets none of them.
 * A new stream R for B gets B's next events (B records when traced).
 *
 * Prints "skip: REASON" and exits 0 when the pid cannot be handed out again.
 */
#include "xproc.h"

#include <sys/file.h>

static int g_nslp = -1;

static const char *open_ns_last_pid(void)
{
    if (geteuid() != 0)
        return "not root (writing /proc/sys/kernel/ns_last_pid needs CAP_SYS_ADMIN)";
    g_nslp = open("/proc/sys/kernel/ns_last_pid", O_RDWR | O_CLOEXEC);
    if (g_nslp < 0)
        return "cannot open /proc/sys/kernel/ns_last_pid";
    return NULL;
}

/* A scripted target with pid want, or p.pid != want after 50 tries. */
static struct xp_proc spawn_with_pid(pid_t want, const char **why)
{
    struct xp_proc p = { 0, -1, -1 };
    for (int i = 0; i < 50; i++) {
        char buf[32];
        int n = snprintf(buf, sizeof buf, "%ld", (long)want - 1);
        flock(g_nslp, LOCK_EX);
        if (pwrite(g_nslp, buf, (size_t)n, 0) != n) {
            flock(g_nslp, LOCK_UN);
            *why = "cannot write /proc/sys/kernel/ns_last_pid";
            return p;
        }
        p = xp_spawn_target("B", NULL);
        flock(g_nslp, LOCK_UN);
        if (p.pid == want)
            return p;
        xp_finish(&p, "B(other pid)");
        close(p.to);
        close(p.from);
    }
    *why = "the kernel did not hand the pid out again in 50 tries";
    return p;
}

int main(void)
{
    tc_init();
    tc_alarm_watchdog(50); /* not tc_watchdog: see xproc.h */
    xp_role_add(getpid(), "C");
    const char *why = open_ns_last_pid();
    if (why != NULL) {
        printf("skip: %s\n", why);
        return 0;
    }
    struct xp_proc a = xp_spawn_target("A", NULL);
    trace_id_t s = xp_create(a.pid, 4 << 20, 0, 0, 0);
    CHECK(posix_trace_start(s));
    xp_cmd(&a, XP_REC, 10);
    xp_cmd(&a, XP_DONE, 0);
    struct xp_col cs;
    xp_col_init(&cs, s);
    xp_collect(&cs, "S", 1, 20000);
    xp_print(&cs, "S");
    xp_finish(&a, "A");

    why = NULL;
    struct xp_proc b = spawn_with_pid(a.pid, &why);
    if (why != NULL) {
        printf("skip: %s\n", why);
        CHECK(posix_trace_shutdown(s));
        return 0;
    }
    printf("B has A's pid=%d\n", b.pid == a.pid);
    xp_cmd(&b, XP_REC, 100);
    xp_cmd(&b, XP_DONE, 0);
    tc_sleep_ms(100);
    xp_col_init(&cs, s);
    xp_drain(&cs);
    xp_print(&cs, "S2");

    trace_id_t r = xp_create(b.pid, 4 << 20, 0, 0, 0);
    CHECK(posix_trace_start(r));
    xp_cmd(&b, XP_REC, 100);
    xp_cmd(&b, XP_DONE, 0);
    xp_read_stop_print(r, "R", 1, 20000);
    CHECK(posix_trace_shutdown(r));

    CHECK(posix_trace_stop(s));
    xp_col_init(&cs, s);
    xp_drain(&cs);
    xp_print(&cs, "S3");
    CHECK(posix_trace_shutdown(s));
    xp_finish(&b, "B");
    return 0;
}
