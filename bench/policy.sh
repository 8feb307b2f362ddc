#!/usr/bin/env bash
# Benchmark (not a test): every capture in the repo under every built-in profile through
# `lodestar replay --profile P --evaluate --json`, one row each. Goal (docs/contract.md §11): staleness p95 within the
# profile's bound, energy below every baseline that meets the same bound at p95, and at most 1.5x the
# oracle's energy.
#   bench/policy.sh [CAPTURE...] [-p PROFILE]... [--probe FIRST:LONGEST[:GROWTH]]... [--set KEY=VALUE]...
#   (default: Tests/Fixtures/captures/*, every built-in)
# --probe sweeps how a pause looks for the departure: each profile also runs as PROFILE@FIRST:LONGEST with
# its activity's probeInterval and maximumProbeInterval (and probeGrowth) set so, and a frontier table
# follows: per variant, the energy summed over the captures and its ratio to the oracle's sum, the worst
# single ratio to the oracle, and the worst maximum staleness in bounds (how late a departure was seen).
#   e.g. bench/policy.sh -p car --probe 15:60 --probe 15:30 --probe 15:20
# --set sweeps any other setting the same way: each profile also runs as PROFILE@KEY=VALUE with the setting at
# the dotted KEY set to VALUE (JSON), e.g. the moving drives' trade of energy against staleness:
#   bench/policy.sh -p car --set policy.prediction.maximumAcceleration=0.35 --set policy.prediction.maximumAcceleration=0.75
# Columns: energy in % of always-on; ratios of the profile's energy to the oracle's and to each baseline's
# (a baseline whose p95 is over the bound is marked "*": it does not count against the goal); staleness
# p95 and max in metres; pauses; goal met, or what failed (p95, a baseline's name, oracle). The always-on
# profile is the always-on baseline itself and is not judged.
set -euo pipefail
source "$(dirname "$0")/build-release.sh"
captures=()
profiles=()
probes=()
while [ "$#" -gt 0 ]; do
  case "$1" in
    -p) profiles+=("$2"); shift 2 ;;
    --probe) probes+=("$2"); shift 2 ;;
    --set) probes+=("$2"); shift 2 ;;
    *) captures+=("$1"); shift ;;
  esac
