// Generated from `lodestar profiles show NAME` (see profiles/ and docs/profiles.md). Edit a value here, then
// regenerate profiles/NAME.json with `lodestar profiles show NAME > profiles/NAME.json`; ProfileTests check
// that each text is complete and canonical (parse → jsonText gives it back) and that profiles/ matches.

/// The built-in profiles as the JSON text `show` prints, so they go through the same parser as files.
enum BuiltInProfiles {
    static let texts: [(name: String, json: String)] = [
        // car: SPEC.md §4 starts automotiveNavigation at a 5 min window, but issue 4's replay tests require that
        // every stop of two minutes or more in the drives is detected, so the window is 90 s (≤ 120 s, with 30 s to
        // spare for braking and the fixes the detector needs). Most red lights and queue stops are shorter than
        // 90 s, so they do not pause; a long red that does costs one pause and a probe 15 s later (a hot start on
        // a u-blox 8 is ~2 s), so the departure is seen within ~15 s. Probes grow to 1 min at most: a parked car
        // is noticed leaving within a minute. 10 m distance filter: a navigation display needs no more, and
        // fixes closer together are noise at walking-pace crawls. Staleness bound 100 m: ~3 s at motorway speed.
        (
            "car",
            #"""
            {
              "name": "car",
              "description": "Driving: best accuracy, 10 m filter; pauses after 90 s stopped, probes 15 s to 1 min",
              "updates": {
                "enabled": true,
                "desiredAccuracy": "best",
                "distanceFilter": 10,
                "activityType": "automotiveNavigation",
                "pausesAutomatically": true,
                "autoResume": true,
                "accuracyLimit": null
              },
              "deferred": null,
              "significantChange": false,
              "stalenessBound": 100,
              "exitRegime": "continuous",
              "policy": {
                "maximumAge": 30,
                "warmUp": 30,
                "warmUpAccuracyLimit": 100,
                "stationary": {
                  "other": {
                    "radius": 30,
                    "window": 180,
                    "movingSpeed": 2.5,
                    "probeInterval": 60,
                    "probeGrowth": 1.5,
                    "maximumProbeInterval": 300
                  },
                  "automotiveNavigation": {
                    "radius": 50,
                    "window": 90,
                    "movingSpeed": 2.5,
                    "probeInterval": 15,
                    "probeGrowth": 1.5,
                    "maximumProbeInterval": 60
                  },
                  "fitness": {
                    "radius": 25,
                    "window": 120,
                    "movingSpeed": 2.5,
                    "probeInterval": 30,
                    "probeGrowth": 1.5,
                    "maximumProbeInterval": 120
                  },
                  "otherNavigation": {
                    "radius": 50,
                    "window": 600,
                    "movingSpeed": 2.5,
                    "probeInterval": 60,
                    "probeGrowth": 2,
                    "maximumProbeInterval": 600
                  },
                  "airborne": {
                    "radius": 100,
                    "window": null,
                    "movingSpeed": 2.5,
                    "probeInterval": 30,
                    "probeGrowth": 1.5,
                    "maximumProbeInterval": 180
                  }
                },
                "dutyCycle": {
                  "hundredMeters": {
                    "minimumInterval": 15,
                    "maximumInterval": 120
                  },
                  "kilometer": {
                    "minimumInterval": 60,
                    "maximumInterval": 600
                  },
                  "threeKilometers": {
                    "minimumInterval": 180,
                    "maximumInterval": 1200
                  },
                  "reduced": {
                    "minimumInterval": 900,
                    "maximumInterval": 3600
                  }
                },
                "acquisition": {
                  "timeout": 60,
                  "backoffFactor": 2,
                  "maximumBackoff": 1800
                },
                "deferredBufferCapacity": 3600,
                "significantChange": {
                  "distance": 500,
                  "minimumInterval": 300,
                  "wakeInterval": 300,
                  "maximumWakeInterval": 1800,
                  "accuracyLimit": 200
                },
                "requestTimeout": 15,
                "reducedGridSize": 2000,
                "prediction": {
                  "enabled": false,
                  "bound": null,
                  "maximumAcceleration": 1,
                  "minimumSleep": 3,
                  "maximumSleep": 60
                }
              },
              "receiver": {
                "model": "ublox8",
                "powerControl": "ubx",
                "supportedRegimes": ["continuous", "powerSave", "standby", "off"],
                "current": {
                  "acquisition": 32,
                  "tracking": 29,
                  "powerSave": 9.5,
                  "standby": 5.4,
                  "backup": 0.015,
                  "off": 0
                },
                "timeToFirstFix": {
                  "hot": 2,
                  "warm": 25,
                  "cold": 29,
                  "hotWindow": 14400
                },
                "backupSupplyWhenOff": true
              }
            }
            """#
        ),
        // bike: fitness (Core Location lists cycling workouts there). 2 min within 25 m is a café stop or a
        // puncture, not a junction; probes from 20 s (a bike covers ~100 m in that time) to 90 s. 5 m filter;
        // staleness bound 50 m (about 10 s at 18 km/h).
        (
            "bike",
            #"""
            {
              "name": "bike",
              "description": "Cycling: best accuracy, 5 m filter; pauses after 2 min within 25 m, probes 20 s to 90 s",
              "updates": {
                "enabled": true,
                "desiredAccuracy": "best",
                "distanceFilter": 5,
                "activityType": "fitness",
                "pausesAutomatically": true,
                "autoResume": true,
                "accuracyLimit": null
              },
              "deferred": null,
              "significantChange": false,
              "stalenessBound": 50,
              "exitRegime": "continuous",
              "policy": {
                "maximumAge": 30,
                "warmUp": 30,
                "warmUpAccuracyLimit": 100,
                "stationary": {
                  "other": {
                    "radius": 30,
                    "window": 180,
                    "movingSpeed": 2.5,
                    "probeInterval": 60,
                    "probeGrowth": 1.5,
                    "maximumProbeInterval": 300
                  },
                  "automotiveNavigation": {
                    "radius": 50,
                    "window": 300,
                    "movingSpeed": 2.5,
                    "probeInterval": 30,
                    "probeGrowth": 1.5,
                    "maximumProbeInterval": 180
                  },
                  "fitness": {
                    "radius": 25,
                    "window": 120,
                    "movingSpeed": 2.5,
                    "probeInterval": 20,
                    "probeGrowth": 1.5,
                    "maximumProbeInterval": 90
                  },
                  "otherNavigation": {
                    "radius": 50,
                    "window": 600,
                    "movingSpeed": 2.5,
                    "probeInterval": 60,
                    "probeGrowth": 2,
                    "maximumProbeInterval": 600
                  },
                  "airborne": {
                    "radius": 100,
                    "window": null,
                    "movingSpeed": 2.5,
                    "probeInterval": 30,
                    "probeGrowth": 1.5,
                    "maximumProbeInterval": 180
                  }
                },
                "dutyCycle": {
                  "hundredMeters": {
                    "minimumInterval": 15,
                    "maximumInterval": 120
                  },
                  "kilometer": {
                    "minimumInterval": 60,
                    "maximumInterval": 600
                  },
                  "threeKilometers": {
                    "minimumInterval": 180,
                    "maximumInterval": 1200
                  },
                  "reduced": {
                    "minimumInterval": 900,
                    "maximumInterval": 3600
                  }
                },
                "acquisition": {
                  "timeout": 60,
                  "backoffFactor": 2,
                  "maximumBackoff": 1800
                },
                "deferredBufferCapacity": 3600,
                "significantChange": {
                  "distance": 500,
                  "minimumInterval": 300,
                  "wakeInterval": 300,
                  "maximumWakeInterval": 1800,
                  "accuracyLimit": 200
                },
                "requestTimeout": 15,
                "reducedGridSize": 2000,
                "prediction": {
                  "enabled": false,
                  "bound": null,
                  "maximumAcceleration": 1,
                  "minimumSleep": 3,
                  "maximumSleep": 60
                }
              },
              "receiver": {
                "model": "ublox8",
                "powerControl": "ubx",
                "supportedRegimes": ["continuous", "powerSave", "standby", "off"],
                "current": {
                  "acquisition": 32,
                  "tracking": 29,
                  "powerSave": 9.5,
                  "standby": 5.4,
                  "backup": 0.015,
                  "off": 0
                },
                "timeToFirstFix": {
                  "hot": 2,
                  "warm": 25,
                  "cold": 29,
                  "hotWindow": 14400
                },
                "backupSupplyWhenOff": true
              }
            }
            """#
        ),
        // walk: the batching profile (Core Location's deferred updates were made for fitness apps in the
        // background): fixes at GPS accuracy, delivered every 200 m or 5 min, so the application wakes rarely; the
        // receiver still runs. No distance filter: deferral refuses one. Pauses after 3 min within 20 m (map
        // reading, a crossing is shorter); walking at 1.4 m/s stays under movingSpeed, so displacement catches
        // it. Staleness bound 250 m: a batch may hold up to 200 m of track.
        (
            "walk",
            #"""
            {
              "name": "walk",
              "description": "Walking: best accuracy in batches every 200 m or 5 min; pauses after 3 min within 20 m",
              "updates": {
                "enabled": true,
                "desiredAccuracy": "best",
                "distanceFilter": null,
                "activityType": "fitness",
                "pausesAutomatically": true,
                "autoResume": true,
                "accuracyLimit": null
              },
              "deferred": {
                "untilTraveled": 200,
                "timeout": 300
              },
              "significantChange": false,
              "stalenessBound": 250,
              "exitRegime": "continuous",
              "policy": {
                "maximumAge": 30,
                "warmUp": 30,
                "warmUpAccuracyLimit": 100,
                "stationary": {
                  "other": {
                    "radius": 30,
                    "window": 180,
                    "movingSpeed": 2.5,
                    "probeInterval": 60,
                    "probeGrowth": 1.5,
                    "maximumProbeInterval": 300
                  },
                  "automotiveNavigation": {
                    "radius": 50,
                    "window": 300,
                    "movingSpeed": 2.5,
                    "probeInterval": 30,
                    "probeGrowth": 1.5,
                    "maximumProbeInterval": 180
                  },
                  "fitness": {
                    "radius": 20,
                    "window": 180,
                    "movingSpeed": 2.5,
                    "probeInterval": 30,
                    "probeGrowth": 1.5,
                    "maximumProbeInterval": 120
                  },
                  "otherNavigation": {
                    "radius": 50,
                    "window": 600,
                    "movingSpeed": 2.5,
                    "probeInterval": 60,
                    "probeGrowth": 2,
                    "maximumProbeInterval": 600
                  },
                  "airborne": {
                    "radius": 100,
                    "window": null,
                    "movingSpeed": 2.5,
                    "probeInterval": 30,
                    "probeGrowth": 1.5,
                    "maximumProbeInterval": 180
                  }
                },
                "dutyCycle": {
                  "hundredMeters": {
                    "minimumInterval": 15,
                    "maximumInterval": 120
                  },
                  "kilometer": {
                    "minimumInterval": 60,
                    "maximumInterval": 600
                  },
                  "threeKilometers": {
                    "minimumInterval": 180,
                    "maximumInterval": 1200
                  },
                  "reduced": {
                    "minimumInterval": 900,
                    "maximumInterval": 3600
                  }
                },
                "acquisition": {
                  "timeout": 60,
                  "backoffFactor": 2,
                  "maximumBackoff": 1800
                },
                "deferredBufferCapacity": 3600,
                "significantChange": {
                  "distance": 500,
                  "minimumInterval": 300,
                  "wakeInterval": 300,
                  "maximumWakeInterval": 1800,
                  "accuracyLimit": 200
                },
                "requestTimeout": 15,
                "reducedGridSize": 2000,
                "prediction": {
                  "enabled": false,
                  "bound": null,
                  "maximumAcceleration": 1,
                  "minimumSleep": 3,
                  "maximumSleep": 60
                }
              },
              "receiver": {
                "model": "ublox8",
                "powerControl": "ubx",
                "supportedRegimes": ["continuous", "powerSave", "standby", "off"],
                "current": {
                  "acquisition": 32,
                  "tracking": 29,
                  "powerSave": 9.5,
                  "standby": 5.4,
                  "backup": 0.015,
                  "off": 0
                },
                "timeToFirstFix": {
                  "hot": 2,
                  "warm": 25,
                  "cold": 29,
                  "hotWindow": 14400
                },
                "backupSupplyWhenOff": true
              }
            }
            """#
        ),
        // boat: otherNavigation (Core Location: boats, off-road). nearestTenMeters puts receivers with a power-
        // save mode in it (u-blox 8: 29 → 9.5 mA); 10 m is plenty on open water. A boat at anchor swings on its
        // rode, so 50 m and 10 min (SPEC.md §4); probes from 1 min growing to 5 min.
        (
            "boat",
            #"""
            {
              "name": "boat",
              "description": "Boating: 10 m accuracy (power save), 10 m filter; pauses after 10 min within 50 m",
              "updates": {
                "enabled": true,
                "desiredAccuracy": "nearestTenMeters",
                "distanceFilter": 10,
                "activityType": "otherNavigation",
                "pausesAutomatically": true,
                "autoResume": true,
                "accuracyLimit": null
              },
              "deferred": null,
              "significantChange": false,
              "stalenessBound": 100,
              "exitRegime": "continuous",
              "policy": {
                "maximumAge": 30,
                "warmUp": 30,
                "warmUpAccuracyLimit": 100,
                "stationary": {
                  "other": {
                    "radius": 30,
                    "window": 180,
                    "movingSpeed": 2.5,
                    "probeInterval": 60,
                    "probeGrowth": 1.5,
                    "maximumProbeInterval": 300
                  },
                  "automotiveNavigation": {
                    "radius": 50,
                    "window": 300,
                    "movingSpeed": 2.5,
                    "probeInterval": 30,
                    "probeGrowth": 1.5,
                    "maximumProbeInterval": 180
                  },
                  "fitness": {
                    "radius": 25,
                    "window": 120,
                    "movingSpeed": 2.5,
                    "probeInterval": 30,
                    "probeGrowth": 1.5,
                    "maximumProbeInterval": 120
                  },
                  "otherNavigation": {
                    "radius": 50,
                    "window": 600,
                    "movingSpeed": 2.5,
                    "probeInterval": 60,
                    "probeGrowth": 1.5,
                    "maximumProbeInterval": 300
                  },
                  "airborne": {
                    "radius": 100,
                    "window": null,
                    "movingSpeed": 2.5,
                    "probeInterval": 30,
                    "probeGrowth": 1.5,
                    "maximumProbeInterval": 180
                  }
                },
                "dutyCycle": {
                  "hundredMeters": {
                    "minimumInterval": 15,
                    "maximumInterval": 120
                  },
                  "kilometer": {
                    "minimumInterval": 60,
                    "maximumInterval": 600
                  },
                  "threeKilometers": {
                    "minimumInterval": 180,
                    "maximumInterval": 1200
                  },
                  "reduced": {
                    "minimumInterval": 900,
                    "maximumInterval": 3600
                  }
                },
                "acquisition": {
                  "timeout": 60,
                  "backoffFactor": 2,
                  "maximumBackoff": 1800
                },
                "deferredBufferCapacity": 3600,
                "significantChange": {
                  "distance": 500,
                  "minimumInterval": 300,
                  "wakeInterval": 300,
                  "maximumWakeInterval": 1800,
                  "accuracyLimit": 200
                },
                "requestTimeout": 15,
                "reducedGridSize": 2000,
                "prediction": {
                  "enabled": false,
                  "bound": null,
                  "maximumAcceleration": 1,
                  "minimumSleep": 3,
                  "maximumSleep": 60
                }
              },
              "receiver": {
                "model": "ublox8",
                "powerControl": "ubx",
                "supportedRegimes": ["continuous", "powerSave", "standby", "off"],
                "current": {
                  "acquisition": 32,
                  "tracking": 29,
                  "powerSave": 9.5,
                  "standby": 5.4,
                  "backup": 0.015,
                  "off": 0
                },
                "timeToFirstFix": {
                  "hot": 2,
                  "warm": 25,
                  "cold": 29,
                  "hotWindow": 14400
                },
                "backupSupplyWhenOff": true
              }
            }
            """#
        ),
        // asset: significant changes only (SPEC.md §6: ≥ 500 m, ≤ 1 per 5 min), no standard updates: the receiver
        // sleeps at its cheapest regime between wakes, which stretch to 1 h while the asset does not move. The
        // receiver is switched off on exit (a battery-powered tracker), not returned to running. The staleness
        // bound is loose (3 km): between events the last location may be up to 500 m plus a wake interval old.
        (
            "asset",
            #"""
            {
              "name": "asset",
              "description": "Asset tracking: significant changes only (500 m, at most 1 per 5 min); off on exit",
              "updates": {
                "enabled": false,
                "desiredAccuracy": "threeKilometers",
                "distanceFilter": null,
                "activityType": "other",
                "pausesAutomatically": true,
                "autoResume": true,
                "accuracyLimit": null
              },
              "deferred": null,
              "significantChange": true,
              "stalenessBound": 3000,
              "exitRegime": "off",
              "policy": {
                "maximumAge": 30,
                "warmUp": 30,
                "warmUpAccuracyLimit": 100,
                "stationary": {
                  "other": {
                    "radius": 30,
                    "window": 180,
                    "movingSpeed": 2.5,
                    "probeInterval": 60,
                    "probeGrowth": 1.5,
                    "maximumProbeInterval": 300
                  },
                  "automotiveNavigation": {
                    "radius": 50,
                    "window": 300,
                    "movingSpeed": 2.5,
                    "probeInterval": 30,
                    "probeGrowth": 1.5,
                    "maximumProbeInterval": 180
                  },
                  "fitness": {
                    "radius": 25,
                    "window": 120,
                    "movingSpeed": 2.5,
                    "probeInterval": 30,
                    "probeGrowth": 1.5,
                    "maximumProbeInterval": 120
                  },
                  "otherNavigation": {
                    "radius": 50,
                    "window": 600,
                    "movingSpeed": 2.5,
                    "probeInterval": 60,
                    "probeGrowth": 2,
                    "maximumProbeInterval": 600
                  },
                  "airborne": {
                    "radius": 100,
                    "window": null,
                    "movingSpeed": 2.5,
                    "probeInterval": 30,
                    "probeGrowth": 1.5,
                    "maximumProbeInterval": 180
                  }
                },
                "dutyCycle": {
                  "hundredMeters": {
                    "minimumInterval": 15,
                    "maximumInterval": 120
                  },
                  "kilometer": {
                    "minimumInterval": 60,
                    "maximumInterval": 600
                  },
                  "threeKilometers": {
                    "minimumInterval": 180,
                    "maximumInterval": 1200
                  },
                  "reduced": {
                    "minimumInterval": 900,
                    "maximumInterval": 3600
                  }
                },
                "acquisition": {
                  "timeout": 60,
                  "backoffFactor": 2,
                  "maximumBackoff": 1800
                },
                "deferredBufferCapacity": 3600,
                "significantChange": {
                  "distance": 500,
                  "minimumInterval": 300,
                  "wakeInterval": 300,
                  "maximumWakeInterval": 3600,
                  "accuracyLimit": 200
                },
                "requestTimeout": 15,
                "reducedGridSize": 2000,
                "prediction": {
                  "enabled": false,
                  "bound": null,
                  "maximumAcceleration": 1,
                  "minimumSleep": 3,
                  "maximumSleep": 60
                }
              },
              "receiver": {
                "model": "ublox8",
                "powerControl": "ubx",
                "supportedRegimes": ["continuous", "powerSave", "standby", "off"],
                "current": {
                  "acquisition": 32,
                  "tracking": 29,
                  "powerSave": 9.5,
                  "standby": 5.4,
                  "backup": 0.015,
                  "off": 0
                },
                "timeToFirstFix": {
                  "hot": 2,
                  "warm": 25,
                  "cold": 29,
                  "hotWindow": 14400
                },
                "backupSupplyWhenOff": true
              }
            }
            """#
        ),
        // always-on: the baseline every evaluation compares with: bestForNavigation, every fix, never paused.
        (
            "always-on",
            #"""
            {
              "name": "always-on",
              "description": "Always on: best for navigation, every fix, never pauses (the baseline to compare with)",
              "updates": {
                "enabled": true,
                "desiredAccuracy": "bestForNavigation",
                "distanceFilter": null,
                "activityType": "other",
                "pausesAutomatically": false,
                "autoResume": true,
                "accuracyLimit": null
              },
              "deferred": null,
              "significantChange": false,
              "stalenessBound": 50,
              "exitRegime": "continuous",
              "policy": {
                "maximumAge": 30,
                "warmUp": 30,
                "warmUpAccuracyLimit": 100,
                "stationary": {
                  "other": {
                    "radius": 30,
                    "window": 180,
                    "movingSpeed": 2.5,
                    "probeInterval": 60,
                    "probeGrowth": 1.5,
                    "maximumProbeInterval": 300
                  },
                  "automotiveNavigation": {
                    "radius": 50,
                    "window": 300,
                    "movingSpeed": 2.5,
                    "probeInterval": 30,
                    "probeGrowth": 1.5,
                    "maximumProbeInterval": 180
                  },
                  "fitness": {
                    "radius": 25,
                    "window": 120,
                    "movingSpeed": 2.5,
                    "probeInterval": 30,
                    "probeGrowth": 1.5,
                    "maximumProbeInterval": 120
                  },
                  "otherNavigation": {
                    "radius": 50,
                    "window": 600,
                    "movingSpeed": 2.5,
                    "probeInterval": 60,
                    "probeGrowth": 2,
                    "maximumProbeInterval": 600
                  },
                  "airborne": {
                    "radius": 100,
                    "window": null,
                    "movingSpeed": 2.5,
                    "probeInterval": 30,
                    "probeGrowth": 1.5,
                    "maximumProbeInterval": 180
                  }
                },
                "dutyCycle": {
                  "hundredMeters": {
                    "minimumInterval": 15,
                    "maximumInterval": 120
                  },
                  "kilometer": {
                    "minimumInterval": 60,
                    "maximumInterval": 600
                  },
                  "threeKilometers": {
                    "minimumInterval": 180,
                    "maximumInterval": 1200
                  },
                  "reduced": {
                    "minimumInterval": 900,
                    "maximumInterval": 3600
                  }
                },
                "acquisition": {
                  "timeout": 60,
                  "backoffFactor": 2,
                  "maximumBackoff": 1800
                },
                "deferredBufferCapacity": 3600,
                "significantChange": {
                  "distance": 500,
                  "minimumInterval": 300,
                  "wakeInterval": 300,
                  "maximumWakeInterval": 1800,
                  "accuracyLimit": 200
                },
                "requestTimeout": 15,
                "reducedGridSize": 2000,
                "prediction": {
                  "enabled": false,
                  "bound": null,
                  "maximumAcceleration": 1,
                  "minimumSleep": 3,
                  "maximumSleep": 60
                }
              },
              "receiver": {
                "model": "ublox8",
                "powerControl": "ubx",
                "supportedRegimes": ["continuous", "powerSave", "standby", "off"],
                "current": {
                  "acquisition": 32,
                  "tracking": 29,
                  "powerSave": 9.5,
                  "standby": 5.4,
                  "backup": 0.015,
                  "off": 0
                },
                "timeToFirstFix": {
                  "hot": 2,
                  "warm": 25,
                  "cold": 29,
                  "hotWindow": 14400
                },
                "backupSupplyWhenOff": true
              }
            }
            """#
        ),
    ]
}
