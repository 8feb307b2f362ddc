import Policy
import Simulation
import ReceiverEmulation
import SystemInterface
import Capture
import GPSD
import GPSModel
import Lodestar

#if canImport(Glibc)
import Glibc
#endif

/// `lodestar replay`: a capture (or raw log) back through the pipeline, as `watch` would have printed it.
enum ReplayCommand {
    /// --speed n: below 0.01 a replay never gets anywhere (1e-300 waited forever); above 1e6 it is `max`.
    static let speedRange = 0.01...1_000_000.0

    static let declaration = CommandDeclaration(
        path: ["replay"],
        abstract: "replay a capture or raw log and print its locations",
        discussion: """
            Replays a capture (from 'lodestar record' or 'lodestar import') or a raw NMEA/UBX log (imported on
            the fly with gpsd's gpsdecode) and prints what 'lodestar watch' printed, one location per receiver
            epoch. The capture's gpsd reports are decoded by libgps as live ones are, on a virtual clock.
            """,
        arguments: [ArgumentDeclaration(name: "file", help: "a capture, or a raw NMEA/UBX log")],
        options: [
            SpeedOption.declaration(
                range: speedRange, default: "max",
                help: "as fast as possible (paces the replay without --profile)"),
            .value(
                "format", "format", choices: LocationFormat.allCases.map(\.rawValue),
                help: "jsonl, text, gpx or geojson, as for watch", default: LocationFormat.text.rawValue),
            .flag(
                "through-gpsd",
                help: """
                    write the capture's raw receiver bytes into a private gpsd through a pty, paced by t and \
                    --speed, and read the fixes back through the live path
                    """),
            .value("count", "n", help: "stop after n locations"),
            .value(
                "profile", "name|file",
                help: """
                    run the power policy of this profile (a built-in name, a file, or a name in \
                    /etc/lodestar/profiles) with the receiver simulated: while the policy has it down its fixes \
                    do not exist, and after a wake the first fix comes after the receiver model's time to first \
                    fix. jsonl then also prints {"type":"regime",...} and {"type":"event",...} lines, in time \
                    order, every line with t (seconds since the start) and timestamp; text prints them as '#' \
                    lines. Deterministic: the same input, the same bytes
                    """,
                excludes: "through-gpsd"),
            ConnectionOption.declaration(
                help: """
                    how the simulated receiver is wired: usb (a u-blox on its own USB never reaches backup) or \
                    uart instead of the profile's receiver.connection, or auto, the profile's; only with --profile
                    """),
            .flag(
                "evaluate",
                help: """
                    instead of the locations, print how good the profile is on this capture: energy, staleness, \
                    track error, pauses and resumes, next to the always-on, interval and stop-timeout baselines \
                    and the oracle, as a table
                    """,
                requires: "profile"),
            .flag("json", help: "print the evaluation as one JSON object with every figure", requires: "evaluate"),
            BoardOption.declaration,
            BoardOption.batteryDeclaration,
            .value(
                "report", "file",
                help: "also write the evaluation as one self-contained HTML file (map, timeline, figures)",
                requires: "evaluate"),
            .flag("force", help: "replace the --report file if it exists", requires: "report"),
        ],
        exitStatuses: [
            ExitStatusDeclaration(
                .success, "done: the end of the file, --count, Ctrl-C, SIGTERM, or the reader of the output went away"),
            .usageError,
            ExitStatusDeclaration(
                .dataError,
                "the file is not a usable capture or log (FILE:LINE: what is wrong; empty; no fix; unknown version)"),
            ExitStatusDeclaration(.noInput, "the file or the profile file cannot be read, or no profile has that name"),
            ExitStatusDeclaration(.unavailable, "gpsd or gpsdecode unavailable"),
            ExitStatusDeclaration(.cannotCreate, "the --report file exists (without --force)"),
            ExitStatusDeclaration(.ioError, "the output or the --report file could not be written"),
            .profileNotValid,
            ExitStatusDeclaration(.interrupted, "SIGINT before an evaluation was complete: nothing printed"),
            ExitStatusDeclaration(.terminated, "SIGTERM before an evaluation was complete: nothing printed"),
        ],
        body: run(_:context:))

