/*
 * t305_geometry: a stream's geometry (libtrace/ring/shm.c, pt_geometry;
 * doc/design.md "Geometry") from its attributes: the chunk size, a page
 * doubled while less than stream-min-size / 1024, up to 64 KiB, and further
 * only to hold two of the largest records; the number of chunks, enough for
 * the cap, the 256 slots' open chunks and the chunks the consumer keeps
 * cooling (min(2 MiB, cap / 4) of them); the least log size that follows
 * (posixtrace_attr_getminlogsize: the header and 8 chunks). Prints one line
 * per case and a summary; exits 1 if a check failed.
 */
#include "unit.h"

#include "internal.h" /* libtrace's (-I libtrace: tests/unit/local.mk) */
#include <posixtrace/control.h>

/* The geometry of a stream of `size` bytes and max-data-size `md`. */
static struct pt_geometry geo(size_t size, size_t md, size_t *minlog)
{
    trace_attr_t a;
    struct pt_geometry g;
    if (posix_trace_attr_init(&a) != 0 || posix_trace_attr_setstreamsize(&a, size) != 0 ||
        posix_trace_attr_setmaxdatasize(&a, md) != 0 ||
        posixtrace_attr_getminlogsize(&a, minlog) != 0)
        exit(2);
    pt_geometry(&a, &g);
    return g;
}

/* The chunk count the design gives, worked out here on its own:
 * ceil(cap / usable) + 256 + 1 + cool. */
static uint64_t chunks_for(uint64_t size, uint32_t cs, uint32_t md)
{
    uint64_t budget = 48 + (md > 1024 ? (md + 3) / 4 * 4 : 1024); /* recfmt.h, internal.h */
    uint64_t room = cs - 64 - 16, usable = room - budget;
    uint64_t cap = size > room ? size : room;
    uint64_t cool = (cap / 4 < (2u << 20) ? cap / 4 : (2u << 20)) / cs;
    return (cap + usable - 1) / usable + 256 + 1 + cool;
}

/* Streams up to 4 MiB keep 4 KiB chunks; bigger ones have chunks of 1/1024
 * of their size, up to 64 KiB (two writers then switch chunks every 1300
 * 16-byte events, not every 80: the pool's line is not what they wait on). */
static void chunk_grows_with_the_stream(void)
{
    static const struct { size_t size; uint32_t cs; } t[] = {
        { 4096, 4096 }, { 1 << 20, 4096 }, { 4 << 20, 4096 }, { (4 << 20) + 1024, 8192 },
        { 8 << 20, 8192 }, { 16 << 20, 16384 }, { 33 << 20, 65536 }, { 64 << 20, 65536 },
        { (size_t)1 << 30, 65536 },
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        size_t minlog;
        struct pt_geometry g = geo(t[i].size, 256, &minlog);
        UT_EQ(g.chunk_size, t[i].cs);
        UT_EQ(g.nchunks, chunks_for(t[i].size, t[i].cs, 256));
        UT_EQ(minlog, 4096 + 8 * (size_t)t[i].cs);
    }
}

/* A big max-data-size still makes the chunk hold two of its records, at
 * any stream size. */
static void chunk_holds_two_records(void)
{
    size_t minlog;
    struct pt_geometry g = geo(1 << 20, 65536, &minlog);
    UT_EQ(g.chunk_size, 262144);
    UT_EQ(g.nchunks, chunks_for(1 << 20, 262144, 65536));
    g = geo((size_t)1 << 30, 65536, &minlog);
    UT_EQ(g.chunk_size, 262144);
    UT_EQ(minlog, 4096 + 8 * 262144);
    g = geo(64 << 20, 4096, &minlog); /* 2 * (4096 + 48) + 80 fits in 16 KiB; 64 KiB by size */
    UT_EQ(g.chunk_size, 65536);
}

/* The cooling chunks: a quarter of the cap in small streams (a 64 KiB one:
 * 4 chunks more), 2 MiB from an 8 MiB stream on; the geometry and the
 * consumer (pt_cool_chunks) agree. */
static void cooling_chunks(void)
{
    UT_EQ(pt_cool_chunks(64 << 10, 4096), 4);
    UT_EQ(pt_cool_chunks(1 << 20, 4096), 64);
    UT_EQ(pt_cool_chunks(8 << 20, 8192), 256);
    UT_EQ(pt_cool_chunks(64 << 20, 65536), 32);
    UT_EQ(pt_cool_chunks((uint64_t)1 << 30, 65536), 32);
    UT_EQ(pt_cool_chunks(4016, 4096), 0);
    UT_CHECK(pt_cool_chunks(1 << 20, 4096) <= PT_COOL_MAX);
}

int main(void)
{
    ut_watchdog(60);
    UT_RUN(chunk_grows_with_the_stream);
    UT_RUN(chunk_holds_two_records);
    UT_RUN(cooling_chunks);
    return ut_end("t305_geometry");
}
