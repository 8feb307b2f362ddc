# Sourced by the benches: moves to the repository and builds the release binary as scripts/lodestar does
# (one static executable, stripped), so every bench measures what users run and none relinks another's build.
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/setup
swift build -c release --static-swift-stdlib -Xswiftc -static-executable -Xlinker -s --product lodestar >&2
