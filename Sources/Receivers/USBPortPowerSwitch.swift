#if canImport(Glibc)
import Glibc
#endif
import SystemInterface

/// The power of the hub port a USB receiver is plugged into, through the port's `disable` file in sysfs
/// (Linux 6.0 and later): writing `1` turns the port's power off, `0` turns it back on.
///
/// Off, the receiver disappears (its tty goes away) and on again it enumerates afresh, possibly under another
/// tty name; the port is found once, when the switch is made, so it keeps working while the device is gone.
/// A port on a USB 3 hub has a USB 2 half and a USB 3 half (the `peer` link in sysfs) that share the port's
/// power, so both are written. The hub must switch each port's power on its own: hubs with ganged power,
/// among them the Raspberry Pi 3B+, 4 and 5's own ports, disable the port but keep its power on.
public final class USBPortPowerSwitch: PowerSwitch {
    /// A hub's port: hub `1-1.2` port 4, or root hub `usb1` port 1.
    public struct Port: Sendable, Hashable, CustomStringConvertible {
        /// The hub's name in sysfs (`1-1.2`, `usb1`): `lsusb -t` and `uhubctl` show the same tree.
        public var hub: String
        /// 1-based, as sysfs and `uhubctl` number them.
        public var number: Int

        public var description: String { "\(hub) port \(number)" }
    }

    /// The port the receiver is on.
    public let port: Port
    /// The USB 3 half of the same port on a USB 3 hub, switched with it.
    public let peer: Port?
    /// The `disable` files written: the port's, then its peer's.
    public let disableFiles: [String]
    /// `USB port 1-1.2 port 4`, with ` and its USB 3 peer 2-1 port 4` on a USB 3 hub.
    public let description: String

    /// The port of the USB device behind a tty (`/dev/ttyACM0`, a `/dev/serial/by-id/…` link, or `ttyACM0`),
    /// found under `sysfs` while the device is plugged in.
    public convenience init(device: String, sysfs: String = "/sys") throws(PowerSwitchError) {
        let location = try Self.locate(device: device, sysfs: sysfs)
        try self.init(port: location.port, hubDirectory: location.hubDirectory)
    }

    /// A port named directly: hub `1-1` (or root hub `usb1`) and port `3`, as `uhubctl` and `lsusb -t` show them.
    public convenience init(hub: String, port: Int, sysfs: String = "/sys") throws(PowerSwitchError) {
        guard Self.hubParts(hub) != nil, port > 0 else {
            throw PowerSwitchError(
                "USB port \(hub) port \(port): not a hub port (a hub is named like 1-1 or 1-1.2, a root hub usb1; ports count from 1)")
        }
        let hubDirectory = sysfs + "/bus/usb/devices/" + hub
        guard isDirectory(hubDirectory) else {
            throw PowerSwitchError(
                "USB port \(hub) port \(port): no USB hub \(hub) (\(hubDirectory) does not exist; `lsusb -t` shows the hubs)")
        }
        try self.init(port: Port(hub: hub, number: port), hubDirectory: hubDirectory)
    }

    private init(port: Port, hubDirectory: String) throws(PowerSwitchError) {
        let portDirectory = try Self.portDirectory(port, hubDirectory: hubDirectory)
        var files = [try Self.disableFile(port, portDirectory: portDirectory)]
        var peer: Port?
        if let peerDirectory = Self.resolvedPath(portDirectory + "/peer"),
            let peerPort = Self.port(ofPortDirectory: Self.lastComponent(peerDirectory))
        {
            files.append(try Self.disableFile(peerPort, portDirectory: peerDirectory))
            peer = peerPort
        }
        self.port = port
        self.peer = peer
        self.disableFiles = files
        self.description = "USB port \(port)" + (peer.map { " and its USB 3 peer \($0)" } ?? "")
    }

