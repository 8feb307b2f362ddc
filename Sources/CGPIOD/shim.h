/*
 * libgpiod for GPIOLines, the only module that imports it. Swift calls gpiod.h's functions directly; this
 * header only checks the API and turns the request flag into a plain constant.
 */
#ifndef LODESTAR_CGPIOD_SHIM_H
#define LODESTAR_CGPIOD_SHIM_H

#include <gpiod.h>

/* The line-bulk API (and with it gpiod_line_request_output_flags) exists in libgpiod 1.x only; 2.x replaced it
 * with line requests. Debian bookworm and Raspberry Pi OS ship 1.6. */
#ifndef GPIOD_LINE_BULK_MAX_LINES
#error "libgpiod 1.x API required (Debian bookworm's libgpiod-dev 1.6); libgpiod 2.x is not supported"
#endif

/* An enum constant of GPIOD_BIT (unsigned long) in gpiod.h: a plain int here, the type the request takes. */
static const int CGPIOD_REQUEST_FLAG_ACTIVE_LOW = GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW;

#endif
