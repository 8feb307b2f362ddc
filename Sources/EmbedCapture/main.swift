// Writes the Swift source that carries the demo's capture in the lodestar binary: the file's bytes as base64 in
// a string literal (base64 because Swift normalises a literal's line endings, and NMEA needs its CR LF). The
// build runs it through Plugins/EmbedDemoCapture, so the capture has one copy, the fixture, and the
// generated source is never checked in.
//   embed-capture INPUT OUTPUT
import Capture
import Glibc
import SystemInterface

func fail(_ message: String, exitCode: Int32) -> Never {
    let line = "embed-capture: " + message + "\n"
    try? FileDescriptor(rawValue: 2).writeAll(Array(line.utf8))
    exit(exitCode)
}

let arguments = CommandLine.arguments
guard arguments.count == 3 else { fail("usage: embed-capture INPUT OUTPUT", exitCode: 64) }
let input = arguments[1]
let output = arguments[2]
let bytes: [UInt8]
do {
    bytes = try readWholeFile(input, what: "a capture")
} catch {
    fail("\(error)", exitCode: 66)
}
var encoded: [UInt8] = []
Base64.encode(bytes, into: &encoded)
let name = input.split(separator: "/").last.map(String.init) ?? input
var source = """
    // Generated at build time by Sources/EmbedCapture from \(name); see Plugins/EmbedDemoCapture.

    enum DemoCapture {
        static let name = "\(name)"
        static let byteCount = \(bytes.count)
        static let base64 = \"\"\"

    """
// 120 letters a line: the compiler reads a long literal line no faster, and the text stays viewable.
var start = 0
while start < encoded.count {
    let end = min(start + 120, encoded.count)
    source += String(decoding: encoded[start..<end], as: UTF8.self) + "\n"
    start = end
}
source += "\"\"\"\n}\n"
do throws(Errno) {
    let file = try FileDescriptor.open(output, .writeOnly, options: [.create, .truncate])
    try file.writeAll(Array(source.utf8))
    try file.close()
} catch {
    fail("cannot write \(output): \(error)", exitCode: 73)
}