    static func run(_ parsed: ParsedArguments, context: CommandContext) throws(UsageError) -> ExitCode {
        let path = try parsed.operand("file")
        let format = try parsed.choice("format", as: LocationFormat.self)
        let count = try parsed.positiveInteger("count")
        let throughGPSD = parsed.flags.contains("through-gpsd")
        let profileName = parsed.string("profile")
        let evaluate = parsed.flags.contains("evaluate")
        let evaluationJSON = parsed.flags.contains("json")
        let reportPath = parsed.string("report")
        let speed = try SpeedOption.factor(parsed, in: speedRange)
        let system = try BoardOption.given(parsed)
        if system != nil, !evaluate { throw UsageError(message: "--board needs --evaluate") }

        var profile: Profile?
        if let profileName {
            switch ProfileInput.load(profileName, command: "replay", context: context) {
            case .success(let loaded): profile = loaded
            case .failure(let failure): return failure.code
            }
        }
        if parsed.string("connection") != nil, profile == nil {
            throw UsageError(message: "--connection needs --profile")
        }
        if let connection = ConnectionOption.given(parsed) { profile?.receiver.connection = connection }
        if evaluate {
            // The evaluation is one table (or JSON object) for the whole capture, computed as fast as it can be.
            for (option, why) in [
                ("count", "it judges the whole capture"), ("format", "use --json for machine-readable figures"),
                ("speed", "it is computed as fast as possible"),
            ] where parsed.values[option] != nil {
                throw UsageError(message: "--\(option) does not apply to --evaluate: \(why)")
            }
        }
        if throughGPSD {
            // A first pass finds the first rx line (and any damage before it), so a capture without receiver
            // bytes is refused before a gpsd is started; the second is fed as it is read.
            let quiet = MemorySink()
            let scanContext = CommandContext(
                standardOutput: context.standardOutput, standardError: quiet, shouldStop: context.shouldStop)
            switch CaptureInput.open(path, command: "replay", context: scanContext) {
            case .success(let scan):
                var hasReceiverBytes = false
                if let code = scan.forEachLine(command: "replay", context: scanContext, { line, _ in
                    if case .received = line.payload { hasReceiverBytes = true }
                    return !hasReceiverBytes
                }) {
                    _ = context.standardError.write(quiet.text)
                    return code
                }
                guard hasReceiverBytes || context.shouldStop() else {
                    context.say(
                        "lodestar replay: \(path) has no receiver bytes (rx lines) to feed to gpsd; record with "
                            + "--raw, or import a raw log, to replay through gpsd")
                    return .dataError
                }
            case .failure(let failure):
                _ = context.standardError.write(quiet.text)
                return failure.code
            }
            let stream: CaptureStream
            switch CaptureInput.open(path, command: "replay", context: context) {
            case .success(let opened): stream = opened
            case .failure(let failure): return failure.code
            }
            var emitter = LocationEmitter(
                format: format, count: count, context: context, name: "lodestar replay", origin: .replay,
                announcesStream: false)
            emitter.open()
            let fed = StreamedReceiverBytes(stream, speed: speed)
            let positions: PositionCount
            switch replayThroughGPSD(fed, emitter: &emitter, context: context) {
            case .success(let count): positions = count
            case .failure(let failure):
                emitter.close()
                return failure.code
            }
            if let failure = fed.failure {
                emitter.close()
                return failure
            }
            return endLocations(
                &emitter, seenLive: fed.seenLive.result, positions: positions, path: path, context: context)
        }
        if let reportPath, !parsed.flags.contains("force"), access(reportPath, F_OK) == 0 {
            context.say("lodestar replay: \(reportPath) exists; use --force to replace it")
            return .cannotCreate
        }
        let stream: CaptureStream
        switch CaptureInput.open(path, command: "replay", context: context) {
        case .success(let opened): stream = opened
        case .failure(let failure): return failure.code
        }
        if let profile, evaluate {
            return evaluateProfile(
                stream, profile: profile, json: evaluationJSON, reportPath: reportPath, system: system, context: context)
        }
        if let profile {
            return simulate(stream, profile: profile, format: format, count: count, speed: speed, context: context)
        }
        var emitter = LocationEmitter(
            format: format, count: count, context: context, name: "lodestar replay", origin: .replay,
            announcesStream: false)
        emitter.open()
        var positions = PositionCount()
        var seenLive = FirstFixesSeenLive.Collector(started: stream.header.started)
        let failure = stream.replay(
            command: "replay", context: context, speed: speed, isDone: { emitter.finished },
            onEvent: { _, event in
                positions.observe(event)
                emitter.handle(event)
            },
            onAnnotation: { t, annotation in seenLive.add(t: t, annotation) })
        if let failure {
            emitter.close()
            return failure
        }
        return endLocations(&emitter, seenLive: seenLive.result, positions: positions, path: path, context: context)
    }

