import Simulation
import SystemInterface
import Capture
import Foundation
import Lodestar
import TestSupport
import Testing

@testable import LodestarCLI

#if canImport(FoundationXML)
import FoundationXML
#endif

/// A built-in profile's evaluation of a capture of the repo, as `replay --evaluate` computes it.
private func evaluation(_ capture: String, profile name: String = "car") throws -> Evaluation {
    let profile = try ProfileStore.load(nameOrPath: name)
    return Evaluator(setup: profile.simulationSetup, bound: profile.stalenessBound, name: profile.name)
        .evaluate(try importedCapture(capture))
}

/// Every `<svg …>…</svg>` of a page (the report nests none).
private func svgElements(_ html: String) -> [String] {
    var result: [String] = []
    var rest = html[...]
    while let open = rest.range(of: "<svg "), let close = rest.range(of: "</svg>", range: open.upperBound..<rest.endIndex) {
        result.append(String(rest[open.lowerBound..<close.upperBound]))
        rest = rest[close.upperBound...]
    }
    return result
}

/// Addresses in a page other than the SVG and XHTML namespaces (which name, never fetch).
private func externalReferences(_ html: String) -> [String] {
    let namespaces = ["http://www.w3.org/2000/svg", "http://www.w3.org/1999/xhtml", "http://www.w3.org/1999/xlink"]
    var found: [String] = []
    for scheme in ["http://", "https://"] {
        var rest = html[...]
        while let hit = rest.range(of: scheme) {
            let address = String(rest[hit.lowerBound...].prefix { $0 != "\"" && $0 != " " && $0 != "<" && $0 != ")" })
            if !namespaces.contains(address) { found.append(address) }
            rest = rest[hit.upperBound...]
        }
    }
    return found
}

