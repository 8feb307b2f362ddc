import Lodestar
import Policy
import Testing

@testable import LodestarCLI

/// `lodestar status` warns when chrony reads gpsd and the profile lets the receiver power down.
@Suite struct TimeConsumersTests {
    @Test func gpsdRefclocksAreFoundInChronysConfig() {
        let config = """
            # Debian's chrony.conf with gpsd as a source
            pool 2.debian.pool.ntp.org iburst
            refclock SHM 0 refid GPS precision 1e-1 offset 0.0 delay 0.2
            refclock SHM 1 refid PPS precision 1e-7   # gpsd's PPS
            refclock SOCK /run/chrony.ttyACM0.sock refid GPS2
            #refclock SHM 2 refid OFF
            refclock PPS /dev/pps0 refid KPPS
            refclock SHM 7 refid OTHER
            """
        #expect(
            TimeConsumers.gpsdRefclocks(in: config) == [
                "refclock SHM 0 refid GPS precision 1e-1 offset 0.0 delay 0.2", "refclock SHM 1 refid PPS precision 1e-7",
                "refclock SOCK /run/chrony.ttyACM0.sock refid GPS2",
            ])
        #expect(TimeConsumers.gpsdRefclocks(in: "pool 2.debian.pool.ntp.org iburst\n").isEmpty)
    }

    @Test func theWarningNeedsBothAConsumerAndAProfileThatPowersDown() throws {
        let car = try #require(ProfileStore.builtIn("car"))
        let alwaysOn = try #require(ProfileStore.builtIn("always-on"))
        let refclocks = ["refclock SHM 0 (/etc/chrony/chrony.conf)"]
        #expect(TimeConsumers.mayPowerDown(car))
        #expect(!TimeConsumers.mayPowerDown(alwaysOn))
        let warning = TimeConsumers.warning(refclocks: refclocks, profile: car, regime: .continuous)
        #expect(warning?.contains("refclock SHM 0 (/etc/chrony/chrony.conf)") == true)
        #expect(TimeConsumers.warning(refclocks: refclocks, profile: alwaysOn, regime: .continuous) == nil)
        // Whatever the profile, a receiver seen below continuous is one chrony loses.
        #expect(TimeConsumers.warning(refclocks: refclocks, profile: alwaysOn, regime: .standby) != nil)
        #expect(TimeConsumers.warning(refclocks: [], profile: car, regime: .off) == nil)
    }
}
