/*
 * libgpiod for GPIOLines, the only module that imports it: one line, requested and held as an output or as an
 * input watched for edges, behind a few functions that read the same with libgpiod 1.x (Debian bookworm,
 * Raspberry Pi OS 12: the line-bulk API) and 2.x (trixie, Pi OS 13: line requests), as CGPS hides gpsd's
 * versions. Swift sees only these.
 */
#ifndef LODESTAR_CGPIOD_SHIM_H
#define LODESTAR_CGPIOD_SHIM_H

#include <gpiod.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The step a request failed at: errno says why. */
enum {
    CGPIOD_FAILED_OPENING_CHIP = 1,
    CGPIOD_FAILED_FINDING_LINE = 2,
    CGPIOD_FAILED_REQUESTING_LINE = 3,
};

/* What a line is requested as. */
enum {
    CGPIOD_OUTPUT = 0,
    /* An input whose rising and falling edges are queued by the kernel, to be read from a descriptor. */
    CGPIOD_EDGES = 1,
};

/* Edges read at most at once; more wait in the kernel's queue for the next read. */
#define CGPIOD_EDGE_BATCH 16

/* What a failed request found out: the chip's line count (no such line) and the line's holder (busy). */
typedef struct {
    int step;
    unsigned int lineCount;
    char holder[64];
} cgpiod_failure;

static inline void cgpiod_copy_holder(cgpiod_failure *failure, const char *consumer) {
    if (consumer) {
        snprintf(failure->holder, sizeof failure->holder, "%s", consumer);
    }
}

/* The line bulk API (GPIOD_LINE_BULK_MAX_LINES) exists in 1.x only. */
#ifdef GPIOD_LINE_BULK_MAX_LINES

typedef struct {
    struct gpiod_chip *chip;
    struct gpiod_line *line;
} cgpiod_line_request;

static inline struct gpiod_chip *cgpiod_open_lookup(const char *chip) { return gpiod_chip_open_lookup(chip); }

#else /* libgpiod 2.x */

typedef struct {
    struct gpiod_chip *chip;
    struct gpiod_line_request *request;
    unsigned int offset;
    /* For CGPIOD_EDGES: where read edges land; NULL for an output. */
    struct gpiod_edge_event_buffer *edges;
} cgpiod_line_request;

/* 2.x opens paths only; 1.x's gpiod_chip_open_lookup also took a name (gpiochip0), a number (0) or a label. */
static inline struct gpiod_chip *cgpiod_open_lookup(const char *chip) {
    char path[PATH_MAX];
    if (chip[0] == '/') return gpiod_chip_open(chip);
    if (chip[0] != '\0' && strspn(chip, "0123456789") == strlen(chip)) {
        snprintf(path, sizeof path, "/dev/gpiochip%s", chip);
        return gpiod_chip_open(path);
    }
    if (strncmp(chip, "gpiochip", 8) == 0) {
        snprintf(path, sizeof path, "/dev/%s", chip);
        return gpiod_chip_open(path);
    }
    DIR *devices = opendir("/dev");
    if (!devices) return NULL;
    struct dirent *entry;
    while ((entry = readdir(devices))) {
        if (strncmp(entry->d_name, "gpiochip", 8) != 0) continue;
        snprintf(path, sizeof path, "/dev/%s", entry->d_name);
        struct gpiod_chip *handle = gpiod_chip_open(path);
        if (!handle) continue;
        struct gpiod_chip_info *info = gpiod_chip_get_info(handle);
        int same = info && strcmp(gpiod_chip_info_get_label(info), chip) == 0;
        if (info) gpiod_chip_info_free(info);
        if (same) {
            closedir(devices);
            return handle;
        }
        gpiod_chip_close(handle);
    }
    closedir(devices);
    errno = ENOENT;
    return NULL;
}

static inline unsigned int cgpiod_line_count(struct gpiod_chip *chip) {
    struct gpiod_chip_info *info = gpiod_chip_get_info(chip);
    if (!info) return 0;
    unsigned int count = (unsigned int)gpiod_chip_info_get_num_lines(info);
    gpiod_chip_info_free(info);
    return count;
}

#endif

/* Opens the chip (cgpiod_open_lookup: a name, path, number or label), or says it could not. */
static inline struct gpiod_chip *cgpiod_open_chip(const char *chip, cgpiod_failure *failure) {
    memset(failure, 0, sizeof *failure);
    errno = 0;
    struct gpiod_chip *handle = cgpiod_open_lookup(chip);
    if (!handle) {
        if (errno == 0) errno = ENOENT;
        failure->step = CGPIOD_FAILED_OPENING_CHIP;
    }
    return handle;
}

