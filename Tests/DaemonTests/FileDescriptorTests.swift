import SystemInterface
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// FileDescriptor's calls throw the errno that stopped them, so the outputs built on it name the reason.
@Suite struct FileDescriptorTests {
    @Test func eachCallThrowsTheErrnoThatStoppedIt() throws {
        #expect(throws: Errno(rawValue: ENOENT)) { try FileDescriptor.open("/nonexistent/lodestar", .readOnly) }
        let full = try FileDescriptor.open("/dev/full", .writeOnly)
        defer { try? full.close() }
        #expect(throws: Errno(rawValue: ENOSPC)) { try full.writeAll(Array("a line\n".utf8)) }
        let closed = try FileDescriptor.open("/dev/null", .readOnly)
        try closed.close()
        #expect(throws: Errno.badFileDescriptor) { try closed.close() }
        #expect(Errno(rawValue: ENOSPC).description == "No space left on device")
    }

    @Test func writesAllAndReadsItBackCloseOnExec() throws {
        let directory = try #require(TemporaryDirectory(prefix: "lodestar-fd"))
        defer { directory.remove() }
        let path = directory.path + "/file"
        let file = try FileDescriptor.open(path, .readWrite, options: [.create, .exclusiveCreate])
        defer { try? file.close() }
        #expect(fcntl(file.rawValue, F_GETFD) & FD_CLOEXEC != 0)
        let bytes = (0..<100_000).map { UInt8(truncatingIfNeeded: $0) }
        try file.writeAll(bytes)
        try file.sync()
        #expect(try file.status().st_size == 100_000)
        try file.truncate(to: 10)
        #expect(try readWholeFile(path) == Array(bytes.prefix(10)))
        #expect(throws: Errno(rawValue: EEXIST)) {
            try FileDescriptor.open(path, .writeOnly, options: [.create, .exclusiveCreate])
        }
    }
}
