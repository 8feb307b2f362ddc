# Sourced by the benches: moves to the repository and builds the release binary with scripts/build-release, as
# scripts/lodestar does, so every bench measures what users run and none relinks another's build.
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/setup
bash scripts/build-release
