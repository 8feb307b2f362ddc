#!/usr/bin/env python3
"""A profile with its activity's probe schedule changed, for the benchmarks' frontier sweeps (bench/policy.sh,
bench/day.sh): reads the complete profile (`lodestar profiles show NAME`) on stdin and writes it to OUT with
the activity's probeInterval and maximumProbeInterval (and probeGrowth) set from PROBE.
  lodestar profiles show car | bench/probe-variant.py FIRST:LONGEST[:GROWTH] OUT
"""
import json
import sys

probe, path = sys.argv[1], sys.argv[2]
parts = [float(x) for x in probe.split(":")]
if len(parts) not in (2, 3):
    sys.exit("%s: --probe %s: expected FIRST:LONGEST[:GROWTH] in seconds" % (sys.argv[0], probe))
profile = json.load(sys.stdin)
activity = (profile.get("updates") or {}).get("activityType", "other")
rule = profile["policy"]["stationary"][activity]
rule["probeInterval"], rule["maximumProbeInterval"] = parts[0], parts[1]
if len(parts) == 3:
    rule["probeGrowth"] = parts[2]
json.dump(profile, open(path, "w"))
