import SystemInterface
import Capture
import GPSD
import GPSModel
import Lodestar
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// `lodestar record`: a live gpsd session into a capture file.
enum RecordCommand {
    static let declaration = CommandDeclaration(
        path: ["record"],
        abstract: "record a gpsd session to a capture file",
        discussion: """
            Records everything gpsd reports, verbatim, into a capture file (docs/capture-format.md) until Ctrl-C,
            SIGTERM or --duration. Each line is complete when written and the file is fsynced every 5 s and at
            the end, so a power cut loses at most the last few seconds. Keeps recording across gpsd restarts.
            What answers on --gpsd must greet as gpsd does (its VERSION banner) within 3 s, or nothing is
            recorded. The file is created when gpsd's first line arrives.

            With --max-size or --rotate-daily, <file> is closed when it would grow past the size or a UTC day
            ends, renamed with the UTC time it started (run.capture becomes run-20261130T210311.000Z.capture),
            and a new <file> started. Each file is a complete capture that replays alone; none is removed.
            """,
        arguments: [ArgumentDeclaration(name: "file", help: "the capture to write")],
        options: GPSDAddressOption.declarations(oldSpellings: true) + [
            .value("device", "path", help: "record only this device"),
            .flag(
                "raw",
                help: """
                    also keep the receiver's own bytes (a second watch, "raw":2), so the capture can be fed to a \
                    real gpsd ('lodestar replay --through-gpsd')
                    """),
            .value("duration", "seconds", help: "stop after this many seconds (at most a year, 31536000)"),
            .value("note", "text", help: "a note kept in the capture's header"),
            .value(
                "max-size", "size",
                help: """
                    start a new file before <file> grows past this size: bytes, or with K, M or G (1024, 1024²,                     1024³ bytes); at least 4096
                    """),
            .flag("rotate-daily", help: "start a new file at each UTC midnight"),
            .flag("force", help: "replace <file> if it exists"),
        ],
        exitStatuses: [
            ExitStatusDeclaration(.success, "done: --duration, Ctrl-C or SIGTERM"),
            .usageError,
            ExitStatusDeclaration(
                .unavailable,
                "gpsd not reachable at start, or what answers is not gpsd (no VERSION banner within 3 s); no file is created"),
            ExitStatusDeclaration(.cannotCreate, "<file> exists (without --force) or cannot be created"),
            ExitStatusDeclaration(
                .ioError,
                "writing failed (disk full, I/O error): every line before the failure stays in the file and replays"),
        ],
        body: run(_:context:))

