import GPSD
import GPSModel

/// Decodes `lines` as a live session does (`ReportLineProcessor`), without a connection: the decoding paths
/// under test, each line stamped with a fixed instant.
func decodeAsLiveSession(_ lines: [String], satelliteDetail: Bool, collapsesEpochs: Bool = false) -> [Report] {
    let processor = ReportLineProcessor()
    processor.satelliteDetail = satelliteDetail
    processor.collapsesEpochs = collapsesEpochs
    var reports: [Report] = []
    for line in lines {
        var bytes = Array(line.utf8CString)
        bytes.withUnsafeMutableBufferPointer { buffer in
            processor.process(UnsafeBufferPointer(rebasing: buffer.dropLast()), now: 0)
        }
        while let report = processor.next() { reports.append(report) }
    }
    reports += processor.flushAll().map { .fix($0) }
    return reports
}

/// A report's payload when it is of that class, for `#require`: nil otherwise.
extension Report {
    var fix: Fix? { if case .fix(let fix) = self { fix } else { nil } }
    var sky: SkyView? { if case .sky(let sky) = self { sky } else { nil } }
    var gst: GST? { if case .gst(let gst) = self { gst } else { nil } }
    var devices: [DeviceInfo]? { if case .devices(let devices) = self { devices } else { nil } }
}
