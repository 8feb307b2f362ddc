import Foundation
import JSON
import Policy
import SystemInterface
import ReceiverEmulation
import TestSupport
import Testing

@testable import Lodestar
@testable import LodestarCLI

#if canImport(Glibc)
import Glibc
#endif

/// A property test over the schema: every number of a profile (walked from `ProfileSchema.keys`, the table
/// docs/profiles.md is generated from) and of the config (walked from `config show`, every key written out),
/// every string, and every numeric flag, given values at, inside and beyond its range, and the values that
/// trap careless arithmetic (0, -1, 1e-300, 1e20, 2^32, 1e308, an overflowing 1e999). Each case goes through
/// validation, and a valid profile through `replay --evaluate` on a short capture; each must end with a code
/// its command documents within its time limit. In-process, as the other command tests run, so a trap fails
/// the run; `run --clock-rate` at its bounds goes through the binary, where a crash shows as a signal.
/// Seeded: `LODESTAR_PROPERTY_SEED` replays a run; the seed and the case count are printed.
@Suite struct SchemaPropertyTests {
    /// Per case: validation is milliseconds, an evaluation of the 24 s capture well under a second.
    static let limit = 5.0

    static let seed: UInt64 = ProcessInfo.processInfo.environment["LODESTAR_PROPERTY_SEED"].flatMap { UInt64($0) }
        ?? UInt64.random(in: 0...UInt64(UInt32.max))

    /// Values anywhere: what overflows an Int conversion, divides by zero or never ends a loop.
    static let hostile = ["0", "-0.0", "-1", "1e-300", "-1e-300", "1e20", "-1e20", "4294967296", "1e308", "-1e308", "1e999"]

    /// JSON text for `value`, as a file would hold it.
    static func text(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : "\(value)"
    }

    /// At, inside and beyond `range`, plus the hostile values; whole numbers for a whole key.
    static func values(_ range: ClosedRange<Double>, whole: Bool, _ generator: inout SplitMix64) -> [String] {
        let span = range.upperBound - range.lowerBound
        var inside = [range.lowerBound + span / 2]
        for _ in 0..<2 { inside.append(Double.random(in: range, using: &generator)) }
        if whole { inside = inside.map { $0.rounded() } }
        let beyond = [
            range.lowerBound - max(1, abs(range.lowerBound)), range.upperBound + max(1, abs(range.upperBound)),
            whole ? range.lowerBound - 1 : range.lowerBound.nextDown, whole ? range.upperBound + 1 : range.upperBound.nextUp,
        ]
        // Five of the hostile values each time, the seed choosing: every one is met across keys and runs.
        return ([range.lowerBound, range.upperBound] + inside + beyond).map(text)
            + hostile.shuffled(using: &generator).prefix(5)
    }

    static func withFolder(_ body: (String) throws -> Void) throws {
        let folder = try temporaryFolder("property")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try body(folder)
    }

    static func documented(_ arguments: [String]) -> Set<Int32> { SpecialFileInputTests.documented(arguments) }

    /// `document` with `path` (dotted) set to the raw JSON `value`; a missing or null parent becomes an object.
    /// The project's own JSON tree and writer: Foundation's on Linux turns `true` into `1`.
    static func setting(_ document: JSONValue, _ path: String, to value: String) -> String {
        func set(_ node: JSONValue, _ keys: ArraySlice<Substring>) -> JSONValue {
            guard let key = keys.first.map(String.init) else { return node }
            var members: [(key: String, value: JSONValue)] = []
            if case .object(let existing) = node { members = existing }
            let inner = keys.count == 1 ? .string("@@VALUE@@") : set(members.first { $0.key == key }?.value ?? .null, keys.dropFirst())
            if let index = members.firstIndex(where: { $0.key == key }) {
                members[index].value = inner
            } else {
                members.append((key, inner))
            }
            return .object(members)
        }
        return JSONWriter.text(set(document, path.split(separator: ".")[...]))
            .replacingOccurrences(of: "\"@@VALUE@@\"", with: value)
    }

    struct Tally {
        var cases = 0
        var evaluated = 0
        mutating func check(
            _ arguments: [String], allowed: Set<Int32>, limit: Double = SchemaPropertyTests.limit, what: String
        ) -> Int32 {
            cases += 1
            let (code, error, seconds) = SpecialFileInputTests.run(arguments)
            #expect(allowed.contains(code), "\(what): \(arguments.joined(separator: " ")) gave \(code): \(error)")
            #expect(SchemaPropertyTests.documented(arguments).contains(code), "\(what): \(code) is not in the help")
            #expect(seconds < limit, "\(what): took \(seconds) s")
            return code
        }
    }

