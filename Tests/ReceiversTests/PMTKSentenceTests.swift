@testable import Receivers
import Testing

@Suite struct PMTKSentenceTests {
    /// The vendor manuals' sentences, byte for byte.
    @Test(arguments: [
        (PMTKCommand.standby, "$PMTK161,0*28\r\n"),
        (PMTKCommand.periodic(.standby, run: 3000, sleep: 12000, secondRun: 18000, secondSleep: 72000),
         "$PMTK225,2,3000,12000,18000,72000*15\r\n"),
        (PMTKCommand.periodic(.backup, run: 3000, sleep: 12000, secondRun: 18000, secondSleep: 72000),
         "$PMTK225,1,3000,12000,18000,72000*16\r\n"),
        (PMTKCommand.alwaysLocate(backup: false), "$PMTK225,8*23\r\n"),
        (PMTKCommand.alwaysLocate(backup: true), "$PMTK225,9*22\r\n"),
        (PMTKCommand.normalMode, "$PMTK225,0*2B\r\n"),
        (PMTKCommand.queryFirmware, "$PMTK605*31\r\n"),
    ])
    func buildsTheVendorSentences(sentence: PMTKSentence, text: String) {
        #expect(sentence.text == text)
        #expect(sentence.bytes == Array(text.utf8))
    }

    @Test func bytesAreTheHexThatGoesToGpsd() {
        #expect(PMTKCommand.standby.bytes == hexBytes("24504d544b3136312c302a32380d0a"))
        #expect(PMTKCommand.alwaysLocate(backup: true).bytes == hexBytes("24504d544b3232352c392a32320d0a"))
    }

    @Test func readsAcknowledgements() throws {
        let sentence = try #require(PMTKSentence(parsing: "$PMTK001,604,3*32\r\n"))
        #expect(sentence == PMTKSentence(command: 1, fields: ["604", "3"]))
        #expect(PMTKAcknowledgement(sentence) == PMTKAcknowledgement(command: 604, result: .succeeded))
        let unsupported = try #require(PMTKSentence(parsing: "$PMTK001,225,1*37"))
        let ack = try #require(PMTKAcknowledgement(unsupported))
        #expect(ack.result == .unsupported)
        #expect(ack.acknowledges(PMTKCommand.normalMode))
        #expect(!ack.acknowledges(PMTKCommand.standby))
        #expect(PMTKAcknowledgement(PMTKSentence(command: 1, fields: ["161", "7"])) == nil)
        #expect(PMTKAcknowledgement(PMTKCommand.standby) == nil)
    }

    @Test func refusesWrongChecksumsAndOtherSentences() {
        #expect(PMTKSentence(parsing: "$PMTK001,604,3*33\r\n") == nil)
        #expect(PMTKSentence(parsing: "$PMTK001,604,3") == nil)
        #expect(PMTKSentence(parsing: "$GPTXT,01,01,02,ANTSTATUS=OK*3B") == nil)
        #expect(PMTKSentence(parsing: "$PMTK01,604,3*02") == nil)
    }

    @Test func readsTheFirmwareAnswer() throws {
        let sentence = try #require(
            PMTKSentence(parsing: "$PMTK705,AXN_2.10_3339_2012072601,5223,PA6H,1.0*6A\r\n"))
        #expect(
            PMTKFirmware(sentence)
                == PMTKFirmware(release: "AXN_2.10_3339_2012072601", buildID: "5223", internalFields: ["PA6H", "1.0"]))
        #expect(PMTKFirmware(PMTKCommand.standby) == nil)
    }
}
