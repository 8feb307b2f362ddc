import Testing

@testable import HTTPUpload
