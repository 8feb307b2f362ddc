@testable import Lodestar
import GPSD
import GPSModel
import Policy
import Receivers
import Synchronization
import Testing

/// What an application's `ReceiverControl` is told about the receiver's device when gpsd's events and its
/// answers disagree.
@Suite struct ReceiverLinkTests {
    final class ContextLog: ReceiverControl {
        private let paths = Mutex<[String?]>([])
        var devicePaths: [String?] { paths.withLock { $0 } }
        func receiverChanged(_ context: ReceiverContext) { paths.withLock { $0.append(context.devicePath) } }
        func setRegime(_ regime: ReceiverRegime, reason: String) {}
    }

    func device(_ path: String, driver: String) -> DeviceInfo {
        DeviceInfo(path: path, driver: driver, activated: UTCTime(seconds: 1_700_000_000))
    }

    /// gpsd's answer to one command the control wrote to the receiver, as the live reader hands it over: the
    /// command's outcome, and what the answer says of the devices (`StreamState.events(forAnswer:)`) noted.
    func answer(_ link: ReceiverLink, _ stream: inout StreamState, with report: Report) throws -> GPSDCommandOutcome? {
        let commands = try #require(link.commands)
        commands.connected()
        let outcome = Mutex<GPSDCommandOutcome?>(nil)
        commands.send(.watch(device: nil)) { result in outcome.withLock { $0 = result } }
        commands.writeNext(now: 0) { _ in }
        if let answer = commands.observe(report) {
            for event in stream.events(forAnswer: answer) { link.note(event) }
        }
        return outcome.withLock { $0 }
    }

    /// A receiver unplugged and plugged back on another path, gpsd's close notice for the old one missed: the
    /// control's own command answered `Can't open` moves its context to the device gpsd still has.
    @Test func aDeviceGpsdCannotOpenIsTakenAsClosed() throws {
        let control = ContextLog()
        let link = ReceiverLink(control: control, model: .ublox8, live: true)
        var stream = StreamState(watchedDevice: nil)
        for report in [Report.device(device("/dev/ttyUSB0", driver: "u-blox")), .device(device("/dev/ttyUSB1", driver: "NMEA0183"))] {
            for event in stream.events(for: report, host: "h", port: "p") { link.note(event) }
        }
        link.passOnContext()
        #expect(control.devicePaths.last == "/dev/ttyUSB0")

        // Other refusals, and one for a device that is not the receiver's, change nothing.
        _ = try answer(link, &stream, with: .error(message: "Type of /dev/ttyUSB0 is unknown."))
        _ = try answer(link, &stream, with: .error(message: "Can't open /dev/ttyUSB9."))
        link.passOnContext()
        #expect(control.devicePaths.count == 1)

        let outcome = try answer(link, &stream, with: .error(message: "Can't open /dev/ttyUSB0."))
        #expect(outcome == .refused(message: "Can't open /dev/ttyUSB0."))
        link.passOnContext()
        #expect(control.devicePaths == ["/dev/ttyUSB0", "/dev/ttyUSB1"])
    }
}
