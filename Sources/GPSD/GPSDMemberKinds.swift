import JSON

extension JSONSyntax {
    /// Members libgps reads as numbers in the classes Lodestar uses; a string there makes libgps stop
    /// parsing silently, so such a line is rejected instead of half-decoded.
    static let numericMembers: [String: Set<String>] = [
        "TPV": ["mode", "status", "ept", "lat", "lon", "altHAE", "altMSL", "alt", "epx", "epy", "epv", "track",
                "magtrack", "magvar", "speed", "climb", "epd", "eps", "epc", "eph", "sep", "geoidSep", "leapseconds"],
        "SKY": ["xdop", "ydop", "vdop", "tdop", "hdop", "gdop", "pdop", "nSat", "uSat"],
        "GST": ["rms", "major", "minor", "orient", "lat", "lon", "alt"],
    ]

    /// Whether `bytes` is one valid JSON object whose members have the kinds libgps needs: a `class`
    /// string, and numbers where libgps reads numbers.
    package static func hasGPSDKinds(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var className: String?
        var kinds: [(Range<Int>, Kind)] = []
        let valid = scanObject(bytes) { key, kind, value in
            if bytes[key].elementsEqual("class".utf8) {
                className = kind == .string ? string(bytes, value) : nil
            } else if kind != .number {
                kinds.append((key, kind))
            }
        }
        guard valid, let className else { return false }
        guard let numeric = numericMembers[className] else { return true }
        return !kinds.contains { key, _ in
            numeric.contains(String(decoding: UnsafeBufferPointer(rebasing: bytes[key]), as: UTF8.self))
        }
    }
}
