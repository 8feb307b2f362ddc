#!/usr/bin/env bash
# Benchmark (not a test): CPU time and peak RSS of `lodestar watch` next to `gpspipe -w`, both reading the
# same private gpsd while it decodes the longest capture in the repo (a 2 h 43 min drive) fed as fast as
# gpsd reads it. Builds the release binary as scripts/lodestar does. Targets: CPU <= 1.5x
# gpspipe's, peak RSS <= 8 MB.
#   bench/watch-vs-gpspipe.sh [CAPTURE] [RUNS] [SPEED]   (SPEED 0: as fast as gpsd reads; default 200x)
set -euo pipefail
source "$(dirname "$0")/build-release.sh"
exec /usr/bin/python3 bench/watch_vs_gpspipe.py .build/release/lodestar \
  "${1:-Tests/Fixtures/captures/garmin-drive-reno-tahoe-2h43m.nmea}" "${2:-3}" "${3:-200}"
