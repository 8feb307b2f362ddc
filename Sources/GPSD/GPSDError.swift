import CGPS

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
        }
    }
}

/// The C library's text for an errno value.
func systemMessage(_ code: Int32) -> String {
    guard let text = strerror(code) else { return "errno \(code)" }
    return String(cString: text)
}
