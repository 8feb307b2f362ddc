import Foundation
import Testing

/// The files a user installs: `systemd/lodestar.service` passes `systemd-analyze verify`, the udev rules parse in
/// `udevadm test` with no warnings, and `scripts/install` into a DESTDIR installs exactly the files hardware.md
/// lists, again with no change, and `scripts/uninstall` removes them.
///
/// The scripts run on a copy of the repository's packaging files with a stand-in `lodestar` executable, so no
/// release build is needed (and, until the repository has one, a placeholder `examples/lodestar.json`).
/// systemd-analyze and udevadm read fixed paths (the unit's ExecStart binary, the rules directories), so they
/// run in a private mount namespace (`unshare --map-root-user --mount`) where the DESTDIR is mounted over
/// /usr/local: they see the files where the install puts them, and nothing on the machine changes.
@Suite struct PackagingTests {
    @Test(.enabled(if: Namespace.available, "needs unshare --map-root-user --mount"))
    func unitPassesSystemdAnalyzeVerify() throws {
        let stage = try Stage()
        _ = try stage.install()
        let installedUnit = "/usr/local/lib/systemd/system/lodestar.service"
        let result = try Namespace.run(
            mounting: stage.destdir + "/usr/local", over: "/usr/local",
            "systemd-analyze", ["verify", installedUnit, repositoryRoot.path + "/systemd/lodestar.service"])
        #expect(result.status == 0, "systemd-analyze verify: \(result.errors)")
        // verify exits 0 on unknown keys and bad values too, and only says so on stderr.
        #expect(result.errors.isEmpty, "systemd-analyze verify printed: \(result.errors)")
    }

