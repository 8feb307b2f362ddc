import Lodestar
import Policy
import SystemInterface

/// Whether chrony takes its time from gpsd, read from chrony's own config: gpsd's shared-memory refclocks
/// (`refclock SHM 0` to 3: gpsd writes units 0 and 1 for its first device, 2 and 3 for its second) or its
/// socket refclock (`refclock SOCK /run/chrony.DEVICE.sock`, which gpsd writes when chrony made the socket).
/// A receiver that Lodestar puts to sleep stops both, and power save makes its PPS and fix times irregular,
/// so `lodestar status` warns (hardware.md, "Sharing the receiver with chrony").
enum TimeConsumers {
    /// chrony's config and the folders its Debian config includes (`confdir`, `sourcedir`).
    static let chronyConfig = "/etc/chrony/chrony.conf"
    static let chronyFolders = ["/etc/chrony/conf.d", "/etc/chrony/sources.d"]

    /// The refclock lines of `text` that read gpsd: each as written, trimmed.
    static func gpsdRefclocks(in text: String) -> [String] {
        text.split(whereSeparator: \.isNewline).compactMap { raw in
            let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0]
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            guard words.count >= 3, words[0].lowercased() == "refclock" else { return nil }
            switch words[1].uppercased() {
            case "SHM": guard ["0", "1", "2", "3"].contains(words[2]) else { return nil }
            case "SOCK": guard words[2].hasPrefix("/run/chrony.") || words[2].hasPrefix("/var/run/chrony.") else { return nil }
            default: return nil
            }
            return words.joined(separator: " ")
        }
    }

    /// gpsd refclocks in chrony's config on this machine, with the file that names each.
    static func chronyReadsGPSD(config: String = chronyConfig, folders: [String] = chronyFolders) -> [String] {
        var files = [config]
        for folder in folders {
            files += directoryEntries(folder).filter { $0.hasSuffix(".conf") || $0.hasSuffix(".sources") }.sorted()
                .map { folder + "/" + $0 }
        }
        return files.flatMap { file -> [String] in
            guard let bytes = readFile(file) else { return [] }
            return gpsdRefclocks(in: String(decoding: bytes, as: UTF8.self)).map { "\($0) (\(file))" }
        }
    }

    /// Whether a profile may take the receiver below continuous: only one that asks for the best accuracy,
    /// never pauses and delivers updates keeps it running all the time.
    static func mayPowerDown(_ profile: Profile) -> Bool {
        !(profile.updatesEnabled && profile.updates.desiredAccuracy.isBest && !profile.updates.pausesAutomatically
            && profile.deferred == nil && !profile.significantChange)
    }

    /// The warning `lodestar status` prints, nil when there is nothing to say.
    static func warning(refclocks: [String], profile: Profile?, regime: ReceiverRegime) -> String? {
        guard !refclocks.isEmpty else { return nil }
        let powersDown = regime < .continuous || profile.map(mayPowerDown) ?? true
        guard powersDown else { return nil }
        return "warning: chrony takes time from gpsd (" + refclocks.joined(separator: "; ")
            + "), and this profile puts the receiver into power save or to sleep: chrony loses that source "
            + "while it sleeps. Use always-on for a time server, or give chrony other sources (hardware.md)"
    }
}
