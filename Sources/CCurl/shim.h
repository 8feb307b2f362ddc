/*
 * libcurl for HTTPUpload, the only module that imports it, opened with dlopen on first use instead of linked.
 * Linked, it and the ~30 libraries it needs (GnuTLS, Kerberos, LDAP, nghttp2 …) were mapped and relocated at
 * every start of lodestar (with libmosquitto, 8,800 of its 12,245 symbol relocations and some 6 MB resident),
 * though only a configured Traccar uploader uses it; so curl.h is here for types and constants only, and
 * HTTPUpload calls the ccurl_ functions below, which call through a table that ccurl_load_soname fills with
 * dlsym (Sources/CDynamicLibrary/dynamic_library.h, shared with CMosquitto).
 *
 * The package is Debian's libcurl4 (soname libcurl.so.4); dpkg-shlibdeps cannot see a dlopen, so lodestar's
 * .deb names it by hand.
 */
#ifndef LODESTAR_CCURL_SHIM_H
#define LODESTAR_CCURL_SHIM_H

#include <curl/curl.h>

#include "../CDynamicLibrary/dynamic_library.h"

#define CCURL_SONAME "libcurl.so.4"

/* ccurl_load_soname's answers. */
#define CCURL_LOADED LODESTAR_DYNAMIC_LIBRARY_LOADED
#define CCURL_NO_LIBRARY LODESTAR_DYNAMIC_LIBRARY_MISSING
#define CCURL_NO_FUNCTION LODESTAR_DYNAMIC_LIBRARY_NO_FUNCTION

/* Every libcurl function HTTPUpload calls. */
#define CCURL_FUNCTIONS(X) \
    X(global_init) \
    X(easy_init) \
    X(easy_setopt) \
    X(easy_perform) \
    X(easy_getinfo) \
    X(easy_cleanup) \
    X(easy_strerror)

/* The loaded table (Sources/CDynamicLibrary/dynamic_library.h), typed as curl.h declares the functions;
 * curl_easy_setopt and curl_easy_getinfo stay variadic. */
typedef struct ccurl_functions {
    void *library;
#define CCURL_FIELD(name) __typeof__(&curl_##name) name;
    CCURL_FUNCTIONS(CCURL_FIELD)
#undef CCURL_FIELD
} ccurl_functions;

static inline const char *const *ccurl_symbols(size_t *count) {
    static const char *const symbols[] = {
#define CCURL_SYMBOL(name) "curl_" #name,
        CCURL_FUNCTIONS(CCURL_SYMBOL)
#undef CCURL_SYMBOL
    };
    _Static_assert(sizeof(ccurl_functions) == (1 + sizeof symbols / sizeof *symbols) * sizeof(void *),
        "ccurl_functions is a table of pointers");
    *count = sizeof symbols / sizeof *symbols;
    return symbols;
}

/* This object file's table, once loaded. */
static inline void *const **ccurl_table(void) {
    static void *const *table;
    return &table;
}

/*
 * Loads libcurl from `soname` (CCURL_SONAME; another name for tests) for the ccurl_ functions: CCURL_LOADED, or
 * CCURL_NO_LIBRARY / CCURL_NO_FUNCTION with dlerror's words in `error`. Safe to call again and from any thread;
 * once a table is in place a further call only checks that `soname` opens.
 */
static inline int ccurl_load_soname(const char *soname, char *error, size_t size) {
    size_t count;
    const char *const *symbols = ccurl_symbols(&count);
    return lodestar_dynamic_library_load(ccurl_table(), soname, symbols, count, error, size);
}

/* The table; HTTPUpload calls ccurl_load_soname before any other ccurl_ function, so failing here is a bug. */
static inline const ccurl_functions *ccurl_loaded(void) {
    size_t count;
    const char *const *symbols = ccurl_symbols(&count);
    return (const ccurl_functions *)lodestar_dynamic_library_table(
        ccurl_table(), CCURL_SONAME, symbols, count, "libcurl");
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
