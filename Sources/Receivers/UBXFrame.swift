/// One u-blox UBX message: sync `B5 62`, class, id, little-endian payload length, payload, and the 8-bit
/// Fletcher checksum over class through payload.
public struct UBXFrame: Sendable, Hashable {
    public var messageClass: UInt8
    public var id: UInt8
    public var payload: [UInt8]

    public static let sync: [UInt8] = [0xB5, 0x62]
    /// The largest payload a UBX length field can announce.
    public static let maximumPayload = Int(UInt16.max)

    public init(messageClass: UInt8, id: UInt8, payload: [UInt8] = []) {
        self.messageClass = messageClass
        self.id = id
        self.payload = payload
    }

    /// The frame as written to the receiver. A payload longer than `maximumPayload` is cut to it: no UBX
    /// command comes near, and the length field cannot say more.
    public var bytes: [UInt8] {
        let body = Array(payload.prefix(Self.maximumPayload))
        let length = UInt16(body.count)
        var covered: [UInt8] = [messageClass, id, UInt8(length & 0xFF), UInt8(length >> 8)]
        covered += body
        let (a, b) = Self.checksum(covered)
        return Self.sync + covered + [a, b]
    }

    /// The 8-bit Fletcher checksum (CK_A, CK_B) over `bytes`.
    public static func checksum(_ bytes: some Sequence<UInt8>) -> (UInt8, UInt8) {
        var a: UInt8 = 0
        var b: UInt8 = 0
        for byte in bytes {
            a &+= byte
            b &+= a
        }
        return (a, b)
    }
}

/// Finds UBX frames in what a receiver sends, which may mix them with NMEA sentences and cut them anywhere.
/// Bytes outside frames are dropped; a frame whose checksum is wrong is dropped and counted, and the search
/// resumes one byte after its sync, so a real frame that began inside it is not lost.
public struct UBXStreamParser: Sendable {
    /// The longest payload taken as a frame: gpsd's own bound on a packet (MAX_PACKET_LENGTH, 9216 bytes in
    /// its packet.c) less the header and checksum. A sync followed by a longer "length" is noise (a tty's echo
    /// of the receiver's own output, say) and waiting for that many bytes would swallow every real frame after it.
    public static let maximumPayloadLength = 9216 - 8
    private var buffer: [UInt8] = []
    /// Frames dropped for a wrong checksum (or an impossible length) so far.
    public private(set) var badChecksums = 0

    public init() {}

    /// Takes the next bytes; returns the frames they completed, in order.
    public mutating func feed(_ bytes: some Sequence<UInt8>) -> [UBXFrame] {
        buffer += bytes
        var frames: [UBXFrame] = []
        var start = 0
        scanning: while true {
            // The next sync, or keep a final 0xB5 that may be the first half of one.
            guard let sync = syncIndex(from: start) else {
                // (Not a byte already used, such as the checksum of the frame just found.)
                start = max(start, buffer.last == UBXFrame.sync[0] ? buffer.count - 1 : buffer.count)
                break scanning
            }
            start = sync
            let headerEnd = sync + 6
            guard headerEnd <= buffer.count else { break scanning }
            let length = Int(buffer[sync + 4]) | Int(buffer[sync + 5]) << 8
            guard length <= Self.maximumPayloadLength else {
                badChecksums += 1
                start = sync + 1
                continue scanning
            }
            let end = headerEnd + length + 2
            guard end <= buffer.count else { break scanning }
            let (a, b) = UBXFrame.checksum(buffer[(sync + 2)..<(headerEnd + length)])
            if buffer[end - 2] == a && buffer[end - 1] == b {
                frames.append(
                    UBXFrame(
                        messageClass: buffer[sync + 2], id: buffer[sync + 3],
                        payload: Array(buffer[headerEnd..<(headerEnd + length)])))
                start = end
            } else {
                badChecksums += 1
                start = sync + 1
            }
        }
        buffer.removeFirst(min(start, buffer.count))
        return frames
    }

