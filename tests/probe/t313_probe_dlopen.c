/* dlopen(argv[1]) (t312_probe_plugin's library), calls t312_scale(0.25, 3)
 * through dlsym and prints the result. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    void *h = dlopen(argc > 1 ? argv[1] : "libt312.so", RTLD_NOW);
    if (h == NULL) {
        fprintf(stderr, "%s\n", dlerror());
        return 1;
    }
    double (*f)(double, int) = (double (*)(double, int))dlsym(h, "t312_scale");
    if (f == NULL)
        return 1;
    printf("%.6f\n", f(0.25, 3));
    return dlclose(h);
}
