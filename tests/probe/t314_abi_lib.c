/* A library of prototypes that exercise how a probe calls the function
 * (audit/forward.c): integers of every width interleaved with doubles,
 * six doubles around an integer, a seventh integer (on the stack), floats,
 * small signed and unsigned results. Built by tests/probe/test_probes.py,
 * linked by t314_probe_abi. Each result depends on every argument. */
long t314_mix(int a, double x, unsigned char b, double y, long c, short d)
{
    return a * 1000000L + (long)(x * 1000) + b * 10000L + (long)(y * 100) + c + d;
}

double t314_dbl(double a, int b, double c, double e, double f, double g, double h)
{
    return a + b * 0.5 + c * 2 + e * 3 + f * 4 + g * 5 + h * 6;
}

int t314_seven(int a, int b, int c, int d, int e, int f, int g)
{
    return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g;
}

float t314_float(float x, int k)
{
    return x * (float)k;
}

signed char t314_neg(int x)
{
    return (signed char)-x;
}

unsigned short t314_u16(unsigned short x)
{
    return (unsigned short)(x + 1);
}

const char *t314_str(const char *s, int skip)
{
    return s + skip;
}
