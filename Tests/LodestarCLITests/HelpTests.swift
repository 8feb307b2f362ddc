import Foundation
import ReceiverEmulation
import TestSupport
import Testing

@testable import LodestarCLI

/// Every command the dispatcher runs, depth first, `profiles`' subcommands included, `lodestar` itself not.
private func allCommands(_ parent: CommandDeclaration = LodestarCommand.declaration) -> [CommandDeclaration] {
    parent.subcommands.flatMap { [$0] + allCommands($0) }
}

/// The paths of all commands (`["profiles", "show"]`), `lodestar` itself first (`[]`).
private let commandPaths = [[String]()] + allCommands().map(\.path)

/// What `lodestar PATH --help` prints.
private func helpText(_ path: [String]) -> String {
    run(path + ["--help"]).1
}

/// The lines of one section (`OPTIONS:`) of a help text, without its heading.
private func section(_ name: String, of help: String) -> [String] {
    let lines = help.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    guard let start = lines.firstIndex(of: name + ":") else { return [] }
    return Array(lines[(start + 1)...].prefix { !$0.isEmpty })
}

/// An option as the help shows it in OPTIONS: its spellings (`-o`, `--output`) and whether it takes a value.
private struct DocumentedOption: Hashable {
    var spellings: [String]
    var takesValue: Bool
    var long: String { spellings.last ?? "" }
}

/// The options a help text describes, read from the first column of its OPTIONS section.
private func documentedOptions(_ help: String) -> [DocumentedOption] {
    section("OPTIONS", of: help).compactMap { line in
        guard line.hasPrefix("  -") else { return nil }
        let label = line.dropFirst(2).components(separatedBy: "  ")[0]
        let words = label.components(separatedBy: " ")
        return DocumentedOption(
            spellings: words.filter { $0.hasPrefix("-") }.map { $0.trimmingCharacters(in: [","]) },
            takesValue: words.contains { $0.hasPrefix("<") })
    }
}

/// The codes in a help text's EXIT STATUS section.
private func documentedCodes(_ help: String) -> Set<Int32> {
    Set(section("EXIT STATUS", of: help).compactMap { line in
        line.hasPrefix("  ") ? Int32(line.trimmingCharacters(in: .whitespaces).prefix { $0.isNumber }) : nil
    })
}

/// A standard output whose every write fails (a full disk).
private final class FailingSink: TextSink {
    func write(_ text: String) -> WriteOutcome { .failed(errno: EIO) }
}

private func runFailingOutput(_ arguments: [String]) -> Int32 {
    LodestarCommand.main(
        arguments: arguments,
        context: CommandContext(standardOutput: FailingSink(), standardError: MemorySink(), shouldStop: { false }))
}

