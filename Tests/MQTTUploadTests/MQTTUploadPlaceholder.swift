import Testing

@testable import MQTTUpload
