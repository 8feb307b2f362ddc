/// How the receiver is wired to this machine, which decides what it can be woken from: a u-blox on its own
/// USB port never reaches backup, and USB traffic would not wake it from there; on its UART any byte does.
/// `Receivers` reads it from a device name.
public enum ReceiverConnection: String, Sendable, Hashable, CaseIterable {
    /// The receiver's own USB port (USB CDC ACM, `/dev/ttyACM*`).
    case usb
    /// The receiver's UART: a board serial port, or a USB-to-serial bridge (`/dev/ttyUSB*`) in front of it.
    case uart
    /// Not known (the device name does not say, and no configuration named it).
    case unknown
}
