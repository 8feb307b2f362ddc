import GPSD
import GPSModel
import Policy
import Receivers
import SystemInterface
import Testbed
import Testing

/// An emulated receiver behind a real private gpsd (not read-only), watched by one client.
final class EmulatorRun {
    let gpsd: PrivateGPSD
    let receiver: EmulatedReceiver
    let session: GPSDSession
    /// Every TPV gpsd sent, with the emulator's clock when it came.
    private(set) var fixes: [(clock: Double, fix: Fix)] = []
    private(set) var devices: [DeviceInfo] = []

    init(
        _ personality: EmulatedReceiver.Personality, model: ReceiverModel, capture: String = "gpsd-ublox-max-m8q.nmea",
        speed: Double = 4, faults: EmulatedReceiver.Faults = .init(), options: PrivateGPSD.Options = .init()
    ) throws {
        receiver = try EmulatedReceiver(
            capture: try importedCapture(capture), personality: personality, model: model, speed: speed)
        receiver.faults = faults
        gpsd = try PrivateGPSD(options: options)
        do {
            try gpsd.addDeviceAndWait(try #require(receiver.terminal))
            session = try GPSDSession(host: "127.0.0.1", port: String(gpsd.port))
            try session.watch()
        } catch {
            receiver.stop()
            gpsd.stop()
            throw error
        }
        receiver.start()
    }

    deinit {
        receiver.stop()
        gpsd.stop()
    }

    /// Reads gpsd's reports until `condition` holds; false after `timeout` seconds.
    @discardableResult
    func read(timeout: Double = 20, until condition: () -> Bool) -> Bool {
        let deadline = monotonicSeconds() + timeout
        while !condition() {
            guard monotonicSeconds() < deadline else { return false }
            guard case .report(let report)? = try? session.read(timeoutMicroseconds: 20_000) else { continue }
            switch report {
            case .fix(let fix): fixes.append((receiver.clock, fix))
            case .device(let device): devices.append(device)
            case .devices(let list): devices += list
            default: break
            }
        }
        return true
    }

    /// Reads for `seconds` of wall time.
    func read(for seconds: Double) {
        let end = monotonicSeconds() + seconds
        read(timeout: seconds + 1) { monotonicSeconds() >= end }
    }

    /// Sends `bytes` to the receiver through gpsd (`?DEVICE` hexdata), as Lodestar does.
    func send(_ bytes: [UInt8]) throws {
        let command = try #require(GPSDCommand.writeToDevice(path: receiver.devicePath, bytes: bytes))
        try session.send(command.text)
    }

    var positionFixes: [(clock: Double, fix: Fix)] { fixes.filter { $0.fix.hasPosition } }

    func hasCommand(_ bytes: [UInt8]) -> Bool { receiver.commands.contains { $0.message.bytes == bytes } }
}

@Suite(.tags(.gpsd)) struct EmulatedReceiverGPSDTests {
    @Test func gpsdIdentifiesTheUbloxAndSwitchesItToBinary() throws {
        let run = try EmulatorRun(.ublox8, model: .ublox8)
        let identified = run.read {
            run.devices.contains { $0.driver == "u-blox" && ($0.subtype ?? "").contains("00080000") }
        }
        #expect(identified, "devices: \(run.devices)")
        let device = try #require(run.devices.last { $0.driver == "u-blox" && $0.subtype != nil })
        #expect(device.subtype1?.contains("PROTVER=18.00") == true)
        // gpsd turns NMEA off; the epochs then come as NAV-PVT and still make TPVs with a position.
        #expect(run.read(timeout: 10) { !run.receiver.sendsNMEA }, "gpsd never switched the u-blox to binary")
        let switched = run.receiver.clock
        #expect(run.read(timeout: 10) { run.positionFixes.contains { $0.clock > switched + 2 } })
        let last = try #require(run.positionFixes.last?.fix)
        #expect(last.eph != nil && last.time != nil && last.speed != nil)
        for command in run.receiver.commands {
            print(command.t, command.ignored ? "ignored" : "", hexadecimal(command.message.bytes))
        }
    }
}
