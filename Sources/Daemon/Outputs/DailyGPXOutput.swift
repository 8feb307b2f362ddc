import GPSModel
import SystemInterface

#if canImport(Glibc)
import Glibc
#endif

/// One GPX 1.1 file per UTC day of the locations' timestamps, `directory/YYYY-MM-DD.gpx`, valid XML after every
/// point: each point is written together with the closing tags, and the next point overwrites from where those
/// tags start. A restart the same day reopens the day's file and starts a new `<trkseg>`. Day files older than
/// `keepDays` (counted from `now`) are deleted when a day's file is opened. Other records are ignored.
public final class DailyGPXOutput: TrackOutput {
    public let directory: String
    public let keepDays: Int?
    public var name: String { "gpx \(directory)" }

    static let closing = Array("</trkseg>\n</trk>\n</gpx>\n".utf8)
    static let reopenSegment = Array("</trkseg>\n<trkseg>\n".utf8)
    /// Seconds between fsyncs while points come, besides the store's sync points (`TrackOutput.sync`):
    /// journald's interval, as the store's and the jsonl's defaults.
    static let syncInterval = 300.0

    private var descriptor: Int32 = -1
    private var day: Int64?
    private var path = ""
    /// Where the closing tags start in the open file: the next point goes there.
    private var closingOffset: off_t = 0
    /// The file was reopened: its next point starts a new segment.
    private var startsSegment = false
    private var unsynced = false
    private var lastSync: UTCTime?

    /// `directory` is used as given (the caller resolves it against the state directory).
    public init(directory: String, settings: DaemonConfiguration.GPXOutput) {
        self.directory = directory
        keepDays = settings.keepDays
    }

    deinit { close() }

    public func write(_ record: TrackRecord, now: UTCTime) throws(OutputFailure) {
        guard case .location(let location) = record else { return }
        let pointDay = utcDay(of: location.timestamp)
        if pointDay != day || descriptor < 0 { try open(day: pointDay, date: location.timestamp, now: now) }
        var bytes = startsSegment ? Self.reopenSegment : []
        GPXText.appendTrackPoint(location, to: &bytes)
        let pointEnd = closingOffset + off_t(bytes.count)
        bytes.append(contentsOf: Self.closing)
        // The point and the closing tags end past the old closing tags: nothing is left after them to cut.
        try writeAt(closingOffset, bytes, cutsAfter: false)
        startsSegment = false
        closingOffset = pointEnd
        unsynced = true
        if lastSync.map({ now.interval(since: $0) >= Self.syncInterval }) ?? true { sync(now: now) }
    }

    public func tick(now: UTCTime) throws(OutputFailure) {
        if unsynced, lastSync.map({ now.interval(since: $0) >= Self.syncInterval }) ?? true { sync(now: now) }
    }

    /// The file is complete after every point already; this syncs and closes it.
    public func close() {
        guard descriptor >= 0 else { return }
        if unsynced { _ = fsync(descriptor) }
        unsynced = false
        _ = Glibc.close(descriptor)
        descriptor = -1
    }

    // MARK: - Day files

    private func open(day newDay: Int64, date: UTCTime, now: UTCTime) throws(OutputFailure) {
        close()
        day = nil
        path = directory + "/" + utcDate(of: date) + ".gpx"
        do { try makeDirectories(directory) } catch {
            throw OutputFailure(path: directory, reason: errnoText(error.code))
        }
        let opened = retryingOnInterrupt { Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644) }
        guard opened >= 0 else { throw failure(errno) }
        descriptor = opened
        let existing: [UInt8]
        do { existing = try readWholeFile(path) } catch {
            close()
            throw failure(error.code)
        }
        if let offset = Self.resumeOffset(in: existing) {
            closingOffset = off_t(offset)
            // Valid again at once if an earlier run was cut short mid-point.
            try writeAt(closingOffset, Self.closing)
            startsSegment = true
        } else {
            if !existing.isEmpty {
                // Not a file this output wrote: set it aside rather than lose it.
                close()
                let aside = path + ".unreadable"
                guard rename(path, aside) == 0 else { throw failure(errno) }
                let fresh = retryingOnInterrupt { Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644) }
                guard fresh >= 0 else { throw failure(errno) }
                descriptor = fresh
            }
            var start = Array(GPXText.header.utf8) + Array("<trkseg>\n".utf8)
            closingOffset = off_t(start.count)
            start.append(contentsOf: Self.closing)
            try writeAt(0, start)
            startsSegment = false
        }
        day = newDay
        lastSync = now
        deleteOldDays(now: now)
    }

    /// Where the next point goes in a day file left by an earlier run: before its closing tags, or after its
    /// last complete point when it was cut short (a crash mid-write). Nil when it is not such a file.
    static func resumeOffset(in bytes: [UInt8]) -> Int? {
        guard bytes.starts(with: Array("<?xml".utf8)), bytes.count >= closing.count else { return nil }
        if Array(bytes.suffix(closing.count)) == closing { return bytes.count - closing.count }
        let pointEnd = Array("</trkpt>\n".utf8)
        var index = bytes.count - pointEnd.count
        while index >= 0 {
            if bytes[index] == pointEnd[0], Array(bytes[index..<(index + pointEnd.count)]) == pointEnd {
                return index + pointEnd.count
            }
            index -= 1
        }
        return nil
    }

    /// `cutsAfter`: the file may go on past what this writes (an earlier run's point cut short), and is cut
    /// there.
    private func writeAt(_ offset: off_t, _ bytes: [UInt8], cutsAfter: Bool = true) throws(OutputFailure) {
        var code: Int32 = 0
        bytes.withUnsafeBytes { buffer in
            var done = 0
            while done < buffer.count, let base = buffer.baseAddress {
                let written = retryingOnInterrupt {
                    pwrite(descriptor, base + done, buffer.count - done, offset + off_t(done))
                }
                if written <= 0 {
                    code = written == 0 ? EIO : errno
                    return
                }
                done += written
            }
        }
        guard code == 0 else {
            // Put the closing tags back where they were so the file stays valid, then reopen on the next try.
            _ = ftruncate(descriptor, offset)
            if offset > 0 {
                _ = Self.closing.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, offset) }
            }
            close()
            day = nil
            throw failure(code)
        }
        if cutsAfter { _ = ftruncate(descriptor, offset + off_t(bytes.count)) }
    }

    public func sync(now: UTCTime) {
        guard descriptor >= 0, unsynced else { return }
        _ = fsync(descriptor)
        unsynced = false
        lastSync = now
    }

    /// Deletes `YYYY-MM-DD.gpx` files more than `keepDays` days before `now`'s day.
    private func deleteOldDays(now: UTCTime) {
        guard let keepDays, keepDays > 0 else { return }
        let cutoff = utcDate(of: UTCTime(seconds: (utcDay(of: now) - Int64(keepDays) + 1) * 86_400))
        for entry in directoryEntries(directory) where entry.count == 14 && entry.hasSuffix(".gpx") {
            let date = String(entry.prefix(10))
            if date < cutoff, date.allSatisfy({ $0.isNumber || $0 == "-" }) { _ = unlink(directory + "/" + entry) }
        }
    }

    private func failure(_ code: Int32) -> OutputFailure {
        OutputFailure(path: path, reason: errnoText(code))
    }
}
