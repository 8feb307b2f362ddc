import GPSModel
import Synchronization
import Testing

@testable import GPSD

@Suite struct GPSDCommandTests {
    @Test func hexadecimalIsTwoLowerCaseDigitsPerByte() {
        #expect(hexadecimal([0x00, 0x0F, 0xF0, 0xFF, 0x5A]) == "000ff0ff5a")
        #expect(hexadecimal([UInt8]()) == "")
    }

    @Test func writeToDeviceIsADeviceCommandWithHexdata() {
        let gnssStop: [UInt8] = [0xB5, 0x62, 0x06, 0x04, 0x04, 0x00, 0x00, 0x00, 0x08, 0x00, 0x16, 0x74]
        let command = GPSDCommand.writeToDevice(path: "/dev/ttyACM0", bytes: gnssStop)
        #expect(command?.text == #"?DEVICE={"path":"/dev/ttyACM0","hexdata":"b56206040400000008001674"}"#)
        #expect(GPSDCommand.writeToDevice(path: nil, bytes: [0x24])?.text == #"?DEVICE={"hexdata":"24"}"#)
    }

    /// Quotes and backslashes are escaped, and a control character too: a raw newline would end the command.
    @Test func aPathIsQuotedAsAJSONString() {
        let command = GPSDCommand.writeToDevice(path: "/dev/a\"b\\c\n", bytes: [1])
        #expect(command?.text == #"?DEVICE={"path":"/dev/a\"b\\c\n","hexdata":"01"}"#)
    }

    @Test func writeToDeviceTakesOneTo255Bytes() {
        #expect(GPSDCommand.writeToDevice(path: "/dev/x", bytes: []) == nil)
        #expect(GPSDCommand.writeToDevice(path: "/dev/x", bytes: Array(repeating: 0xFF, count: 255)) != nil)
        #expect(GPSDCommand.writeToDevice(path: "/dev/x", bytes: Array(repeating: 0xFF, count: 256)) == nil)
    }

    @Test func aDeviceCommandIsAnsweredByItsDeviceAnErrorOrAnAck() throws {
        let command = try #require(GPSDCommand.writeToDevice(path: "/dev/a", bytes: [1]))
        #expect(command.isAnswered(by: .device(DeviceInfo(path: "/dev/a"))))
        #expect(!command.isAnswered(by: .device(DeviceInfo(path: "/dev/b"))))
        #expect(!command.isAnswered(by: .devices([DeviceInfo(path: "/dev/a")])))
        #expect(command.isAnswered(by: .error(message: "Type of /dev/a is unknown.")))
        #expect(command.isAnswered(by: .other(className: "ACK")))
        #expect(!command.isAnswered(by: .other(className: "PPS")))
        let anyDevice = try #require(GPSDCommand.writeToDevice(path: nil, bytes: [1]))
        #expect(anyDevice.isAnswered(by: .device(DeviceInfo(path: "/dev/b"))))
        let poll = GPSDCommand("?POLL;", answeredBy: "POLL")
        #expect(poll.isAnswered(by: .other(className: "POLL")))
        #expect(!poll.isAnswered(by: .device(DeviceInfo(path: "/dev/a"))))
    }
}

/// The channel's bookkeeping, with the reader's side driven by hand.
@Suite struct GPSDCommandChannelTests {
    final class Outcomes: Sendable {
        private let list = Mutex<[String: GPSDCommandOutcome]>([:])
        func record(_ name: String) -> GPSDCommandChannel.Completion {
            { outcome in self.list.withLock { $0[name] = outcome } }
        }
        subscript(_ name: String) -> GPSDCommandOutcome? { list.withLock { $0[name] } }
        func failed(_ name: String) -> Bool { if case .failed? = self[name] { true } else { false } }
    }

    let first = GPSDCommand("?DEVICE={\"path\":\"/dev/a\",\"hexdata\":\"01\"}", answeredBy: "DEVICE")
    let second = GPSDCommand("?POLL;", answeredBy: "POLL")

