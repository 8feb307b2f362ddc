import SystemInterface
import GPSModel

#if canImport(Glibc)
import Glibc
#endif

/// Runs gpsd's offline decoder on a raw receiver log and builds a capture from it (`CaptureImporter`),
/// streaming: gpsdecode's output is read from a pipe as it writes it and the log in chunks, and each capture
/// line is handed over as soon as its place is known, so a day-long log is imported in a few MiB.
public enum RawLogImport {
    public enum Failure: Error, CustomStringConvertible {
        /// gpsdecode is not installed, could not be run, failed or hung.
        case decoderUnavailable(String)
        case capture(CaptureError)
        /// The log cannot be read.
        case unreadable(SystemError)
        /// `write` failed; the lines before were written, the last of them at `t`.
        case output(SystemError, t: Double)
        /// `shouldStop` said to stop; the lines up to `t` were written (nil: none, not even the header).
        case stopped(t: Double?)

        public var description: String {
            switch self {
            case .decoderUnavailable(let why): return why
            case .capture(let error): return error.description
            case .unreadable(let error): return "cannot read: \(error)"
            case .output(let error, _): return "\(error)"
            case .stopped: return "stopped"
            }
        }
    }

    /// What the capture holds, for the summary.
    public struct Summary: Sendable {
        public var gpsdLineCount: Int
        public var tpvCount: Int
        public var receivedLineCount: Int
        /// The last line's `t`: the capture's length in seconds.
        public var lastT: Double
    }

    /// Bytes read at a time from the log and from gpsdecode.
    static let chunkSize = 64 << 10
    /// gpsdecode decodes megabytes a second; this long without a byte from it (a log of nothing it can
    /// decode, such as `/dev/zero`, or a hung decoder) ends the import.
    static let decoderSilence = 120.0

    /// The capture for the raw log at `path` (whose bytes are `raw`), as file bytes, built in memory.
    public static func capture(path: String, raw: [UInt8]) throws(Failure) -> [UInt8] {
        guard let executable = findExecutable("gpsdecode") else { throw notInstalled }
        try requireRegularFile(path)
        let decoder = try Decoder(executable: executable, path: path)
        defer { decoder.stop() }
        var decoded: [UInt8] = []
        while true {
            guard let chunk = try decoder.read() else { continue }
            if chunk.isEmpty { break }
            decoded += chunk
        }
        try decoder.finish(shouldStop: { false })
        let name = path.split(separator: "/").last.map(String.init) ?? path
        do throws(CaptureError) {
            return try CaptureImporter.capture(raw: raw, decoded: decoded, deviceName: name)
        } catch {
            throw .capture(error)
        }
    }

    private static let notInstalled = Failure.decoderUnavailable(
        "gpsdecode (gpsd's offline decoder) is not installed: 'sudo apt-get install gpsd-clients'")

    /// Imports the raw log at `path`, handing each capture line (the header first) to `write` as soon as it
    /// is known. Reads gpsdecode's output twice: first up to the first fix (the header's `started`; a log
    /// with no fix at all is refused before anything is written), then all of it, merged with the log's
    /// epochs. `shouldStop` is asked between lines and at least every 0.1 s.
    public static func capture(
        path: String, shouldStop: () -> Bool, write: ([UInt8]) throws(SystemError) -> Void
    ) throws(Failure) -> Summary {
        guard let executable = findExecutable("gpsdecode") else { throw notInstalled }
        try requireRegularFile(path)
        let deviceName = path.split(separator: "/").last.map(String.init) ?? path
        let started = try survey(path: path, executable: executable, deviceName: deviceName, shouldStop: shouldStop)
        let log: ReadableFile
        let notes: [String]
        do throws(SystemError) {
            let prefix = try ReadableFile(path: path)
            notes = CaptureImporter.headerNotes(try prefix.read(upTo: CaptureImporter.notesPrefix))
            prefix.close()
            log = try ReadableFile(path: path)
        } catch {
            throw .unreadable(error)
        }
        return try merge(
            log: log, executable: executable, deviceName: deviceName,
            header: CaptureImporter.header(started: started, deviceName: deviceName, notes: notes),
            shouldStop: shouldStop, write: write)
    }

    /// A raw log is read three times (its notes, gpsdecode's survey, the merge), which a FIFO, a pipe or a
    /// device cannot give: those are refused at once rather than read half or forever.
    private static func requireRegularFile(_ path: String) throws(Failure) {
        do throws(SystemError) {
            let file = try ReadableFile(path: path)
            file.close()
            guard file.isRegularFile else {
                throw SystemError(
                    "read", path, code: ESPIPE,
                    detail: "not a regular file: a raw log is read more than once; copy it to a file first")
            }
        } catch {
            throw .unreadable(error)
        }
    }

