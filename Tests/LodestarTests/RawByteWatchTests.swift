import Foundation
import GPSD
import Lodestar
import SystemInterface
import ReceiverEmulation
import TestSupport
import Testing

/// The raw watch beside gpsd's JSON watch (`record --raw`, the daemon's capture): when gpsd comes back, the
/// JSON source's signal brings the raw watch back at once instead of at the end of its own back-off, so the
/// receiver's bytes resume with gpsd's reports. A stand-in gpsd (a banner, then a sentence every 50 ms)
/// appears on the port while the raw watch waits between refused attempts.
@Suite(.serialized) struct RawByteWatchTests {
    static let banner = Array(#"{"class":"VERSION","release":"3.22","rev":"3.22","proto_major":3,"proto_minor":14}"#.utf8) + [0x0A]
    static let sentence = Array("$GPTXT,01,01,02,lodestar raw watch test*00\r\n".utf8)

    final class FirstBytes: @unchecked Sendable {
        private let lock = NSLock()
        private var time: Double?
        private var all: [UInt8] = []
        func note(_ bytes: [UInt8]) {
            lock.withLock {
                if time == nil { time = monotonicSeconds() }
                all += bytes
            }
        }
        var arrival: Double? { lock.withLock { time } }
        var bytes: [UInt8] { lock.withLock { all } }
    }

    /// Seconds from the stand-in gpsd appearing (and `signal`, when given) to the first receiver bytes.
    static func delayUntilBytes(signalling: Bool) throws -> Double {
        let port = try freeLoopbackPort()
        let signal = ReconnectSignal()
        let stop = StopFlag()
        let finished = StopFlag()
        let received = FirstBytes()
        let started = RawByteWatch.start(
            host: "127.0.0.1", port: String(port), device: nil, reconnectNow: signal, shouldStop: { stop.isSet },
            onBytes: { received.note($0) }, onFinish: { finished.set() })
        try #require(started)
        defer {
            stop.set()
            while !finished.isSet { sleepSeconds(0.01) }
        }
        // Refused attempts at 0, 0.1, 0.3, 0.7, 1.5 and 3.1 s (back-off from 0.1 s doubling to 2 s): at 3.4 s
        // the next one is 1.7 s away.
        sleepSeconds(3.4)
        let server = try ImpostorServer(.repeats(greeting: banner, line: sentence), port: port)
        defer { server.stop() }
        let back = monotonicSeconds()
        if signalling { signal.signal() }
        try waitUntil("the receiver's bytes", timeout: 5) { received.arrival != nil }
        // The banner (gpsd's JSON) is not a receiver byte; the sentence is.
        #expect(received.bytes.starts(with: sentence), "\(received.bytes.prefix(80))")
        return (received.arrival ?? .infinity) - back
    }

    @Test func aSignalEndsTheBackOffAtOnce() throws {
        let delay = try Self.delayUntilBytes(signalling: true)
        #expect(delay < 0.5, "\(delay) s")
    }

    /// What the signal saves: left to its back-off, the raw watch comes back at its next attempt, seconds later.
    @Test func withoutTheSignalTheBackOffRunsOut() throws {
        let delay = try Self.delayUntilBytes(signalling: false)
        #expect(delay > 1, "\(delay) s")
    }
}