    @Test func everyProfileKeyThroughValidateAndEvaluate() throws {
        var generator = SplitMix64(seed: Self.seed)
        var tally = Tally()
        try Self.withFolder { folder in
            let capture = folder + "/short.jsonl"
            let imported = SpecialFileInputTests.run([
                "import", Fixtures.path("gpsd-sirf4-bu353s4.nmea"), "-o", capture,
            ])
            try #require(imported.code == 0, "\(imported.error)")
            let (_, carText, _) = LodestarCLITests.run(["profiles", "show", "car"])
            let car = try JSONParser.parse(Array(carText.utf8))
            let file = folder + "/profile.json"
            for key in ProfileSchema.keys {
                var candidates: [String]
                switch key.kind {
                case .number(let number):
                    var whole = false
                    if case .whole = number.storage { whole = true }
                    candidates = Self.values(number.range, whole: whole, &generator) + ["\"NaN\"", "null"]
                case .text:
                    candidates = ["\"\"", "\"" + String(repeating: "a", count: 1025) + "\"", "\"a\\nb\""]
                default:
                    continue
                }
                var valid: [String] = []
                for value in candidates {
                    try Self.setting(car, key.path, to: value).write(toFile: file, atomically: true, encoding: .utf8)
                    let what = "\(key.path) = \(value.prefix(40)) (seed \(Self.seed))"
                    if tally.check(["profiles", "validate", file], allowed: [0, 78], what: what) == 0 { valid.append(value) }
                }
                // A valid profile must evaluate: both bounds, a hostile value that passed (1e-300 for a current
                // was the crash) and one more the seed picks (an evaluation is the costly part), the text
                // table and every fourth time the JSON too.
                let rest = valid.dropFirst(2)
                let hostilePassed = rest.filter { Self.hostile.contains($0) }.shuffled(using: &generator).prefix(1)
                let other = rest.filter { !hostilePassed.contains($0) }.shuffled(using: &generator).prefix(1)
                for value in valid.prefix(2) + hostilePassed + other {
                    try Self.setting(car, key.path, to: value).write(toFile: file, atomically: true, encoding: .utf8)
                    let what = "\(key.path) = \(value.prefix(40)) (seed \(Self.seed))"
                    tally.evaluated += 1
                    _ = tally.check(["replay", capture, "--profile", file, "--evaluate"], allowed: [0], what: what)
                    if tally.evaluated % 4 == 0 {
                        _ = tally.check(["replay", capture, "--profile", file, "--evaluate", "--json"], allowed: [0], what: what)
                    }
                }
            }
        }
        print("schema property test (profiles): seed \(Self.seed), \(tally.cases) cases, \(tally.evaluated) evaluated")
        #expect(tally.evaluated > 50)
    }

    @Test func everyConfigKeyThroughValidateAndShow() throws {
        var generator = SplitMix64(seed: Self.seed ^ 0xC0FF_EE)
        var tally = Tally()
        try Self.withFolder { folder in
            let file = folder + "/config.json"
            // Every optional section present, so `config show` writes out every key there is.
            let everySection = """
                {"gpsd": {"device": "/dev/ttyUSB0"}, "receiver": {"powerSwitch": {"type": "usbPort"}},
                 "outputs": {"stdout": {}, "capture": {}, "gpx": {"keepDays": 30}}, "store": {"maxAgeDays": 30},
                 "upload": {"owntracks": {"host": "broker.example", "user": "u", "device": "d"},
                            "traccar": {"url": "http://t.example:5055", "deviceID": "x"}}}
                """
            try everySection.write(toFile: file, atomically: true, encoding: .utf8)
            let (code, shown, error) = LodestarCLITests.run(["config", "show", "--config", file])
            try #require(code == 0, "\(error)")
            let defaults = try JSONParser.parse(Array(shown.utf8))
            // Every leaf of the full config: its dotted path and default (the project's parser keeps a
            // boolean apart from a number, as Foundation's on Linux does not).
            var leaves: [(String, JSONValue)] = []
            func walk(_ value: JSONValue, _ prefix: String) {
                if case .object(let members) = value {
                    for member in members { walk(member.value, prefix.isEmpty ? member.key : prefix + "." + member.key) }
                } else {
                    leaves.append((prefix, value))
                }
            }
            walk(defaults, "")
            #expect(leaves.count > 20)
            let strings = [
                "\"\"", "\"" + String(repeating: "a", count: 254) + "\"",
                "\"" + String(repeating: "a", count: 5_000) + "\"", "\"[::1\"", "\"::1\"", "\"a b\"",
            ]
            for (path, value) in leaves {
                var candidates: [String]
                if case .number(let base) = value {
                    // The config's ranges live in its reader: around the default, and far from it.
                    let inside = [base, base + 1, Double(Int.random(in: 0...65_536, using: &generator)), 0.5]
                    candidates = inside.map(Self.text) + Self.hostile + ["\"NaN\"", "-65536"]
                } else if case .string = value {
                    candidates = strings
                } else if case .null = value {
                    // An optional key (a port, a password): a number or a string may go there.
                    candidates = Self.hostile + strings
                } else {
                    continue
                }
                for candidate in candidates {
                    try Self.setting(defaults, path, to: candidate).write(toFile: file, atomically: true, encoding: .utf8)
                    let what = "\(path) = \(candidate.prefix(40)) (seed \(Self.seed))"
                    let code = tally.check(["config", "validate", file], allowed: [0, 78], what: what)
                    if code == 0 {
                        tally.evaluated += 1
                        _ = tally.check(["config", "show", "--config", file], allowed: [0], what: what)
                    }
                }
            }
            // --gpsd as a user types it: only a well-formed host[:port] passes the flag parsing.
            try everySection.write(toFile: file, atomically: true, encoding: .utf8)
            for (gpsd, allowed) in [
                ("[::1", Set<Int32>([64])), ("[::1]:2947", [0]), ("::1", [0]), ("host:", [64]), ("[]:1", [64]),
                ("a]b", [64]), ("pi.local:99999", [78]), (String(repeating: "h", count: 300), [78]), ("[::1]x", [64]),
            ] {
                _ = tally.check(["config", "validate", file, "--gpsd", gpsd], allowed: allowed, what: "--gpsd \(gpsd)")
            }
        }
        print("schema property test (config): seed \(Self.seed), \(tally.cases) cases, \(tally.evaluated) valid")
        #expect(tally.evaluated > 50)
    }

