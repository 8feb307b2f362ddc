#!/usr/bin/env bash
# Makes scripts/function-order.txt, the order scripts/build-release lays the binary's functions out in: a
# release binary that keeps its symbols (scripts/build-release --symbols, in .build/function-order) runs a
# slice of the drive under callgrind as `run`, `run` always-on and `watch` do in bench/daemon.sh callgrind,
# and `--help`; every function of it that ran is listed, the most instructions first (bench/daemon.py order).
# Run it again when the per-epoch code has changed much: names that went away are skipped, new ones unordered.
#   bench/function-order.sh [CAPTURE]   (default: the Reno drive; CALLGRIND_EPOCHS, CALLGRIND_FIRST)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup
capture="${1:-Tests/Fixtures/captures/garmin-drive-reno-tahoe-2h43m.nmea}"
binary=$(bash scripts/build-release --symbols "$PWD/.build/function-order")
/usr/bin/python3 bench/daemon.py order "$binary" "$capture" scripts/function-order.txt
