import Foundation
@testable import Receivers
import SystemInterface
import Testing

/// A temporary directory shaped like /sys: real directories under devices/, and the same symlinks the kernel
/// makes (class/tty/<tty> to the tty's directory, its `device` back up to the interface or usb-serial port,
/// bus/usb/devices/<name> to each device, a port's `peer` to its other half on a USB 3 hub).
final class SysfsTree {
    let root: String
    private let files = FileManager.default

    init() throws {
        root = NSTemporaryDirectory() + "lodestar-sysfs-\(UUID().uuidString)"
        try files.createDirectory(atPath: root, withIntermediateDirectories: true)
    }

    deinit { try? files.removeItem(atPath: root) }

    func directory(_ path: String) throws {
        try files.createDirectory(atPath: root + "/" + path, withIntermediateDirectories: true)
    }

    /// `link` (relative to the root) pointing at `target`, relative to the link's folder as the kernel writes it.
    func link(_ link: String, to target: String) throws {
        try directory((link as NSString).deletingLastPathComponent)
        try files.createSymbolicLink(atPath: root + "/" + link, withDestinationPath: target)
    }

    /// A hub's ports: `<hub>/<interface>/<hubname>-portN/`, with an empty `disable` file on kernels 6.0+.
    func hubPorts(_ hubDirectory: String, hub: String, interface: String, count: Int, disable: Bool) throws {
        for number in 1...count {
            let port = "\(hubDirectory)/\(interface)/\(hub)-port\(number)"
            try directory(port)
            if disable { _ = files.createFile(atPath: root + "/" + port + "/disable", contents: Data()) }
        }
    }

    func contents(_ path: String) -> String? {
        files.contents(atPath: root + "/" + path).map { String(decoding: $0, as: UTF8.self) }
    }

    func remove(_ path: String) throws { try files.removeItem(atPath: root + "/" + path) }

    /// A Raspberry Pi 4: the VL805 controller's USB 2 root hub usb1 (one port) with the VL805's own 4-port hub
    /// 1-1 behind it, whose ports pair with the USB 3 root hub usb2's (`peer`); a u-blox on 1-1 port 3
    /// (ttyACM0); a 4-port hub with per-port switching on 1-1 port 2, holding a u-blox (ttyACM1) on its port 1
    /// and an FTDI bridge (ttyUSB0) on its port 4; the UART ttyAMA0 and the virtual console tty1.
    static func raspberryPi4(kernelHasDisableFiles: Bool = true) throws -> SysfsTree {
        let tree = try SysfsTree()
        let controller = "devices/platform/scb/fd500000.pcie/pci0000:00/0000:00:00.0/0000:01:00.0"
        let usb1 = controller + "/usb1", usb2 = controller + "/usb2"
        let internalHub = usb1 + "/1-1", externalHub = internalHub + "/1-1.2"
        let disable = kernelHasDisableFiles
        try tree.hubPorts(usb1, hub: "usb1", interface: "1-0:1.0", count: 1, disable: disable)
        try tree.hubPorts(usb2, hub: "usb2", interface: "2-0:1.0", count: 4, disable: disable)
        try tree.hubPorts(internalHub, hub: "1-1", interface: "1-1:1.0", count: 4, disable: disable)
        try tree.hubPorts(externalHub, hub: "1-1.2", interface: "1-1.2:1.0", count: 4, disable: disable)
        for number in 1...4 {
            try tree.link(
                "\(internalHub)/1-1:1.0/1-1-port\(number)/peer", to: "../../../../usb2/2-0:1.0/usb2-port\(number)")
            try tree.link("\(usb2)/2-0:1.0/usb2-port\(number)/peer", to: "../../../usb1/1-1/1-1:1.0/1-1-port\(number)")
        }
        let acm0 = internalHub + "/1-1.3/1-1.3:1.0/tty/ttyACM0"
        try tree.link(acm0 + "/device", to: "../../../1-1.3:1.0")
        try tree.link("class/tty/ttyACM0", to: "../../" + acm0)
        let acm1 = externalHub + "/1-1.2.1/1-1.2.1:1.0/tty/ttyACM1"
        try tree.link(acm1 + "/device", to: "../../../1-1.2.1:1.0")
        try tree.link("class/tty/ttyACM1", to: "../../" + acm1)
        let usb0 = externalHub + "/1-1.2.4/1-1.2.4:1.0/ttyUSB0/tty/ttyUSB0"
        try tree.link(usb0 + "/device", to: "../../../ttyUSB0")
        try tree.link("class/tty/ttyUSB0", to: "../../" + usb0)
        let ama0 = "devices/platform/soc/fe201000.serial/tty/ttyAMA0"
        try tree.link(ama0 + "/device", to: "../../../fe201000.serial")
        try tree.link("class/tty/ttyAMA0", to: "../../" + ama0)
        try tree.directory("devices/virtual/tty/tty1")
        try tree.link("class/tty/tty1", to: "../../devices/virtual/tty/tty1")
        for (name, path) in [
            ("usb1", usb1), ("usb2", usb2), ("1-1", internalHub), ("1-1.2", externalHub),
            ("1-1.3", internalHub + "/1-1.3"), ("1-1.2.1", externalHub + "/1-1.2.1"),
            ("1-1.2.4", externalHub + "/1-1.2.4"),
        ] {
            try tree.link("bus/usb/devices/" + name, to: "../../../" + path)
        }
        return tree
    }

