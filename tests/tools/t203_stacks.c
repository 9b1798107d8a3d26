/*
 * A program whose call stacks tests/tools/test_tools_stacks.py checks: open()
 * called from a function inlined into leaf(), called by middle(), from main
 * and from a thread; it prints the descriptor open() returned. The test
 * compiles it itself (gcc -g), and again with -DCHANGED (a function added
 * before the others: the same names at other addresses, another build id).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#ifdef CHANGED
__attribute__((noinline)) int other_function(int x)
{
    volatile int v[64];
    for (int i = 0; i < 64; i++)
        v[i] = x * i;
    return v[x & 63] + v[(x + 7) & 63];
}
#endif

static inline __attribute__((always_inline)) int open_inlined(const char *path)
{
    return open(path, O_RDONLY);
}

__attribute__((noinline)) int leaf(const char *path)
{
    int fd = open_inlined(path);
    __asm__ volatile("" ::: "memory");
    return fd;
}

__attribute__((noinline)) int middle(const char *path)
{
    int fd = leaf(path);
    __asm__ volatile("" ::: "memory");
    return fd;
}

static void *thread_main(void *arg)
{
    close(middle(arg));
    return NULL;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "/dev/null";
    int fd = middle(path);
    printf("%d\n", fd);
    fflush(stdout);
    close(fd);
    pthread_t t;
    if (pthread_create(&t, NULL, thread_main, (void *)path) != 0 || pthread_join(t, NULL) != 0)
        return 1;
#ifdef CHANGED
    return other_function(argc) == -1;
#endif
    return 0;
}
