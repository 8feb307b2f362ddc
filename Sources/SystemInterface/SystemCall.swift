#if canImport(Glibc)
import Glibc
#endif

/// A failed system call: which call, on what, and the system's words for errno.
public struct SystemError: Error, Sendable, CustomStringConvertible {
    public var call: String
    public var subject: String
    public var code: Int32

    public init(_ call: String, _ subject: String, code: Int32 = errno) {
        self.call = call
        self.subject = subject
        self.code = code
    }

    public var description: String {
        "\(call) \(subject): \(errnoText(code))"
    }
}

/// Runs `body` again while it fails with EINTR (swift-system's convention).
@discardableResult
package func retryingOnInterrupt<Result: BinaryInteger>(_ body: () -> Result) -> Result {
    while true {
        let result = body()
        if result == -1 && errno == EINTR { continue }
        return result
    }
}

public func sleepSeconds(_ seconds: Double) {
    guard seconds > 0 else { return }
    var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - Double(Int(seconds))) * 1e9))
    var remaining = timespec()
    while nanosleep(&request, &remaining) == -1 && errno == EINTR { request = remaining }
}

/// Writes all of `bytes` to a blocking descriptor.
package func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
    var offset = 0
    while offset < bytes.count {
        guard let base = bytes.baseAddress else { return false }
        let written = retryingOnInterrupt { write(descriptor, base + offset, bytes.count - offset) }
        if written <= 0 { return false }
        offset += written
    }
    return true
}

/// Reads a whole file (a log, a pid file, a capture); nil when it cannot be read.
public func readFile(_ path: String) -> [UInt8]? {
    try? readWholeFile(path)
}

/// Reads a whole file, or says why not (the errno of `open` or `read`).
public func readWholeFile(_ path: String) throws(SystemError) -> [UInt8] {
    let file = try ReadableFile(path: path)
    var result: [UInt8] = []
    while true {
        let chunk = try file.read(upTo: 1 << 20)
        if chunk.isEmpty { return result }
        result += chunk
    }
}

/// The names in a directory, without `.` and `..`, in the order the file system gives them; empty when it
/// cannot be read.
public func directoryEntries(_ path: String) -> [String] {
    guard let directory = opendir(path) else { return [] }
    defer { closedir(directory) }
    var names: [String] = []
    while let entry = readdir(directory) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
            String(decoding: bytes.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
        if name != "." && name != ".." { names.append(name) }
    }
    return names
}

/// Where an executable lives: `PATH`, then the sbin folders Debian puts gpsd in (not on a user's PATH).
public func findExecutable(_ name: String) -> String? {
    let path = getenv("PATH").map { String(cString: $0) } ?? "/usr/bin:/bin"
    let folders = path.split(separator: ":").map(String.init) + ["/usr/sbin", "/sbin", "/usr/local/sbin"]
    for folder in folders {
        let candidate = folder + "/" + name
        if access(candidate, X_OK) == 0 { return candidate }
    }
    return nil
}

/// Creates `path` and its missing parents with `mode` (`mkdir -p`); an existing directory is fine.
package func makeDirectories(_ path: String, mode: mode_t = 0o755) throws(SystemError) {
    var prefix = path.hasPrefix("/") ? "/" : ""
    for component in path.split(separator: "/") {
        prefix += (prefix.isEmpty || prefix.hasSuffix("/") ? "" : "/") + component
        if mkdir(prefix, mode) == 0 || errno == EEXIST { continue }
        throw SystemError("mkdir", prefix)
    }
    var status = stat()
    guard stat(path, &status) == 0 else { throw SystemError("stat", path) }
    guard (status.st_mode & S_IFMT) == S_IFDIR else { throw SystemError("mkdir", path, code: ENOTDIR) }
}

/// The parent directory of a path (`.` for a bare name).
package func parentDirectory(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    return slash == path.startIndex ? "/" : String(path[..<slash])
}

/// The system's words for an errno value (`No space left on device`).
package func errnoText(_ code: Int32) -> String {
    strerror(code).map { String(cString: $0) } ?? "errno \(code)"
}

/// Calls `body` with `path` as a Unix socket address; ENAMETOOLONG when the path does not fit `sun_path`.
package func withUnixSocketAddress<Result>(
    _ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Result
) throws(SystemError) -> Result {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let pathBytes = Array(path.utf8)
    guard pathBytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
        throw SystemError("socket", path, code: ENAMETOOLONG)
    }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        raw.copyBytes(from: pathBytes)
        raw[pathBytes.count] = 0
    }
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
}

/// A non-blocking, close-on-exec Unix stream socket.
package func unixStreamSocket() throws(SystemError) -> Int32 {
    let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
    let descriptor = socket(AF_UNIX, type, 0)
    guard descriptor >= 0 else { throw SystemError("socket", "AF_UNIX") }
    return descriptor
}

/// Accepts a waiting connection as a non-blocking, close-on-exec descriptor; -1 with errno when none is
/// waiting (EAGAIN) or accept fails. (glibc's accept4 is not visible to Swift.)
package func acceptNonBlocking(_ listener: Int32) -> Int32 {
    let descriptor = retryingOnInterrupt { accept(listener, nil, nil) }
    guard descriptor >= 0 else { return -1 }
    _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
    _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
    return descriptor
}

/// A file opened for reading in chunks, so a command reads a day-long capture in the memory of one chunk.
public final class ReadableFile {
    public let path: String
    private var descriptor: Int32

    public init(path: String) throws(SystemError) {
        self.path = path
        descriptor = retryingOnInterrupt { open(path, O_RDONLY | O_CLOEXEC) }
        guard descriptor >= 0 else { throw SystemError("open", path) }
        var status = stat()
        if fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR {
            Glibc.close(descriptor)
            descriptor = -1
            throw SystemError("read", path, code: EISDIR)
        }
    }

    /// Up to `buffer.count` bytes: the count, 0 at the end.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Int {
        guard descriptor >= 0 else { throw SystemError("read", path, code: EBADF) }
        let count = retryingOnInterrupt { Glibc.read(descriptor, buffer.baseAddress, buffer.count) }
        if count < 0 { throw SystemError("read", path) }
        return count
    }

    /// The next bytes, up to `count`: empty at the end.
    public func read(upTo count: Int) throws(SystemError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var result = 0
        var failure: SystemError?
        bytes.withUnsafeMutableBytes { raw in
            do throws(SystemError) {
                result = try read(into: raw)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        bytes.removeLast(count - result)
        return bytes
    }

    public func close() {
        guard descriptor >= 0 else { return }
        Glibc.close(descriptor)
        descriptor = -1
    }

    deinit { close() }
}
