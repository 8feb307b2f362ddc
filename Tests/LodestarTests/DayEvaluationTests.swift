import Foundation
import GPSModel
import Lodestar
import Policy
import Simulation
import TestSupport
import Testing

/// A tracker's day made of the repository's recordings: a city drive, a night parked, a long drive, a day
/// parked, another drive (`DayTimeline.track`). The figures that decide a battery (the day's charge against the
/// oracle, what parks cost, how far the car went before its departure was seen, the worst staleness while
/// driving) are evaluated for the car profile and held where they stand, so a change that makes them worse
/// fails here. bench/day.sh prints the same figures for every built-in profile and other park lengths
/// (`LODESTAR_DAY_PROFILES`, `LODESTAR_DAY_PARK_HOURS`), or for one recording alone (`LODESTAR_DAY_DRIVE`).
@Suite(.tags(.slow)) struct DayEvaluationTests {
    /// The park lengths, in hours, after the first and the second drive.
    static let parkHours: [Double] = {
        let given = (ProcessInfo.processInfo.environment["LODESTAR_DAY_PARK_HOURS"] ?? "")
            .split(separator: ",").compactMap { Double($0) }
        return given.count == 2 ? given : [8, 12]
    }()

    /// One recording alone instead of the day (bench/day.sh's `--drive`): its figures are printed, not held.
    static let drive = ProcessInfo.processInfo.environment["LODESTAR_DAY_DRIVE"].flatMap { $0.isEmpty ? nil : $0 }

    static func day() throws -> TrueTrack {
        if let drive { return try DayTimeline.track([.drive(drive)]) }
        return try DayTimeline.track([
            .drive("munich-urban-stopgo-31m.nmea"), .parked("stationary-netherlands-20m.nmea", hours: parkHours[0]),
            .drive("garmin-drive-reno-tahoe-2h43m.nmea"), .parked("garmin-gps15h-static-12m.nmea", hours: parkHours[1]),
            .drive("garmin-geko201-regensburg-drive-26m.nmea"),
        ])
    }

    /// `name` is a built-in profile or a profile file (bench/day.sh's variants); with `sensor`, the policy has a
    /// motion sensor (`MotionRule.sensor`) modelled from the true track.
    static func evaluate(_ name: String, on day: TrueTrack, sensor: MotionSensorModel? = nil) throws -> Evaluation {
        let profile = try ProfileStore.load(nameOrPath: name)
        var setup = profile.simulationSetup
        if let sensor {
            setup.policy.motion.sensor = true
            setup.motionSensor = sensor
        }
        return Evaluator(setup: setup, bound: profile.stalenessBound, name: profile.name).evaluate(day)
    }

    /// `LODESTAR_DAY_SENSORS`: motion sensors as LATENCY:MISS:FALSE_ALARMS_PER_HOUR, or ignition lines as
    /// `ignition`:LATENCY:OFF_AFTER (`MotionSensorModel.ignitionOffAfter`) read for their edges, or
    /// `ignition-level`:LATENCY:OFF_AFTER read for their level, space-separated; each profile is also evaluated
    /// with each (bench/day.sh's `--sensor`).
    static let sensors: [(String, MotionSensorModel)] = (ProcessInfo.processInfo.environment["LODESTAR_DAY_SENSORS"] ?? "")
        .split(separator: " ").compactMap { text in
            let kind = text.split(separator: ":").first.map(String.init) ?? ""
            let ignition = kind == "ignition" || kind == "ignition-level"
            let parts = text.dropFirst(ignition ? kind.count + 1 : 0).split(separator: ":").compactMap { Double($0) }
            if ignition {
                guard parts.count == 2 else { return nil }
                return (
                    String(text),
                    MotionSensorModel(latency: parts[0], ignitionOffAfter: parts[1], ignitionLevel: kind == "ignition-level")
                )
            }
            guard parts.count == 3 else { return nil }
            return (String(text), MotionSensorModel(latency: parts[0], missProbability: parts[1], falseAlarmsPerHour: parts[2]))
        }

    /// One line of figures, which bench/day.sh collects.
    static func line(_ evaluation: Evaluation, profile: String) -> String {
        let parking = evaluation.parking
        func ratio(_ a: Double, _ b: Double) -> String { b > 0 ? String(format: "%.2f", a / b) : "-" }
        let latency = parking.departureLatency
        func figures(_ values: [Double]?) -> String {
            values.map { $0.map { String(format: "%.0f", $0) }.joined(separator: "/") } ?? "-"
        }
        return "day: \(profile) \(String(format: "%.1f", evaluation.policy.energyPercent)) % of always-on; "
            + "energy/oracle day \(ratio(evaluation.policy.energy, evaluation.oracle.energy)), parked "
            + "\(ratio(parking.energyParked, parking.oracleEnergyParked)) (\(String(format: "%.2f", parking.energyParked)) "
            + "mAh against \(String(format: "%.2f", parking.oracleEnergyParked))), moving "
            + "\(ratio(parking.energyMoving, parking.oracleEnergyMoving)); \(parking.parks.count) parks, "
            + "\(String(format: "%.1f", parking.parkedSeconds / 3600)) h, "
            + "\(String(format: "%.1f", parking.wakesPerParkedHour)) wakes per parked hour; departure seen after "
            + "p50/p95/max \(figures(latency?.seconds)) s, \(figures(latency?.metres)) m, "
            + "\(parking.unseenDepartures) unseen; staleness p95 \(String(format: "%.0f", evaluation.policy.staleness.p95)) m, "
            + "max \(String(format: "%.0f", evaluation.policy.staleness.max)) m (bound \(Int(evaluation.bound)) m); "
            + "by true speed, mAh against the oracle's: "
            + evaluation.bySpeed.map { speedClass in
                let range = speedClass.to.map { "\(Int(speedClass.from))-\(Int($0))" } ?? "\(Int(speedClass.from))+"
                return "\(range) m/s \(String(format: "%.2f", speedClass.energy))/\(String(format: "%.2f", speedClass.oracleEnergy))"
            }.joined(separator: ", ")
    }

    /// The parks are found despite the stationary recordings' wander: the two parks of the day, each about as
    /// long as it was made, and no departure in either (each stationary recording wanders over 100 m). The Reno
    /// drive's own stands of a quarter and half an hour are parks too.
    @Test func theDaysParksAreFoundDespiteTheWander() throws {
        guard Self.drive == nil else { return }
        let day = try Self.day()
        let evaluation = try Self.evaluate("car", on: day)
        let parks = evaluation.parking.parks
        let long = parks.filter { ($0.departure ?? day.last) - $0.start > 3600 }
        #expect(long.count == 2, "\(parks)")
        for (park, hours) in zip(long, Self.parkHours) {
            let length = (park.departure ?? day.last) - park.start
            // From the end of the drive (or the creep into the spot) to the last fix before the next drive.
            #expect(abs(length - hours * 3600) < 600, "a park of \(length) s for \(hours) h")
        }
        #expect(parks.count - long.count == 2, "\(parks)")
        #expect(parks.allSatisfy { $0.departure != nil && $0.seenAfter != nil })
    }

    /// A drive whose recording starts at speed leaves a park from rest: the Reno recording starts at 23 m/s,
    /// and with that jump a departure's figures measured the teleport, not how soon the policy saw the car go.
    /// The start accelerates at no more than `DayTimeline.startAcceleration`, its positions a second apart as
    /// far as its speeds carry the car, and ends on the recording's first fix at that fix's speed.
    @Test func aDriveThatStartsAtSpeedLeavesAParkFromRest() throws {
        let reno = "garmin-drive-reno-tahoe-2h43m.nmea"
        let alone = try DayTimeline.track([.drive(reno)]).points
        let first = try #require(alone.first?.location)
        let speed = try #require(first.speed)
        #expect(speed > 20, "the recording starts at \(speed) m/s")
        let parked = 900.0
        let day = try DayTimeline.track([.parked("garmin-gps15h-static-12m.nmea", hours: parked / 3600), .drive(reno)])
        let drive = day.points.filter { $0.t >= parked }
        let steps = Int((speed / DayTimeline.startAcceleration).rounded(.up))
        #expect(drive.count > steps + 1)
        guard drive.count > steps + 1 else { return }
        #expect(drive[0].location.speed == 0)
        for k in 1...steps {
            let (before, after) = (drive[k - 1], drive[k])
            #expect(after.t - before.t == 1)
            let gain = (after.location.speed ?? 0) - (before.location.speed ?? 0)
            #expect(gain > 0 && gain <= DayTimeline.startAcceleration + 1e-9, "speed gained \(gain) m/s at \(k)")
            let metres = Geodesy.distance(from: before.location, to: after.location)
            let expected = ((before.location.speed ?? 0) + (after.location.speed ?? 0)) / 2
            #expect(abs(metres - expected) < 0.5, "\(metres) m in second \(k), \(expected) m expected")
        }
        #expect(drive[steps].location.speed == speed)
        // The recording follows unchanged: its fixes as far apart as alone, from the start's end on.
        for k in 1..<10 {
            let together = Geodesy.distance(from: drive[steps + k - 1].location, to: drive[steps + k].location)
            let apart = Geodesy.distance(from: alone[k - 1].location, to: alone[k].location)
            #expect(abs(together - apart) < 0.01)
        }
    }

    /// The car profile's day, held where it stands: its charge against the oracle, over the day and parked,
    /// how far the car went before a departure was seen, and the worst staleness. The figures it is held to
    /// are the ones it has now, with a little room (docs/policy.md gives them and the goals).
    @Test func theCarProfilesDayHoldsItsFigures() throws {
        let day = try Self.day()
        let profiles = (ProcessInfo.processInfo.environment["LODESTAR_DAY_PROFILES"] ?? "car")
            .split(separator: " ").map(String.init)
        for name in profiles where name != "car" { print(Self.line(try Self.evaluate(name, on: day), profile: name)) }
        for name in profiles {
            for (text, sensor) in Self.sensors {
                print(Self.line(try Self.evaluate(name, on: day, sensor: sensor), profile: "\(name)+sensor(\(text))"))
            }
        }
        let car = try Self.evaluate("car", on: day)
        print(Self.line(car, profile: "car"))
        guard Self.parkHours == [8, 12], Self.drive == nil else { return }  // the bounds below are this day's
        let parking = car.parking
        // Measured: 2.42 for the day, 34.3 parked and 1.20 moving; departures seen after 76 m p50, 1,070 m max
        // (the Reno drive, which reaches 23 m/s 12 s after it leaves: a probe a minute finds it late); the
        // worst staleness 1,174 m, at that departure. The goals are 1.3x, 200 m and 3x the bound.
        #expect(car.policy.energy <= 2.5 * car.oracle.energy, "day: \(car.policy.energy) mAh, oracle \(car.oracle.energy)")
        #expect(parking.energyParked <= 36 * parking.oracleEnergyParked, "parked: \(parking.energyParked) mAh")
        #expect(parking.energyMoving <= 1.3 * parking.oracleEnergyMoving, "moving: \(parking.energyMoving) mAh")
        let latency = try #require(parking.departureLatency, "no departure was seen")
        #expect(latency.metres[2] <= 1150, "departures seen after \(latency.metres) m")
        #expect(parking.unseenDepartures == 0)
        #expect(car.policy.staleness.max <= 1250, "max staleness \(car.policy.staleness.max) m")
    }

    /// The aircraft descent's slow taxi after landing, with a sensor 2 s late: a hint's probe that finds the
    /// plane creeping inside the radius keeps the next hints heard (`displacedAfterProbe`), so the creep is seen
    /// when it leaves the radius and the p95 stays within the bound (189 m when those hints were quieted).
    @Test func withAMotionSensorASlowCreepOutOfAPauseIsSeen() throws {
        guard Self.drive == nil else { return }
        let drive = try DayTimeline.track([.drive("aircraft-descent-landing-18m.nmea")])
        let evaluation = try Self.evaluate("car", on: drive, sensor: MotionSensorModel(latency: 2))
        #expect(evaluation.policy.staleness.p95 <= evaluation.bound, "p95 \(evaluation.policy.staleness.p95) m")
    }

    /// With a motion sensor the car profile is down while parked until a hint, and a hint's probe sees the
    /// departure: the day near the oracle and the departures seen within tens of metres. A sensor 2 s late that
    /// misses nothing, and keeps firing while a drive has no fix (the receiver kept up there), holds the tight
    /// figures: 1.22x the oracle, departures after 0 m at p50 and 27 m at most (the goal is 30 m), the worst
    /// staleness 262 m (within three times the bound). One that also misses one firing in five and fires twice
    /// an hour standing: 1.26x, departures after 0 m at p50 and 27 m at most, but a worst staleness of 855 m
    /// (which firings it misses moves these: on Munich it missed the start before a gap in the sky, and a
    /// missed start is seen at the next firing, 30 s later in the model). Its day is a draw of the model's
    /// misses and false alarms: over seeds 1 to 8, 1.23 to 1.31, median 1.255; seed 1, held here, 1.26. A dead sensor
    /// still has every departure found, by its pauses' first 10 min of probes or the fallback (the worst 900 s
    /// late, 1,708 s when only the fallback probed); one that fires every
    /// second costs a few probes an hour (4.7 wakes per parked hour), not a probe a second.
    @Test func withAMotionSensorTheDayHoldsItsFigures() throws {
        guard Self.parkHours == [8, 12], Self.drive == nil else { return }
        let day = try Self.day()
        let prompt = try Self.evaluate("car", on: day, sensor: MotionSensorModel(latency: 2))
        print(Self.line(prompt, profile: "car+sensor(2:0:0)"))
        #expect(prompt.policy.energy <= 1.24 * prompt.oracle.energy, "day: \(prompt.policy.energy) mAh")
        let promptLatency = try #require(prompt.parking.departureLatency)
        #expect(
            promptLatency.metres[2] <= 30 && promptLatency.metres[0] <= 10 && prompt.parking.unseenDepartures == 0,
            "\(promptLatency)")
        #expect(prompt.policy.staleness.max <= 3 * prompt.bound, "max staleness \(prompt.policy.staleness.max) m")
        let sensor = try Self.evaluate(
            "car", on: day, sensor: MotionSensorModel(latency: 2, missProbability: 0.2, falseAlarmsPerHour: 2))
        print(Self.line(sensor, profile: "car+sensor(2:0.2:2)"))
        #expect(sensor.policy.energy <= 1.28 * sensor.oracle.energy, "day: \(sensor.policy.energy) mAh")
        let latency = try #require(sensor.parking.departureLatency)
        #expect(latency.metres[2] <= 30 && sensor.parking.unseenDepartures == 0, "\(latency)")
        let dead = try Self.evaluate("car", on: day, sensor: MotionSensorModel(missProbability: 1))
        #expect(dead.parking.unseenDepartures == 0)
        #expect((dead.parking.departureLatency?.seconds[2] ?? .infinity) <= 1800 + 60, "\(String(describing: dead.parking.departureLatency))")
        let always = try Self.evaluate("car", on: day, sensor: MotionSensorModel(falseAlarmsPerHour: 3600))
        print(Self.line(always, profile: "car+sensor(2:0:3600)"))
        #expect(always.parking.wakesPerParkedHour <= 8, "\(always.parking.wakesPerParkedHour) wakes per parked hour")
        #expect(always.parking.unseenDepartures == 0)
    }

    /// An ignition line fires as the engine starts and not at the trip's lights (modelled: the engine runs
    /// through stands under 3 min). A pause in Munich's queue, after starts it never saw, probes as without a
    /// sensor for 10 min (`pauseTrustsSensor`): the worst staleness 326 m, where leaving that queue to the
    /// 30 min fallback lost the car for 1,363 m. The day costs 1.38 times the oracle. Read for its level
    /// (`motion.gpio.ignition`), the line also says when the engine went off: a pause with the engine off leaves
    /// the departure to the line at once, and one with it running probes as without a sensor to its end. The
    /// day then costs 1.37 times the oracle, the departures are seen within 27 m (141 m for the edges alone),
    /// and the worst staleness is 262 m, within three times the bound.
    @Test func withAnIgnitionLineAQueueWithTheEngineRunningIsStillLeft() throws {
        guard Self.parkHours == [8, 12], Self.drive == nil else { return }
        let day = try Self.day()
        let ignition = try Self.evaluate("car", on: day, sensor: MotionSensorModel(latency: 2, ignitionOffAfter: 180))
        print(Self.line(ignition, profile: "car+sensor(ignition:2:180)"))
        #expect(ignition.policy.staleness.max <= 3.5 * ignition.bound, "max staleness \(ignition.policy.staleness.max) m")
        #expect(ignition.policy.energy <= 1.42 * ignition.oracle.energy, "day: \(ignition.policy.energy) mAh")
        #expect(ignition.parking.unseenDepartures == 0)
        let level = try Self.evaluate(
            "car", on: day, sensor: MotionSensorModel(latency: 2, ignitionOffAfter: 180, ignitionLevel: true))
        print(Self.line(level, profile: "car+sensor(ignition-level:2:180)"))
        #expect(level.policy.staleness.max <= 3 * level.bound, "max staleness \(level.policy.staleness.max) m")
        #expect(level.policy.energy <= 1.39 * level.oracle.energy, "day: \(level.policy.energy) mAh")
        let latency = try #require(level.parking.departureLatency)
        #expect(latency.metres[2] <= 30 && level.parking.unseenDepartures == 0, "\(latency)")
    }
}