    /// A Raspberry Pi 5: no hub on the board, a u-blox (ttyACM0) straight on port 1 of the RP1's root hub usb3.
    static func raspberryPi5() throws -> SysfsTree {
        let tree = try SysfsTree()
        let usb3 = "devices/platform/axi/1000120000.pcie/1f00200000.usb/xhci-hcd.0/usb3"
        try tree.hubPorts(usb3, hub: "usb3", interface: "3-0:1.0", count: 2, disable: true)
        let acm0 = usb3 + "/3-1/3-1:1.0/tty/ttyACM0"
        try tree.link(acm0 + "/device", to: "../../../3-1:1.0")
        try tree.link("class/tty/ttyACM0", to: "../../" + acm0)
        try tree.link("bus/usb/devices/usb3", to: "../../../" + usb3)
        return tree
    }
}

@Suite struct USBPortPowerSwitchTests {
    static let pi4Ports = "devices/platform/scb/fd500000.pcie/pci0000:00/0000:00:00.0/0000:01:00.0"

    /// What `make` threw, as text (a switch that was made is "no error").
    func failure(_ make: () throws -> Void) -> String {
        do {
            try make()
            return "no error"
        } catch {
            return "\(error)"
        }
    }

    @Test func aReceiverOnThePi4sOwnPortSwitchesThePortAndItsUSB3Peer() throws {
        let tree = try SysfsTree.raspberryPi4()
        let powerSwitch = try USBPortPowerSwitch(device: "/dev/ttyACM0", sysfs: tree.root)
        #expect(powerSwitch.port == .init(hub: "1-1", number: 3))
        #expect(powerSwitch.peer == .init(hub: "usb2", number: 3))
        #expect(powerSwitch.description == "USB port 1-1 port 3 and its USB 3 peer usb2 port 3")
        let port = Self.pi4Ports + "/usb1/1-1/1-1:1.0/1-1-port3/disable"
        let peer = Self.pi4Ports + "/usb2/2-0:1.0/usb2-port3/disable"
        try powerSwitch.setPowered(false)
        #expect(tree.contents(port) == "1")
        #expect(tree.contents(peer) == "1")
        #expect(tree.contents(Self.pi4Ports + "/usb1/1-1/1-1:1.0/1-1-port2/disable") == "")
        try powerSwitch.setPowered(true)
        #expect(tree.contents(port) == "0")
        #expect(tree.contents(peer) == "0")
    }

