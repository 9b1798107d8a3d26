/* Calls cos(0.5 + i) and sin(0.5) n times (argv[1], default 3) and
 * abs(-1000003 * n) through the PLT (tests/probe/test_probes.py probes
 * them; abs as 'str' shows that an invalid pointer is read safely). Prints
 * the results: the same with and without probes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 3;
    double s = 0;
    volatile double x = 0.5;
    for (int i = 0; i < n; i++)
        s += cos(x + i) + sin(x);
    printf("%.6f %d\n", s, abs(-1000003 * n));
    return n == 7 ? 3 : 0;
}
