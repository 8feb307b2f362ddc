import SystemInterface
import Capture

#if canImport(Glibc)
import Glibc
#endif

// What several test targets share (like swift-nio's NIOTestUtils): the repository's captures, waiting for a
// condition, a private gpsd with a pty as its receiver. Foundation-free, as the rest of Testbed, because
// `lodestar demo` links this module.

/// The repository's captures, found from this file's path so a fresh clone needs no set-up.
public enum Fixtures {
    /// Tests/Fixtures/captures of the checkout this file was compiled from.
    public static let captures: String = {
        var components = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        components.removeLast(3)  // TestSupport.swift, Testbed, Sources
        return components.joined(separator: "/") + "/Tests/Fixtures/captures"
    }()

    /// The path of capture `name`.
    public static func path(_ name: String) -> String { captures + "/" + name }

    /// Every capture (NMEA and UBX logs), sorted.
    public static var captureNames: [String] {
        directoryEntries(captures).filter { $0.hasSuffix(".nmea") || $0.hasSuffix(".ubx") }.sorted()
    }

    public static func bytes(_ name: String) throws -> [UInt8] {
        try readWholeFile(path(name))
    }
}

/// A capture of the repository (a raw NMEA or UBX log) imported with gpsd's offline decoder, as `lodestar replay`
/// does, and read back.
public func importedCapture(_ name: String) throws -> CaptureContents {
    try CaptureReader.read(try RawLogImport.capture(path: Fixtures.path(name), raw: try Fixtures.bytes(name)))
}

public struct TimedOut: Error, CustomStringConvertible {
    public var what: String
    public init(what: String) { self.what = what }
    public var description: String { "timed out waiting for \(what)" }
}

/// Polls `condition` until it holds or `timeout` seconds pass.
public func waitUntil(_ what: String, timeout: Double = 20, _ condition: () -> Bool) throws {
    let deadline = monotonicSeconds() + timeout
    while !condition() {
        if monotonicSeconds() > deadline { throw TimedOut(what: what) }
        usleep(10_000)
    }
}

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