    static func run(_ parsed: ParsedArguments, context: CommandContext) throws(UsageError) -> ExitCode {
        let (host, port) = try GPSDAddressOption.address(parsed, context: context)
        let device = parsed.string("device")
        let raw = parsed.flags.contains("raw")
        let duration = try parsed.positiveNumber("duration", in: WatchOptions.durationRange)
        var options = CaptureRecorder.Options(path: try parsed.operand("file"))
        options.replacing = parsed.flags.contains("force")
        options.host = host
        options.device = device
        options.note = parsed.string("note")
        let maxSize = try maximumSize(parsed)
        if maxSize != nil || parsed.flags.contains("rotate-daily") {
            options.rotation = CaptureRecorder.Rotation(
                maxBytes: maxSize, daily: parsed.flags.contains("rotate-daily"), keep: nil)
        }
        // Said before connecting, so nobody waits for gpsd to learn the file was there all along.
        if !options.replacing, access(options.path, F_OK) == 0 {
            context.say("lodestar record: \(options.path) exists; use --force to replace it")
            return .cannotCreate
        }

        let recorder = CaptureRecorder(options: options)
        let deadline = duration.map { monotonicSeconds() + $0 }
        let stopRequested = Atomic<Bool>(false)
        let rawFinished = Atomic<Bool>(!raw)
        let shouldStop: @Sendable () -> Bool = {
            stopRequested.load(ordering: .relaxed) || context.shouldStop() || recorder.failure != nil
                || deadline.map { monotonicSeconds() >= $0 } ?? false
        }
        // The raw watch connects again the moment this one does, so its bytes resume with gpsd's reports.
        let rawReconnect = ReconnectSignal()
        var onConnected: (@Sendable () -> Void)?
        if raw { onConnected = { rawReconnect.signal() } }
        let source = LiveReportSource(
            host: host, port: port, device: device, satelliteDetail: false,
            lineObserver: { line in recorder.recordGPSDLine(line) },
            onConnected: onConnected)
        var rawStarted = false
        var lostGPSD = false
        do throws(GPSDError) {
            try source.run(
                shouldStop: {
                    recorder.syncIfDue()
                    return shouldStop()
                }
            ) { event in
                switch event {
                case .watching(let host, let port, let version):
                    // gpsd's WATCH echo, which the recorder has just been given, completes the header and creates
                    // the file: said only once it is there (a file that cannot be created is told at the end).
                    if recorder.hasFile {
                        let release = version.map { " \($0.release)" } ?? ""
                        context.say("lodestar record: recording gpsd\(release) at \(host):\(port) to \(options.path)")
                    }
                    if raw, !rawStarted {
                        rawStarted = true
                        let started = RawByteWatch.start(
                            host: host, port: port, device: device, reconnectNow: rawReconnect, shouldStop: shouldStop,
                            onBytes: { recorder.recordReceived($0) },
                            onFinish: { rawFinished.store(true, ordering: .releasing) })
                        if !started {
                            context.say("lodestar record: cannot start the raw watch; recording JSON only")
                            rawFinished.store(true, ordering: .releasing)
                        }
                    }
                case .receiverLost(let reason):
                    lostGPSD = false
                    context.say("lodestar record: receiver lost (\(reason)); still recording, waiting for it")
                case .gpsdLost(let reason):
                    lostGPSD = true
                    context.say("lodestar record: \(reason); still recording, waiting for it to come back")
                case .receiverBack:
                    context.say("lodestar record: \(lostGPSD ? "gpsd at \(host):\(port) back" : "receiver back")")
                default:
                    break
                }
            }
        } catch {
            // Nothing was recorded: lines are kept only after gpsd's banner, which never came.
            _ = recorder.finish()
            if case .notGPSD = error {
                context.say(
                    "lodestar record: \(error)\nNothing recorded, \(options.path) not created. Is \(port) gpsd's port "
                        + "(\(GPSDSession.defaultPort) unless gpsd was started with -S)?")
            } else {
                context.say(
                    "lodestar record: \(error)\nNothing recorded, \(options.path) not created. Is gpsd running and "
                        + "listening on \(host):\(port)?")
            }
            return .unavailable
        }
        stopRequested.store(true, ordering: .relaxed)
        if raw && !rawStarted { rawFinished.store(true, ordering: .releasing) }
        while !rawFinished.load(ordering: .acquiring) { sleepSeconds(0.02) }

        let summary = recorder.summary
        if let failure = recorder.finish() {
            switch failure {
            case .create(let error):
                let hint = error.code == EEXIST ? "; use --force to replace it" : ""
                context.say("lodestar record: cannot create \(options.path): \(error.reason)\(hint)")
                return .cannotCreate
            case .write(let error):
                context.say(
                    "lodestar record: writing \(options.path) failed: \(error.reason). Recording stopped; the "
                        + "\(summary.gpsdLines) gpsd lines before the failure are in the file and replay.")
                return .ioError
            }
        }
        guard summary.gpsdLines > 0 else {
            // Stopped before gpsd's first line (the recorder creates the file with it): no file to speak of.
            context.say("lodestar record: stopped before gpsd sent anything; \(options.path) not created")
            return .success
        }
        var text = "lodestar record: \(summary.gpsdLines) gpsd lines (\(summary.fixes) fixes)"
        if raw { text += ", \(summary.receivedBytes) receiver bytes" }
        text += " in \(TextLine.fixed(summary.seconds, decimals: 1, width: 1)) s to \(options.path)"
        if summary.rotations > 0 {
            text += " (the last part; \(summary.rotations) earlier parts beside it, named with their start times)"
        }
        context.say(text)
        return .success
    }

    /// `--max-size`: bytes, or a whole number with K, M or G (powers of 1024, an optional B after).
    static func maximumSize(_ parsed: ParsedArguments) throws(UsageError) -> Int? {
        guard let text = parsed.string("max-size") else { return nil }
        var digits = Substring(text)
        if digits.last == "B" || digits.last == "b" { digits = digits.dropLast() }
        var multiplier = 1
        switch digits.last {
        case "k", "K": multiplier = 1 << 10
        case "m", "M": multiplier = 1 << 20
        case "g", "G": multiplier = 1 << 30
        default: break
        }
        if multiplier > 1 { digits = digits.dropLast() }
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), let value = Int(digits), value > 0,
            value <= Int.max / multiplier, value * multiplier >= 4096
        else {
            throw UsageError(
                message: "option '--max-size' takes a size of at least 4096 bytes such as 4096, 50M or 1G, not '\(text)'")
        }
        return value * multiplier
    }
}
