#!/usr/bin/env bash
# Builds everything and runs the whole test suite, then checks the command
# line tools end to end. This is the test command the README gives.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"

# The house rules a script checks, first: a broken one fails in seconds.
bash Scripts/check.sh
swift build --build-tests
# One test at a time: the lab and tmux suites start real daemons and
# avahi-daemons, and on 2 cores parallel suites starve each other's timeouts.
# The output is kept, so that a failure's details are repeated at the end,
# where a CI summary that shows only the last lines still names the test.
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! swift test --skip-build --no-parallel 2>&1 | tee "$log"; then
    echo "test.sh: these tests failed:" >&2
    grep -A4 -e 'recorded an issue' -e 'Fatal error' "$log" >&2 || true
    grep -e '✘ Test' "$log" >&2 || true
    exit 1
fi
# The Debian package: a release build with the Swift runtime linked
# statically, installed into a throwaway root, checked with lintian.
SWEEPER_PACKAGING_TESTS=1 swift test --skip-build --filter debianPackageInstallsAndRuns

# The offline board tools, as a user runs them.
BIN=$(swift build --show-bin-path)
"$BIN/sweeper" board generate --preset expert --no-guess --count 20 --seed 42 | "$BIN/sweeper" board solve | sort | uniq -c
"$BIN/sweeper" board generate --preset beginner --seed 3 --count 2 --json |
    python3 -c 'import json,sys; b=json.load(sys.stdin); assert len(b)==2 and b[0]["mines"]==10 and len(b[0]["rows"])==9, b'
if "$BIN/sweeper" board generate --width 1 --height 9 --mines 3 2>/dev/null; then
    echo "test.sh: a bad size was accepted" >&2; exit 1
fi
set +e
echo "1 1 0 0" | "$BIN/sweeper" board solve 2>/dev/null
rc=$?
set -e
if [[ $rc -ne 2 ]]; then echo "test.sh: malformed board input exited $rc, not 2" >&2; exit 1; fi

# The benchmark tools (a package of their own, Benchmarks/, run only by
# Scripts/bench.sh) still build against the libraries they measure. Its
# build plan is made again each time: it depends on the product by path,
# and a plan kept from before a source file was deleted fails the build.
rm -f Benchmarks/.build/debug.yaml Benchmarks/.build/x86_64-unknown-linux-gnu/debug/description.json
swift build --package-path Benchmarks

# A short fuzz run: every decoder that outside bytes reach, 20 s per target
# under libFuzzer and AddressSanitizer (a longer run: Scripts/fuzz.sh 1800).
bash Scripts/fuzz.sh 20
echo "test.sh: all checks passed"
