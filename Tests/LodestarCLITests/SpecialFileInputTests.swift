import Foundation
import Lodestar
import SystemInterface
import TestSupport
import Testing

@testable import LodestarCLI

#if canImport(Glibc)
import Glibc
#endif

/// Files that are not files, given to every command that reads a config, profile, capture, log or store:
/// devices that never end (/dev/zero, /dev/urandom), a FIFO with no writer, a FIFO whose writer never writes,
/// and a directory. Each command ends within 2 s with a code its help documents and says why; a FIFO that
/// waits gives way to SIGINT/SIGTERM; a config or profile is read up to 1 MiB and no further.
@Suite struct SpecialFileInputTests {
    static let limit = 2.0

    /// `PATH` stands for the special file; `OUT` for a file the command may write.
    static let commands: [[String]] = [
        ["config", "validate", "PATH"],
        ["config", "show", "--config", "PATH"],
        ["run", "--config", "PATH"],
        ["profiles", "validate", "PATH"],
        ["profiles", "show", "PATH"],
        ["replay", "PATH"],
        ["replay", "CAPTURE", "--profile", "PATH", "--evaluate"],
        ["import", "PATH", "-o", "OUT"],
        ["store", "export", "--store", "PATH"],
        ["demo", "--capture", "PATH"],
    ]

    static func withFolder(_ body: (String) throws -> Void) throws {
        let folder = try temporaryFolder("special")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try body(folder)
    }

    static func arguments(_ template: [String], path: String, folder: String) -> [String] {
        template.map {
            switch $0 {
            case "PATH": path
            case "OUT": folder + "/out.jsonl"
            case "CAPTURE": Fixtures.path("gpsd-sirf4-bu353s4.nmea")
            default: $0
            }
        }
    }

    /// The codes the command's help documents (its declaration generates the help).
    static func documented(_ arguments: [String]) -> Set<Int32> {
        var declaration = LodestarCommand.declaration
        for word in arguments {
            guard let next = declaration.subcommands.first(where: { $0.path.last == word }) else { break }
            declaration = next
        }
        return Set(declaration.exitStatuses.map(\.code.rawValue))
    }

    /// Runs in-process with a stop that comes after `stopAfter` seconds (never when nil).
    static func run(_ arguments: [String], stopAfter: Double? = nil) -> (code: Int32, error: String, seconds: Double) {
        let started = monotonicSeconds()
        let error = MemorySink()
        let code = LodestarCommand.main(
            arguments: arguments,
            context: CommandContext(
                standardOutput: MemorySink(), standardError: error,
                shouldStop: { stopAfter.map { monotonicSeconds() - started > $0 } ?? false }))
        return (code, error.text, monotonicSeconds() - started)
    }

    @Test(arguments: commands, ["/dev/zero", "/dev/urandom", "fifo", "directory"])
    func aSpecialFileEndsWithADocumentedCodeAndAReason(template: [String], kind: String) throws {
        try Self.withFolder { folder in
            var path = kind
            if kind == "fifo" {
                path = folder + "/fifo"
                #expect(mkfifo(path, 0o600) == 0)
            } else if kind == "directory" {
                path = folder + "/directory"
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            }
            let arguments = Self.arguments(template, path: path, folder: folder)
            let (code, error, seconds) = Self.run(arguments)
            // 2 s for a config or profile (1 MiB at most); the demo reads up to 64 MiB of a capture whole,
            // which a loaded machine may take longer over.
            #expect(seconds < (template.first == "demo" ? 5 : Self.limit), "\(arguments) took \(seconds) s")
            #expect(code != 0, "\(arguments) accepted \(kind): \(error)")
            #expect(Self.documented(arguments).contains(code), "\(arguments): \(code) is not in its help")
            #expect(error.contains(path), "\(arguments) did not name \(path): \(error)")
        }
    }

    /// A FIFO whose writer holds it open and never writes: the read waits, and a stop ends it with the stop's
    /// code (130 here: a test's own stop is SIGINT's), not a hang and not "unreadable".
    @Test(arguments: [
        ["config", "validate", "PATH"], ["run", "--config", "PATH"], ["profiles", "validate", "PATH"],
        ["replay", "PATH"], ["replay", "CAPTURE", "--profile", "PATH", "--evaluate"], ["import", "PATH", "-o", "OUT"],
    ])
    func aFIFOThatNeverWritesGivesWayToAStop(template: [String]) throws {
        try Self.withFolder { folder in
            let path = folder + "/fifo"
            #expect(mkfifo(path, 0o600) == 0)
            // O_RDWR opens a FIFO at once on Linux and makes this test its writer, one that never writes.
            let writer = open(path, O_RDWR | O_CLOEXEC)
            #expect(writer >= 0)
            defer { close(writer) }
            let arguments = Self.arguments(template, path: path, folder: folder)
            let (code, error, seconds) = Self.run(arguments, stopAfter: 0.3)
            #expect(code == ExitCode.interrupted.rawValue, "\(arguments): \(error)")
            #expect(seconds < Self.limit, "\(arguments) took \(seconds) s after a stop at 0.3 s")
            #expect(Self.documented(arguments).contains(code), "\(arguments): \(code) is not in its help")
        }
    }

