import Capture
import GPSD
import GPSModel
import TestSupport
import Testing

private let tpv = #"{"class":"TPV","device":"/dev/ttyACM0","mode":3,"time":"2026-11-30T03:22:01.000Z","lat":52.1,"lon":4.3,"altMSL":3.5,"eph":5.0}"#
private let sky = #"{"class":"SKY","device":"/dev/ttyACM0","hdop":0.9,"nSat":12,"uSat":9,"satellites":[]}"#

private func capture(_ lines: [String], header: String = #"{"lodestar":"capture","version":1}"#) -> [UInt8] {
    Array(([header] + lines).map { $0 + "\n" }.joined().utf8)
}

private func readError(_ bytes: [UInt8]) -> CaptureError? {
    do {
        _ = try CaptureReader.read(bytes)
        return nil
    } catch {
        return error
    }
}

@Suite struct CaptureFormatTests {
    @Test func everyRecordKindSurvivesWritingAndReading() throws {
        let header = CaptureHeader(
            started: UTCTime(seconds: 1_796_008_920), host: "pi-zero", gpsd: "3.22", devicePath: "/dev/ttyACM0",
            deviceDriver: "u-blox", profile: "car", source: "live", notes: ["first \"run\"", "line\nbreak"])
        let binary = (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 37) }
        var bytes = CaptureLineEncoder.header(header)
        bytes += CaptureLineEncoder.gpsd(t: 0.012, object: Array(tpv.utf8))
        bytes += CaptureLineEncoder.record(t: 1.004, .received(binary))
        bytes += CaptureLineEncoder.record(t: 30, .regime("standby", reason: "stationary 5 min within 50 m"))
        bytes += CaptureLineEncoder.record(t: 30.001, .transmitted([0xB5, 0x62, 0x06]))
        bytes += CaptureLineEncoder.record(
            t: 95.2, .event(CaptureEvent(kind: "resumed", detail: "probe fix 212 m from anchor")))

