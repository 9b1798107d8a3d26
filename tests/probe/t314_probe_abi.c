/* Calls each function of t314_abi_lib (linked, through the PLT) and prints
 * the results: the same with and without probes (test_probes.py). */
#include <stdio.h>

long t314_mix(int a, double x, unsigned char b, double y, long c, short d);
double t314_dbl(double a, int b, double c, double e, double f, double g, double h);
int t314_seven(int a, int b, int c, int d, int e, int f, int g);
float t314_float(float x, int k);
signed char t314_neg(int x);
unsigned short t314_u16(unsigned short x);
const char *t314_str(const char *s, int skip);

int main(void)
{
    printf("%ld\n", t314_mix(-7, 1.5, 200, 2.25, 123456789012L, -3));
    printf("%.4f\n", t314_dbl(1, 2, 3, 5, 6, 7, 8));
    printf("%d\n", t314_seven(1, 2, 3, 4, 5, 6, 7));
    printf("%.4f\n", (double)t314_float(1.25f, 3));
    printf("%d\n", t314_neg(100));
    printf("%u\n", t314_u16(65534));
    printf("%s\n", t314_str("probe forwarding", 6));
    return 0;
}
