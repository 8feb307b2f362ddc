// The seeded generator of the random and fuzz tests is the simulation's own (its motion sensor draws misses and
// false alarms from it): one generator, re-exported here for every test target.
@_exported import struct Simulation.SplitMix64