    private func syncIndex(from start: Int) -> Int? {
        var index = start
        while index + 1 < buffer.count {
            if buffer[index] == UBXFrame.sync[0] && buffer[index + 1] == UBXFrame.sync[1] { return index }
            index += 1
        }
        return nil
    }
}

/// The UBX commands receiver power control sends, with the payloads of the u-blox receiver descriptions.
public enum UBXCommand {
    /// UBX-CFG-RST with a controlled GNSS stop: the GNSS engine stops, the CPU and the interfaces (USB too)
    /// stay up, configuration and aiding data are kept. navBbrMask 0 = a hot start afterwards.
    public static let gnssStop = UBXFrame(messageClass: 0x06, id: 0x04, payload: [0x00, 0x00, 0x08, 0x00])
    /// UBX-CFG-RST with a controlled GNSS start, ending `gnssStop`.
    public static let gnssStart = UBXFrame(messageClass: 0x06, id: 0x04, payload: [0x00, 0x00, 0x09, 0x00])
    /// UBX-MON-VER poll: harmless, the receiver answers with its versions.
    public static let pollVersion = UBXFrame(messageClass: 0x0A, id: 0x04)

    /// Where a receiver in backup (`backup(milliseconds:force:wakeupSources:)`) wakes from.
    public struct WakeupSources: OptionSet, Sendable, Hashable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        /// A falling edge on UART RX (the bytes themselves are lost).
        public static let uartRX = WakeupSources(rawValue: 0x08)
        public static let extInt0 = WakeupSources(rawValue: 0x20)
        public static let extInt1 = WakeupSources(rawValue: 0x40)
        public static let spiCS = WakeupSources(rawValue: 0x80)
    }

    /// UBX-RXM-PMREQ, 8-byte form (u-blox 6 on): backup for `milliseconds`, 0 = until woken by a pin.
    public static func backup(milliseconds: UInt32) -> UBXFrame {
        UBXFrame(messageClass: 0x02, id: 0x41, payload: littleEndian(milliseconds) + littleEndian(UInt32(0x02)))
    }

    /// UBX-RXM-PMREQ, 16-byte form (u-blox 8 from protocol 18, M9, M10): backup for `milliseconds` (0 =
    /// until woken), waking on `wakeupSources`. `force` enters backup even with USB connected.
    public static func backup(milliseconds: UInt32, force: Bool, wakeupSources: WakeupSources) -> UBXFrame {
        let flags: UInt32 = 0x02 | (force ? 0x04 : 0)
        let payload = [0x00, 0x00, 0x00, 0x00] + littleEndian(milliseconds) + littleEndian(flags)
            + littleEndian(wakeupSources.rawValue)
        return UBXFrame(messageClass: 0x02, id: 0x41, payload: payload)
    }

    /// UBX-CFG-RXM (u-blox 6, 7, 8): power save mode (the receiver cycles by CFG-PM2) or continuous. The
    /// first byte is reserved and the descriptions ask for 8 there.
    public static func receiverMode(powerSave: Bool) -> UBXFrame {
        UBXFrame(messageClass: 0x06, id: 0x11, payload: [0x08, powerSave ? 0x01 : 0x00])
    }

    /// UBX-CFG-PMS power setups (u-blox 8).
    public enum PowerSetup: Sendable, Hashable {
        case fullPower
        case balanced
        /// Cycles: on for `onTime` seconds every `period` seconds.
        case interval(period: UInt16, onTime: UInt16)
        case aggressive1Hz, aggressive2Hz, aggressive4Hz
    }

    /// UBX-CFG-PMS (u-blox 8).
    public static func powerSetup(_ setup: PowerSetup) -> UBXFrame {
        let value: UInt8
        var period: UInt16 = 0
        var onTime: UInt16 = 0
        switch setup {
        case .fullPower: value = 0
        case .balanced: value = 1
        case .interval(let p, let o):
            value = 2
            period = p
            onTime = o
        case .aggressive1Hz: value = 3
        case .aggressive2Hz: value = 4
        case .aggressive4Hz: value = 5
        }
        let payload = [0x00, value] + littleEndian(period) + littleEndian(onTime) + [0x00, 0x00]
        return UBXFrame(messageClass: 0x06, id: 0x86, payload: payload)
    }

    /// CFG-PM-OPERATEMODE values (M9, M10).
    public enum OperateMode: UInt8, Sendable, Hashable {
        case full = 0
        /// Power save, on/off operation.
        case onOff = 1
        /// Power save, cyclic tracking.
        case cyclicTracking = 2
    }

    /// Layers a UBX-CFG-VALSET writes to.
    public struct Layers: OptionSet, Sendable, Hashable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let ram = Layers(rawValue: 0x01)
        public static let batteryBackedRAM = Layers(rawValue: 0x02)
        public static let flash = Layers(rawValue: 0x04)
    }

    /// The configuration key of CFG-PM-OPERATEMODE (one byte).
    public static let operateModeKey: UInt32 = 0x20D0_0001

    /// UBX-CFG-VALSET of CFG-PM-OPERATEMODE (M9, M10); RAM only by default, so a power cycle undoes it.
    public static func operateMode(_ mode: OperateMode, layers: Layers = .ram) -> UBXFrame {
        let payload = [0x00, layers.rawValue, 0x00, 0x00] + littleEndian(operateModeKey) + [mode.rawValue]
        return UBXFrame(messageClass: 0x06, id: 0x8A, payload: payload)
    }

    private static func littleEndian<Integer: FixedWidthInteger>(_ value: Integer) -> [UInt8] {
        (0..<(Integer.bitWidth / 8)).map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
    }
}

