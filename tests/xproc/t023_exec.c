/*
 * t023_exec: libposixtrace's own wrappers of execl, execlp and execle (the
 * library interposes the exec family: doc/semantics.md) pass the program its
 * arguments, and execle its environment, exactly. argv[1] names the
 * variant; each runs /usr/bin/env, which prints its environment, or, for
 * execl/execlp, `echo` of its arguments.
 */
#include "tcommon.h"

int main(int argc, char **argv)
{
    trace_event_id_t id;
    CHECK(posix_trace_eventid_open("t023", &id)); /* the library is in use */
    fflush(stdout);
    if (argc > 1 && strcmp(argv[1], "execle") == 0) {
        char *envp[] = { "PT_EXECLE=1", "PT_SECOND=two words", NULL };
        execle("/usr/bin/env", "env", (char *)NULL, envp);
    } else if (argc > 1 && strcmp(argv[1], "execl") == 0) {
        execl("/bin/echo", "echo", "a", "b c", (char *)NULL);
    } else if (argc > 1 && strcmp(argv[1], "execlp") == 0) {
        execlp("echo", "echo", "x", "", "y", (char *)NULL);
    }
    printf("exec failed: %s\n", strerror(errno));
    return 1;
}
