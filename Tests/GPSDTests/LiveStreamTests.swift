import GPSModel
import Testing

@testable import GPSD

func tpv(_ second: Int64, device: String = "/dev/pts/1", mode: FixMode = .threeD, latitude: Double? = 52, altitude: Double? = nil) -> Fix {
    Fix(
        device: device, mode: mode, time: UTCTime(seconds: 1_700_000_000 + second),
        latitude: mode >= .twoD ? latitude : nil, longitude: mode >= .twoD ? 4.9 : nil, altitudeMSL: altitude)
}

@Suite struct EpochCollapserTests {
    @Test func keepsTheLastTPVOfAnEpochAndEmitsItWhenTheNextStarts() {
        var collapser = EpochCollapser<String, UTCTime, Fix>()
        #expect(collapser.add(tpv(0), now: 0).isEmpty)
        #expect(collapser.add(tpv(0, altitude: 10), now: 0.1).isEmpty)
        let emitted = collapser.add(tpv(1), now: 1)
        #expect(emitted == [tpv(0, altitude: 10)])
    }

    @Test func aLaterTPVWithoutPositionDoesNotReplaceOneWithIt() {
        var collapser = EpochCollapser<String, UTCTime, Fix>()
        _ = collapser.add(tpv(0, altitude: 5), now: 0)
        _ = collapser.add(tpv(0, mode: .noFix), now: 0.1)
        #expect(collapser.add(tpv(1), now: 1) == [tpv(0, altitude: 5)])
    }

    @Test func aQuietDeviceFlushesItsEpoch() {
        var collapser = EpochCollapser<String, UTCTime, Fix>(quietInterval: 0.35)
        _ = collapser.add(tpv(0), now: 10)
        #expect(collapser.flushQuiet(now: 10.2).isEmpty)
        #expect(collapser.flushQuiet(now: 10.4) == [tpv(0)])
        #expect(!collapser.hasPending)
        // The same time again after a flush is a new emission only if gpsd repeats it; it is kept pending.
        _ = collapser.add(tpv(0), now: 11)
        #expect(collapser.hasPending)
    }

    @Test func devicesAreCollapsedSeparately() {
        var collapser = EpochCollapser<String, UTCTime, Fix>()
        _ = collapser.add(tpv(0, device: "/dev/a"), now: 0)
        _ = collapser.add(tpv(0, device: "/dev/b"), now: 0)
        #expect(collapser.add(tpv(1, device: "/dev/a"), now: 1) == [tpv(0, device: "/dev/a")])
        #expect(collapser.flush(device: "/dev/b") == [tpv(0, device: "/dev/b")])
    }

    @Test func fixesWithoutTimePassThrough() {
        var collapser = EpochCollapser<String, UTCTime, Fix>()
        let timeless = Fix(device: "/dev/a", mode: .threeD, latitude: 1, longitude: 2)
        #expect(collapser.add(timeless, now: 0) == [timeless])
        #expect(collapser.add(timeless, now: 0) == [timeless])
    }
}

@Suite struct StreamStateTests {
    let activated = UTCTime(seconds: 1_700_000_000)

    func feed(_ state: inout StreamState, _ reports: [Report]) -> [LiveEvent] {
        reports.flatMap { state.events(for: $0, host: "h", port: "p") }
    }

    @Test func firstWatchIsWatchingAndDevicesListedBecomeActive() {
        var state = StreamState(watchedDevice: nil)
        let version = GPSDVersion(release: "3.22", protocolMajor: 3, protocolMinor: 14)
        let events = feed(&state, [
            .version(version),
            .devices([DeviceInfo(path: "/dev/pts/1", activated: activated)]),
            .watch(enabled: true),
        ])
        #expect(events.contains(.deviceActivated(DeviceInfo(path: "/dev/pts/1", activated: activated))))
        #expect(events.last == .watching(host: "h", port: "p", version: version))
    }

    @Test func gpsdGoingAwayIsOneLossAndTheNextWatchIsBack() {
        var state = StreamState(watchedDevice: nil)
        _ = feed(&state, [.watch(enabled: true)])
        // gpsd's loss is told apart from the receiver's.
        #expect(state.connectionLost("gpsd closed the connection") == .gpsdLost(reason: "gpsd closed the connection"))
        // Further failed reconnections say nothing more.
        #expect(state.connectionLost("again") == nil)
        #expect(feed(&state, [.watch(enabled: true)]) == [.receiverBack])
    }

    @Test func theLastDeviceClosingIsALossAndItsReturnIsBack() {
        var state = StreamState(watchedDevice: nil)
        let device = DeviceInfo(path: "/dev/pts/1", activated: activated)
        #expect(feed(&state, [.watch(enabled: true), .device(device), .fix(tpv(0))]).last == .fix(tpv(0)))
        let closed = feed(&state, [.device(DeviceInfo(path: "/dev/pts/1"))])
        #expect(closed == [.deviceClosed(path: "/dev/pts/1"), .receiverLost(reason: "/dev/pts/1 closed")])
        #expect(feed(&state, [.device(device)]) == [.deviceActivated(device), .receiverBack])
    }

