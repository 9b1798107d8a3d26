/*
 * Copying the few bytes of an event's data without a call, shared by the
 * recording path (record.c), the log packer (logpack.h) and the shim
 * (preload/payload.c). GCC expands a variable-size memcpy inline as a
 * `rep movsq`, which costs tens of cycles to start; 8-byte moves (the last
 * one overlapping) do a short copy in a few. Longer copies go to the C
 * library. Never reads past src + n.
 */
#ifndef PT_COPY_SMALL_H
#define PT_COPY_SMALL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline void pt_copy_small(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    if (n > 64) {
        memcpy(d, s, n);
    } else if (n >= 8) {
        uint64_t w;
        for (size_t i = 0; i + 8 < n; i += 8) {
            __builtin_memcpy(&w, s + i, 8);
            __builtin_memcpy(d + i, &w, 8);
        }
        __builtin_memcpy(&w, s + n - 8, 8);
        __builtin_memcpy(d + n - 8, &w, 8);
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

#endif
