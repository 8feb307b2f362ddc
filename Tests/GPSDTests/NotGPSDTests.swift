import Foundation
import GPSD
import GPSModel
import TestSupport
import Testing

/// A port that answers but is not gpsd (an SSH server, something sending NULs, a server that never speaks or
/// closes at once): every way Lodestar connects to gpsd checks for gpsd's VERSION banner and says what
/// answered instead, and nothing the impostor sent is passed on as gpsd's.
/// Seconds on a clock that does not jump (GPSDTests do not import SystemInterface).
private func uptime() -> Double { ProcessInfo.processInfo.systemUptime }

@Suite struct NotGPSDTests {
    static let nuls = [UInt8](repeating: 0, count: 16)

    /// Reads until `read` throws (or 5 s pass); the lines the session passed on meanwhile.
    static func firstError(_ server: ImpostorServer, bannerTimeout: Double = 3) throws -> (GPSDError?, [String]) {
        let session = try GPSDSession(host: "127.0.0.1", port: String(server.port), bannerTimeout: bannerTimeout)
        let lines = LineLog()
        session.lineObserver = { line in lines.append(String(decoding: UnsafeRawBufferPointer(line), as: UTF8.self)) }
        try session.watch()
        let deadline = uptime() + 5
        do throws(GPSDError) {
            while uptime() < deadline { _ = try session.read(timeoutMicroseconds: 200_000) }
        } catch {
            return (error, lines.all)
        }
        return (nil, lines.all)
    }

    final class LineLog: @unchecked Sendable {
        private let lock = NSLock()
        private var lines: [String] = []
        func append(_ line: String) { lock.withLock { lines.append(line) } }
        var all: [String] { lock.withLock { lines } }
    }

    @Test func anSSHBannerIsNotGPSDAndIsQuotedInTheMessage() throws {
        let server = try ImpostorServer(.greets(ImpostorServer.sshBanner))
        defer { server.stop() }
        let (error, lines) = try Self.firstError(server)
        guard case .notGPSD(let host, let port, let answered, let closed, _)? = error else {
            Issue.record("expected notGPSD, got \(String(describing: error))")
            return
        }
        #expect(host == "127.0.0.1" && port == String(server.port))
        #expect(answered == ImpostorServer.sshBanner && !closed)
        let message = error?.description ?? ""
        #expect(message.contains("127.0.0.1:\(server.port) is not gpsd"), "\(message)")
        #expect(message.contains(#""SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n""#), "\(message)")
        #expect(lines.isEmpty, "the banner is not passed on as a gpsd line: \(lines)")
    }

    @Test func nulBytesAreNotGPSDAndShownEscaped() throws {
        let server = try ImpostorServer(.greets(Self.nuls))
        defer { server.stop() }
        let started = uptime()
        let (error, lines) = try Self.firstError(server)
        #expect(uptime() - started < 2, "told at once, not after the banner's timeout")
        guard case .notGPSD(_, _, let answered, _, _)? = error else {
            Issue.record("expected notGPSD, got \(String(describing: error))")
            return
        }
        #expect(answered == Self.nuls)
        #expect(error?.description.contains(#""\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0""#) == true, "\(String(describing: error))")
        #expect(lines.isEmpty)
    }

    @Test func silenceIsNotGPSDOnceTheBannerIsOverdue() throws {
        let server = try ImpostorServer(.silent)
        defer { server.stop() }
        let started = uptime()
        let (error, _) = try Self.firstError(server, bannerTimeout: 0.5)
        let waited = uptime() - started
        #expect(waited >= 0.5 && waited < 2, "\(waited) s")
        guard case .notGPSD(_, _, let answered, let closed, _)? = error else {
            Issue.record("expected notGPSD, got \(String(describing: error))")
            return
        }
        #expect(answered.isEmpty && !closed)
        #expect(error?.description.contains("sent nothing within 0.5 s") == true, "\(String(describing: error))")
    }

