import Capture
import ReceiverEmulation
import SystemInterface

#if canImport(Glibc)
import Glibc
#endif

/// A real gpsd on a free port with a pty as its receiver, for one test.
public final class GPSDTestBed {
    public let gpsd: PrivateGPSD
    public let terminal: PseudoTerminal

    /// A gpsd with its pty activated (`PrivateGPSD.startReading`: what the tests test comes after the harness
    /// is up).
    public init(options: PrivateGPSD.Options = PrivateGPSD.Options()) throws {
        (gpsd, terminal) = try PrivateGPSD.startReading(
            options: options, { try PseudoTerminal() }, terminal: { $0 }, discard: { $0.close() })
    }

    /// A test bed whose gpsd opens its device read-only (`-b`): for tests that only read what gpsd reports.
    /// `port` restarts a gpsd where an earlier one was.
    public static func readOnly(port: UInt16? = nil) throws -> GPSDTestBed {
        var options = PrivateGPSD.Options()
        options.readOnly = true
        if let port { options.port = port }
        return try GPSDTestBed(options: options)
    }

    public var port: String { String(gpsd.port) }

    public func feed(_ bytes: [UInt8], speed: Double? = nil) -> CaptureFeeder.Outcome {
        CaptureFeeder(speed: speed).feed(RawLogEpochs(bytes), to: terminal) { false }
    }

    /// Feeds as `feed` does, held back while gpsd's clients are behind: more than `clientLag` bytes queued on
    /// this gpsd's connections. gpsd drops, without a word, a report for a client whose socket is
    /// full (a `gpspipe` stopped for 4.5 s lost 1,787 of the Reno drive's 4,473 TPVs fed at full speed, and
    /// stayed connected), so a client of a test sharing two cores with others could miss epochs the feed
    /// sent. Held back, no client falls that far behind, and what two clients print can be compared exactly.
    public func feedWithoutDrops(_ bytes: [UInt8], speed: Double? = nil) -> CaptureFeeder.Outcome {
        Self.feedWithoutDrops(bytes, to: terminal, port: gpsd.port, speed: speed)
    }

    /// `feedWithoutDrops` for a feed on a thread of its own: the terminal and gpsd's port, not the bed.
    public static func feedWithoutDrops(
        _ bytes: [UInt8], to terminal: PseudoTerminal, port: UInt16, speed: Double? = nil
    ) -> CaptureFeeder.Outcome {
        // Asked before each epoch (and every 50 ms while the pacer waits). Reading /proc/net/tcp walks the
        // kernel's whole connection table (4 to 5 ms here, however few connections there are), so the queues
        // are read every `epochsPerCheck` asks: a few epochs' reports more than `clientLag` at most.
        var asks = 0
        return CaptureFeeder(speed: speed).feed(RawLogEpochs(bytes), to: terminal) {
            asks += 1
            guard asks % Self.epochsPerCheck == 0 else { return false }
            let deadline = monotonicSeconds() + Self.clientLagWait
            while LoopbackQueues.bytes(port: port) > Self.clientLag, monotonicSeconds() < deadline {
                sleepSeconds(0.002)
            }
            return false
        }
    }

    /// Bytes a client may have waiting before the feed holds back: a few dozen epochs of reports, far below
    /// what a loopback socket holds before gpsd's writes to it fail (128 KiB and more).
    static let clientLag = 32 * 1024
    static let epochsPerCheck = 8
    /// A client stopped for longer than this is left behind: the comparison then names what it missed.
    static let clientLagWait = 60.0

    /// `gpspipe -w` against this gpsd, its output in a file.
    public func startGpspipe() throws -> (ChildProcess, String) {
        var template = Array("/tmp/lodestar-gpspipe-XXXXXX".utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { $0.baseAddress.map { mkstemp($0) } ?? -1 }
        guard descriptor >= 0 else { throw SystemError("mkstemp", "/tmp/lodestar-gpspipe-XXXXXX") }
        close(descriptor)
        let output = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let gpspipe = findExecutable("gpspipe") else { throw TimedOut(what: "gpspipe on PATH") }
        let process = try ChildProcess(executable: gpspipe, arguments: ["-w", "127.0.0.1:\(port)"], standardOutput: output)
        try waitUntil("gpspipe to watch") { text(output).contains("\"class\":\"WATCH\"") }
        return (process, output)
    }

    public func text(_ path: String) -> String {
        readFile(path).map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    deinit {
        gpsd.stop()
        terminal.close()
    }
}

/// The bytes queued on the IPv4 TCP connections to or from a local port (the test gpsd's clients connect to
/// 127.0.0.1), from /proc/net/tcp: what the sender has not yet had acknowledged and what the receiver has not
/// yet read.
enum LoopbackQueues {
    static func bytes(port: UInt16) -> Int {
        queued(in: readFile("/proc/net/tcp").map { String(decoding: $0, as: UTF8.self) } ?? "", port: port)
    }

    /// Lines: `sl local_address rem_address st tx_queue:rx_queue ...`, addresses `HEXADDRESS:HEXPORT`,
    /// state 01 established.
    static func queued(in table: String, port: UInt16) -> Int {
        var total = 0
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            guard fields.count > 4, fields[3] == "01" else { continue }
            let ports = fields[1...2].compactMap { $0.split(separator: ":").last.flatMap { UInt16($0, radix: 16) } }
            guard ports.contains(port) else { continue }
            let queues = fields[4].split(separator: ":").compactMap { Int($0, radix: 16) }
            total += queues.reduce(0, +)
        }
        return total
    }
}