    @Test(arguments: [("ttyACM1", 1), ("/dev/ttyUSB0", 4)])
    func aReceiverBehindAHubSwitchesThatHubsPort(device: String, number: Int) throws {
        let tree = try SysfsTree.raspberryPi4()
        let powerSwitch = try USBPortPowerSwitch(device: device, sysfs: tree.root)
        #expect(powerSwitch.port == .init(hub: "1-1.2", number: number))
        #expect(powerSwitch.peer == nil)
        #expect(powerSwitch.description == "USB port 1-1.2 port \(number)")
        let file = Self.pi4Ports + "/usb1/1-1/1-1.2/1-1.2:1.0/1-1.2-port\(number)/disable"
        #expect(powerSwitch.disableFiles == [tree.root + "/" + file])
        try powerSwitch.setPowered(false)
        #expect(tree.contents(file) == "1")
        // Off, the receiver is gone from sysfs; the port found at the start still switches it back on.
        try tree.remove(Self.pi4Ports + "/usb1/1-1/1-1.2/1-1.2.\(number)")
        try powerSwitch.setPowered(true)
        #expect(tree.contents(file) == "0")
    }

    @Test func aReceiverOnARootHubPortSwitchesTheRootHubsPort() throws {
        let tree = try SysfsTree.raspberryPi5()
        let powerSwitch = try USBPortPowerSwitch(device: "/dev/ttyACM0", sysfs: tree.root)
        #expect(powerSwitch.description == "USB port usb3 port 1")
        try powerSwitch.setPowered(false)
        let file = "devices/platform/axi/1000120000.pcie/1f00200000.usb/xhci-hcd.0/usb3/3-0:1.0/usb3-port1/disable"
        #expect(tree.contents(file) == "1")
        #expect(tree.contents(file.replacingOccurrences(of: "port1", with: "port2")) == "")
    }

    @Test func aPortNamedDirectly() throws {
        let tree = try SysfsTree.raspberryPi4()
        let onHub = try USBPortPowerSwitch(hub: "1-1.2", port: 3, sysfs: tree.root)
        try onHub.setPowered(false)
        #expect(tree.contents(Self.pi4Ports + "/usb1/1-1/1-1.2/1-1.2:1.0/1-1.2-port3/disable") == "1")
        let onRootHub = try USBPortPowerSwitch(hub: "usb1", port: 1, sysfs: tree.root)
        try onRootHub.setPowered(false)
        #expect(tree.contents(Self.pi4Ports + "/usb1/1-0:1.0/usb1-port1/disable") == "1")
        let withPeer = try USBPortPowerSwitch(hub: "1-1", port: 4, sysfs: tree.root)
        #expect(withPeer.description == "USB port 1-1 port 4 and its USB 3 peer usb2 port 4")
    }

    @Test func aDeviceThatIsNotOnUSBIsSaidToBeSo() throws {
        let tree = try SysfsTree.raspberryPi4()
        let uart = failure { _ = try USBPortPowerSwitch(device: "/dev/ttyAMA0", sysfs: tree.root) }
        #expect(uart.contains("/dev/ttyAMA0: not a USB device"), "\(uart)")
        #expect(uart.contains("fe201000.serial"))
        let console = failure { _ = try USBPortPowerSwitch(device: "tty1", sysfs: tree.root) }
        #expect(console.contains("tty1: not a USB device"), "\(console)")
        let missing = failure { _ = try USBPortPowerSwitch(device: "/dev/ttyACM9", sysfs: tree.root) }
        #expect(missing.contains("no tty ttyACM9 in \(tree.root)/class/tty"), "\(missing)")
    }

