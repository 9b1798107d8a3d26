/*
 * A program that links libposixtrace and reads a file its user may not
 * read, installed set-user-ID root by tests/xproc/test_untraced.py: it records the
 * file's content as a user event ("t108/secret") into whatever streams it
 * joined, prints "read=N" and exits with status 7.
 *
 *   t108_setuid FILE
 */
#include <fcntl.h>
#include <stdio.h>
#include <trace.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: t108_setuid FILE\n");
        return 2;
    }
    char buf[256];
    int fd = open(argv[1], O_RDONLY);
    ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf);
    if (n < 0) {
        perror(argv[1]);
        return 1;
    }
    trace_event_id_t id;
    if (posix_trace_eventid_open("t108/secret", &id) == 0)
        posix_trace_event(id, buf, (size_t)n);
    printf("read=%zd\n", n);
    return 7;
}
