import GPSD
import GPSModel
import Policy

/// The receiver gpsd identified on a device: gpsd's driver and what the receiver said about itself. Which
/// `ReceiverModel` it is stays the configuration's choice; this is what a control checks it against.
public struct ReceiverIdentity: Sendable, Hashable {
    public var path: String
    /// gpsd's driver name: `u-blox`, `NMEA0183`, `SiRF`, `MTK-3301`, `Garmin NMEA`, …
    public var driver: String
    /// The receiver's own description as far as the driver asked it (u-blox: software and hardware versions).
    public var subtype: String?
    /// More of it where the driver has it (u-blox: firmware, protocol version, constellations).
    public var subtype1: String?
}

extension ReceiverIdentity {
    /// From gpsd's DEVICE report; nil until gpsd has named a driver (it does once it decoded a packet).
    public init?(_ device: DeviceInfo) {
        guard let driver = device.driver, !driver.isEmpty else { return nil }
        self.init(path: device.path, driver: driver, subtype: device.subtype, subtype1: device.subtype1)
    }
}

/// What a `ReceiverControl` works with: where the receiver is, what it is, and how to reach it.
public struct ReceiverContext: Sendable {
    /// The device gpsd reads the receiver on; nil while gpsd has none active (and in a replay).
    public var devicePath: String?
    /// What gpsd identified on `devicePath`; nil until it has (and in a replay).
    public var identity: ReceiverIdentity?
    /// The receiver model the policy was configured with.
    public var model: ReceiverModel
    /// Commands through the live gpsd connection; nil in a replay.
    public var commands: GPSDCommandChannel?

    public init(
        devicePath: String? = nil, identity: ReceiverIdentity? = nil, model: ReceiverModel,
        commands: GPSDCommandChannel? = nil
    ) {
        self.devicePath = devicePath
        self.identity = identity
        self.model = model
        self.commands = commands
    }

    /// Has gpsd write `bytes` (whole UBX or NMEA frames, at most `GPSDCommand.maximumDeviceBytes`) to the
    /// receiver with `?DEVICE` hexdata; `completion` gets gpsd's answer (see `GPSDCommandChannel`). Fails
    /// at once without a device or a channel.
    public func writeToReceiver(_ bytes: [UInt8], completion: @escaping GPSDCommandChannel.Completion = { _ in }) {
        guard let commands, let devicePath else {
            completion(.failed(reason: commands == nil ? "no gpsd connection" : "gpsd has no active device"))
            return
        }
        guard let command = GPSDCommand.writeToDevice(path: devicePath, bytes: bytes) else {
            let limit = GPSDCommand.maximumDeviceBytes
            completion(.failed(reason: "\(bytes.count) bytes: one write to a device takes 1 to \(limit)"))
            return
        }
        commands.send(command, completion: completion)
    }
}

/// Which device the receiver is on and what gpsd identified there, from the live source's events. The
/// receiver is the first device activated that is still active (the live source passes on only the watched
/// device's events when one is named).
public struct ReceiverDeviceTracker: Sendable, Equatable {
    /// Active devices, oldest first.
    private var active: [String] = []
    private var identities: [String: ReceiverIdentity] = [:]

    public init() {}

    public var devicePath: String? { active.first }
    public var identity: ReceiverIdentity? { devicePath.flatMap { identities[$0] } }

    /// Takes one event; true when `devicePath` or `identity` changed.
    public mutating func note(_ event: LiveEvent) -> Bool {
        let before = (devicePath, identity)
        switch event {
        case .deviceActivated(let device):
            if !active.contains(device.path) { active.append(device.path) }
            identify(device)
        case .report(.device(let device)) where device.isActive && active.contains(device.path):
            identify(device)
        case .report(.devices(let devices)):
            for device in devices where device.isActive && active.contains(device.path) { identify(device) }
        case .deviceClosed(let path):
            active.removeAll { $0 == path }
            identities[path] = nil
        case .receiverLost, .gpsdLost:
            // gpsd went away or its last device closed: devices are announced again when they come back.
            active.removeAll()
            identities.removeAll()
        case .fix, .report, .watching, .receiverBack:
            break
        }
        return before != (devicePath, identity)
    }

    private mutating func identify(_ device: DeviceInfo) {
        // A DEVICE report without a driver (the activation notice) leaves what gpsd said before.
        if let identity = ReceiverIdentity(device) { identities[device.path] = identity }
    }
}