/// A receiver's UBX-ACK-ACK or UBX-ACK-NAK: whether it took the command of `messageClass`/`id`.
public struct UBXAcknowledgement: Sendable, Hashable {
    public var accepted: Bool
    public var messageClass: UInt8
    public var id: UInt8

    /// Whether this answers `command`.
    public func acknowledges(_ command: UBXFrame) -> Bool {
        messageClass == command.messageClass && id == command.id
    }
}

extension UBXAcknowledgement {
    /// Nil when `frame` is no ACK message.
    public init?(_ frame: UBXFrame) {
        guard frame.messageClass == 0x05, frame.id <= 0x01, frame.payload.count == 2 else { return nil }
        self.init(accepted: frame.id == 0x01, messageClass: frame.payload[0], id: frame.payload[1])
    }
}

/// A receiver's answer to `UBXCommand.pollVersion` (UBX-MON-VER): 30-byte software and 10-byte hardware
/// version fields, then 30-byte extensions, each NUL-padded.
public struct UBXVersion: Sendable, Hashable {
    public var software: String
    public var hardware: String
    public var extensions: [String] = []

    /// The UBX protocol version from a `PROTVER=18.00` (or older `PROTVER 14.00`) extension.
    public var protocolVersion: Double? {
        extensions.lazy.compactMap(Self.protocolVersion(fromField:)).first
    }

    /// `18.00` from `PROTVER=18.00` or `PROTVER 14.00`; nil from anything else.
    public static func protocolVersion(fromField field: some StringProtocol) -> Double? {
        let trimmed = field.drop { $0 == " " }
        guard trimmed.hasPrefix("PROTVER") else { return nil }
        let rest = trimmed.dropFirst("PROTVER".count).drop { $0 == "=" || $0 == " " }
        return Double(rest.prefix { $0.isNumber || $0 == "." })
    }
}

extension UBXVersion {
    /// Nil when `frame` is no MON-VER answer.
    public init?(_ frame: UBXFrame) {
        let payload = frame.payload
        guard frame.messageClass == 0x0A, frame.id == 0x04, payload.count >= 40, (payload.count - 40) % 30 == 0
        else { return nil }
        func text(_ range: Range<Int>) -> String {
            let field = payload[range].prefix { $0 != 0 }
            return String(decoding: field, as: UTF8.self)
        }
        self.init(
            software: text(0..<30), hardware: text(30..<40),
            extensions: stride(from: 40, to: payload.count, by: 30).map { text($0..<($0 + 30)) })
    }
}
