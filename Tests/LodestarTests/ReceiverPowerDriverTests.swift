@testable import Lodestar
import GPSD
import GPSModel
import Policy
import Receivers
import Testing

/// Which device power control writes to when gpsd's events and answers disagree.
@Suite struct ReceiverPowerDriverTests {
    let activated = UTCTime(seconds: 1_700_000_000)

    /// The daemon's default: the mechanism from what gpsd identifies.
    func driver() -> ReceiverPowerDriver {
        ReceiverPowerDriver(
            setup: ReceiverPowerSetup(connection: .uart), model: .ublox8, host: "127.0.0.1", port: "2947",
            device: nil, commands: GPSDCommandChannel(), inbox: Inbox())
    }

    /// What the driver wrote to the receiver since the last look, by name.
    static func written(_ power: ReceiverPowerDriver) -> [String] {
        power.takeOutputs().compactMap { output in
            if case .transmitted(_, let description) = output.0 { description } else { nil }
        }
    }

    func device(_ path: String, driver: String, subtype: String? = nil) -> DeviceInfo {
        DeviceInfo(path: path, driver: driver, subtype: subtype, activated: activated)
    }

    /// A receiver unplugged and plugged back on another path, gpsd's close notice for the old one missed:
    /// gpsd answering that it cannot open the old path retires it, and commands go to the new one.
    @Test func aDeviceGpsdCannotOpenIsTakenAsClosed() {
        let power = driver()
        let now = Instant(seconds: 10)
        power.observe(.deviceActivated(device("/dev/ttyUSB0", driver: "u-blox", subtype: "HW 00080000")), at: now)
        // Plugged back in: gpsd's first word for the u-blox on its new path is the generic NMEA driver.
        power.observe(.deviceActivated(device("/dev/ttyUSB1", driver: "NMEA0183")), at: now)
        #expect(power.devicePath == "/dev/ttyUSB0")
        // gpsd's answers as the live source reads them: what they say of the devices, then the reply.
        var stream = StreamState(watchedDevice: nil)
        _ = stream.events(for: .device(device("/dev/ttyUSB0", driver: "u-blox")), host: "h", port: "p")
        _ = stream.events(for: .device(device("/dev/ttyUSB1", driver: "NMEA0183")), host: "h", port: "p")
        func answer(_ outcome: GPSDCommandOutcome) {
            for event in stream.events(forAnswer: outcome) { power.observe(event, at: now) }
            power.reply(outcome, at: now)
        }
        // Other refusals, and a refusal for a device that is not the receiver's, leave it.
        answer(.refused(message: "Type of /dev/ttyUSB0 is unknown."))
        answer(.refused(message: "Can't open /dev/ttyUSB9."))
        answer(.failed(reason: "no answer within 5 s"))
        #expect(power.devicePath == "/dev/ttyUSB0")
        _ = power.takeOutputs()
        answer(.refused(message: "Can't open /dev/ttyUSB0."))
        #expect(power.devicePath == "/dev/ttyUSB1")
        #expect(power.identity?.path == "/dev/ttyUSB1")
        // The device that took its place is asked what it is, as after a replug, and not taken for a receiver
        // without commands on gpsd's generic word.
        power.advance(to: Instant(seconds: 15))
        let written = Self.written(power)
        #expect(written.contains { $0.contains("MON-VER") }, "written: \(written)")
    }

    /// gpsd activated the replugged receiver's new path before it closed the old one: the device that takes
    /// the receiver's place is asked what it is, as when the old one closed first.
    @Test func aCloseWhileAnotherDeviceIsActiveIdentifiesThatOneAgain() {
        let power = driver()
        let now = Instant(seconds: 10)
        power.observe(.deviceActivated(device("/dev/ttyUSB0", driver: "u-blox", subtype: "HW 00080000")), at: now)
        power.observe(.deviceActivated(device("/dev/ttyUSB1", driver: "NMEA0183")), at: now)
        _ = power.takeOutputs()
        power.observe(.deviceClosed(path: "/dev/ttyUSB0"), at: now)
        #expect(power.devicePath == "/dev/ttyUSB1")
        power.advance(to: Instant(seconds: 15))
        let written = Self.written(power)
        #expect(written.contains { $0.contains("MON-VER") }, "written: \(written)")
    }

    @Test func gpsdsCannotOpenNamesTheDevice() {
        #expect(GPSDCommandOutcome.refused(message: "Can't open /dev/ttyACM0.").unopenableDevice == "/dev/ttyACM0")
        #expect(GPSDCommandOutcome.refused(message: "Can't open .").unopenableDevice == nil)
        #expect(GPSDCommandOutcome.refused(message: "Type of /dev/pts/0 is unknown.").unopenableDevice == nil)
        #expect(GPSDCommandOutcome.failed(reason: "Can't open /dev/ttyACM0.").unopenableDevice == nil)
    }
}
