/*
 * bench_syscalls: the cost the shim's system-call mode (posixtrace-run
 * --syscalls, issue 15) adds to each system call, next to the alternatives,
 * in one run (bench/README.md). A loop of N getppid system calls (made with
 * syscall(2), which no wrapper interposes), timed in child processes of this
 * program re-executed with BENCH_SC_MODE set, each pinned to one CPU:
 *   plain     no tracing                                     (the baseline)
 *   bare      Syscall User Dispatch with a handler of this program that only
 *             re-issues the call: the floor of any dispatch-based tracer
 *   syscalls  the shim, POSIXTRACE_SYSCALLS=1, a running stream of the
 *             process (LOOP, no reader: the recording thread's own cost)
 *   wrapper   the shim's wrapper of close(-1) recording into the same stream
 *             (the libc-level tracing, for comparison), less plain close(-1)
 *   strace    the plain loop under strace -f -qq -o /dev/null (its best case:
 *             pinned to the same CPU as the program)
 * Each is the best of 5 repetitions; printed: ns per call added to plain,
 * and the ratios syscalls / bare (target <= 1.5) and strace / syscalls
 * (target >= 6). POSIXTRACE_BENCH_SCALE multiplies the loop counts.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <trace.h>

#include "bench_util.h"

#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#ifndef PR_SET_SYSCALL_USER_DISPATCH
#define PR_SET_SYSCALL_USER_DISPATCH 59
#define PR_SYS_DISPATCH_ON 1
#endif

typedef long (*loop_fn)(void);

static long call_getppid(void)
{
    return syscall(SYS_getppid);
}

static long call_close(void)
{
    return close(-1);
}

/* ns per call, best of 5 */
static double run_loop(long n, loop_fn f)
{
    double best = 1e30;
    for (int rep = 0; rep < 5; rep++) {
        double t0 = bench_now();
        for (long i = 0; i < n; i++)
            (void)f();
        double t = (bench_now() - t0) * 1e9 / (double)n;
        if (t < best)
            best = t;
    }
    return best;
}

/* ---- the bare trap: its own allowed region (re-issue, restorer) ---- */
#if defined(__x86_64__)
long bench_reissue(long nr, long a0, long a1, long a2, long a3, long a4, long a5);
void bench_restorer(void);
extern const char bench_region_start[], bench_region_end[];
__asm__(".text\n.balign 64\n"
        "bench_region_start:\n"
        "bench_reissue:\n"
        "  movq %rdi, %rax\n  movq %rsi, %rdi\n  movq %rdx, %rsi\n  movq %rcx, %rdx\n"
        "  movq %r8, %r10\n  movq %r9, %r8\n  movq 8(%rsp), %r9\n  syscall\n  ret\n"
        "bench_restorer:\n  movq $15, %rax\n  syscall\n  hlt\n"
        "bench_region_end:\n");

static volatile unsigned char bare_sel;

static void bare_handler(int sig, siginfo_t *si, void *ucv)
{
    (void)sig;
    (void)si;
    bare_sel = 0;
    greg_t *g = ((ucontext_t *)ucv)->uc_mcontext.gregs;
    g[REG_RAX] = bench_reissue(g[REG_RAX], g[REG_RDI], g[REG_RSI], g[REG_RDX], g[REG_R10],
                               g[REG_R8], g[REG_R9]);
    bare_sel = 1;
}

static void bare_arm(void)
{
    struct {
        void *h;
        unsigned long flags;
        void *restorer;
        uint64_t mask;
    } sa = { (void *)bare_handler, SA_SIGINFO | SA_NODEFER | 0x04000000 /* SA_RESTORER */,
             (void *)bench_restorer, 0 };
    if (syscall(SYS_rt_sigaction, SIGSYS, &sa, NULL, 8) != 0 ||
        prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON, (uintptr_t)bench_region_start,
              (uintptr_t)(bench_region_end - bench_region_start), &bare_sel) != 0) {
        perror("bench_syscalls: Syscall User Dispatch");
        exit(3);
    }
}

static double bare(long n)
{
    bare_arm();
    bare_sel = 1;
    double t = run_loop(n, call_getppid);
    bare_sel = 0;
    return t;
}
#else
static double bare(long n)
{
    (void)n;
    exit(3);
}
#endif

