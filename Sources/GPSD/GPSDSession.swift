import CGPS
import GPSModel

#if canImport(Glibc)
import Glibc
#endif

/// One connection to gpsd through libgps. Owns the heap-allocated `gps_data_t` and the line buffer.
///
/// Not thread-safe: libgps keeps per-session buffers, so exactly one thread reads a session.
public final class GPSDSession {
    public static let defaultHost = "localhost"
    public static let defaultPort = "2947"

    public let host: String
    public let port: String
    /// When false, SKY reports carry DOPs and satellite counts but no per-satellite list and no time: they
    /// are read from the line without libgps, whose SKY decoding parses every satellite first (most of the
    /// bytes gpsd sends). The counts are gpsd's own `uSat`/`nSat`.
    public var satelliteDetail = true
    private let data: UnsafeMutablePointer<gps_data_t>
    /// Received bytes: complete lines from `lineStart`, the unfinished one up to `bufferEnd`.
    private let buffer: UnsafeMutablePointer<CChar>
    private let bufferCapacity = 4 * Int(CGPS_MESSAGE_CAPACITY)
    private var lineStart = 0
    private var scanStart = 0
    private var bufferEnd = 0
    private var isOpen = true
    private var lastLineStart = 0
    private var lastLineLength = 0

    /// Connects to gpsd. Throws `GPSDError.connectionFailed` with libgps's own message.
    public init(host: String = GPSDSession.defaultHost, port: String = GPSDSession.defaultPort) throws(GPSDError) {
        self.host = host
        self.port = port
        data = .allocate(capacity: 1)
        data.initialize(to: gps_data_t())
        // Left uninitialised (CChar is trivial): only bytes recv() has written are ever read, and not
        // touching 64 KiB up front keeps them out of a Pi's resident memory until gpsd sends that much.
        buffer = .allocate(capacity: 4 * Int(CGPS_MESSAGE_CAPACITY) + 1)
        var code: Int32 = 0
        if cgps_open(host, port, data, &code) != 0 {
            let text = String(cString: gps_errstr(code))
            // Every stored property is set, so deinit runs and frees the buffers; there is nothing to close.
            isOpen = false
            throw .connectionFailed(host: host, port: port, code: code, message: text)
        }
    }

    /// A session with no connection, for decoding tests.
    private init(unconnected: Void) throws(GPSDError) {
        host = ""
        port = ""
        data = .allocate(capacity: 1)
        data.initialize(to: gps_data_t())
        buffer = .allocate(capacity: 1)
        buffer.initialize(to: 0)
        isOpen = false
    }

