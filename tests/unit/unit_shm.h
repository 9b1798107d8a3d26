/*
 * unit_shm.h - a stream's shared layout in private memory for the unit tests
 * of the pool and the chunk chain: the header, the writer slots and nchunks
 * chunks of chunk_size bytes (shm_layout.h), all zero, the pool initialized.
 * Include after libtrace's internal.h.
 */
#ifndef POSIXTRACE_UNIT_SHM_H
#define POSIXTRACE_UNIT_SHM_H

#include <sys/mman.h>

/* The chunks end where an inaccessible page starts: reading a chunk past
 * the last one faults at once instead of reading something. */
static inline struct pt_shm *ut_shm_new(uint32_t nchunks, uint32_t chunk_size)
{
    size_t chunks = (size_t)nchunks * chunk_size;
    size_t min_off = PT_SLOTS_OFF + PT_NSLOTS * sizeof(struct pt_slot);
    size_t size = (min_off + chunks + 4095) / 4096 * 4096;
    char *m = mmap(NULL, size + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED || mprotect(m + size, 4096, PROT_NONE) != 0) {
        perror("mmap");
        exit(2);
    }
    struct pt_shm *s = (struct pt_shm *)m;
    s->chunk_size = chunk_size;
    s->nchunks = nchunks;
    s->slots_off = PT_SLOTS_OFF;
    s->chunks_off = size - chunks; /* a multiple of 64: chunk sizes are */
    s->names_off = s->chunks_off;  /* no names table: nothing here reads one */
    s->total_size = size;
    s->nslots = PT_NSLOTS;
    s->cap = chunks;
    for (uint32_t i = 0; i < nchunks; i++)
        atomic_store(&pt_chunk(s, i)->next, PT_NONE);
    for (uint32_t i = 0; i < PT_NSLOTS; i++)
        atomic_store(&pt_slots(s)[i].rhead, PT_NONE);
    pt_pool_init(s);
    return s;
}

static inline void ut_shm_free(struct pt_shm *s)
{
    munmap(s, s->total_size + 4096);
}

#endif