        let contents = try CaptureReader.read(bytes)
        #expect(contents.header == header)
        #expect(contents.warnings.isEmpty)
        #expect(contents.lines.map(\.t) == [0.012, 1.004, 30, 30.001, 95.2])
        #expect(contents.lines.map(\.number) == [2, 3, 4, 5, 6])
        guard case .gpsd(let range) = contents.lines[0].payload, case .received(let received) = contents.lines[1].payload,
            case .transmitted(let sent) = contents.lines[3].payload
        else {
            Issue.record("wrong payloads: \(contents.lines.map(\.payload))")
            return
        }
        #expect(contents.text(range) == tpv)
        #expect(contents.rawBytes(received) == binary)
        #expect(contents.rawBytes(sent) == [0xB5, 0x62, 0x06])
        #expect(contents.lines[2].payload == .regime("standby", reason: "stationary 5 min within 50 m"))
        #expect(contents.lines[4].payload == .event(CaptureEvent(kind: "resumed", detail: "probe fix 212 m from anchor")))
    }

    @Test func powerEventLinesAreWrittenAsTheFormatSays() {
        let wake = CaptureEvent(kind: "firstFixAfterWake", regime: "standby", seconds: 2.1004, detail: "hot start")
        #expect(
            String(decoding: CaptureLineEncoder.record(t: 30, .event(wake)), as: UTF8.self)
                == #"{"t":30.000,"event":{"kind":"firstFixAfterWake","regime":"standby","seconds":2.1,"detail":"hot start"}}"#
                + "\n")
        // A policy event keeps the shape it always had.
        #expect(
            String(decoding: CaptureLineEncoder.record(t: 95.2, .event(CaptureEvent(kind: "resumed", detail: "x"))), as: UTF8.self)
                == #"{"t":95.200,"event":{"kind":"resumed","detail":"x"}}"# + "\n")
        #expect(
            String(decoding: CaptureLineEncoder.record(t: 1, .transmitted([0xB5, 0x62, 0x06, 0x04])), as: UTF8.self)
                == #"{"t":1.000,"tx":"tWIGBA=="}"# + "\n")
    }

    @Test func txAndPowerEventLinesSurviveWritingAndReading() throws {
        let events = [
            CaptureEvent(kind: "regimeCommanded", regime: "backup", detail: "RXM-PMREQ 600 s"),
            CaptureEvent(kind: "quiet", regime: "backup", seconds: 0.25, detail: "no output"),
            CaptureEvent(kind: "firstFixAfterWake", regime: "backup", seconds: 27.5, detail: "warm"),
            CaptureEvent(kind: "noEffect", regime: "standby", detail: "gpsd started with -b?"),
            // A kind this build has never heard of is kept as text.
            CaptureEvent(kind: "somethingNewer", seconds: 0, detail: nil),
        ]
        let command: [UInt8] = [0xB5, 0x62, 0x02, 0x41, 0x08, 0x00, 0xC0, 0x27, 0x09, 0x00, 0x02, 0, 0, 0, 0x1D, 0xA8]
        var bytes = CaptureLineEncoder.header(CaptureHeader())
        bytes += CaptureLineEncoder.record(t: 10, .transmitted(command))
        for (index, event) in events.enumerated() {
            bytes += CaptureLineEncoder.record(t: 10 + Double(index), .event(event))
        }
        let contents = try CaptureReader.read(bytes)
        guard case .transmitted(let range) = contents.lines.first?.payload else {
            Issue.record("no tx line: \(contents.lines.map(\.payload))")
            return
        }
        #expect(contents.rawBytes(range) == command)
        #expect(contents.lines.dropFirst().map(\.payload) == events.map { .event($0) })
    }

    @Test func anEventWithUnknownOrMistypedExtrasReadsAsBefore() throws {
        // Keys an event does not define are ignored; a detail that is not text is dropped, as it always was.
        let contents = try CaptureReader.read(
            capture([#"{"t":1,"event":{"kind":"resumed","detail":7,"where":[1,2],"regime":"off"}}"#]))
        #expect(contents.lines.map(\.payload) == [.event(CaptureEvent(kind: "resumed", regime: "off"))])
    }

    @Test(arguments: [0, 1, 2, 3, 4, 5, 100, 255])
    func base64RoundTrips(length: Int) {
        let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) }
        var text: [UInt8] = []
        Base64.encode(bytes, into: &text)
        #expect(text.count == (length + 2) / 3 * 4)
        #expect(text.withUnsafeBufferPointer { Base64.decode($0) } == bytes)
    }

    @Test func base64OverLinesSkipsTheLineBreaks() {
        #expect(Base64.decode(lines: "QUJD\nREVG\r\nR0g=\n") == Array("ABCDEFGH".utf8))
        #expect(Base64.decode(lines: "QUJD\nREV") == nil)
    }

    @Test(arguments: ["QUJD=", "QU=D", "Q!JD", "QUJ"])
    func base64RejectsWhatIsNotBase64(text: String) {
        #expect(Array(text.utf8).withUnsafeBufferPointer { Base64.decode($0) } == nil)
    }

    @Test func aTornFinalLineIsAWarningAndEverythingBeforeItIsKept() throws {
        var bytes = capture([#"{"t":1.000,"gpsd":"# + tpv + "}", #"{"t":2.000,"gpsd":"# + sky + "}"])
        bytes += Array(#"{"t":3.000,"gpsd":{"class":"TP"#.utf8)
        let contents = try CaptureReader.read(bytes)
        #expect(contents.lines.count == 2)
        #expect(contents.warnings.count == 1)
        #expect(contents.warnings.first?.line == 4)
        #expect(contents.warnings.first?.message.contains("torn final line") == true)
    }

    @Test func aMalformedLineElsewhereIsAnErrorNamingItsLine() {
        let bytes = capture([#"{"t":1.000,"gpsd":"# + tpv + "}", #"{"t":2.000,"gpsd":{"class":"SKY""#, #"{"t":3.000,"gpsd":"# + sky + "}"])
        let error = readError(bytes)
        #expect(error?.kind == .malformed)
        #expect(error?.line == 3)
    }

    @Test(arguments: [
        (#"{"t":"1","gpsd":{"class":"TPV"}}"#, "\"t\" is not a number"),
        (#"{"gpsd":{"class":"TPV"}}"#, "no \"t\""),
        (#"{"t":-1,"gpsd":{"class":"TPV"}}"#, "negative"),
        (#"{"t":0.5,"gpsd":{"class":"TPV"}}"#, "goes back in time"),
        (#"{"t":2,"gpsd":{"mode":3}}"#, "no \"class\""),
        (#"{"t":2,"gpsd":{"class":"TPV","lat":"52.1"}}"#, "a text where gpsd sends a number"),
        (#"{"t":2,"gpsd":[1]}"#, "not a JSON object"),
        (#"{"t":2,"rx":"not base64!"}"#, "not base64"),
        (#"{"t":2,"event":{"detail":"x"}}"#, "no \"kind\""),
        (#"{"t":2,"event":"firstFixAfterWake"}"#, "\"event\" is not a JSON object"),
        (#"{"t":2,"event":{"kind":"firstFixAfterWake","regime":3}}"#, "\"regime\" is not a string"),
        (#"{"t":2,"event":{"kind":"firstFixAfterWake","seconds":"2.1"}}"#, "\"seconds\" is not a number"),
        (#"{"t":2,"event":{"kind":"firstFixAfterWake","seconds":-1}}"#, "\"seconds\" is not a number"),
        (#"{"t":2,"tx":"tWIGBA="}"#, "\"tx\" is not base64"),
        (#"{"t":2,"tx":[181,98]}"#, "\"tx\" is not base64"),
        ("plain text", "not a valid JSON object"),
    ])
    func eachMalformedLineSaysWhatIsWrong(line: String, says: String) {
        let bytes = capture([#"{"t":1,"gpsd":"# + sky + "}", line, #"{"t":9,"gpsd":"# + sky + "}"])
        let error = readError(bytes)
        #expect(error?.line == 3, "\(line)")
        #expect(error?.message.contains(says) == true, "\(line): \(error?.message ?? "no error")")
    }

    @Test func anUnknownVersionIsAnError() {
        let error = readError(capture([], header: #"{"lodestar":"capture","version":2}"#))
        #expect(error?.kind == .unknownVersion)
        #expect(error?.line == 1)
        #expect(error?.message.contains("version 2") == true)
    }

    @Test(arguments: ["", "\n\n  \n"])
    func anEmptyFileIsAnError(text: String) {
        #expect(readError(Array(text.utf8))?.kind == .empty)
    }

    @Test func aHeaderThatIsNotOursIsAnError() {
        let error = readError(capture([], header: #"{"class":"VERSION","release":"3.22"}"#))
        #expect(error?.kind == .malformed)
        #expect(error?.line == 1)
    }

    /// Unknown keys are ignored; a line with no key this version reads is skipped with a warning naming it.
    @Test func unknownKeysAreIgnoredAndUnknownLinesSkippedWithAWarning() throws {
        let bytes = capture(
            [#"{"t":1,"future":[1,{"a":null}],"gpsd":"# + tpv + "}", #"{"t":1.5,"marker":"lap"}"#, #"{"t":2,"gpsd":"# + sky + "}"],
            header: #"{"lodestar":"capture","version":1,"newField":{"x":true}}"#)
        let contents = try CaptureReader.read(bytes)
        #expect(contents.lines.count == 2)
        #expect(contents.lines.map(\.number) == [2, 4])
        #expect(contents.warnings.map(\.line) == [3])
        #expect(contents.warnings.first?.message.contains("none of the keys this lodestar reads") == true)
    }

    /// JSON with spaces after `:` and `,` (Python's json module) replays the same fixes as gpsd's compact
    /// form: the fast paths that peek at the text (the class, the epoch's time) read any JSON spacing.
    @Test func spacedJSONReplaysLikeCompactJSON() throws {
        let first = #"{"class":"TPV","device":"/dev/ttyACM0","mode":2,"time":"2026-11-30T03:22:01.000Z","lat":52.1,"lon":4.3}"#
        let next = #"{"class":"TPV","device":"/dev/ttyACM0","mode":3,"time":"2026-11-30T03:22:02.000Z","lat":52.2,"lon":4.4,"altMSL":4.0}"#
        let lines = [
            #"{"t":0.9,"gpsd":"# + sky + "}", #"{"t":1.0,"gpsd":"# + first + "}", #"{"t":1.1,"gpsd":"# + tpv + "}",
            #"{"t":2.0,"gpsd":"# + next + "}",
        ]
        func fixes(_ lines: [String]) throws -> [Fix] {
            var fixes: [Fix] = []
            let contents = try CaptureReader.read(capture(lines))
            #expect(contents.warnings.isEmpty)
            CaptureReplayer(contents).run(onEvent: { _, event in
                if case .fix(let fix) = event { fixes.append(fix) }
            })
            return fixes
        }
        let compact = try fixes(lines)
        #expect(compact.count == 2)
        #expect(try fixes(lines.map(spacedJSON)) == compact)
        // One spaced line after compact ones is understood too.
        #expect(try fixes(Array(lines.dropLast()) + [spacedJSON(lines[3])]) == compact)
    }

    @Test func replayDecodesTheCapturedReportsWithLibgpsAndCollapsesEpochs() throws {
        // Three TPVs of one epoch (as gpsd sends for NMEA), the last the most complete, then the next epoch.
        let first = #"{"class":"TPV","device":"/dev/ttyACM0","mode":2,"time":"2026-11-30T03:22:01.000Z","lat":52.1,"lon":4.3}"#
        let next = #"{"class":"TPV","device":"/dev/ttyACM0","mode":3,"time":"2026-11-30T03:22:02.000Z","lat":52.2,"lon":4.4,"altMSL":4.0}"#
        let bytes = capture([
            #"{"t":0.9,"gpsd":"# + sky + "}", #"{"t":1.0,"gpsd":"# + first + "}", #"{"t":1.1,"gpsd":"# + tpv + "}",
            #"{"t":2.0,"gpsd":"# + next + "}",
        ])
        var fixes: [(Double, Fix)] = []
        var skies = 0
        CaptureReplayer(try CaptureReader.read(bytes)).run(onEvent: { t, event in
            if case .fix(let fix) = event { fixes.append((t, fix)) }
            if case .report(.sky) = event { skies += 1 }
        })
        #expect(skies == 1)
        #expect(fixes.count == 2)
        #expect(fixes.first?.1.altitudeMSL == 3.5, "the epoch's most complete TPV is the one passed on")
        // Passed on when the epoch has been quiet for the live quiet interval, on the capture's clock.
        #expect(abs((fixes.first?.0 ?? 0) - 1.45) < 1e-9)
        #expect(fixes.last?.1.latitude == 52.2)
    }

    @Test(arguments: [
        ("2026-11-30T03:22:00.000Z", 1_796_008_920, 0),
        ("2026-11-30T03:22:00Z", 1_796_008_920, 0),
        ("1970-01-01T00:00:00.5Z", 0, 500_000_000),
        ("2000-02-29T23:59:59.123456789Z", 951_868_799, 123_456_789),
    ])
    func utcTimeParsesWhatGpsdWrites(text: String, seconds: Int64, nanoseconds: Int32) throws {
        let time = try #require(UTCTime(iso8601: Array(text.utf8)))
        #expect(time.seconds == seconds)
        #expect(time.nanoseconds == nanoseconds)
    }

    @Test(arguments: ["2026-13-30T03:22:00Z", "2026-11-30 03:22:00Z", "2026-11-30T03:22:00.Z", "garbage"])
    func utcTimeRejectsOtherText(text: String) {
        #expect(UTCTime(iso8601: Array(text.utf8)) == nil)
    }
}

@Suite struct RawStreamFilterTests {
    private let nmea = Array("$GPRMC,235234,A,3925.9702,N,11945.9354,W,45.1,153.1,250905,15.2,E,A*01\r\n".utf8)

    @Test func gpsdsJSONLinesAreRemovedAndReceiverBytesKept() {
        var filter = RawStreamFilter()
        // Typed in pieces: Swift 6.0's type checker gives up on the whole sum of literals.
        let version: [UInt8] = Array(#"{"class":"VERSION","release":"3.22"}"#.utf8) + [0x0D, 0x0A]
        let watch: [UInt8] = Array(#"{"class":"WATCH","enable":true,"raw":2}"#.utf8) + [0x0A]
        let ubx: [UInt8] = [0xB5, 0x62, 0x01, 0x07, 0x00, 0x00, 0x08, 0x19]
        let input = version + watch + nmea + ubx + nmea
        #expect(filter.receiverBytes(input) == nmea + ubx + nmea)
    }

    @Test func aJSONLineSplitAcrossReadsIsStillRemoved() {
        var filter = RawStreamFilter()
        let json = Array(#"{"class":"DEVICE","path":"/dev/pts/3","activated":0}"#.utf8) + [0x0A]
        var output: [UInt8] = []
        for split in [1, 4, 9, 20] {
            output += filter.receiverBytes(Array(json[..<split]))
            output += filter.receiverBytes(Array(json[split...]) + nmea)
        }
        #expect(output == nmea + nmea + nmea + nmea)
    }

    @Test func aBraceThatDoesNotStartGpsdJSONIsKept() {
        var filter = RawStreamFilter()
        let bytes = Array("{not json\n".utf8) + nmea
        #expect(filter.receiverBytes(Array(bytes[..<3])) + filter.receiverBytes(Array(bytes[3...])) == bytes)
    }
}
