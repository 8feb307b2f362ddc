#!/usr/bin/env bash
# Benchmark (not a test) of the daemon's live path, against a private gpsd fed a long drive through a pty:
#   cpu:  lodestar next to gpxlogger (C, libgps) on the same gpsd stream, 3 runs; target <= 1.0x its CPU.
#   soak: lodestar alone over 25 h of receiver time (the drive looped with advancing time) at 2000x;
#         targets: peak RSS <= 8 MiB, < 5 % RSS growth from receiver hour 1 to the end.
# Builds the release binary as scripts/lodestar does (a static executable, stripped).
#   bench/daemon.sh [cpu|soak|all] [CAPTURE]
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
if [ "$mode" = soak ] || [ "$mode" = all ]; then
  /usr/bin/python3 bench/daemon.py soak .build/release/lodestar "$capture" "${HOURS:-25}" "${SOAK_SPEED:-2000}"
fi
