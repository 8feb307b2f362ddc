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

/// Reads a capture, or a raw receiver log imported on the fly, with the messages and exit codes every
/// command that takes one shares: 66 missing, 65 not usable (with `FILE:LINE:`), 69 no gpsdecode.
enum CaptureInput {
    /// The largest capture or log read whole (the demo plays it from memory): a day of `record --raw` is
    /// tens of MiB; more is damage or a device such as /dev/zero. Streamed reads (`open`) have no such limit,
    /// only `CaptureStreamReader.longestLine`.
    static let wholeFileLimit = 64 << 20

    static func load(_ path: String, command: String, context: CommandContext) -> Result<CaptureContents, Failure> {
        switch read(path, command: command, context: context) {
        case .success(let bytes): return contents(of: bytes, path: path, command: command, context: context)
        case .failure(let failure): return .failure(failure)
        }
    }

    /// A capture or log read whole, at most `wholeFileLimit`: 66 unreadable (a directory), 65 too large,
    /// 130/143 stopped while a FIFO or device was waited on.
    static func read(_ path: String, command: String, context: CommandContext) -> Result<[UInt8], Failure> {
        do throws(SystemError) {
            return .success(
                try readWholeFile(path, limit: wholeFileLimit, what: "a capture read whole", shouldStop: context.shouldStop))
        } catch {
            if error.isStop || context.shouldStop() { return .failure(Failure(code: context.stopCode)) }
            context.say("lodestar \(command): cannot read \(path): \(error.reason)")
            return .failure(Failure(code: error.isTooLarge ? .dataError : .noInput))
        }
    }

    private static func contents(
        of bytes: [UInt8], path: String, command: String, context: CommandContext
    ) -> Result<CaptureContents, Failure> {
        guard bytes.contains(where: { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }) else {
            context.say("lodestar \(command): \(path) is empty: it has no capture header and no receiver data")
            return .failure(Failure(code: .dataError))
        }
        var captureBytes = bytes
        if !CaptureReader.looksLikeCapture(bytes) {
            switch importRaw(path, raw: bytes, command: command, context: context) {
            case .success(let imported): captureBytes = imported
            case .failure(let failure): return .failure(failure)
            }
        }
        do throws(CaptureError) {
            let contents = try CaptureReader.read(captureBytes)
            for warning in contents.warnings {
                context.say("lodestar \(command): warning: \(path):\(warning.line ?? 0): \(warning.message)")
            }
            return .success(contents)
        } catch {
            let location = error.line.map { "\(path):\($0)" } ?? path
            context.say("lodestar \(command): \(location): \(error.message)")
            return .failure(Failure(code: .dataError))
        }
    }

    /// A raw log as capture bytes, through gpsdecode: 69 without gpsdecode, 65 with no fix.
    static func importRaw(
        _ path: String, raw: [UInt8], command: String, context: CommandContext
    ) -> Result<[UInt8], Failure> {
        do throws(RawLogImport.Failure) {
            return .success(try RawLogImport.capture(path: path, raw: raw))
        } catch {
            return .failure(Failure(code: report(error, path: path, command: command, context: context)))
        }
    }

