/*
 * t140_ctor: linked with libt140ctor (t140_ctorlib.c), whose constructor
 * opens, reads and closes $T140_FILE before the shim's constructor runs;
 * main then writes what the constructor read ("ctor read N") to stdout
 * (tests/tools/test_tools_fds.py, the order of process_start).
 */
#include <stdio.h>

extern int t140_ctor_read;

int main(void)
{
    printf("ctor read %d\n", t140_ctor_read);
    return 0;
}
