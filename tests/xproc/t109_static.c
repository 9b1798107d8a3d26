/*
 * A statically linked program (tests/xproc/test_untraced.py builds it with
 * -static): the shim cannot be preloaded into it. Prints "static" and exits
 * with status 5.
 */
#include <stdio.h>

int main(void)
{
    puts("static");
    return 5;
}
