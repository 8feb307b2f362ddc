/// lodestar(1) in roff, generated from the same declarations as `--help` (swift-argument-parser's
/// `generate-manual` plugin, GenerateManual/Extensions/ArgumentParser+MDoc.swift, does this for its commands),
/// so the manual page cannot drift from the parser. `scripts/package` writes it with `lodestar --generate-manual`.
enum ManualPage {
    /// The whole page: one section per command, depth first, then the exit statuses, files and see-also.
    static func render(_ root: CommandDeclaration, version: String) -> String {
        var lines: [String] = [
            #".TH LODESTAR 1 "" "lodestar \#(version)" "User Commands""#,
            ".SH NAME",
            #"lodestar \- \#(escape(root.abstract))"#,
            ".SH SYNOPSIS",
            ".B lodestar",
            ".I subcommand",
            "[\\fIoptions\\fR]",
            ".SH DESCRIPTION",
        ]
        lines += paragraphs(root.discussion)
        lines += [
            ".PP",
            "Each subcommand below is listed with its usage, what it does and its options; "
                + "\\fBlodestar\\fR \\fIsubcommand\\fR \\fB\\-\\-help\\fR prints the same text.",
        ]
        lines.append(".SH OPTIONS")
        lines += options(root.options)
        lines.append(".SH COMMANDS")
        for command in flattened(root.subcommands) { lines += section(command) }
        lines.append(".SH \"EXIT STATUS\"")
        for status in root.exitStatuses {
            lines += [".TP", "\\fB\(status.code.rawValue)\\fR", escape(status.meaning)]
        }
        lines += [
            ".SH FILES",
            ".TP", "\\fI/etc/lodestar/lodestar.json\\fR", "The configuration of \\fBlodestar run\\fR.",
            ".TP", "\\fI/etc/lodestar/profiles/\\fR", "Profiles of the administrator's, beside the built-in ones.",
            ".TP", "\\fI/var/lib/lodestar/\\fR", "The service's state, store and track files.",
            ".TP", "\\fI/run/lodestar/\\fR", "The status file and the location socket.",
            ".SH \"SEE ALSO\"",
            ".BR gpsd (8),",
            ".BR gpspipe (1),",
            ".BR systemd.service (5),",
            ".BR udev (7)",
        ]
        return lines.joined(separator: "\n") + "\n"
    }

    /// Commands with a body, in the order `--help` lists them, groups' subcommands after their group.
    private static func flattened(_ commands: [CommandDeclaration]) -> [CommandDeclaration] {
        commands.flatMap { command in
            (command.subcommands.isEmpty ? [command] : []) + flattened(command.subcommands)
        }
    }

    private static func section(_ command: CommandDeclaration) -> [String] {
        var lines = [".SS \"\(escape(command.commandLine))\"", escape(command.abstract) + "."]
        var synopsis = command.arguments.map { "\\fI\(escape($0.spelling))\\fR" }
        synopsis += command.options.filter(\.isRequired).map { "\\fB\\-\\-\(escape($0.name))\\fR" }
        lines += [".PP", "\\fB\(escape(command.commandLine))\\fR " + synopsis.joined(separator: " ") + " [\\fIoptions\\fR]"]
        lines += paragraphs(command.discussion)
        for argument in command.arguments {
            lines += [".TP", "\\fI\(escape(argument.spelling))\\fR", escape(argument.help)]
        }
        lines += options(command.options)
        return lines
    }

    private static func options(_ options: [OptionDeclaration]) -> [String] {
        options.flatMap { option -> [String] in
            var label = option.shortName.map { "\\fB\\-\($0)\\fR, " } ?? ""
            label += "\\fB\\-\\-\(escape(option.name))\\fR"
            if let valueName = option.valueName {
                let value = option.choices.isEmpty ? valueName : option.choices.joined(separator: "|")
                label += " \\fI\(escape(value))\\fR"
            }
            return [".TP", label, escape(option.fullHelp)]
        }
    }

    /// The discussion's paragraphs; lines that start with a space (examples) kept as written.
    private static func paragraphs(_ text: String) -> [String] {
        var lines: [String] = []
        var inExample = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix(" ") {
                if !inExample { lines += [".PP", ".nf"] }
                inExample = true
                lines.append(escape(String(line)))
                continue
            }
            if inExample { lines.append(".fi") }
            inExample = false
            if line.isEmpty { lines.append(".PP") } else { lines.append(escape(String(line))) }
        }
        if inExample { lines.append(".fi") }
        if lines.first != ".PP" { lines.insert(".PP", at: 0) }
        return lines
    }

    /// Text safe in roff: backslashes, hyphens and non-ASCII characters escaped, no line starting with a control
    /// character.
    static func escape(_ text: String) -> String {
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": escaped += "\\e"
            case "-": escaped += "\\-"
            // groff reads ASCII: other characters by their code point (…, °, ±).
            case _ where scalar.value > 127:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                escaped += "\\[u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + "]"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        if escaped.hasPrefix(".") || escaped.hasPrefix("'") { escaped = "\\&" + escaped }
        return escaped
    }
}
