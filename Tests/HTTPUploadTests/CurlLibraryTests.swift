import Testing

@testable import HTTPUpload

/// libcurl is opened on first use (dlopen), so a system without it learns so only from an upload's failure, which
/// must say what to install.
@Suite struct CurlLibraryTests {
    @Test func theInstalledLibraryLoads() {
        #expect(CurlLibrary.failure?.description == nil)
        #expect(CurlLibrary.load("libcurl.so.4")?.description == nil)
    }

    @Test func aMissingLibraryNamesDebiansPackageAndDlopensWords() throws {
        let failure = try #require(CurlLibrary.load("libcurl.so.4.lodestar-missing"))
        #expect(
            failure.description
                == "libcurl4 is not installed (libcurl.so.4.lodestar-missing: cannot open shared object file: "
                + "No such file or directory): install it to upload to Traccar"
        )
    }

    /// zlib opens but has none of curl's functions: as a libcurl too old for one of them would be.
    @Test func aLibraryWithoutAFunctionIsCalledTooOld() throws {
        let failure = try #require(CurlLibrary.load("libz.so.1"))
        #expect(failure.description.hasPrefix("libcurl4 is too old ("))
        #expect(failure.description.contains("undefined symbol: curl_global_init"))
        #expect(failure.description.hasSuffix("): upgrade it to upload to Traccar"))
    }
}
