import GPSModel
import SystemInterface

#if canImport(Glibc)
import Glibc
#endif

/// The locations socket: a Unix stream socket at `path` where any local program reads the delivered locations
/// as jsonl, from when it is accepted: in `tick`. The service sleeps in poll(2) on `pollDescriptors` (the
/// listening socket) too and ticks this as soon as a client connects; an accept before each write was one
/// more system call per fix, nearly always EAGAIN. Nothing here blocks: each client's unsent bytes wait in
/// its own buffer; a client whose buffer passes `clientBufferLimit` (it stopped reading) is dropped with a
/// notice. A client that goes away is dropped quietly.
public final class LocationSocketServer: TrackOutput {
    public let path: String
    public static let clientBufferLimit = 256 * 1024
    public var name: String { "socket \(path)" }
    /// What went wrong without stopping the socket (its group could not be set): for the caller to log.
    public private(set) var warnings: [String] = []
    /// The descriptors to poll for readability: a client is waiting to be accepted. Not while accepting fails
    /// (EMFILE): the listener would stay readable and spin the service's loop, so the once-a-second tick retries.
    public var pollDescriptors: [Int32] { listener >= 0 && !acceptFailing ? [listener] : [] }
    public var clientCount: Int { clients.count }

    private var listener: Int32 = -1
    /// The socket file this server made, to remove only that one at close.
    private var socketInode: ino_t = 0
    private var clients: [Client] = []
    private var nextClientNumber = 1
    private var acceptFailing = false
    private var notices: [String] = []

    private struct Client {
        var descriptor: Int32
        var number: Int
        var pending: [UInt8] = []
    }

    /// Binds and listens at `path` (parents made with 0755), with the file's permission bits `mode` and group
    /// `group`. A socket file left by an earlier run is replaced; any other file there is an error, and so is a
    /// socket another process still listens on.
    public init(path: String, settings: DaemonConfiguration.SocketOutput) throws(OutputFailure) {
        self.path = path
        do { try makeDirectories(parentDirectory(of: path)) } catch {
            throw OutputFailure(path: path, reason: error.description)
        }
        try removeStaleSocket()
        let descriptor: Int32
        do { descriptor = try unixStreamSocket() } catch { throw OutputFailure(path: path, reason: error.description) }
        listener = descriptor
        let bound: Int32
        do { bound = try withUnixSocketAddress(path) { bind(descriptor, $0, $1) } } catch {
            closeListener()
            throw OutputFailure(path: path, reason: error.description)
        }
        guard bound == 0 else {
            let failure = failure("bind", errno)
            closeListener()
            throw failure
        }
        var status = stat()
        if lstat(path, &status) == 0 { socketInode = status.st_ino }
        guard chmod(path, mode_t(settings.mode)) == 0 else {
            let failure = failure("chmod", errno)
            close()
            throw failure
        }
        if let group = settings.group { setGroup(group) }
        guard listen(descriptor, 16) == 0 else {
            let failure = failure("listen", errno)
            close()
            throw failure
        }
    }

    deinit { close() }

    /// Drops and clears what happened since the last call (a slow client dropped, the group not set), for the
    /// log.
    public func takeNotices() -> [String] {
        defer { notices.removeAll() }
        return notices
    }

    public func write(_ record: TrackRecord, now: UTCTime) throws(OutputFailure) {
        guard case .location(let location) = record else { return }
        guard !clients.isEmpty else { return }
        let line = JSONLine.locationBytes(location)
        for index in clients.indices { clients[index].pending.append(contentsOf: line) }
        flushAll()
    }

    public func tick(now: UTCTime) throws(OutputFailure) {
        acceptWaiting()
        discardClientInput()
        flushAll()
    }

