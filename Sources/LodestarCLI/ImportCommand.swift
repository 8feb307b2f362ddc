import SystemInterface
import Capture
import GPSD
import Lodestar

#if canImport(Glibc)
import Glibc
#endif

/// `lodestar import`: a raw receiver log into a capture file.
enum ImportCommand {
    static let declaration = CommandDeclaration(
        path: ["import"],
        abstract: "turn a raw NMEA/UBX log into a capture file",
        discussion: """
            Turns a raw NMEA or UBX log (gpsd's test logs, 'gpspipe -R' output, a logger's file) into a capture:
            gpsd's offline decoder gpsdecode decodes it, each record is timed from the receiver's own timestamps
            (a raw log has no timing of its own), and the log's bytes are kept per epoch so the capture can also
            be fed to a real gpsd ('lodestar replay --through-gpsd'). The log's '#' header lines become the
            capture's notes.
            """,
        arguments: [ArgumentDeclaration(name: "log", help: "the raw NMEA or UBX log to import")],
        options: [
            // `-o` is the short form everyone types.
            .value("output", "file", short: "o", help: "the capture to write", isRequired: true),
            .flag("force", help: "replace <file> if it exists"),
        ],
        exitStatuses: [
            ExitStatusDeclaration(.success, "done"),
            .usageError,
            ExitStatusDeclaration(
                .dataError, "the log is empty, is already a capture, has no fix or cannot be decoded"),
            ExitStatusDeclaration(.noInput, "the log cannot be read"),
            ExitStatusDeclaration(.unavailable, "gpsdecode is not installed"),
            ExitStatusDeclaration(.cannotCreate, "<file> exists (without --force) or cannot be created"),
            ExitStatusDeclaration(.ioError, "writing <file> failed"),
        ],
        body: run(_:context:))

    static func run(_ parsed: ParsedArguments, context: CommandContext) throws(UsageError) -> ExitCode {
        let logPath = try parsed.operand("log")
        let outputPath = try parsed.required("output")
        let force = parsed.flags.contains("force")

        let raw: [UInt8]
        do throws(SystemError) {
            raw = try readWholeFile(logPath)
        } catch {
            context.say("lodestar import: cannot read \(logPath): \(error.reason)")
            return .noInput
        }
        guard raw.contains(where: { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }) else {
            context.say("lodestar import: \(logPath) is empty: there is nothing to import")
            return .dataError
        }
        if CaptureReader.looksLikeCapture(raw) {
            context.say("lodestar import: \(logPath) is already a capture (JSON lines); replay it as it is")
            return .dataError
        }
        let capture: [UInt8]
        switch CaptureInput.importRaw(logPath, raw: raw, command: "import", context: context) {
        case .success(let imported): capture = imported
        case .failure(let failure): return failure.code
        }
        let writer: CaptureFileWriter
        do throws(SystemError) {
            writer = try CaptureFileWriter(path: outputPath, replacing: force)
        } catch {
            let hint = error.code == EEXIST ? " (use --force to replace it)" : ""
            context.say("lodestar import: cannot create \(outputPath): \(error.reason)\(hint)")
            return .cannotCreate
        }
        do throws(SystemError) {
            // One write per line, as a recording: a full disk leaves whole lines and says where it stopped.
            var start = 0
            while start < capture.count {
                var end = start
                while end < capture.count, capture[end] != 0x0A { end += 1 }
                try writer.write(Array(capture[start..<min(end + 1, capture.count)]))
                start = end + 1
            }
            try writer.close()
        } catch {
            context.say(
                "lodestar import: writing \(outputPath) failed: \(error.reason); the lines before the failure are "
                    + "in the file")
            return .ioError
        }
        let summary = (try? CaptureReader.read(capture)).map { contents in
            let fixes = contents.lines.count {
                guard case .gpsd(let range) = $0.payload else { return false }
                return contents.bytes[range].starts(with: Array(#"{"class":"TPV""#.utf8))
            }
            let duration = contents.lines.last.map { TextLine.fixed($0.t, decimals: 0, width: 1) } ?? "0"
            return "\(contents.gpsdLineCount) gpsd reports (\(fixes) TPV), \(contents.receivedLineCount) "
                + "receiver epochs, \(duration) s"
        }
        context.say("lodestar import: wrote \(outputPath): \(summary ?? "\(capture.count) bytes")")
        return .success
    }
}

extension SystemError {
    /// The system's words for the error alone ("No such file or directory").
    var reason: String {
        strerror(code).map { String(cString: $0) } ?? "errno \(code)"
    }
}