    @Test func closingAtOnceIsNotGPSD() throws {
        let server = try ImpostorServer(.closes)
        defer { server.stop() }
        let (error, _) = try Self.firstError(server)
        guard case .notGPSD(_, _, _, let closed, _)? = error else {
            Issue.record("expected notGPSD, got \(String(describing: error))")
            return
        }
        #expect(closed)
        #expect(error?.description.contains("closed the connection") == true)
    }

    /// The raw watch (`readBytes`) checks the banner too: an impostor's bytes never become receiver bytes.
    @Test func aRawWatchRefusesAnImpostorsBytes() throws {
        let server = try ImpostorServer(.greets(ImpostorServer.sshBanner))
        defer { server.stop() }
        let session = try GPSDSession(host: "127.0.0.1", port: String(server.port))
        try session.watchRawBytes()
        var received: [UInt8] = []
        #expect(throws: GPSDError.self) {
            for _ in 0..<20 { received += try session.readBytes(timeoutMicroseconds: 100_000) }
        }
        #expect(received.isEmpty)
    }

    /// `watch` and `record` go through `run`: the first connection to an impostor is thrown, not retried.
    @Test func runThrowsForAnImpostorAtTheFirstConnection() throws {
        let server = try ImpostorServer(.greets(ImpostorServer.sshBanner))
        defer { server.stop() }
        let source = LiveReportSource(host: "127.0.0.1", port: String(server.port))
        var events: [LiveEvent] = []
        #expect {
            try source.run(shouldStop: { false }) { events.append($0) }
        } throws: { error in
            if case .notGPSD? = error as? GPSDError { true } else { false }
        }
        #expect(events.isEmpty)
    }

    /// Stopping while the banner is awaited ends `run` within its polling interval, without an error.
    @Test func runStopsWhileWaitingForTheBanner() throws {
        let server = try ImpostorServer(.silent)
        defer { server.stop() }
        let source = LiveReportSource(host: "127.0.0.1", port: String(server.port))
        let started = uptime()
        try source.run(shouldStop: { uptime() - started > 0.3 }) { _ in }
        #expect(uptime() - started < 1)
    }

    /// The daemon's reader keeps trying instead: the impostor is told once as gpsd's loss (naming what
    /// answered), and attempts back off as for a gpsd that is not there, not ten times a second.
    @Test func theDaemonsReaderReportsAnImpostorOnceAndBacksOff() throws {
        let server = try ImpostorServer(.greets(ImpostorServer.sshBanner))
        defer { server.stop() }
        let reader = LiveReportReader(LiveReportSource(host: "127.0.0.1", port: String(server.port)))
        var events: [LiveEvent] = []
        let started = uptime()
        while uptime() - started < 2 {
            reader.step(seconds: 0.2, wakeDescriptor: -1) { events.append($0) }
        }
        reader.close { _ in }
        let losses = events.compactMap { event -> String? in if case .gpsdLost(let reason) = event { reason } else { nil } }
        #expect(losses.count == 1, "\(events)")
        #expect(losses.first?.contains("127.0.0.1:\(server.port) is not gpsd") == true, "\(losses)")
        #expect(!events.contains { if case .fix = $0 { true } else if case .watching = $0 { true } else { false } })
        // Back-off from 0.1 s doubling to 2 s: 0, 0.2, 0.6, 1.4 s… (without it, about 20 in 2 s).
        #expect(server.connectionCount >= 2 && server.connectionCount <= 6, "\(server.connectionCount) connections")
    }

    @Test func bytesAreShownPrintableAndQuoted() {
        let error = GPSDError.notGPSD(
            host: "h", port: "1", answered: Array("a\"b\\\u{1}\t".utf8) + [0xFF], closed: false, waited: 3)
        #expect(error.description == #"h:1 is not gpsd: it answered "a\"b\\\x01\t\xff" where gpsd sends its VERSION banner"#)
    }
}