    @Test func aKernelBefore6Point0IsNamedWithUhubctlAsTheWayOut() throws {
        let tree = try SysfsTree.raspberryPi4(kernelHasDisableFiles: false)
        let text = failure { _ = try USBPortPowerSwitch(device: "/dev/ttyUSB0", sysfs: tree.root) }
        #expect(text.hasPrefix("USB port 1-1.2 port 4: no \(tree.root)/"), "\(text)")
        #expect(text.contains("1-1.2-port4/disable"))
        #expect(text.contains("Linux 6.0"))
        #expect(text.contains("uhubctl"))
    }

    @Test func portsAndHubsThatDoNotExist() throws {
        let tree = try SysfsTree.raspberryPi4()
        let port = failure { _ = try USBPortPowerSwitch(hub: "1-1.2", port: 7, sysfs: tree.root) }
        #expect(port == "USB port 1-1.2 port 7: hub 1-1.2 has no port 7 (its ports are 1–4)")
        let notHub = failure { _ = try USBPortPowerSwitch(hub: "1-1.3", port: 1, sysfs: tree.root) }
        #expect(notHub.hasPrefix("USB port 1-1.3 port 1: 1-1.3 is not a hub"), "\(notHub)")
        let absent = failure { _ = try USBPortPowerSwitch(hub: "1-1.9", port: 1, sysfs: tree.root) }
        #expect(absent.hasPrefix("USB port 1-1.9 port 1: no USB hub 1-1.9"), "\(absent)")
        let badName = failure { _ = try USBPortPowerSwitch(hub: "hub0", port: 1, sysfs: tree.root) }
        #expect(badName.contains("not a hub port"), "\(badName)")
        let zero = failure { _ = try USBPortPowerSwitch(hub: "1-1", port: 0, sysfs: tree.root) }
        #expect(zero.contains("not a hub port"), "\(zero)")
    }

    @Test func aRefusedWriteNamesTheFileAndTheRemedy() {
        let text = USBPortPowerSwitch.writeFailure(
            "USB port 1-1 port 3", file: "/sys/x/1-1-port3/disable", SystemError("open", "/sys/x/1-1-port3/disable", code: EACCES)
        ).description
        #expect(text.hasPrefix("USB port 1-1 port 3: no permission to write /sys/x/1-1-port3/disable ("))
        #expect(text.contains("Permission denied"))
        #expect(text.contains("udev rule"))
        let other = USBPortPowerSwitch.writeFailure("USB port 1-1 port 3", file: "f", SystemError("write", "f", code: EIO))
        #expect(other.description == "USB port 1-1 port 3: cannot write f (write f: Input/output error)")
    }

    // Root writes through any mode bits, so only an unprivileged run can see the kernel refuse.
    @Test(.enabled(if: getuid() != 0)) func anUnwritablePortFileIsRefusedAtTheStart() throws {
        let tree = try SysfsTree.raspberryPi4()
        let file = tree.root + "/" + Self.pi4Ports + "/usb1/1-1/1-1.2/1-1.2:1.0/1-1.2-port4/disable"
        #expect(chmod(file, 0o444) == 0)
        let text = failure { _ = try USBPortPowerSwitch(device: "ttyUSB0", sysfs: tree.root) }
        #expect(text.contains("no permission to write \(file)"), "\(text)")
    }

    @Test(arguments: [
        ("1-1.3", USBPortPowerSwitch.Port(hub: "1-1", number: 3)), ("1-1", .init(hub: "usb1", number: 1)),
        ("2-1.2.4", .init(hub: "2-1.2", number: 4)),
    ])
    func devicePortNames(device: String, port: USBPortPowerSwitch.Port) {
        #expect(USBPortPowerSwitch.port(ofDevice: device) == port)
    }

    @Test(arguments: ["usb1", "1-1:1.0", "1-", "1-1.", "x-1", "1-0"])
    func namesThatAreNoDevicePort(name: String) {
        #expect(USBPortPowerSwitch.port(ofDevice: name) == nil)
    }
}
