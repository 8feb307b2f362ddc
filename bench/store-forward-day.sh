#!/usr/bin/env bash
# Benchmark (not a test): the store-and-forward acceptance day. A full day of real drives and parked stretches
# (TestSupport's DayTimeline) played by an emulated u-blox through a private gpsd at high speed; `lodestar run`
# with the car profile stores what it delivers and uploads it to a real mosquitto (read by mosquitto_sub) and
# to the Traccar stand-in, with both servers down for the middle 12 hours; then the same day sending every
# location as it is stored. Prints delivered and arrived counts, duplicates, the largest store, the worst
# latency with the network up, and the connections each way (StoreForwardTests does the checking).
#   bench/store-forward-day.sh [HOURS [SPEED]]     defaults: 24 h at 300x (about 12 minutes)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup
hours=${1:-24}
speed=${2:-300}
swift build --build-tests >/dev/null
LODESTAR_DAY_HOURS=$hours LODESTAR_DAY_SPEED=$speed LODESTAR_DAY_STORE_BYTES=${LODESTAR_DAY_STORE_BYTES:-16000000} \
  swift test --skip-build --filter 'StoreForwardTests/aDayWithTheNetworkCut' 2>&1 \
  | grep -E "store and forward|✘|Expectation failed|passed after|failed after"
