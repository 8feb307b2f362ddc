#!/usr/bin/env python3
"""A profile with one setting changed, for the benchmarks' frontier sweeps (bench/policy.sh, bench/day.sh):
reads the complete profile (`lodestar profiles show NAME`) on stdin and writes it to OUT with
  FIRST:LONGEST[:GROWTH]  its activity's probeInterval and maximumProbeInterval (and probeGrowth), or
  KEY=VALUE               the setting at the dotted KEY (e.g. policy.prediction.maximumAcceleration=0.35) set
                          to VALUE read as JSON (a number, true, null, "text").
  lodestar profiles show car | bench/probe-variant.py FIRST:LONGEST[:GROWTH]|KEY=VALUE OUT
"""
import json
import sys

change, path = sys.argv[1], sys.argv[2]
profile = json.load(sys.stdin)
if "=" in change:
    key, _, text = change.partition("=")
    try:
        value = json.loads(text)
    except ValueError:
        sys.exit("%s: %s: the value is not JSON (a number, true, null, \"text\")" % (sys.argv[0], change))
    *parents, last = key.split(".")
    node = profile
    for name in parents:
        if not isinstance(node.get(name), dict):
            sys.exit("%s: %s: the profile has no object %s" % (sys.argv[0], change, name))
        node = node[name]
    if last not in node:
        sys.exit("%s: %s: the profile has no setting %s" % (sys.argv[0], change, key))
    node[last] = value
else:
    parts = [float(x) for x in change.split(":")]
    if len(parts) not in (2, 3):
        sys.exit("%s: --probe %s: expected FIRST:LONGEST[:GROWTH] in seconds" % (sys.argv[0], change))
    activity = (profile.get("updates") or {}).get("activityType", "other")
    rule = profile["policy"]["stationary"][activity]
    rule["probeInterval"], rule["maximumProbeInterval"] = parts[0], parts[1]
    if len(parts) == 3:
        rule["probeGrowth"] = parts[2]
json.dump(profile, open(path, "w"))
