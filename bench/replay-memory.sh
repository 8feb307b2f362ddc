#!/usr/bin/env bash
# Benchmark (not a test): peak resident memory of `lodestar replay --profile car --evaluate` (and of plain
# `replay --format jsonl` and `replay --profile car`) on a 1-hour and a 24-hour capture, built by concatenating
# the repository's real drives one after the other with their times moved to follow on (t and every gpsd
# `time`), a minute apart. Replay, simulation and evaluation stream the capture, so the 24-hour figure
# should stay within 10 % of the 1-hour one, and under 32 MB.
#   bench/replay-memory.sh            prints one row per command and length: seconds, peak RSS in MiB
set -euo pipefail
source "$(dirname "$0")/build-release.sh"
scratch=$(mktemp -d /tmp/lodestar-bench-memory-XXXXXX)
trap 'rm -rf "$scratch"' EXIT
# The short drives first, so the first hour is three whole drives.
drives=(Tests/Fixtures/captures/munich-urban-stopgo-31m.nmea Tests/Fixtures/captures/garmin-geko201-regensburg-drive-26m.nmea
  Tests/Fixtures/captures/ublox-ubx-cartrip-15m.ubx Tests/Fixtures/captures/garmin-drive-reno-tahoe-2h43m.nmea)
for drive in "${drives[@]}"; do
  .build/release/lodestar import "$drive" -o "$scratch/$(basename "$drive").jsonl" 2>/dev/null
done
/usr/bin/python3 - "$scratch" "${drives[@]}" <<'PY'
import datetime, json, os, re, sys
scratch, drives = sys.argv[1], sys.argv[2:]
time_pattern = re.compile(rb'"time":"([0-9T:.\-]+)Z"')
def parse(text):
    return datetime.datetime.strptime(text[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=datetime.timezone.utc) + \
        datetime.timedelta(seconds=float("0" + text[19:]) if len(text) > 19 else 0)
loaded = []
for drive in drives:
    with open(os.path.join(scratch, os.path.basename(drive) + ".jsonl"), "rb") as f:
        header, *lines = f.read().splitlines()
    started = parse(json.loads(header)["started"].rstrip("Z"))
    end = max(json.loads(line[:line.index(b",")] + b"}")["t"] for line in lines)
    loaded.append((started, end, lines))
start = datetime.datetime(2026, 6, 1, 6, 0, tzinfo=datetime.timezone.utc)
def build(name, seconds):
    offset, index = 0.0, 0
    with open(os.path.join(scratch, name), "wb") as out:
        out.write(b'{"lodestar":"capture","version":1,"started":"%s","source":"bench: real drives end to end"}\n'
                  % start.strftime("%Y-%m-%dT%H:%M:%S.000Z").encode())
        while offset < seconds:
            started, end, lines = loaded[index % len(loaded)]
            shift = start + datetime.timedelta(seconds=offset) - started
            def move(match):
                moved = parse(match.group(1).decode()) + shift
                return b'"time":"%s.%03dZ"' % (moved.strftime("%Y-%m-%dT%H:%M:%S").encode(), moved.microsecond // 1000)
            for line in lines:
                comma = line.index(b",")
                t = float(line[5:comma]) + offset
                out.write(b'{"t":%.3f' % t + time_pattern.sub(move, line[comma:]) + b"\n")
            offset += end + 60
            index += 1
    return offset
for name, seconds in (("1h.jsonl", 3600), ("24h.jsonl", 86400)):
    print("%s: %.1f h, %.0f MB" % (name, build(name, seconds) / 3600, os.path.getsize(os.path.join(scratch, name)) / 1e6),
          file=sys.stderr)
PY
printf '%-44s %8s %8s %10s\n' command capture seconds "peak MiB"
for args in "--profile car --evaluate" "--format jsonl" "--profile car --format jsonl"; do
  for capture in 1h 24h; do
    /usr/bin/time -o "$scratch/time" -f "%e %M" .build/release/lodestar replay "$scratch/$capture.jsonl" $args >/dev/null 2>&1
    read -r seconds kilobytes <"$scratch/time"
    printf '%-44s %8s %8s %10.2f\n' "replay $args" "$capture" "$seconds" "$(echo "$kilobytes / 1024" | bc -l)"
  done
done
