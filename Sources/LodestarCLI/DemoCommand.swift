import ReceiverEmulation
import SystemInterface
import Capture
import GPSD
import GPSModel
import Lodestar

#if canImport(Glibc)
import Glibc
#endif

/// `lodestar demo`: Lodestar working without a receiver. Starts a private gpsd on a free port with a pty as
/// its device, replays a real capture into the pty at the capture's own pace (sped up), and runs `watch`
/// against that gpsd. When the system gpsd already has a receiver, watches that instead.
enum DemoCommand {
    static let declaration = CommandDeclaration(
        path: ["demo"],
        abstract: "replay a bundled real capture through a private gpsd and watch it (no receiver needed)",
        discussion: """
            Without --capture, first looks for a receiver on the system gpsd (localhost:2947) and watches it.
            Otherwise starts a private gpsd (a free port, a pty as its device), replays a real receiver capture
            into it at the capture's own pace times --speed, and prints what 'lodestar watch' prints.
            The bundled capture is \(EmbeddedCapture.name) (18 min of a landing aircraft).
            A capture file (from 'lodestar record --raw' or 'lodestar import') plays its receiver bytes (rx lines),
            paced by their t; one without rx lines cannot be played into gpsd.
            With --profile, an emulated receiver plays the capture instead, and a location manager runs the
            profile against it, powering it with real commands through gpsd: the delivered locations are
            printed, what power control did goes to stderr, and the charge drawn is set against always-on.
            """,
        options: [
            .value(
                "capture", "file",
                help: "a raw NMEA/UBX log, or a capture with receiver bytes (rx lines), to replay instead of the bundled one"),
            SpeedOption.declaration(
                range: speedRange, default: "30", help: "as fast as the emulator keeps pace, the top of that range"),
            .value(
                "profile", "name|file",
                help: "run this power profile against an emulated receiver that obeys its commands (car, bike, …)"),
            BoardOption.declaration(default: defaultBoard), BoardOption.batteryDeclaration(requiresBoard: false),
        ] + WatchOptions.declarations,
        exitStatuses: [
            ExitStatusDeclaration(
                .success,
                "done: --count, --duration, Ctrl-C, SIGTERM, the end of the capture, or the reader of the output went away"),
            .usageError,
            ExitStatusDeclaration(.noInput, "the --capture file is missing or cannot be read (a directory, a FIFO)"),
            ExitStatusDeclaration(
                .dataError,
                "the --capture file is a damaged capture, one without receiver bytes (rx lines), or over 64 MiB"),
            ExitStatusDeclaration(.unavailable, "gpsd is not installed or did not start, or the system gpsd went away"),
            ExitStatusDeclaration(.software, "the bundled capture is damaged in this build"),
            .outputNotWritten,
        ],
        body: run(_:context:))

    /// The emulator's pacing and gpsd's timeouts hold from a hundredth of real time to 10,000 times it.
    static let speedRange = 0.01...10_000.0
    /// With --profile, the closing lines set the receiver's saving beside the whole system's on this board: a
    /// Zero 2 W is the Pi most trackers on a battery run on.
    static let defaultBoard = "zero2w"

    static func run(_ parsed: ParsedArguments, context: CommandContext) throws(UsageError) -> ExitCode {
        let options = try WatchOptions(parsed)
        let speed = try SpeedOption.factor(parsed, in: speedRange) ?? speedRange.upperBound
        let capturePath = parsed.string("capture")
        let system = try BoardOption.given(parsed, default: defaultBoard)

        var profile: Profile?
        if let profileName = parsed.string("profile") {
            switch ProfileInput.load(profileName, command: "demo", context: context) {
            case .success(let loaded): profile = loaded
            // Ctrl-C or SIGTERM while a FIFO given as the profile was read: done, as any demo stop is.
            case .failure where context.shouldStop(): return .success
            case .failure(let failure): return failure.code
            }
        }

        if capturePath == nil, profile == nil, let receiver = systemReceiver() {
            context.say("lodestar demo: the system gpsd has a receiver (\(receiver)); watching it")
            return WatchLoop(options: options, context: context).run(source: LiveReportSource(satelliteDetail: false))
        }

        let captureName: String
        let bytes: [UInt8]
        if let capturePath {
            switch CaptureInput.read(capturePath, command: "demo", context: context) {
            case .success(let read): bytes = read
            case .failure where context.shouldStop(): return .success
            case .failure(let failure): return failure.code
            }
            guard bytes.contains(where: { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }) else {
                // An empty file, or a FIFO with no writer: nothing to play, said before gpsd is started.
                context.say("lodestar demo: \(capturePath) is empty: it has no capture header and no receiver data")
                return .dataError
            }
            captureName = capturePath
        } else {
            guard let embedded = EmbeddedCapture.bytes() else {
                context.say("lodestar demo: the bundled capture is damaged in this build")
                return .software
            }
            captureName = EmbeddedCapture.name + " (bundled)"
            bytes = embedded
        }
        if let profile {
            // The emulator plays fixes, so the log is imported (gpsdecode) as `replay` would.
            let contents: CaptureContents
            switch importedContents(bytes, name: capturePath, context: context) {
            case .success(let imported): contents = imported
            case .failure(let failure): return failure.code
            }
            return PoweredDemo.run(
                contents: contents, captureName: captureName, profile: profile, speed: speed, options: options,
                system: system, context: context)
        }
        let feedPlan: DemoFeed
        switch DemoFeed.plan(bytes, path: capturePath, context: context) {
        case .success(let plan): feedPlan = plan
        case .failure(let failure): return failure.code
        }

        guard
            let (gpsd, terminal) = context.startPrivateGPSD(
                { try PseudoTerminal() }, terminal: { $0 }, discard: { $0.close() }, failurePrefix: "lodestar demo: ")
        else { return .unavailable }
        defer {
            gpsd.stop()
            terminal.close()
        }
        context.say(
            "lodestar demo: replaying \(captureName) (\(feedPlan.summary)) into a private gpsd on port "
                + "\(gpsd.port) through \(terminal.devicePath) at \(TextLine.fixed(speed, decimals: 0, width: 1))x")

        let feeder = CaptureFeeder(speed: speed)
        let feed = BackgroundFeed()
        let source = LiveReportSource(host: "127.0.0.1", port: String(gpsd.port), satelliteDetail: false)
        let code = WatchLoop(options: options, context: context).run(
            source: source, extraStop: { feed.isDone },
            onWatching: { feed.start { stop in _ = feedPlan.feed(feeder, to: terminal) { stop() || context.shouldStop() } } })
        feed.stop()
        if code == .success && !context.shouldStop() { feed.waitUntilDone() }
        return code
    }

