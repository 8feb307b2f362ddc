import Daemon
import GPSModel
import SystemInterface
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite struct RotatingFileOutputTests {
    private func rotation(maxBytes: Int?, daily: Bool, keep: Int?) -> DaemonConfiguration.Rotation {
        var rotation = DaemonConfiguration.Rotation()
        rotation.maxBytes = maxBytes
        rotation.daily = daily
        rotation.keep = keep
        return rotation
    }

    /// Writes `lines` (text, UTC time) through a RotatingFile at `path` and closes it: the file a restart finds.
    private func writeAndClose(
        _ path: String, _ settings: DaemonConfiguration.Rotation, _ lines: [(String, String)]
    ) throws {
        let file = RotatingFile(path: path, rotation: settings, fsyncInterval: 10)
        for (text, time) in lines { try file.append(text, now: utc(time)) }
        file.close()
    }

    @Test func rotatesBySizeKeepingTheNewestFilesWithNamesThatSortByTime() throws {
        try withScratchDirectory { directory in
            let path = directory + "/track/locations.jsonl"
            let file = RotatingFile(path: path, rotation: rotation(maxBytes: 100, daily: false, keep: 2), fsyncInterval: 10)
            let start = try utc("2026-11-30T10:00:00Z")
            // 40-byte lines: two fit in 100 bytes, the third starts a new file.
            let lines = (0..<9).map { index in "{\"n\":\(index),\"pad\":\"" + String(repeating: "x", count: 23) + "\"}\n" }
            #expect(lines.allSatisfy { $0.utf8.count == 40 })
            for (index, line) in lines.enumerated() {
                try file.append(line, now: UTCTime(seconds: start.seconds + Int64(index) * 60))
            }
            file.close()
            #expect(file.rotationCount == 4)
            let rotated = file.rotatedFiles()
            let names = rotated.map { $0.split(separator: "/").last.map(String.init) ?? "" }
            #expect(names == ["locations.2026-11-30T100400Z.jsonl", "locations.2026-11-30T100600Z.jsonl"])
            #expect(fileText(rotated[0]) == lines[4] + lines[5])
            #expect(fileText(rotated[1]) == lines[6] + lines[7])
            #expect(fileText(path) == lines[8])
        }
    }

    @Test func rotatesAtUTCMidnightAndKeepsOnlyKeepDays() throws {
        try withScratchDirectory { directory in
            let path = directory + "/locations.jsonl"
            let file = RotatingFile(path: path, rotation: rotation(maxBytes: nil, daily: true, keep: 2), fsyncInterval: 0)
            try file.append("a\n", now: utc("2026-11-28T12:00:00Z"))
            try file.append("b\n", now: utc("2026-11-28T23:59:59Z"))
            // A tick after midnight sets the day's file aside without waiting for a line.
            try file.tick(now: utc("2026-11-29T00:00:01Z"))
            #expect(file.rotatedFiles().count == 1)
            #expect(fileText(path) == "")
            try file.append("c\n", now: utc("2026-11-29T08:00:00Z"))
            try file.append("d\n", now: utc("2026-11-30T00:00:00Z"))
            try file.append("e\n", now: utc("2026-12-01T00:00:00Z"))
            file.close()
            let names = file.rotatedFiles().map { $0.split(separator: "/").last.map(String.init) ?? "" }
            // The 28th's file was the oldest of three and is gone.
            #expect(names == ["locations.2026-11-29T080000Z.jsonl", "locations.2026-11-30T000000Z.jsonl"])
            #expect(fileText(directory + "/" + names[0]) == "c\n")
            #expect(fileText(directory + "/" + names[1]) == "d\n")
            #expect(fileText(path) == "e\n")
        }
    }

    @Test func appendsToTheExistingFileAfterAReopen() throws {
        try withScratchDirectory { directory in
            let path = directory + "/locations.jsonl"
            let settings = rotation(maxBytes: nil, daily: false, keep: nil)
            try writeAndClose(path, settings, [("one\n", "2026-11-30T10:00:00Z"), ("two\n", "2026-11-30T10:00:01Z")])
            let second = RotatingFile(path: path, rotation: settings, fsyncInterval: 10)
            try second.append("three\n", now: utc("2026-11-30T10:05:00Z"))
            second.close()
            #expect(fileText(path) == "one\ntwo\nthree\n")
            #expect(second.rotatedFiles().isEmpty)
        }
    }

    @Test func aFileLeftOnAnEarlierDayIsSetAsideAtTheFirstLineAfterARestart() throws {
        try withScratchDirectory { directory in
            let path = directory + "/locations.jsonl"
            let settings = rotation(maxBytes: nil, daily: true, keep: nil)
            try writeAndClose(path, settings, [("yesterday\n", "2026-11-29T22:00:00Z")])
            // The file system dates the file from its last write: make that the 29th.
            var times = [timespec(tv_sec: 1_795_989_600, tv_nsec: 0), timespec(tv_sec: 1_795_989_600, tv_nsec: 0)]
            #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
            let second = RotatingFile(path: path, rotation: settings, fsyncInterval: 10)
            try second.append("today\n", now: utc("2026-11-30T06:00:00Z"))
            second.close()
            let rotated = second.rotatedFiles()
            #expect(rotated.map { $0.split(separator: "/").last.map(String.init) ?? "" } == ["locations.2026-11-29T220000Z.jsonl"])
            #expect(rotated.first.map(fileText) == "yesterday\n")
            #expect(fileText(path) == "today\n")
        }
    }

    @Test func syncsAtTheConfiguredCadenceAndAtClose() throws {
        try withScratchDirectory { directory in
            let settings = rotation(maxBytes: nil, daily: false, keep: nil)
            let start = try utc("2026-11-30T10:00:00Z")
            let everyTenSeconds = RotatingFile(path: directory + "/a.jsonl", rotation: settings, fsyncInterval: 10)
            for second in 0..<25 {
                try everyTenSeconds.append("x\n", now: UTCTime(seconds: start.seconds + Int64(second)))
            }
            // Opened at 0 s: synced with the lines at 10 s and 20 s.
            #expect(everyTenSeconds.syncCount == 2)
            try everyTenSeconds.tick(now: UTCTime(seconds: start.seconds + 26))
            #expect(everyTenSeconds.syncCount == 2)
            try everyTenSeconds.tick(now: UTCTime(seconds: start.seconds + 30))
            #expect(everyTenSeconds.syncCount == 3)
            try everyTenSeconds.append("x\n", now: UTCTime(seconds: start.seconds + 31))
            everyTenSeconds.close()
            #expect(everyTenSeconds.syncCount == 4)

            let everyLine = RotatingFile(path: directory + "/b.jsonl", rotation: settings, fsyncInterval: 0)
            for second in 0..<5 { try everyLine.append("x\n", now: UTCTime(seconds: start.seconds + Int64(second))) }
            everyLine.close()
            #expect(everyLine.syncCount == 5)
        }
    }

    @Test func aFullDiskIsAnOutputFailureNamingThePathAndTheReason() throws {
        let file = RotatingFile(path: "/dev/full", rotation: rotation(maxBytes: nil, daily: false, keep: nil), fsyncInterval: 0)
        #expect(throws: OutputFailure(path: "/dev/full", reason: errnoText(ENOSPC))) {
            try file.append("line\n", now: utc("2026-11-30T10:00:00Z"))
        }
        // And again on the retry: nothing was left open half-written.
        #expect(throws: OutputFailure(path: "/dev/full", reason: errnoText(ENOSPC))) {
            try file.append("line\n", now: utc("2026-11-30T10:00:01Z"))
        }
    }

    @Test func aWriteThatStopsShortLeavesNoHalfLine() throws {
        try withScratchDirectory { directory in
            let path = directory + "/locations.jsonl"
            let file = RotatingFile(path: path, rotation: rotation(maxBytes: nil, daily: false, keep: nil), fsyncInterval: 0)
            let now = try utc("2026-11-30T10:00:00Z")
            try file.append("first line\n", now: now)
            // The disk fills after 4 bytes of the next line.
            var calls = 0
            file.writeBytes = { descriptor, bytes, count in
                calls += 1
                if calls == 1 { return write(descriptor, bytes, min(count, 4)) }
                errno = ENOSPC
                return -1
            }
            #expect(throws: OutputFailure(path: path, reason: errnoText(ENOSPC))) {
                try file.append("second line\n", now: now)
            }
            #expect(fileText(path) == "first line\n")
            file.writeBytes = { write($0, $1, $2) }
            try file.append("second line\n", now: now)
            file.close()
            #expect(fileText(path) == "first line\nsecond line\n")
        }
    }

    @Test func missingDirectoriesAreCreatedAndAFileInTheirPlaceIsAFailure() throws {
        try withScratchDirectory { directory in
            let settings = rotation(maxBytes: nil, daily: false, keep: nil)
            let nested = RotatingFile(path: directory + "/a/b/c/locations.jsonl", rotation: settings, fsyncInterval: 0)
            try nested.append("x\n", now: utc("2026-11-30T10:00:00Z"))
            nested.close()
            #expect(fileText(directory + "/a/b/c/locations.jsonl") == "x\n")
            var status = stat()
            #expect(stat(directory + "/a/b", &status) == 0 && status.st_mode & 0o777 == 0o755)

            // A plain file where the directory should be.
            let blocked = RotatingFile(path: directory + "/a/b/c/locations.jsonl/x.jsonl", rotation: settings, fsyncInterval: 0)
            let now = try utc("2026-11-30T10:00:00Z")
            do throws(OutputFailure) {
                try blocked.append("x\n", now: now)
                Issue.record("a file in place of the directory was accepted")
            } catch {
                #expect(error.path.hasSuffix("x.jsonl"))
                #expect(error.reason == errnoText(ENOTDIR) || error.reason == errnoText(EEXIST))
            }
        }
    }
}
