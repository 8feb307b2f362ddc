import Testing

@testable import LocationStore