    /// A replugged receiver back on its old path, gpsd's close notice missed (dropped for a slow client): a
    /// command's `Can't open` answer for that path is its close, and the path's next activation is announced
    /// again, where before it passed as a plain report and the device stayed unknown.
    @Test func aDeviceGpsdCannotOpenIsClosedAndItsReturnAnnounced() {
        var state = StreamState(watchedDevice: nil)
        let device = DeviceInfo(path: "/dev/pts/1", activated: activated)
        _ = feed(&state, [.watch(enabled: true), .device(device)])
        // Other refusals, and one for a device not active, say nothing.
        #expect(state.events(forAnswer: .refused(message: "Type of /dev/pts/1 is unknown.")).isEmpty)
        #expect(state.events(forAnswer: .refused(message: "Can't open /dev/pts/9.")).isEmpty)
        #expect(state.events(forAnswer: .answered(.device(device))).isEmpty)
        #expect(
            state.events(forAnswer: .refused(message: "Can't open /dev/pts/1."))
                == [.deviceClosed(path: "/dev/pts/1"), .receiverLost(reason: "/dev/pts/1 cannot be opened")])
        #expect(state.activeDevices.isEmpty)
        #expect(feed(&state, [.device(device)]) == [.deviceActivated(device), .receiverBack])
    }

    /// A replugged receiver's activation notice lost (dropped for a slow client): its first fix makes it
    /// active, once; a fix from a device not watched does not.
    @Test func aFixFromAnUnknownDeviceActivatesIt() {
        var state = StreamState(watchedDevice: nil)
        let device = DeviceInfo(path: "/dev/pts/1", activated: activated)
        _ = feed(&state, [.watch(enabled: true), .device(device), .device(DeviceInfo(path: "/dev/pts/1"))])
        var fix = tpv(0)
        fix.device = "/dev/pts/1"
        let time = fix.time ?? UTCTime(seconds: 0)
        #expect(
            state.events(forFixFrom: "/dev/pts/1", fix: fix)
                == [.deviceActivated(DeviceInfo(path: "/dev/pts/1", activated: time)), .receiverBack])
        #expect(state.events(forFixFrom: "/dev/pts/1", fix: fix).isEmpty)
        var watching = StreamState(watchedDevice: "/dev/pts/2")
        #expect(watching.events(forFixFrom: "/dev/pts/1", fix: fix).isEmpty)
        #expect(watching.activeDevices.isEmpty)
    }

    @Test func devicesNotWatchedAreIgnored() {
        var state = StreamState(watchedDevice: "/dev/pts/2")
        let other = DeviceInfo(path: "/dev/pts/1", activated: activated)
        #expect(feed(&state, [.device(other)]) == [.report(.device(other))])
        #expect(state.activeDevices.isEmpty)
    }
}

@Suite struct ReconnectBackoffTests {
    @Test func doublesUpToTheCap() {
        let backoff = ReconnectBackoff(initial: 0.1, maximum: 2)
        #expect(backoff.delay(afterFailures: 0) == 0.1)
        #expect(backoff.delay(afterFailures: 1) == 0.2)
        #expect(backoff.delay(afterFailures: 3) == 0.8)
        #expect(backoff.delay(afterFailures: 5) == 2)
        #expect(backoff.delay(afterFailures: 1000) == 2)
    }
}

/// The session's SKY decoding without the satellites list must give the same DOPs and counts as with it.
@Suite struct SatelliteSummaryTests {
    @Test func summaryKeepsDopsAndCountsOfTheFullDecode() throws {
        let line = #"{"class":"SKY","device":"/dev/pts/1","xdop":0.63,"ydop":0.85,"vdop":1.50,"tdop":0.89,"hdop":1.10,"gdop":2.01,"pdop":1.80,"nSat":3,"uSat":2,"satellites":[{"PRN":17,"el":72.0,"az":207.0,"ss":32.0,"used":true,"gnssid":0,"svid":17},{"PRN":28,"el":59.0,"az":95.0,"ss":31.0,"used":true,"gnssid":0,"svid":28},{"PRN":11,"el":12.0,"az":132.0,"ss":4.0,"used":false,"gnssid":0,"svid":11}]}"#
        let full = try #require(try ReportDecoder().decode(line: line).sky)
        let summary = try #require(decodeAsLiveSession([line], satelliteDetail: false).first?.sky, "summary decode failed")
        #expect(summary.hdop == full.hdop)
        #expect(summary.vdop == full.vdop)
        #expect(summary.pdop == full.pdop)
        #expect(summary.satellitesUsed == full.satellitesUsed)
        #expect(summary.satellitesVisible == full.satellitesVisible)
        #expect(summary.satellites.isEmpty)
        #expect(full.satellites.count == 3)
    }
}

