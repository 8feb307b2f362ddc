@testable import Lodestar
import Receivers
import SystemInterface
import ReceiverEmulation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// gpsd refused a write (it has not identified the receiver there), so power control writes to the tty itself
/// (`writeToDeviceDirectly`). Nobody has set that tty up: it has the kernel's cooked defaults, whose ONLCR
/// turns the 0x0A of a UBX frame into 0D 0A and whose ECHO sends the receiver's own output back to it.
@Suite struct DirectDeviceWriteTests {
    @Test func aUBXFrameReachesACookedTTYByteForByteAndTheTTYIsLeftRaw() throws {
        let pty = try PseudoTerminal()
        defer { pty.close() }
        let other = open(pty.devicePath, O_RDWR | O_NOCTTY)
        try #require(other >= 0)
        var attributes = termios()
        tcgetattr(other, &attributes)
        attributes.c_oflag |= tcflag_t(OPOST | ONLCR)
        attributes.c_lflag |= tcflag_t(ECHO | ICANON)
        tcsetattr(other, TCSANOW, &attributes)
        close(other)

        let poll = UBXCommand.pollVersion.bytes
        #expect(poll.contains(0x0A), "MON-VER's class is 0x0A")
        if case .failed(let reason) = writeToDeviceDirectly(poll, path: pty.devicePath, refusal: "not identified") {
            Issue.record("\(reason)")
        }
        let deadline = monotonicSeconds() + 5
        while pty.bytesFromHost.count < poll.count, monotonicSeconds() < deadline { sleepSeconds(0.01) }
        sleepSeconds(0.05)
        #expect(pty.bytesFromHost == poll)

        let reopened = open(pty.devicePath, O_RDWR | O_NOCTTY)
        try #require(reopened >= 0)
        defer { close(reopened) }
        var after = termios()
        tcgetattr(reopened, &after)
        #expect(after.c_lflag & tcflag_t(ECHO) == 0)
        #expect(after.c_oflag & tcflag_t(OPOST) == 0)
    }
}