static double recording(long n, loop_fn f)
{
    trace_attr_t a;
    trace_id_t trid;
    BENCH_CHECK(posix_trace_attr_init(&a));
    BENCH_CHECK(posix_trace_attr_setstreamsize(&a, (size_t)32 << 20));
    BENCH_CHECK(posix_trace_create(0, &a, &trid));
    BENCH_CHECK(posix_trace_start(trid));
    double t = run_loop(n, f);
    BENCH_CHECK(posix_trace_shutdown(trid));
    return t;
}

static int child_main(const char *mode, long n)
{
    double t = strcmp(mode, "bare") == 0       ? bare(n)
             : strcmp(mode, "syscalls") == 0   ? recording(n, call_getppid)
             : strcmp(mode, "wrapper") == 0    ? recording(n, call_close)
             : strcmp(mode, "plainclose") == 0 ? run_loop(n, call_close)
                                               : run_loop(n, call_getppid);
    printf("%.3f\n", t);
    return 0;
}

/* ---- the parent ---- */
static char self[4096];

/* the children run on one CPU (strace, a prefix, with its tracee) */
static void pin(void)
{
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(0, &one);
    (void)sched_setaffinity(0, sizeof one, &one);
}

/* ns per call in a child running `mode` (under pre[] if given); < 0: failed */
static double measure(const char *mode, long n, char *const pre[], const char *preload, int sc)
{
    char m[64], nb[64], pl[4200], on[] = "POSIXTRACE_SYSCALLS=1";
    snprintf(m, sizeof m, "BENCH_SC_MODE=%s", mode);
    snprintf(nb, sizeof nb, "BENCH_SC_N=%ld", n);
    snprintf(pl, sizeof pl, "LD_PRELOAD=%s", preload != NULL ? preload : "");
    char *env[5] = { m, nb, NULL, NULL, NULL };
    int k = 2;
    if (preload != NULL)
        env[k++] = pl;
    if (sc)
        env[k++] = on;
    return bench_child(self, env, pre, pin);
}

int main(void)
{
    const char *mode = getenv("BENCH_SC_MODE");
    if (mode != NULL)
        return child_main(mode, atol(getenv("BENCH_SC_N")));
    char shim[4096];
    if (bench_paths(self, sizeof self, shim, sizeof shim) != 0)
        return 1;
    long n = (long)(100000 * bench_scale());
    double plain = 1e30, pclose = 1e30, bt = 1e30, sc = 1e30, wr = 1e30;
    for (int round = 0; round < 3; round++) { /* alternating: noise hits all alike */
        double v;
        if ((v = measure("plain", n, NULL, NULL, 0)) >= 0 && v < plain) plain = v;
        if ((v = measure("plainclose", n, NULL, NULL, 0)) >= 0 && v < pclose) pclose = v;
        if ((v = measure("bare", n, NULL, NULL, 0)) >= 0 && v < bt) bt = v;
        if ((v = measure("syscalls", n, NULL, shim, 1)) >= 0 && v < sc) sc = v;
        if ((v = measure("wrapper", n, NULL, shim, 0)) >= 0 && v < wr) wr = v;
    }
    char *strace[] = { "strace", "-f", "-qq", "-o", "/dev/null", NULL };
    double st = measure("plain", n / 10 > 0 ? n / 10 : 1, strace, NULL, 0);
    if (bt >= 1e30 || sc >= 1e30) {
        fprintf(stderr, "bench_syscalls: Syscall User Dispatch unavailable (Linux >= 5.11, "
                        "x86-64): nothing measured\n");
        return 0;
    }
    printf("getppid loop, %ld calls, one CPU, ns per call added to plain (%.1f ns):\n", n, plain);
    printf("  bare dispatch trap (re-issue only) %8.1f\n", bt - plain);
    printf("  shim --syscalls, recording         %8.1f  (%.2f x the bare trap; target <= 1.5)\n",
           sc - plain, (sc - plain) / (bt - plain));
    printf("  shim wrapper close(-1), recording  %8.1f\n", wr - pclose);
    if (st >= 0)
        printf("  strace -f, pinned                  %8.1f  (%.1f x shim --syscalls; target >= 6)\n",
               st - plain, (st - plain) / (sc - plain));
    else
        printf("  strace -f: not run (not installed?)\n");
    return 0;
}
