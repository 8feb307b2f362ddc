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
        let text = strerror(code).map { String(cString: $0) } ?? "errno \(code)"
        return "\(call) \(subject): \(text)"
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
    let descriptor = retryingOnInterrupt { open(path, O_RDONLY | O_CLOEXEC) }
    guard descriptor >= 0 else { throw SystemError("open", path) }
    defer { close(descriptor) }
    var status = stat()
    if fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR {
        throw SystemError("read", path, code: EISDIR)
    }
    var result: [UInt8] = []
    if status.st_size > 0 { result.reserveCapacity(Int(status.st_size)) }
    var chunk = [UInt8](repeating: 0, count: 1 << 20)
    while true {
        let count = chunk.withUnsafeMutableBytes { buffer in
            retryingOnInterrupt { read(descriptor, buffer.baseAddress, buffer.count) }
        }
        if count < 0 { throw SystemError("read", path) }
        if count == 0 { return result }
        result.append(contentsOf: chunk[0..<count])
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
