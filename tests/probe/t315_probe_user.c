/* Records a user event "probe/mark" (data: int i) with posix_trace_event and
 * calls cos(0.5 + i) through the PLT, n times (argv[1], default 3); prints
 * the sum. Linked with libposixtrace: <trace.h>'s posix_trace_event reads the
 * want table inline, so the program holds its own copy of it (a copy
 * relocation), which the probes must read too (tests/probe/test_probes.py). */
#include <trace.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 3;
    trace_event_id_t mark;
    if (posix_trace_eventid_open("probe/mark", &mark) != 0)
        return 2;
    double s = 0;
    volatile double x = 0.5;
    for (int i = 0; i < n; i++) {
        posix_trace_event(mark, &i, sizeof i);
        s += cos(x + i);
    }
    printf("%.6f\n", s);
    return 0;
}
