import GPSD
import Policy
import Receivers
import Synchronization

/// Hands the application's `ReceiverControl` its context and the policy's regimes, on the runtime's thread
/// and in order. What gpsd says about the device is noted where its events arrive (live: the reader
/// thread) and passed on at the runtime's next turn, and always before a regime: a control never sets a
/// regime on a device it has not been told about.
final class ReceiverLink: Sendable {
    let control: any ReceiverControl
    /// The channel the live source writes through; nil in a replay.
    let commands: GPSDCommandChannel?
    private let model: ReceiverModel
    private let state = Mutex((tracker: ReceiverDeviceTracker(), passedOn: false))

    init(control: any ReceiverControl, model: ReceiverModel, live: Bool) {
        self.control = control
        self.model = model
        commands = live ? GPSDCommandChannel() : nil
    }

    /// Any thread: one of gpsd's events.
    func note(_ event: LiveEvent) {
        state.withLock { state in
            if state.tracker.note(event) { state.passedOn = false }
        }
    }

    /// The runtime's thread: tells the control about the receiver if that changed since it was last told.
    func passOnContext() {
        let tracker: ReceiverDeviceTracker? = state.withLock { state in
            guard !state.passedOn else { return nil }
            state.passedOn = true
            return state.tracker
        }
        guard let tracker else { return }
        control.receiverChanged(
            ReceiverContext(
                devicePath: tracker.devicePath, identity: tracker.identity, model: model, commands: commands))
    }

    /// The runtime's thread.
    func setRegime(_ regime: ReceiverRegime, reason: String) {
        passOnContext()
        control.setRegime(regime, reason: reason)
    }
}
