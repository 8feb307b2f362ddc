import SystemInterface
import GPSD
import GPSModel
import Lodestar

#if canImport(Glibc)
import Glibc
#endif

/// `lodestar watch`: every valid fix gpsd reports, as it arrives.
enum WatchCommand {
    static let declaration = CommandDeclaration(
        path: ["watch"],
        abstract: "print every valid fix from gpsd as it arrives",
        discussion: """
            Prints every valid fix (2D or 3D, finite coordinates, with a time) from gpsd as it arrives, one per
            receiver epoch. Keeps running when gpsd restarts or the receiver is unplugged, and says so on stderr.
            What answers on --gpsd must greet as gpsd does (its VERSION banner) within 3 s.
            """,
        options: GPSDAddressOption.declarations(oldSpellings: true) + [
            .value("device", "path", help: "watch only this device", defaultDescription: "all of gpsd's devices"),
        ] + WatchOptions.declarations + [
            .value(
                "no-fix-interval", "seconds",
                help: """
                    while the receiver has no fix, say so on stderr after this many seconds and as often again, \
                    with the satellites seen and used; 0 never
                    """,
                default: ParsedArguments.numberText(NoFixReporter.defaultInterval))
        ],
        exitStatuses: [
            ExitStatusDeclaration(
                .success, "done: --count, --duration, Ctrl-C, SIGTERM, or the reader of the output went away"),
            .usageError,
            ExitStatusDeclaration(
                .unavailable, "gpsd not reachable at start, or what answers is not gpsd (no VERSION banner within 3 s)"),
            .outputNotWritten,
        ],
        body: run(_:context:))

    static func run(_ parsed: ParsedArguments, context: CommandContext) throws(UsageError) -> ExitCode {
        let options = try WatchOptions(parsed)
        let noFixInterval = try noFixInterval(parsed)
        let gpsd = try GPSDAddressOption.address(parsed, context: context)
        let source = LiveReportSource(
            host: gpsd.host, port: gpsd.port,
            device: parsed.string("device"),
            // watch prints satellite counts only; skipping the per-satellite list halves its decoding.
            satelliteDetail: false)
        return WatchLoop(options: options, context: context, noFixInterval: noFixInterval).run(source: source)
    }

    /// `--no-fix-interval`: nil when 0 (never).
    private static func noFixInterval(_ parsed: ParsedArguments) throws(UsageError) -> Double? {
        guard let text = parsed.value("no-fix-interval") else { return NoFixReporter.defaultInterval }
        guard let value = Double(text), value >= 0, value.isFinite else {
            throw UsageError(message: "option '--no-fix-interval' takes a number of seconds, 0 or more, not '\(text)'")
        }
        return value > 0 ? value : nil
    }
}

struct WatchOptions {
    /// --duration: up to a year, so a deadline computed from it stays a number the clock arithmetic holds.
    static let durationRange = 0.001...31_536_000.0

    /// The options `watch` and `demo` share.
    static let declarations: [OptionDeclaration] = [
        .value(
            "format", "format", choices: LocationFormat.allCases.map(\.rawValue),
            help: """
                jsonl: one JSON object per line; text: aligned columns; gpx: a GPX 1.1 track; geojson: a GeoJSON \
                FeatureCollection. gpx and geojson are complete once the command ends (a new track segment after \
                the receiver is lost or a gap of more than 10 s between fixes)
                """,
            default: LocationFormat.text.rawValue),
        .value("count", "n", help: "stop after n fixes"),
        .value("duration", "seconds", help: "stop after this many seconds (at most a year, 31536000)"),
    ]

    var format: LocationFormat
    var count: Int?
    var duration: Double?

    init(_ parsed: ParsedArguments) throws(UsageError) {
        format = try parsed.choice("format", as: LocationFormat.self)
        count = try parsed.positiveInteger("count")
        duration = try parsed.positiveNumber("duration", in: WatchOptions.durationRange)
    }
}

/// The loop `watch` and `demo` share: live events in, location lines out, status on stderr.
struct WatchLoop {
    let options: WatchOptions
    let context: CommandContext
    /// Seconds without a fix before a line on stderr says so, and between such lines; nil never.
    var noFixInterval: Double?

    /// Runs until count, duration, a stop request, `extraStop`, or an output failure. `onWatching` runs
    /// once the watch is in effect (the demo starts feeding then).
    func run(
        source: LiveReportSource, extraStop: @escaping () -> Bool = { false }, onWatching: () -> Void = {}
    ) -> ExitCode {
        var emitter = LocationEmitter(format: options.format, count: options.count, context: context)
        let deadline = options.duration.map { monotonicSeconds() + $0 }
        var noFix = noFixInterval.map { NoFixReporter(interval: $0, now: monotonicSeconds()) }
        let shouldStop = {
            // Looked at every 0.2 s even when gpsd sends nothing, so a silent receiver is reported too.
            if let notice = noFix?.check(at: monotonicSeconds()) { context.say("lodestar: \(notice.sentence)") }
            return emitter.finished || context.shouldStop() || extraStop()
                || deadline.map { monotonicSeconds() >= $0 } ?? false
        }
        do throws(GPSDError) {
            try source.run(shouldStop: shouldStop) { event in
                switch event {
                case .fix(let fix):
                    if let notice = noFix?.observe(fix, at: monotonicSeconds()) {
                        context.say("lodestar: \(notice.sentence)")
                    }
                case .report(.sky(let sky)):
                    noFix?.observe(sky, at: monotonicSeconds())
                default:
                    break
                }
                emitter.handle(event)
                if case .watching = event { onWatching() }
            }
        } catch {
            if case .connectionFailed(let host, let port, _, _) = error {
                context.say(
                    "lodestar: \(error)\n"
                        + "Is gpsd running and listening on \(host):\(port)? Start it with "
                        + "'sudo systemctl start gpsd' (Debian, Raspberry Pi OS), or by hand with "
                        + "'sudo gpsd -N -S \(port) /dev/ttyACM0'; 'lodestar demo' runs without a receiver.")
            } else {
                context.say("lodestar: \(error)")
            }
            emitter.close()
            return .unavailable
        }
        emitter.close()
        return emitter.outcome
    }
}