done
[ "${#captures[@]}" -gt 0 ] || captures=(Tests/Fixtures/captures/*.nmea Tests/Fixtures/captures/*.ubx)
[ "${#profiles[@]}" -gt 0 ] || mapfile -t profiles < <(.build/release/lodestar profiles list | awk '{print $1}')
variants=$(mktemp -d)
trap 'rm -rf "$variants"' EXIT
# Each --probe or --set change as a profile file per profile: the complete profile with that one change.
base=("${profiles[@]}")
for probe in "${probes[@]}"; do
  for profile in "${base[@]}"; do
    .build/release/lodestar profiles show "$profile" \
      | /usr/bin/python3 bench/probe-variant.py "$probe" "$variants/$profile@$probe.json"
    profiles+=("$variants/$profile@$probe.json")
  done
done
/usr/bin/python3 - "${#profiles[@]}" "${profiles[@]}" "${captures[@]}" <<'PY'
import json, os, subprocess, sys
from concurrent.futures import ThreadPoolExecutor

count = int(sys.argv[1])
profiles, captures = sys.argv[2:2 + count], sys.argv[2 + count:]

def label(profile):
    return os.path.basename(profile)[:-len(".json")] if profile.endswith(".json") else profile

def evaluate(job):
    capture, profile = job
    result = subprocess.run([".build/release/lodestar", "replay", capture, "--profile", profile, "--evaluate", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        return job, None, (result.stderr.strip().splitlines() or ["exit %d" % result.returncode])[-1]
    return job, json.loads(result.stdout), None

jobs = [(c, p) for c in captures for p in profiles]
with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
    results = list(pool.map(evaluate, jobs))

def short(path):
    name = os.path.basename(path)
    return name if len(name) <= 34 else name[:33] + "~"

header = ("capture", "profile", "energy%", "/oracle", "/always", "/interval", "/stop-to", "p95 m", "max m",
          "bound", "pauses", "goal")
rows, met, judged, misses = [], 0, 0, {}
free_oracle, causes = 0, {}
for (capture, profile), figures, error in results:
    if figures is None:
        rows.append((short(capture), label(profile), "-", "-", "-", "-", "-", "-", "-", "-", "-", "n/a: " + error[:60]))
        continue
    bound = figures["stalenessBound"]
    policy = figures["policy"]
    energy = policy["energy"]
    baselines = figures["baselines"]

    def ratio(run):
        if run is None:
            return "-"
        text = "%.2f" % (energy / run["energy"]) if run["energy"] > 0 else ("inf" if energy > 0 else "1.00")
        return text + ("" if run["staleness"]["p95"] <= bound else "*")

    interval = baselines.get("interval")
    interval_run = interval["figures"] if interval else None
    failed = []
    if policy["staleness"]["p95"] > bound:
        failed.append("p95")
    for run in [baselines["alwaysOn"], interval_run, baselines["stopTimeout"]]:
        if run is not None and run["staleness"]["p95"] <= bound and not energy < run["energy"]:
            failed.append(run["name"])
    # A capture with one fix has no duration: no energy, no ratio (the JSON leaves it out).
    # JSON has no infinity: a missing ratio is energy over an oracle that spent none.
    to_oracle = figures.get("ratioToOracle", float("inf") if energy > 0 else 1.0)
    if figures["duration"] == 0:
        rows.append((short(capture), label(profile), "-", "-", "-", "-", "-", "-", "-", "%d" % bound, "-",
                     "n/a: %d fix, no duration" % figures["trueFixes"]))
        continue
    if to_oracle > 1.5:
        failed.append("oracle")
    cells = (
        short(capture), label(profile), "%.1f" % policy["energyPercent"], "%.2f" % to_oracle,
        ratio(baselines["alwaysOn"]),
        (ratio(interval_run) + "@%ds" % interval["seconds"]) if interval else "-",
        ratio(baselines["stopTimeout"]), "%.1f" % policy["staleness"]["p95"], "%.1f" % policy["staleness"]["max"],
        "%d" % bound, str(len(figures["pauses"])))
    if profile == "always-on":
        # The always-on profile is the always-on baseline: below it is impossible by definition.
        rows.append(cells + ("n/a: the always-on baseline itself",))
        continue
    judged += 1
    if failed and figures["oracle"]["energy"] == 0:
        free_oracle += 1
    for reason in failed:
        causes[reason if reason in ("p95", "oracle") else "baseline"] = causes.get(
            reason if reason in ("p95", "oracle") else "baseline", 0) + 1
    if failed:
        misses.setdefault(profile, []).append(os.path.basename(capture))
    else:
        met += 1
    rows.append(cells + ("yes" if not failed else "no: " + ",".join(failed),))

widths = [max(len(str(row[i])) for row in [header] + rows) for i in range(len(header))]
for row in [header] + rows:
    print("  ".join(str(cell).ljust(widths[i]) if i in (0, 1, len(row) - 1) else str(cell).rjust(widths[i])
                    for i, cell in enumerate(row)).rstrip())
print()
def judged_runs(p):
    return sum(1 for (c, q), f, e in results
               if q == p and q != "always-on" and f is not None and f["duration"] > 0)
by_profile = ", ".join("%s %d/%d" % (label(p), judged_runs(p) - len(misses.get(p, [])), judged_runs(p))
                       for p in profiles if p != "always-on")
print("summary: goal met on %d of %d capture x profile runs (%s); %d not evaluable or always-on"
      % (met, judged, by_profile, len(results) - judged))
print("misses: %d where the oracle spends nothing (its first fix stays within the bound to the end); "
      "p95 over the bound %d, beaten by a baseline %d, over 1.5x the oracle %d (a run can miss several ways)"
      % (free_oracle, causes.get("p95", 0), causes.get("baseline", 0), causes.get("oracle", 0)))

# The frontier of the --probe sweep: what each way of probing costs against how late it sees departures.
if any(p.endswith(".json") for p in profiles):
    print()
    head = ("variant", "energy mAh", "/oracle", "worst /oracle", "worst p95/bound", "worst max/bound", "at")
    lines = []
    for p in profiles:
        runs = [(c, f) for (c, q), f, e in results if q == p and f is not None and f["duration"] > 0]
        if not runs or label(p) == "always-on":
            continue
        energy = sum(f["policy"]["energy"] for c, f in runs)
        oracle = sum(f["oracle"]["energy"] for c, f in runs)
        worst_oracle = max(f.get("ratioToOracle", float("inf")) for c, f in runs)
        worst = max(runs, key=lambda r: r[1]["policy"]["staleness"]["max"] / r[1]["stalenessBound"])
        worst_p95 = max(f["policy"]["staleness"]["p95"] / f["stalenessBound"] for c, f in runs)
        lines.append((label(p), "%.2f" % energy, "%.2f" % (energy / oracle) if oracle > 0 else "inf",
                      "%.2f" % worst_oracle, "%.2f" % worst_p95,
                      "%.2f" % (worst[1]["policy"]["staleness"]["max"] / worst[1]["stalenessBound"]),
                      short(worst[0])))
    widths = [max(len(str(r[i])) for r in [head] + lines) for i in range(len(head))]
    for r in [head] + lines:
        print("  ".join(str(c).ljust(widths[i]) if i in (0, 6) else str(c).rjust(widths[i]) for i, c in enumerate(r)))
PY
