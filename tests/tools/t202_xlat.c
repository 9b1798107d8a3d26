/*
 * t202_xlat: the generated decoding tables of the tools (tools/xlat.h,
 * from tools/xlat/<set>.in) against the system headers this program is
 * compiled with and against glibc's own names (strerrorname_np, sigabbrev_np).
 * Prints one line per check ("name: ok" or "name: FAIL ..."), exits 1 if
 * any failed.
 */
#include "xlat.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>

static int failed;

static void check_str(const char *what, const char *got, const char *want)
{
    int ok = got != NULL && want != NULL ? strcmp(got, want) == 0 : got == want;
    if (ok)
        printf("%s: ok\n", what);
    else
        printf("%s: FAIL got %s, want %s\n", what, got ? got : "(null)", want ? want : "(null)");
    failed |= !ok;
}

static void check_flags(const char *what, const struct pt_xlat *t, uint64_t v, const char *want)
{
    char b[256];
    check_str(what, pt_xlat_flags(b, sizeof b, t, v), want);
}

/* Every errno glibc names has that name in the table, and no other. */
static void errnos(void)
{
    int bad = 0, n = 0;
    for (int e = 1; e < 4096; e++) {
        const char *g = strerrorname_np(e), *t = pt_xlat_name(pt_xlat_errnos, (uint64_t)e);
        n += g != NULL;
        if ((g == NULL) != (t == NULL) || (g != NULL && strcmp(g, t) != 0)) {
            printf("errno %d: glibc %s, table %s\n", e, g ? g : "-", t ? t : "-");
            bad = 1;
        }
    }
    check_str("errnos as strerrorname_np", bad ? "differ" : "same", "same");
    check_str("errnos named", n > 100 ? "many" : "few", "many");
}

static void signals(void)
{
    int bad = 0;
    char b[32];
    for (int s = 1; s < 32; s++) { /* 32.. are real-time signals */
        const char *a = sigabbrev_np(s), *t = pt_xlat_name(pt_xlat_signals, (uint64_t)s);
        snprintf(b, sizeof b, "SIG%s", a ? a : "?");
        if (a == NULL || t == NULL || strcmp(b, t) != 0) {
            printf("signal %d: glibc %s, table %s\n", s, b, t ? t : "-");
            bad = 1;
        }
    }
    check_str("signals as sigabbrev_np", bad ? "differ" : "same", "same");
}

int main(void)
{
    errnos();
    signals();
    /* O_LARGEFILE is 0 on 64-bit systems: never shown */
    check_flags("O_LARGEFILE|O_CLOEXEC", pt_xlat_open_flags, O_LARGEFILE | O_CLOEXEC,
                O_LARGEFILE != 0 ? "O_LARGEFILE|O_CLOEXEC" : "O_CLOEXEC");
    check_flags("O_SYNC (multi-bit)", pt_xlat_open_flags, O_SYNC, "O_SYNC");
    check_flags("O_DSYNC", pt_xlat_open_flags, O_DSYNC, "O_DSYNC");
    check_flags("O_TMPFILE (multi-bit, first)", pt_xlat_open_flags, O_TMPFILE | O_EXCL,
                "O_TMPFILE|O_EXCL");
    check_flags("fd flags 0", pt_xlat_fd_flags, 0, "0");
    check_flags("fd flags unknown bit", pt_xlat_fd_flags, O_CLOEXEC | 4, "O_CLOEXEC|0x4");
    check_flags("WNOHANG", pt_xlat_wait_options, WNOHANG, "WNOHANG");
    check_flags("WNOHANG|WUNTRACED", pt_xlat_wait_options, WNOHANG | WUNTRACED,
                "WNOHANG|WUNTRACED");
    check_flags("SOCK_CLOEXEC", pt_xlat_sock_flags, SOCK_CLOEXEC, "SOCK_CLOEXEC");
    check_str("O_RDWR", pt_xlat_name(pt_xlat_open_access, O_RDWR), "O_RDWR");
    check_str("SOCK_DGRAM", pt_xlat_name(pt_xlat_sock_types, SOCK_DGRAM), "SOCK_DGRAM");
    check_str("AF_INET6", pt_xlat_name(pt_xlat_address_families, AF_INET6), "AF_INET6");
    check_str("SEEK_END", pt_xlat_name(pt_xlat_whence, SEEK_END), "SEEK_END");
    check_str("EAGAIN (not EWOULDBLOCK)", pt_xlat_name(pt_xlat_errnos, EWOULDBLOCK), "EAGAIN");
    check_str("unknown value", pt_xlat_name(pt_xlat_whence, 77), NULL);
    char small[8];
    check_str("cut to the buffer", pt_xlat_flags(small, sizeof small, pt_xlat_open_flags,
                                                 O_CREAT | O_EXCL), "O_CREAT");
    return failed;
}
