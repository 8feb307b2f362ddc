import SystemInterface
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A TCP server on 127.0.0.1 that is not gpsd, for the tests of what Lodestar does when pointed at the wrong
/// port: it greets each connection with bytes of its own (an SSH banner, NULs), says nothing, or closes at
/// once; or, standing in for gpsd where timing is the point, greets with a banner and repeats a line every
/// 50 ms. Connections stay open until `stop` (or deinit), as a real server's would.
public final class ImpostorServer: Sendable {
    public enum Behaviour: Sendable {
        /// Sends these bytes as soon as it accepts, then nothing more.
        case greets([UInt8])
        /// Accepts and never sends anything.
        case silent
        /// Accepts and closes at once.
        case closes
        /// Greets with `greeting`, then sends `line` to every connection every 50 ms.
        case repeats(greeting: [UInt8], line: [UInt8])
    }

    /// What an OpenSSH server sends first.
    public static let sshBanner = Array("SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n".utf8)

    public let port: UInt16
    private let listener: Int32
    private let stopping = StopFlag()
    private let finished = StopFlag()
    private let accepted = Accepted()

    /// The connections accepted, shared with the accepting thread.
    private final class Accepted: Sendable {
        let descriptors = Mutex<[Int32]>([])
    }

    /// `port` 0: any free one.
    public init(_ behaviour: Behaviour, port: UInt16 = 0) throws(SystemError) {
        let (descriptor, bound) = try LoopbackListener.open(port: port)
        listener = descriptor
        self.port = bound
        let started = DetachedThread.start { [stopping, finished, accepted] in
            defer { finished.set() }
            while !stopping.isSet {
                var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, 50) > 0 else {
                    if case .repeats(_, let line) = behaviour {
                        accepted.descriptors.withLock { connections in
                            for connection in connections where connection >= 0 {
                                _ = line.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                            }
                        }
                    }
                    continue
                }
                let connection = accept(descriptor, nil, nil)
                guard connection >= 0 else { continue }
                switch behaviour {
                case .greets(let bytes), .repeats(let bytes, _):
                    _ = bytes.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    accepted.descriptors.withLock { $0.append(connection) }
                case .silent:
                    accepted.descriptors.withLock { $0.append(connection) }
                case .closes:
                    close(connection)
                    accepted.descriptors.withLock { $0.append(-1) }
                }
            }
        }
        if !started {
            close(descriptor)
            throw SystemError("pthread_create", "ImpostorServer")
        }
    }

    /// Connections accepted so far.
    public var connectionCount: Int { accepted.descriptors.withLock { $0.count } }

    /// Stops accepting and closes every connection. Safe to call twice.
    public func stop() {
        guard !stopping.isSet else { return }
        stopping.set()
        while !finished.isSet { sleepSeconds(0.01) }
        close(listener)
        accepted.descriptors.withLock { connections in
            for connection in connections where connection >= 0 { close(connection) }
            connections = connections.map { _ in -1 }
        }
    }

    deinit { stop() }
}
