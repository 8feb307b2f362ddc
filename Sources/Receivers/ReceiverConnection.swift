import Policy

extension ReceiverConnection {
    /// From the device path gpsd reads, by name only (no file system access).
    ///
    /// - `/dev/ttyACM*` is USB CDC: the receiver's own USB. `/dev/ttyUSB*` is a USB-to-serial bridge, so
    ///   the receiver's UART. `/dev/ttyAMA*`, `/dev/ttyS*`, `/dev/ttyTHS*`, `/dev/serial0` and `/dev/serial1`
    ///   are board UARTs.
    /// - `/dev/serial/by-id/` and `/dev/serial/by-path/` names are udev's (60-serial.rules), which end in
    ///   `-port<N>` exactly for usb-serial bridge drivers (ttyUSB) and without it for CDC ACM: `-port<N>` is
    ///   the UART, a by-id name ending in `-if<NN>` or a by-path name ending in `:<config>.<interface>` is
    ///   USB. A by-id name naming a bridge chip (FTDI, Silicon Labs CP210x, Prolific, WCH CH34x) is the UART
    ///   even where the suffix is missing.
    /// - Limits: a name a local udev rule made up (`/dev/gps0`), a pty and anything else is `unknown`; so
    ///   is a renamed by-id link. The resolved kernel name is always right where the link is not, so a
    ///   caller that can resolve the link should pass the resolved path.
    public init(devicePath: String) {
        let components = devicePath.split(separator: "/")
        guard let name = components.last else {
            self = .unknown
            return
        }
        let directory = components.dropLast().joined(separator: "/")
        switch directory {
        case "dev":
            self = Self.kernelName(name)
        case "dev/serial/by-id":
            self = Self.udevName(name, byID: true)
        case "dev/serial/by-path":
            self = Self.udevName(name, byID: false)
        default:
            self = .unknown
        }
    }

    private static func kernelName(_ name: Substring) -> ReceiverConnection {
        func numbered(_ prefix: String) -> Bool {
            name.hasPrefix(prefix) && name.count > prefix.count
                && name.dropFirst(prefix.count).allSatisfy(\.isNumber)
        }
        if numbered("ttyACM") { return .usb }
        if numbered("ttyUSB") || numbered("ttyAMA") || numbered("ttyS") || numbered("ttyTHS") { return .uart }
        if name == "serial0" || name == "serial1" { return .uart }
        return .unknown
    }

    /// Bridge chips by the vendor and product words udev puts in by-id names.
    private static let bridgeWords = [
        "ftdi", "ft232", "silicon_labs", "cp210", "prolific", "pl2303", "1a86", "ch340", "ch341", "usb-serial",
        "usb_uart", "usb_to_uart",
    ]

    private static func udevName(_ name: Substring, byID: Bool) -> ReceiverConnection {
        if hasNumberedSuffix(name, marker: "-port") { return .uart }
        if byID {
            let lowered = name.lowercased()
            if bridgeWords.contains(where: { lowered.contains($0) }) { return .uart }
            return name.hasPrefix("usb-") && hasNumberedSuffix(name, marker: "-if") ? .usb : .unknown
        }
        // `platform-…-usb-0:1.3:1.0`: a USB interface with no usb-serial port after it.
        guard name.contains("-usb-"), let colon = name.lastIndex(of: ":") else { return .unknown }
        let interface = name[name.index(after: colon)...].split(separator: ".", omittingEmptySubsequences: false)
        let isInterface =
            interface.count == 2 && interface.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isNumber) }
        return isInterface ? .usb : .unknown
    }

    /// Whether `name` ends in `marker` and one or more digits.
    private static func hasNumberedSuffix(_ name: Substring, marker: String) -> Bool {
        let digits = name.reversed().prefix { $0.isNumber }
        return !digits.isEmpty && name.dropLast(digits.count).hasSuffix(marker)
    }
}