    /// A raw log imported into a temporary capture file, streamed (no more than a few MiB in memory
    /// whatever the log's length), then opened to read line by line; the file is gone once read.
    static func importRaw(_ path: String, command: String, context: CommandContext) -> Result<CaptureStream, Failure> {
        guard let folder = TemporaryDirectory(prefix: "lodestar-import") else {
            context.say("lodestar \(command): cannot create a temporary folder to import \(path) into")
            return .failure(Failure(code: .ioError))
        }
        // Unlinked at once: the open file stays readable and nothing is left behind.
        defer { folder.remove() }
        let capturePath = folder.path + "/capture.jsonl"
        do throws(RawLogImport.Failure) {
            // A temporary file needs no periodic fsync; lines go out in blocks of whole lines.
            let writer: CaptureFileWriter
            do throws(SystemError) {
                writer = try CaptureFileWriter(path: capturePath, replacing: false, syncInterval: .infinity)
            } catch {
                throw .output(error, t: 0)
            }
            var block: [UInt8] = []
            _ = try RawLogImport.capture(path: path, shouldStop: context.shouldStop) { line throws(SystemError) in
                block += line
                if block.count >= 64 << 10 {
                    try writer.write(block)
                    block.removeAll(keepingCapacity: true)
                }
            }
            do throws(SystemError) {
                if !block.isEmpty { try writer.write(block) }
                try writer.close()
                return .success(CaptureStream(path: path, prefix: [], file: try ReadableFile(path: capturePath)))
            } catch {
                throw .output(error, t: 0)
            }
        } catch {
            return .failure(Failure(code: report(error, path: path, command: command, context: context)))
        }
    }

    /// Says why a raw log was not imported, with the code for it: 69 gpsdecode unavailable, 65 no fix, 66
    /// unreadable, 74 a capture line not written, 130/143 stopped.
    static func report(
        _ error: RawLogImport.Failure, path: String, command: String, context: CommandContext
    ) -> ExitCode {
        switch error {
        case .decoderUnavailable(let why):
            context.say("lodestar \(command): \(why)")
            return .unavailable
        case .capture(let problem):
            context.say("lodestar \(command): \(path): \(problem.message)")
            return .dataError
        case .unreadable(let problem):
            context.say("lodestar \(command): cannot read \(path): \(problem.reason)")
            return .noInput
        case .output(let problem, _):
            context.say("lodestar \(command): cannot write the capture imported from \(path): \(problem)")
            return .ioError
        case .stopped:
            return context.stopCode
        }
    }

    struct Failure: Error {
        var code: ExitCode
    }

    /// Opens a capture to read line by line (a raw log is imported first, to a temporary file): the header is
    /// read,
    /// the lines are not. Same messages and codes as `load`.
    static func open(_ path: String, command: String, context: CommandContext) -> Result<CaptureStream, Failure> {
        let file: ReadableFile
        do throws(SystemError) {
            file = try ReadableFile(path: path, shouldStop: context.shouldStop)
        } catch {
            context.say("lodestar \(command): cannot read \(path): \(error.reason)")
            return .failure(Failure(code: .noInput))
        }
        // The first bytes tell a capture (JSON lines) from a raw log; they are read again as the capture's.
        var prefix: [UInt8] = []
        var firstByte: UInt8?
        do throws(SystemError) {
            while firstByte == nil {
                let chunk = try file.read(upTo: 64 << 10)
                if chunk.isEmpty { break }
                prefix += chunk
                firstByte = chunk.first { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }
                if context.shouldStop() { break }
            }
        } catch {
            if error.isStop || context.shouldStop() { return .failure(Failure(code: context.stopCode)) }
            context.say("lodestar \(command): cannot read \(path): \(error.reason)")
            return .failure(Failure(code: .noInput))
        }
        if firstByte == nil, context.shouldStop() { return .failure(Failure(code: context.stopCode)) }
        guard let firstByte else {
            context.say("lodestar \(command): \(path) is empty: it has no capture header and no receiver data")
            return .failure(Failure(code: .dataError))
        }
        let stream: CaptureStream
        if firstByte == UInt8(ascii: "{") {
            stream = CaptureStream(path: path, prefix: prefix, file: file)
        } else {
            file.close()
            if context.shouldStop() { return .failure(Failure(code: context.stopCode)) }
            switch importRaw(path, command: command, context: context) {
            case .success(let imported): stream = imported
            case .failure(let failure): return .failure(failure)
            }
        }
        if let code = stream.readHeader(command: command, context: context) { return .failure(Failure(code: code)) }
        return .success(stream)
    }
}