    /// A config or profile is read up to 1 MiB: one of exactly 1 MiB is still read, one byte more is refused
    /// with 78, naming the file and the limit.
    @Test func configsAndProfilesAreReadUpTo1MiB() throws {
        try Self.withFolder { folder in
            let (_, profileText, _) = LodestarCLITests.run(["profiles", "show", "car"])
            for (name, text, command) in [
                ("config.json", "{}", ["config", "validate"]), ("profile.json", profileText, ["profiles", "validate"]),
            ] {
                let path = folder + "/" + name
                let padding = (1 << 20) - text.utf8.count
                try (text + String(repeating: " ", count: padding)).write(toFile: path, atomically: true, encoding: .utf8)
                let fits = Self.run(command + [path])
                #expect(fits.code == 0, "\(name): \(fits.error)")
                try (text + String(repeating: " ", count: padding + 1)).write(toFile: path, atomically: true, encoding: .utf8)
                let over = Self.run(command + [path])
                #expect(over.code == ExitCode.config.rawValue)
                #expect(over.error.contains("\(path): larger than 1 MiB, the most a"), "\(over.error)")
            }
        }
    }

    /// The acceptance case, through the binary: `config validate` of /dev/urandom, /dev/zero, a FIFO and a
    /// directory ends within 2 s with a documented code, in flat memory; and SIGTERM ends a FIFO that waits
    /// with 143. The peak is the command's own, as GNU time reads it (a child spawned from this process would
    /// count this process's memory too), held against a valid config's plus 8 MiB.
    @Test func configValidateOfSpecialFilesThroughTheBinary() throws {
        let binary = try #require(ExecutableTests.executable, "build the lodestar executable first")
        let time = "/usr/bin/time"
        try #require(FileManager.default.isExecutableFile(atPath: time), "install GNU time (scripts/setup)")
        try Self.withFolder { folder in
            let fifo = folder + "/fifo"
            #expect(mkfifo(fifo, 0o600) == 0)
            let directory = folder + "/directory"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
            let valid = folder + "/valid.json"
            try "{}".write(toFile: valid, atomically: true, encoding: .utf8)
            func measure(_ path: String) throws -> (code: Int32, seconds: Double, peakKiB: Int, said: String) {
                let started = monotonicSeconds()
                let process = try ChildProcess(
                    executable: time, arguments: ["-f", "%M", "-o", folder + "/peak", binary, "config", "validate", path],
                    standardOutput: "/dev/null", standardError: folder + "/err")
                let status = process.waitForExit(timeout: 10)
                if status == nil { process.terminate() }
                let seconds = monotonicSeconds() - started
                // GNU time writes "Command terminated by signal N" above the figure when the command crashed.
                let report = (try? String(contentsOfFile: folder + "/peak", encoding: .utf8)) ?? ""
                let said = (try? String(contentsOfFile: folder + "/err", encoding: .utf8)) ?? ""
                let peak = report.split(separator: "\n").last.flatMap { Int($0) } ?? Int.max
                #expect(!report.contains("signal"), "\(path): \(report)")
                return ((status ?? -1) >> 8, seconds, peak, said)
            }
            let baseline = try measure(valid)
            #expect(baseline.code == 0)
            let documented = Self.documented(["config", "validate"])
            for path in ["/dev/urandom", "/dev/zero", fifo, directory] {
                let outcome = try measure(path)
                #expect(documented.contains(outcome.code), "\(path): \(outcome.code) is not in the help: \(outcome.said)")
                #expect(outcome.seconds < Self.limit, "\(path) took \(outcome.seconds) s")
                #expect(outcome.said.contains(path), "\(outcome.said)")
                #expect(
                    outcome.peakKiB < baseline.peakKiB + 8 * 1024,
                    "\(path): peak \(outcome.peakKiB) KiB against \(baseline.peakKiB) KiB for a valid config")
                print(
                    "config validate \(path): \(outcome.code) in \(Int(outcome.seconds * 1000)) ms, "
                        + "peak \(outcome.peakKiB) KiB (a valid config: \(baseline.peakKiB) KiB)")
            }

            let writer = open(fifo, O_RDWR | O_CLOEXEC)
            #expect(writer >= 0)
            defer { close(writer) }
            let process = try ChildProcess(
                executable: binary, arguments: ["config", "validate", fifo], standardOutput: "/dev/null",
                standardError: folder + "/err")
            sleepSeconds(0.5)
            #expect(process.isRunning, "config validate did not wait for the FIFO's writer")
            let signalled = monotonicSeconds()
            process.signal(SIGTERM)
            let status = try #require(process.waitForExit(timeout: Self.limit), "SIGTERM did not end the FIFO's read")
            #expect(status >> 8 == ExitCode.terminated.rawValue, "raw wait status \(status)")
            #expect(monotonicSeconds() - signalled < 1)
            let said = (try? String(contentsOfFile: folder + "/err", encoding: .utf8)) ?? ""
            #expect(said.contains("stopped by SIGTERM while reading \(fifo)"), "\(said)")
        }
    }
}
