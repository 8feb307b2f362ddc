import Simulation
import Testing

/// The whole system's energy: the board's watt-hours beside the receiver's.
@Suite struct BoardModelTests {
    /// An hour on a Zero 2 W (120 mA at 5 V idle: 0.6 Wh) with a receiver that drew 10 mAh against 25 mAh always
    /// on (at 3.3 V: 0.033 and 0.0825 Wh): the receiver saved 60 %, the system 7 %; 10 Wh last 15.8 h against 14.7.
    @Test func theBoardsDrawIsAddedToTheReceivers() throws {
        let board = try #require(BoardModel.named("zero2w"))
        let energy = SystemEnergy(board: board, seconds: 3600, receiver: 10, alwaysOn: 25)
        #expect(abs(energy.boardWh - 0.6) < 1e-9)
        #expect(abs(energy.receiverWh - 0.033) < 1e-9)
        #expect(abs(energy.receiverAlwaysOnWh - 0.0825) < 1e-9)
        #expect(abs(energy.receiverPercentOfAlwaysOn - 40) < 1e-9)
        #expect(abs(energy.percentOfAlwaysOn - 0.633 / 0.6825 * 100) < 1e-9)
        let hours = energy.batteryHours(10)
        #expect(abs(hours.run - 10 / 0.633) < 1e-9 && abs(hours.alwaysOn - 10 / 0.6825) < 1e-9)
        #expect(SystemEnergy(board: board, seconds: 0, receiver: 0, alwaysOn: 0).batteryHours(10) == (0, 0))
    }

    /// Every figure a built-in board gives names where it comes from; a board without an idle measurement is
    /// estimated at its active figure, which overstates it.
    @Test func everyBoardFigureHasASource() {
        for board in BoardModel.builtIn {
            #expect(board.sources["active"] != nil, "\(board.name)")
            #expect((board.idle == nil) == (board.sources["idle"] == nil), "\(board.name)")
            #expect(board.assumedDraw == (board.idle ?? board.active))
            #expect(board.idle.map { $0 < board.active } ?? true, "\(board.name)")
        }
    }

    /// The device tree's model names the Pi the service runs on; other machines have none.
    @Test func theBoardIsTheDeviceTreesModel() {
        #expect(BoardModel.detect(deviceTreeModel: "Raspberry Pi Zero 2 W Rev 1.0")?.name == "zero2w")
        #expect(BoardModel.detect(deviceTreeModel: "Raspberry Pi 3 Model A Plus Rev 1.0")?.name == "pi3a+")
        #expect(BoardModel.detect(deviceTreeModel: "Raspberry Pi 4 Model B Rev 1.4")?.name == "pi4")
        #expect(BoardModel.detect(deviceTreeModel: "Raspberry Pi 5 Model B Rev 1.0")?.name == "pi5")
        #expect(BoardModel.detect(deviceTreeModel: "Raspberry Pi 3 Model B Rev 1.2") == nil)
        #expect(BoardModel.detect(deviceTreeModel: "Raspberry Pi Compute Module 4 Rev 1.0")?.name == "cm4")
        #expect(BoardModel.detect(deviceTreeModel: "Raspberry Pi Compute Module 4S Rev 1.0") == nil)
    }
}
