import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A failed system call: which call, on what, and the system's words for errno.
public struct SystemError: Error, Sendable, CustomStringConvertible {
    public var call: String
    public var subject: String
    public var code: Int32
    /// Words that say more than errno can (the size limit a file went over); nil for errno's own.
    public var detail: String?

    public init(_ call: String, _ subject: String, code: Int32 = errno, detail: String? = nil) {
        self.call = call
        self.subject = subject
        self.code = code
        self.detail = detail
    }

    public var description: String {
        "\(call) \(subject): \(reason)"
    }

    /// What went wrong alone ("No such file or directory", "larger than 1 MiB, the most a config may be").
    public var reason: String { detail ?? errnoText(code) }

    /// A read given up because SIGINT or SIGTERM asked the process to stop (`StopRequest`).
    public var isStop: Bool { code == EINTR }

    /// A file over the size its reader takes (`readWholeFile(_:limit:what:)`).
    public var isTooLarge: Bool { code == EFBIG }
}

/// SIGINT and SIGTERM as every module sees them: the CLI's handler records the signal here, and a read that
/// could wait (a FIFO, a terminal) gives up when it is set, so no input keeps the process past a stop.
public enum StopRequest {
    private static let received = Atomic<Int32>(0)
    /// Signalled with each stop (and each SIGHUP of `lodestar run`), so a loop may sleep in poll(2) on it until
    /// its next timer. Made before the handlers are installed (`prepare`): a handler must not be the first to
    /// touch a lazy global.
    public static let wakeUp = WakeUpPipe()

    public static func prepare() { _ = wakeUp }

    /// Async-signal-safe: one atomic store and a write(2) to a pipe.
    public static func record(_ signalNumber: Int32) {
        received.store(signalNumber, ordering: .relaxed)
        wakeUp.signal()
    }

    /// The signal that asked to stop, 0 if none did.
    public static var signalNumber: Int32 { received.load(ordering: .relaxed) }
}

/// "1 MiB", "64 MiB", "512 KiB", "100 bytes": a size limit as messages give it.
public func byteCountText(_ count: Int) -> String {
    if count >= 1 << 20 && count % (1 << 20) == 0 { return "\(count >> 20) MiB" }
    if count >= 1 << 10 && count % (1 << 10) == 0 { return "\(count >> 10) KiB" }
    return "\(count) bytes"
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
    // A year at most: a wait from a flag or file beyond Int's range would trap in the conversion below.
    let seconds = min(seconds, 31_536_000)
    var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - Double(Int(seconds))) * 1e9))
    var remaining = timespec()
    while nanosleep(&request, &remaining) == -1 && errno == EINTR { request = remaining }
}

/// Writes all of `bytes` to a blocking descriptor; false when a write failed (errno says why).
package func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
    do {
        try FileDescriptor(rawValue: descriptor).writeAll(bytes)
        return true
    } catch {
        errno = error.rawValue
        return false
    }
}

/// Reads a whole file (a log, a pid file, a capture); nil when it cannot be read.
public func readFile(_ path: String) -> [UInt8]? {
    try? readWholeFile(path)
}

/// Reads a whole file, or says why not (the errno of `open` or `read`). With a `limit`, a file with more
/// bytes fails with EFBIG and a message naming the limit and `what` the file is ("a config"): no more than
/// `limit` + 1 bytes are ever held, so /dev/zero or /dev/urandom end at once. A FIFO or terminal is read as it
/// comes, and the read ends when SIGINT or SIGTERM asks to stop (`isStop`) or `shouldStop` says so.
public func readWholeFile(
    _ path: String, limit: Int? = nil, what: String = "a file", shouldStop: @escaping () -> Bool = { false }
) throws(SystemError) -> [UInt8] {
    let file = try ReadableFile(path: path, shouldStop: shouldStop)
    var result: [UInt8] = []
    while true {
        let chunk = try file.read(upTo: limit.map { min(1 << 20, $0 + 1 - result.count) } ?? 1 << 20)
        if chunk.isEmpty { return result }
        result += chunk
        if let limit, result.count > limit {
            throw SystemError(
                "read", path, code: EFBIG, detail: "larger than \(byteCountText(limit)), the most \(what) may be")
        }
    }
}

/// Whether `path` is a directory (following links); false when it cannot be looked at.
public func isDirectory(_ path: String) -> Bool {
    var status = stat()
    return stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR
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
package func errnoText(_ code: Int32) -> String { Errno(rawValue: code).description }

/// Calls `body` with `path` as a Unix socket address and its length; ENAMETOOLONG when the path does not fit
/// `sun_path`. The one place a `sockaddr_un` is built. A path starting with `@` is in the abstract namespace,
/// as systemd writes NOTIFY_SOCKET: a leading NUL, no terminating one, and a length that ends at the name.
package func withUnixSocketAddress<Result>(
    _ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Result
) throws(SystemError) -> Result {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    var pathBytes = Array(path.utf8)
    let isAbstract = pathBytes.first == UInt8(ascii: "@")
    if isAbstract { pathBytes[0] = 0 }
    guard pathBytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
        throw SystemError("socket", path, code: ENAMETOOLONG)
    }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        raw.copyBytes(from: pathBytes)
        raw[pathBytes.count] = 0
    }
    let pathOffset = MemoryLayout<sockaddr_un>.offset(of: \.sun_path) ?? 2
    let length = socklen_t(isAbstract ? pathOffset + pathBytes.count : MemoryLayout<sockaddr_un>.size)
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
    }
}