    /// The end of a replay that printed locations: the times to first fix seen live, the output closed, and 65
    /// when the capture had no fix at all.
    private static func endLocations(
        _ emitter: inout LocationEmitter, seenLive: FirstFixesSeenLive, positions: PositionCount, path: String,
        context: CommandContext
    ) -> ExitCode {
        listFirstFixesSeenLive(seenLive, emitter: &emitter, context: context)
        emitter.close()
        if emitter.outcome != .success { return emitter.outcome }
        if positions.timed == 0, !context.shouldStop() {
            context.say("lodestar replay: \(path) " + positions.noFix(doing: "replay"))
            return .dataError
        }
        return .success
    }

    /// The capture's position fixes, with a time (a location) and without (gpsd could not date them).
    struct PositionCount {
        var timed = 0
        var untimed = 0

        mutating func observe(_ event: LiveEvent) {
            guard case .fix(let fix) = event, fix.hasPosition else { return }
            if fix.time == nil { untimed += 1 } else { timed += 1 }
        }

        /// Why there is nothing to `doing`, when `timed` is 0.
        func noFix(doing: String) -> String {
            untimed > 0
                ? "has \(untimed) positions but none with a time, so nothing to \(doing) (\(Fix.untimedPositionsCause))"
                : "has no position fix to \(doing) (the receiver never had one)"
        }
    }

