import Daemon
import Forwarding
import GPSModel
import JSON
import LocationStore

/// `lodestar store export`: what the service's location store holds, as jsonl, GPX or GeoJSON.
enum StoreCommand {
    /// Where `lodestar run` keeps its store: `store.sqlite` in its default state directory.
    static let defaultStorePath = DaemonConfiguration().stateDirectory + "/" + LocationStore.fileName

    static let declaration = CommandDeclaration(
        path: ["store"],
        abstract: "the service's store of delivered locations: export it",
        discussion: """
            'lodestar run' keeps every delivered location in an SQLite store until its uploaders have sent it
            (docs/store.md). 'lodestar store export' prints what the store holds.
            """,
        subcommands: [exportDeclaration],
        exitStatuses: ExitStatusDeclaration.union([exportDeclaration.exitStatuses]))

    static let exportDeclaration = CommandDeclaration(
        path: ["store", "export"],
        abstract: "print the stored locations as jsonl, GPX or GeoJSON",
        discussion: """
            Prints the locations in the store in the order they were stored, read a row at a time. jsonl has
            the lines of the service's jsonl output with the row's 'id', the 'reason' it was delivered for and
            when it was 'stored', then the store's events ('type' event); gpx is a GPX 1.1 track and geojson a
            FeatureCollection, with the locations only. The store is opened read-only (the service may be running):
            nothing in it changes, and a damaged store is reported, not moved aside.

              lodestar store export --format gpx --since 2026-12-01T00:00:00Z > december.gpx
            """,
        options: [
            .value(
                "format", "format", choices: ExportFormat.allCases.map(\.rawValue), help: "the output format",
                default: ExportFormat.jsonl.rawValue),
            .value(
                "since", "time",
                help: "only locations (and events) at or after this UTC time, ISO 8601: 2026-12-01T08:00:00Z"),
            .value("store", "file", help: "the store to read (wins over --config)", default: defaultStorePath),
            .value(
                "config", "file",
                help: "read the store where this config puts it: its store.path, under its stateDirectory"),
            .value(
                "coordinates", "system", choices: ["wgs84", "gcj02"],
                help: "the datum of the coordinates written: WGS 84 as received, or China's GCJ-02",
                default: "wgs84"),
        ],
        exitStatuses: [
            ExitStatusDeclaration(.success, "done (or the reader of the output went away)"),
            .usageError,
            ExitStatusDeclaration(
                .dataError, "the store is damaged, is not a store, or was written by a newer lodestar"),
            ExitStatusDeclaration(
                .noInput, "the store (or the config of --config) does not exist or cannot be read, or the config has no store"),
            ExitStatusDeclaration(.config, "the config of --config is not valid"),
            .outputNotWritten,
            ExitStatusDeclaration(.interrupted, "SIGINT: the output ends at the location said (documents closed)"),
            ExitStatusDeclaration(.terminated, "SIGTERM: the output ends at the location said (documents closed)"),
        ],
        body: export(_:context:))

    struct ConfigFailure: Error {
        var lines: [String]
        var code: ExitCode
    }

    /// Where the config at `file` keeps its store: `store.path` resolved under `stateDirectory`.
    static func storePath(config file: String) -> Result<String, ConfigFailure> {
        let configuration: DaemonConfiguration
        do throws(DaemonConfigurationError) {
            configuration = try DaemonConfigurationReader.read(file: file).configuration
        } catch {
            switch error {
            case .notFound, .unreadable: return .failure(ConfigFailure(lines: error.lines, code: .noInput))
            default: return .failure(ConfigFailure(lines: error.lines, code: .config))
            }
        }
        guard let store = configuration.store else {
            return .failure(ConfigFailure(lines: ["\(file) has no store (\"store\" is null)"], code: .noInput))
        }
        return .success(DaemonConfiguration.resolve(store.path, under: configuration.stateDirectory))
    }

    enum ExportFormat: String, CaseIterable {
        case jsonl, gpx, geojson
    }

    /// Why an export stopped before the end of the store (thrown out of the store's row loop).
    private enum Ending {
        case finished, readerGone, outputFailed, stopped
    }

