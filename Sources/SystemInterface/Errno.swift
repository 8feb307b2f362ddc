#if canImport(Glibc)
    import Glibc
#endif

/// An errno value with the system's words for it, after swift-system's `Errno` (Sources/System/Errno.swift
/// there): every message that reports a failed call says why through this, never through `strerror` by hand.
public struct Errno: Error, RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: Int32

    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The calling thread's errno now: read it right after the call that failed.
    public static var current: Errno { Errno(rawValue: errno) }

    /// `No space left on device`.
    public var description: String { strerror(rawValue).map { String(cString: $0) } ?? "errno \(rawValue)" }

    public static let interrupted = Errno(rawValue: EINTR)
    public static let wouldBlock = Errno(rawValue: EAGAIN)
    public static let badFileDescriptor = Errno(rawValue: EBADF)
}