/// The HTML report of `replay --evaluate --report`: what it holds, checked as text.
@Suite struct EvaluationReportTests {
    @Test func munichReportHoldsTheTrackTheTimelineAndTheFiguresAndNothingExternal() throws {
        let munich = try evaluation("munich-urban-stopgo-31m.nmea")
        let html = EvaluationReport.html(munich, capture: "munich-urban-stopgo-31m.nmea", profile: "car")

        #expect(html.hasPrefix("<!doctype html>"))
        #expect(html.contains("<title>Lodestar evaluation: munich-urban-stopgo-31m.nmea, profile car</title>"))
        #expect(html.contains("receiver <b>\(munich.receiver.name)</b>"))
        #expect(html.contains("staleness bound <b>100 m</b>"))
        let expected = [
            // The track: the truth underneath, coloured by regime on top, what was delivered, a legend.
            "<svg class=\"chart track-map\"", "<path class=\"truth\"", "<path class=\"track tracking\"",
            "<path class=\"delivered\"", "<ul class=\"legend\">", "asleep: off", "acquiring (up, no fix yet)",
            // The timeline: three rows over one axis in minutes.
            "<svg class=\"chart timeline\"", "<g class=\"band-row policy\">", "<g class=\"band-row oracle\">",
            "<path class=\"current\"", "<path class=\"stale\"", "<path class=\"bound\"", ">minutes</text>",
            // The figures: every run, the oracle last, the ratio.
            "<table class=\"figures\">", "<th>while stopped mAh</th>", "<tr class=\"policy\"><th scope=\"row\">profile:car</th>",
            "<th scope=\"row\">always-on</th>", "<th scope=\"row\">stop-timeout</th>",
            "<tr class=\"oracle\"><th scope=\"row\">oracle</th>", "Energy / oracle: <b>",
        ]
        for element in expected { #expect(html.contains(element), "missing \(element)") }
        if let interval = munich.interval {
            #expect(html.contains("<th scope=\"row\">interval:\(Int(interval.seconds))</th>"))
        }

        // Self-contained: nothing fetched, nothing run.
        #expect(externalReferences(html) == [])
        for forbidden in ["<script", "<link", "<img", "<iframe", "@import", "src=", "href="] {
            #expect(!html.contains(forbidden), "the report has \(forbidden)")
        }
        #expect(!html.replacingOccurrences(of: "url(#", with: "").contains("url("), "a url() other than a fragment")

        // Each drawing is well-formed XML (escaping included).
        let svgs = svgElements(html)
        #expect(svgs.count >= 2)
        for svg in svgs {
            let parser = XMLParser(data: Data(svg.utf8))
            #expect(parser.parse(), "an SVG of the report is not well-formed: \(String(describing: parser.parserError))")
        }
        #expect(html.utf8.count < 400_000, "\(html.utf8.count) bytes for a 31-minute drive")
    }

    @Test func reportIsTheSameBytesForTheSameInput() throws {
        let first = EvaluationReport.html(try evaluation("munich-urban-stopgo-31m.nmea"), capture: "m.nmea", profile: "car")
        let second = EvaluationReport.html(try evaluation("munich-urban-stopgo-31m.nmea"), capture: "m.nmea", profile: "car")
        #expect(first == second)
    }

    @Test func renoReportMarksWhereTheReceiverSleptPausedAndResumed() throws {
        let reno = try evaluation("garmin-drive-reno-tahoe-2h43m.nmea")
        try #require(!reno.pauses.isEmpty, "the car profile no longer pauses on the Reno drive; pick a capture that sleeps")
        let html = EvaluationReport.html(reno, capture: "garmin-drive-reno-tahoe-2h43m.nmea", profile: "car")
        #expect(html.contains("The receiver slept <b>"))
        #expect(html.contains("<circle class=\"sleep"), "no disc where the receiver slept standing")
        #expect(html.contains("<rect class=\"band off\"") || html.contains("<rect class=\"band standby\""))
        let paused = html.components(separatedBy: "<g class=\"event paused\"><title>paused at ").count - 1
        let resumed = html.components(separatedBy: "<g class=\"event resumed\"><title>resumed at ").count - 1
        // Each marked twice: on the map and on the timeline.
        #expect(paused == 2 * reno.pauses.count)
        #expect(resumed == 2 * reno.pauses.count { $0.resumedAt != nil })
        #expect(html.contains("<table class=\"pauses\">"))
        // A 3-hour drive stays a reasonable file: the drawing is thinned to about a pixel.
        #expect(html.utf8.count < 400_000, "\(html.utf8.count) bytes for a 3-hour drive")
        // Its two stands are parks, said as the table says them; the whole system only when a board is named.
        #expect(html.contains("<li>parked 2x, 0.8 h: "), "no parks in the report")
        #expect(!html.contains("whole system"))
        let board = try #require(BoardModel.named("zero2w"))
        let withBoard = EvaluationReport.html(
            reno, capture: "garmin-drive-reno-tahoe-2h43m.nmea", profile: "car", system: (board, 20))
        #expect(withBoard.contains("<li>whole system on a Raspberry Pi Zero 2 W (120 mA at 5 V idle): "))
        #expect(withBoard.contains("a 20 Wh battery lasts "))
    }

    @Test func durationsLabelsMarkersAndColoursReadRight() throws {
        let reno = try evaluation("garmin-drive-reno-tahoe-2h43m.nmea")
        let html = EvaluationReport.html(reno, capture: "garmin-drive-reno-tahoe-2h43m.nmea", profile: "car")
        // A duration has no offset sign.
        #expect(EvaluationReport.span(96) == "1 min 36 s")
        #expect(html.contains("the longest ") && !html.contains("the longest +"))
        // The bound's label is in the left margin (the chart starts at x 110), where no line runs.
        #expect(html.contains(#"<text x="104""#) && html.contains(#"class="small bound-label">bound 100 m</text>"#))
        // The timeline's pause and resume discs (r 8, at y 12) never cover one another.
        var centres: [Double] = []
        var rest = Substring(html)
        while let range = rest.range(of: #"<circle cx=""#) {
            rest = rest[range.upperBound...]
            guard let quote = rest.firstIndex(of: "\""), let x = Double(rest[..<quote]),
                rest[quote...].hasPrefix(#"" cy="12" r="8""#)
            else { continue }
            centres.append(x)
        }
        try #require(centres.count >= 2, "no pause or resume on the timeline")
        for (left, right) in zip(centres, centres.dropFirst()) { #expect(right - left >= 17, "\(left) and \(right)") }
        // Tracking and power save are told apart at a glance: far apart in RGB.
        func colour(_ selector: String) -> [Double] {
            guard let range = html.range(of: "\(selector) { stroke: #") else { return [] }
            let hex = html[range.upperBound...].prefix(6)
            return stride(from: 0, to: 6, by: 2).compactMap { offset in
                let start = hex.index(hex.startIndex, offsetBy: offset)
                return UInt8(hex[start..<hex.index(start, offsetBy: 2)], radix: 16).map(Double.init)
            }
        }
        let tracking = colour(".tracking"), powerSave = colour(".powerSave")
        try #require(tracking.count == 3 && powerSave.count == 3)
        let distance = zip(tracking, powerSave).map { ($0 - $1) * ($0 - $1) }.reduce(0, +).squareRoot()
        #expect(distance > 120, "tracking \(tracking) and power save \(powerSave) are \(distance) apart")
    }

    @Test func textIsEscaped() throws {
        #expect(EvaluationReport.escape("<a href='x'>\"Tom\" & Jerry</a>")
            == "&lt;a href=&#39;x&#39;&gt;&quot;Tom&quot; &amp; Jerry&lt;/a&gt;")
        let html = EvaluationReport.html(
            try evaluation("munich-urban-stopgo-31m.nmea"), capture: "<script>alert(1)</script>&.nmea", profile: "c\"a<r")
        #expect(!html.contains("<script>"))
        #expect(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;&amp;.nmea"))
        #expect(html.contains("c&quot;a&lt;r"))
    }

    @Test func numbersAreFormattedByHand() {
        #expect(EvaluationReport.coordinate(12.34) == "12.3")
        #expect(EvaluationReport.coordinate(-0.04) == "0")
        #expect(EvaluationReport.coordinate(-3.06) == "-3.1")
        #expect(EvaluationReport.coordinate(7.0) == "7")
        #expect(EvaluationReport.coordinate(.nan) == "0")
        #expect(EvaluationReport.clock(65) == "+1 min 05 s")
        #expect(EvaluationReport.clock(3725) == "+1 h 02 min 05 s")
        #expect(Timeline.niceCeiling(137) == 200)
        #expect(Timeline.niceCeiling(125) == 200)
        #expect(Timeline.niceCeiling(2100) == 2500)
        #expect(Timeline.niceCeiling(100) == 100)
    }
}

/// The report in a real browser: Chromium from Debian (scripts/setup installs it), headless.
@Suite(.tags(.browser)) struct EvaluationReportBrowserTests {
    static var chromium: String? {
        if let configured = ProcessInfo.processInfo.environment["LODESTAR_CHROMIUM"], !configured.isEmpty {
            return configured
        }
        return ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Runs headless Chromium with `arguments` (in its own process group under coreutils' timeout, so its
    /// helper processes go with it); its standard output.
    static func runChromium(_ chromium: String, _ arguments: [String], folder: String, name: String) throws -> String {
        let common = [
            "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
            "--no-first-run", "--user-data-dir=\(folder)/profile-\(name)",
        ]
        let timeout = "/usr/bin/timeout"
        let useTimeout = FileManager.default.isExecutableFile(atPath: timeout)
        let process = try ChildProcess(
            executable: useTimeout ? timeout : chromium,
            arguments: (useTimeout ? ["-k", "3", "25", chromium] : []) + common + arguments,
            standardOutput: "\(folder)/\(name).out", standardError: "\(folder)/\(name).err")
        guard let status = process.waitForExit(timeout: 30) else {
            process.terminate(grace: 2)
            throw TimedOut(what: "chromium \(name) (30 s)")
        }
        let errors = (try? String(contentsOfFile: "\(folder)/\(name).err", encoding: .utf8)) ?? ""
        #expect(status == 0, "chromium \(name) exited with wait status \(status): \(errors.suffix(2000))")
        return (try? String(contentsOfFile: "\(folder)/\(name).out", encoding: .utf8)) ?? ""
    }

    @Test(.timeLimit(.minutes(1)))
    func munichReportRendersInHeadlessChromium() throws {
        let chromium = try #require(
            Self.chromium,
            "Chromium is not installed: run scripts/setup (it installs Debian's chromium), or set LODESTAR_CHROMIUM")
        let folder = try temporaryFolder("report")
        defer { try? FileManager.default.removeItem(atPath: folder) }

        // The report as a user makes it.
        let report = folder + "/munich.html"
        let output = MemorySink()
        let errors = MemorySink()
        let code = LodestarCommand.main(
            arguments: [
                "replay", Fixtures.path("munich-urban-stopgo-31m.nmea"), "--profile", "car",
                "--evaluate", "--report", report,
            ],
            context: CommandContext(standardOutput: output, standardError: errors, shouldStop: { false }))
        #expect(code == 0, "replay --report: \(errors.text)")
        #expect(output.text.contains("oracle"))

        // The DOM after load: the elements are there, parsed as SVG and tables.
        let dom = try Self.runChromium(chromium, ["--dump-dom", "file://" + report], folder: folder, name: "dom")
        let expected = [
            "<svg class=\"chart track-map\"", "class=\"track tracking\"", "class=\"truth\"", "class=\"legend\"",
            "<svg class=\"chart timeline\"", "class=\"band-row policy\"", "class=\"current\"", "class=\"stale\"",
            "class=\"bound\"", "<table class=\"figures\">", "<tr class=\"oracle\">",
        ]
        for element in expected { #expect(dom.contains(element), "the DOM Chromium built has no \(element)") }

        // A screenshot: a PNG of the window's size, with something drawn in it.
        let screenshot = folder + "/munich.png"
        _ = try Self.runChromium(
            chromium, ["--screenshot=" + screenshot, "--window-size=1200,1600", "file://" + report], folder: folder,
            name: "screenshot")
        let png = [UInt8](try Data(contentsOf: URL(fileURLWithPath: screenshot)))
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]), "not a PNG")
        try #require(png.count > 24)
        let width = png[16..<20].reduce(0) { $0 << 8 | Int($1) }
        let height = png[20..<24].reduce(0) { $0 << 8 | Int($1) }
        #expect(width == 1200 && height == 1600, "screenshot \(width)×\(height)")
        // A blank 1200×1600 page compresses to a few kB; the drawn report to well over 20 kB.
        #expect(png.count > 20_000, "the screenshot is \(png.count) bytes: blank?")
        if let keep = ProcessInfo.processInfo.environment["LODESTAR_REPORT_SCREENSHOT"], !keep.isEmpty {
            try? FileManager.default.removeItem(atPath: keep)
            try FileManager.default.copyItem(atPath: screenshot, toPath: keep)
        }
    }
}
