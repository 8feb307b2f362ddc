import SystemInterface
import GPSModel

#if canImport(Glibc)
import Glibc
#endif

/// Runs gpsd's offline decoder on a raw receiver log and builds a capture from it (`CaptureImporter`).
public enum RawLogImport {
    public enum Failure: Error, CustomStringConvertible {
        /// gpsdecode is not installed or could not be run.
        case decoderUnavailable(String)
        case capture(CaptureError)

        public var description: String {
            switch self {
            case .decoderUnavailable(let why): return why
            case .capture(let error): return error.description
            }
        }
    }

    /// The capture for the raw log at `path` (whose bytes are `raw`), as file bytes.
    public static func capture(path: String, raw: [UInt8]) throws(Failure) -> [UInt8] {
        let decoded = try decode(path: path)
        let name = path.split(separator: "/").last.map(String.init) ?? path
        do throws(CaptureError) {
            return try CaptureImporter.capture(raw: raw, decoded: decoded, deviceName: name)
        } catch {
            throw .capture(error)
        }
    }

    /// `gpsdecode`'s JSON for the log at `path`.
    public static func decode(path: String) throws(Failure) -> [UInt8] {
        guard let executable = findExecutable("gpsdecode") else {
            throw .decoderUnavailable(
                "gpsdecode (gpsd's offline decoder) is not installed: 'sudo apt-get install gpsd-clients'")
        }
        var template = Array("/tmp/lodestar-gpsdecode-XXXXXX".utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { buffer -> Int32 in
            guard let base = buffer.baseAddress else { return -1 }
            return mkstemp(base)
        }
        guard descriptor >= 0 else {
            throw .decoderUnavailable("cannot create a temporary file for gpsdecode: \(SystemError("mkstemp", "/tmp"))")
        }
        Glibc.close(descriptor)
        let outputPath = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        defer { unlink(outputPath) }
        let process: ChildProcess
        do throws(SystemError) {
            process = try ChildProcess(
                executable: executable, arguments: ["-j"], standardInput: path, standardOutput: outputPath)
        } catch {
            throw .decoderUnavailable("cannot run gpsdecode on \(path): \(error)")
        }
        // gpsdecode reads a 3-hour log in a fraction of a second; two minutes means it is stuck.
        guard let status = process.waitForExit(timeout: 120) else {
            process.terminate()
            throw .decoderUnavailable("gpsdecode did not finish decoding \(path) within 120 s")
        }
        guard status == 0 else { throw .decoderUnavailable("gpsdecode failed on \(path) (exit status \(status))") }
        do throws(SystemError) {
            return try readWholeFile(outputPath)
        } catch {
            throw .decoderUnavailable("cannot read gpsdecode's output: \(error)")
        }
    }
}
