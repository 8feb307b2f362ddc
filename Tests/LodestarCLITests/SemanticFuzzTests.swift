import Foundation
import SystemInterface
import TestSupport
import Testing

/// Semantic fuzzing of the commands that read captures and raw logs: valid-looking files whose numbers and
/// times are absurd (huge, negative, NaN, infinite), whose lines are reordered, duplicated or far apart. Each
/// case runs the real binary as a user would and must end within 10 s with a code its help documents (65 with
/// `FILE:LINE` for what is wrong with a line), never a crash or a hang. Seeded (`LODESTAR_FUZZ_SEED` picks
/// another seed; a failing case is kept on disk and named), and bounded: `LODESTAR_FUZZ_CASES` cases (24 by
/// default) on a 5-minute drive.
@Suite(.tags(.slow)) struct SemanticFuzzTests {
    static let limit = 10.0

    static let absurdNumbers = [
        "1e308", "-1e308", "9e999", "-9e999", "1e20", "-1", "-0.001", "0", "NaN", "Infinity", "-Infinity",
        "\"NaN\"", "null", "4294967296", "1e-320",
    ]
    static let absurdTimes = [
        "\"9999-12-31T23:59:60.000Z\"", "\"10000-01-01T00:00:00.000Z\"", "\"1899-12-31T00:00:00.000Z\"",
        "\"2026-13-45T25:61:61.000Z\"", "\"\"", "\"not a time\"", "-1", "1e308",
    ]
    static let numberKeys = ["lat", "lon", "alt", "eph", "epx", "epy", "epv", "speed", "track", "climb", "mode"]

    struct Case {
        var name: String
        var lines: [String]
    }

    /// One mutation of a capture's lines (the header is line 0).
    static func mutate(_ lines: [String], _ generator: inout SplitMix64) -> Case {
        var lines = lines
        let body = 1..<lines.count
        let index = Int.random(in: body, using: &generator)
        switch Int.random(in: 0..<8, using: &generator) {
        case 0:
            let value = absurdNumbers.randomElement(using: &generator) ?? "1e308"
            lines[index] = replacing(key: "t", in: lines[index], with: value)
            return Case(name: "t=\(value) on line \(index + 1)", lines: lines)
        case 1, 2:
            let tpv = body.filter { lines[$0].contains("\"class\":\"TPV\"") }
            let line = tpv.randomElement(using: &generator) ?? index
            let key = numberKeys.randomElement(using: &generator) ?? "lat"
            let value = absurdNumbers.randomElement(using: &generator) ?? "1e308"
            lines[line] = replacing(key: key, in: lines[line], with: value)
            return Case(name: "\(key)=\(value) on line \(line + 1)", lines: lines)
        case 3:
            let tpv = body.filter { lines[$0].contains("\"class\":\"TPV\"") }
            let line = tpv.randomElement(using: &generator) ?? index
            let value = absurdTimes.randomElement(using: &generator) ?? "\"\""
            lines[line] = replacing(key: "time", in: lines[line], with: value)
            return Case(name: "time=\(value) on line \(line + 1)", lines: lines)
        case 4:
            return swapping(lines, index, Int.random(in: body, using: &generator))
        case 5:
            return repeating(lines, index, times: Int.random(in: 1...200, using: &generator))
        case 6:
            // Everything after a line moved far ahead: hours, days, beyond what the format allows.
            let jumps: [Double] = [3_600 * 5, 86_400 * 3, 86_400 * 29, 86_400 * 31, 1e7, 1e12]
            let jump = jumps.randomElement(using: &generator) ?? 1e7
            for later in index..<lines.count { lines[later] = shifting(lines[later], by: jump) }
            return Case(name: "t jumps \(jump) s from line \(index + 1)", lines: lines)
        default:
            // A long stretch of lines far apart: each an hour and a half after the one before.
            let end = min(lines.count, index + 50)
            for (step, later) in (index..<lines.count).enumerated() {
                lines[later] = shifting(lines[later], by: 5_400 * Double(min(step, end - index)))
            }
            return Case(name: "lines \(index + 1)…\(end) 90 min apart", lines: lines)
        }
    }

    /// Lines `index` and `other` swapped: a mutation of captures and raw logs alike.
    static func swapping(_ lines: [String], _ index: Int, _ other: Int) -> Case {
        var lines = lines
        lines.swapAt(index, other)
        return Case(name: "lines \(index + 1) and \(other + 1) swapped", lines: lines)
    }

    /// Line `index` `count` times more, in place: a mutation of captures and raw logs alike.
    static func repeating(_ lines: [String], _ index: Int, times count: Int) -> Case {
        var lines = lines
        lines.insert(contentsOf: Array(repeating: lines[index], count: count), at: index)
        return Case(name: "line \(index + 1) repeated \(count) times", lines: lines)
    }

    /// The line with `"key":VALUE` (the first one) given `value` instead, as text.
    static func replacing(key: String, in line: String, with value: String) -> String {
        guard let keyRange = line.range(of: "\"\(key)\":") else { return line }
        var end = keyRange.upperBound
        if line[end...].hasPrefix("\"") {
            end = line.index(after: end)
            while end < line.endIndex, line[end] != "\"" { end = line.index(after: end) }
            if end < line.endIndex { end = line.index(after: end) }
        } else {
            while end < line.endIndex, !",}]".contains(line[end]) { end = line.index(after: end) }
        }
        return line.replacingCharacters(in: keyRange.upperBound..<end, with: value)
    }

    static func shifting(_ line: String, by seconds: Double) -> String {
        guard line.hasPrefix("{\"t\":"), let comma = line.firstIndex(of: ","),
            let t = Double(line[line.index(line.startIndex, offsetBy: 5)..<comma])
        else { return line }
        return "{\"t\":" + String(format: "%.3f", t + seconds) + String(line[comma...])
    }

    /// One NMEA mutation of a raw log: absurd fields, reordered or duplicated sentences, far-apart times.
    static func mutateRaw(_ lines: [String], _ generator: inout SplitMix64) -> Case {
        var lines = lines
        let sentences = lines.indices.filter { lines[$0].hasPrefix("$") }
        let index = sentences.randomElement(using: &generator) ?? 0
        switch Int.random(in: 0..<4, using: &generator) {
        case 0:
            var fields = lines[index].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            let field = Int.random(in: 1..<max(2, fields.count), using: &generator)
            let value = ["999999.99", "-1", "1e308", "NaN", "9999.9999", "-9999.9999", "", "235960", "99"]
                .randomElement(using: &generator) ?? ""
            if field < fields.count { fields[field] = value }
            lines[index] = fields.joined(separator: ",")
            return Case(name: "field \(field) of line \(index + 1) = \(value)", lines: lines)
        case 1:
            return swapping(lines, index, sentences.randomElement(using: &generator) ?? 0)
        case 2:
            return repeating(lines, index, times: Int.random(in: 1...100, using: &generator))
        default:
            // A time of day far from its neighbours (the receiver's clock jumping).
            var fields = lines[index].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            if fields.count > 1 { fields[1] = ["000000.00", "120000.00", "235959.99"].randomElement(using: &generator) ?? "" }
            lines[index] = fields.joined(separator: ",")
            return Case(name: "time of line \(index + 1) jumps", lines: lines)
        }
    }

    struct Outcome {
        var status: Int32?
        var error: String
        var seconds: Double
    }

    static func runBinary(_ binary: String, _ arguments: [String], folder: String) throws -> Outcome {
        let started = Date()
        let process = try ChildProcess(
            executable: binary, arguments: arguments, standardOutput: "/dev/null", standardError: folder + "/err")
        let status = process.waitForExit(timeout: limit)
        if status == nil {
            process.terminate()
            _ = process.waitForExit(timeout: 5)
        }
        let error = (try? String(contentsOfFile: folder + "/err", encoding: .utf8)) ?? ""
        return Outcome(status: status, error: error, seconds: Date().timeIntervalSince(started))
    }

    /// Exit codes a command's help documents, from its EXIT STATUS section.
    static func documentedCodes(_ binary: String, _ command: String, folder: String) throws -> Set<Int32> {
        let process = try ChildProcess(
            executable: binary, arguments: [command, "--help"], standardOutput: folder + "/help",
            standardError: "/dev/null")
        _ = process.waitForExit(timeout: limit)
        let help = (try? String(contentsOfFile: folder + "/help", encoding: .utf8)) ?? ""
        let section = help.components(separatedBy: "EXIT STATUS:").last ?? ""
        return Set(section.split(separator: "\n").compactMap { Int32($0.trimmingCharacters(in: .whitespaces).prefix { $0.isNumber }) })
    }

    @Test func mutatedCapturesAndLogsEndInTimeWithADocumentedCode() throws {
        let binary = try #require(ExecutableTests.executable, "build the lodestar executable first")
        let environment = ProcessInfo.processInfo.environment
        let seed = UInt64(environment["LODESTAR_FUZZ_SEED"] ?? "") ?? 20_261_201
        let cases = Int(environment["LODESTAR_FUZZ_CASES"] ?? "") ?? 24
        var generator = SplitMix64(seed: seed)
        let folder = try temporaryFolder("fuzz")
        var failed = false
        defer { if !failed { try? FileManager.default.removeItem(atPath: folder) } }

        // The base: the first 5 minutes of a city drive with stops, as a capture and as its raw log.
        let rawLines = try String(contentsOfFile: Fixtures.path("munich-urban-stopgo-31m.nmea"), encoding: .utf8)
            .split(separator: "\n", omittingEmptySubsequences: false).map(String.init).prefix(2_000)
        let rawPath = folder + "/base.nmea"
        try (rawLines.joined(separator: "\n") + "\n").write(toFile: rawPath, atomically: true, encoding: .utf8)
        let imported = try Self.runBinary(binary, ["import", rawPath, "-o", folder + "/base.jsonl"], folder: folder)
        #expect(imported.status == 0, "import of the base failed: \(imported.error)")
        let captureLines = try String(contentsOfFile: folder + "/base.jsonl", encoding: .utf8)
            .split(separator: "\n").map(String.init)

        let replayCodes = try Self.documentedCodes(binary, "replay", folder: folder)
        let importCodes = try Self.documentedCodes(binary, "import", folder: folder)
        #expect(replayCodes.contains(65) && importCodes.contains(65))
        for number in 0..<cases {
            let capture = Self.mutate(captureLines, &generator)
            let capturePath = folder + "/case-\(number).jsonl"
            try (capture.lines.joined(separator: "\n") + "\n").write(toFile: capturePath, atomically: true, encoding: .utf8)
            let raw = Self.mutateRaw(Array(rawLines), &generator)
            let rawCasePath = folder + "/case-\(number).nmea"
            try (raw.lines.joined(separator: "\n") + "\n").write(toFile: rawCasePath, atomically: true, encoding: .utf8)
            let runs: [(String, String, [String], Set<Int32>)] = [
                (capture.name, capturePath, ["replay", capturePath, "--format", "jsonl"], replayCodes),
                (capture.name, capturePath, ["replay", capturePath, "--profile", "car", "--evaluate"], replayCodes),
                (raw.name, rawCasePath, ["import", rawCasePath, "-o", folder + "/out-\(number).jsonl"], importCodes),
            ]
            for (name, path, arguments, codes) in runs {
                let outcome = try Self.runBinary(binary, arguments, folder: folder)
                let what = "seed \(seed) case \(number) (\(name)): lodestar \(arguments.joined(separator: " "))"
                guard let status = outcome.status else {
                    failed = true
                    Issue.record("\(what) did not end within \(Self.limit) s; the input is kept in \(folder)")
                    continue
                }
                let exited = status & 0x7F == 0
                let code = (status >> 8) & 0xFF
                if !exited || !codes.contains(code) {
                    failed = true
                    let message = "\(what) ended with raw status \(status) (code \(code)), not a documented code; "
                    Issue.record("\(message)kept in \(folder)\n\(outcome.error)")
                }
                // What is wrong is named: the file, and the line when a line is at fault.
                if exited, code == 65, !outcome.error.contains(path) {
                    failed = true
                    Issue.record("\(what): exit 65 without naming \(path): \(outcome.error)")
                }
            }
        }
    }
}
