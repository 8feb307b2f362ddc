@testable import Simulation
import Capture
import GPSModel
import Policy
import Testing

/// Metres per degree of longitude on the equator (mean sphere), to lay hand-made tracks along it.
private let metresPerDegree = Geodesy.meanEarthRadius * .pi / 180

/// A track along the equator: `position(t)` metres east at second t, 1 Hz from 0 to `seconds`.
private func track(
    seconds: Int, skipping gap: ClosedRange<Int>? = nil, speed: Double = 0, speedAt: ((Int) -> Double)? = nil,
    position: (Int) -> Double
) -> TrueTrack {
    TrueTrack(
        points: (0...seconds).compactMap { second in
            if let gap, gap.contains(second) { return nil }
            return (
                Double(second),
                Location(
                    timestamp: UTCTime(seconds: 1_796_000_000 + Int64(second)), latitude: 0,
                    longitude: position(second) / metresPerDegree, speed: speedAt?(second) ?? speed, fixMode: .threeD)
            )
        })
}

/// A receiver with round numbers: 30 mA tracking, 40 mA acquiring, 5 mA standby, 0 off; hot start 2 s
/// within an hour after standby, warm 20 s.
private let roundModel = ReceiverModel(
    name: "round", powerControl: .ubx, supportedRegimes: [.continuous, .standby, .off],
    current: ReceiverCurrents(acquisition: 40, tracking: 30, powerSave: 10, standby: 5, backup: 0, off: 0),
    timeToFirstFix: TimeToFirstFix(hot: 2, warm: 20, cold: 30, hotWindow: 3600), backupSupplyWhenOff: false,
    connection: .usb)  // UBX over USB: standby, no backup

@Suite struct EvaluationMathTests {
    @Test func stalenessOnAStraightLineIsDistanceSinceTheLastDelivery() {
        // 10 m/s for 100 s, a location delivered every 10 s: staleness at second t is 10 × (t mod 10) m.
        let line = track(seconds: 100, speed: 10) { Double($0) * 10 }
        let deliveries = line.points.filter { Int($0.t) % 10 == 0 }
        let (staleness, without, perFix) = EvaluationMath.staleness(truth: line, deliveries: deliveries, bound: 55)
        #expect(abs(staleness.p50 - 40) < 0.01)
        #expect(abs(staleness.p95 - 90) < 0.01)
        #expect(abs(staleness.max - 90) < 0.01)
        #expect(staleness.overBound == 40, "60, 70, 80 and 90 m, ten times each")
        #expect(without == 0)
        #expect(perFix.count == 101)
        #expect(abs((perFix[37] ?? 0) - 70) < 0.01)
    }

    @Test func beforeTheFirstLocationEveryFixCountsOverTheBound() {
        let line = track(seconds: 60) { _ in 0 }
        let (staleness, without, perFix) = EvaluationMath.staleness(
            truth: line, deliveries: [line.points[20]], bound: 10)
        #expect(without == 20)
        #expect(staleness.overBound == 20)
        #expect(perFix.prefix(20).allSatisfy { $0 == nil })
        #expect(staleness.max == 0)
    }

    @Test func aGapInTheTruthIsNotCountedAsFixes() {
        // 100 s, no fixes from 30 to 89 s: 41 true fixes; one location at 0 s, the device 5 m/s east.
        let gapped = track(seconds: 100, skipping: 30...89, speed: 5) { Double($0) * 5 }
        #expect(gapped.points.count == 41)
        let (staleness, _, _) = EvaluationMath.staleness(truth: gapped, deliveries: [gapped.points[0]], bound: 1000)
        #expect(abs(staleness.max - 500) < 0.1)
    }

    @Test func energyIntegratesEachStatesCurrent() {
        let timeline = [
            ReceiverInterval(start: 0, end: 3600, state: .tracking),
            ReceiverInterval(start: 3600, end: 3610, state: .acquiring),
            ReceiverInterval(start: 3610, end: 7210, state: .standby),
            ReceiverInterval(start: 7210, end: 10_810, state: .off),
        ]
        // 30 mAh + 40 × 10/3600 + 5 mAh + 0 (over its UART a u-blox reaches backup, 0 mA here).
        var model = roundModel
        model.connection = .uart
        #expect(abs(EvaluationMath.energy(timeline, model: model) - (35 + 400.0 / 3600)) < 1e-9)
        // Released through gpsd, the receiver's current is unknown: charged as tracking, no saving claimed.
        model.powerControl = .closeDevice
        #expect(abs(EvaluationMath.energy(timeline, model: model) - (65 + 400.0 / 3600)) < 1e-9)
    }

    @Test func energyWhileStoppedIsTheChargeDrawnWhereTheTruthStood() {
        // 10 m/s for 60 s, stopped from 60 to 120 s, 10 m/s again to 180 s.
        let drive = track(seconds: 180) { second in
            second < 60 ? Double(second) * 10 : second < 120 ? 600 : 600 + Double(second - 120) * 10
        }
        let timeline = [
            ReceiverInterval(start: 0, end: 90, state: .tracking),
            ReceiverInterval(start: 90, end: 100, state: .acquiring),
            ReceiverInterval(start: 100, end: 180, state: .standby),
        ]
        // Stopped 60–120 s: 30 mA × 30 s + 40 mA × 10 s + 5 mA × 20 s = 1400 mA·s.
        let stretches = EvaluationMath.stoppedStretches(drive)
        #expect(stretches.map(\.start) == [60] && stretches.map(\.end) == [120])
        let stopped = EvaluationMath.energy(timeline, model: roundModel, within: stretches) * 3600
        #expect(abs(stopped - 1400) < 1e-6)
        // Never stopped: none of it.
        let line = track(seconds: 180) { Double($0) * 10 }
        let none = EvaluationMath.stoppedStretches(line)
        #expect(none.isEmpty)
        #expect(EvaluationMath.energy(timeline, model: roundModel, within: none) == 0)
    }

