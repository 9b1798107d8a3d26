/*
 * Copying the few bytes of an event's data without a call, shared by the
 * recording path (record.c), the log packer (logpack.h) and the shim
 * (preload/payload.c). GCC expands a variable-size memcpy inline as a
 * `rep movsq`, which costs tens of cycles to start; 16-byte moves (the last
 * one overlapping) do a short copy in a few, a call to the C library's
 * memcpy costs more up to 128 bytes (a shim payload is 40 to 100). Longer
 * copies go to the C library (pt_copy_small). Never reads past src + n.
 */
#ifndef PT_COPY_SMALL_H
#define PT_COPY_SMALL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The same without a call at any length (16 bytes a move past 16): for a
 * path that must stay a leaf, record.c's straight path, whose data is at
 * most max-data-size (64 KiB) and mostly a few dozen bytes. */
static inline void pt_copy_inline(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    if (__builtin_expect(n >= 16, 1)) {
        struct { uint64_t a, b; } w; /* one 16-byte move (SSE2) */
        for (size_t i = 0; i + 16 < n; i += 16) {
            __builtin_memcpy(&w, s + i, 16);
            __builtin_memcpy(d + i, &w, 16);
        }
        __builtin_memcpy(&w, s + n - 16, 16);
        __builtin_memcpy(d + n - 16, &w, 16);
    } else if (n >= 8) {
        uint64_t a, b;
        __builtin_memcpy(&a, s, 8);
        __builtin_memcpy(&b, s + n - 8, 8);
        __builtin_memcpy(d, &a, 8);
        __builtin_memcpy(d + n - 8, &b, 8);
    } else if (n >= 4) {
        uint32_t a, b;
        __builtin_memcpy(&a, s, 4);
        __builtin_memcpy(&b, s + n - 4, 4);
        __builtin_memcpy(d, &a, 4);
        __builtin_memcpy(d + n - 4, &b, 4);
    } else {
        for (size_t i = 0; i < n; i++)
            d[i] = s[i];
    }
}

static inline void pt_copy_small(void *dst, const void *src, size_t n)
{
    if (n > 128)
        memcpy(dst, src, n);
    else
        pt_copy_inline(dst, src, n);
}

#endif
