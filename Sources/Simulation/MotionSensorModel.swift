import GPSModel
import Policy

/// A motion sensor modelled from the true track, for evaluating a policy with one (`MotionRule.sensor`): a
/// vibration switch or an accelerometer's interrupt that fires while the vehicle moves, late by `latency`,
/// missing some of its firings and firing now and then while nothing moves. Deterministic: its draws come from
/// a generator seeded by `seed`. With `ignitionOffAfter`, an ignition line instead: one firing as the engine
/// starts, none while it runs; or, with `ignitionLevel`, the engine's level, on as it starts and off once parked.
public struct MotionSensorModel: Sendable, Hashable {
    /// Seconds from the motion to the hint.
    public var latency: Double
    /// The chance that a firing is lost (0: a perfect sensor; 1: a dead one, which only the fallback probes cover).
    public var missProbability: Double
    /// Firings per hour while the vehicle stands (a truck going by, a door shut).
    public var falseAlarmsPerHour: Double
    /// While the vehicle moves, the sensor fires again this often (a vibration goes on).
    public var repeatInterval: Double
    /// An ignition line (`motion.gpio` on the ignition): it fires once at a trip's start and not while the
    /// engine runs. The engine stays on through stands shorter than this many seconds (a light, a queue); a
    /// stand this long is the vehicle parked and the engine off, so the next start fires. The recordings do
    /// not say when an engine ran: this is the model's guess. nil: a vibration sensor or an accelerometer.
    public var ignitionOffAfter: Double?
    /// The ignition line's level is read (`motion.gpio.ignition`): the policy hears the engine go on at a trip's
    /// start and off once the vehicle has stood `ignitionOffAfter` seconds, instead of the start's edge alone.
    public var ignitionLevel: Bool
    public var seed: UInt64

    /// The true speed, in m/s, above which the vehicle moves, held for `movingFixes` true fixes in a row (one
    /// fast fix is a stationary receiver's noise as often as not).
    public static let movingSpeed = 1.5
    public static let movingFixes = 3

    public init(
        latency: Double = 2, missProbability: Double = 0, falseAlarmsPerHour: Double = 0, repeatInterval: Double = 30,
        ignitionOffAfter: Double? = nil, ignitionLevel: Bool = false, seed: UInt64 = 1
    ) {
        (self.latency, self.missProbability, self.falseAlarmsPerHour, self.repeatInterval, self.ignitionOffAfter)
            = (latency, missProbability, falseAlarmsPerHour, repeatInterval, ignitionOffAfter)
        (self.ignitionLevel, self.seed) = (ignitionLevel, seed)
    }
}

/// `MotionSensorModel` fed the true track one fix at a time: the hints (or the ignition's levels) it gives, each
/// due at an instant.
struct MotionSensor: Sendable {
    let model: MotionSensorModel
    private var random: SplitMix64
    private var previous: (t: Double, location: Location)?
    private var movingRun = 0
    private var lastFiring = -Double.infinity
    /// The last true fix of a moving run (`ignitionOffAfter` measures the stand from it).
    private var lastMoving: Double?
    /// The engine's level last given (`ignitionLevel`).
    private var engineRunning: Bool?
    /// Hints and levels not yet handed over, in time order.
    private(set) var due: [(t: Double, event: PolicyEvent)] = []

    init(model: MotionSensorModel) {
        self.model = model
        random = SplitMix64(seed: model.seed)
    }

    /// A true fix at `t`.
    mutating func observe(_ t: Double, _ location: Location) {
        defer { previous = (t, location) }
        guard let previous, t > previous.t else { return }
        let speed =
            location.speed ?? Geodesy.distance(from: previous.location, to: location) / (t - previous.t)
        movingRun = speed > MotionSensorModel.movingSpeed ? movingRun + 1 : 0
        if let offAfter = model.ignitionOffAfter {
            let parked = lastMoving.map { t - $0 >= offAfter } ?? true
            guard movingRun >= MotionSensorModel.movingFixes else {
                // Stood long enough: the key turned off, which only a line read for its level tells.
                if model.ignitionLevel, parked, engineRunning != false { level(false, at: t) }
                return
            }
            defer { lastMoving = t }
            // Off until this start (never moved, or stood `offAfter`): the key turned, the line's one edge.
            if model.ignitionLevel, engineRunning != true {
                level(true, at: t)
            } else if !model.ignitionLevel, parked {
                fire(at: t)
            }
            return
        }
        if movingRun >= MotionSensorModel.movingFixes {
            // Each start fires, however soon after the last firing (an accelerometer's interrupt does: a light
            // left soon after arriving); motion that goes on fires again each `repeatInterval`. Between true
            // fixes far apart (the recording's receiver had no sky) a real sensor would fire; the model learns
            // of that motion only at the next fix, and a hint dated before it would reach the simulation after
            // its clock had passed.
            if movingRun == MotionSensorModel.movingFixes || t - lastFiring >= model.repeatInterval {
                lastFiring = t
                fire(at: t)
            }
        } else if model.falseAlarmsPerHour > 0, random.unit() < model.falseAlarmsPerHour * (t - previous.t) / 3600 {
            fire(at: t)
        }
    }

    private mutating func fire(at t: Double) {
        // A miss is drawn for every firing, so the same seed gives the same hints with or without false alarms.
        let missed = random.unit() < model.missProbability
        if !missed { due.append((t + model.latency, .motionHint)) }
    }

    /// The ignition's level read at `t`: a wire to the ignition does not miss.
    private mutating func level(_ on: Bool, at t: Double) {
        engineRunning = on
        due.append((t + model.latency, .ignition(on: on)))
    }

    /// The hints and levels due by `t`, taken.
    mutating func take(until t: Double) -> [(t: Double, event: PolicyEvent)] {
        let count = due.prefix { $0.t <= t }.count
        defer { due.removeFirst(count) }
        return Array(due.prefix(count))
    }
}
