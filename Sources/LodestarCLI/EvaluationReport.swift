import Capture

/// The HTML report of `replay --evaluate --report`. Placeholder until the report is built.
enum EvaluationReport {
    static func html(_ evaluation: Evaluation, capture: String, profile: String) -> String {
        "<!doctype html><title>\(capture)</title>\n"
    }
}