/// The live session's epoch collapse on raw lines: only the epoch's last TPV is decoded and passed on.
@Suite struct SessionEpochTests {
    let rmc = #"{"class":"TPV","device":"/dev/pts/1","mode":3,"time":"2017-03-31T11:01:24.000Z","lat":55.08884,"lon":38.97645,"speed":78.5}"#
    let gga = #"{"class":"TPV","device":"/dev/pts/1","mode":3,"time":"2017-03-31T11:01:24.000Z","lat":55.08884,"lon":38.97645,"altMSL":2177.0,"speed":78.5}"#
    let next = #"{"class":"TPV","device":"/dev/pts/1","mode":3,"time":"2017-03-31T11:01:25.000Z","lat":55.08895,"lon":38.97756,"altMSL":2177.0}"#
    let noFix = #"{"class":"TPV","device":"/dev/pts/1","mode":1,"time":"2017-03-31T11:01:25.000Z"}"#
    let closed = #"{"class":"DEVICE","path":"/dev/pts/1","activated":0}"#

    func fixes(_ reports: [Report]) -> [Fix] {
        reports.compactMap { if case .fix(let fix) = $0 { fix } else { nil } }
    }

    @Test func theEpochsLastTPVIsPassedOnWhenTheNextBegins() {
        let reports = decodeAsLiveSession([rmc, gga, next], satelliteDetail: true, collapsesEpochs: true)
        let out = fixes(reports)
        #expect(out.count == 2)
        #expect(out.first?.altitudeMSL == 2177)
        #expect(out.first?.time?.iso8601 == "2017-03-31T11:01:24.000Z")
        #expect(out.last?.time?.iso8601 == "2017-03-31T11:01:25.000Z")
    }

    @Test func aLaterTPVWithoutPositionDoesNotReplaceOneWithIt() {
        let out = fixes(decodeAsLiveSession([next, noFix], satelliteDetail: true, collapsesEpochs: true))
        #expect(out.count == 1)
        #expect(out.first?.mode == .threeD)
    }

    @Test func aClosingDeviceGetsItsPendingEpochFirst() {
        let reports = decodeAsLiveSession([rmc, closed], satelliteDetail: true, collapsesEpochs: true)
        #expect(reports.count == 2)
        guard case .fix = reports.first, case .device(let device) = reports.last else {
            Issue.record("expected the fix, then the DEVICE: \(reports)")
            return
        }
        #expect(!device.isActive)
    }

    @Test func withoutCollapsingEveryTPVIsDecoded() {
        #expect(fixes(decodeAsLiveSession([rmc, gga, next], satelliteDetail: true)).count == 3)
    }
}

@Suite struct JSONPeekTests {
    func peek<T>(_ text: String, _ body: (UnsafeBufferPointer<CChar>) -> T) -> T {
        text.utf8CString.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0.dropLast())) }
    }

    @Test func readsMembersNotLookalikes() {
        let line = #"{"class":"TPV","xdevice":"no","device":"/dev/pts/1","mode":3,"time":"2017-03-31T11:01:24.000Z","lat":1.5}"#
        #expect(peek(line) { JSONPeek.className(in: $0) } == "TPV")
        #expect(peek(line) { JSONPeek.hasClass("TPV", in: $0) })
        #expect(!peek(line) { JSONPeek.hasClass("TP", in: $0) })
        #expect(peek(line) { JSONPeek.stringValue(of: "device", in: $0) } == "/dev/pts/1")
        #expect(peek(line) { JSONPeek.integerValue(of: "mode", in: $0) } == 3)
        #expect(peek(line) { JSONPeek.hasMember("lat", in: $0) })
        #expect(!peek(line) { JSONPeek.hasMember("lon", in: $0) })
        #expect(peek(#"{"class":"DEVICE","activated":0}"#) { JSONPeek.integerValue(of: "activated", in: $0) } == 0)
        #expect(peek(#"{"class":"DEVICE","activated":"2026-11-30T04:32:17.949Z"}"#) { JSONPeek.integerValue(of: "activated", in: $0) } == nil)
    }

    @Test func textKeysCompareWholeTexts() {
        func key(_ text: String) -> TextKey { peek(#"{"k":"\#(text)"}"#) { JSONPeek.textKey(of: "k", in: $0)! } }
        #expect(key("2017-03-31T11:01:24.000Z") == key("2017-03-31T11:01:24.000Z"))
        #expect(key("2017-03-31T11:01:24.000Z") != key("2017-03-31T11:01:25.000Z"))
        let long = String(repeating: "a", count: 70)
        #expect(key(long + "x") == key(long + "x"))
        #expect(key(long + "x") != key(long + "y"))
        #expect(key("") != key("a"))
    }
}

@Suite struct QuietDeadlineTests {
    @Test func theEarliestPendingEpochSetsTheDeadline() {
        var collapser = EpochCollapser<String, UTCTime, Fix>(quietInterval: 0.35)
        #expect(collapser.nextQuietDeadline == nil)
        _ = collapser.add(tpv(0, device: "/dev/a"), now: 10)
        _ = collapser.add(tpv(0, device: "/dev/b"), now: 10.2)
        #expect(collapser.nextQuietDeadline == 10.35)
        _ = collapser.add(tpv(0, device: "/dev/a"), now: 10.3)
        #expect(abs((collapser.nextQuietDeadline ?? 0) - 10.55) < 1e-9)
    }
}
