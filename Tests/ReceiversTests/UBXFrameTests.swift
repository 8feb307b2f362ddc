@testable import Receivers
import Testing

/// Hex strings as the frames appear in docs and captures.
func hexBytes(_ hex: String) -> [UInt8] {
    var bytes: [UInt8] = []
    var index = hex.startIndex
    while index < hex.endIndex, let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex) {
        if let byte = UInt8(hex[index..<next], radix: 16) { bytes.append(byte) }
        index = next
    }
    return bytes
}

@Suite struct UBXFrameTests {
    /// The frames ubxtool wrote and the receiver descriptions give, byte for byte.
    @Test(arguments: [
        (UBXCommand.gnssStop, "b56206040400000008001674"),
        (UBXCommand.gnssStart, "b56206040400000009001776"),
        (UBXCommand.backup(milliseconds: 0), "b5620241080000000000020000004d3b"),
        (UBXCommand.backup(milliseconds: 60_000), "b5620241080060ea00000200000097a1"),
        (
            UBXCommand.backup(milliseconds: 0, force: true, wakeupSources: .uartRX),
            "b5620241100000000000000000000600000008000000616b"
        ),
        (UBXCommand.receiverMode(powerSave: true), "b5620611020008012292"),
        (UBXCommand.receiverMode(powerSave: false), "b5620611020008002191"),
        (UBXCommand.powerSetup(.balanced), "b5620686080000010000000000009561"),
        (UBXCommand.powerSetup(.fullPower), "b562068608000000000000000000945a"),
        (UBXCommand.powerSetup(.interval(period: 0, onTime: 0)), "b5620686080000020000000000009668"),
        (
            UBXCommand.operateMode(.onOff, layers: [.ram, .batteryBackedRAM, .flash]),
            "b562068a0900000700000100d020019217"
        ),
        (UBXCommand.operateMode(.onOff), "b562068a0900000100000100d020018ce7"),
        (UBXCommand.operateMode(.full), "b562068a0900000100000100d020008be6"),
        (UBXCommand.pollVersion, "b5620a0400000e34"),
        (UBXFrame(messageClass: 0x06, id: 0x3B), "b562063b000041c9"),
    ])
    func buildsTheDocumentedFrames(frame: UBXFrame, hex: String) {
        #expect(frame.bytes == hexBytes(hex))
    }

    @Test func parsesFramesMixedWithNMEA() {
        let nmea = Array("$GNGGA,120000.00,,,,,0,00,99.99,,,,,,*56\r\n".utf8)
        let ack = UBXFrame(messageClass: 0x05, id: 0x01, payload: [0x06, 0x04])
        let stream = nmea + UBXCommand.gnssStop.bytes + nmea + ack.bytes + nmea
        var parser = UBXStreamParser()
        #expect(parser.feed(stream) == [UBXCommand.gnssStop, ack])
        #expect(parser.badChecksums == 0)
    }

    @Test func joinsFramesSplitAnywhere() {
        let frames = [UBXCommand.gnssStop, UBXCommand.backup(milliseconds: 60_000), UBXCommand.pollVersion]
        let stream = Array("$GPTXT,01*00\r\n".utf8) + frames.flatMap(\.bytes)
        for size in 1...7 {
            var parser = UBXStreamParser()
            var found: [UBXFrame] = []
            var start = 0
            while start < stream.count {
                found += parser.feed(stream[start..<min(start + size, stream.count)])
                start += size
            }
            #expect(found == frames, "chunks of \(size)")
        }
    }

    @Test func skipsAndCountsABadChecksumAndFindsTheFrameAfterIt() {
        var corrupted = UBXCommand.gnssStart.bytes
        corrupted[corrupted.count - 1] ^= 0xFF
        var parser = UBXStreamParser()
        #expect(parser.feed(corrupted + UBXCommand.gnssStop.bytes) == [UBXCommand.gnssStop])
        #expect(parser.badChecksums == 1)
    }

    @Test func aFrameThatBeginsInsideAFalseSyncIsFound() {
        // A stray sync whose "length" swallows a real frame: the real one is still found.
        let stream: [UInt8] = [0xB5, 0x62, 0x01, 0x02, 0x04, 0x00] + UBXCommand.pollVersion.bytes
        var parser = UBXStreamParser()
        #expect(parser.feed(stream) == [UBXCommand.pollVersion])
        #expect(parser.badChecksums == 1)
    }

    @Test func aSyncWithAnImpossibleLengthDoesNotHoldTheFramesAfterIt() {
        // A tty's echo of a MON-VER seen through ECHOCTL: a sync, then "\r\n" and "^@" read as a 24,194-byte length.
        let echo: [UInt8] = [0xB5, 0x62, 0x0D, 0x0A, 0x82, 0x5E, 0x40, 0x52, 0x4F, 0x4D]
        var parser = UBXStreamParser()
        #expect(parser.feed(echo) == [])
        #expect(parser.feed(UBXCommand.pollVersion.bytes) == [UBXCommand.pollVersion])
        #expect(parser.badChecksums == 1)
    }

    @Test func readsAcknowledgements() {
        let ack = UBXAcknowledgement(UBXFrame(messageClass: 0x05, id: 0x01, payload: [0x06, 0x86]))
        #expect(ack == UBXAcknowledgement(accepted: true, messageClass: 0x06, id: 0x86))
        #expect(ack?.acknowledges(UBXCommand.powerSetup(.balanced)) == true)
        #expect(ack?.acknowledges(UBXCommand.gnssStop) == false)
        let nak = UBXAcknowledgement(UBXFrame(messageClass: 0x05, id: 0x00, payload: [0x06, 0x8A]))
        #expect(nak == UBXAcknowledgement(accepted: false, messageClass: 0x06, id: 0x8A))
        #expect(UBXAcknowledgement(UBXCommand.pollVersion) == nil)
        #expect(UBXAcknowledgement(UBXFrame(messageClass: 0x05, id: 0x01, payload: [0x06])) == nil)
    }

    /// A CAM-M8Q's MON-VER answer (u-blox 8 receiver description's layout: 30 + 10 + 30 × N bytes).
    @Test func readsTheVersionAnswer() {
        func field(_ text: String, _ size: Int) -> [UInt8] {
            Array(text.utf8) + Array(repeating: 0, count: size - text.utf8.count)
        }
        let payload =
            field("ROM CORE 3.01 (107888)", 30) + field("00080000", 10) + field("FWVER=SPG 3.01", 30)
            + field("PROTVER=18.00", 30) + field("GPS;GLO;GAL;BDS", 30) + field("SBAS;IMES;QZSS", 30)
        let answer = UBXVersion(UBXFrame(messageClass: 0x0A, id: 0x04, payload: payload))
        #expect(
            answer
                == UBXVersion(
                    software: "ROM CORE 3.01 (107888)", hardware: "00080000",
                    extensions: ["FWVER=SPG 3.01", "PROTVER=18.00", "GPS;GLO;GAL;BDS", "SBAS;IMES;QZSS"]))
        #expect(answer?.protocolVersion == 18)
        #expect(UBXVersion(UBXFrame(messageClass: 0x0A, id: 0x04, payload: Array(payload.prefix(50)))) == nil)
        #expect(UBXVersion(UBXCommand.pollVersion) == nil)
    }

    @Test func readsBothProtocolVersionSpellings() {
        #expect(UBXVersion.protocolVersion(fromField: "PROTVER=27.12") == 27.12)
        #expect(UBXVersion.protocolVersion(fromField: "PROTVER 14.00") == 14)
        #expect(UBXVersion.protocolVersion(fromField: "FWVER=SPG 3.01") == nil)
    }
}
