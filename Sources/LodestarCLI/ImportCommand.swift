import SystemInterface
import Capture
import GPSD
import Lodestar

#if canImport(Glibc)
import Glibc
#endif

/// `lodestar import`: a raw receiver log into a capture file, streamed: neither the log nor the capture is
/// ever held whole.
enum ImportCommand {
    static let declaration = CommandDeclaration(
        path: ["import"],
        abstract: "turn a raw NMEA/UBX log into a capture file",
        discussion: """
            Turns a raw NMEA or UBX log (gpsd's test logs, 'gpspipe -R' output, a logger's file) into a capture:
            gpsd's offline decoder gpsdecode decodes it, each record is timed from the receiver's own timestamps
            (a raw log has no timing of its own), and the log's bytes are kept per epoch so the capture can also
            be fed to a real gpsd ('lodestar replay --through-gpsd'). The log's '#' header lines become the
            capture's notes. The log is read in chunks and each line written as soon as it is known, so a
            day-long log imports in a few MiB of memory; SIGINT or SIGTERM ends it within a second, leaving
            <file> a valid capture cut at the last whole line.
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
            ExitStatusDeclaration(.unavailable, "gpsdecode is not installed, fails or decodes nothing for 120 s"),
            ExitStatusDeclaration(.cannotCreate, "<file> exists (without --force) or cannot be created"),
            ExitStatusDeclaration(.ioError, "writing <file> failed: it holds the lines before the failure"),
            ExitStatusDeclaration(.interrupted, "SIGINT: <file> holds the capture up to the time said (cut)"),
            ExitStatusDeclaration(.terminated, "SIGTERM: <file> holds the capture up to the time said (cut)"),
        ],
        body: run(_:context:))

    static func run(_ parsed: ParsedArguments, context: CommandContext) throws(UsageError) -> ExitCode {
        let logPath = try parsed.operand("log")
        let outputPath = try parsed.required("output")
        let force = parsed.flags.contains("force")

        // The first byte that is not blank tells an empty log, or a capture, from a raw log.
        var firstByte: UInt8?
        do throws(SystemError) {
            let file = try ReadableFile(path: logPath, shouldStop: context.shouldStop)
            defer { file.close() }
            while firstByte == nil, !context.shouldStop() {
                let chunk = try file.read(upTo: 64 << 10)
                if chunk.isEmpty { break }
                firstByte = chunk.first { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }
            }
        } catch where !error.isStop {
            context.say("lodestar import: cannot read \(logPath): \(error.reason)")
            return .noInput
        } catch {
            // A FIFO or device waited on until SIGINT/SIGTERM: the stop below says so.
        }
        if context.shouldStop() {
            context.say("lodestar import: stopped by \(context.stopName) before writing \(outputPath)")
            return context.stopCode
        }
        guard let firstByte else {
            context.say("lodestar import: \(logPath) is empty: there is nothing to import")
            return .dataError
        }
        if firstByte == UInt8(ascii: "{") {
            context.say("lodestar import: \(logPath) is already a capture (JSON lines); replay it as it is")
            return .dataError
        }

        // The file is created with the header, once the log is known to have a fix: a log that cannot be
        // imported leaves an existing <file> untouched.
        var writer: CaptureFileWriter?
        var createFailure: SystemError?
        let result = Result { () throws(RawLogImport.Failure) -> RawLogImport.Summary in
            try RawLogImport.capture(path: logPath, shouldStop: context.shouldStop) { line throws(SystemError) in
                if writer == nil {
                    do throws(SystemError) {
                        // An fsync a second keeps what the close after a stop must sync to a second's lines,
                        // so SIGTERM ends the import within a second on slow storage too.
                        writer = try CaptureFileWriter(path: outputPath, replacing: force, syncInterval: 1)
                    } catch {
                        createFailure = error
                        throw error
                    }
                }
                // One write per line, as a recording: a full disk or a stop leaves whole lines.
                try writer?.write(line)
            }
        }
        var closeFailure: SystemError?
        do throws(SystemError) {
            try writer?.close()
        } catch {
            closeFailure = error
        }
        switch result {
        case .success(let summary):
            if let closeFailure {
                context.say("lodestar import: writing \(outputPath) failed: \(closeFailure.reason)")
                return .ioError
            }
            let duration = TextLine.fixed(summary.lastT, decimals: 0, width: 1)
            context.say(
                "lodestar import: wrote \(outputPath): \(summary.gpsdLineCount) gpsd reports (\(summary.tpvCount) "
                    + "TPV), \(summary.receivedLineCount) receiver epochs, \(duration) s")
            return .success
        case .failure(.stopped(let t)):
            if let t, writer != nil {
                let end = TextLine.fixed(t, decimals: 0, width: 1)
                context.say(
                    "lodestar import: stopped by \(context.stopName): \(outputPath) holds the capture up to t=\(end) s "
                        + "(cut)")
            } else {
                context.say("lodestar import: stopped by \(context.stopName) before writing \(outputPath)")
            }
            return context.stopCode
        case .failure(.output(let error, _)):
            if let createFailure {
                let hint = createFailure.code == EEXIST ? " (use --force to replace it)" : ""
                context.say("lodestar import: cannot create \(outputPath): \(createFailure.reason)\(hint)")
                return .cannotCreate
            }
            context.say(
                "lodestar import: writing \(outputPath) failed: \(error.reason); the lines before the failure are "
                    + "in the file")
            return .ioError
        case .failure(let failure):
            return CaptureInput.report(failure, path: logPath, command: "import", context: context)
        }
    }
}
