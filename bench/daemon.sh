#!/usr/bin/env bash
# Benchmark (not a test) of the daemon's live path, against a private gpsd fed a long drive through a pty:
#   cpu:  lodestar next to gpxlogger (C, libgps) on the same gpsd stream, 3 runs; target <= 1.0x its CPU;
#         each client's peak RSS, private memory, PSS and private dirty pages.
#   soak: lodestar alone over 25 h of receiver time (the drive looped with advancing time) at 2000x;
#         RSS, private memory (Private_Clean + Private_Dirty), PSS and private dirty each receiver hour; target < 5 %
#         growth from hour 1 to the end.
#   startup: `lodestar --help` next to `gpspipe --help`: median wall time and callgrind instructions.
#   callgrind: a slice of the drive (600 epochs, 20 min of receiver time, at 10x) read by gpxlogger and by
#         `run` (the default config: store, jsonl, GPX and socket on, the car profile), `run` always-on, `run`
#         always-on with the store off, and `watch`: each one's instructions under callgrind and its ratio to
#         gpxlogger's, its syscalls under strace -c, and its CPU time natively (bench/daemon.py, callgrind).
# Builds the release binary as scripts/lodestar does (scripts/build-release).
#   bench/daemon.sh [cpu|soak|startup|callgrind|all] [CAPTURE]
#         (HOURS, SOAK_SPEED, RUNS, SPEED, CALLGRIND_SPEED, CALLGRIND_EPOCHS, CALLGRIND_FIRST from the environment)
# The lodestar command line (after the binary) comes from LODESTAR_ARGS, {host}/{port}/{state} filled in;
# by default the daemon: `run` with the always-on profile (every fix delivered, as gpxlogger logs every fix),
# no receiver commands, locations on stdout as jsonl (bench/daemon.py, DEFAULT_ARGS).
set -euo pipefail
source "$(dirname "$0")/build-release.sh"
mode="${1:-all}"
capture="${2:-Tests/Fixtures/captures/garmin-drive-reno-tahoe-2h43m.nmea}"
if [ "$mode" = cpu ] || [ "$mode" = all ]; then
  /usr/bin/python3 bench/daemon.py cpu .build/release/lodestar "$capture" "${RUNS:-3}" "${SPEED:-200}"
fi
if [ "$mode" = callgrind ] || [ "$mode" = all ]; then
  /usr/bin/python3 bench/daemon.py callgrind .build/release/lodestar "$capture" "${CALLGRIND_SPEED:-10}"
fi
if [ "$mode" = startup ] || [ "$mode" = all ]; then
  /usr/bin/python3 bench/daemon.py startup .build/release/lodestar "${RUNS:-50}"
fi
if [ "$mode" = soak ] || [ "$mode" = all ]; then
  /usr/bin/python3 bench/daemon.py soak .build/release/lodestar "$capture" "${HOURS:-25}" "${SOAK_SPEED:-2000}"
fi
