import GPIOLines
import Lodestar
import Receivers

extension DaemonSetup {
    /// The receiver power a config asks for: none when `receiver.powerControl` is false; else commands through
    /// gpsd, with the configured switch (a GPIO enable line, or the USB port's power) when there is one. The
    /// switch is opened here, so a line another process holds or a port without `disable` is refused at start.
    public static func power(for configuration: DaemonConfiguration) throws(PowerSwitchError) -> ReceiverPowerSetup? {
        let receiver = configuration.receiver
        guard receiver.powerControl else { return nil }
        var setup = ReceiverPowerSetup(connection: receiver.connection)
        switch receiver.powerSwitch {
        case nil:
            break
        case .gpio(let chip, let line, let activeLow):
            guard let offset = UInt32(exactly: line) else {
                throw PowerSwitchError("receiver.powerSwitch.line \(line): not a line offset")
            }
            setup.powerSwitch = try GPIOEnableLine(chip: chip, line: .offset(offset), activeLow: activeLow)
            setup.mechanism = .gpio
        case .usbPort:
            guard let device = configuration.gpsd.device else {
                throw PowerSwitchError(
                    "receiver.powerSwitch usbPort: set gpsd.device to the receiver's tty, so its USB port can be found")
            }
            setup.powerSwitch = try USBPortPowerSwitch(device: device)
            setup.mechanism = .usbPort
        }
        return setup
    }
}

extension DaemonSetup {
    /// The motion source a config names (`motion.gpio` or `motion.iio`), opened here so a line another process
    /// holds, or an accelerometer that is not there, is refused at start; nil without one.
    public static func motion(for configuration: DaemonConfiguration) throws(MotionSourceError) -> MotionSetup? {
        if let accelerometer = configuration.motionIIO {
            let source = try IIOAccelerometer(
                device: accelerometer.device, threshold: accelerometer.threshold,
                sampleInterval: accelerometer.sampleInterval)
            return MotionSetup(source: source, debounce: accelerometer.debounce)
        }
        guard let motion = configuration.motion else { return nil }
        guard let offset = UInt32(exactly: motion.line) else {
            throw MotionSourceError("motion.gpio.line \(motion.line): not a line offset")
        }
        let line = try GPIOMotionLine(chip: motion.chip, line: .offset(offset), activeLow: motion.activeLow)
        return MotionSetup(source: line, debounce: motion.debounce, ignition: motion.ignition)
    }
}
