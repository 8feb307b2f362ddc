import Capture
import SystemInterface

// What several test targets share (like swift-nio's NIOTestUtils): the repository's captures, waiting for a
// condition, a private gpsd with a pty as its receiver, the servers the uploaders are tested against. Only test
// targets depend on this module: `Fixtures` finds the captures from this file's path, which would name the build
// machine's checkout in any binary that linked it.

/// The repository's captures, found from this file's path so a fresh clone needs no set-up.
public enum Fixtures {
    /// Tests/Fixtures/captures of the checkout this file was compiled from.
    public static let captures: String = {
        var components = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        components.removeLast(3)  // Fixtures.swift, TestSupport, Sources
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