    deinit {
        close()
        data.deinitialize(count: 1)
        data.deallocate()
        buffer.deallocate()
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

    /// When true, TPVs come out one per epoch and device (see `EpochCollapser`): the epoch's raw lines are
    /// held and only the one passed on is decoded. A closed device's pending epoch comes out before its
    /// DEVICE report; `pendingFixes()` gives what is still held when the connection ends.
    public var collapsesEpochs = false
    private var collapser = EpochCollapser<TextKey, TextKey, [CChar]>()
    private var outbox: [Report] = []
    private var outboxStart = 0

    /// Waits up to `timeoutMicroseconds` for one report. Throws `connectionLost` when gpsd closes the
    /// connection or the socket fails.
    ///
    /// Lines are read from the socket here and decoded with `gps_unpack`, as a replayed line is, rather than
    /// through `gps_read`: libgps's reader copies each line out and moves its whole buffer down after every
    /// line, which cost more CPU than the rest of the live path on a long capture (bench/).
    public func read(timeoutMicroseconds: Int32) throws(GPSDError) -> ReadResult {
        guard isOpen else { throw .connectionLost(errno: 0) }
        let deadline = monotonicSeconds() + Double(max(0, timeoutMicroseconds)) / 1e6
        while true {
            if let report = nextQueued() { return .report(report) }
            if collapser.hasPending {
                for payload in collapser.flushQuiet(now: monotonicSeconds()) { enqueue(decodeHeld(payload)) }
                if let report = nextQueued() { return .report(report) }
            }
            if let line = takeLine() {
                lastLineStart = line.start
                lastLineLength = line.count
                process(UnsafeBufferPointer(start: buffer + line.start, count: line.count))
                continue
            }
            let now = monotonicSeconds()
            let remaining = deadline - now
            if remaining <= 0 { return .timeout }
            // While an epoch is held, wake exactly when it is due to be passed on (one wake-up, not a
            // poll: a Pi Zero at 1 Hz would otherwise wake several times per epoch for nothing).
            let wait = collapser.nextQuietDeadline.map { min(remaining, max(0, $0 - now)) } ?? remaining
            if try !fill(timeoutMilliseconds: Int32((wait * 1000).rounded(.up))), !collapser.hasPending {
                return .timeout
            }
        }
    }

    /// The fixes still held for their epoch to end (the connection is ending).
    public func pendingFixes() -> [Fix] {
        collapser.flush().compactMap { payload in
            guard case .fix(let fix)? = decodeHeld(payload) else { return nil }
            return fix
        }
    }

    private func nextQueued() -> Report? {
        guard outboxStart < outbox.count else { return nil }
        let report = outbox[outboxStart]
        outboxStart += 1
        if outboxStart == outbox.count {
            outbox.removeAll(keepingCapacity: true)
            outboxStart = 0
        }
        return report
    }

    private func enqueue(_ report: Report?) {
        if let report { outbox.append(report) }
    }

    /// One complete line: decoded, or held for its epoch.
    private func process(_ line: UnsafeBufferPointer<CChar>) {
        guard collapsesEpochs, JSONPeek.hasClass("TPV", in: line) else {
            let report = decode(line)
            if collapsesEpochs, case .device(let device)? = report, !device.isActive,
                let path = JSONPeek.textKey(of: "path", in: line)
            {
                for payload in collapser.flush(device: path) { enqueue(decodeHeld(payload)) }
            }
            enqueue(report)
            return
        }
        // Read the epoch's identity from the text; decode only the TPV that is passed on.
        let time = JSONPeek.textKey(of: "time", in: line)
        let hasPosition = (JSONPeek.integerValue(of: "mode", in: line) ?? 0) >= 2
            && JSONPeek.hasMember("lat", in: line) && JSONPeek.hasMember("lon", in: line)
        // The line and the NUL that ends it.
        let held = Array(UnsafeBufferPointer(start: line.baseAddress, count: line.count + 1))
        let finished = collapser.add(
            held, device: JSONPeek.textKey(of: "device", in: line) ?? TextKey(UnsafeBufferPointer(start: nil, count: 0)[...]),
            time: time, hasPosition: hasPosition,
            now: monotonicSeconds())
        for payload in finished { enqueue(decodeHeld(payload)) }
    }

    /// Decodes a held line (NUL-terminated copy).
    private func decodeHeld(_ payload: [CChar]) -> Report? {
        var copy = payload
        return copy.withUnsafeMutableBufferPointer { bytes in
            decode(UnsafeBufferPointer(rebasing: bytes.dropLast()))
        }
    }

    /// Decodes `line` as a live session would, without a connection (for tests of the decoding paths).
    static func decodeForTest(_ lines: [String], satelliteDetail: Bool, collapsesEpochs: Bool = false) -> [Report] {
        guard let session = try? GPSDSession(unconnected: ()) else { return [] }
        session.satelliteDetail = satelliteDetail
        session.collapsesEpochs = collapsesEpochs
        var reports: [Report] = []
        for line in lines {
            var bytes = Array(line.utf8CString)
            bytes.withUnsafeMutableBufferPointer { buffer in
                session.process(UnsafeBufferPointer(rebasing: buffer.dropLast()))
            }
            while let report = session.nextQueued() { reports.append(report) }
        }
        reports += session.pendingFixes().map { .fix($0) }
        return reports
    }

    private func decode(_ line: UnsafeBufferPointer<CChar>) -> Report? {
        // Zero `set` first, or a TPV's flags leak into a following SKY/DEVICE (gpsd.md §1.3).
        data.pointee.set = 0
        guard let base = line.baseAddress else { return nil }
        if !satelliteDetail, JSONPeek.hasClass("SKY", in: line) {
            // Counts only: the DOPs and gpsd's own satellite counts, read straight from the line. libgps
            // would parse every satellite of the list first, the largest part of what gpsd sends.
            return .sky(
                SkyView(
                    device: JSONPeek.stringValue(of: "device", in: line),
                    hdop: JSONPeek.doubleValue(of: "hdop", in: line), vdop: JSONPeek.doubleValue(of: "vdop", in: line),
                    pdop: JSONPeek.doubleValue(of: "pdop", in: line), satellites: [],
                    satellitesUsed: JSONPeek.integerValue(of: "uSat", in: line) ?? 0,
                    satellitesVisible: JSONPeek.integerValue(of: "nSat", in: line) ?? 0))
        }
        _ = cgps_unpack(UnsafeMutablePointer(mutating: base), data)
        return ReportDecoder.report(from: data, line: line)
    }

    /// The next complete line in the buffer, NUL-terminated in place (its `\r\n` overwritten).
    private func takeLine() -> (start: Int, count: Int)? {
        guard let newline = memchr(buffer + scanStart, 0x0A, bufferEnd - scanStart) else {
            scanStart = bufferEnd
            return nil
        }
        let end = buffer.distance(to: newline.assumingMemoryBound(to: CChar.self))
        let start = lineStart
        var count = end - start
        if count > 0 && buffer[start + count - 1] == 0x0D { count -= 1 }
        buffer[start + count] = 0
        lineStart = end + 1
        scanStart = lineStart
        return (start, count)
    }

    /// Reads what the socket has (waiting up to the timeout); false when nothing came.
    private func fill(timeoutMilliseconds: Int32) throws(GPSDError) -> Bool {
        if lineStart > 0 {
            // Keep the unfinished line; its bytes move to the front once per read, not once per line.
            let pending = bufferEnd - lineStart
            if pending > 0 { memmove(buffer, buffer + lineStart, pending) }
            bufferEnd = pending
            scanStart -= lineStart
            lineStart = 0
        }
        if bufferEnd == bufferCapacity {
            // A line longer than any gpsd sends (10 KiB): drop it rather than stall.
            bufferEnd = 0
            scanStart = 0
        }
        var poller = pollfd(fd: Int32(cgps_fd(data)), events: Int16(POLLIN), revents: 0)
        let ready = poll(&poller, 1, timeoutMilliseconds)
        if ready < 0 {
            if errno == EINTR { return false }
            throw .connectionLost(errno: errno)
        }
        if ready == 0 { return false }
        let count = recv(Int32(cgps_fd(data)), buffer + bufferEnd, bufferCapacity - bufferEnd, 0)
        if count == 0 { throw .connectionLost(errno: 0) }
        if count < 0 {
            if errno == EAGAIN || errno == EINTR { return false }
            throw .connectionLost(errno: errno)
        }
        bufferEnd += count
        return true
    }

    /// The raw JSON text of the line last read (as gpsd sent it, without the line end). Valid until the
    /// next read.
    public var lastLine: String {
        String(decoding: UnsafeRawBufferPointer(start: buffer + lastLineStart, count: lastLineLength), as: UTF8.self)
    }
}
