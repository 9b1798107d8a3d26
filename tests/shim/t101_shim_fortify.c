/*
 * t101_shim_fortify - built with -O2 -D_FORTIFY_SOURCE=2, so that the
 * compiler routes open/openat/read/pread/recv/recvfrom to glibc's checking
 * entry points (__open_2, __openat_2, __read_chk, __pread64_chk, __recv_chk,
 * __recvfrom_chk; tests/shim/test_shim_proc.py checks the imports with nm).
 * Run under the shim, it prints the recorded events (tests/shim/decode.c).
 * Usage: t101_shim_fortify <dir>
 */
#include "tcommon.h"

#include <fcntl.h>
#include <sys/socket.h>

trace_id_t td_start(int inherited);
void td_dump(trace_id_t trid);

#define NI __attribute__((noinline))

NI void sc_fortify(const char *dir)
{
    char path[600];
    snprintf(path, sizeof path, "%s/f", dir);
    volatile int wr = O_WRONLY | O_CREAT | O_TRUNC, rd = O_RDONLY;
    volatile size_t n = 3;
    int fd = open(path, wr, 0600);
    TC_ASSERT(write(fd, "fortified", 9) == 9);
    close(fd);
    fd = open(path, rd);
    char buf[16];
    TC_ASSERT(read(fd, buf, n) == 3);
    TC_ASSERT(pread(fd, buf, n, 4) == 3);
    close(fd);
    fd = openat(AT_FDCWD, path, rd);
    close(fd);
    int sv[2];
    TC_ASSERT(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) == 0);
    TC_ASSERT(write(sv[0], "abc", 3) == 3);
    TC_ASSERT(recv(sv[1], buf, n, 0) == 3);
    TC_ASSERT(write(sv[0], "def", 3) == 3);
    TC_ASSERT(recvfrom(sv[1], buf, n, 0, NULL, NULL) == 3);
    close(sv[0]);
    close(sv[1]);
}

int main(int argc, char **argv)
{
    tc_init();
    if (argc != 2)
        return 2;
    tc_watchdog(60);
    trace_id_t trid = td_start(0);
    sc_fortify(argv[1]);
    td_dump(trid);
    return 0;
}
