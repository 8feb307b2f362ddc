/*
 * glibc's allocator settings (malloc.h is not in Swift's Glibc module). Only SystemInterface imports this.
 */
#ifndef LODESTAR_MALLOC_SHIM_H
#define LODESTAR_MALLOC_SHIM_H

#include <malloc.h>

/* Fixes the size from which blocks the arena has no room for are mapped on their own (and unmapped when
 * freed). glibc otherwise raises it to the size of each mapped block freed, after which blocks that size stay
 * in a thread's arena. 1 when set, 0 when glibc refused. */
static inline int lodestar_malloc_fix_mmap_threshold(int bytes) {
    return mallopt(M_MMAP_THRESHOLD, bytes);
}

#endif
