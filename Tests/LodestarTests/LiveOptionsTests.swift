import Capture
import Foundation
import GPSD
import GPSModel
import Lodestar
import Policy
import Receivers
import SystemInterface
import ReceiverEmulation
import TestSupport
import Testing

/// Collects a manager's updates on a task of its own.
private func collect(_ updates: LocationUpdates) -> Task<[LocationUpdate], Never> {
    Task {
        var all: [LocationUpdate] = []
        for await update in updates { all.append(update) }
        return all
    }
}

private func noFixNotices(_ updates: [LocationUpdate]) -> [NoFixNotice] {
    updates.compactMap { if case .noFix(let notice) = $0 { notice } else { nil } }
}

/// What a live `LocationManager` does besides locations, against a private gpsd and an emulated receiver
/// played fast: the whole run recorded into a capture that replays, and `.noFix` updates while no fix comes.
@Suite(.tags(.gpsd)) struct LiveOptionsTests {
    @Test func aPoweredRunIsRecordedWholeAndItsCaptureReplays() async throws {
        var model = ReceiverModel.ublox8
        model.connection = .usb
        let profile = try PowerControlAcceptanceTests.car(model)
        let speed = 20.0
        let contents = try importedCapture(PowerControlAcceptanceTests.capture)
        let (gpsd, receiver) = try PrivateGPSD.startReading(
            {
                try EmulatedReceiver(
                    capture: contents, personality: .ublox8, model: profile.receiver, speed: speed, connection: .usb)
            }, terminal: \.terminal, discard: { $0.stop() })
        defer {
            receiver.stop()
            gpsd.stop()
        }
        let path = NSTemporaryDirectory() + "lodestar-manager-capture-\(UUID().uuidString).capture"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let recorder = CaptureRecorder(options: CaptureRecorder.Options(path: path))
        let manager = LocationManager(
            source: .gpsd(host: "127.0.0.1", port: String(gpsd.port), device: receiver.devicePath), profile: profile,
            power: ReceiverPowerSetup(connection: .usb, timeouts: PowerControllerTimeouts(wakeTimeout: 30)),
            clockRate: speed, live: LiveOptions(recorder: recorder))
        let log = ManagerUpdates(manager)
        manager.startUpdatingLocation(profile.updates)
        receiver.start()
        // Until the car profile has napped and woken once, 10 min of capture at most.
        let woke = { log.all.contains { if case .power(let event) = $0 { event.kind == .firstFixAfterWake } else { false } } }
        let deadline = monotonicSeconds() + 60
        while !woke(), receiver.clock < 600 {
            guard monotonicSeconds() < deadline else { throw TimedOut(what: "power control to act") }
            try await Task.sleep(for: .milliseconds(50))
        }
        manager.shutdown()
        try await onOwnThread { try log.waitForTheEnd() }
        let all = log.all
        #expect(recorder.finish() == nil)

        let capture = try CaptureReader.read(try readWholeFile(path))
        #expect(capture.header.source == "live" && capture.header.devicePath == receiver.devicePath)
        var gpsdLines = 0
        var transmitted: [[UInt8]] = []
        var regimes: [String] = []
        var powerEvents: [PowerEvent] = []
        for line in capture.lines {
            switch line.payload {
            case .gpsd: gpsdLines += 1
            case .transmitted(let range): transmitted.append(capture.rawBytes(range))
            case .regime(let regime, _): regimes.append(regime)
            case .event(let event): if let power = PowerEvent(event) { powerEvents.append(power) }
            case .received: break
            }
        }
        // The capture holds exactly what the application was told, in the same order.
        #expect(gpsdLines > 20)
        #expect(transmitted == all.compactMap { if case .transmitted(let bytes, _) = $0 { bytes } else { nil } })
        #expect(regimes == all.compactMap { if case .regime(let regime, _) = $0 { regime.rawValue } else { nil } })
        // Kinds and details: an event line keeps seconds to the capture's precision.
        #expect(
            powerEvents.map { [$0.kind.rawValue, $0.detail] }
                == all.compactMap { if case .power(let event) = $0 { [event.kind.rawValue, event.detail] } else { nil } })
        #expect(Set(regimes).count >= 2, "a nap and a wake: \(regimes)")
        #expect(!transmitted.isEmpty && powerEvents.count >= 3)
        var fixes = 0
        CaptureReplayer(capture).run(onEvent: { _, event in if case .fix(let fix) = event, fix.hasPosition { fixes += 1 } })
        let delivered = all.reduce(0) { if case .locations(let locations) = $1 { $0 + locations.count } else { $0 } }
        #expect(delivered > 0 && fixes >= delivered, "the capture replays every fix the run delivered")
        // Located all along: never a no-fix line at the default interval.
        #expect(noFixNotices(all).isEmpty)
    }

    @Test func aReceiverWithoutAFixIsReportedEveryIntervalAfterItsTimeToFirstFix() async throws {
        let speed = 10.0
        let start = UTCTime(seconds: 1_796_072_400)
        let epochs = (0..<240).map {
            EmulatedReceiver.Epoch(t: Double($0), fix: Fix(mode: .noFix, time: UTCTime(seconds: start.seconds + Int64($0))))
        }
        var profile = try PowerControlAcceptanceTests.car(.genericNMEA)
        profile.receiver = .genericNMEA
        let (gpsd, receiver) = try PrivateGPSD.startReading(
            { try EmulatedReceiver(epochs: epochs, personality: .genericNMEA, model: .genericNMEA, speed: speed) },
            terminal: \.terminal, discard: { $0.stop() })
        defer {
            receiver.stop()
            gpsd.stop()
        }
        let manager = LocationManager(
            source: .gpsd(host: "127.0.0.1", port: String(gpsd.port), device: receiver.devicePath), profile: profile,
            power: nil, clockRate: speed, live: LiveOptions(noFixInterval: 20))
        let log = ManagerUpdates(manager)
        let began = monotonicSeconds()
        manager.startUpdatingLocation(profile.updates)
        receiver.start()
        // A cold start's 35 s, then 20 s, then 20 s again: 7.5 s at 10x.
        let deadline = monotonicSeconds() + 30
        while noFixNotices(log.all).count < 2, monotonicSeconds() < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        manager.shutdown()
        try await onOwnThread { try log.waitForTheEnd() }
        let elapsed = (monotonicSeconds() - began) * speed
        let notices = noFixNotices(log.all)
        #expect(notices.count >= 2 && notices.count <= Int((elapsed - 35) / 20) + 1, "\(notices)")
        guard case .noFix(let status) = notices.first else {
            Issue.record("no no-fix update in \(elapsed) s")
            return
        }
        #expect(status.sentence.hasPrefix("no fix since start "), "\(status.sentence)")
        #expect(status.secondsSinceLastFix == nil && status.secondsNavigating >= 55 && status.secondsNavigating < 60)
        #expect(status.secondsSinceData.map { $0 < 20 } == true, "the receiver talks: \(status)")
    }
}

