import SystemInterface
import CGPS
import GPSModel
import JSON

#if canImport(Glibc)
import Glibc
#endif

/// One connection to gpsd through libgps. Owns the heap-allocated `gps_data_t` and the line buffer.
///
/// Not thread-safe: libgps keeps per-session buffers, so exactly one thread reads a session.
public final class GPSDSession {
    public static let defaultHost = "localhost"
    public static let defaultPort = "2947"
    /// How long a new connection may take to bring gpsd's VERSION banner. gpsd writes it as soon as it
    /// accepts, so seconds of silence mean the port belongs to something else (or to a gpsd too stuck to use).
    public static let bannerTimeout = 3.0

    public let host: String
    public let port: String
    /// When false, SKY reports carry DOPs and satellite counts but no per-satellite list and no time: they
    /// are read from the line without libgps, whose SKY decoding parses every satellite first (most of the
    /// bytes gpsd sends). The counts are gpsd's own `uSat`/`nSat`.
    public var satelliteDetail: Bool {
        get { processor.satelliteDetail }
        set { processor.satelliteDetail = newValue }
    }
    /// The connection's own `gps_data_t` (what `gps_open` filled in); reports are decoded by `processor`.
    private let data: UnsafeMutablePointer<gps_data_t>
    /// Received bytes: complete lines from `lineStart`, the unfinished one up to `bufferEnd`.
    private let buffer: UnsafeMutablePointer<CChar>
    private let bufferCapacity = 4 * Int(CGPS_MESSAGE_CAPACITY)
    private var lineStart = 0
    private var scanStart = 0
    private var bufferEnd = 0
    private var isOpen = true
    /// When the bytes in the buffer arrived (monotonic seconds).
    private var receivedAt = 0.0
    /// Until gpsd's VERSION banner has come: when the connection opened and the latest the banner may come
    /// (monotonic seconds). Nothing is decoded or passed on before it.
    private var awaitingBanner: (opened: Double, deadline: Double)?
    /// The peer closed the connection while the banner was awaited.
    private var peerClosed = false

