#if canImport(Glibc)
    import Glibc
#endif

/// An open file descriptor, after swift-system's `FileDescriptor` (Sources/System/FileDescriptor.swift and
/// FileOperations.swift there): each call returns what it did or throws the `Errno` that says why, and EINTR
/// is retried unless the caller asks to see it, so no caller reads errno by hand. A value, not an owner:
/// whoever opens a descriptor closes it.
public struct FileDescriptor: RawRepresentable, Hashable, Sendable {
    public let rawValue: Int32

    public init(rawValue: Int32) { self.rawValue = rawValue }

    public enum AccessMode: Sendable {
        case readOnly, writeOnly, readWrite

        var flags: Int32 {
            switch self {
            case .readOnly: O_RDONLY
            case .writeOnly: O_WRONLY
            case .readWrite: O_RDWR
            }
        }
    }

    /// `open(2)`'s flags beyond the access mode.
    public struct OpenOptions: OptionSet, Sendable {
        public let rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }

        public static let create = OpenOptions(rawValue: O_CREAT)
        public static let exclusiveCreate = OpenOptions(rawValue: O_EXCL)
        public static let truncate = OpenOptions(rawValue: O_TRUNC)
        public static let append = OpenOptions(rawValue: O_APPEND)
        public static let nonBlocking = OpenOptions(rawValue: O_NONBLOCK)
        public static let noControllingTerminal = OpenOptions(rawValue: O_NOCTTY)
    }

    /// Opens `path`, always close-on-exec: a child (gpsd, an uploader's helper) must not inherit our files.
    public static func open(
        _ path: String, _ mode: AccessMode, options: OpenOptions = [], permissions: mode_t = 0o644
    ) throws(Errno) -> FileDescriptor {
        let flags = mode.flags | options.rawValue | O_CLOEXEC
        let descriptor = try retrying { Glibc.open(path, flags, permissions) }
        return FileDescriptor(rawValue: descriptor)
    }

    /// Up to `buffer.count` bytes; 0 at the end. With `retryOnInterrupt` false, a signal throws EINTR, so a
    /// reader can look at its stop flag.
    public func read(into buffer: UnsafeMutableRawBufferPointer, retryOnInterrupt: Bool = true) throws(Errno) -> Int {
        try retrying(retryOnInterrupt) { Glibc.read(rawValue, buffer.baseAddress, buffer.count) }
    }

    /// Some of `buffer`: the count written.
    public func write(_ buffer: UnsafeRawBufferPointer) throws(Errno) -> Int {
        try retrying { Glibc.write(rawValue, buffer.baseAddress, buffer.count) }
    }

    /// All of `buffer`, or the error that stopped it (EIO when the file takes no more without saying why).
    public func writeAll(_ buffer: UnsafeRawBufferPointer) throws(Errno) {
        var written = 0
        while written < buffer.count {
            let count = try write(UnsafeRawBufferPointer(rebasing: buffer[written...]))
            guard count > 0 else { throw Errno(rawValue: EIO) }
            written += count
        }
    }

    public func writeAll(_ bytes: [UInt8]) throws(Errno) {
        var failure: Errno?
        bytes.withUnsafeBytes { buffer in
            do throws(Errno) { try writeAll(buffer) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// `fstat(2)`.
    public func status() throws(Errno) -> stat {
        var status = stat()
        _ = try retrying { fstat(rawValue, &status) }
        return status
    }

    /// `fsync(2)`: what was written is on the disk.
    public func sync() throws(Errno) {
        _ = try retrying { fsync(rawValue) }
    }

    /// Cuts the file to `size` bytes (`ftruncate(2)`).
    public func truncate(to size: Int64) throws(Errno) {
        _ = try retrying { ftruncate(rawValue, off_t(size)) }
    }

    /// `close(2)`. Not retried on EINTR: Linux has released the descriptor whatever close returns.
    public func close() throws(Errno) {
        guard Glibc.close(rawValue) == 0 else { throw Errno.current }
    }

    /// Runs a call that returns -1 and sets errno on failure.
    private static func retrying<Result: BinaryInteger>(
        _ retryOnInterrupt: Bool = true, _ call: () -> Result
    ) throws(Errno) -> Result {
        while true {
            let result = call()
            if result != -1 { return result }
            let failure = Errno.current
            if failure == .interrupted && retryOnInterrupt { continue }
            throw failure
        }
    }

    private func retrying<Result: BinaryInteger>(
        _ retryOnInterrupt: Bool = true, _ call: () -> Result
    ) throws(Errno) -> Result {
        try Self.retrying(retryOnInterrupt, call)
    }
}
