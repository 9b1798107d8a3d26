/*
 * t052_xproc_exec: the program other cross-process tests exec (it is linked
 * with libposixtrace, so a traced process that execs it keeps being traced).
 *
 *   t052_xproc_exec target ROLE INFD OUTFD   the scripted target of xproc.h
 *                                            (xp_target_loop) on these pipes
 *   t052_xproc_exec tree ROLE                records "tree/exec", "tree/common",
 *                                            "tree/c1"; forks C3, which opens
 *                                            "tree/c3" first, records it and
 *                                            "tree/common" and "xp/done"; then
 *                                            "xp/done"; exit status 0 when C3's was
 *   t052_xproc_exec cfc ROLE                 records "cfc/exec" and "xp/done"
 *   t052_xproc_exec launch ROLE              records "launch/main" and "xp/done"
 *
 * In every mode except target, a constructor records "exec/ctor" (seq 0) as
 * the program's first action, before main().
 */
#include "xproc.h"

static const char *g_role = "E";

__attribute__((constructor)) static void first_action(int argc, char **argv)
{
    if (argc < 3 || strcmp(argv[1], "target") == 0)
        return;
    g_role = argv[2];
    trace_event_id_t id;
    if (posix_trace_eventid_open("exec/ctor", &id) == 0)
        xp_rec(id, "exec/ctor", g_role, 0, 0);
}

static void rec_name(const char *name, const char *role)
{
    xp_rec(tc_open(name), name, role, 0, 0);
}

static int mode_tree(void)
{
    rec_name("tree/exec", g_role);
    rec_name("tree/common", g_role);
    rec_name("tree/c1", g_role);
    fflush(stdout);
    pid_t c3 = fork();
    TC_ASSERT(c3 >= 0);
    if (c3 == 0) {
        tc_alarm_watchdog(30);
        rec_name("tree/c3", "C3");
        rec_name("tree/common", "C3");
        rec_name("xp/done", "C3");
        exit(0);
    }
    int st = xp_wait(c3, 20000);
    rec_name("xp/done", g_role);
    return xp_status_code(st);
}

int main(int argc, char **argv)
{
    tc_init();
    tc_alarm_watchdog(40);
    if (argc < 3)
        return 2;
    if (strcmp(argv[1], "target") == 0 && argc > 4)
        return xp_target_loop(argv[2], atoi(argv[3]), atoi(argv[4]), 30000);
    if (strcmp(argv[1], "tree") == 0)
        return mode_tree();
    if (strcmp(argv[1], "cfc") == 0) {
        rec_name("cfc/exec", g_role);
        rec_name("xp/done", g_role);
        return 0;
    }
    if (strcmp(argv[1], "launch") == 0) {
        rec_name("launch/main", g_role);
        rec_name("xp/done", g_role);
        return 0;
    }
    printf("t052: unknown mode %s\n", argv[1]);
    return 2;
}