    /// The raw log as capture contents: a file by `CaptureInput`, the bundled bytes through a temporary file.
    private static func importedContents(_ bytes: [UInt8], name: String?, context: CommandContext)
        -> Result<CaptureContents, CaptureInput.Failure>
    {
        if let name { return CaptureInput.load(name, command: "demo", context: context) }
        let path = "/tmp/lodestar-demo-\(getpid()).nmea"
        do throws(SystemError) {
            let writer = try CaptureFileWriter(path: path, replacing: true)
            try writer.write(bytes)
            try writer.close()
        } catch {
            context.say("lodestar demo: cannot write \(path): \(error.reason)")
            return .failure(CaptureInput.Failure(code: .ioError))
        }
        defer { unlink(path) }
        return CaptureInput.load(path, command: "demo", context: context)
    }

    /// The first active device of a gpsd on localhost:2947, if there is one (looked at for at most 1.5 s).
    private static func systemReceiver() -> String? {
        guard let session = try? GPSDSession(), (try? session.watch()) != nil else { return nil }
        let deadline = monotonicSeconds() + 1.5
        while monotonicSeconds() < deadline {
            guard case .report(let report)? = try? session.read(timeoutMicroseconds: 100_000) else { continue }
            switch report {
            case .devices(let devices):
                if let active = devices.first(where: \.isActive) { return active.path }
            case .device(let device) where device.isActive:
                return device.path
            case .watch:
                // gpsd lists its devices before echoing the watch: none is active.
                return nil
            default:
                continue
            }
        }
        return nil
    }
}

/// What the demo writes into gpsd's pty: a raw log epoch by epoch, or a capture's `rx` lines (the receiver's
/// bytes) at their `t`. A capture's JSON text is never written: gpsd would read it as noise and report nothing.
enum DemoFeed: Sendable {
    case rawLog(RawLogEpochs)
    case received([(t: Double, bytes: ArraySlice<UInt8>)])

    /// The plan for `bytes`, read from `path` (nil for the bundled capture): 65 with the reason for a capture
    /// that is damaged or has no `rx` lines.
    static func plan(_ bytes: [UInt8], path: String?, context: CommandContext) -> Result<DemoFeed, CaptureInput.Failure> {
        guard let path, CaptureReader.looksLikeCapture(bytes) else { return .success(.rawLog(RawLogEpochs(bytes))) }
        let contents: CaptureContents
        switch CaptureInput.load(path, command: "demo", context: context) {
        case .success(let loaded): contents = loaded
        case .failure(let failure): return .failure(failure)
        }
        let chunks = contents.lines.compactMap { line -> (t: Double, bytes: ArraySlice<UInt8>)? in
            guard case .received(let range) = line.payload else { return nil }
            return (line.t, contents.rawBytes(range)[...])
        }
        guard !chunks.isEmpty else {
            context.say(
                "lodestar demo: \(path) has no receiver bytes (rx lines) to play into gpsd, only what gpsd reported; "
                    + "record with 'lodestar record --raw', or 'lodestar import' the raw log, to make one that plays "
                    + "(or use 'lodestar demo --profile NAME --capture \(path)', whose emulated receiver plays its fixes)")
            return .failure(CaptureInput.Failure(code: .dataError))
        }
        return .success(.received(chunks))
    }

    /// For the status line: how much there is to play.
    var summary: String {
        switch self {
        case .rawLog(let log): "\(log.epochs.count) epochs"
        case .received(let chunks): "\(chunks.count) receiver chunks"
        }
    }

    func feed(_ feeder: CaptureFeeder, to terminal: PseudoTerminal, shouldStop: () -> Bool) -> CaptureFeeder.Outcome {
        switch self {
        case .rawLog(let log): feeder.feed(log, to: terminal, shouldStop: shouldStop)
        case .received(let chunks): feeder.feed(chunks, to: terminal, shouldStop: shouldStop)
        }
    }
}

extension CommandContext {
    /// `PrivateGPSD.startReading` for a command that cannot go on without its private gpsd: nil when it did not
    /// start, said on stderr after `failurePrefix`.
    func startPrivateGPSD<Device>(
        options: PrivateGPSD.Options = PrivateGPSD.Options(), _ makeDevice: () throws -> Device,
        terminal: (Device) -> PseudoTerminal?, discard: (Device) -> Void, failurePrefix: String
    ) -> (gpsd: PrivateGPSD, device: Device)? {
        do {
            return try PrivateGPSD.startReading(options: options, makeDevice, terminal: terminal, discard: discard)
        } catch {
            say(failurePrefix + "\(error)")
            return nil
        }
    }
}
