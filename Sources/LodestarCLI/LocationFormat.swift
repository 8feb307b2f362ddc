import Daemon
import GPSModel
import JSON

/// How `watch` and `demo` print locations; `LocationPrinter` prints them.
public enum LocationFormat: String, Sendable, CaseIterable {
    /// One JSON object per line, the schema in docs/cli.md.
    case jsonl
    /// One aligned line per fix, for people.
    case text
    /// A GPX 1.1 document: one track, one segment per unbroken run.
    case gpx
    /// A GeoJSON (RFC 7946) FeatureCollection: a Point feature per location and the track as a line.
    case geojson
}

// The encoders live with the daemon's outputs (one encoder for every command and output); these names keep the
// commands' files reading as before.
typealias JSONLine = Daemon.JSONLine
typealias TextLine = Daemon.TextLine
typealias GPXText = Daemon.GPXText
typealias DecimalText = Daemon.DecimalText