/// A replay never says there is no fix: its output stays what the capture and the policy make it.
@Suite struct ReplayNoFixTests {
    @Test func aReplayWithALongNoFixStretchHasNoNoFixUpdates() async throws {
        var bytes = CaptureLineEncoder.header(CaptureHeader(source: "test"))
        for second in 0..<300 {
            let time = "2026-11-30T21:\(second / 60 + 10):\(second % 60 < 10 ? "0" : "")\(second % 60).000Z"
            let located = second < 10 || second > 280
            let tpv =
                located
                ? #"{"class":"TPV","device":"/dev/ttyACM0","mode":3,"time":""# + time + #"","lat":48.1,"lon":11.5,"epx":3.0,"epy":3.0}"#
                : #"{"class":"TPV","device":"/dev/ttyACM0","mode":1,"time":""# + time + #""}"#
            bytes += CaptureLineEncoder.gpsd(t: Double(second), object: Array(tpv.utf8))
        }
        let contents = try CaptureReader.read(bytes)
        let manager = LocationManager(
            source: .replay(contents), receiver: .genericNMEA, live: LiveOptions(noFixInterval: 1))
        manager.startUpdatingLocation()
        let all = await collect(manager.updates).value
        #expect(all.contains { if case .locations = $0 { true } else { false } }, "the replay ran: \(all)")
        #expect(noFixNotices(all).isEmpty)
    }
}
