#!/usr/bin/env bash
# Benchmark (not a test) of the SD-card wear of `lodestar run` with its default configuration (the car profile,
# store, jsonl and GPX on; docs/config.md), next to gpxlogger on the same private gpsd stream (bench/flash.py,
# on bench/daemon.py's gpsd, feed and clients): per hour of receiver time, the bytes written to storage
# (/proc/PID/io write_bytes, wchar beside it) and the sync, write and pwrite calls (strace -f) on the disk.
#   driving: the Reno–Tahoe drive; parked: the stationary Amsterdam log (Tests/Fixtures/captures/SOURCES.md).
# Part 1, the figures: the first SLICE seconds (default 600) of each capture at 1x, side by side; at 1x every
# timer of the daemon runs on the capture's time. Part 2 (FAST=0 skips it): each whole capture at FAST times
# its pace (default 100) with --clock-rate FAST, for the store's syncs over a whole drive (the store's and the
# policy's clocks follow --clock-rate; the jsonl and GPX fsyncs and the state file do not, the output says so).
# Needs strace. State directories go under FLASH_DIR (default /var/tmp: a disk, not tmpfs).
#   bench/flash.sh
set -euo pipefail
source "$(dirname "$0")/build-release.sh"
if ! command -v strace >/dev/null; then
  echo "bench/flash.sh: needs strace (apt-get install strace)" >&2
  exit 69
fi
drive=Tests/Fixtures/captures/garmin-drive-reno-tahoe-2h43m.nmea
parked=Tests/Fixtures/captures/stationary-netherlands-20m.nmea
slice="${SLICE:-600}"
fast="${FAST:-100}"
echo "== $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -srm), $(nproc) cores; at 1x, the first ${slice} s of each capture"
/usr/bin/python3 bench/flash.py .build/release/lodestar driving "$drive" "$slice" 1 parked "$parked" "$slice" 1
if [ "$fast" != 0 ]; then
  echo "== whole captures at ${fast}x with --clock-rate ${fast}: the store's syncs (others understated, see NOTE)"
  /usr/bin/python3 bench/flash.py .build/release/lodestar driving "$drive" 0 "$fast" parked "$parked" 0 "$fast"
fi