    /// The first fix's time, reading gpsdecode's output only as far as it takes; `.capture(noFix)` when the
    /// whole log has no position.
    private static func survey(
        path: String, executable: String, deviceName: String, shouldStop: () -> Bool
    ) throws(Failure) -> UTCTime? {
        var survey = CaptureImporter.Survey(deviceName: deviceName)
        let decoder = try Decoder(executable: executable, path: path)
        defer { decoder.stop() }
        while !survey.isComplete {
            if shouldStop() { throw .stopped(t: nil) }
            guard let chunk = try decoder.read() else { continue }
            if chunk.isEmpty {
                try decoder.finish(shouldStop: shouldStop)
                if shouldStop() { throw .stopped(t: nil) }
                survey.end()
                if let problem = survey.problem { throw .capture(problem) }
                break
            }
            survey.add(chunk)
        }
        return survey.started
    }

    private static func merge(
        log: ReadableFile, executable: String, deviceName: String, header: CaptureHeader, shouldStop: () -> Bool,
        write: ([UInt8]) throws(SystemError) -> Void
    ) throws(Failure) -> Summary {
        defer { log.close() }
        let decoder = try Decoder(executable: executable, path: log.path)
        defer { decoder.stop() }
        var merge = CaptureImporter.Merge(deviceName: deviceName)
        var splitter = RawLogEpochSplitter()
        var written: Double?
        func put(_ line: [UInt8], t: Double?) throws(Failure) {
            do throws(SystemError) {
                try write(line)
            } catch {
                throw .output(error, t: written ?? 0)
            }
            written = t ?? written
        }
        try put(CaptureLineEncoder.header(header), t: 0)
        while true {
            if shouldStop() { throw .stopped(t: written) }
            switch merge.next() {
            case .line(let line):
                try put(line, t: merge.lastT)
            case .needsDecoded:
                guard let chunk = try decoder.read() else { continue }
                if chunk.isEmpty {
                    try decoder.finish(shouldStop: shouldStop)
                    merge.endDecoded()
                } else {
                    merge.addDecoded(chunk)
                }
            case .needsEpochs:
                let chunk: [UInt8]
                do throws(SystemError) {
                    chunk = try log.read(upTo: chunkSize)
                } catch {
                    throw .unreadable(error)
                }
                if chunk.isEmpty {
                    splitter.finish { merge.addEpoch($0, bytes: $1) }
                    merge.endEpochs()
                } else {
                    splitter.feed(chunk) { merge.addEpoch($0, bytes: $1) }
                }
            case .done:
                return Summary(
                    gpsdLineCount: merge.gpsdLineCount, tpvCount: merge.tpvCount,
                    receivedLineCount: merge.receivedLineCount, lastT: merge.lastT)
            }
        }
    }

    /// `gpsdecode -j` on the log, its JSON read from a pipe.
    private final class Decoder {
        let path: String
        let process: ChildProcess
        let output: ReadableFile
        private var lastByte = monotonicSeconds()

        init(executable: String, path: String) throws(Failure) {
            self.path = path
            // gpsdecode reports a log it cannot open as an exit status; open it here first to say why.
            do throws(SystemError) {
                try ReadableFile(path: path).close()
            } catch {
                throw .unreadable(error)
            }
            do throws(SystemError) {
                (process, output) = try ChildProcess.pipingOutput(
                    executable: executable, arguments: ["-j"], standardInput: path)
            } catch {
                throw .decoderUnavailable("cannot run gpsdecode on \(path): \(error)")
            }
        }

        /// The next bytes of output; empty at its end, nil when none came within 0.1 s.
        func read() throws(Failure) -> [UInt8]? {
            let chunk: [UInt8]?
            do throws(SystemError) {
                chunk = try output.read(upTo: RawLogImport.chunkSize, timeout: 0.1)
            } catch {
                throw .decoderUnavailable("cannot read gpsdecode's output: \(error)")
            }
            let now = monotonicSeconds()
            if chunk != nil {
                lastByte = now
            } else if now - lastByte > RawLogImport.decoderSilence {
                throw .decoderUnavailable(
                    "gpsdecode wrote nothing for \(Int(RawLogImport.decoderSilence)) s decoding \(path): "
                        + "it is stuck, or the log holds nothing it can decode")
            }
            return chunk
        }

        /// After the end of its output: its exit status, which must be success (unless a stop came first).
        func finish(shouldStop: () -> Bool) throws(Failure) {
            output.close()
            var status = process.waitForExit(timeout: 0.1)
            var waited = 0.1
            while status == nil, waited < 10, !shouldStop() {
                status = process.waitForExit(timeout: 0.1)
                waited += 0.1
            }
            if shouldStop() { return }
            guard let status else { throw .decoderUnavailable("gpsdecode did not exit after decoding \(path)") }
            guard status == 0 else { throw .decoderUnavailable("gpsdecode failed on \(path) (exit status \(status))") }
        }

        /// Ends it if it still runs (a stop, a failure, or the survey needing no more).
        func stop() {
            output.close()
            if process.isRunning { process.terminate(grace: 0.3) }
        }
    }
}
