/*
 * libmosquitto (the Eclipse Mosquitto client library) for MQTTUpload, the only module that imports it.
 */
#ifndef LODESTAR_CMOSQUITTO_SHIM_H
#define LODESTAR_CMOSQUITTO_SHIM_H

#include <mosquitto.h>

#endif