/// A capture read one line at a time from its file (docs/capture-format.md), with `FILE:LINE` messages:
/// a day-long capture is replayed, simulated and evaluated in the memory of one chunk.
final class CaptureStream {
    let path: String
    private var reader: CaptureStreamReader
    private(set) var header = CaptureHeader()
    /// The `t` of the last line read.
    private(set) var lastT = 0.0

    init(path: String, prefix: [UInt8], file: ReadableFile?) {
        self.path = path
        var pending = prefix[...]
        reader = CaptureStreamReader { buffer throws(CaptureError) -> Int in
            if !pending.isEmpty {
                let count = min(buffer.count, pending.count)
                pending.prefix(count).withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
                pending = pending.dropFirst(count)
                return count
            }
            guard let file else { return 0 }
            do throws(SystemError) {
                return try file.read(into: buffer)
            } catch {
                throw CaptureError(.unreadable, line: nil, "cannot read: \(error.reason)")
            }
        }
    }

    /// Nil when the header was read, else the exit code after saying why.
    fileprivate func readHeader(command: String, context: CommandContext) -> ExitCode? {
        do throws(CaptureError) {
            header = try reader.header()
            return nil
        } catch {
            if error.kind == .unreadable, context.shouldStop() { return context.stopCode }
            return report(error, command: command, context: context)
        }
    }

    /// Hands each line to `body` (with the buffer its ranges refer to) until the end, `body` returning false,
    /// or a stop: nil then, else the exit code after saying what is wrong where. Warnings (a torn final line)
    /// are said at the end.
    func forEachLine(
        command: String, context: CommandContext,
        _ body: (CaptureContents.Line, UnsafeBufferPointer<UInt8>) -> Bool
    ) -> ExitCode? {
        var going = true
        do throws(CaptureError) {
            while going, !context.shouldStop() {
                let more = try reader.nextLine { line, bytes in
                    lastT = line.t
                    going = body(line, bytes)
                }
                if !more { break }
            }
        } catch {
            // A FIFO's read given up for SIGINT/SIGTERM is a stop like any other, not a damaged capture.
            if error.kind == .unreadable, context.shouldStop() { return nil }
            return report(error, command: command, context: context)
        }
        for warning in reader.parser.warnings {
            context.say("lodestar \(command): warning: \(path):\(warning.line ?? 0): \(warning.message)")
        }
        if reader.parser.warningsNotKept > 0 {
            context.say("lodestar \(command): warning: \(path): \(reader.parser.warningsNotKept) more lines skipped")
        }
        return nil
    }

    /// Every line through the live path's decoder (`CaptureReplayer`), paced by `speed` from the first line's
    /// `t`, until the end, `isDone` or a stop; the last epoch is flushed only when the end was reached. Nil,
    /// or the exit code after saying what is wrong where.
    func replay(
        command: String, context: CommandContext, speed: Double? = nil, isDone: () -> Bool = { false },
        onEvent: (Double, LiveEvent) -> Void, onAnnotation: (Double, CaptureReplayer.Annotation) -> Void
    ) -> ExitCode? {
        let replayer = CaptureReplayer()
        var pacer: Pacer?
        let failure = forEachLine(command: command, context: context) { line, bytes in
            let clock = pacer ?? Pacer(speed: speed, origin: line.t)
            pacer = clock
            if isDone() || !clock.wait(until: line.t, shouldStop: context.shouldStop) { return false }
            replayer.feed(line, bytes: bytes, onEvent: onEvent, onAnnotation: onAnnotation)
            return true
        }
        if failure == nil, !isDone(), !context.shouldStop() { replayer.finish(onEvent: onEvent) }
        return failure
    }

    private func report(_ error: CaptureError, command: String, context: CommandContext) -> ExitCode {
        let location = error.line.map { "\(path):\($0)" } ?? path
        context.say("lodestar \(command): \(location): \(error.message)")
        return error.kind == .unreadable ? .noInput : .dataError
    }
}
