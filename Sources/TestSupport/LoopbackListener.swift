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
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        address.sin_port = port.bigEndian
        // Listening again on the same port while the last run's connections are in TIME_WAIT.
        var reuse: Int32 = 1
        _ = setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else {
            let failure = SystemError("bind", "127.0.0.1:\(port)")
            close(descriptor)
            throw failure
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard named == 0, Glibc.listen(descriptor, 64) == 0 else {
            let failure = SystemError("listen", "127.0.0.1:\(port)")
            close(descriptor)
            throw failure
        }
        return (descriptor, UInt16(bigEndian: address.sin_port))
    }
}
