import SystemInterface

/// What this machine's process table says about the gpsd serving a port: whether it runs read-only (`-b`),
/// which drops every write to a receiver without telling the client (gpsd 3.22 answers a `?DEVICE` hexdata
/// write as if it went out; docs/gpsd.md §5). Only a local gpsd can be looked at.
public enum GPSDProcesses {
    /// gpsd's options that take a value (its getopt string `bc:D:f:F:GhlNnpP:rS:s:V`): the value is the rest
    /// of the word or the next word.
    private static let optionsWithValue: Set<Character> = ["c", "D", "f", "F", "P", "S", "s"]

    /// Whether the gpsd listening on `port` on this machine runs with `-b`/`--readonly`; nil when `host` is
    /// not this machine or no gpsd process with that port is found (another user's /proc may be hidden).
    public static func readOnly(host: String, port: String, proc: String = "/proc") -> Bool? {
        guard ["localhost", "127.0.0.1", "::1", ""].contains(host) else { return nil }
        for entry in directoryEntries(proc) where entry.allSatisfy(\.isNumber) {
            guard let bytes = readFile(proc + "/" + entry + "/cmdline"), !bytes.isEmpty else { continue }
            let words = bytes.split(separator: 0, omittingEmptySubsequences: false).map {
                String(decoding: $0, as: UTF8.self)
            }
            guard let options = options(ofGPSD: words), options.port == port else { continue }
            return options.readOnly
        }
        return nil
    }

    /// The port and read-only flag of a gpsd command line (its words), or nil when it is not gpsd's.
    package static func options(ofGPSD words: [String]) -> (port: String, readOnly: Bool)? {
        guard let program = words.first, program.split(separator: "/").last == "gpsd" else { return nil }
        var port = "2947"
        var readOnly = false
        var index = 1
        while index < words.count {
            let word = words[index]
            index += 1
            if word == "--readonly" { readOnly = true; continue }
            if word.hasPrefix("--port=") { port = String(word.dropFirst("--port=".count)); continue }
            if word == "--port", index < words.count { port = words[index]; index += 1; continue }
            guard word.hasPrefix("-"), !word.hasPrefix("--"), word.count > 1 else { continue }
            var letters = word.dropFirst()
            while let letter = letters.first {
                letters = letters.dropFirst()
                if letter == "b" { readOnly = true }
                if optionsWithValue.contains(letter) {
                    var value = String(letters)
                    if value.isEmpty, index < words.count {
                        value = words[index]
                        index += 1
                    }
                    if letter == "S" { port = value }
                    break
                }
            }
        }
        return (port, readOnly)
    }
}