#ifdef GPIOD_LINE_BULK_MAX_LINES

/* `kind` CGPIOD_OUTPUT sets the line to `value` first; CGPIOD_EDGES ignores `value`. */
static inline cgpiod_line_request *cgpiod_request_line(
    const char *chip, unsigned int offset, const char *name, const char *consumer, int activeLow, int kind,
    int value, cgpiod_failure *failure)
{
    struct gpiod_chip *handle = cgpiod_open_chip(chip, failure);
    if (!handle) return NULL;
    errno = 0;
    struct gpiod_line *line = name ? gpiod_chip_find_line(handle, name) : gpiod_chip_get_line(handle, offset);
    if (!line) {
        int saved = errno == 0 ? ENOENT : errno;
        failure->step = CGPIOD_FAILED_FINDING_LINE;
        failure->lineCount = gpiod_chip_num_lines(handle);
        gpiod_chip_close(handle);
        errno = saved;
        return NULL;
    }
    errno = 0;
    int flags = activeLow ? GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW : 0;
    int requested = kind == CGPIOD_EDGES ? gpiod_line_request_both_edges_events_flags(line, consumer, flags)
                                         : gpiod_line_request_output_flags(line, consumer, flags, value ? 1 : 0);
    if (requested != 0) {
        int saved = errno;
        failure->step = CGPIOD_FAILED_REQUESTING_LINE;
        cgpiod_copy_holder(failure, gpiod_line_consumer(line));
        gpiod_chip_close(handle);
        errno = saved;
        return NULL;
    }
    cgpiod_line_request *output = malloc(sizeof *output);
    if (!output) {
        gpiod_line_release(line);
        gpiod_chip_close(handle);
        errno = ENOMEM;
        failure->step = CGPIOD_FAILED_REQUESTING_LINE;
        return NULL;
    }
    output->chip = handle;
    output->line = line;
    return output;
}

/* Logical values: with active-low, 1 drives the line low. 0, or -1 with errno. */
static inline int cgpiod_set_value(cgpiod_line_request *output, int value) {
    errno = 0;
    return gpiod_line_set_value(output->line, value ? 1 : 0);
}

/* The descriptor that is readable while edges wait (CGPIOD_EDGES). */
static inline int cgpiod_edge_descriptor(cgpiod_line_request *input) { return gpiod_line_event_get_fd(input->line); }

/* The line's logical level now (active-low inverted): 1 active, 0 inactive, -1 with errno. */
static inline int cgpiod_get_value(cgpiod_line_request *input) {
    errno = 0;
    return gpiod_line_get_value(input->line);
}

/* Reads the waiting edges (blocks when none: poll the descriptor first): how many, or -1 with errno, and in
 * `activating` how many went to the active level (edges are logical: active-low inverts them). */
static inline int cgpiod_read_edges(cgpiod_line_request *input, int *activating) {
    struct gpiod_line_event events[CGPIOD_EDGE_BATCH];
    errno = 0;
    *activating = 0;
    int count = gpiod_line_event_read_multiple(input->line, events, CGPIOD_EDGE_BATCH);
    for (int index = 0; index < count; index++) {
        if (events[index].event_type == GPIOD_LINE_EVENT_RISING_EDGE) (*activating)++;
    }
    return count;
}

static inline void cgpiod_release(cgpiod_line_request *output) {
    gpiod_line_release(output->line);
    gpiod_chip_close(output->chip);
    free(output);
}

#else /* libgpiod 2.x */