/// Calls `body` with 127.0.0.1:`port` as a socket address and its length: the one place a `sockaddr_in` is
/// built (the test servers, the private gpsd's port checks).
package func withLoopbackAddress<Result>(port: UInt16, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    address.sin_port = port.bigEndian
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
}

/// The port an AF_INET socket is bound to (the one the kernel picked for port 0); nil when getsockname fails.
package func boundPort(of descriptor: Int32) -> UInt16? {
    var address = sockaddr_in()
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let named = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
    }
    return named == 0 ? UInt16(bigEndian: address.sin_port) : nil
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
/// Every command reads its config, profile, capture or log through this. It opens with O_NONBLOCK, so a
/// FIFO with no writer does not hold `open()` forever, and refuses a directory (EISDIR). A regular file is
/// then read blocking as usual; anything else (a FIFO, a pipe, a terminal, /dev/zero) is waited on in
/// `poll` slices, between which a stop (`StopRequest`, `shouldStop`) ends the read with EINTR. A child's
/// output pipe is read through it too (`ChildProcess.pipingOutput`), with a timeout per read.
public final class ReadableFile {
    public let path: String
    /// A regular file: its reads never wait, and its size is known.
    public let isRegularFile: Bool
    private var descriptor: FileDescriptor?
    private let shouldStop: () -> Bool

    public init(path: String, shouldStop: @escaping () -> Bool = { false }) throws(SystemError) {
        self.path = path
        self.shouldStop = shouldStop
        let opened: FileDescriptor
        do { opened = try FileDescriptor.open(path, .readOnly, options: .nonBlocking) } catch {
            throw SystemError("open", path, code: error.rawValue)
        }
        let type: mode_t
        do { type = try opened.status().st_mode & S_IFMT } catch {
            try? opened.close()
            throw SystemError("fstat", path, code: error.rawValue)
        }
        if type == S_IFDIR {
            try? opened.close()
            throw SystemError("read", path, code: EISDIR)
        }
        isRegularFile = type == S_IFREG
        if isRegularFile {
            // A regular file never waits; blocking reads keep the plain read loop.
            _ = fcntl(opened.rawValue, F_SETFL, fcntl(opened.rawValue, F_GETFL) & ~O_NONBLOCK)
        }
        descriptor = opened
    }

    /// The read end of a pipe, owned from here on: `name` stands for the path in messages.
    init(descriptor: Int32, name: String) {
        path = name
        isRegularFile = false
        shouldStop = { false }
        self.descriptor = FileDescriptor(rawValue: descriptor)
    }

    /// Up to `count` bytes, empty at the end, nil when nothing came within `timeout` seconds, so the reader
    /// can look at its own stop between reads.
    public func read(upTo count: Int, timeout: Double) throws(SystemError) -> [UInt8]? {
        guard let descriptor else { throw SystemError("read", path, code: EBADF) }
        var request = pollfd(fd: descriptor.rawValue, events: Int16(POLLIN), revents: 0)
        let ready = retryingOnInterrupt { Glibc.poll(&request, 1, Int32(max(0, timeout) * 1000)) }
        if ready < 0 { throw SystemError("poll", path) }
        if ready == 0 { return nil }
        return try read(upTo: count)
    }

    /// Up to `buffer.count` bytes: the count, 0 at the end. EINTR (`isStop`) when a stop came while waiting.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Int {
        guard let descriptor else { throw SystemError("read", path, code: EBADF) }
        while true {
            let failure: Errno
            do { return try descriptor.read(into: buffer, retryOnInterrupt: false) } catch { failure = error }
            guard failure == .interrupted || failure == .wouldBlock else {
                throw SystemError("read", path, code: failure.rawValue)
            }
            if stopRequested { throw SystemError("read", path, code: EINTR, detail: "stopped by a signal") }
            if failure == .interrupted { continue }
            // Nothing yet from a FIFO or device: wait a slice, then look at the stop flag again.
            var waiting = pollfd(fd: descriptor.rawValue, events: Int16(POLLIN), revents: 0)
            _ = poll(&waiting, 1, 200)
        }
    }

    private var stopRequested: Bool { StopRequest.signalNumber != 0 || shouldStop() }

    /// The next bytes, up to `count`: empty at the end.
    public func read(upTo count: Int) throws(SystemError) -> [UInt8] {
        var failure: SystemError?
        // Uninitialized, only the bytes read counted: zero-filling the 1 MiB that readWholeFile asks for, twice
        // per file (the second read finds the end), was most of the instructions of reading the config.
        let bytes = [UInt8](unsafeUninitializedCapacity: max(count, 0)) { buffer, initialized in
            do throws(SystemError) {
                initialized = try read(into: UnsafeMutableRawBufferPointer(buffer))
            } catch {
                failure = error
                initialized = 0
            }
        }
        if let failure { throw failure }
        return bytes
    }

    public func close() {
        try? descriptor?.close()
        descriptor = nil
    }

    deinit { close() }
}
