import Testing

@testable import Forwarding
