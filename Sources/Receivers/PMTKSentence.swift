/// One MediaTek PMTK sentence: `$PMTKnnn,field,…*CS\r\n`, CS the XOR of the characters between `$` and `*`
/// in two upper-case hex digits.
public struct PMTKSentence: Sendable, Hashable {
    /// The three-digit packet type: 161, 225, 001, 705, …
    public var command: Int
    public var fields: [String]

    public init(command: Int, fields: [String] = []) {
        self.command = command
        self.fields = fields
    }

    /// `PMTK161,0`: what the checksum covers.
    public var body: String {
        let number = String(command)
        let padded = String(repeating: "0", count: max(0, 3 - number.count)) + number
        return (["PMTK" + padded] + fields).joined(separator: ",")
    }

    /// The sentence as written to the receiver, line end included.
    public var text: String {
        "$" + body + "*" + Self.hex(Self.checksum(body)) + "\r\n"
    }

    public var bytes: [UInt8] { Array(text.utf8) }

    public static func checksum(_ body: String) -> UInt8 {
        body.utf8.reduce(0, ^)
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
    }

    /// Reads one sentence (line end optional); nil when it is no PMTK sentence or its checksum is wrong.
    public init?(parsing line: some StringProtocol) {
        var text = Substring(line)
        // `\r\n` is one Character in Swift.
        while let last = text.last, last.isNewline { text.removeLast() }
        guard text.hasPrefix("$PMTK"), let star = text.lastIndex(of: "*") else { return nil }
        let body = text[text.index(after: text.startIndex)..<star]
        let sent = text[text.index(after: star)...]
        guard sent.count == 2, let checksum = UInt8(sent, radix: 16), checksum == Self.checksum(String(body))
        else { return nil }
        let parts = body.split(separator: ",", omittingEmptySubsequences: false)
        let digits = parts[0].dropFirst("PMTK".count)
        guard digits.count == 3, digits.allSatisfy(\.isNumber), let command = Int(digits) else { return nil }
        self.init(command: command, fields: parts.dropFirst().map(String.init))
    }
}

/// The PMTK commands receiver power control sends (MediaTek MT3329/MT3339 command set).
public enum PMTKCommand {
    /// PMTK161,0: standby. Navigation stops; any byte on the UART wakes the receiver.
    public static let standby = PMTKSentence(command: 161, fields: ["0"])
    /// PMTK225,0: back to normal (full power) from a periodic or AlwaysLocate mode.
    public static let normalMode = PMTKSentence(command: 225, fields: ["0"])
    /// PMTK605: asks for the firmware release; answered by PMTK705.
    public static let queryFirmware = PMTKSentence(command: 605)

    /// What the receiver does between runs in periodic mode.
    public enum PeriodicSleep: Int, Sendable, Hashable {
        /// Periodic backup (type 1): can only be left during a run.
        case backup = 1
        /// Periodic standby (type 2): can be left at any time.
        case standby = 2
    }

    /// PMTK225 periodic mode: run `run` ms, sleep `sleep` ms; the second pair applies while the receiver
    /// cannot get a fix.
    public static func periodic(
        _ kind: PeriodicSleep, run: Int, sleep: Int, secondRun: Int, secondSleep: Int
    ) -> PMTKSentence {
        PMTKSentence(command: 225, fields: [kind.rawValue, run, sleep, secondRun, secondSleep].map(String.init))
    }

    /// PMTK225,8 (AlwaysLocate standby) or PMTK225,9 (AlwaysLocate backup): the receiver picks its duty
    /// cycle from the conditions.
    public static func alwaysLocate(backup: Bool) -> PMTKSentence {
        PMTKSentence(command: 225, fields: [backup ? "9" : "8"])
    }
}

/// A receiver's PMTK001 answer to a command.
public struct PMTKAcknowledgement: Sendable, Hashable {
    public enum Result: Int, Sendable, Hashable {
        case invalid = 0
        case unsupported = 1
        case failed = 2
        case succeeded = 3
    }

    /// The packet type answered.
    public var command: Int
    public var result: Result

    public func acknowledges(_ sentence: PMTKSentence) -> Bool { command == sentence.command }
}

extension PMTKAcknowledgement {
    /// Nil when `sentence` is no well-formed PMTK001.
    public init?(_ sentence: PMTKSentence) {
        guard sentence.command == 1, sentence.fields.count >= 2, let command = Int(sentence.fields[0]),
            let flag = Int(sentence.fields[1]), let result = Result(rawValue: flag)
        else { return nil }
        self.init(command: command, result: result)
    }
}

/// A receiver's PMTK705 answer to `PMTKCommand.queryFirmware`: release, build id and the module maker's
/// own fields (`AXN_2.31_3339_13101700`, `5632`, `PA6H`, `1.0`).
public struct PMTKFirmware: Sendable, Hashable {
    public var release: String
    public var buildID: String
    public var internalFields: [String] = []
}

extension PMTKFirmware {
    public init?(_ sentence: PMTKSentence) {
        guard sentence.command == 705, sentence.fields.count >= 2 else { return nil }
        self.init(
            release: sentence.fields[0], buildID: sentence.fields[1],
            internalFields: Array(sentence.fields.dropFirst(2)))
    }
}
