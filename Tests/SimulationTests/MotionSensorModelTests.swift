@testable import Simulation
import GPSModel
import Policy
import Testing

/// The simulated motion sensor (`MotionSensorModel`), fed true fixes by hand: when it fires.
@Suite struct MotionSensorModelTests {
    /// A fix at second `t` with the true `speed` (m/s).
    static func fix(_ t: Double, speed: Double) -> Location {
        Location(
            timestamp: UTCTime(seconds: 1_796_000_000 + Int64(t)), latitude: 0, longitude: 0, speed: speed,
            fixMode: .threeD)
    }

    /// The hints of a sensor (by default a perfect one, 2 s late) for fixes at `times` with the speeds `speed(t)`.
    static func hints(
        _ times: [Double], model: MotionSensorModel = MotionSensorModel(latency: 2), speed: (Double) -> Double
    ) -> [Double] {
        var sensor = MotionSensor(model: model)
        var hints: [Double] = []
        for t in times {
            sensor.observe(t, fix(t, speed: speed(t)))
            hints += sensor.take(until: t + 10).map(\.t)
        }
        return hints
    }

    /// Moving from 10 s to 19 s, standing 5 s, moving again from 25 s: the second start fires although the
    /// first firing was only 12 s before (a light left soon after arriving), each at its third moving fix.
    @Test func eachStartFires() {
        let times: [Double] = (0...40).map(Double.init)
        let hints = Self.hints(times) { t in (10..<20).contains(t) || t >= 25 ? 5 : 0 }
        let expected: [Double] = [14, 29]
        #expect(hints == expected)
    }

    /// An ignition line read for its level: off from the first fix it sees standing, on at a start's third
    /// moving fix, off once the vehicle has stood `ignitionOffAfter` seconds since its last moving fix, and on
    /// again at the next start; a stand shorter than that (a light) keeps the engine on. Each 2 s late.
    @Test func anIgnitionLevelGoesOnAtAStartAndOffOnceParked() {
        var sensor = MotionSensor(model: MotionSensorModel(latency: 2, ignitionOffAfter: 180, ignitionLevel: true))
        var events: [(Double, PolicyEvent)] = []
        for t in (0...400).map(Double.init) {
            let moving = (10..<40).contains(t) || (60..<70).contains(t) || t >= 300
            sensor.observe(t, Self.fix(t, speed: moving ? 5 : 0))
            events += sensor.take(until: t + 10).map { ($0.t, $0.event) }
        }
        let expected: [(Double, PolicyEvent)] = [(3, .ignition(on: false)), (14, .ignition(on: true)),
            (251, .ignition(on: false)), (304, .ignition(on: true))]
        #expect(events.map(\.0) == expected.map(\.0))
        #expect(events.map(\.1) == expected.map(\.1))
    }

    /// Moving from the first fix (the third moving one, at 3 s, fires): motion that goes on fires every 30 s;
    /// across 41 s without fixes, at the first fix after them (never dated before the fix that shows it).
    @Test func motionThatGoesOnFiresAgainEvery30Seconds() {
        let before: [Double] = (0...20).map(Double.init)
        let after: [Double] = (61...100).map(Double.init)
        let hints = Self.hints(before + after) { _ in 10 }
        let expected: [Double] = [5, 63, 93]
        #expect(hints == expected)
    }

    /// False alarms come only while the vehicle stands (here, until the third moving fix): one that fires each
    /// second it stands gives, while it moves, only the start's and the repeats' hints.
    @Test func falseAlarmsComeOnlyWhileStanding() {
        let times: [Double] = (0...70).map(Double.init)
        let model = MotionSensorModel(latency: 2, falseAlarmsPerHour: 3600 * 10)
        let hints = Self.hints(times, model: model) { t in t >= 10 ? 10 : 0 }
        let expected: [Double] = (1...11).map { Double($0) + 2 } + [14.0, 44.0]
        #expect(hints == expected)
    }
}
