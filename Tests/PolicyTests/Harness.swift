import GPSModel
import Policy

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Receiver time of t = 0; fixes at monotonic t carry UTC base + t, as a live receiver would.
let baseSeconds: Int64 = 1_800_000_000
let originLatitude = 48.0
let originLongitude = 11.0

/// A fix `north`/`east` metres from the origin at receiver time base + `t` (whole milliseconds).
func makeFix(
    t: Double, north: Double = 0, east: Double = 0, accuracy: Double? = 5, speed: Double? = 0,
    mode: FixMode = .threeD
) -> Location {
    let millis = Int64((t * 1000).rounded())
    let time = UTCTime(
        seconds: baseSeconds + millis / 1000 - (millis % 1000 < 0 ? 1 : 0),
        nanoseconds: Int32(((millis % 1000) + 1000) % 1000) * 1_000_000)
    // The same sphere as Geodesy, so "500 m east" measures 500 m.
    let metresPerDegree = Geodesy.meanEarthRadius * .pi / 180
    let latitude = originLatitude + north / metresPerDegree
    let longitude = originLongitude + east / (metresPerDegree * cos(originLatitude * .pi / 180))
    return Location(
        timestamp: time, latitude: latitude, longitude: longitude, horizontalAccuracy: accuracy, speed: speed,
        fixMode: mode)
}

/// The policy as the tests drive it: a `PolicyDriver` (the runtime's own loop: timers fire in order as time
/// advances) that logs every action. Everything is deterministic: no clock, no threads.
struct Harness {
    var driver: PolicyDriver
    /// Every action so far, with the instant it was returned at.
    var log: [(at: Instant, action: PolicyAction)] = []

    init(configuration: PolicyConfiguration = PolicyConfiguration(), receiver: ReceiverModel = .switchedNMEA) {
        driver = PolicyDriver(configuration: configuration, receiver: receiver)
    }

    var policy: Policy { driver.policy }
    var timers: PolicyTimers { driver.timers }

    /// Sends one event at `at` (after firing every timer due by then) and returns its actions.
    @discardableResult
    mutating func send(_ event: PolicyEvent, at: Double) -> [PolicyAction] {
        record(driver.handle(event, at: Instant(seconds: at))).last?.actions ?? []
    }

    @discardableResult
    mutating func fix(_ location: Location, at: Double) -> [PolicyAction] {
        send(.fix(location), at: at)
    }

    /// Fires, in deadline order, every timer due at or before `t`, each at its own deadline.
    @discardableResult
    mutating func advance(to t: Double) -> [PolicyAction] {
        record(driver.advance(to: Instant(seconds: t))).flatMap(\.actions)
    }

    private mutating func record(_ steps: [PolicyDriver.Step]) -> [PolicyDriver.Step] {
        for step in steps {
            for action in step.actions { log.append((step.at, action)) }
        }
        return steps
    }

    var allActions: [PolicyAction] { log.map(\.action) }
}

extension Array where Element == PolicyAction {
    /// Every location delivered, batches flattened.
    var delivered: [Location] {
        flatMap { action -> [Location] in
            if case .deliver(let locations) = action { return locations }
            return []
        }
    }

    var batches: [[Location]] {
        compactMap { action in
            if case .deliver(let locations) = action { return locations }
            return nil
        }
    }

    var events: [(kind: PolicyEventKind, detail: String)] {
        compactMap { action in
            if case .emit(let kind, let detail) = action { return (kind, detail) }
            return nil
        }
    }

    var eventNames: [String] { events.map(\.kind.name) }

    var regimes: [ReceiverRegime] {
        compactMap { action in
            if case .setRegime(let regime, _) = action { return regime }
            return nil
        }
    }

    var regimeReasons: [String] {
        compactMap { action in
            if case .setRegime(_, let reason) = action { return reason }
            return nil
        }
    }

    var discards: [DiscardReason] {
        compactMap { action in
            if case .discard(_, let reason) = action { return reason }
            return nil
        }
    }

    func scheduled(_ id: TimerID) -> Instant? {
        for action in self.reversed() {
            if case .schedule(id, let at) = action { return at }
        }
        return nil
    }

    var deferredFinishes: [DeferredError?] {
        events.compactMap { event in
            if case .deferredFinished(let error) = event.kind { return .some(error) }
            return nil
        }
    }
}

extension Harness {
    /// Sends a stationary fix every second from `from` to `to` (inclusive) at the given offsets, returning
    /// the actions of the whole span.
    @discardableResult
    mutating func stationary(
        from: Int, to: Int, north: Double = 0, east: Double = 0, accuracy: Double = 5,
        jitter: (Int) -> (Double, Double, Double) = { _ in (0, 0, 0) }
    ) -> [PolicyAction] {
        var actions: [PolicyAction] = []
        for second in from...to {
            let (dn, de, speed) = jitter(second)
            actions += advance(to: Double(second))
            actions += fix(
                makeFix(t: Double(second), north: north + dn, east: east + de, accuracy: accuracy, speed: speed),
                at: Double(second))
        }
        return actions
    }

    /// Moves east at `speed` m/s with a fix every second from `from` to `to`, starting at `east0`.
    @discardableResult
    mutating func moving(from: Int, to: Int, speed: Double, east0: Double = 0, accuracy: Double = 5) -> [PolicyAction] {
        var actions: [PolicyAction] = []
        for second in from...to {
            let east = east0 + speed * Double(second - from)
            actions += fix(makeFix(t: Double(second), east: east, accuracy: accuracy, speed: speed), at: Double(second))
        }
        return actions
    }
}