    public func setPowered(_ powered: Bool) throws(PowerSwitchError) {
        let value: [UInt8] = powered ? [UInt8(ascii: "0")] : [UInt8(ascii: "1")]
        for file in disableFiles {
            let descriptor = retryingOnInterrupt { open(file, O_WRONLY | O_CLOEXEC) }
            guard descriptor >= 0 else { throw Self.writeFailure(description, file: file, SystemError("open", file)) }
            let written = value.withUnsafeBytes { writeAll(descriptor, $0) }
            let code = errno
            close(descriptor)
            guard written else {
                throw Self.writeFailure(description, file: file, SystemError("write", file, code: code))
            }
        }
    }

    // MARK: Finding the port

    /// Where a tty's USB device sits: the port of its hub, and the hub's directory in sysfs.
    package struct Location: Sendable, Hashable {
        package var port: Port
        package var hubDirectory: String
    }

    /// Follows `class/tty/<tty>/device` to the USB interface (`…/usb1/1-1/1-1.3/1-1.3:1.0`, for a usb-serial
    /// bridge one level further down), whose parent is the device `1-1.3` and grandparent its hub `1-1`.
    package static func locate(device: String, sysfs: String) throws(PowerSwitchError) -> Location {
        // A /dev/serial/by-id link names the tty it points to; a path that does not resolve is taken by its name.
        let tty = lastComponent((device.hasPrefix("/") ? resolvedPath(device) : nil) ?? device)
        let classEntry = sysfs + "/class/tty/" + tty
        var status = stat()
        guard lstat(classEntry, &status) == 0 else {
            throw PowerSwitchError(
                "USB port power for \(device): no tty \(tty) in \(sysfs)/class/tty (is the receiver plugged in?)")
        }
        guard let deviceDirectory = resolvedPath(classEntry + "/device") else {
            throw PowerSwitchError(
                "USB port power for \(device): not a USB device (\(tty) has no device in sysfs: a virtual terminal or pseudo-terminal)")
        }
        let components = deviceDirectory.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard let interfaceIndex = components.lastIndex(where: { interfaceParts($0) != nil }), interfaceIndex >= 2,
            let interface = interfaceParts(components[interfaceIndex]),
            components[interfaceIndex - 1] == interface.device,
            let devicePort = port(ofDevice: interface.device)
        else {
            throw PowerSwitchError(
                "USB port power for \(device): not a USB device (\(tty)'s device is \(deviceDirectory)); a receiver on a UART can be switched by a GPIO enable line instead")
        }
        let hubDirectory = components[..<(interfaceIndex - 1)].joined(separator: "/")
        guard lastComponent(hubDirectory) == devicePort.hub else {
            throw PowerSwitchError(
                "USB port power for \(device): \(interface.device)'s parent in sysfs is \(hubDirectory), not hub \(devicePort.hub)")
        }
        return Location(port: devicePort, hubDirectory: hubDirectory)
    }

    /// `1-1.3` is port 3 of hub `1-1`; `1-1` is port 1 of root hub `usb1`.
    package static func port(ofDevice name: String) -> Port? {
        let halves = name.split(separator: "-", omittingEmptySubsequences: false)
        guard halves.count == 2, let bus = Int(halves[0]) else { return nil }
        let path = halves[1].split(separator: ".", omittingEmptySubsequences: false)
        guard let last = path.last, let number = Int(last), number > 0, path.allSatisfy({ Int($0) != nil }) else {
            return nil
        }
        let hub = path.count == 1 ? "usb\(bus)" : "\(bus)-" + path.dropLast().joined(separator: ".")
        return Port(hub: hub, number: number)
    }

    /// `usb2-port3` is port 3 of root hub `usb2`; `2-1-port3` port 3 of hub `2-1`.
    package static func port(ofPortDirectory name: String) -> Port? {
        guard let dash = name.lastIndex(of: "-") else { return nil }
        let suffix = name[name.index(after: dash)...]
        guard suffix.hasPrefix("port"), let number = Int(suffix.dropFirst(4)), number > 0 else { return nil }
        let hub = String(name[..<dash])
        return hubParts(hub) == nil ? nil : Port(hub: hub, number: number)
    }

