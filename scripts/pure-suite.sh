# The pure suite: the test targets that need no gpsd, browser, broker or kernel, as arguments for the test
# binary or `swift test`. Sourced by scripts/test (--fast) and scripts/cross-check, so that every place runs
# the same tests. Sets the array `pure_suite_arguments`; run from the repository's root.

# This toolchain's `swift test --skip` does not take `tag:NAME` yet, so the suites tagged .gpsd or .browser
# are found in the sources and skipped by name.
pure_suite_tagged=$(grep -rhE '^@Suite\(.*\.tags\(.*\.(gpsd|browser)\b.*\) struct ' Tests \
  | sed -E 's/.* struct ([A-Za-z0-9_]+).*/\1/' | paste -sd '|')
pure_suite_arguments=(
  --filter '^(JSONTests|GPSModelTests|GPSDTests|PolicyTests|CaptureTests|SimulationTests|ReceiversTests|GPIOLinesTests|ForwardingTests|LocationStoreTests|DaemonTests)\.'
  --skip "\.($pure_suite_tagged)(/|\$)")