    /// The policy of `profile` on the capture, with the receiver simulated; its locations, regimes and events
    /// printed in time order, paced by `speed` when given.
    private static func simulate(
        _ stream: CaptureStream, profile: Profile, format: LocationFormat, count: Int?, speed: Double?,
        context: CommandContext
    ) -> ExitCode {
        var emitter = LocationEmitter(
            format: format, count: count, context: context, name: "lodestar replay", origin: .replay,
            announcesStream: false)
        emitter.open()
        context.say("lodestar replay: " + SimulationLine.receiverNote(profile: profile))
        let started = stream.header.started
        let run = SimulationRun(setup: profile.simulationSetup)
        var seenLive = FirstFixesSeenLive.Collector(started: stream.header.started)
        func show(_ output: SimulationOutput) {
            switch output {
            case .locations(let t, let locations):
                for location in locations where !emitter.finished { emitter.print(location, t: t) }
            case .regime(let t, let regime, let reason):
                if !regime.producesFixes { emitter.breakSegment() }
                emitter.printAnnotation(
                    SimulationLine.regime(t: t, started: started, regime, reason: reason, format: format))
            case .event(let t, let kind, let detail):
                emitter.printAnnotation(
                    SimulationLine.event(t: t, started: started, kind, detail: detail, format: format))
            }
        }
        var positions = PositionCount()
        let failure = stream.replay(
            command: "replay", context: context, speed: speed, isDone: { emitter.finished },
            onEvent: { t, event in
                positions.observe(event)
                for input in TruthInput.inputs(for: event, assembler: &run.assembler) { run.feed(t: t, input, onOutput: show) }
            },
            onAnnotation: { t, annotation in seenLive.add(t: t, annotation) })
        if let failure {
            emitter.close()
            return failure
        }
        let cut = emitter.finished || context.shouldStop()
        let summary = run.finish(onOutput: emitter.finished ? { _ in } : show)
        listFirstFixesSeenLive(seenLive.result, emitter: &emitter, context: context)
        emitter.close()
        if emitter.outcome != .success { return emitter.outcome }
        if summary.trueFixes == 0, !cut {
            context.say("lodestar replay: \(stream.path) " + positions.noFix(doing: "replay"))
            return .dataError
        }
        let down = TextLine.fixed(summary.downShare * 100, decimals: 1, width: 1)
        let until =
            emitter.finished
            ? " (stopped by --count at t=\(TextLine.fixed(summary.lastT, decimals: 1, width: 1)) s)"
            : context.shouldStop() ? " (stopped by \(context.stopName) at t=\(TextLine.fixed(summary.lastT, decimals: 1, width: 1)) s)" : ""
        context.say(
            "lodestar replay: profile \(profile.name): receiver down \(down) % of "
                + "\(TextLine.fixed(summary.duration, decimals: 0, width: 1)) s; \(emitter.printed) "
                + "locations delivered of \(summary.trueFixes) fixes (\(summary.producedFixes) produced while up)\(until)")
        return .success
    }

    /// `--evaluate`: the figures of the profile, the baselines and the oracle.
    private static func evaluateProfile(
        _ stream: CaptureStream, profile: Profile, json: Bool, reportPath: String?,
        system: (board: BoardModel, batteryWh: Double?)?, context: CommandContext
    ) -> ExitCode {
        let path = stream.path
        let run = EvaluationRun(
            Evaluator(setup: profile.simulationSetup, bound: profile.stalenessBound, name: profile.name),
            keepsDetail: reportPath != nil)
        var seenLive = FirstFixesSeenLive.Collector(started: stream.header.started)
        var positions = PositionCount()
        let failure = stream.replay(
            command: "replay", context: context,
            onEvent: { t, event in
                positions.observe(event)
                run.feed(t: t, event: event)
            },
            onAnnotation: { t, annotation in seenLive.add(t: t, annotation) })
        if let failure { return failure }
        if context.shouldStop() {
            context.say(
                "lodestar replay: stopped by \(context.stopName) at t=\(TextLine.fixed(stream.lastT, decimals: 1, width: 1)) s "
                    + "of \(path): the evaluation is cut, nothing printed" + (reportPath.map { ", \($0) not written" } ?? ""))
            return context.stopCode
        }
        let evaluation = run.finish()
        guard evaluation.trueFixes > 0 else {
            context.say("lodestar replay: \(path) " + positions.noFix(doing: "evaluate"))
            return .dataError
        }
        let name = path.split(separator: "/").last.map(String.init) ?? path
        let seen = seenLive.result
        if let reportPath {
            let html = EvaluationReport.html(evaluation, capture: name, profile: profile.name, system: system)
            do throws(SystemError) {
                let writer = try CaptureFileWriter(path: reportPath, replacing: true)
                try writer.write(Array(html.utf8))
                try writer.close()
            } catch {
                context.say("lodestar replay: cannot write the report \(reportPath): \(error.reason)")
                return .ioError
            }
        }
        let text =
            json
            ? EvaluationFormat.json(evaluation, capture: name, profile: profile.name, seenLive: seen, system: system)
            : EvaluationFormat.table(evaluation, capture: name, profile: profile.name, seenLive: seen, system: system)
        return context.writeOutput(text, name: "lodestar replay") ? .success : .ioError
    }