    /// The bus and the path of ports from its root hub: `1-1.2` is bus 1, [1, 2]; root hub `usb1` bus 1, [].
    private static func hubParts(_ hub: String) -> (bus: Int, path: [Int])? {
        if hub.hasPrefix("usb") { return Int(hub.dropFirst(3)).map { ($0, []) } }
        let halves = hub.split(separator: "-", omittingEmptySubsequences: false)
        guard halves.count == 2, let bus = Int(halves[0]) else { return nil }
        let path = halves[1].split(separator: ".", omittingEmptySubsequences: false).compactMap { Int($0) }
        guard !path.isEmpty, path.count == halves[1].split(separator: ".", omittingEmptySubsequences: false).count
        else { return nil }
        return (bus, path)
    }

    /// `1-1.3:1.0` is configuration 1, interface 0 of device `1-1.3`.
    private static func interfaceParts(_ name: String) -> (device: String, configuration: String)? {
        let halves = name.split(separator: ":", omittingEmptySubsequences: false)
        guard halves.count == 2, port(ofDevice: String(halves[0])) != nil else { return nil }
        let numbers = halves[1].split(separator: ".", omittingEmptySubsequences: false)
        guard numbers.count == 2, numbers.allSatisfy({ Int($0) != nil }) else { return nil }
        return (String(halves[0]), String(halves[1]))
    }

    /// `<hub>/<hub>:1.0/<hub>-port<N>`, the root hub's interface being `<bus>-0:1.0` (`usb1/1-0:1.0/usb1-port1`).
    private static func portDirectory(_ port: Port, hubDirectory: String) throws(PowerSwitchError) -> String {
        guard let parts = hubParts(port.hub) else {
            throw PowerSwitchError("USB port \(port): \(port.hub) is not a hub name")
        }
        let interface = hubDirectory + "/" + (parts.path.isEmpty ? "\(parts.bus)-0" : port.hub) + ":1.0"
        let portDirectory = interface + "/\(port.hub)-port\(port.number)"
        if isDirectory(portDirectory) { return portDirectory }
        let ports = directoryEntries(interface).compactMap { entry in
            Self.port(ofPortDirectory: entry).flatMap { $0.hub == port.hub ? $0.number : nil }
        }.sorted()
        guard let first = ports.first, let last = ports.last else {
            throw PowerSwitchError("USB port \(port): \(port.hub) is not a hub (no \(interface)/\(port.hub)-port* in sysfs)")
        }
        throw PowerSwitchError("USB port \(port): hub \(port.hub) has no port \(port.number) (its ports are \(first)–\(last))")
    }

    /// The port's `disable` file, checked to exist and be writable now rather than at the first switch.
    private static func disableFile(_ port: Port, portDirectory: String) throws(PowerSwitchError) -> String {
        let file = portDirectory + "/disable"
        guard access(file, F_OK) == 0 else {
            throw PowerSwitchError(
                "USB port \(port): no \(file): this kernel has no per-port `disable` files (they came with Linux 6.0); uhubctl can switch the port instead, on a hub that switches each port's power on its own")
        }
        guard access(file, W_OK) == 0 else {
            throw writeFailure("USB port \(port)", file: file, SystemError("access", file))
        }
        return file
    }

    /// A refused write, with the remedy for a permission error.
    package static func writeFailure(_ subject: String, file: String, _ error: SystemError) -> PowerSwitchError {
        switch error.code {
        case EACCES, EPERM, EROFS:
            PowerSwitchError(
                "\(subject): no permission to write \(file) (\(error)); switching a port needs root, or a udev rule that gives the user's group write access to the hub ports' disable files")
        default:
            PowerSwitchError("\(subject): cannot write \(file) (\(error))")
        }
    }

    // MARK: Files

    private static func resolvedPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    private static func lastComponent(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }
}
