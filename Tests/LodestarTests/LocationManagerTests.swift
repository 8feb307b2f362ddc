import TestSupport
import Simulation
import Capture
import Foundation
import GPSD
import GPSModel
import Lodestar
import Policy
import Receivers
import Testing

/// A capture written line by line: gpsd TPVs on a 1 Hz receiver moving east, with its `t` as given.
private struct HandMadeCapture {
    /// Receiver time at t = 0: 2026-11-30T03:00:00Z.
    static let baseSeconds: Int64 = 1_796_007_600
    static let latitude = 52.0
    static let longitude = 4.0
    private(set) var bytes = CaptureLineEncoder.header(CaptureHeader(source: "test"))

    /// A 3D fix `east` metres from the origin, receiver time base + `time` (default `t`). `eph` is gpsd's
    /// 95 % figure (accuracy 0.58 × eph).
    mutating func fix(t: Double, east: Double, time: Double? = nil, eph: Double = 8, speed: Double = 5) {
        let metresPerDegree = 111_195.0
        let longitude = Self.longitude + east / (metresPerDegree * cos(Self.latitude * .pi / 180))
        let tpv =
            #"{"class":"TPV","device":"/dev/ttyTEST","mode":3,"time":"\#(Self.time(time ?? t))","lat":\#(Self.latitude),"lon":\#(longitude),"eph":\#(eph),"speed":\#(speed),"track":90.0}"#
        bytes += CaptureLineEncoder.gpsd(t: t, object: Array(tpv.utf8))
    }

    /// A TPV without a fix (mode 1), as a receiver that sees no satellites sends every second.
    mutating func noFix(t: Double) {
        let tpv = #"{"class":"TPV","device":"/dev/ttyTEST","mode":1,"time":"\#(Self.time(t))"}"#
        bytes += CaptureLineEncoder.gpsd(t: t, object: Array(tpv.utf8))
    }

    static func time(_ t: Double) -> String {
        let millis = Int64((t * 1000).rounded())
        return UTCTime(seconds: baseSeconds + millis / 1000, nanoseconds: Int32(millis % 1000) * 1_000_000).iso8601
    }

    func contents() throws -> CaptureContents { try CaptureReader.read(bytes) }

    /// `count` fixes, one a second from t = 1, 5 m apart.
    static func moving(seconds count: Int) throws -> CaptureContents {
        var capture = HandMadeCapture()
        for second in 1...count { capture.fix(t: Double(second), east: Double(second) * 5) }
        return try capture.contents()
    }
}

/// Everything a manager says until it finishes.
private func allUpdates(_ manager: LocationManager) async -> [LocationUpdate] {
    await allUpdates(manager.updates)
}

/// Everything a stream gives until it ends. Take the stream (`manager.updates`) before starting a task to
/// read it, so nothing said in between is missed.
private func allUpdates(_ stream: LocationUpdates) async -> [LocationUpdate] {
    var updates: [LocationUpdate] = []
    for await update in stream { updates.append(update) }
    return updates
}

private func locations(_ updates: [LocationUpdate]) -> [Location] {
    updates.flatMap { update -> [Location] in
        if case .locations(let locations) = update { locations } else { [] }
    }
}

private func events(_ updates: [LocationUpdate]) -> [(kind: PolicyEventKind, detail: String)] {
    updates.compactMap { update in
        if case .event(let kind, let detail) = update { (kind, detail) } else { nil }
    }
}

private func regimes(_ updates: [LocationUpdate]) -> [ReceiverRegime] {
    updates.compactMap { update in
        if case .regime(let regime, _) = update { regime } else { nil }
    }
}

/// The regime changes `lodestar replay --profile` gives for `contents` (the simulation the manager's replay
/// must agree with).
private func simulatedRegimes(_ contents: CaptureContents, _ setup: SimulationSetup)
    -> [(regime: ReceiverRegime, reason: String)]
{
    var changes: [(regime: ReceiverRegime, reason: String)] = []
    _ = ReceiverSimulation(setup: setup).run(contents) { output in
        if case .regime(_, let regime, let reason) = output { changes.append((regime, reason)) }
    }
    return changes
}

