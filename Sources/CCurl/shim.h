/*
 * libcurl for HTTPUpload, the only module that imports it, opened with dlopen on first use instead of linked.
 * Linked, it and the ~30 libraries it needs (GnuTLS, Kerberos, LDAP, nghttp2 …) were mapped and relocated at
 * every start of lodestar (with libmosquitto, 8,800 of its 12,245 symbol relocations and some 6 MB resident),
 * though only a configured Traccar uploader uses it; so curl.h is here for types and constants only, and
 * HTTPUpload calls the ccurl_ functions below, which call through a table that ccurl_load fills with dlsym.
 *
 * The package is Debian's libcurl4 (soname libcurl.so.4); dpkg-shlibdeps cannot see a dlopen, so lodestar's
 * .deb names it by hand.
 *
 * Static inline in a header: every object file that calls these has its own copy, table included. Loading is
 * idempotent (dlopen of a loaded library returns it again) and race-free (a table is published with one
 * compare-and-swap), so a copy whose table is still empty fills it on its first call.
 */
#ifndef LODESTAR_CCURL_SHIM_H
#define LODESTAR_CCURL_SHIM_H

#include <curl/curl.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#define CCURL_SONAME "libcurl.so.4"

/* ccurl_load's answers. */
#define CCURL_LOADED 0
#define CCURL_NO_LIBRARY 1
#define CCURL_NO_FUNCTION 2

/* Every libcurl function HTTPUpload calls. */
#define CCURL_FUNCTIONS(X) \
    X(global_init) \
    X(easy_init) \
    X(easy_setopt) \
    X(easy_perform) \
    X(easy_getinfo) \
    X(easy_cleanup) \
    X(easy_strerror)

/* Typed as curl.h declares them; curl_easy_setopt and curl_easy_getinfo stay variadic. */
typedef struct ccurl_functions {
    void *library;
#define CCURL_FIELD(name) __typeof__(&curl_##name) name;
    CCURL_FUNCTIONS(CCURL_FIELD)
#undef CCURL_FIELD
} ccurl_functions;

/* This object file's table, once loaded. */
static inline const ccurl_functions **ccurl_table(void) {
    static const ccurl_functions *table;
    return &table;
}

static inline void ccurl_dlerror(char *error, size_t size) {
    const char *text = dlerror();
    snprintf(error, size, "%s", text != NULL ? text : "unknown dlopen error");
}

/* Opens `soname` and resolves every function into `functions`; CCURL_LOADED, or why not in `error`. */
static inline int ccurl_open(const char *soname, ccurl_functions *functions, char *error, size_t size) {
    void *library = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        ccurl_dlerror(error, size);
        return CCURL_NO_LIBRARY;
    }
    functions->library = library;
#define CCURL_RESOLVE(name) \
    if ((functions->name = (__typeof__(functions->name))dlsym(library, "curl_" #name)) == NULL) { \
        ccurl_dlerror(error, size); \
        dlclose(library); \
        return CCURL_NO_FUNCTION; \
    }
    CCURL_FUNCTIONS(CCURL_RESOLVE)
#undef CCURL_RESOLVE
    return CCURL_LOADED;
}

/*
 * Loads libcurl from `soname` (CCURL_SONAME; another name for tests) for the ccurl_ functions: CCURL_LOADED, or
 * CCURL_NO_LIBRARY / CCURL_NO_FUNCTION with dlerror's words in `error`. Safe to call again and from any thread;
 * once a table is in place a further call only checks that `soname` opens.
 */
static inline int ccurl_load_soname(const char *soname, char *error, size_t size) {
    ccurl_functions opened;
    int result = ccurl_open(soname, &opened, error, size);
    if (result != CCURL_LOADED) return result;
    ccurl_functions *table = malloc(sizeof *table);
    if (table == NULL) abort(); /* as Swift does when out of memory */
    *table = opened;
    const ccurl_functions *expected = NULL;
    if (!__atomic_compare_exchange_n(ccurl_table(), &expected, table, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        /* Another thread was first, or this was a check: the library stays loaded through its handle. */
        dlclose(table->library);
        free(table);
    }
    return CCURL_LOADED;
}

static inline int ccurl_load(char *error, size_t size) {
    return ccurl_load_soname(CCURL_SONAME, error, size);
}

/* The table; HTTPUpload calls ccurl_load before any other ccurl_ function, so failing here is a bug. */
static inline const ccurl_functions *ccurl_loaded(void) {
    const ccurl_functions *table = __atomic_load_n(ccurl_table(), __ATOMIC_ACQUIRE);
    if (table != NULL) return table;
    char error[256];
    if (ccurl_load(error, sizeof error) != CCURL_LOADED) {
        fprintf(stderr, "libcurl used before it was loaded: %s\n", error);
        abort();
    }
    return __atomic_load_n(ccurl_table(), __ATOMIC_ACQUIRE);
}

static inline CURLcode ccurl_global_init(long flags) {
    return ccurl_loaded()->global_init(flags);
}
static inline CURL *ccurl_easy_init(void) {
    return ccurl_loaded()->easy_init();
}
static inline CURLcode ccurl_easy_perform(CURL *handle) {
    return ccurl_loaded()->easy_perform(handle);
}
static inline void ccurl_easy_cleanup(CURL *handle) {
    ccurl_loaded()->easy_cleanup(handle);
}
static inline const char *ccurl_easy_strerror(CURLcode code) {
    return ccurl_loaded()->easy_strerror(code);
}

/* curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call: these fix the argument type of
 * each use. */
static inline CURLcode ccurl_setopt_long(CURL *handle, CURLoption option, long value) {
    return ccurl_loaded()->easy_setopt(handle, option, value);
}
static inline CURLcode ccurl_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return ccurl_loaded()->easy_setopt(handle, option, value);
}
static inline CURLcode ccurl_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return ccurl_loaded()->easy_setopt(handle, option, value);
}
static inline CURLcode ccurl_setopt_write_function(CURL *handle, size_t (*function)(char *, size_t, size_t, void *)) {
    return ccurl_loaded()->easy_setopt(handle, CURLOPT_WRITEFUNCTION, function);
}
static inline CURLcode ccurl_setopt_xferinfo_function(
    CURL *handle, int (*function)(void *, curl_off_t, curl_off_t, curl_off_t, curl_off_t)) {
    return ccurl_loaded()->easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, function);
}
static inline CURLcode ccurl_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return ccurl_loaded()->easy_getinfo(handle, info, value);
}

#endif
