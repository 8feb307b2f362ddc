/*
 * libmosquitto (the Eclipse Mosquitto client library) for MQTTUpload, the only module that imports it, opened
 * with dlopen on first use instead of linked. Linked, it and OpenSSL were mapped and relocated at every start of
 * lodestar (with libcurl, 8,800 of its 12,245 symbol relocations and some 6 MB resident), though only a
 * configured OwnTracks uploader uses it; so mosquitto.h is here for types and constants only, and MQTTUpload
 * calls the cmosquitto_ functions below, which call through a table that cmosquitto_load_soname fills with
 * dlsym (Sources/CDynamicLibrary/dynamic_library.h, shared with CCurl).
 *
 * The package is Debian's libmosquitto1 (soname libmosquitto.so.1); dpkg-shlibdeps cannot see a dlopen, so
 * lodestar's .deb names it by hand.
 */
#ifndef LODESTAR_CMOSQUITTO_SHIM_H
#define LODESTAR_CMOSQUITTO_SHIM_H

#include <mosquitto.h>

#include "../CDynamicLibrary/dynamic_library.h"

#define CMOSQUITTO_SONAME "libmosquitto.so.1"

/* cmosquitto_load_soname's answers. */
#define CMOSQUITTO_LOADED LODESTAR_DYNAMIC_LIBRARY_LOADED
#define CMOSQUITTO_NO_LIBRARY LODESTAR_DYNAMIC_LIBRARY_MISSING
#define CMOSQUITTO_NO_FUNCTION LODESTAR_DYNAMIC_LIBRARY_NO_FUNCTION

/* Every libmosquitto function MQTTUpload calls. */
#define CMOSQUITTO_FUNCTIONS(X) \
    X(lib_init) \
    X(strerror) \
    X(new) \
    X(destroy) \
    X(connect_callback_set) \
    X(publish_callback_set) \
    X(disconnect_callback_set) \
    X(log_callback_set) \
    X(int_option) \
    X(username_pw_set) \
    X(will_set) \
    X(tls_set) \
    X(tls_insecure_set) \
    X(connect_async) \
    X(publish) \
    X(loop) \
    X(disconnect) \
    X(socket)

/* The loaded table (Sources/CDynamicLibrary/dynamic_library.h), its functions named and typed as mosquitto.h
 * declares them (`new` alone is a C++ keyword). */
typedef struct cmosquitto_functions {
    void *library;
#define CMOSQUITTO_FIELD(name) __typeof__(&mosquitto_##name) mosquitto_##name;
    CMOSQUITTO_FUNCTIONS(CMOSQUITTO_FIELD)
#undef CMOSQUITTO_FIELD
} cmosquitto_functions;

static inline const char *const *cmosquitto_symbols(size_t *count) {
    static const char *const symbols[] = {
#define CMOSQUITTO_SYMBOL(name) "mosquitto_" #name,
        CMOSQUITTO_FUNCTIONS(CMOSQUITTO_SYMBOL)
#undef CMOSQUITTO_SYMBOL
    };
    _Static_assert(sizeof(cmosquitto_functions) == (1 + sizeof symbols / sizeof *symbols) * sizeof(void *),
        "cmosquitto_functions is a table of pointers");
    *count = sizeof symbols / sizeof *symbols;
    return symbols;
}

/* This object file's table, once loaded. */
static inline void *const **cmosquitto_table(void) {
    static void *const *table;
    return &table;
}

/*
 * Loads libmosquitto from `soname` (CMOSQUITTO_SONAME; another name for tests) for the cmosquitto_ functions:
 * CMOSQUITTO_LOADED, or CMOSQUITTO_NO_LIBRARY / CMOSQUITTO_NO_FUNCTION with dlerror's words in `error`. Safe to
 * call again and from any thread; once a table is in place a further call only checks that `soname` opens.
 */
static inline int cmosquitto_load_soname(const char *soname, char *error, size_t size) {
    size_t count;
    const char *const *symbols = cmosquitto_symbols(&count);
    return lodestar_dynamic_library_load(cmosquitto_table(), soname, symbols, count, error, size);
}

/* The table; MQTTUpload calls cmosquitto_load_soname before any other cmosquitto_ function, so failing here is a
 * bug. */
