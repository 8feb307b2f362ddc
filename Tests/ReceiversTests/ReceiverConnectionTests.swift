import Policy
import Receivers
import Testing

@Suite struct ReceiverConnectionTests {
    struct Row: Sendable, CustomTestStringConvertible {
        var path: String
        var connection: ReceiverConnection
        var testDescription: String { path }
    }

    static let rows: [Row] = [
        Row(path: "/dev/ttyACM0", connection: .usb),
        Row(path: "/dev/ttyACM12", connection: .usb),
        Row(path: "/dev/ttyUSB0", connection: .uart),
        Row(path: "/dev/ttyAMA0", connection: .uart),
        Row(path: "/dev/ttyS0", connection: .uart),
        Row(path: "/dev/ttyTHS1", connection: .uart),
        Row(path: "/dev/serial0", connection: .uart),
        Row(path: "/dev/serial1", connection: .uart),
        // udev by-id names of real devices: CDC ACM has no -port suffix, usb-serial bridges do.
        Row(
            path: "/dev/serial/by-id/usb-u-blox_AG_-_www.u-blox.com_u-blox_7_-_GPS_GNSS_Receiver-if00",
            connection: .usb),
        Row(path: "/dev/serial/by-id/usb-u-blox_AG_-_www.u-blox.com_u-blox_GNSS_receiver-if00", connection: .usb),
        Row(path: "/dev/serial/by-id/usb-FTDI_FT232R_USB_UART_A50285BI-if00-port0", connection: .uart),
        Row(
            path: "/dev/serial/by-id/usb-Silicon_Labs_CP2102_USB_to_UART_Bridge_Controller_0001-if00-port0",
            connection: .uart),
        Row(path: "/dev/serial/by-id/usb-Prolific_Technology_Inc._USB-Serial_Controller-if00-port0", connection: .uart),
        // Made up: a bridge named without the suffix is still a bridge.
        Row(path: "/dev/serial/by-id/usb-1a86_USB2.0-Ser_-if00", connection: .uart),
        Row(path: "/dev/serial/by-path/platform-fd500000.pcie-pci-0000:01:00.0-usb-0:1.3:1.0", connection: .usb),
        Row(path: "/dev/serial/by-path/platform-fd500000.pcie-pci-0000:01:00.0-usb-0:1.3:1.0-port0", connection: .uart),
        Row(path: "/dev/serial/by-path/platform-3f980000.usb-usb-0:1.2:1.0-port0", connection: .uart),
        // Names that do not say.
        Row(path: "/dev/serial/by-id/gps", connection: .unknown),
        Row(path: "/dev/serial/by-path/platform-fe201000.serial", connection: .unknown),
        Row(path: "/dev/gps0", connection: .unknown),
        Row(path: "/dev/pts/3", connection: .unknown),
        Row(path: "/dev/ttyACM", connection: .unknown),
        Row(path: "/dev/ttyACMx", connection: .unknown),
        Row(path: "/dev/serial2", connection: .unknown),
        Row(path: "ttyUSB0", connection: .unknown),
        Row(path: "/tmp/dev/ttyUSB0", connection: .unknown),
        Row(path: "", connection: .unknown),
    ]

    @Test(arguments: rows) func readsTheDeviceName(row: Row) {
        #expect(ReceiverConnection(devicePath: row.path) == row.connection)
    }
}
