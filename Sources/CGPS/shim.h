/*
 * The one place Lodestar touches libgps. Only static inline functions and constants, so the module stays a
 * system library (no compiled C target) and builds against gpsd 3.22 (Debian bookworm, API 11) as well as
 * newer gpsd (3.23 renamed the fix status names, 3.25 changed gps_stream/gps_unpack prototypes, 3.26 moved
 * gst out of the union and made gps_fd an intptr_t, HEAD made satellites_visible unsigned).
 * docs/gpsd.md §1 lists what each wrapper hides.
 */
#ifndef LODESTAR_CGPS_SHIM_H
#define LODESTAR_CGPS_SHIM_H

#include <gps.h>
#include <errno.h>
#include <math.h>
#include <string.h>

#if !defined(GPSD_API_MAJOR_VERSION) || GPSD_API_MAJOR_VERSION < 11
#error "libgps API >= 11 (gpsd >= 3.22) required"
#endif

/* WATCH flags: plain constants so Swift sees the same type whatever gps.h casts them to (watch_t in 3.25+). */
static const unsigned int CGPS_WATCH_ENABLE = 0x1u;
static const unsigned int CGPS_WATCH_DISABLE = 0x2u;
static const unsigned int CGPS_WATCH_JSON = 0x10u;
static const unsigned int CGPS_WATCH_NMEA = 0x20u;
static const unsigned int CGPS_WATCH_RAW = 0x80u;
static const unsigned int CGPS_WATCH_DEVICE = 0x800u;
static const unsigned int CGPS_WATCH_PPS = 0x2000u;

/* Largest JSON line gpsd sends (GPS_JSON_RESPONSE_MAX, not installed in 3.22), plus the NUL. */
static const int CGPS_MESSAGE_CAPACITY = 16384;

/* gps_send is variadic and so not callable from Swift. */
static inline int cgps_send(struct gps_data_t *d, const char *command) { return gps_send(d, "%s", command); }

/* Third argument is void* up to 3.24 and const char* from 3.25; the cast compiles for both. */
static inline int cgps_stream(struct gps_data_t *d, unsigned int flags, const char *device) {
    return gps_stream(d, flags, (void *)device);
}

/* char* up to 3.24, const char* from 3.25. */
static inline int cgps_unpack(char *json, struct gps_data_t *d) { return gps_unpack(json, d); }

/* gps_open reports socket failures as -1 with a negative NL_* code in errno, other failures directly. */
static inline int cgps_open(const char *host, const char *port, struct gps_data_t *d, int *code) {
    errno = 0;
    int rc = gps_open(host, port, d);
    *code = (rc == -1) ? errno : rc;
    return rc;
}

/* int in 3.22, gps_fd_t (intptr_t) from 3.26. */
static inline long cgps_fd(const struct gps_data_t *d) { return (long)d->gps_fd; }

/* MAXCHANNELS is 140 in 3.22, 184 in 3.26, 230 at HEAD: never hard-code the tuple arity in Swift. */
static inline int cgps_max_channels(void) { return MAXCHANNELS; }
static inline const struct satellite_t *cgps_satellite(const struct gps_data_t *d, int i) {
    return (i >= 0 && i < MAXCHANNELS) ? &d->skyview[i] : NULL;
}
static inline int cgps_satellites_visible(const struct gps_data_t *d) { return (int)d->satellites_visible; }

/* gst is a union member up to 3.25 and a plain member from 3.26; copy it out before the next read. */
static inline struct gst_t cgps_gst(const struct gps_data_t *d) { return d->gst; }

static inline const char *cgps_device_path(const struct gps_data_t *d) { return d->dev.path; }
static inline const char *cgps_device_driver(const struct gps_data_t *d) { return d->dev.driver; }
static inline const char *cgps_device_subtype(const struct gps_data_t *d) { return d->dev.subtype; }
static inline const char *cgps_device_subtype1(const struct gps_data_t *d) { return d->dev.subtype1; }
/* 0 when gpsd did not say; libgps cannot parse the integer 0 gpsd sends for a closed device (docs/gpsd.md §2). */
static inline long long cgps_device_activated_seconds(const struct gps_data_t *d) {
    return (long long)d->dev.activated.tv_sec;
}
static inline const char *cgps_error_message(const struct gps_data_t *d) { return d->error; }
static inline const char *cgps_version_release(const struct gps_data_t *d) { return d->version.release; }
static inline int cgps_version_proto_major(const struct gps_data_t *d) { return d->version.proto_major; }
static inline int cgps_version_proto_minor(const struct gps_data_t *d) { return d->version.proto_minor; }

/* TPV time as seconds and nanoseconds (a timespec in 3.22 and later; {0,0} when unknown). */
static inline long long cgps_fix_time_seconds(const struct gps_data_t *d) { return (long long)d->fix.time.tv_sec; }
static inline long cgps_fix_time_nanoseconds(const struct gps_data_t *d) { return (long)d->fix.time.tv_nsec; }

#endif