    /// The capture's times to first fix seen live, after the locations: `#` lines in text; in the formats
    /// whose output is a document or machine-read lines, the title line on stderr. Nothing without any.
    private static func listFirstFixesSeenLive(
        _ seenLive: FirstFixesSeenLive, emitter: inout LocationEmitter, context: CommandContext
    ) {
        guard !seenLive.isEmpty else { return }
        if emitter.format == .text {
            emitter.printAnnotation(seenLive.textLines(prefix: "# ").map { $0 + "\n" }.joined())
        } else {
            context.say("lodestar replay: " + seenLive.title)
        }
    }

    /// Feeds the capture's `rx` bytes to a private gpsd on a pty and prints what it reports. The fixes with a
    /// position it reported.
    private static func replayThroughGPSD(
        _ fed: StreamedReceiverBytes, emitter: inout LocationEmitter, context: CommandContext
    ) -> Result<PositionCount, CaptureInput.Failure> {
        var options = PrivateGPSD.Options()
        // Nothing must be written to the "receiver" but what the capture holds.
        options.readOnly = true
        // A gpsd that does not activate its pty (seen on a loaded machine) is replaced, with a new pty.
        guard
            let (gpsd, terminal) = context.startPrivateGPSD(
                options: options, { try PseudoTerminal() }, terminal: { $0 }, discard: { $0.close() },
                failurePrefix: "lodestar replay: cannot start a private gpsd: ")
        else { return .failure(CaptureInput.Failure(code: .unavailable)) }
        defer {
            gpsd.stop()
            terminal.close()
        }
        let feed = BackgroundFeed()
        let source = LiveReportSource(host: "127.0.0.1", port: String(gpsd.port), satelliteDetail: false)
        var positions = PositionCount()
        do throws(GPSDError) {
            try source.run(shouldStop: { feed.isDone || emitter.finished || context.shouldStop() }) { event in
                positions.observe(event)
                if case .watching = event {
                    feed.start { stop in fed.feed(to: terminal, context: context) { stop() || context.shouldStop() } }
                }
                emitter.handle(event)
            }
        } catch {
            context.say("lodestar replay: the private gpsd went away: \(error)")
            feed.stop()
            return .failure(CaptureInput.Failure(code: .unavailable))
        }
        feed.stop()
        feed.waitUntilDone()
        return .success(positions)
    }
}

/// A capture's receiver bytes (its `rx` lines) read from the file as they are written to the pty, paced by
/// `t` and the speed, so `replay --through-gpsd` holds one line at a time. The feed's thread alone uses it
/// until the feed is done; the command reads `failure` and `seenLive` after that.
final class StreamedReceiverBytes: @unchecked Sendable {
    private let stream: CaptureStream
    private let speed: Double?
    /// The exit code of a capture found damaged while it was fed (said on stderr).
    private(set) var failure: ExitCode?
    private(set) var seenLive: FirstFixesSeenLive.Collector

    init(_ stream: CaptureStream, speed: Double?) {
        self.stream = stream
        self.speed = speed
        seenLive = FirstFixesSeenLive.Collector(started: stream.header.started)
    }

    func feed(to terminal: PseudoTerminal, context: CommandContext, shouldStop: () -> Bool) {
        var pacer: Pacer?
        var written = true
        failure = stream.forEachLine(command: "replay", context: context) { line, bytes in
            switch line.payload {
            case .event(let event):
                seenLive.add(t: line.t, .event(event))
                return true
            case .received(let range):
                // Checked as base64 when the line was read.
                let data = Base64.decode(UnsafeBufferPointer(rebasing: bytes[range])) ?? []
                let clock = pacer ?? Pacer(speed: speed, origin: line.t)
                pacer = clock
                guard !shouldStop(), clock.wait(until: line.t, shouldStop: shouldStop) else { return false }
                written = terminal.write(data)
                return written
            default:
                return true
            }
        }
        if failure == nil, written, !shouldStop() { _ = terminal.waitUntilRead() }
    }
}
