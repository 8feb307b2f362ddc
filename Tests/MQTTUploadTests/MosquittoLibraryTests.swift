import Testing

@testable import MQTTUpload

/// libmosquitto is opened on first use (dlopen), so a system without it learns so only from an upload's failure,
/// which must say what to install.
@Suite struct MosquittoLibraryTests {
    @Test func theInstalledLibraryLoads() {
        #expect(MosquittoLibrary.failure?.message == nil)
        #expect(MosquittoLibrary.load("libmosquitto.so.1")?.message == nil)
    }

    @Test func aMissingLibraryNamesDebiansPackageAndDlopensWords() throws {
        let failure = try #require(MosquittoLibrary.load("libmosquitto.so.1.lodestar-missing"))
        #expect(
            failure.message
                == "libmosquitto1 is not installed (libmosquitto.so.1.lodestar-missing: cannot open shared object "
                + "file: No such file or directory): install it to upload to OwnTracks"
        )
    }

    /// zlib opens but has none of libmosquitto's functions: as a libmosquitto too old for one of them would be.
    @Test func aLibraryWithoutAFunctionIsCalledTooOld() throws {
        let failure = try #require(MosquittoLibrary.load("libz.so.1"))
        #expect(failure.message.hasPrefix("libmosquitto1 is too old ("))
        #expect(failure.message.contains("undefined symbol: mosquitto_lib_init"))
        #expect(failure.message.hasSuffix("): upgrade it to upload to OwnTracks"))
    }
}