    /// Every numeric flag: outside its range (and NaN, inf, huge, tiny) a usage error, never a trap or a hang.
    @Test func everyNumericFlagOutsideItsRangeIsAUsageError() throws {
        var tally = Tally()
        try Self.withFolder { folder in
            let capture = folder + "/short.jsonl"
            _ = SpecialFileInputTests.run(["import", Fixtures.path("gpsd-sirf4-bu353s4.nmea"), "-o", capture])
            let flags: [([String], String, ClosedRange<Double>)] = [
                (["run"], "clock-rate", RunCommand.clockRateRange),
                (["replay", capture], "speed", ReplayCommand.speedRange),
                (["demo"], "speed", DemoCommand.speedRange),
                (["watch"], "duration", WatchOptions.durationRange),
                (["record", "-o", folder + "/r.jsonl"], "duration", WatchOptions.durationRange),
                (["receiver", "sleep"], "timeout", 0.1...86_400),
                (["receiver", "sleep"], "down", 0.1...86_400),
            ]
            for (command, flag, range) in flags {
                let outside = [
                    range.lowerBound.nextDown, range.upperBound.nextUp, 0, -1, 1e-300, 1e20, 1e308,
                ].map { "\($0)" } + ["nan", "inf", "-inf", "1e999", "", "x"]
                for value in outside {
                    _ = tally.check(command + ["--\(flag)", value], allowed: [64], what: "--\(flag) \(value)")
                }
            }
            // Inside the range, where it finishes quickly in-process: replay's pacing at its top speed.
            for speed in ["1000000", "1000"] {
                _ = tally.check(["replay", capture, "--speed", speed, "--count", "3"], allowed: [0], what: "--speed \(speed)")
            }
        }
        print("schema property test (flags): seed \(Self.seed), \(tally.cases) cases")
    }

    /// `run --clock-rate` at its bounds, through the binary: the service starts (gpsd unreachable, so it
    /// waits for it), runs its clock, and SIGTERM ends it with 0, never a signal.
    @Test(arguments: ["0.01", "1000"])
    func runAtTheClockRateBoundsEndsCleanly(rate: String) throws {
        let binary = try #require(ExecutableTests.executable, "build the lodestar executable first")
        try Self.withFolder { folder in
            let port = try freeLoopbackPort()
            let config = folder + "/config.json"
            try """
            {"gpsd": {"host": "127.0.0.1", "port": \(port)}, "stateDirectory": "\(folder)/state",
             "runtimeDirectory": "\(folder)/run", "outputs": {"jsonl": null, "gpx": null, "socket": null},
             "receiver": {"powerControl": false}}
            """.write(toFile: config, atomically: true, encoding: .utf8)
            let process = try ChildProcess(
                executable: binary, arguments: ["run", "--config", config, "--clock-rate", rate],
                standardOutput: "/dev/null", standardError: folder + "/err")
            sleepSeconds(1.5)
            let said = { (try? String(contentsOfFile: folder + "/err", encoding: .utf8)) ?? "" }
            #expect(process.isRunning, "run --clock-rate \(rate) ended early: \(said())")
            process.signal(SIGTERM)
            let status = try #require(process.waitForExit(timeout: 5), "run --clock-rate \(rate) outlived SIGTERM")
            #expect(status & 0x7f == 0, "killed by signal \(status & 0x7f): \(said())")
            #expect(status >> 8 == 0, "exit \(status >> 8): \(said())")
            let lines = said().split(separator: "\n").count
            #expect(lines < 200, "\(lines) log lines in 1.5 s at --clock-rate \(rate)")
        }
    }
}
