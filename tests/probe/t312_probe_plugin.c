/* A library that tests/probe/t313_probe_dlopen opens with dlopen: its
 * function calls cos through its own PLT. */
#include <math.h>

double t312_scale(double x, int k)
{
    return cos(x) * k;
}
