/*
 * glibc's posix_spawn extension that closes every descriptor from a number up (glibc 2.34 and later; Debian
 * bookworm has 2.36). spawn.h declares it only under _GNU_SOURCE, which Swift's Glibc module is built without.
 * Only SystemInterface imports this.
 */
#ifndef LODESTAR_SPAWN_SHIM_H
#define LODESTAR_SPAWN_SHIM_H

#include <spawn.h>

extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);

/* Adds to `actions` the closing of every descriptor from `from` up in the child. 0 on success, else an errno. */
static inline int lodestar_spawn_close_from(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

#endif
