import CGPS
import SystemInterface

/// What went wrong talking to gpsd. Each case carries gpsd's or the system's own words.
public enum GPSDError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `gps_open` failed: libgps's code and `gps_errstr` message.
    case connectionFailed(host: String, port: String, code: Int32, message: String)
    /// Sending a command (`?WATCH`, `?DEVICE`) failed.
    case sendFailed(command: String, errno: Int32)
    /// gpsd closed the connection or the socket failed (`errno` 0 is an orderly close).
    case connectionLost(errno: Int32)
    /// A JSON line libgps could not unpack.
    case malformedReport(line: String)
    /// The peer at `host:port` accepted the connection but is not gpsd: gpsd's first line is its VERSION
    /// banner, sent as soon as it accepts (docs/gpsd.md §2). `answered`: the first bytes that came instead
    /// (empty: none); `closed`: the peer closed the connection; otherwise nothing more came within `waited`
    /// seconds.
    case notGPSD(host: String, port: String, answered: [UInt8], closed: Bool, waited: Double)

    public var description: String {
        switch self {
        case .connectionFailed(let host, let port, _, let message):
            return "cannot connect to gpsd at \(host):\(port): \(message)"
        case .sendFailed(let command, let code):
            return "cannot send \(command) to gpsd: \(systemMessage(code))"
        case .connectionLost(let code):
            return code == 0 ? "gpsd closed the connection" : "lost the connection to gpsd: \(systemMessage(code))"
        case .malformedReport(let line):
            let shown = line.count > 120 ? String(line.prefix(120)) + "…" : line
            return "libgps cannot decode the line \(shown)"
        case .notGPSD(let host, let port, let answered, let closed, let waited):
            let what = "\(host):\(port) is not gpsd"
            let seconds = TextEscape.seconds(waited)
            if answered.isEmpty {
                return closed
                    ? "\(what): it closed the connection without sending gpsd's VERSION banner"
                    : "\(what): it accepted the connection but sent nothing within \(seconds) s (gpsd sends its "
                        + "VERSION banner at once)"
            }
            let shown = TextEscape.printable(answered, limit: 80)
            if answered.first != UInt8(ascii: "{") || answered.contains(0x0A) {
                return "\(what): it answered \(shown) where gpsd sends its VERSION banner"
            }
            return closed
                ? "\(what): it sent \(shown) and closed the connection before a complete line"
                : "\(what): it sent \(shown) and no complete line within \(seconds) s"
        }
    }
}

/// Bytes from a peer shown in a message: quoted, printable ASCII as is, the rest escaped.
enum TextEscape {
    /// `"SSH-2.0-OpenSSH_9.2\r\n"`, `"\0\0\0"`; at most `limit` bytes, then `…`.
    static func printable(_ bytes: [UInt8], limit: Int) -> String {
        var text = "\""
        for byte in bytes.prefix(limit) {
            switch byte {
            case 0x00: text += "\\0"
            case 0x09: text += "\\t"
            case 0x0A: text += "\\n"
            case 0x0D: text += "\\r"
            case UInt8(ascii: "\""): text += "\\\""
            case UInt8(ascii: "\\"): text += "\\\\"
            case 0x20..<0x7F: text.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16, uppercase: false)
                text += "\\x" + (hex.count == 1 ? "0" : "") + hex
            }
        }
        text += "\""
        if bytes.count > limit { text += "…" }
        return text
    }

    /// `3`, `0.5`: seconds as a message says them.
    static func seconds(_ value: Double) -> String {
        guard value.isFinite, abs(value) < 1e15 else { return "\(value)" }
        return value == value.rounded() ? String(Int(value)) : String(Double(Int((value * 10).rounded())) / 10)
    }
}

/// The C library's text for an errno value.
func systemMessage(_ code: Int32) -> String { Errno(rawValue: code).description }
