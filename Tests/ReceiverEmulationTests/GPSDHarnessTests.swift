import ReceiverEmulation
import TestSupport
import Foundation
import GPSD
import GPSModel
import SystemInterface
import Synchronization
import Testing

@Suite(.tags(.gpsd)) struct GPSDHarnessTests {
    /// Without -b, gpsd writes to the receiver: its probes on open, and `?DEVICE` hexdata (the way power
    /// commands will reach a receiver). The pty gives them back.
    @Test func readsBackWhatGpsdWritesToTheReceiver() throws {
        let bed = try GPSDTestBed()
        try waitUntil("gpsd's probe strings") { !bed.terminal.bytesFromHost.isEmpty }
        // gpsd only accepts hexdata once it knows the device's type: give it some NMEA first.
        _ = bed.feed(try Fixtures.bytes("gpsd-mtk-mt3339.nmea"))
        let session = try GPSDSession(host: "127.0.0.1", port: bed.port)
        try session.watch()
        let monVersionPoll: [UInt8] = [0xB5, 0x62, 0x0A, 0x04, 0x00, 0x00, 0x0E, 0x34]
        let hex = monVersionPoll.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        try session.send(#"?DEVICE={"path":"\#(bed.terminal.devicePath)","hexdata":"\#(hex)"}"#)
        try waitUntil("the UBX frame at the receiver") {
            _ = try? session.read(timeoutMicroseconds: 10_000)
            return bed.terminal.bytesFromHost.contains(subsequence: monVersionPoll)
        }
    }

    /// `addDeviceAndWait` asks again when gpsd gave no answer, and relies on gpsd answering ERROR (not
    /// adding a second copy) when the unanswered request had in fact worked.
    @Test func gpsdRefusesADeviceItAlreadyHas() throws {
        let bed = try GPSDTestBed.readOnly()
        // do/catch rather than the error #expect(throws:) returns, which Swift 6.0's Testing does not have.
        do {
            try bed.gpsd.addDevice(bed.terminal.devicePath)
            Issue.record("gpsd took a device it already had")
        } catch {
            guard case .controlCommandFailed(_, let reply) = error else {
                Issue.record("expected a refused control command, got \(error)")
                return
            }
            #expect(reply == "ERROR")
        }
    }

    /// gpsd reads a control-socket connection until its peer closes it, deaf to every client meanwhile. A
    /// child started while such a connection is open (a libgps socket is not close-on-exec either) must not
    /// hold it open after this process closes it: once, gpsd stayed blocked so for a whole test.
    @Test func aChildStartedBesideAControlConnectionDoesNotHoldGpsd() throws {
        let bed = try GPSDTestBed.readOnly()
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        try #require(descriptor >= 0)
        let connected = try withUnixSocketAddress(bed.gpsd.controlSocketPath) { connect(descriptor, $0, $1) }
        try #require(connected == 0)
        let sleep = try #require(findExecutable("sleep"))
        let child = try ChildProcess(executable: sleep, arguments: ["30"])
        defer { child.terminate(grace: 0) }
        close(descriptor)
        // gpsd answers within the exchange's 5 s only if nothing else holds that connection open.
        try bed.gpsd.removeDevice(bed.terminal.devicePath)
    }

    /// gpsd drops, without a word, a report for a client whose socket is full. `feedWithoutDrops` holds the
    /// feed back while a client lags, so a client stopped for seconds in the middle of a drive fed as fast as
    /// gpsd reads still gets every report the other one gets.
    @Test func aStoppedClientMissesNothingOfAFeedWithoutDrops() throws {
        let bed = try GPSDTestBed.readOnly()
        let (stopped, stoppedOutput) = try bed.startGpspipe()
        let (steady, steadyOutput) = try bed.startGpspipe()
        defer {
            stopped.terminate()
            steady.terminate()
            unlink(stoppedOutput)
            unlink(steadyOutput)
        }
        stopped.signal(SIGSTOP)
        let (bytes, terminal, port) = (try Fixtures.bytes("garmin-drive-reno-tahoe-2h43m.nmea"), bed.terminal, bed.gpsd.port)
        let written = Atomic<Int>(0)
        let feed = BackgroundFeed(settle: 0)
        feed.start { _ in
            let outcome = GPSDTestBed.feedWithoutDrops(bytes, to: terminal, port: port)
            written.store(outcome.completed ? outcome.epochsWritten : -1, ordering: .releasing)
        }
        defer {
            feed.stop()
            feed.waitUntilDone()
        }
        // Held back: unheld, the whole drive went through in under 2 s here.
        sleepSeconds(4)
        #expect(!feed.isDone, "the feed went on while a client was stopped")
        stopped.signal(SIGCONT)
        feed.waitUntilDone()
        #expect(written.load(ordering: .acquiring) > 4000)
        try bed.gpsd.removeDevice(bed.terminal.devicePath)
        for output in [stoppedOutput, steadyOutput] {
            try waitUntil("gpspipe to see the device close", timeout: 60) { bed.text(output).contains("\"activated\":0") }
        }
        let tpvs = { (output: String) in bed.text(output).components(separatedBy: "\"class\":\"TPV\"").count - 1 }
        #expect(tpvs(steadyOutput) > 4000)
        #expect(tpvs(stoppedOutput) == tpvs(steadyOutput))
    }

    @Test func readOnlyGpsdWritesNothing() throws {
        let bed = try GPSDTestBed.readOnly()
        _ = bed.feed(try Fixtures.bytes("gpsd-sirf4-bu353s4.nmea"))
        usleep(300_000)
        #expect(bed.terminal.bytesFromHost.isEmpty)
    }

    /// Two private gpsds side by side never meet: their own ports, sockets and shared memory.
    @Test func privateGpsdsAreIndependentAndCleanUp() throws {
        var options = PrivateGPSD.Options()
        options.readOnly = true
        let first = try PrivateGPSD(options: options)
        let second = try PrivateGPSD(options: options)
        #expect(first.port != second.port)
        #expect(first.controlSocketPath != second.controlSocketPath)
        #expect(first.sharedMemoryKey != second.sharedMemoryKey)
        let socket = first.controlSocketPath
        first.stop()
        #expect(!first.isRunning)
        #expect(access(socket, F_OK) != 0)
        #expect(shmget(first.sharedMemoryKey, 0, 0) < 0)
        #expect(second.isRunning)
        second.stop()
    }
}

extension Array where Element == UInt8 {
    func contains(subsequence: [UInt8]) -> Bool {
        guard subsequence.count <= count else { return false }
        return (0...(count - subsequence.count)).contains { self[$0..<($0 + subsequence.count)].elementsEqual(subsequence) }
    }
}
