import JSON
import GPSModel

/// One command for gpsd's client socket (`?DEVICE=…`, `?POLL;`, …) and how to recognise gpsd's answer to it.
public struct GPSDCommand: Sendable, Equatable, CustomStringConvertible {
    /// The command as written to the socket (libgps adds the line end).
    public let text: String
    let answer: Answer

    /// The reports that answer a command, besides the ERROR and ACK (gpsd 3.23+) that answer any.
    enum Answer: Sendable, Equatable {
        /// The DEVICE report of `path`, or of any device when nil.
        case device(path: String?)
        /// A report of this class (`POLL` for `?POLL;`, `VERSION` for `?VERSION;`).
        case reportClass(String)
    }

    /// A command answered by a report of class `answerClass` (or an ERROR).
    public init(_ text: String, answeredBy answerClass: String) {
        self.text = text
        answer = .reportClass(answerClass)
    }

    init(text: String, answer: Answer) {
        self.text = text
        self.answer = answer
    }

    public var description: String { text }

    /// Most bytes one `?DEVICE` carries: gpsd's `hexdata` holds 512 characters with its NUL.
    public static let maximumDeviceBytes = 255

    /// `?DEVICE={"path":…,"hexdata":…}`: gpsd writes `bytes` to the device as they are (no framing, no
    /// checksum added), so they must be whole UBX or NMEA frames. `path` may be nil when gpsd has exactly one
    /// device. gpsd answers with the device's DEVICE report (3.22) or ACK (3.23+) when it took the bytes, and
    /// with an ERROR before it has identified the receiver ("Type of … is unknown."). A gpsd started with
    /// `-b` drops the bytes and still answers DEVICE: it cannot be told from a write that happened.
    ///
    /// Nil when `bytes` is empty (gpsd would then only report the device) or longer than
    /// `maximumDeviceBytes`.
    public static func writeToDevice(path: String?, bytes: [UInt8]) -> GPSDCommand? {
        guard !bytes.isEmpty, bytes.count <= maximumDeviceBytes else { return nil }
        var members: [String] = []
        if let path { members.append(#""path":"# + JSONWriter.quoted(path)) }
        members.append(#""hexdata":""# + hexadecimal(bytes) + "\"")
        return GPSDCommand(text: "?DEVICE={" + members.joined(separator: ",") + "}", answer: .device(path: path))
    }

    /// `?WATCH={"enable":false}`: stops this client's watch, so gpsd closes a device 60 s after its last
    /// watcher left (release through gpsd). Answered by WATCH.
    public static let stopWatching = GPSDCommand(#"?WATCH={"enable":false};"#, answeredBy: "WATCH")

    /// The watch `GPSDSession.watch(device:)` starts, again after `stopWatching`. Answered by WATCH (gpsd
    /// also sends DEVICES and reopens the device, probing it).
    public static func watch(device: String?) -> GPSDCommand {
        var command = #"?WATCH={"enable":true,"json":true"#
        if let device { command += #","device":"# + JSONWriter.quoted(device) }
        return GPSDCommand(command + "};", answeredBy: "WATCH")
    }

    /// Whether `report` is gpsd's answer to this command.
    func isAnswered(by report: Report) -> Bool {
        switch (report, answer) {
        case (.error, _), (.other("ACK"), _):
            return true
        case (.device(let device), .device(let path)):
            return path == nil || device.path == path
        case (_, .reportClass(let name)):
            return report.className == name
        default:
            return false
        }
    }
}

/// `bytes` as lower-case hexadecimal digits, two per byte: what gpsd's `hexdata` expects.
public func hexadecimal<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
    let digits = Array("0123456789abcdef".utf8)
    var text: [UInt8] = []
    text.reserveCapacity(bytes.underestimatedCount * 2)
    for byte in bytes {
        text.append(digits[Int(byte >> 4)])
        text.append(digits[Int(byte & 0x0F)])
    }
    return String(decoding: text, as: UTF8.self)
}