static inline const cmosquitto_functions *cmosquitto_loaded(void) {
    size_t count;
    const char *const *symbols = cmosquitto_symbols(&count);
    return (const cmosquitto_functions *)lodestar_dynamic_library_table(
        cmosquitto_table(), CMOSQUITTO_SONAME, symbols, count, "libmosquitto");
}

static inline int cmosquitto_lib_init(void) {
    return cmosquitto_loaded()->mosquitto_lib_init();
}
static inline const char *cmosquitto_strerror(int code) {
    return cmosquitto_loaded()->mosquitto_strerror(code);
}
static inline struct mosquitto *cmosquitto_new(const char *id, bool clean_session, void *context) {
    return cmosquitto_loaded()->mosquitto_new(id, clean_session, context);
}
static inline void cmosquitto_destroy(struct mosquitto *mosq) {
    cmosquitto_loaded()->mosquitto_destroy(mosq);
}
static inline void cmosquitto_connect_callback_set(
    struct mosquitto *mosq, void (*on_connect)(struct mosquitto *, void *, int)) {
    cmosquitto_loaded()->mosquitto_connect_callback_set(mosq, on_connect);
}
static inline void cmosquitto_publish_callback_set(
    struct mosquitto *mosq, void (*on_publish)(struct mosquitto *, void *, int)) {
    cmosquitto_loaded()->mosquitto_publish_callback_set(mosq, on_publish);
}
static inline void cmosquitto_disconnect_callback_set(
    struct mosquitto *mosq, void (*on_disconnect)(struct mosquitto *, void *, int)) {
    cmosquitto_loaded()->mosquitto_disconnect_callback_set(mosq, on_disconnect);
}
static inline void cmosquitto_log_callback_set(
    struct mosquitto *mosq, void (*on_log)(struct mosquitto *, void *, int, const char *)) {
    cmosquitto_loaded()->mosquitto_log_callback_set(mosq, on_log);
}
static inline int cmosquitto_int_option(struct mosquitto *mosq, enum mosq_opt_t option, int value) {
    return cmosquitto_loaded()->mosquitto_int_option(mosq, option, value);
}
static inline int cmosquitto_username_pw_set(struct mosquitto *mosq, const char *username, const char *password) {
    return cmosquitto_loaded()->mosquitto_username_pw_set(mosq, username, password);
}
static inline int cmosquitto_will_set(
    struct mosquitto *mosq, const char *topic, int payloadlen, const void *payload, int qos, bool retain) {
    return cmosquitto_loaded()->mosquitto_will_set(mosq, topic, payloadlen, payload, qos, retain);
}
static inline int cmosquitto_tls_set(
    struct mosquitto *mosq, const char *cafile, const char *capath, const char *certfile, const char *keyfile,
    int (*pw_callback)(char *buf, int size, int rwflag, void *userdata)) {
    return cmosquitto_loaded()->mosquitto_tls_set(mosq, cafile, capath, certfile, keyfile, pw_callback);
}
static inline int cmosquitto_tls_insecure_set(struct mosquitto *mosq, bool value) {
    return cmosquitto_loaded()->mosquitto_tls_insecure_set(mosq, value);
}
static inline int cmosquitto_connect_async(struct mosquitto *mosq, const char *host, int port, int keepalive) {
    return cmosquitto_loaded()->mosquitto_connect_async(mosq, host, port, keepalive);
}
static inline int cmosquitto_publish(
    struct mosquitto *mosq, int *mid, const char *topic, int payloadlen, const void *payload, int qos, bool retain) {
    return cmosquitto_loaded()->mosquitto_publish(mosq, mid, topic, payloadlen, payload, qos, retain);
}
static inline int cmosquitto_loop(struct mosquitto *mosq, int timeout, int max_packets) {
    return cmosquitto_loaded()->mosquitto_loop(mosq, timeout, max_packets);
}
static inline int cmosquitto_disconnect(struct mosquitto *mosq) {
    return cmosquitto_loaded()->mosquitto_disconnect(mosq);
}
static inline int cmosquitto_socket(struct mosquitto *mosq) {
    return cmosquitto_loaded()->mosquitto_socket(mosq);
}

#endif
