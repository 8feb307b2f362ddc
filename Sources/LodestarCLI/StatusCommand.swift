import Daemon
import GPSModel
import JSON
import Lodestar
import Simulation
import SystemInterface

#if canImport(Glibc)
    import Glibc
#endif

/// `lodestar status`: what the running service last wrote to its status file, and whether it is still alive.
enum StatusCommand {
    static let declaration = CommandDeclaration(
        path: ["status"],
        abstract: "what the running service is doing: regime, last fix, receiver, energy saved, last error",
        discussion: """
            Reads the status file 'lodestar run' rewrites every few seconds in its runtime directory and prints
            the regime the receiver is in and why, the age of the last fix, the receiver and how it is powered,
            the fixes delivered, the estimated charge drawn since start against always-on, and the last error.
            On a Raspberry Pi it knows (or with --board), the whole system's share of always-on follows the
            receiver's: the board draws far more than the receiver.
            It also checks that the service's process is alive and that the status is fresh; a status not
            updated for three update intervals is flagged (the service may be hung).
            """,
        options: [
            .value("runtime-dir", "dir", help: "the service's runtime directory", default: DaemonConfiguration().runtimeDirectory),
            .flag("json", help: "print the status as one JSON object, with 'state' running, stale or stopped"),
            BoardOption.declaration, BoardOption.batteryDeclaration(requiresBoard: false),
        ],
        exitStatuses: [
            ExitStatusDeclaration(.success, "the service is running (its status may be stale: it says so)"),
            .usageError,
            ExitStatusDeclaration(.dataError, "the status file is damaged"),
            ExitStatusDeclaration(.noInput, "the status file cannot be read (permission)"),
            ExitStatusDeclaration(.unavailable, "the service is not running (no status file, or its process is gone)"),
            .outputNotWritten,
        ],
        body: status(_:context:))

    /// Whether the service that wrote a status still runs, and whether it keeps its status up to date.
    enum Liveness: String {
        case running, stale, stopped
    }

    static func status(_ parsed: ParsedArguments, context: CommandContext) throws(UsageError) -> ExitCode {
        let battery = try parsed.positiveNumber("battery", in: BoardOption.batteryRange)
        let system = (try BoardOption.given(parsed)?.board ?? thisBoard()).map { (board: $0, batteryWh: battery) }
        let file = StatusFile(runtimeDirectory: parsed.value("runtime-dir") ?? DaemonConfiguration().runtimeDirectory)
        let status: DaemonStatus
        do throws(DaemonFileError) {
            status = try file.read()
        } catch {
            switch error {
            case .missing:
                context.say("lodestar is not running (no \(file.path))")
                return .unavailable
            case .damaged:
                context.say("lodestar status: \(error)")
                return .dataError
            case .unreadable, .unwritable:
                context.say("lodestar status: cannot read the status: \(error)")
                if let hint = ServiceFiles.permissionHint(for: file.path) { context.say("lodestar status: \(hint)") }
                return .noInput
            }
        }
        let now = UTCTime.now()
        let liveness = liveness(of: status, now: now)
        let timeWarning = TimeConsumers.warning(
            refclocks: TimeConsumers.chronyReadsGPSD(),
            profile: try? ProfileStore.system.load(nameOrPath: status.profile), regime: status.regime)
        var text: String
        if parsed.flags.contains("json") {
            var object = json(status, liveness: liveness, now: now, system: system)
            if let timeWarning, case .object(var members) = object {
                members.insert(("timeConsumerWarning", .string(timeWarning)), at: 2)
                object = .object(members)
            }
            text = JSONWriter.text(object)
        } else {
            text = lines(status, liveness: liveness, now: now, system: system).joined(separator: "\n") + "\n"
            if let timeWarning { text += timeWarning + "\n" }
        }
        guard context.writeOutput(text, name: "lodestar status") else { return .ioError }
        return liveness == .stopped ? .unavailable : .success
    }

    /// Stopped when its process is gone (a process we may not signal still runs); stale when the status is
    /// older than three update intervals (ten seconds at least, for a slow Pi).
    static func liveness(of status: DaemonStatus, now: UTCTime) -> Liveness {
        guard kill(status.pid, 0) == 0 || errno == EPERM else { return .stopped }
        return now.interval(since: status.updated) > max(3 * status.updateInterval, 10) ? .stale : .running
    }

