/*
 * A shared library whose constructor reads a file before main (as
 * libselinux's reads /proc/filesystems): the file named by $T140_FILE,
 * opened, 4 bytes read, closed. Linked into t140_ctor (issue 18 item a:
 * these calls come after the image's process_start).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

int t140_ctor_read;

__attribute__((constructor)) static void t140_ctor(void)
{
    const char *path = getenv("T140_FILE");
    char b[4];
    if (path == NULL)
        return;
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return;
    t140_ctor_read = (int)read(fd, b, sizeof b);
    close(fd);
}
