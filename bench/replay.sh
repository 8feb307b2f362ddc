#!/usr/bin/env bash
# Benchmark (not a test): `lodestar replay` of an imported capture next to gpsd's own offline decoder
# `gpsdecode` decoding the raw log of the same run, measured in the same run of this script. Target:
# replaying the imported 3-hour drive takes no longer than gpsdecode takes on its raw log.
#   bench/replay.sh [RAW_LOG] [RUNS]     (default: the longest capture in the repo, 5 runs; medians printed)
set -euo pipefail
source "$(dirname "$0")/build-release.sh"
LOG="${1:-Tests/Fixtures/captures/garmin-drive-reno-tahoe-2h43m.nmea}"
RUNS="${2:-5}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
.build/release/lodestar import "$LOG" -o "$WORK/capture.jsonl" 2>&1 | sed 's/^/# /'
exec /usr/bin/python3 - "$LOG" "$WORK/capture.jsonl" "$RUNS" <<'PY'
import json, resource, statistics, subprocess, sys, time

log, capture, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
records = sum(1 for line in open(capture, "rb")) - 1
fixes = None

def timed(command, stdin=None):
    """Wall and CPU seconds (user + system of the child) and the child's peak RSS in KiB."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(command, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, after.ru_maxrss, result.stdout

replay, decode = [], []
for _ in range(runs):
    # Alternate, so both see the same machine state.
    wall, cpu, rss, out = timed([".build/release/lodestar", "replay", capture, "--format", "jsonl"])
    replay.append((wall, cpu))
    fixes = out.count(b"\n")
    with open(log, "rb") as raw:
        wall, cpu, _, _ = timed(["gpsdecode"], stdin=raw)
    decode.append((wall, cpu))

def median(pairs, index):
    return statistics.median(p[index] for p in pairs)

replay_wall, decode_wall = median(replay, 0), median(decode, 0)
print(f"capture       {capture}: {records} records, {fixes} locations printed")
print(f"replay        wall {replay_wall:.3f} s  cpu {median(replay, 1):.3f} s  "
      f"{records / replay_wall:,.0f} records/s  (median of {runs})")
print(f"gpsdecode     wall {decode_wall:.3f} s  cpu {median(decode, 1):.3f} s  on the raw log {log}")
print(f"ratio         replay / gpsdecode = {replay_wall / decode_wall:.2f} (target <= 1.00)")
PY
