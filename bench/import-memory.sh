#!/usr/bin/env bash
# Benchmark (not a test): `lodestar import`'s peak memory on a raw log and on the same log 20 times over
# (the Reno drive: 2.5 MB and 50 MB; a day of receiver output is about 170 MB). Target: the peak RSS does
# not grow with the log's length. Prints both peaks (GNU time's %M, KiB) and the time each took.
#   bench/import-memory.sh [RAW_LOG] [COPIES]     (default: the longest capture in the repo, 20 copies)
set -euo pipefail
source "$(dirname "$0")/build-release.sh"
LOG="${1:-Tests/Fixtures/captures/garmin-drive-reno-tahoe-2h43m.nmea}"
COPIES="${2:-20}"
[ -x /usr/bin/time ] || { echo "import-memory: /usr/bin/time (GNU time) is needed: apt-get install time" >&2; exit 69; }
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
cp "$LOG" "$WORK/1x.log"
for _ in $(seq "$COPIES"); do cat "$LOG"; done > "$WORK/${COPIES}x.log"
for name in 1x "${COPIES}x"; do
  size=$(stat -c %s "$WORK/$name.log")
  /usr/bin/time -f "%M %e" -o "$WORK/time" .build/release/lodestar import "$WORK/$name.log" -o "$WORK/$name.jsonl" \
    2>&1 | sed 's/^/# /'
  read -r peak seconds < "$WORK/time"
  awk -v name="$name" -v logsize="$size" -v capture="$(stat -c %s "$WORK/$name.jsonl")" -v peak="$peak" \
    -v seconds="$seconds" 'BEGIN { printf "%-4s log %6.1f MB  capture %6.1f MB  peak RSS %7d KiB (%.1f MiB)  %6.2f s\n",
      name, logsize / 1e6, capture / 1e6, peak, peak / 1024, seconds }'
done
