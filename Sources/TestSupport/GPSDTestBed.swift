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
