#!/usr/bin/env bash
# Benchmark (not a test): a tracker's day made of the repository's recordings (DayEvaluationTests: the Munich
# drive, parked N hours on the Netherlands static recording, the Reno drive, parked M hours on the GPS 15H's,
# the Regensburg drive), evaluated for each profile: one line each with the day's energy against the oracle,
# parked and moving apart, wakes per parked hour, how long and how far the car went before each departure was
# seen (p50/p95/max over the parks, the Reno drive's own stands included), staleness, and the charge by
# true speed (under 1, 1-5, 5-15, 15 m/s and over) against the oracle's. A drive after a park
# leaves from rest (DayTimeline.startAcceleration) when its recording starts at speed, as Reno's does.
#   bench/day.sh [--parks N,M]... [--drive RECORDING]... [-p PROFILE]... [--probe FIRST:LONGEST[:GROWTH]]...
#                [--sensor L:M:F | --sensor ignition:L:OFF | --sensor ignition-level:L:OFF]... [--receiver MODEL]...
#   (defaults: --parks 8,12 --parks 1,1, every built-in profile)
# --drive evaluates a recording of Tests/Fixtures/captures alone instead of the day, one line each, e.g. each
# drive with and without a motion sensor:
#   bench/day.sh -p car --sensor 2:0:0 --drive munich-urban-stopgo-31m.nmea --drive aircraft-descent-landing-18m.nmea
# --probe adds, for each profile, a variant whose activity's probes go from FIRST to LONGEST seconds (growing by
# GROWTH): the parked cost against the departure distance, the frontier of probing alone.
#   e.g. bench/day.sh -p car --probe 15:60 --probe 30:300 --probe 60:900 --parks 8,12
# --sensor adds, for each profile, a run with a motion sensor modelled from the true track (policy.motion.sensor):
# L seconds late, each firing missed with probability M, F false alarms an hour while parked. ignition:L:OFF is
# an ignition line instead: one firing, L seconds late, as a trip starts, the engine taken to run through stands
# shorter than OFF seconds (e.g. --sensor ignition:2:180). ignition-level:L:OFF is that line read for its level
# (motion.gpio.ignition): the engine on as the trip starts, off once it has stood OFF seconds.
# --receiver adds, for each profile, a variant with another built-in receiver model (mt3339, ublox6, sirf4,
# generic-nmea), the profile's policy unchanged, e.g. how a MediaTek parks: bench/day.sh -p car --receiver mt3339
# Each day and profile takes about 15 s (the debug test build evaluates the baselines too).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup
parks=()
profiles=()
probes=()
sensors=()
drives=()
receivers=()
while [ "$#" -gt 0 ]; do
  case "$1" in
    --parks) parks+=("$2"); shift 2 ;;
    -p) profiles+=("$2"); shift 2 ;;
    --probe) probes+=("$2"); shift 2 ;;
    --sensor) sensors+=("$2"); shift 2 ;;
    --drive) drives+=("$2"); shift 2 ;;
    --receiver) receivers+=("$2"); shift 2 ;;
    *) echo "bench/day.sh: unknown argument $1" >&2; exit 64 ;;
  esac
done
[ "${#parks[@]}" -gt 0 ] || parks=(8,12 1,1)
swift build --build-tests >/dev/null
lodestar="$(swift build --show-bin-path)/lodestar"
[ "${#profiles[@]}" -gt 0 ] || mapfile -t profiles < <("$lodestar" profiles list | awk '{print $1}')
variants=$(mktemp -d)
trap 'rm -rf "$variants"' EXIT
base=("${profiles[@]}")
for probe in "${probes[@]}"; do
  for profile in "${base[@]}"; do
    "$lodestar" profiles show "$profile" | python3 bench/probe-variant.py "$probe" "$variants/$profile@$probe.json"
    profiles+=("$variants/$profile@$probe.json")
  done
done
for receiver in "${receivers[@]}"; do
  for profile in "${base[@]}"; do
    "$lodestar" profiles show "$profile" | python3 -c '
import json, sys
profile = json.load(sys.stdin)
profile["receiver"] = {"model": sys.argv[1]}  # the built-in model, every value of it
json.dump(profile, open(sys.argv[2], "w"), indent=2)' "$receiver" "$variants/$profile~$receiver.json"
    profiles+=("$variants/$profile~$receiver.json")
  done
done
evaluate() {
  LODESTAR_DAY_PROFILES="${profiles[*]}" LODESTAR_DAY_SENSORS="${sensors[*]}" \
    swift test --skip-build --filter 'DayEvaluationTests/theCarProfilesDayHoldsItsFigures' 2>&1 \
    | grep -E "^day:|✘|Expectation failed" | sed -e "s|$variants/||" -e 's/\.json\([ +]\)/\1/'
}
if [ "${#drives[@]}" -gt 0 ]; then
  for drive in "${drives[@]}"; do
    echo "$drive alone:"
    LODESTAR_DAY_DRIVE=$drive evaluate
  done
  exit 0
fi
for hours in "${parks[@]}"; do
  echo "parked ${hours/,/ h and } h:"
  LODESTAR_DAY_PARK_HOURS=$hours evaluate
done