    static func export(_ parsed: ParsedArguments, context: CommandContext) throws(UsageError) -> ExitCode {
        let name = "lodestar store export"
        let format = try parsed.choice("format", as: ExportFormat.self)
        var since: UTCTime?
        if let text = parsed.string("since") {
            guard let time = UTCTime(iso8601: Array(text.utf8)) else {
                throw UsageError(
                    message: "option '--since' takes a UTC time in ISO 8601 (2026-12-01T08:00:00Z), not '\(text)'")
            }
            since = time
        }
        let system = parsed.value("coordinates") ?? ""
        guard let convert = try coordinateConversion(system) else {
            throw UsageError(message: "option '--coordinates' takes wgs84|gcj02, not '\(system)'")
        }
        var path = parsed.value("store") ?? defaultStorePath
        if let config = parsed.string("config"), parsed.string("store") == nil {
            switch storePath(config: config) {
            case .success(let configured): path = configured
            case .failure(let failure):
                for line in failure.lines { context.say("\(name): \(line)") }
                return failure.code
            }
        }
        if let store = parsed.string("store") { path = store }

        let store: LocationStore
        do throws(StoreError) {
            store = try LocationStore(readingOnly: path)
        } catch {
            context.say("\(name): \(error)")
            if error.kind != .missing, let hint = ServiceFiles.permissionHint(for: path) { context.say("\(name): \(hint)") }
            switch error.kind {
            case .missing, .unreadable, .failed: return .noInput
            case .damaged, .notAStore, .newerSchema: return .dataError
            }
        }
        defer { store.close() }

        var printer = LocationPrinter(format: format == .gpx ? .gpx : format == .geojson ? .geojson : .jsonl)
        var ending = Ending.finished
        var exported = 0
        /// Writes one piece; false when the export must end (the reader went away, the write failed).
        func write(_ text: String) -> Bool {
            guard ending == .finished else { return false }
            if text.isEmpty { return true }
            switch context.standardOutput.write(text) {
            case .written: return true
            case .readerGone: ending = .readerGone
            case .failed(let code):
                context.say("\(name): cannot write output: \(CommandContext.reason(code))")
                ending = .outputFailed
            }
            return false
        }
        // Thrown only to leave the row loops; `ending` says why.
        let leave = StoreError(path: path, reason: "export ended")
        do throws(StoreError) {
            _ = write(printer.header())
            try store.forEachLocation(since: since) { row throws(StoreError) in
                // Before the printer sees the location: a GPX segment it opened would then be closed unopened.
                if context.shouldStop() { ending = .stopped }
                guard ending == .finished else { throw leave }
                let location = convert(row.location)
                guard write(format == .jsonl ? jsonLine(row, location: location) : printer.line(for: location)) else {
                    throw leave
                }
                exported += 1
            }
            if format == .jsonl {
                try store.forEachEvent(since: since) { event throws(StoreError) in
                    if context.shouldStop() { ending = .stopped }
                    guard ending == .finished, write(jsonLine(event)) else { throw leave }
                }
            }
        } catch {
            if ending == .finished {
                // The store failed under the export: what was written stays, the document is closed.
                _ = write(printer.footer())
                context.say("\(name): \(error) (after \(exported) locations)")
                return error.kind == .damaged ? .dataError : .noInput
            }
        }
        switch ending {
        case .finished:
            return write(printer.footer()) || ending == .readerGone ? .success : .ioError
        case .readerGone:
            return .success
        case .outputFailed:
            return .ioError
        case .stopped:
            ending = .finished
            let closed = write(printer.footer())
            context.say("\(name): stopped by \(context.stopName) after \(exported) locations; the output ends there")
            return closed || ending == .readerGone ? context.stopCode : .ioError
        }
    }

    /// A location's jsonl line: the service's jsonl line for it, with the store's `id` after `type`, and the
    /// `reason` it was delivered for and when it was `stored` at the end.
    static func jsonLine(_ row: StoredLocation, location: Location) -> String {
        var object = exportedRow("location", id: row.id, timestamp: location.timestamp)
        object.add("latitude", number: location.latitude)
        object.add("longitude", number: location.longitude)
        JSONLine.addMeasurements(of: location, to: &object)
        object.add("reason", string: row.reason.rawValue)
        object.add("stored", string: row.stored.iso8601)
        return object.line
    }

    /// An event's jsonl line: `{"type":"event","id":…,"timestamp":…,"kind":…,"detail":…}`.
    static func jsonLine(_ event: StoredEvent) -> String {
        var object = exportedRow("event", id: event.id, timestamp: event.at)
        object.add("kind", string: event.kind)
        object.add("detail", string: event.detail)
        return object.line
    }

    /// The members every exported line starts with, whatever its type: `{"type":…,"id":…,"timestamp":…`.
    private static func exportedRow(_ type: String, id: Int64, timestamp: UTCTime) -> JSONObject {
        var object = JSONObject()
        object.add("type", string: type)
        object.add("id", integer: Int(id))
        object.add("timestamp", string: timestamp.iso8601)
        return object
    }

    /// The conversion `--coordinates` names (the store holds WGS-84); nil for a name it does not know.
    static func coordinateConversion(_ name: String) throws(UsageError) -> ((Location) -> Location)? {
        CoordinateSystem(rawValue: name).map { system in { $0.converted(to: system) } }
    }
}
