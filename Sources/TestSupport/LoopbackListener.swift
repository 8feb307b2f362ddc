import SystemInterface

#if canImport(Glibc)
import Glibc
#endif

/// A listening TCP socket on 127.0.0.1, for TestSupport's servers (the Traccar stand-in, the impostor).
enum LoopbackListener {
    /// `port` 0: any free one. The socket and the port it got.
    static func open(port: UInt16) throws(SystemError) -> (descriptor: Int32, port: UInt16) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw SystemError("socket", "AF_INET") }
        // Listening again on the same port while the last run's connections are in TIME_WAIT.
        var reuse: Int32 = 1
        _ = setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        guard withLoopbackAddress(port: port, { bind(descriptor, $0, $1) }) == 0 else {
            let failure = SystemError("bind", "127.0.0.1:\(port)")
            close(descriptor)
            throw failure
        }
        guard let bound = boundPort(of: descriptor), Glibc.listen(descriptor, 64) == 0 else {
            let failure = SystemError("listen", "127.0.0.1:\(port)")
            close(descriptor)
            throw failure
        }
        return (descriptor, bound)
    }
}
