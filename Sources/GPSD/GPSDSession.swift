import CGPS
import GPSModel

#if canImport(Glibc)
import Glibc
#endif

/// One connection to gpsd through libgps. Owns the heap-allocated `gps_data_t` and libgps's line buffer.
///
/// Not thread-safe: libgps keeps per-session buffers, so exactly one thread reads a session.
public final class GPSDSession {
    public static let defaultHost = "localhost"
    public static let defaultPort = "2947"

    public let host: String
    public let port: String
    private let data: UnsafeMutablePointer<gps_data_t>
    private let message: UnsafeMutablePointer<CChar>
    private let messageCapacity = Int(CGPS_MESSAGE_CAPACITY)
    private var isOpen = true
    private var lastLineLength = 0

    /// Connects to gpsd. Throws `GPSDError.connectionFailed` with libgps's own message.
    public init(host: String = GPSDSession.defaultHost, port: String = GPSDSession.defaultPort) throws(GPSDError) {
        self.host = host
        self.port = port
        data = .allocate(capacity: 1)
        data.initialize(to: gps_data_t())
        message = .allocate(capacity: Int(CGPS_MESSAGE_CAPACITY))
        message.initialize(repeating: 0, count: Int(CGPS_MESSAGE_CAPACITY))
        var code: Int32 = 0
        if cgps_open(host, port, data, &code) != 0 {
            let text = String(cString: gps_errstr(code))
            // Every stored property is set, so deinit runs and frees the buffers; there is nothing to close.
            isOpen = false
            throw .connectionFailed(host: host, port: port, code: code, message: text)
        }
    }

    deinit {
        close()
        data.deinitialize(count: 1)
        data.deallocate()
        message.deallocate()
    }

    public func close() {
        guard isOpen else { return }
        isOpen = false
        _ = gps_close(data)
    }

    /// Asks gpsd to stream JSON reports of every device, or of `device` only.
    public func watch(device: String? = nil) throws(GPSDError) {
        var flags = CGPS_WATCH_ENABLE | CGPS_WATCH_JSON
        if device != nil { flags |= CGPS_WATCH_DEVICE }
        errno = 0
        if cgps_stream(data, flags, device) != 0 {
            throw .sendFailed(command: "?WATCH", errno: errno)
        }
    }

    /// Sends a raw gpsd command such as `?DEVICE={…}`.
    public func send(_ command: String) throws(GPSDError) {
        errno = 0
        if cgps_send(data, command) < 0 {
            throw .sendFailed(command: command, errno: errno)
        }
    }

    public enum ReadResult {
        case report(Report)
        /// Nothing complete arrived within the timeout (or a signal interrupted the wait).
        case timeout
    }

    /// Waits up to `timeoutMicroseconds` for one line and decodes it. Throws `connectionLost` when gpsd
    /// closes the connection or the socket fails.
    public func read(timeoutMicroseconds: Int32) throws(GPSDError) -> ReadResult {
        guard isOpen else { throw .connectionLost(errno: 0) }
        errno = 0
        // gps_waiting returns false on timeout and on errors alike; gps_read below tells them apart.
        if !gps_waiting(data, timeoutMicroseconds) {
            let code = errno
            if code == 0 || code == EINTR || code == EAGAIN { return .timeout }
            throw .connectionLost(errno: code)
        }
        // Zero `set` first, or a TPV's flags leak into the following SKY/DEVICE reads (gpsd.md §1.3).
        data.pointee.set = 0
        message[0] = 0
        errno = 0
        let consumed = gps_read(data, message, Int32(messageCapacity))
        if consumed < 0 { throw .connectionLost(errno: errno) }
        if consumed == 0 { return .timeout }
        let length = strnlen(message, messageCapacity)
        lastLineLength = length
        let line = UnsafeBufferPointer(start: message, count: length)
        guard let report = ReportDecoder.report(from: data, line: line) else { return .timeout }
        return .report(report)
    }

    /// The raw JSON text of the line last read (as gpsd sent it, without the newline).
    public var lastLine: String {
        String(decoding: UnsafeRawBufferPointer(start: message, count: lastLineLength), as: UTF8.self)
    }
}
