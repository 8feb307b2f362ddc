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
            """,
        arguments: [ArgumentDeclaration(name: "file", help: "the capture to write")],
        options: [
            .gpsdHost, .gpsdPort,
            .value("device", "path", help: "record only this device"),
            .flag(
                "raw",
                help: """
                    also keep the receiver's own bytes (a second watch, "raw":2), so the capture can be fed to a \
                    real gpsd ('lodestar replay --through-gpsd')
                    """),
            .value("duration", "seconds", help: "stop after this many seconds"),
            .value("note", "text", help: "a note kept in the capture's header"),
            .flag("force", help: "replace <file> if it exists"),
        ],
        exitStatuses: [
            ExitStatusDeclaration(.success, "done: --duration, Ctrl-C or SIGTERM"),
            .usageError,
            ExitStatusDeclaration(.unavailable, "gpsd not reachable at start"),
            ExitStatusDeclaration(.cannotCreate, "<file> exists (without --force) or cannot be created"),
            ExitStatusDeclaration(
                .ioError,
                "writing failed (disk full, I/O error): every line before the failure stays in the file and replays"),
        ],
        body: run(_:context:))

    static func run(_ parsed: ParsedArguments, context: CommandContext) throws(UsageError) -> ExitCode {
        let host = parsed.string("host") ?? GPSDSession.defaultHost
        let port = try parsed.port("port") ?? GPSDSession.defaultPort
        let device = parsed.string("device")
        let raw = parsed.flags.contains("raw")
        let duration = try parsed.positiveNumber("duration")
        var options = CaptureRecorder.Options(path: try parsed.operand("file"))
        options.replacing = parsed.flags.contains("force")
        options.host = host
        options.device = device
        options.note = parsed.string("note")
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
        let source = LiveReportSource(
            host: host, port: port, device: device, satelliteDetail: false,
            lineObserver: { line in recorder.recordGPSDLine(line) })
        var rawStarted = false
        do throws(GPSDError) {
            try source.run(
                shouldStop: {
                    recorder.syncIfDue()
                    return shouldStop()
                }
            ) { event in
                switch event {
                case .watching(let host, let port, let version):
                    let release = version.map { " \($0.release)" } ?? ""
                    context.say("lodestar record: recording gpsd\(release) at \(host):\(port) to \(options.path)")
                    if raw, !rawStarted {
                        rawStarted = true
                        let started = RawByteWatch.start(
                            host: host, port: port, device: device, shouldStop: shouldStop,
                            onBytes: { recorder.recordReceived($0) },
                            onFinish: { rawFinished.store(true, ordering: .releasing) })
                        if !started {
                            context.say("lodestar record: cannot start the raw watch; recording JSON only")
                            rawFinished.store(true, ordering: .releasing)
                        }
                    }
                case .receiverLost(let reason):
                    context.say("lodestar record: receiver lost (\(reason)); still recording, waiting for it")
                case .receiverBack:
                    context.say("lodestar record: receiver back")
                default:
                    break
                }
            }
        } catch {
            context.say("lodestar record: \(error)\nIs gpsd running and listening on \(host):\(port)?")
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
        var text = "lodestar record: \(summary.gpsdLines) gpsd lines (\(summary.fixes) fixes)"
        if raw { text += ", \(summary.receivedBytes) receiver bytes" }
        text += " in \(TextLine.fixed(summary.seconds, decimals: 1, width: 1)) s to \(options.path)"
        context.say(text)
        return .success
    }
}