@Suite(.tags(.gpsd)) struct LocationManagerTests {
    /// A manager made from a profile runs that profile's policy: the car's naps and pauses on a real drive,
    /// the same regime changes `replay --profile car` prints.
    @Test func aManagerFromAProfileRunsItsPolicy() async throws {
        let profile = try ProfileStore.load(nameOrPath: "car")
        let contents = try importedCapture("munich-urban-stopgo-31m.nmea")
        let manager = LocationManager(source: .replay(contents, speed: nil), profile: profile)
        manager.startUpdatingLocation(profile.updates)
        let updates = await allUpdates(manager.updates)
        let expected = simulatedRegimes(contents, profile.simulationSetup).map(\.regime)
        let seen = regimes(updates)
        #expect(seen.count > 50, "naps: \(seen.count) regime changes")
        // Change for change: the runtime's replay fires a timer due at an event's instant before the event, as
        // the simulation does (a fix at a wake's instant once reached the policy without its time to first fix,
        // and the two runs parted there).
        #expect(seen == expected, "the first difference at change \(zip(seen, expected).prefix { $0 == $1 }.count)")
        #expect(!locations(updates).isEmpty)
    }

    // MARK: Replay of hand-made captures

    @Test func updatesArriveFilteredOnceEachInOrder() async throws {
        var capture = HandMadeCapture()
        for second in 1...30 {
            capture.fix(t: Double(second), east: Double(second) * 5)
            if second == 10 {
                // The epoch of second 8 again (a receiver repeating itself): a duplicate, never delivered twice.
                capture.fix(t: 10.5, east: 40, time: 8)
            }
            if second == 20 {
                // 580 m of accuracy: worse than best's 100 m, not delivered.
                capture.fix(t: 20.5, east: 103, time: 20.5, eph: 1000)
            }
        }
        capture.noFix(t: 31)
        let manager = LocationManager(source: .replay(try capture.contents(), speed: nil), receiver: .switchedNMEA)
        manager.startUpdatingLocation(UpdatesConfiguration(desiredAccuracy: .best))
        let updates = await allUpdates(manager)

        let delivered = locations(updates)
        let times = delivered.map(\.timestamp)
        #expect(times == (1...30).map { UTCTime(iso8601: Array(HandMadeCapture.time(Double($0)).utf8)) })
        #expect(Set(times).count == times.count)
        #expect(delivered.allSatisfy { $0.origin == .replay && ($0.horizontalAccuracy ?? 0) < 100 })
        #expect(regimes(updates).first == .continuous)
        // The replay's end shuts the manager down: the receiver is asked to go off, and the stream ends.
        #expect(regimes(updates).last == .off)
        #expect(manager.lastKnownLocation?.timestamp == times.last)
    }

    @Test func requestLocationReturnsTheFirstFix() async throws {
        let manager = LocationManager(source: .replay(try HandMadeCapture.moving(seconds: 20), speed: nil), receiver: .switchedNMEA)
        let location = try await manager.requestLocation()
        #expect(location.timestamp.iso8601 == HandMadeCapture.time(1))
        #expect(abs(location.latitude - HandMadeCapture.latitude) < 1e-9)
    }

    /// The timeout runs on the capture's clock: ten capture seconds without a fix fail the request, although
    /// a fix follows in the capture a few milliseconds of wall time later (on a wall clock it would answer).
    @Test func requestWithoutFixesFailsAtTheTimeoutOnTheVirtualClock() async throws {
        var capture = HandMadeCapture()
        for second in 0..<25 { capture.noFix(t: Double(second)) }
        for second in 25...40 { capture.fix(t: Double(second), east: Double(second)) }
        let manager = LocationManager(source: .replay(try capture.contents(), speed: nil), receiver: .switchedNMEA)
        // Updates keep the receiver on, so the fixes after the timeout are seen (and delivered).
        manager.startUpdatingLocation()
        let stream = manager.updates
        await #expect(throws: LocationError.locationUnknown) {
            try await manager.requestLocation(timeout: 10)
        }
        let updates = await allUpdates(stream)
        #expect(events(updates).map(\.detail) == ["no usable fix within 10 s"])
        #expect(locations(updates).first?.timestamp.iso8601 == HandMadeCapture.time(25))
    }

    /// While the receiver is down its fixes are dropped, but only until the next timer: a probe due before
    /// the next line fires first, powers the receiver up, and sees the fixes after it.
    @Test func probesWakeTheReplayedReceiverAtTheirTime() async throws {
        var capture = HandMadeCapture()
        for second in 1...600 { capture.fix(t: Double(second), east: Double(second % 3), speed: 0.3) }
        let manager = LocationManager(source: .replay(try capture.contents(), speed: nil), receiver: .switchedNMEA)
        manager.startUpdatingLocation(UpdatesConfiguration(activityType: .fitness))
        let updates = await allUpdates(manager)
        #expect(events(updates).contains { if case .paused = $0.kind { true } else { false } })
        let probes = updates.compactMap { update -> String? in
            if case .regime(.continuous, let reason) = update, reason.hasPrefix("probing") { reason } else { nil }
        }
        let setup = SimulationSetup(updates: UpdatesConfiguration(activityType: .fitness), receiver: .switchedNMEA)
        let simulated = simulatedRegimes(try capture.contents(), setup).compactMap { change in
            change.regime == .continuous && change.reason.hasPrefix("probing") ? change.reason : nil
        }
        // Fitness: pause after 2 min, then probes 30 s, 45 s, 68 s and 101 s apart, each counted from the fix
        // of the one before (a switched receiver's time to first fix after it): four in the 8 min left, each
        // with a fix (no acquisition failure), at the instants `lodestar replay` gives them.
        #expect(probes.count == 4, "\(probes)")
        #expect(probes == simulated)
        #expect(!events(updates).contains { $0.kind == .acquisitionFailed })
    }

    /// Each of several requests in flight gets its own answer (request ids map to the right callers). That
    /// they share one acquisition is the policy's (PolicyTests' SharingTests); when they reach the runtime
    /// depends on the scheduler, so this test does not assume they overlap.
    @Test func concurrentRequestsEachGetTheirAnswer() async throws {
        var capture = HandMadeCapture()
        for second in 0..<2 { capture.noFix(t: Double(second)) }
        for second in 2...120 { capture.fix(t: Double(second), east: Double(second) * 5) }
        let manager = LocationManager(source: .replay(try capture.contents(), speed: 1), receiver: .switchedNMEA)
        let stream = manager.updates
        let updates = Task { await allUpdates(stream) }
        async let first = manager.requestLocation(timeout: 10)
        async let second = manager.requestLocation(timeout: 10, desiredAccuracy: .kilometer)
        let (one, other) = try await (first, second)
        manager.shutdown()
        let completed = events(await updates.value).compactMap { event -> (RequestID, Location)? in
            if case .requestCompleted(let id, let location) = event.kind { (id, location) } else { nil }
        }
        #expect(completed.count == 2)
        let answers = Dictionary(completed, uniquingKeysWith: { first, _ in first })
        // Ids are handed out in call order, but `async let` may start either call first.
        #expect((answers[1] == one && answers[2] == other) || (answers[1] == other && answers[2] == one))
    }

    @Test func cancellingTheTaskCancelsTheRequest() async throws {
        var capture = HandMadeCapture()
        // Five minutes of nothing at real speed: the request is cancelled long before its timeout or the end.
        for second in 0..<300 { capture.noFix(t: Double(second)) }
        let manager = LocationManager(source: .replay(try capture.contents(), speed: 1), receiver: .switchedNMEA)
        let stream = manager.updates
        let updates = Task { await allUpdates(stream) }
        let request = Task { try await manager.requestLocation(timeout: 200) }
        try await Task.sleep(for: .milliseconds(200))
        request.cancel()
        await #expect(throws: CancellationError.self) { try await request.value }
        manager.shutdown()
        let seen = await updates.value
        #expect(events(seen).contains { $0.kind == .requestFailed(1, .canceled) })
    }

    @Test func aDeferredBatchArrivesWholeAndOnce() async throws {
        let manager = LocationManager(source: .replay(try HandMadeCapture.moving(seconds: 60), speed: nil), receiver: .switchedNMEA)
        manager.startUpdatingLocation(UpdatesConfiguration(desiredAccuracy: .best))
        manager.allowDeferredLocationUpdates(untilTraveled: nil, timeout: 20)
        let updates = await allUpdates(manager)

        let batches = updates.compactMap { update -> [Location]? in
            if case .locations(let locations) = update, locations.count > 1 { locations } else { nil }
        }
        #expect(batches.count == 1)
        #expect(batches.first?.count ?? 0 >= 19)
        let finished = events(updates).filter { if case .deferredFinished = $0.kind { true } else { false } }
        #expect(finished.map(\.kind) == [.deferredFinished(nil)])
        // Every fix exactly once, batch or not.
        let times = locations(updates).map(\.timestamp)
        #expect(times.count == 60)
        #expect(Set(times).count == 60)
        #expect(times == times.sorted())
    }

    /// Nothing held is lost: a deferral without limits still holds everything when the capture ends, and the
    /// shutdown at its end delivers it.
    @Test func shutdownDeliversWhatADeferralHolds() async throws {
        let manager = LocationManager(source: .replay(try HandMadeCapture.moving(seconds: 30), speed: nil), receiver: .switchedNMEA)
        manager.startUpdatingLocation()
        manager.allowDeferredLocationUpdates()
        let updates = await allUpdates(manager)
        #expect(locations(updates).count == 30)
        #expect(events(updates).map(\.kind).contains(.deferredFinished(.canceled)))
        await #expect(throws: LocationError.finished) { try await manager.requestLocation() }
    }

    /// The receiver control hears the policy's regimes, then, once the manager finishes, the profile's exit
    /// regime; a manager made without one leaves the receiver in the policy's last regime.
    @Test func theReceiverIsLeftInTheExitRegime() async throws {
        var profile = try ProfileStore.load(nameOrPath: "walk")
        profile.exitRegime = .standby
        let control = RecordingControl()
        let manager = LocationManager(
            source: .replay(try HandMadeCapture.moving(seconds: 20), speed: nil), profile: profile,
            receiverControl: control)
        manager.startUpdatingLocation(profile.updates)
        _ = await allUpdates(manager)
        #expect(control.regimes.count >= 2)
        #expect(control.regimes.last == .standby)
        #expect(control.regimes.dropLast().last == .off)

        let plain = RecordingControl()
        let withoutExit = LocationManager(
            source: .replay(try HandMadeCapture.moving(seconds: 20), speed: nil), receiver: .switchedNMEA, receiverControl: plain)
        withoutExit.startUpdatingLocation()
        _ = await allUpdates(withoutExit)
        #expect(plain.regimes.last == .off)
    }

    // MARK: Replay of the repo's captures

    @Test func aRealDriveDeliversCleanLocations() async throws {
        let manager = LocationManager(
            source: .replay(try importedCapture("garmin-geko201-regensburg-drive-26m.nmea"), speed: nil), receiver: .switchedNMEA)
        manager.startUpdatingLocation(UpdatesConfiguration(activityType: .automotiveNavigation))
        let delivered = locations(await allUpdates(manager))
        #expect(delivered.count > 100)
        let times = delivered.map(\.timestamp)
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 }, "timestamps strictly increase: no duplicates")
        #expect(delivered.allSatisfy { $0.latitude.isFinite && $0.longitude.isFinite })
        #expect(delivered.allSatisfy { ($0.horizontalAccuracy ?? 0) <= 100 })
    }

    @Test func theStationaryCapturePausesWhenDriving() async throws {
        let contents = try importedCapture("stationary-netherlands-20m.nmea")
        let manager = LocationManager(source: .replay(contents, speed: nil), receiver: .switchedNMEA)
        manager.startUpdatingLocation(UpdatesConfiguration(activityType: .automotiveNavigation))
        let updates = await allUpdates(manager)
        let paused = events(updates).filter { if case .paused = $0.kind { true } else { false } }
        #expect(paused.count >= 1, "events: \(events(updates).map(\.detail))")
        // Paused, the receiver goes down, and the replay drops its fixes: far fewer than 20 minutes' worth.
        #expect(regimes(updates).contains { !$0.producesFixes })
        #expect(locations(updates).count < 600)
    }

    /// Significant-change monitoring alone on a drive of almost three hours: the receiver sleeps between wakes
    /// (the replay drops its fixes), and the events are at least 500 m and 5 minutes apart.
    @Test func significantChangesOnARealDrive() async throws {
        let manager = LocationManager(
            source: .replay(try importedCapture("garmin-drive-reno-tahoe-2h43m.nmea"), speed: nil), receiver: .switchedNMEA)
        manager.startMonitoringSignificantLocationChanges()
        let updates = await allUpdates(manager)
        let changes = events(updates).compactMap { event -> Location? in
            if case .significantChange(let location) = event.kind { location } else { nil }
        }
        #expect(changes.count >= 10, "\(events(updates).map(\.detail))")
        for (one, next) in zip(changes, changes.dropFirst()) {
            #expect(Geodesy.distance(from: one, to: next) >= 500)
            #expect(next.timestamp.interval(since: one.timestamp) >= 299.0)
        }
        #expect(locations(updates).isEmpty, "significant change alone delivers no standard updates")
        #expect(regimes(updates).contains { !$0.producesFixes })
    }

    @Test func twoReplaysGiveTheSameUpdates() async throws {
        let contents = try importedCapture("stationary-netherlands-20m.nmea")
        func replay() async -> [LocationUpdate] {
            let manager = LocationManager(source: .replay(contents, speed: nil), receiver: .ublox8)
            manager.startUpdatingLocation(UpdatesConfiguration(activityType: .fitness))
            manager.startMonitoringSignificantLocationChanges()
            return await allUpdates(manager)
        }
        let first = await replay()
        let second = await replay()
        #expect(first.count > 10)
        #expect(first == second)
    }

    // MARK: Live

    /// gpsd in the loop: a private gpsd reads a receiver log from a pty; the manager delivers its fixes.
    @Test func liveGpsdDeliversLocations() async throws {
        let bed = try GPSDTestBed.readOnly()
        let manager = LocationManager(source: .gpsd(host: "127.0.0.1", port: bed.port), receiver: .switchedNMEA)
        manager.startUpdatingLocation()
        let stream = manager.updates
        let collected = Task { await allUpdates(stream) }
        let log = try Fixtures.bytes("gpsd-ublox-neo-m9n.nmea")
        // The manager connects on its own thread; feed until it has seen a location (gpsd only tells watchers
        // what arrives after they watch).
        let deadline = Date().addingTimeInterval(30)
        while manager.lastKnownLocation == nil, Date() < deadline {
            _ = bed.feed(log)
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(manager.lastKnownLocation?.origin == .live)
        manager.shutdown()
        let updates = await collected.value
        #expect(!locations(updates).isEmpty)
        #expect(regimes(updates).last == .off)
    }
}

/// Remembers every regime it is asked for.
private final class RecordingControl: ReceiverControl, @unchecked Sendable {
    private let lock = NSLock()
    private var asked: [ReceiverRegime] = []

    var regimes: [ReceiverRegime] { lock.withLock { asked } }

    func setRegime(_ regime: ReceiverRegime, reason: String) { lock.withLock { asked.append(regime) } }
}