    /// A connected channel with `first` and `second` queued, in that order.
    func channelWithTwoQueued(answerTimeout: Double = 5) -> (GPSDCommandChannel, Outcomes) {
        let channel = GPSDCommandChannel(answerTimeout: answerTimeout)
        channel.connected()
        let outcomes = Outcomes()
        channel.send(first, completion: outcomes.record("first"))
        channel.send(second, completion: outcomes.record("second"))
        return (channel, outcomes)
    }

    func written(_ channel: GPSDCommandChannel, now: Double = 0) -> [String] {
        var texts: [String] = []
        channel.writeNext(now: now) { command in texts.append(command.text) }
        return texts
    }

    @Test func withoutAConnectionACommandFailsAtOnce() {
        let channel = GPSDCommandChannel()
        let outcomes = Outcomes()
        channel.send(first, completion: outcomes.record("first"))
        #expect(outcomes.failed("first"))
    }

    @Test func commandsGoOutOneAtATimeAndGetTheirOwnAnswers() {
        let (channel, outcomes) = channelWithTwoQueued()
        #expect(written(channel) == [first.text])
        #expect(written(channel).isEmpty)
        // A report that does not answer the command awaiting one changes nothing.
        channel.observe(.sky(SkyView(satellites: [])))
        #expect(outcomes["first"] == nil)
        let device = Report.device(DeviceInfo(path: "/dev/a", driver: "u-blox"))
        channel.observe(device)
        #expect(outcomes["first"] == .answered(device))
        #expect(written(channel) == [second.text])
        channel.observe(.error(message: "Unrecognized request"))
        #expect(outcomes["second"] == .refused(message: "Unrecognized request"))
        #expect(written(channel).isEmpty)
    }

    @Test func anUnansweredCommandFailsAfterTheTimeoutAndTheNextGoesOut() {
        let (channel, outcomes) = channelWithTwoQueued(answerTimeout: 5)
        #expect(written(channel, now: 100) == [first.text])
        #expect(written(channel, now: 104.9).isEmpty)
        #expect(written(channel, now: 105) == [second.text])
        #expect(outcomes.failed("first"))
        #expect(outcomes["second"] == nil)
    }

    @Test func aFailedWriteFailsThatCommandOnly() {
        let (channel, outcomes) = channelWithTwoQueued()
        var attempts: [String] = []
        channel.writeNext(now: 0) { command throws(GPSDError) in
            attempts.append(command.text)
            if command == first { throw .sendFailed(command: command.text, errno: 32) }
        }
        #expect(attempts == [first.text, second.text])
        #expect(outcomes["first"] == .failed(reason: GPSDError.sendFailed(command: first.text, errno: 32).description))
        #expect(outcomes["second"] == nil)
        channel.observe(.other(className: "POLL"))
        #expect(outcomes["second"] == .answered(.other(className: "POLL")))
    }

    @Test func aLostConnectionFailsEverythingPendingUntilConnectedAgain() {
        let (channel, outcomes) = channelWithTwoQueued()
        _ = written(channel)
        channel.disconnected(reason: "gpsd closed the connection")
        #expect(outcomes["first"] == .failed(reason: "gpsd closed the connection"))
        #expect(outcomes["second"] == .failed(reason: "gpsd closed the connection"))
        channel.send(first, completion: outcomes.record("while away"))
        #expect(outcomes.failed("while away"))
        channel.connected()
        channel.send(first, completion: outcomes.record("back"))
        #expect(written(channel) == [first.text])
    }

    @Test func aClosedChannelStaysClosed() {
        let channel = GPSDCommandChannel()
        channel.connected()
        channel.disconnected(reason: "stopped", closing: true)
        channel.connected()
        let outcomes = Outcomes()
        channel.send(first, completion: outcomes.record("late"))
        #expect(outcomes["late"] == .failed(reason: "the gpsd connection has ended"))
    }
}
