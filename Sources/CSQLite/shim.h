/*
 * SQLite 3 for LocationStore, the only module that imports it. Swift calls sqlite3.h's functions directly;
 * this header only turns the destructor macros, which Swift cannot import, into constants.
 */
#ifndef LODESTAR_CSQLITE_SHIM_H
#define LODESTAR_CSQLITE_SHIM_H

#include <sqlite3.h>

/* SQLITE_TRANSIENT is a cast of -1 to a function pointer: sqlite copies the bytes before the call returns. */
static inline sqlite3_destructor_type csqlite_transient(void) { return SQLITE_TRANSIENT; }

#endif
