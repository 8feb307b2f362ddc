// The built-in profiles, each as JSON texts read one on top of the other by the parser files go through:
// first what every built-in shares, then (for car, bike, walk and boat) what the moving profiles share, then
// the profile's own text. Each text states a key only where its value differs from what the texts before it
// (or the defaults, and the named receiver model's values under `receiver`) give, except `stalenessBound`,
// which every built-in states in its own text. `lodestar profiles show NAME` prints the complete profile;
// profiles/NAME.json is that output (`lodestar profiles show NAME > profiles/NAME.json` after an edit here).
// ProfileTests check that each text parses, states no value it would get anyway, and that profiles/ matches.

import Policy

/// The built-in profiles as JSON texts, so they go through the same parser as files.
enum BuiltInProfiles {
    /// Every built-in models a u-blox 8: the receiver whose currents and start times the values below were
    /// tuned against (docs/contract.md §3).
    static let everyProfile = #"{"receiver": {"model": "ublox8"}}"#

    // All four moving profiles (car, bike, walk, boat) track at nearestTenMeters with an accuracyLimit (100 m but for
    // bike), which runs a u-blox 8 in its 1 Hz power-save cycling (9.5 mA against 29 mA, docs/contract.md §3) and still
    // accepts the 10–30 m fixes real receivers report; `best` kept it continuous and was 1.6–2x the energy on every
    // drive (bench/policy.sh). A nap's wake or a probe that sees no fix 10 s past the expected hot start
    // (acquisition.wakeMargin) is a failure, and failures back off to at most 2 min: the Reno drive's 13 and 21 min
    // logging gaps (a car park) had cost 40 % of its energy with the receiver waiting for a fix. Between fixes the
    // receiver naps until the bound could have been covered accelerating at 0.5 m/s² (car, bike and boat say why that
    // fits them; walk takes less).
    static let moving = #"""
        {
          "updates": {"desiredAccuracy": "nearestTenMeters", "accuracyLimit": 100},
          "policy": {
            "acquisition": {"maximumBackoff": 120, "wakeMargin": 10},
            "prediction": {"enabled": true, "maximumAcceleration": 0.5, "minimumSleep": 1}
          }
        }
        """#

    /// Each built-in: the shared texts it is read on top of (in order), then its own.
    static let texts: [(name: String, shared: [String], json: String)] = [
        // car: docs/contract.md §4 starts automotiveNavigation at a 5 min window, but the replay tests require that
        // every stop of two minutes or more in the drives is detected, so the window is 90 s (≤ 120 s, with 30 s to
        // spare for braking and the fixes the detector needs). Most red lights and queue stops are shorter than
        // 90 s, so they do not pause; a long red that does costs one pause and a probe 15 s later (a hot start on
        // a u-blox 8 is ~2 s), so the departure is seen within ~15 s. Probes grow to 1 min at most: a parked car
        // is noticed leaving within a minute. 10 m distance filter: a navigation display needs no more, and
        // fixes closer together are noise at walking-pace crawls. Staleness bound 100 m: ~3 s at motorway speed.
        // Prediction on (bench/policy.sh): between fixes the receiver naps until the car could have covered the
        // bound at its speed accelerating at 0.5 m/s²; 1 m/s² cost 2–5 points of energy on every drive for a
        // p95 that was already within the bound, 0.3 put the Munich drive's p95 over it. In power save a nap pays
        // from about 5 s (a hot start, 32 mA for 2 s, against 9.5 mA), so above ~15 m/s the receiver cycles.
        (
            "car", [everyProfile, moving],
            #"""
            {
              "description": "Driving: power-save tracking, fixes to 100 m, 10 m filter, naps between fixes; pauses after 90 s stopped, probes 15 s to 1 min",
              "updates": {"distanceFilter": 10, "activityType": "automotiveNavigation"},
              "stalenessBound": 100,
              "policy": {
                "stationary": {"automotiveNavigation": {"window": 90, "probeInterval": 15, "maximumProbeInterval": 60}}
              }
            }
            """#
        ),
        // bike: fitness (Core Location lists cycling workouts there). 2 min within 25 m is a café stop or a
        // puncture, not a junction; probes from 20 s (a bike covers ~100 m in that time) to 90 s. 5 m filter;
        // staleness bound 50 m (about 10 s at 18 km/h). Prediction on at 0.5 m/s² (0.25 put the static capture's
        // p95 over 50 m: the naps at a stop grow too long for its position jumps).
        (
            "bike", [everyProfile, moving],
            #"""
            {
              "description": "Cycling: power-save tracking, fixes to 50 m, 5 m filter, naps between fixes; pauses after 2 min within 25 m, probes 20 s to 90 s",
              "updates": {"distanceFilter": 5, "activityType": "fitness", "accuracyLimit": 50},
              "stalenessBound": 50,
              "policy": {"stationary": {"fitness": {"probeInterval": 20, "maximumProbeInterval": 90}}}
            }
            """#
        ),
        // walk: no longer batches. Deferred updates need `best` (docs/contract.md §5), which keeps the receiver out of
        // power save, and they save the application's wake-ups, not the receiver's charge: batching cost 1.3–1.8x the
        // energy of this profile on every capture. A batching profile is one `deferred` object away (docs/
        // profiles.md). Pauses after 3 min within 20 m (map reading, a crossing is shorter); walking at 1.4 m/s
        // stays under movingSpeed, so displacement catches it. Staleness bound 250 m. Prediction on, at
        // 0.25 m/s² (a walker does not sprint off): the receiver naps until 250 m could have been walked, up to a
        // minute.
        (
            "walk", [everyProfile, moving],
            #"""
            {
              "description": "Walking: power-save tracking, fixes to 100 m, naps of up to 1 min between fixes; pauses after 3 min within 20 m",
              "updates": {"activityType": "fitness"},
              "stalenessBound": 250,
              "policy": {
                "stationary": {"fitness": {"radius": 20, "window": 180}},
                "prediction": {"maximumAcceleration": 0.25}
              }
            }
            """#
        ),
        // boat: otherNavigation (Core Location: boats, off-road). nearestTenMeters needs its accuracyLimit: the
        // receivers' own estimates are rarely under 10 m (the repo's captures say 10–25 m), and without it only
        // the warm-up's best fix came every 30 s (p95 staleness of 0.5–1 km at 10 m/s). Naps at 0.5 m/s². A boat
        // at anchor swings on its rode, so 50 m and 10 min (docs/contract.md §4); probes from 1 min growing to 5 min.
        (
            "boat", [everyProfile, moving],
            #"""
            {
              "description": "Boating: power-save tracking, fixes to 100 m, 10 m filter, naps between fixes; pauses after 10 min within 50 m",
              "updates": {"distanceFilter": 10, "activityType": "otherNavigation"},
              "stalenessBound": 100,
              "policy": {"stationary": {"otherNavigation": {"probeGrowth": 1.5, "maximumProbeInterval": 300}}}
            }
            """#
        ),
        // asset: significant changes only (docs/contract.md §6: ≥ 500 m, ≤ 1 per 5 min), no standard updates: the
        // receiver sleeps at its cheapest regime between wakes, which stretch to 15 min while the asset does not move.
        // The receiver is switched off on exit (a battery-powered tracker), not returned to running. The staleness
        // bound is loose (3 km): between events the last location may be up to 500 m plus a wake interval old.
        // Wakes every 5 to 15 min, not up to 1 h: at 1 h the Reno drive's p95 was 35 km, at 15 min 5.6 km for
        // 2.1 % of always-on. Faster than 10 m/s no wake interval helps: at most one event per 5 min
        // (docs/contract.md §6) is 3 km at 36 km/h.
        (
            "asset", [everyProfile],
            #"""
            {
              "description": "Asset tracking: significant changes only (500 m, at most 1 per 5 min); off on exit",
              "updates": {"enabled": false, "desiredAccuracy": "threeKilometers"},
              "significantChange": true,
              "stalenessBound": 3000,
              "exitRegime": "off",
              "policy": {"significantChange": {"maximumWakeInterval": 900}}
            }
            """#
        ),
        // always-on: the baseline every evaluation compares with: bestForNavigation, every fix, never paused, no
        // prediction. It cannot be below the always-on baseline or near the oracle: it is the former.
        (
            "always-on", [everyProfile],
            #"""
            {
              "description": "Always on: best for navigation, every fix, never pauses (the baseline to compare with)",
              "updates": {"desiredAccuracy": "bestForNavigation", "pausesAutomatically": false},
              "stalenessBound": 50
            }
            """#
        ),
    ]

    /// The built-in `name`, nil for an unknown name or a text that does not parse (a test checks they all do).
    static func profile(named name: String) -> Profile? {
        guard let entry = texts.first(where: { $0.name == name }) else { return nil }
        var profile = Profile(name: name)
        for text in entry.shared + [entry.json] {
            guard let next = try? Profile.parse(text, file: "built-in \(name)", base: profile) else { return nil }
            profile = next
        }
        return profile
    }
}
