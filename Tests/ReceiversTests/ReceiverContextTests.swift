import GPSD
import GPSModel
import Policy
@testable import Receivers
import Synchronization
import Testing

@Suite struct ReceiverIdentityTests {
    @Test func comesFromADeviceReportThatNamesADriver() {
        let device = DeviceInfo(
            path: "/dev/ttyACM0", driver: "u-blox", subtype: "SW ROM CORE 3.01 (107888),HW 00080000",
            subtype1: "FWVER=SPG 3.01,PROTVER=18.00", activated: UTCTime(seconds: 1_700_000_000))
        #expect(
            ReceiverIdentity(device)
                == ReceiverIdentity(
                    path: "/dev/ttyACM0", driver: "u-blox", subtype: "SW ROM CORE 3.01 (107888),HW 00080000",
                    subtype1: "FWVER=SPG 3.01,PROTVER=18.00"))
        #expect(ReceiverIdentity(DeviceInfo(path: "/dev/ttyACM0", activated: UTCTime(seconds: 1))) == nil)
        #expect(ReceiverIdentity(DeviceInfo(path: "/dev/ttyACM0", driver: "")) == nil)
    }
}

@Suite struct ReceiverDeviceTrackerTests {
    let activated = UTCTime(seconds: 1_700_000_000)

    func device(_ path: String, driver: String? = nil, subtype: String? = nil) -> DeviceInfo {
        DeviceInfo(path: path, driver: driver, subtype: subtype, activated: activated)
    }

    @Test func theActivatedDeviceAndThenWhatGpsdIdentifiedOnIt() {
        var tracker = ReceiverDeviceTracker()
        var changed: Bool
        #expect(tracker.devicePath == nil)
        changed = tracker.note(.deviceActivated(device("/dev/pts/1")))
        #expect(changed)
        #expect(tracker.devicePath == "/dev/pts/1")
        #expect(tracker.identity == nil)
        // gpsd's later DEVICE report for the same device names the driver.
        changed = tracker.note(.report(.device(device("/dev/pts/1", driver: "u-blox"))))
        #expect(changed)
        #expect(tracker.identity == ReceiverIdentity(path: "/dev/pts/1", driver: "u-blox"))
        // The same again, or one without a driver, changes nothing.
        changed = tracker.note(.report(.device(device("/dev/pts/1", driver: "u-blox"))))
        #expect(!changed)
        changed = tracker.note(.report(.device(device("/dev/pts/1"))))
        #expect(!changed)
        #expect(tracker.identity?.driver == "u-blox")
        // The receiver's own description, once gpsd has asked it.
        changed = tracker.note(.report(.devices([device("/dev/pts/1", driver: "u-blox", subtype: "HW 00080000")])))
        #expect(changed)
        #expect(tracker.identity?.subtype == "HW 00080000")
        changed = tracker.note(.fix(Fix(device: "/dev/pts/1", mode: .threeD)))
        #expect(!changed)
    }

    @Test func theFirstActiveDeviceIsTheReceiverUntilItCloses() {
        var tracker = ReceiverDeviceTracker()
        var changed: Bool
        _ = tracker.note(.deviceActivated(device("/dev/a", driver: "NMEA0183")))
        changed = tracker.note(.deviceActivated(device("/dev/b", driver: "SiRF")))
        #expect(!changed)
        #expect(tracker.devicePath == "/dev/a")
        // A report about a device that is not active is not the receiver's.
        changed = tracker.note(.report(.device(device("/dev/c", driver: "u-blox"))))
        #expect(!changed)
        changed = tracker.note(.deviceClosed(path: "/dev/a"))
        #expect(changed)
        #expect(tracker.devicePath == "/dev/b")
        #expect(tracker.identity?.driver == "SiRF")
    }

    @Test func aLossForgetsEveryDevice() {
        var tracker = ReceiverDeviceTracker()
        var changed: Bool
        _ = tracker.note(.deviceActivated(device("/dev/a", driver: "NMEA0183")))
        changed = tracker.note(.receiverLost(reason: "gpsd closed the connection"))
        #expect(changed)
        #expect(tracker.devicePath == nil)
        #expect(tracker.identity == nil)
        changed = tracker.note(.receiverBack)
        #expect(!changed)
    }
}

@Suite struct ReceiverContextTests {
    final class Outcome: Sendable {
        let value = Mutex<GPSDCommandOutcome?>(nil)
        var completion: GPSDCommandChannel.Completion { { outcome in self.value.withLock { $0 = outcome } } }
        var failed: Bool { if case .failed? = value.withLock({ $0 }) { true } else { false } }
    }

    @Test func writingFailsAtOnceWithoutAChannelADeviceOrWithTooManyBytes() {
        let withoutChannel = ReceiverContext(devicePath: "/dev/a", model: .genericNMEA)
        let noChannel = Outcome()
        withoutChannel.writeToReceiver([1], completion: noChannel.completion)
        #expect(noChannel.failed)

        let channel = GPSDCommandChannel()
        let withoutDevice = ReceiverContext(model: .genericNMEA, commands: channel)
        let noDevice = Outcome()
        withoutDevice.writeToReceiver([1], completion: noDevice.completion)
        #expect(noDevice.failed)

        let tooLong = Outcome()
        ReceiverContext(devicePath: "/dev/a", model: .genericNMEA, commands: channel)
            .writeToReceiver(Array(repeating: 0, count: 256), completion: tooLong.completion)
        #expect(tooLong.failed)
    }
}