    /// Closes every client and the socket, and removes the socket file (if it is still this server's).
    public func close() {
        // What was delivered goes out before the end: each client gets up to 0.2 s to take what it still has
        // pending, so a slow reader costs the stop no more than that.
        for client in clients where !client.pending.isEmpty {
            _ = fcntl(client.descriptor, F_SETFL, fcntl(client.descriptor, F_GETFL) & ~O_NONBLOCK)
            var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
            _ = setsockopt(client.descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var offset = 0
            while offset < client.pending.count {
                let sent = client.pending.withUnsafeBytes { buffer in
                    send(client.descriptor, buffer.baseAddress.map { $0 + offset }, buffer.count - offset, Int32(MSG_NOSIGNAL))
                }
                guard sent > 0 else { break }
                offset += sent
            }
        }
        for client in clients { _ = Glibc.close(client.descriptor) }
        clients.removeAll()
        guard listener >= 0 else { return }
        closeListener()
        var status = stat()
        if lstat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFSOCK, status.st_ino == socketInode {
            _ = unlink(path)
        }
    }

    // MARK: - Setting up

    private func removeStaleSocket() throws(OutputFailure) {
        var status = stat()
        guard lstat(path, &status) == 0 else { return }
        guard (status.st_mode & S_IFMT) == S_IFSOCK else {
            throw OutputFailure(path: path, reason: "exists and is not a socket; not removing it")
        }
        // A socket someone still accepts on is another running service, not a leftover.
        if let probe = try? unixStreamSocket() {
            defer { _ = Glibc.close(probe) }
            let connected = (try? withUnixSocketAddress(path) { connect(probe, $0, $1) }) ?? -1
            if connected == 0 || errno == EAGAIN || errno == EINPROGRESS {
                throw OutputFailure(path: path, reason: "another process is listening on this socket")
            }
        }
        guard unlink(path) == 0 else { throw failure("unlink", errno) }
    }

    private func setGroup(_ group: String) {
        guard let entry = getgrnam(group) else {
            warn("group \(group) does not exist; the socket keeps the service's group")
            return
        }
        if chown(path, uid_t.max, entry.pointee.gr_gid) != 0 {
            warn("cannot give the socket to group \(group): \(errnoText(errno))")
        }
    }

    /// A warning is also a notice, so the service's log says it (it reads notices after every write).
    private func warn(_ text: String) {
        warnings.append("\(path): \(text)")
        notices.append(text)
    }

    private func closeListener() {
        if listener >= 0 { _ = Glibc.close(listener) }
        listener = -1
    }

    // MARK: - Clients

    private func acceptWaiting() {
        guard listener >= 0 else { return }
        acceptFailing = false
        while true {
            let descriptor = acceptNonBlocking(listener)
            guard descriptor >= 0 else {
                // EAGAIN: nobody waiting. A client gone before accept: the next one may be there. Anything else
                // (EMFILE, ENOBUFS) waits for the next tick.
                if errno == ECONNABORTED { continue }
                acceptFailing = errno != EAGAIN && errno != EWOULDBLOCK
                return
            }
            clients.append(Client(descriptor: descriptor, number: nextClientNumber))
            nextClientNumber += 1
        }
    }

    /// Clients have nothing to say; reading notices the ones that hung up before anything was written.
    private func discardClientInput() {
        var chunk = [UInt8](repeating: 0, count: 512)
        var gone: [Int] = []
        for (index, client) in clients.enumerated() {
            while true {
                let count = chunk.withUnsafeMutableBytes { buffer in
                    retryingOnInterrupt {
                        recv(client.descriptor, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT))
                    }
                }
                if count > 0 { continue }
                if count == 0 || (errno != EAGAIN && errno != EWOULDBLOCK) { gone.append(index) }
                break
            }
        }
        drop(gone)
    }

    private func flushAll() {
        var gone: [Int] = []
        var slow: [Int] = []
        for index in clients.indices {
            switch flush(&clients[index]) {
            case .ok:
                if clients[index].pending.count > Self.clientBufferLimit { slow.append(index) }
            case .gone:
                gone.append(index)
            }
        }
        let limit = Self.clientBufferLimit / 1024
        for index in slow {
            notices.append("client \(clients[index].number) dropped: it stopped reading (\(limit) KiB unsent)")
        }
        drop(gone + slow)
    }

    private enum FlushResult { case ok, gone }

    private func flush(_ client: inout Client) -> FlushResult {
        while !client.pending.isEmpty {
            let sent = client.pending.withUnsafeBytes { buffer in
                retryingOnInterrupt {
                    send(client.descriptor, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
                }
            }
            if sent > 0 {
                client.pending.removeFirst(sent)
                continue
            }
            if sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return .ok }
            // EPIPE, ECONNRESET: the client went away, which is its right.
            return .gone
        }
        return .ok
    }

    private func drop(_ indices: [Int]) {
        for index in Set(indices).sorted(by: >) {
            _ = Glibc.close(clients[index].descriptor)
            clients.remove(at: index)
        }
    }

    private func failure(_ call: String, _ code: Int32) -> OutputFailure {
        OutputFailure(path: path, reason: "\(call): \(errnoText(code))")
    }
}
