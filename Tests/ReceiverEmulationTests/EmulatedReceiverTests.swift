import GPSModel
import Policy
@testable import Receivers
import Simulation
import Synchronization
import SystemInterface
import ReceiverEmulation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The emulated receiver without gpsd: the test opens the pty's device side itself, as gpsd would, writes
/// commands and reads what the receiver says.
@Suite struct EmulatedReceiverTests {
    /// gpsd's end of the pty.
    final class HostSide {
        let descriptor: Int32

        init(_ path: String) throws {
            descriptor = open(path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)
            guard descriptor >= 0 else { throw SystemError("open", path) }
        }

        deinit { close(descriptor) }

        func write(_ bytes: [UInt8]) {
            bytes.withUnsafeBytes { _ = Glibc.write(descriptor, $0.baseAddress, $0.count) }
        }

        /// Everything the receiver sends within `seconds`.
        func read(for seconds: Double) -> [UInt8] {
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 4096)
            let end = monotonicSeconds() + seconds
            while monotonicSeconds() < end {
                var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, 10) > 0 else { continue }
                let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
                if count > 0 { bytes += chunk[0..<count] }
            }
            return bytes
        }

        /// Reads until `condition` holds for what came so far; what came.
        func read(timeout: Double = 5, until condition: ([UInt8]) -> Bool) -> [UInt8] {
            var bytes: [UInt8] = []
            let end = monotonicSeconds() + timeout
            while !condition(bytes), monotonicSeconds() < end { bytes += read(for: 0.02) }
            return bytes
        }
    }

    static func epochs(count: Int) -> [EmulatedReceiver.Epoch] {
        (0..<count).map { index in
            EmulatedReceiver.Epoch(
                t: Double(index),
                fix: Fix(
                    mode: .threeD, time: UTCTime(seconds: 1_700_000_000 + Int64(index)), latitude: 48.1,
                    longitude: -11.5, altitudeMSL: 520, eph: 9.5, speed: 3, track: 90))
        }
    }

    static func start(_ personality: EmulatedReceiver.Personality, model: ReceiverModel, speed: Double = 20)
        throws -> (EmulatedReceiver, HostSide)
    {
        let receiver = try EmulatedReceiver(
            epochs: epochs(count: 400), personality: personality, model: model, speed: speed)
        let host = try HostSide(receiver.devicePath)
        receiver.start()
        return (receiver, host)
    }

    static func lines(_ bytes: [UInt8]) -> [String] {
        String(decoding: bytes.filter { $0 < 0x80 }, as: UTF8.self).split(separator: "\r\n").compactMap { line in
            line.firstIndex(of: "$").map { String(line[$0...]) }
        }
    }

    static func frames(_ bytes: [UInt8]) -> [UBXFrame] {
        var parser = UBXStreamParser()
        return parser.feed(bytes)
    }

    @Test func nmeaSentencesCarryTheFixWithRightChecksums() throws {
        let (receiver, host) = try Self.start(.genericNMEA, model: .genericNMEA)
        defer { receiver.stop() }
        let lines = Self.lines(host.read(for: 0.5))
        #expect(lines.count >= 6)
        for line in lines {
            let parts = line.dropFirst().split(separator: "*")
            #expect(parts.count == 2, "\(line)")
            let checksum = parts[0].utf8.reduce(UInt8(0), ^)
            #expect(UInt8(parts[1], radix: 16) == checksum, "\(line)")
        }
        let rmc = try #require(lines.first { $0.hasPrefix("$GPRMC") })
        // 3 m/s is 5.832 knots; 48.1° N is 48° 6', 11.5° W is 11° 30'.
        #expect(rmc.contains(",A,4806.00000,N,01130.00000,W,5.832,90.00,"), "\(rmc)")
        let gga = try #require(lines.first { $0.hasPrefix("$GPGGA") })
        // HDOP = eph / 19, so gpsd's eph comes out as the capture's.
        #expect(gga.contains(",1,08,0.50,520.0,M,"), "\(gga)")
    }

    @Test func ubloxAnswersPollsAndAcknowledgesConfiguration() throws {
        let (receiver, host) = try Self.start(.ublox8, model: .ublox8)
        defer { receiver.stop() }
        // The unsolicited MON-VER at power-up.
        let greeting = Self.frames(host.read { Self.frames($0).contains { UBXVersion($0) != nil } })
        let version = try #require(greeting.compactMap(UBXVersion.init).first)
        #expect(version.hardware == "00080000")
        #expect(version.protocolVersion == 18)

        host.write(UBXCommand.pollVersion.bytes)
        let answer = Self.frames(host.read { Self.frames($0).contains { UBXVersion($0) != nil } })
        #expect(answer.contains { UBXVersion($0) != nil })
        host.write(UBXCommand.powerSetup(.balanced).bytes)
        let acknowledged = Self.frames(host.read { Self.frames($0).contains { UBXAcknowledgement($0) != nil } })
        #expect(
            acknowledged.compactMap(UBXAcknowledgement.init)
                == [UBXAcknowledgement(accepted: true, messageClass: 0x06, id: 0x86)])
        #expect(receiver.powerState == .powerSave)
        let unknown = UBXFrame(messageClass: 0x06, id: 0x99, payload: [1])
        host.write(unknown.bytes)
        let refused = Self.frames(host.read { Self.frames($0).contains { UBXAcknowledgement($0) != nil } })
        #expect(
            refused.compactMap(UBXAcknowledgement.init)
                == [UBXAcknowledgement(accepted: false, messageClass: 0x06, id: 0x99)])
    }

    @Test func ubloxStandbyStopsOutputAndCharges() throws {
        let (receiver, host) = try Self.start(.ublox8, model: .ublox8)
        defer { receiver.stop() }
        _ = host.read { Self.lines($0).contains { $0.hasPrefix("$GPRMC") } }
        host.write(UBXCommand.gnssStop.bytes)
        try waitUntil("standby", timeout: 5) { receiver.powerState == .standby }
        _ = host.read(for: 0.05)  // what was already on its way
        #expect(Self.lines(host.read(for: 0.3)).isEmpty)
        host.write(UBXCommand.gnssStart.bytes)
        try waitUntil("a wake", timeout: 5) { receiver.powerState != .standby }
        let states = receiver.timeline.map(\.state)
        #expect(states.suffix(2) == [.standby, .acquiring] || states.suffix(3) == [.standby, .acquiring, .tracking])
        let end = receiver.clock
        let timeline = receiver.timeline(until: end)
        let current = ReceiverModel.ublox8.current
        let expected = timeline.reduce(0) { total, interval in
            let milliamps = switch interval.state {
            case .tracking: current.tracking
            case .standby: current.standby
            case .acquiring: current.acquisition
            default: -1000.0
            }
            return total + milliamps * (interval.end - interval.start)
        } / 3600
        #expect(abs(receiver.energyMilliampHours(until: end) - expected) < 1e-9)
        #expect(timeline.first?.start == 0 && timeline.last?.end == end)
        #expect(timeline.first { $0.state == .standby }?.milliamps == ReceiverModel.ublox8.current.standby)
    }

    /// The bytes that wake a u-blox from UART-wake backup are lost: a command among them is never heard.
    @Test func bytesThatWakeABackupAreLost() throws {
        let (receiver, host) = try Self.start(.ublox8, model: .ublox8)
        defer { receiver.stop() }
        host.write(UBXCommand.backup(milliseconds: 0, force: true, wakeupSources: .uartRX).bytes)
        try waitUntil("backup", timeout: 5) { receiver.powerState == .backup }
        host.write(UBXCommand.powerSetup(.balanced).bytes)
        try waitUntil("a wake", timeout: 5) { receiver.powerState != .backup }
        sleepSeconds(0.1)
        #expect(!receiver.commands.contains { $0.message == .ubx(UBXCommand.powerSetup(.balanced)) })
        #expect(receiver.powerState == .acquiring || receiver.powerState == .tracking)
    }

    @Test func mediatekAnswersAndSleepsUntilAnyByte() throws {
        let (receiver, host) = try Self.start(.mtk3339, model: .mt3339)
        defer { receiver.stop() }
        _ = host.read { Self.lines($0).contains { $0.hasPrefix("$PMTK705,") } }
        host.write(PMTKCommand.queryFirmware.bytes)
        let firmware = Self.lines(host.read { Self.lines($0).contains { $0.hasPrefix("$PMTK705,") } })
        #expect(firmware.contains { $0.hasPrefix("$PMTK705,AXN_2.31_3339") })
        host.write(PMTKCommand.standby.bytes)
        let answer = Self.lines(host.read { Self.lines($0).contains { $0.hasPrefix("$PMTK001") } })
        #expect(answer.contains("$PMTK001,161,3*36"), "\(answer)")
        #expect(receiver.powerState == .standby)
        host.write(PMTKCommand.normalMode.bytes)
        try waitUntil("a wake", timeout: 5) { receiver.powerState != .standby }
        #expect(!receiver.commands.contains { $0.message == .pmtk(PMTKCommand.normalMode) })
        host.write(RegimePlan.mediatekPowerSave.bytes)
        try waitUntil("power save", timeout: 5) {
            receiver.commands.contains { $0.message == .pmtk(RegimePlan.mediatekPowerSave) }
        }
        let last = try #require(receiver.timeline.last)
        #expect(last.state == .acquiring || last.state == .powerSave)
    }

    @Test func powerOffAndOnRestarts() throws {
        let receiver = try EmulatedReceiver(
            epochs: Self.epochs(count: 100), personality: .ublox8, model: .ublox8, speed: 20)
        defer { receiver.stop() }
        receiver.start()
        try waitUntil("1 s", timeout: 5) { receiver.clock > 1 }
        receiver.setPowered(false)
        #expect(receiver.powerState == .off)
        try waitUntil("2 s", timeout: 5) { receiver.clock > 2 }
        receiver.setPowered(true)
        #expect(receiver.powerState == .acquiring)
        let states = receiver.timeline.map(\.state)
        #expect(states == [.tracking, .off, .acquiring], "\(receiver.timeline)")
    }

    /// A USB-port switch unplugs the device and plugs it in again on a new pty.
    @Test func aUSBPortSwitchRemovesTheDevice() throws {
        let receiver = try EmulatedReceiver(
            epochs: Self.epochs(count: 100), personality: .ublox8, model: .ublox8, speed: 20)
        defer { receiver.stop() }
        receiver.start()
        let paths = Mutex<[String]>([])
        let port = EmulatedPowerSwitch(
            receiver: receiver, description: "USB hub port 3", removesDevice: true,
            onReappear: { path in paths.withLock { $0.append(path) } })
        try port.setPowered(false)
        #expect(receiver.terminal == nil)
        #expect(receiver.powerState == .off)
        try port.setPowered(true)
        let path = try #require(paths.withLock { $0.first })
        #expect(receiver.devicePath == path)
        #expect(receiver.powerState == .acquiring)
    }

    /// The emulator's timeline is the simulated receiver's (what `replay --profile` charges) given the same
    /// regime changes at the same capture times.
    @Test func timelineMatchesTheSimulatedReceiver() throws {
        let (receiver, host) = try Self.start(.ublox8, model: .ublox8)
        defer { receiver.stop() }
        try waitUntil("2 s", timeout: 5) { receiver.clock > 2 }
        host.write(UBXCommand.gnssStop.bytes)
        try waitUntil("standby", timeout: 5) { receiver.powerState == .standby }
        try waitUntil("4 s", timeout: 5) { receiver.clock > 4 }
        host.write(UBXCommand.gnssStart.bytes)
        try waitUntil("a wake", timeout: 5) { receiver.powerState == .acquiring }
        host.write(UBXCommand.backup(milliseconds: 0).bytes)
        try waitUntil("backup", timeout: 5) { receiver.powerState == .backup }
        host.write(RegimeWake.preamble)
        try waitUntil("a wake", timeout: 5) { receiver.powerState == .acquiring }
        try waitUntil("tracking", timeout: 5) { receiver.powerState == .tracking }
        let end = receiver.clock
        let emulated = receiver.timeline(until: end)
        var simulated = SimulatedReceiver(model: .ublox8, start: 0)
        let changes = zip(emulated, emulated.dropFirst()).filter { $0.state.simulated != $1.state.simulated }
        for (_, interval) in changes {
            switch interval.state {
            case .standby: _ = simulated.setRegime(.standby, at: interval.start)
            case .backup, .off: _ = simulated.setRegime(.off, at: interval.start)
            case .acquiring: _ = simulated.setRegime(.continuous, at: interval.start)
            case .tracking, .powerSave: break
            }
        }
        let expected = simulated.timeline(until: end)
        #expect(emulated.map(\.state.simulated) == expected.map(\.state))
        #expect(zip(emulated, expected).allSatisfy { abs($0.start - $1.start) < 1e-9 && abs($0.end - $1.end) < 1e-9 })
    }
}