    @Test(.enabled(if: Namespace.available, "needs unshare --map-root-user --mount"),
        .enabled(if: UdevTest.tty != nil, "no tty in /sys/class/tty to run the rules on"))
    func udevRulesParseWithoutWarnings() throws {
        let stage = try Stage()
        _ = try stage.install(["--usb-serial-bridges"])
        let result = try UdevTest.run(stage)
        #expect(result.status == 0, "udevadm test: \(result.errors)")
        for file in ["60-lodestar.rules", "61-lodestar-usb-serial-bridges.rules"] {
            #expect(result.errors.contains("Reading rules file: /usr/local/lib/udev/rules.d/\(file)"),
                "udevadm did not read \(file): \(result.errors)")
        }
        #expect(UdevTest.complaints(result.errors) == [])
    }

    /// The check above finds udev's complaints about a rules file: an unknown key and an unknown group.
    @Test(.enabled(if: Namespace.available, "needs unshare --map-root-user --mount"),
        .enabled(if: UdevTest.tty != nil, "no tty in /sys/class/tty to run the rules on"))
    func udevComplaintsAboutABrokenRuleAreFound() throws {
        let stage = try Stage()
        _ = try stage.install()
        let broken = #"""
            SUBSYSTEM=="tty", COLOUR="blue"
            SUBSYSTEM=="tty", GROUP="no-such-group-for-lodestar"

            """#
        try broken.write(
            toFile: stage.destdir + "/usr/local/lib/udev/rules.d/62-lodestar-broken.rules", atomically: true,
            encoding: .utf8)
        let complaints = UdevTest.complaints(try UdevTest.run(stage).errors)
        #expect(complaints.count == 2, "\(complaints)")
        #expect(complaints.first?.contains("62-lodestar-broken.rules:1 ") == true, "\(complaints)")
        #expect(complaints.last?.contains("62-lodestar-broken.rules:2 ") == true, "\(complaints)")
    }

    @Test func installPutsExactlyTheFilesHardwareMdListsAndUninstallRemovesThem() throws {
        let listed = try filesListedInHardwareGuide()
        #expect(listed.contains("/usr/local/bin/lodestar"), "hardware.md's list: \(listed)")
        let stage = try Stage()

        let first = try stage.install()
        let installed = stage.contents()
        #expect(Set(installed.keys) == Set(listed), "installed \(installed.keys.sorted()), listed \(listed)")
        #expect(installed["/usr/local/bin/lodestar"]?.executable == true)
        #expect(first.output.contains("installed  /usr/local/bin/lodestar"))

        let second = try stage.install()
        #expect(stage.contents() == installed)
        let lines = second.output.split(separator: "\n")
        #expect(lines.count == listed.count && lines.allSatisfy { $0.hasPrefix("unchanged  ") }, "\(second.output)")

        let removal = try stage.run("scripts/uninstall")
        #expect(removal.status == 0, "uninstall: \(removal.errors)")
        #expect(stage.contents() == [:], "left after uninstall: \(stage.contents().keys.sorted())")
    }

    @Test func uninstallKeepsAChangedConfigUntilPurge() throws {
        let stage = try Stage()
        _ = try stage.install()
        let config = stage.destdir + "/etc/lodestar/lodestar.json"
        try #"{"profile":"bike"}"#.write(toFile: config, atomically: true, encoding: .utf8)
        let reinstall = try stage.install()
        #expect(reinstall.output.contains("kept       /etc/lodestar/lodestar.json"))
        #expect(try String(contentsOfFile: config, encoding: .utf8) == #"{"profile":"bike"}"#)

        let removal = try stage.run("scripts/uninstall")
        #expect(removal.output.contains("kept       /etc/lodestar/lodestar.json"))
        #expect(Array(stage.contents().keys) == ["/etc/lodestar/lodestar.json"])
        try FileManager.default.createDirectory(
            atPath: stage.destdir + "/var/lib/lodestar/track", withIntermediateDirectories: true)
        let purge = try stage.run("scripts/uninstall", ["--purge"])
        #expect(purge.status == 0, "uninstall --purge: \(purge.errors)")
        #expect(stage.contents() == [:])
        #expect(!FileManager.default.fileExists(atPath: stage.destdir + "/var/lib/lodestar"))
    }

    @Test func prefixMovesTheBinaryAndTheUnitFollowsIt() throws {
        let stage = try Stage()
        _ = try stage.install(["--prefix", "/usr"])
        let unit = try String(contentsOfFile: stage.destdir + "/usr/lib/systemd/system/lodestar.service", encoding: .utf8)
        #expect(unit.contains("\nExecStart=/usr/bin/lodestar run --config /etc/lodestar/lodestar.json\n"))
        #expect(stage.contents()["/usr/bin/lodestar"]?.executable == true)
        #expect(try stage.run("scripts/uninstall", ["--prefix", "/usr"]).status == 0)
        #expect(stage.contents() == [:])
    }

    @Test func installFailsClearlyWithoutTheExampleConfig() throws {
        let stage = try Stage()
        try FileManager.default.removeItem(atPath: stage.repository + "/examples/lodestar.json")
        let result = try stage.run("scripts/install", ["--binary", stage.binary])
        #expect(result.status == 66, "\(result.errors)")
        #expect(result.errors.contains("no example config"))
        #expect(stage.contents() == [:])
    }
}

/// The fenced block under hardware.md's "Files installed" heading: one path a line (a directory ends in `/`),
/// anything after the path a comment.
private func filesListedInHardwareGuide() throws -> [String] {
    let text = try String(contentsOfFile: repositoryRoot.path + "/hardware.md", encoding: .utf8)
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    guard let heading = lines.firstIndex(where: { $0.hasPrefix("#") && $0.contains("Files installed") }),
        let open = lines[heading...].firstIndex(where: { $0.hasPrefix("```") }),
        let close = lines[(open + 1)...].firstIndex(where: { $0.hasPrefix("```") })
    else { throw PackagingFailure("hardware.md has no fenced list under a \"Files installed\" heading") }
    return lines[(open + 1)..<close].compactMap { line in line.split(separator: " ").first.map(String.init) }
}

struct PackagingFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A finished child process: exit status, stdout and stderr.
struct ProcessResult {
    var status: Int32
    var output: String
    var errors: String
}

/// Runs `executable` (a path, or a name looked up on PATH) to completion, its output collected through files.
func runProcess(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws
    -> ProcessResult
{
    let directory = try temporaryDirectory("lodestar-process")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let outputPath = directory + "/stdout"
    let errorPath = directory + "/stderr"
    for path in [outputPath, errorPath] where !FileManager.default.createFile(atPath: path, contents: nil) {
        throw PackagingFailure("cannot create \(path)")
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable.contains("/") ? executable : try onPath(executable))
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
    process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errorPath))
    try process.run()
    process.waitUntilExit()
    return ProcessResult(
        status: process.terminationStatus, output: try String(contentsOfFile: outputPath, encoding: .utf8),
        errors: try String(contentsOfFile: errorPath, encoding: .utf8))
}

private func onPath(_ name: String) throws -> String {
    let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
    for directory in directories + ["/usr/sbin", "/sbin"] where FileManager.default.isExecutableFile(atPath: "\(directory)/\(name)") {
        return "\(directory)/\(name)"
    }
    throw PackagingFailure("\(name) is not installed (scripts/setup installs it)")
}

private func temporaryDirectory(_ prefix: String) throws -> String {
    var template = Array((NSTemporaryDirectory() + "/\(prefix)-XXXXXX").utf8CString)
    guard let made = mkdtemp(&template) else { throw PackagingFailure("cannot create a temporary directory") }
    return String(cString: made)
}

/// A copy of the packaging files (scripts/install and uninstall, systemd/, udev/, the example config) with a
/// stand-in `lodestar` executable, and an empty DESTDIR; both removed when the stage goes away.
final class Stage {
    let repository: String
    let destdir: String
    let binary: String
    private let root: String

    init() throws {
        root = try temporaryDirectory("lodestar-packaging")
        repository = root + "/repository"
        destdir = root + "/destdir"
        binary = root + "/lodestar"
        let files = FileManager.default
        for directory in ["scripts", "examples"] {
            try files.createDirectory(atPath: repository + "/" + directory, withIntermediateDirectories: true)
        }
        try files.createDirectory(atPath: destdir, withIntermediateDirectories: true)
        for item in ["scripts/install", "scripts/uninstall", "systemd", "udev"] {
            try files.copyItem(atPath: repositoryRoot.path + "/" + item, toPath: repository + "/" + item)
        }
        let example = repositoryRoot.path + "/examples/lodestar.json"
        if files.fileExists(atPath: example) {
            try files.copyItem(atPath: example, toPath: repository + "/examples/lodestar.json")
        } else {
            try "{}\n".write(toFile: repository + "/examples/lodestar.json", atomically: true, encoding: .utf8)
        }
        try "#!/bin/sh\nexit 0\n".write(toFile: binary, atomically: true, encoding: .utf8)
        try files.setAttributes([.posixPermissions: 0o755], ofItemAtPath: binary)
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    /// `DESTDIR=… scripts/<name> arguments`.
    func run(_ script: String, _ arguments: [String] = []) throws -> ProcessResult {
        try runProcess("/bin/bash", [repository + "/" + script] + arguments, environment: ["DESTDIR": destdir])
    }

    /// scripts/install with the stand-in binary; fails the test's setup unless it succeeds.
    func install(_ arguments: [String] = []) throws -> ProcessResult {
        let result = try run("scripts/install", ["--binary", binary] + arguments)
        guard result.status == 0 else {
            throw PackagingFailure("scripts/install exited \(result.status): \(result.errors)")
        }
        return result
    }

    struct Entry: Equatable {
        var bytes: Data?
        var executable: Bool
    }

    /// What an install leaves under DESTDIR: every file by its content, and each empty directory of Lodestar's
    /// own (with a trailing slash). The generic directories above the files (`/usr/local/bin`) are not counted.
    func contents() -> [String: Entry] {
        var result: [String: Entry] = [:]
        let files = FileManager.default
        guard let walker = files.enumerator(atPath: destdir) else { return [:] }
        while let relative = walker.nextObject() as? String {
            let path = destdir + "/" + relative
            var isDirectory: ObjCBool = false
            guard files.fileExists(atPath: path, isDirectory: &isDirectory) else { continue }
            if isDirectory.boolValue {
                let empty = (try? files.contentsOfDirectory(atPath: path).isEmpty) ?? false
                if empty && relative.contains("lodestar") { result["/" + relative + "/"] = Entry(bytes: nil, executable: false) }
            } else {
                result["/" + relative] = Entry(
                    bytes: files.contents(atPath: path), executable: files.isExecutableFile(atPath: path))
            }
        }
        return result
    }
}

/// `unshare --map-root-user --mount`: a private mount namespace in which this user is root, so that test files
/// can be mounted over system paths without changing them for anyone else.
enum Namespace {
    static let available: Bool = {
        (try? runProcess("unshare", ["--map-root-user", "--mount", "true"]).status) == 0
    }()

    /// Runs `command` in a fresh namespace after `mounts` (shell lines, run first, in order).
    static func run(mounts: [String], _ command: String, _ arguments: [String]) throws -> ProcessResult {
        let script = (mounts + [#"exec "$@""#]).joined(separator: " && ")
        return try runProcess(
            "unshare", ["--map-root-user", "--mount", "/bin/sh", "-c", script, "sh", try onPath(command)] + arguments)
    }

    static func run(mounting source: String, over target: String, _ command: String, _ arguments: [String]) throws
        -> ProcessResult
    {
        try run(mounts: ["mount --bind '\(source)' '\(target)'"], command, arguments)
    }
}

/// `udevadm test` on a tty with the staged rules mounted at /usr/local/lib/udev/rules.d (the system's own rules
/// load too), the lodestar group in /etc/group as an install creates it, and /dev and /run on private tmpfs:
/// udevadm test creates symlinks and its database there.
enum UdevTest {
    /// A tty in sysfs to run the rules on: a real serial port when there is one.
    static let tty: String? = {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/sys/class/tty")) ?? []
        let preferred = ["ttyACM", "ttyUSB", "ttyAMA", "ttyS"].lazy.compactMap { prefix in
            names.sorted().first { $0.hasPrefix(prefix) }
        }.first
        return (preferred ?? names.sorted().first).map { "/sys/class/tty/" + $0 }
    }()

    static func run(_ stage: Stage) throws -> ProcessResult {
        guard let tty else { throw PackagingFailure("no tty in /sys/class/tty") }
        let group = stage.destdir + "/../group"
        var groups = try String(contentsOfFile: "/etc/group", encoding: .utf8)
        if !groups.split(separator: "\n").contains(where: { $0.hasPrefix("lodestar:") }) {
            if !groups.hasSuffix("\n") { groups += "\n" }
            groups += "lodestar:x:64990:\n"
        }
        try groups.write(toFile: group, atomically: true, encoding: .utf8)
        return try Namespace.run(
            mounts: [
                "mount --bind '\(stage.destdir)/usr/local' /usr/local", "mount --bind '\(group)' /etc/group",
                "mount -t tmpfs tmpfs /run", "mount -t tmpfs tmpfs /dev",
            ], "udevadm", ["test", "--action=add", tty])
    }

    /// What udevadm said about a Lodestar rules file while reading it: lines that start with the file's path
    /// (`/…/60-lodestar.rules:12 Invalid key 'FOO'`). Lines about a rule applied to the device start with the
    /// device's name instead, and "Reading rules file:" lines only name the file.
    static func complaints(_ errors: String) -> [String] {
        errors.split(separator: "\n").map(String.init).filter { line in
            line.hasPrefix("/") && line.contains("lodestar") && line.contains(".rules")
        }
    }
}