    /// Connects to gpsd. Throws `GPSDError.connectionFailed` with libgps's own message.
    /// `epochQuiet`: how long gpsd's silence on a device ends its epoch when epochs are collapsed; shorter
    /// only for a receiver played faster than real time.
    /// `bannerTimeout`: see `GPSDSession.bannerTimeout`; reads throw `notGPSD` when the peer sends anything
    /// else first, closes, or sends nothing for that long.
    public init(
        host: String = GPSDSession.defaultHost, port: String = GPSDSession.defaultPort,
        epochQuiet: Double = EpochCollapser<Int, Int, Int>.defaultQuietInterval,
        bannerTimeout: Double = GPSDSession.bannerTimeout
    ) throws(GPSDError) {
        self.host = host
        self.port = port
        data = .allocate(capacity: 1)
        data.initialize(to: gps_data_t())
        processor = ReportLineProcessor(epochQuiet: epochQuiet)
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
        let opened = monotonicSeconds()
        awaitingBanner = (opened, opened + bannerTimeout)
        // gpsd drops a report for a client whose socket would block (gpsd.c throttled_write: EAGAIN → the
        // report is lost). A larger receive buffer rides out a busy moment (a loaded Pi, a burst after a
        // reconnect); the kernel caps it at net.core.rmem_max.
        var receiveBuffer: Int32 = 1 << 20
        _ = setsockopt(Int32(cgps_fd(data)), SOL_SOCKET, SO_RCVBUF, &receiveBuffer, socklen_t(MemoryLayout<Int32>.size))
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
    public var collapsesEpochs: Bool {
        get { processor.collapsesEpochs }
        set { processor.collapsesEpochs = newValue }
    }
    /// Called with every complete line gpsd sends, before it is decoded (the recorder keeps them verbatim).
    /// The buffer is valid only during the call and is NUL-terminated after its last byte.
    public var lineObserver: ((UnsafeBufferPointer<CChar>) -> Void)?
    private let processor: ReportLineProcessor

    /// Waits up to `timeoutMicroseconds` for one report. Throws `connectionLost` when gpsd closes the
    /// connection or the socket fails.
    ///
    /// Lines are read from the socket here and decoded with `gps_unpack`, as a replayed line is, rather than
    /// through `gps_read`: libgps's reader copies each line out and moves its whole buffer down after every
    /// line, which cost more CPU than the rest of the live path on a long capture (bench/).
    /// With `wakeDescriptor` (and `alsoWakeOn`), also returns `.timeout` as soon as that descriptor is
    /// readable (the caller has something to write, or other work).
    public func read(
        timeoutMicroseconds: Int32, wakeDescriptor: Int32 = -1, alsoWakeOn second: Int32 = -1
    ) throws(GPSDError) -> ReadResult {
        guard isOpen else { throw .connectionLost(errno: 0) }
        let deadline = monotonicSeconds() + Double(max(0, timeoutMicroseconds)) / 1e6
        while true {
            if let report = processor.next() { return .report(report) }
            let bannerSeen = try checkBanner()
            // Lines already received come first, stamped with when they arrived: a reader that was busy
            // (or descheduled) must not see quiet between lines that came together and split their epoch.
            if bannerSeen, let line = takeLine() {
                let text = UnsafeBufferPointer(start: buffer + line.start, count: line.count)
                lineObserver?(text)
                processor.process(text, now: receivedAt)
                continue
            }
            if processor.hasPending {
                processor.flushQuiet(now: monotonicSeconds())
                if let report = processor.next() { return .report(report) }
            }
            let now = monotonicSeconds()
            let remaining = deadline - now
            if remaining <= 0 { return .timeout }
            // While an epoch is held, wake exactly when it is due to be passed on (one wake-up, not a
            // poll: a Pi Zero at 1 Hz would otherwise wake several times per epoch for nothing).
            var wait = processor.nextQuietDeadline.map { min(remaining, max(0, $0 - now)) } ?? remaining
            if let awaitingBanner { wait = min(wait, max(0, awaitingBanner.deadline - now)) }
            if try !fill(
                timeoutMilliseconds: Int32((wait * 1000).rounded(.up)), wakeDescriptor: wakeDescriptor, second: second),
                !processor.hasPending
            {
                return .timeout
            }
        }
    }

    /// Waits (in slices of at most 0.2 s, so `shouldStop` is looked at) until gpsd's VERSION banner has come,
    /// without taking it: the reads after this still see it. Throws `notGPSD` for a peer that is not gpsd;
    /// false when `shouldStop` said so first.
    public func awaitBanner(shouldStop: () -> Bool) throws(GPSDError) -> Bool {
        guard isOpen else { throw .connectionLost(errno: 0) }
        while try !checkBanner() {
            if shouldStop() { return false }
            let left = (awaitingBanner?.deadline ?? 0) - monotonicSeconds()
            _ = try fill(timeoutMilliseconds: Int32((min(max(left, 0), 0.2) * 1000).rounded(.up)))
        }
        return true
    }

    /// True once gpsd's VERSION banner has come (it stays in the buffer for the reads); throws `notGPSD` when
    /// what came first is something else, the peer closed before it, or it is overdue.
    private func checkBanner() throws(GPSDError) -> Bool {
        guard let awaitingBanner else { return true }
        let count = bufferEnd - lineStart
        let start = buffer + lineStart
        func notGPSD(closed: Bool = false) -> GPSDError {
            .notGPSD(
                host: host, port: port, answered: Array(UnsafeRawBufferPointer(start: start, count: min(count, 256))),
                closed: closed,
                waited: min(monotonicSeconds(), awaitingBanner.deadline) - awaitingBanner.opened)
        }
        if count > 0 {
            // Every line gpsd sends is a JSON object; anything else at the start is another protocol's greeting.
            if start[0] != CChar(bitPattern: UInt8(ascii: "{")) { throw notGPSD() }
            if let newline = memchr(start, 0x0A, count) {
                let length = start.distance(to: newline.assumingMemoryBound(to: CChar.self))
                guard JSONPeek.hasClass("VERSION", in: UnsafeBufferPointer(start: start, count: length)) else {
                    throw notGPSD()
                }
                self.awaitingBanner = nil
                return true
            }
            // gpsd's banner is one short line (about 100 bytes).
            if count > 1024 { throw notGPSD() }
        }
        if peerClosed { throw notGPSD(closed: true) }
        if monotonicSeconds() >= awaitingBanner.deadline { throw notGPSD() }
        return false
    }

    /// The fixes still held for their epoch to end (the connection is ending).
    public func pendingFixes() -> [Fix] {
        processor.flushAll()
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
    private func fill(timeoutMilliseconds: Int32, wakeDescriptor: Int32 = -1, second: Int32 = -1) throws(GPSDError) -> Bool {
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
        // A tuple on the stack: an array here was a heap allocation for every read.
        var pollers = (
            pollfd(fd: Int32(cgps_fd(data)), events: Int16(POLLIN), revents: 0),
            pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: second, events: Int16(POLLIN), revents: 0)
        )
        // poll ignores the entries whose descriptor is negative.
        let ready = withUnsafeMutableBytes(of: &pollers) { raw in
            poll(raw.baseAddress?.assumingMemoryBound(to: pollfd.self), second >= 0 ? 3 : wakeDescriptor >= 0 ? 2 : 1, timeoutMilliseconds)
        }
        if ready < 0 {
            if errno == EINTR { return false }
            throw .connectionLost(errno: errno)
        }
        if ready == 0 || pollers.0.revents == 0 { return false }
        let count = recv(Int32(cgps_fd(data)), buffer + bufferEnd, bufferCapacity - bufferEnd, 0)
        if count == 0 || (count < 0 && errno != EAGAIN && errno != EINTR), awaitingBanner != nil {
            // Closed before its banner: `checkBanner` says what the peer sent, if anything.
            peerClosed = true
            _ = try checkBanner()
        }
        if count == 0 { throw .connectionLost(errno: 0) }
        if count < 0 {
            if errno == EAGAIN || errno == EINTR { return false }
            throw .connectionLost(errno: errno)
        }
        bufferEnd += count
        receivedAt = monotonicSeconds()
        return true
    }

    /// Asks gpsd for the receiver's own bytes, unchanged (`"raw":2`), instead of JSON; read them with
    /// `readBytes`. gpsd still answers the command itself with JSON lines first (`RawStreamFilter` drops them).
    public func watchRawBytes(device: String? = nil) throws(GPSDError) {
        var command = #"?WATCH={"enable":true,"json":false,"raw":2"#
        if let device {
            command += #","device":"# + JSONWriter.quoted(device)
        }
        try send(command + "};")
    }

    /// Whatever bytes arrive within the timeout (empty on timeout), for a raw watch. Throws
    /// `connectionLost` when gpsd closes the connection.
    public func readBytes(timeoutMicroseconds: Int32) throws(GPSDError) -> [UInt8] {
        guard isOpen else { throw .connectionLost(errno: 0) }
        if awaitingBanner != nil {
            let deadline = monotonicSeconds() + Double(max(0, timeoutMicroseconds)) / 1e6
            while try !checkBanner() {
                // This read's time is up, or the banner's (then the next check throws).
                let left = min(deadline, awaitingBanner?.deadline ?? deadline) - monotonicSeconds()
                if left <= 0 { return [] }
                _ = try fill(timeoutMilliseconds: Int32((max(left, 0) * 1000).rounded(.up)))
            }
        }
        if bufferEnd > lineStart {
            // Bytes that arrived before the switch to raw reading.
            let pending = UnsafeRawBufferPointer(start: buffer + lineStart, count: bufferEnd - lineStart)
            let bytes = Array(pending)
            lineStart = 0
            scanStart = 0
            bufferEnd = 0
            return bytes
        }
        lineStart = 0
        scanStart = 0
        bufferEnd = 0
        guard try fill(timeoutMilliseconds: timeoutMicroseconds / 1000) else { return [] }
        let bytes = Array(UnsafeRawBufferPointer(start: buffer, count: bufferEnd))
        bufferEnd = 0
        return bytes
    }
}