@Suite struct GeneratedHelpTests {
    @Test func everyCommandIsWalked() {
        #expect(
            Set(commandPaths.map { $0.joined(separator: " ") }) == [
                "", "watch", "demo", "record", "import", "replay", "profiles", "profiles list", "profiles show",
                "profiles validate", "profiles schema", "receiver", "receiver identify", "receiver sleep",
                "receiver wake", "receiver test", "run", "status", "config", "config validate", "config show",
                "config schema", "store", "store export",
            ])
    }

    /// Every option the parser accepts (the declared ones, plus -h/--help) is described in OPTIONS and appears
    /// in the USAGE line, but for an old spelling kept one more release, which OPTIONS alone lists.
    @Test(arguments: allCommands().map(\.path))
    func everyAcceptedOptionIsInTheHelp(path: [String]) throws {
        let declaration = try #require(allCommands().first { $0.path == path })
        let help = helpText(path)
        let documented = documentedOptions(help)
        let usage = help.components(separatedBy: "\n\n")[0]
        for option in declaration.options {
            let described = documented.first { $0.long == "--\(option.name)" }
            #expect(described != nil, "\(path): --\(option.name) is accepted but not in OPTIONS")
            #expect(described?.takesValue == option.takesValue, "\(path): --\(option.name) value")
            let spelling = option.shortName.map { "-\($0)" } ?? "--\(option.name)"
            #expect(
                usage.contains(spelling) != option.isDeprecated,
                "\(path): \(spelling) is \(option.isDeprecated ? "deprecated but" : "not") in the USAGE line")
        }
        #expect(documented.contains { $0.spellings == ["-h", "--help"] })
    }

    /// Black box: each option the help describes, given with a plausible value, is not refused as unknown
    /// (--help after it answers before any value is checked or anything runs).
    @Test(arguments: commandPaths)
    func everyOptionInTheHelpIsAccepted(path: [String]) {
        let help = helpText(path)
        let options = documentedOptions(help)
        #expect(!options.isEmpty)
        for option in options where option.long != "--help" && option.long != "--version" {
            for spelling in option.spellings {
                let arguments = path + [spelling] + (option.takesValue ? ["1"] : []) + ["--help"]
                let (code, output, error) = run(arguments)
                #expect(code == 0, "\(arguments): \(error)")
                #expect(output == help)
            }
            // A flag takes no value, and a valued option takes one with '='.
            let (code, _, error) = run(path + [option.long + "=1", "--help"])
            #expect(option.takesValue ? code == 0 : code == 64, "\(option.long)=1: \(error)")
        }
        if path.isEmpty { #expect(run(["--version"]).0 == 0) }
    }

    /// Black box the other way round: any option some command knows, tried on a command whose help does not
    /// describe it, is refused as unknown (exit 64, naming it).
    @Test(arguments: allCommands().filter(\.subcommands.isEmpty).map(\.path))
    func anOptionNotInTheHelpIsRefused(path: [String]) {
        let everyName = Set(commandPaths.flatMap { documentedOptions(helpText($0)).flatMap(\.spellings) })
            .union(["--verbose", "--output", "--quiet", "--config", "--version", "-o", "-v"])
        let described = Set(documentedOptions(helpText(path)).flatMap(\.spellings))
        for name in everyName.subtracting(described).sorted() {
            let (code, output, error) = run(path + [name, "1", "--help"])
            #expect(code == 64, "\(path) accepts \(name) without describing it")
            #expect(output.isEmpty)
            #expect(error.contains("unknown option '\(name)'"), "\(error)")
        }
    }

    /// The requirements the table states are enforced and described.
    @Test func requirementsAreEnforced() {
        let capture = Fixtures.path("gpsd-mtk-mt3339.nmea")
        for (arguments, message) in [
            (["replay", capture, "--json"], "--json needs --evaluate"),
            (["replay", capture, "--report", "x.html"], "--report needs --evaluate"),
            (["replay", capture, "--evaluate"], "--evaluate needs --profile"),
            (["replay", capture, "--profile", "car", "--through-gpsd"], "--profile cannot be combined with --through-gpsd"),
        ] {
            let (code, _, error) = run(arguments)
            #expect(code == 64)
            #expect(error.contains(message), "\(error)")
        }
        let help = helpText(["replay"])
        #expect(help.contains("[--profile <name|file> [--evaluate [--json] [--report <file> [--force]]]]"))
        #expect(help.contains("(needs --evaluate)"))
    }

    @Test(arguments: commandPaths)
    func helpIsWrappedAtItsWidth(path: [String]) {
        for line in helpText(path).split(separator: "\n") {
            #expect(line.count <= CommandDeclaration.helpWidth, "\(line)")
        }
    }

    /// Every status a command declares is in its help, and `lodestar --help` lists every code there is.
    @Test(arguments: commandPaths)
    func declaredExitStatusesAreDocumented(path: [String]) throws {
        let declaration =
            path.isEmpty ? LodestarCommand.declaration : try #require(allCommands().first { $0.path == path })
        let documented = documentedCodes(helpText(path))
        #expect(documented == Set(declaration.exitStatuses.map(\.code.rawValue)))
        #expect(documented.isSuperset(of: [0, 64]))
        for subcommand in declaration.subcommands {
            #expect(documented.isSuperset(of: documentedCodes(helpText(subcommand.path))), "\(subcommand.path)")
        }
        if path.isEmpty { #expect(documented == Set(ExitCode.allCases.map(\.rawValue))) }
    }

    /// The statuses each command returns in the cases that can be brought about in-process are among those
    /// its help documents. (Not reached here: gpsd going away mid-run, demo's damaged bundled capture,
    /// a missing gpsdecode.)
    @Test func returnedExitStatusesAreDocumented() throws {
        let folder = try temporaryFolder("help")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let empty = folder + "/empty.nmea"
        let existing = folder + "/existing.capture"
        let invalidProfile = folder + "/invalid.json"
        try Data().write(to: URL(fileURLWithPath: empty))
        try Data("x".utf8).write(to: URL(fileURLWithPath: existing))
        try Data(#"{"name":"x","policy":{"nonsense":1}}"#.utf8).write(to: URL(fileURLWithPath: invalidProfile))
        try FileManager.default.createDirectory(atPath: folder + "/damaged", withIntermediateDirectories: true)
        try Data("{".utf8).write(to: URL(fileURLWithPath: folder + "/damaged/status.json"))
        let capture = Fixtures.path("gpsd-mtk-mt3339.nmea")
        let examplesConfig = repositoryRoot.appendingPathComponent("examples/lodestar.json").path
        let closedPort = String(try freeLoopbackPort())

        var cases: [(arguments: [String], code: Int32, failingOutput: Bool)] = [
            (["watch", "--bogus"], 64, false),
            (["watch", "--gpsd", "127.0.0.1:" + closedPort], 69, false),
            (["demo", "--bogus"], 64, false),
            (["demo", "--capture", folder + "/missing.nmea"], 66, false),
            (["record", "--bogus"], 64, false),
            (["record", existing], 73, false),
            (["record", folder + "/new.capture", "--gpsd", "127.0.0.1:" + closedPort], 69, false),
            (["import", "--bogus"], 64, false),
            (["import", capture], 64, false),
            (["import", folder + "/missing.nmea", "-o", folder + "/out"], 66, false),
            (["import", empty, "-o", folder + "/out"], 65, false),
            (["import", capture, "-o", existing], 73, false),
            (["import", capture, "-o", "/dev/full", "--force"], 74, false),
            (["import", capture, "-o", folder + "/imported.capture"], 0, false),
            (["replay", "--bogus"], 64, false),
            (["replay", folder + "/missing.nmea"], 66, false),
            (["replay", empty], 65, false),
            (["replay", capture, "--profile", invalidProfile], 78, false),
            (["replay", capture, "--profile", "no-such-profile"], 66, false),
            (["replay", capture, "--format", "jsonl"], 74, true),
            (["replay", capture, "--profile", "car", "--evaluate", "--report", "/dev/full"], 73, false),
            (["replay", capture, "--profile", "car", "--evaluate", "--report", "/dev/full", "--force"], 74, false),
            (["replay", capture, "--count", "1"], 0, false),
            (["profiles"], 64, false),
            (["profiles", "list", "extra"], 64, false),
            (["profiles", "list"], 74, true),
            (["profiles", "list"], 0, false),
            (["profiles", "show"], 64, false),
            (["profiles", "show", "no-such-profile"], 66, false),
            (["profiles", "show", invalidProfile], 78, false),
            (["profiles", "show", "car"], 74, true),
            (["profiles", "validate", folder + "/missing.json"], 66, false),
            (["profiles", "validate", invalidProfile], 78, false),
            (["profiles", "validate", "car"], 74, true),
            (["status", "--bogus"], 64, false),
            (["status", "--runtime-dir", folder], 69, false),
            (["status", "--runtime-dir", folder + "/damaged"], 65, false),
            (["config"], 64, false),
            (["config", "validate", "--config", folder + "/missing.json"], 66, false),
            (["config", "validate", "--config", invalidProfile], 78, false),
            (["config", "validate", "--config", examplesConfig], 0, false),
            (["config", "validate", "--config", examplesConfig], 74, true),
            (["config", "show", "--config", folder + "/missing.json"], 66, false),
            (["config", "show", "--config", invalidProfile], 78, false),
            (["config", "show", "--config", examplesConfig, "--stdout", "csv"], 64, false),
            (["config", "show", "--config", examplesConfig], 74, true),
            (["config", "show", "--config", examplesConfig], 0, false),
        ]
        cases += commandPaths.map { ($0 + ["--help"], 0, false) }
        for (arguments, expected, failingOutput) in cases {
            let code = failingOutput ? runFailingOutput(arguments) : run(arguments).0
            #expect(code == expected, "\(arguments)")
            // The command's own help, and the profiles group's for its subcommands.
            let path = commandPaths.filter { arguments.starts(with: $0) }.max { $0.count < $1.count } ?? []
            #expect(documentedCodes(helpText(path)).contains(code), "\(arguments) returned \(code), not in its help")
            if path.count == 2 { #expect(documentedCodes(helpText(Array(path.prefix(1)))).contains(code)) }
        }
    }

    /// Every command that writes to stdout says so on stderr when the write fails (a full disk, /dev/full),
    /// and exits 74: the help of every command, --version, and each command's own output.
    @Test func aFailedWriteIsSaidOnStandardError() throws {
        let capture = Fixtures.path("gpsd-mtk-mt3339.nmea")
        let examplesConfig = repositoryRoot.appendingPathComponent("examples/lodestar.json").path
        let cases: [[String]] = commandPaths.map { $0 + ["--help"] } + [
            ["--version"], ["profiles", "show", "car"], ["profiles", "list"], ["profiles", "schema"],
            ["profiles", "validate", "car"], ["config", "show", "--config", examplesConfig],
            ["config", "validate", "--config", examplesConfig], ["config", "schema"],
            ["replay", capture, "--format", "jsonl"],
            ["replay", capture, "--profile", "car", "--evaluate"],
            ["replay", capture, "--profile", "car", "--format", "text"],
        ]
        for arguments in cases {
            let error = MemorySink()
            let code = LodestarCommand.main(
                arguments: arguments,
                context: CommandContext(standardOutput: FailingSink(), standardError: error, shouldStop: { false }))
            #expect(code == 74, "\(arguments)")
            #expect(error.text.contains("cannot write output: \(String(cString: strerror(EIO)))"), "\(arguments): \(error.text)")
        }
    }

    /// The Markdown files of docs/, as paths from the repository's root (`docs/cli.md`).
    static func guides() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: repositoryRoot.appendingPathComponent("docs").path)
            .filter { $0.hasSuffix(".md") }.map { "docs/" + $0 }
    }

    /// Every `lodestar …` command line shown in README.md, hardware.md and docs/ (in code blocks and in
    /// backticks) parses: its subcommand exists and each option it names is one the command takes (asked with
    /// --help appended, which answers once the words parse, before anything runs).
    @Test func everyDocumentedCommandLineParses() throws {
        let docs = try Self.guides()
        var checked = 0
        for file in ["README.md", "hardware.md"] + docs {
            let text = try String(contentsOf: repositoryRoot.appendingPathComponent(file), encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                for example in Self.commandLines(in: String(line)) {
                    let (code, output, error) = run(example + ["--help"])
                    #expect(code == 0 && output.hasPrefix("USAGE: lodestar"), "\(file):\(number + 1): lodestar \(example.joined(separator: " ")): \(error)")
                    checked += 1
                }
            }
        }
        #expect(checked >= 20, "only \(checked) documented command lines found")
    }

    /// The arguments of each `lodestar ARGS` (or `scripts/lodestar ARGS`) in a line of Markdown: a code line
    /// starting with it, or a backticked span. Shell syntax after it (`#`, `|`, `>`, `&&`) ends it; optional
    /// brackets (`[--json]`) and placeholders' ellipses are dropped.
    static func commandLines(in line: String) -> [[String]] {
        var candidates: [String] = []
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        for prefix in ["lodestar ", "scripts/lodestar ", "$ lodestar ", "sudo lodestar "] where trimmed.hasPrefix(prefix) {
            candidates.append(String(trimmed.dropFirst(prefix.count)))
        }
        let spans = line.components(separatedBy: "`")
        for (index, span) in spans.enumerated() where index % 2 == 1 {
            for prefix in ["lodestar ", "scripts/lodestar "] where span.hasPrefix(prefix) {
                candidates.append(String(span.dropFirst(prefix.count)))
            }
        }
        return candidates.flatMap { candidate -> [[String]] in
            var words: [String] = []
            for word in candidate.split(separator: " ").map(String.init) {
                if ["#", "|", ">", "2>", "&&", ";", "2>&1", ">/dev/null", "<"].contains(word) || word.hasPrefix("#") { break }
                let cleaned = word.replacingOccurrences(of: "[", with: "").replacingOccurrences(of: "]", with: "")
                if cleaned.isEmpty || cleaned == "…" || cleaned == "..." { continue }
                words.append(cleaned)
            }
            // A message lodestar prints (`lodestar profiles validate: FILE is …`) is output, not a command line.
            if words.contains(where: { $0.hasSuffix(":") }) { return [] }
            // `receiver identify|sleep|wake|test`: each subcommand.
            var lines = [words]
            if words.count >= 2, words[1].contains("|"), !words[1].hasPrefix("-") {
                lines = words[1].split(separator: "|").map { [words[0], String($0)] + words.dropFirst(2) }
            }
            return lines.compactMap { words in
                // A subcommand word must follow (prose like "lodestar run is…" is no example).
                guard let first = words.first, first.hasPrefix("-") || commandPaths.contains(where: { $0.first == first })
                else { return nil }
                // A valued option named last, in prose (`replay --profile`), gets a value, or it would take
                // the --help that is appended.
                let path = commandPaths.filter { words.starts(with: $0) }.max { $0.count < $1.count } ?? []
                if let last = words.last, documentedOptions(helpText(path)).contains(where: {
                    $0.takesValue && $0.spellings.contains(last)
                }) {
                    return words + ["1"]
                }
                return words
            }
        }
    }

    /// The help texts README.md and docs/ show (docs/cli.md has watch's and replay's) are the generated ones.
    @Test func theDocsShowTheGeneratedHelp() throws {
        let docs = try Self.guides()
        var checked = 0
        for file in ["README.md"] + docs {
            let text = try String(contentsOf: repositoryRoot.appendingPathComponent(file), encoding: .utf8)
            let blocks = text.components(separatedBy: "```\n").filter { $0.hasPrefix("USAGE: lodestar") }
            for block in blocks {
                let path = commandPaths.filter { block.hasPrefix("USAGE: " + (["lodestar"] + $0).joined(separator: " ")) }
                    .max { $0.count < $1.count } ?? []
                #expect(helpText(path).hasPrefix(block), "\(file)'s block differs from 'lodestar \(path) --help':\n\(block)")
                checked += 1
            }
        }
        #expect(checked >= 2, "only \(checked) help blocks found in README.md and docs/")
    }

    /// lodestar(1) is generated from the same declarations: it has a section for every command with every
    /// option that command accepts, and groff reads it without a warning.
    @Test func theManualPageHasEveryCommandAndOption() throws {
        let (code, manual, error) = run(["--generate-manual"])
        #expect(code == 0, "\(error)")
        let sections = manual.components(separatedBy: "\n.SS ")
        for command in allCommands() where command.subcommands.isEmpty {
            let heading = "\"" + ManualPage.escape(command.commandLine) + "\""
            let section = try #require(sections.first { $0.hasPrefix(heading) }, "no section for \(command.path)")
            for option in command.options {
                #expect(
                    section.contains("\\fB\\-\\-" + ManualPage.escape(option.name) + "\\fR"),
                    "\(command.path): --\(option.name) is not in its manual section")
            }
        }
        for option in LodestarCommand.declaration.options {
            #expect(sections[0].contains("\\-\\-" + ManualPage.escape(option.name)))
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("lodestar-\(getpid()).1").path
        try manual.write(toFile: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let groff = try runProcess("/usr/bin/groff", ["-man", "-ww", "-z", file])
        #expect(groff.status == 0 && groff.errors.isEmpty, "groff: \(groff.errors)")
    }

    /// Every command refuses a value its declaration does not list for an option with choices (exit 64, naming
    /// the allowed values), and takes each value it lists.
    @Test(arguments: allCommands().filter(\.subcommands.isEmpty).map(\.path))
    func declaredChoicesAreEnforced(path: [String]) throws {
        let declaration = try #require(allCommands().first { $0.path == path })
        let operands = declaration.arguments.filter { !$0.isOptional }.map { _ in "operand" }
        let required = declaration.options.filter(\.isRequired).flatMap { ["--\($0.name)", $0.choices.first ?? "1"] }
        for option in declaration.options where !option.choices.isEmpty {
            let needed = declaration.options.filter { $0.name == option.requires }
                .flatMap { $0.takesValue ? ["--\($0.name)", $0.choices.first ?? "1"] : ["--\($0.name)"] }
            for choice in option.choices {
                #expect(throws: Never.self, "\(path) --\(option.name) \(choice)") {
                    try declaration.parse(operands + required + needed + ["--\(option.name)", choice])
                }
            }
            for bogus in ["bogus", (option.choices.first ?? "") + "x", String(option.choices.first?.dropLast() ?? "")] {
                do {
                    _ = try declaration.parse(operands + required + needed + ["--\(option.name)", bogus])
                    Issue.record("\(path) --\(option.name) accepted '\(bogus)'")
                } catch {
                    #expect(error.message.contains(option.choices.joined(separator: "|")), "\(error.message)")
                }
            }
            let (code, _, error) = run(path + operands + required + needed + ["--\(option.name)", "bogus"])
            #expect(code == 64, "\(path) --\(option.name) bogus: \(error)")
        }
    }
    /// A default is declared once and read by the parser: one among the choices is one of them, and each
    /// option shared between commands (gpsd's address, the wiring, the power switch, the speed) has the same
    /// name and value form wherever it appears.
    @Test func defaultsAndSharedOptionsAreDeclaredOnce() throws {
        var forms: [String: Set<String>] = [:]
        for declaration in allCommands() {
            for option in declaration.options {
                if let value = option.defaultValue, !option.choices.isEmpty {
                    #expect(option.choices.contains(value), "\(declaration.path) --\(option.name) default \(value)")
                }
                #expect(
                    option.defaultValue == nil || option.defaultDescription == nil,
                    "\(declaration.path) --\(option.name) has a default value and a description of one")
                if option.isDeprecated { #expect(option.help.contains("use --"), "\(option.name)") }
                forms[option.name, default: []].insert((option.valueName ?? "") + "|" + option.choices.joined(separator: "|"))
            }
            // gpsd's address is only ever --gpsd; --host and --port survive only as deprecated spellings.
            for name in ["host", "port"] {
                if let option = declaration.option(name) { #expect(option.isDeprecated, "\(declaration.path) --\(name)") }
            }
        }
        for name in ["gpsd", "connection", "power-switch", "speed"] {
            #expect(forms[name]?.count == 1, "--\(name) takes different forms: \(forms[name] ?? [])")
        }
    }

    @Test func oldSpellingsStillWorkForOneReleaseWithAWarning() throws {
        let port = try freeLoopbackPort()
        let (code, _, error) = run(["watch", "--host", "127.0.0.1", "--port", String(port)])
        #expect(code == 69)
        #expect(error.contains("deprecated") && error.contains("--gpsd 127.0.0.1:\(port)"), "\(error)")
        #expect(error.contains("127.0.0.1:\(port)"))
        let (both, _, bothError) = run(["watch", "--gpsd", "localhost", "--port", "2947"])
        #expect(both == 64, "\(bothError)")
        let parsed = try ReceiverCommand.identifyDeclaration.parse(["--gpio-chip", "gpiochip0", "--gpio-line", "17"])
        #expect(parsed.string("gpio-chip") == "gpiochip0")
    }

    @Test func powerSwitchForms() throws {
        #expect(try PowerSwitchOption.parse("none") == PowerSwitchOption.Choice.none)
        #expect(try PowerSwitchOption.parse("usb-port") == .usbPort(hub: nil, port: nil))
        #expect(try PowerSwitchOption.parse("usb-port:1-1.4:3") == .usbPort(hub: "1-1.4", port: 3))
        #expect(try PowerSwitchOption.parse("gpio:gpiochip0:17") == .gpio(chip: "gpiochip0", line: 17, activeLow: false))
        #expect(try PowerSwitchOption.parse("gpio:gpiochip0:17:active-low") == .gpio(chip: "gpiochip0", line: 17, activeLow: true))
        for bad in ["gpio", "gpio::17", "gpio:c:-1", "gpio:c:1:low", "usb-port:", "usb-port:1-1", "usb-port:1-1:0", "usb"] {
            #expect(throws: UsageError.self, "\(bad)") { try PowerSwitchOption.parse(bad) }
        }
        // The service has no HUB:PORT in its config: it switches the port gpsd.device is on.
        let (code, _, error) = run(["config", "show", "--power-switch", "usb-port:1-1:3"])
        #expect(code == 64 && error.contains("usb-port without HUB:PORT"), "\(error)")
    }
}