static inline cgpiod_line_request *cgpiod_request_line(
    const char *chip, unsigned int offset, const char *name, const char *consumer, int activeLow, int kind,
    int value, cgpiod_failure *failure)
{
    struct gpiod_chip *handle = cgpiod_open_chip(chip, failure);
    if (!handle) return NULL;
    unsigned int count = cgpiod_line_count(handle);
    if (name) {
        int found = gpiod_chip_get_line_offset_from_name(handle, name);
        if (found < 0) {
            failure->step = CGPIOD_FAILED_FINDING_LINE;
            failure->lineCount = count;
            gpiod_chip_close(handle);
            errno = ENOENT;
            return NULL;
        }
        offset = (unsigned int)found;
    } else if (offset >= count) {
        failure->step = CGPIOD_FAILED_FINDING_LINE;
        failure->lineCount = count;
        gpiod_chip_close(handle);
        errno = ENOENT;
        return NULL;
    }
    struct gpiod_line_settings *settings = gpiod_line_settings_new();
    struct gpiod_line_config *lineConfig = gpiod_line_config_new();
    struct gpiod_request_config *requestConfig = gpiod_request_config_new();
    struct gpiod_line_request *request = NULL;
    errno = 0;
    struct gpiod_edge_event_buffer *edges = kind == CGPIOD_EDGES ? gpiod_edge_event_buffer_new(CGPIOD_EDGE_BATCH) : NULL;
    int configured = settings && lineConfig && requestConfig && (kind != CGPIOD_EDGES || edges);
    if (configured && kind == CGPIOD_EDGES) {
        configured = gpiod_line_settings_set_direction(settings, GPIOD_LINE_DIRECTION_INPUT) == 0
            && gpiod_line_settings_set_edge_detection(settings, GPIOD_LINE_EDGE_BOTH) == 0;
    } else if (configured) {
        configured = gpiod_line_settings_set_direction(settings, GPIOD_LINE_DIRECTION_OUTPUT) == 0
            && gpiod_line_settings_set_output_value(
                   settings, value ? GPIOD_LINE_VALUE_ACTIVE : GPIOD_LINE_VALUE_INACTIVE) == 0;
    }
    if (configured) {
        gpiod_line_settings_set_active_low(settings, activeLow ? true : false);
        if (gpiod_line_config_add_line_settings(lineConfig, &offset, 1, settings) == 0) {
            gpiod_request_config_set_consumer(requestConfig, consumer);
            request = gpiod_chip_request_lines(handle, requestConfig, lineConfig);
        }
    }
    int saved = errno == 0 ? ENOMEM : errno;
    if (requestConfig) gpiod_request_config_free(requestConfig);
    if (lineConfig) gpiod_line_config_free(lineConfig);
    if (settings) gpiod_line_settings_free(settings);
    cgpiod_line_request *output = request ? malloc(sizeof *output) : NULL;
    if (!output) {
        if (edges) gpiod_edge_event_buffer_free(edges);
        failure->step = CGPIOD_FAILED_REQUESTING_LINE;
        struct gpiod_line_info *info = gpiod_chip_get_line_info(handle, offset);
        if (info) {
            cgpiod_copy_holder(failure, gpiod_line_info_get_consumer(info));
            gpiod_line_info_free(info);
        }
        if (request) gpiod_line_request_release(request);
        gpiod_chip_close(handle);
        errno = request ? ENOMEM : saved;
        return NULL;
    }
    output->chip = handle;
    output->request = request;
    output->offset = offset;
    output->edges = edges;
    return output;
}

static inline int cgpiod_set_value(cgpiod_line_request *output, int value) {
    errno = 0;
    return gpiod_line_request_set_value(
        output->request, output->offset, value ? GPIOD_LINE_VALUE_ACTIVE : GPIOD_LINE_VALUE_INACTIVE);
}

static inline int cgpiod_edge_descriptor(cgpiod_line_request *input) { return gpiod_line_request_get_fd(input->request); }

static inline int cgpiod_get_value(cgpiod_line_request *input) {
    errno = 0;
    enum gpiod_line_value value = gpiod_line_request_get_value(input->request, input->offset);
    if (value == GPIOD_LINE_VALUE_ERROR) return -1;
    return value == GPIOD_LINE_VALUE_ACTIVE ? 1 : 0;
}

static inline int cgpiod_read_edges(cgpiod_line_request *input, int *activating) {
    errno = 0;
    *activating = 0;
    int count = gpiod_line_request_read_edge_events(input->request, input->edges, CGPIOD_EDGE_BATCH);
    for (int index = 0; index < count; index++) {
        struct gpiod_edge_event *event = gpiod_edge_event_buffer_get_event(input->edges, (unsigned long)index);
        if (gpiod_edge_event_get_event_type(event) == GPIOD_EDGE_EVENT_RISING_EDGE) (*activating)++;
    }
    return count;
}

static inline void cgpiod_release(cgpiod_line_request *output) {
    if (output->edges) gpiod_edge_event_buffer_free(output->edges);
    gpiod_line_request_release(output->request);
    gpiod_chip_close(output->chip);
    free(output);
}

#endif

#endif
