import Foundation
import Lodestar
import Policy
import SystemInterface
import TestSupport
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Under systemd, stderr is journald's stream and `JOURNAL_STREAM` names it (`device:inode`): each line then
/// starts with its sd-daemon priority, so `journalctl -p warning` shows what went wrong and not the regime
/// changes. Proven on the binary with its stderr a file that `JOURNAL_STREAM` names, as journald's socket
/// would be named.
@Suite(.tags(.gpsd), .serialized) struct JournalPriorityTests {
    @Test func linesCarryTheirPriorityWhenStderrIsTheJournalsStream() async throws {
        let run = try DaemonUnderTest(model: DaemonRunTests.car, speed: 10)
        var config = run.baseConfig(profile: "car")
        config["logLevel"] = "debug"
        try run.writeConfig(config)
        // The file exists before the process, so its inode is known; ChildProcess opens it without replacing it.
        try #require(FileManager.default.createFile(atPath: run.stderrPath, contents: nil))
        var info = stat()
        #expect(stat(run.stderrPath, &info) == 0)
        try run.start(environment: ["JOURNAL_STREAM": "\(info.st_dev):\(info.st_ino)"])
        try await run.waitUntil("a regime change and a command sent", timeout: 60) {
            run.stderr.contains("regime ") && run.stderr.contains("power: sent ")
        }
        let (status, _) = try await run.terminate()
        #expect(status == 0, "\(run.stderr.suffix(2000))")
        let lines = run.stderr.split(separator: "\n").map(String.init)
        for line in lines {
            #expect(line.range(of: #"^<[2-7]>lodestar run: "#, options: .regularExpression) != nil, "\(line)")
        }
        func priority(of fragment: String) -> Set<String> {
            Set(lines.filter { $0.contains(fragment) }.map { String($0.prefix(3)) })
        }
        #expect(priority(of: "lodestar run: profile car") == ["<5>"])
        #expect(priority(of: "lodestar run: regime ") == ["<6>"])
        #expect(priority(of: "lodestar run: power: sent ") == ["<7>"])
        #expect(priority(of: "lodestar run: power: receiverIdentified") == ["<5>"])
        #expect(priority(of: "lodestar run: stopping") == ["<5>"])
    }

    /// Without a matching stream (a terminal, a pipe, a child of the service with other stderr) no prefixes,
    /// and the level drops what matters less before it is written.
    @Test func noPrefixOffTheJournalAndTheLevelFilters() throws {
        let file = try #require(TemporaryDirectory(prefix: "lodestar-journal")).path + "/stderr"
        try #require(FileManager.default.createFile(atPath: file, contents: nil))
        let descriptor = open(file, O_WRONLY)
        defer { close(descriptor) }
        var info = stat()
        #expect(fstat(descriptor, &info) == 0)
        #expect(LogLineFormat.journalStreamIs("\(info.st_dev):\(info.st_ino)", descriptor: descriptor))
        #expect(!LogLineFormat.journalStreamIs("\(info.st_dev):\(info.st_ino + 1)", descriptor: descriptor))
        #expect(!LogLineFormat.journalStreamIs("garbage", descriptor: descriptor))
        #expect(!LogLineFormat.forStandardError(environment: nil).priorityPrefix)

        let lines = Mutex<[String]>([])
        let format = LogLineFormat(priorityPrefix: true)
        var logger = Logger(label: "lodestar run", logLevel: .notice) { message in
            lines.withLock { $0.append(format.line(message)) }
        }
        logger.info("regime standby: parked")
        logger.notice("stopping", metadata: [Logger.Metadata("regime", "standby")])
        logger.logLevel = .debug
        logger.debug("power: sent UBX-RXM-PMREQ")
        logger.error("cannot write the state file: disk full")
        #expect(
            lines.withLock { $0 } == [
                "<5>lodestar run: stopping regime=standby", "<7>lodestar run: power: sent UBX-RXM-PMREQ",
                "<3>lodestar run: cannot write the state file: disk full",
            ])
        TemporaryDirectory.removeTree(String(file.dropLast("/stderr".count)))
    }
}
