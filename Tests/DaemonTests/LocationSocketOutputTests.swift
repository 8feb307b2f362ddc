import Daemon
import GPSModel
import SystemInterface
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite struct LocationSocketOutputTests {
    private func settings(group: String? = nil, mode: Int = 0o660) -> DaemonConfiguration.SocketOutput {
        var settings = DaemonConfiguration.SocketOutput()
        settings.group = group
        settings.mode = mode
        return settings
    }

    /// A client's end: a non-blocking connected socket.
    private func connectClient(_ path: String) throws -> Int32 {
        let descriptor = try unixStreamSocket()
        let connected = try withUnixSocketAddress(path) { connect(descriptor, $0, $1) }
        #expect(connected == 0, "connect \(path): \(errnoText(errno))")
        return descriptor
    }


    /// A server on `locations.sock` in a scratch directory, closed after `body`.
    private func withServer(
        _ settings: DaemonConfiguration.SocketOutput, _ body: (_ path: String, LocationSocketServer) throws -> Void
    ) throws {
        try withScratchDirectory { directory in
            let path = directory + "/locations.sock"
            let server = try LocationSocketServer(path: path, settings: settings)
            defer { server.close() }
            try body(path, server)
        }
    }

    private func location(_ second: Int64) -> Location {
        sampleLocation(at: UTCTime(seconds: 1_795_989_600 + second))
    }

    @Test func twoClientsGetTheSameLinesFromWhenTheyConnect() throws {
        try withScratchDirectory { directory in
            let path = directory + "/run/locations.sock"
            let server = try LocationSocketServer(path: path, settings: settings(mode: 0o660))
            var status = stat()
            #expect(lstat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFSOCK)
            #expect(status.st_mode & 0o777 == 0o660)
            #expect(server.pollDescriptors.count == 1)
            let now = UTCTime(seconds: 1_795_989_600)

            let early = try connectClient(path)
            defer { close(early) }
            try server.tick(now: now)
            try server.write(.location(location(0)), now: now)
            let late = try connectClient(path)
            defer { close(late) }
            try server.write(.location(location(0)), now: now)
            #expect(server.clientCount == 1, "accepted at the tick, not before a write")
            try server.tick(now: now)
            #expect(server.clientCount == 2)
            try server.write(.location(location(1)), now: now)
            try server.write(.regime(.off, reason: "stationary", t: 1, at: now), now: now)
            try server.write(.location(location(2)), now: now)

            let later = JSONLine.location(location(1)) + JSONLine.location(location(2))
            #expect(readAvailable(early) == JSONLine.location(location(0)) + JSONLine.location(location(0)) + later)
            #expect(readAvailable(late) == later)
            #expect(server.takeNotices().isEmpty)
            server.close()
            #expect(lstat(path, &status) != 0)
        }
    }

    @Test func aClientThatStopsReadingIsDroppedWithoutBlockingTheOthers() throws {
        try withServer(settings()) { path, server in
            let stuck = try connectClient(path)
            defer { close(stuck) }
            let reader = try connectClient(path)
            defer { close(reader) }
            let now = UTCTime(seconds: 1_795_989_600)
            try server.tick(now: now)
            #expect(server.clientCount == 2)
            // Far more than the client's buffer and the kernel's socket buffers together.
            let line = JSONLine.location(location(0))
            let count = 4 * (LocationSocketServer.clientBufferLimit + 1_000_000) / line.utf8.count
            var received = 0
            for index in 0..<count {
                try server.write(.location(location(0)), now: now)
                if index % 50 == 0 { received += readAvailable(reader).utf8.count }
            }
            received += readAvailable(reader).utf8.count
            #expect(server.clientCount == 1)
            let notices = server.takeNotices()
            #expect(notices.count == 1)
            #expect(notices.first?.contains("stopped reading") == true)
            #expect(received == count * line.utf8.count)
        }
    }

    @Test func aClientHangingUpIsDroppedQuietly() throws {
        try withServer(settings()) { path, server in
            let client = try connectClient(path)
            let now = UTCTime(seconds: 1_795_989_600)
            try server.tick(now: now)
            #expect(server.clientCount == 1)
            close(client)
            try server.write(.location(location(0)), now: now)
            try server.write(.location(location(1)), now: now)
            try server.tick(now: now)
            #expect(server.clientCount == 0)
            #expect(server.takeNotices().isEmpty)
        }
    }

    @Test func aStaleSocketIsReplacedAndAnyOtherFileIsLeftAlone() throws {
        try withScratchDirectory { directory in
            let path = directory + "/locations.sock"
            // A socket file nobody listens on, as a killed service leaves it.
            let stale = try unixStreamSocket()
            #expect(try withUnixSocketAddress(path) { bind(stale, $0, $1) } == 0)
            close(stale)
            let server = try LocationSocketServer(path: path, settings: settings())
            let client = try connectClient(path)
            defer { close(client) }
            try server.tick(now: UTCTime(seconds: 0))
            #expect(server.clientCount == 1)
            // A second service on the same path must not steal the socket of a running one.
            #expect(throws: OutputFailure(path: path, reason: "another process is listening on this socket")) {
                _ = try LocationSocketServer(path: path, settings: settings())
            }
            server.close()

            let plain = directory + "/notasocket"
            #expect(Array("data".utf8).withUnsafeBytes { bytes in
                let descriptor = open(plain, O_WRONLY | O_CREAT, 0o644)
                defer { close(descriptor) }
                return writeAll(descriptor, bytes)
            })
            #expect(throws: OutputFailure(path: plain, reason: "exists and is not a socket; not removing it")) {
                _ = try LocationSocketServer(path: plain, settings: settings())
            }
            #expect(fileText(plain) == "data")
        }
    }

    @Test func theSocketGetsTheConfiguredGroup() throws {
        // A group other than the service's own, so the change shows: any as root, else a supplementary one.
        let (group, gid) = try otherGroup()
        try withServer(settings(group: group)) { path, server in
            #expect(server.warnings.isEmpty)
            var status = stat()
            #expect(lstat(path, &status) == 0 && status.st_gid == gid)
        }
    }

    /// A group this process may give a file to, other than its own when there is one.
    private func otherGroup() throws -> (String, gid_t) {
        var candidates: [gid_t] = []
        if geteuid() == 0 {
            let names: [String] = ["daemon", "nogroup", "adm"]
            candidates = names.compactMap { name in getgrnam(name)?.pointee.gr_gid }
        } else {
            var groups = [gid_t](repeating: 0, count: 256)
            let count = getgroups(Int32(groups.count), &groups)
            candidates = Array(groups.prefix(Int(max(count, 0))))
        }
        let gid = candidates.first { $0 != getegid() } ?? getegid()
        let entry = try #require(getgrgid(gid), "no group entry for gid \(gid)")
        return (String(cString: entry.pointee.gr_name), gid)
    }

    @Test func aMissingGroupIsAWarningNotAFailure() throws {
        try withServer(settings(group: "no-such-group-for-lodestar")) { _, server in
            #expect(server.warnings.count == 1)
            #expect(server.warnings.first?.contains("no-such-group-for-lodestar does not exist") == true)
            #expect(server.pollDescriptors.count == 1)
        }
    }
}

/// Everything a socket has to read now, without waiting.
func readAvailable(_ descriptor: Int32) -> String {
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65_536)
    while true {
        let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        if count <= 0 { break }
        bytes.append(contentsOf: chunk[0..<count])
    }
    return String(decoding: bytes, as: UTF8.self)
}