    /// The Raspberry Pi this runs on, from the device tree's model; nil on any other machine.
    static func thisBoard() -> BoardModel? {
        guard let bytes = try? readWholeFile("/proc/device-tree/model", limit: 256) else { return nil }
        return BoardModel.detect(deviceTreeModel: String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self))
    }

    /// The service's charge since start as the whole system's on `board`.
    static func systemEnergy(_ status: DaemonStatus, board: BoardModel) -> SystemEnergy {
        SystemEnergy(
            board: board, seconds: max(status.updated.interval(since: status.started), 0),
            receiver: status.chargeMilliampHours, alwaysOn: status.alwaysOnMilliampHours)
    }

    static func lines(
        _ status: DaemonStatus, liveness: Liveness, now: UTCTime, system: (board: BoardModel, batteryWh: Double?)? = nil
    ) -> [String] {
        var lines: [String] = []
        let age = now.interval(since: status.updated)
        switch liveness {
        case .running, .stale:
            lines.append(
                "lodestar is running: pid \(status.pid), profile \(status.profile), up "
                    + StatusText.duration(now.interval(since: status.started)))
            if liveness == .stale {
                lines.append(
                    "warning: the status was last updated \(StatusText.ago(age)) (it is written every "
                        + "\(StatusText.duration(status.updateInterval))): the service may be hung")
            }
        case .stopped:
            lines.append(
                "lodestar is not running (pid \(status.pid) is gone) since \(status.updated.iso8601) "
                    + "(\(StatusText.ago(age))); its last status:")
        }
        let reason = status.regimeReason.isEmpty ? "" : " (\(status.regimeReason))"
        lines.append("regime: \(status.regime.rawValue)\(reason)")
        if let lastFix = status.lastFix {
            var fix = "last fix: " + StatusText.ago(now.interval(since: lastFix))
            if let location = status.lastLocation { fix += ", " + position(location) }
            lines.append(fix)
        } else {
            lines.append("last fix: none yet")
        }
        let receiver = [status.device, status.receiver].compactMap { $0 }.joined(separator: ", ")
        lines.append(
            "receiver: \(receiver.isEmpty ? "none identified yet" : receiver); mechanism: \(status.mechanism)")
        if ["closeDevice", "sirf", "none"].contains(status.mechanism) {
            lines.append("no power control for this receiver: the policy filters, the receiver runs")
        }
        lines.append("fixes delivered: \(status.fixesDelivered)")
        lines.append(
            "energy since start: "
                + EnergyLedger.summary(charge: status.chargeMilliampHours, alwaysOn: status.alwaysOnMilliampHours))
        if let system {
            lines.append(EvaluationFormat.systemLine(systemEnergy(status, board: system.board), batteryWh: system.batteryWh))
        }
        if let store = status.store {
            var line = "store: \(store); \(status.storeDropped) unsent locations dropped when full"
            line += ", \(status.storeLost) lost (it could not write them)"
            lines.append(line)
        }
        for output in status.outputs {
            let state = output.failure.map { "cannot write: \($0)" } ?? "writing"
            lines.append("output \(output.name): \(state); \(output.lost) locations lost since start")
        }
        for upload in status.uploads {
            let success = upload.lastSuccess.map { "last success " + StatusText.ago(now.interval(since: $0)) } ?? "no success yet"
            var line = "upload \(upload.name): \(upload.state), \(upload.queueDepth) waiting, \(success); "
                + "\(upload.sent) sent over \(upload.connections) connection\(upload.connections == 1 ? "" : "s")"
            if let error = upload.lastError, upload.queueDepth > 0 { line += "; last error: \(error)" }
            lines.append(line)
        }
        if let lastError = status.lastError {
            let when = status.lastErrorAt.map { " (\(StatusText.ago(now.interval(since: $0))))" } ?? ""
            lines.append("last error: \(lastError)\(when)")
            for other in status.errors.dropLast().reversed() { lines.append("also still true: \(other)") }
        } else {
            lines.append("last error: none")
        }
        return lines
    }

    /// `48.8583700 N, 2.2944800 E, ±4.2 m`.
    static func position(_ location: Location) -> String {
        let latitude = StatusText.fixed(abs(location.latitude), decimals: 7) + (location.latitude < 0 ? " S" : " N")
        let longitude =
            StatusText.fixed(abs(location.longitude), decimals: 7) + (location.longitude < 0 ? " W" : " E")
        let accuracy = location.horizontalAccuracy.map { ", ±" + StatusText.fixed($0, decimals: 1) + " m" } ?? ""
        return "\(latitude), \(longitude)\(accuracy)"
    }

    /// The status file's object, with what this command worked out: `state`, the status's age and the saving.
    static func json(
        _ status: DaemonStatus, liveness: Liveness, now: UTCTime, system: (board: BoardModel, batteryWh: Double?)? = nil
    ) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            ("state", .string(liveness.rawValue)),
            ("statusAgeSeconds", .number((now.interval(since: status.updated) * 10).rounded() / 10)),
        ]
        let saving = EnergyLedger.saving(charge: status.chargeMilliampHours, alwaysOn: status.alwaysOnMilliampHours)
        if let saving {
            members.append(("savingPercent", .number((saving * 10).rounded() / 10)))
        }
        if let system {
            members.append(
                ("system", EvaluationFormat.systemJSON(systemEnergy(status, board: system.board), batteryWh: system.batteryWh)))
        }
        members.append(("status", StatusFile.value(status)))
        return .object(members)
    }
}
