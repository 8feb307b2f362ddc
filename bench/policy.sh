#!/usr/bin/env bash
# Benchmark (not a test): every capture in the repo under every built-in profile through
# `lodestar replay --profile P --evaluate --json`, one row each. Goal (docs/contract.md §11): staleness p95 within the
# profile's bound, energy below every baseline that meets the same bound at p95, and at most 1.5x the
# oracle's energy.
#   bench/policy.sh [CAPTURE...] [-p PROFILE]...   (default: Tests/Fixtures/captures/*, every built-in)
# Columns: energy in % of always-on; ratios of the profile's energy to the oracle's and to each baseline's
# (a baseline whose p95 is over the bound is marked "*": it does not count against the goal); staleness
# p95 and max in metres; pauses; goal met, or what failed (p95, a baseline's name, oracle). The always-on
# profile is the always-on baseline itself and is not judged.
set -euo pipefail
source "$(dirname "$0")/build-release.sh"
captures=()
profiles=()
while [ "$#" -gt 0 ]; do
  case "$1" in
    -p) profiles+=("$2"); shift 2 ;;
    *) captures+=("$1"); shift ;;
  esac
done
[ "${#captures[@]}" -gt 0 ] || captures=(Tests/Fixtures/captures/*.nmea Tests/Fixtures/captures/*.ubx)
[ "${#profiles[@]}" -gt 0 ] || mapfile -t profiles < <(.build/release/lodestar profiles list | awk '{print $1}')
exec /usr/bin/python3 - "${#profiles[@]}" "${profiles[@]}" "${captures[@]}" <<'PY'
import json, os, subprocess, sys
from concurrent.futures import ThreadPoolExecutor

count = int(sys.argv[1])
profiles, captures = sys.argv[2:2 + count], sys.argv[2 + count:]

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
        rows.append((short(capture), profile, "-", "-", "-", "-", "-", "-", "-", "-", "-", "n/a: " + error[:60]))
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
        rows.append((short(capture), profile, "-", "-", "-", "-", "-", "-", "-", "%d" % bound, "-",
                     "n/a: %d fix, no duration" % figures["trueFixes"]))
        continue
    if to_oracle > 1.5:
        failed.append("oracle")
    cells = (
        short(capture), profile, "%.1f" % policy["energyPercent"], "%.2f" % to_oracle,
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
by_profile = ", ".join("%s %d/%d" % (p, judged_runs(p) - len(misses.get(p, [])), judged_runs(p))
                       for p in profiles if p != "always-on")
print("summary: goal met on %d of %d capture x profile runs (%s); %d not evaluable or always-on"
      % (met, judged, by_profile, len(results) - judged))
print("misses: %d where the oracle spends nothing (its first fix stays within the bound to the end); "
      "p95 over the bound %d, beaten by a baseline %d, over 1.5x the oracle %d (a run can miss several ways)"
      % (free_oracle, causes.get("p95", 0), causes.get("baseline", 0), causes.get("oracle", 0)))
PY