    @Test func aTrueSpeedFallsInTheClassItReaches() {
        #expect(EvaluationMath.speedClassLimits == [0, 1, 5, 15])
        let classes = [0, 0.99, 1, 4.99, 5, 14.99, 15, 70].map(EvaluationMath.speedClass)
        #expect(classes == [0, 0, 1, 1, 2, 2, 3, 3])
    }

    @Test func trackErrorIsTheDistanceToTheDeliveredPolyline() {
        // The truth goes east then north (an L); the delivered track cuts the corner: the corner is farthest.
        let corner = TrueTrack(
            points: (0...20).map { second in
                let east = second <= 10 ? Double(second) * 10 : 100
                let north = second <= 10 ? 0 : Double(second - 10) * 10
                return (
                    Double(second),
                    Location(
                        timestamp: UTCTime(seconds: Int64(second)), latitude: north / 110_574,
                        longitude: east / 111_320, fixMode: .twoD)
                )
            })
        let delivered = [corner.points[0].location, corner.points[20].location]
        let error = EvaluationMath.trackError(truth: corner, delivered: delivered)
        // The corner (100, 0) is 100/√2 ≈ 70.7 m from the diagonal.
        #expect(abs((error?.max ?? 0) - 70.71) < 0.5)
        #expect((error?.p50 ?? 1) < 40)
    }

    @Test func stopsAreFoundWithTheirDeparture() {
        // 60 s at 10 m/s, 300 s standing at 600 m, then 10 m/s again.
        let drive = track(seconds: 500, speedAt: { $0 < 60 || $0 > 360 ? 10 : 0 }) { second in
            second < 60 ? Double(second) * 10 : second < 360 ? 600 : 600 + Double(second - 360) * 10
        }
        let stops = drive.stops(minimum: 120)
        #expect(stops.count == 1)
        // The last moving fix, 10 m short of the stop, is within the radius: the stop starts a second early.
        #expect(stops.first.map { abs($0.start - 60) <= 1 } == true)
        #expect(stops.first?.end == 360)
        // Farther than 25 m from where it stood: 603 s is 30 m on.
        #expect(stops.first?.departure == 363)
    }
}

@Suite struct BaselineTests {
    /// 10 m/s east: with a 55 m bound a location is needed every 6 s (60 m), and each 6 s gap is cheaper
    /// down (5 mA × 4 s + 40 mA × 2 s = 100 mA·s) than up (30 mA × 6 s = 180 mA·s).
    @Test func theOracleNeedsAFixEachTimeTheBoundWouldBeCrossedAndSleepsWhenThatIsCheaper() {
        let line = track(seconds: 120, speed: 10) { Double($0) * 10 }
        let oracle = Baselines.oracle(line, bound: 55, model: roundModel)
        #expect(oracle.deliveries.map(\.t) == stride(from: 0.0, through: 120, by: 6).map { $0 })
        let charge = EvaluationMath.energy(oracle.timeline, model: roundModel) * 3600
        #expect(abs(charge - 20 * 100) < 1e-6)
        let (staleness, _, _) = EvaluationMath.staleness(truth: line, deliveries: oracle.deliveries, bound: 55)
        #expect(staleness.overBound == 0)
    }

    @Test func theOracleStaysUpWhenAWakeCostsMoreThanTheGap() {
        // 30 m/s with a 55 m bound: a fix every 2 s, and a 2 s hot start leaves no time down.
        let fast = track(seconds: 60, speed: 30) { Double($0) * 30 }
        let oracle = Baselines.oracle(fast, bound: 55, model: roundModel)
        #expect(oracle.timeline.allSatisfy { $0.state == .tracking })
    }

    @Test func theIntervalBaselineSleepsBetweenFixesAndPaysTheTimeToFirstFix() {
        let still = track(seconds: 600) { _ in 0 }
        let run = Baselines.interval(still, every: 60, model: roundModel)
        // Down 60 s, then 2 s to the first fix: a fix every 62 s.
        #expect(run.deliveries.map(\.t).prefix(4) == [0, 62, 124, 186])
        #expect(run.timeline.contains { $0.state == .acquiring && $0.end - $0.start == 2 })
    }

    @Test func theStopTimeoutBaselineGoesDownAfterFiveStillMinutesAndResumesOnAProbeOutside() {
        let drive = track(seconds: 1200) { second in
            second < 60 ? Double(second) * 10 : second < 900 ? 600 : 600 + Double(second - 900) * 10
        }
        let run = Baselines.stopTimeout(drive, radius: 25, timeout: 300, probe: 60, model: roundModel)
        let down = run.timeline.filter { $0.state == .standby || $0.state == .off }
        #expect(down.first.map { abs($0.start - 360) < 1.5 } == true, "down 300 s after the stop began")
        // The departure at 900 s is seen by the next probe, within 60 s plus a hot start.
        let resumed = run.deliveries.first { $0.t > 900 }
        #expect(resumed.map { $0.t <= 900 + 60 + 2 } == true)
    }
}
