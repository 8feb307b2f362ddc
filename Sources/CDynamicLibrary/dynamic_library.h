/*
 * Opening a C library with dlopen on first use and calling it through a table of its functions: the loader that
 * Sources/CCurl/shim.h and Sources/CMosquitto/shim.h share (the first says why they are not linked). Each shim
 * includes this file by its path and keeps only its own list of functions and its typed calls.
 *
 * A table is an array of pointers: slot 0 holds dlopen's handle, slot 1 + i the function named symbols[i]. A
 * shim reads it through a struct of the same layout, a `void *` then one typed function pointer per symbol
 * (POSIX makes function pointers and `void *` the same size, which dlsym needs; each shim checks the size).
 *
 * Static inline, as the shims are: every object file has its own copy and its own table pointer. Loading is
 * idempotent (dlopen of a loaded library returns it again) and race-free (a table is published with one
 * compare-and-swap), so a copy whose table is still empty fills it on its first call.
 */
#ifndef LODESTAR_DYNAMIC_LIBRARY_H
#define LODESTAR_DYNAMIC_LIBRARY_H

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

/* lodestar_dynamic_library_load's answers. */
#define LODESTAR_DYNAMIC_LIBRARY_LOADED 0
#define LODESTAR_DYNAMIC_LIBRARY_MISSING 1
#define LODESTAR_DYNAMIC_LIBRARY_NO_FUNCTION 2

static inline void lodestar_dynamic_library_error(char *error, size_t size) {
    const char *text = dlerror();
    snprintf(error, size, "%s", text != NULL ? text : "unknown dlopen error");
}

/*
 * Opens `soname` and resolves the `count` functions named in `symbols` into a new table, published in `*table`
 * unless one is there already (then the new one is dropped: this was a check, or another thread was first, and
 * the library stays loaded through the first table's handle). LOADED, or MISSING / NO_FUNCTION with dlerror's
 * words in `error`.
 */
static inline int lodestar_dynamic_library_load(
    void *const **table, const char *soname, const char *const *symbols, size_t count, char *error, size_t size) {
    void *library = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        lodestar_dynamic_library_error(error, size);
        return LODESTAR_DYNAMIC_LIBRARY_MISSING;
    }
    void **opened = malloc((count + 1) * sizeof *opened);
    if (opened == NULL) abort(); /* as Swift does when out of memory */
    opened[0] = library;
    for (size_t index = 0; index < count; index++) {
        if ((opened[index + 1] = dlsym(library, symbols[index])) == NULL) {
            lodestar_dynamic_library_error(error, size);
            dlclose(library);
            free(opened);
            return LODESTAR_DYNAMIC_LIBRARY_NO_FUNCTION;
        }
    }
    void *const *expected = NULL;
    if (!__atomic_compare_exchange_n(table, &expected, (void *const *)opened, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        dlclose(library);
        free(opened);
    }
    return LODESTAR_DYNAMIC_LIBRARY_LOADED;
}

/*
 * The table, loaded from `soname` if this object file's copy is still empty. The module above a shim loads the
 * library (and reports a failure) before it calls anything else, so failing here is a bug: it aborts, naming
 * `library`.
 */
static inline void *const *lodestar_dynamic_library_table(
    void *const **table, const char *soname, const char *const *symbols, size_t count, const char *library) {
    void *const *loaded = __atomic_load_n(table, __ATOMIC_ACQUIRE);
    if (loaded != NULL) return loaded;
    char error[256];
    if (lodestar_dynamic_library_load(table, soname, symbols, count, error, sizeof error)
        != LODESTAR_DYNAMIC_LIBRARY_LOADED) {
        fprintf(stderr, "%s used before it was loaded: %s\n", library, error);
        abort();
    }
    return __atomic_load_n(table, __ATOMIC_ACQUIRE);
}

#endif
