#!/usr/bin/env bash
# Every Sweeper benchmark in one run, beside its anchors, written to
# BENCHMARKS.md: board generation vs Tatham's Mines, sync bytes and apply time
# vs Yjs (pycrdt), catch-up and scale, membership derivation, move latency with 2, 4 and 8 real
# daemons in network namespaces vs a bare TCP round trip, discovery vs Avahi's
# own announcement, memory and idle CPU, the Debian package's size and its
# daemon's idle memory. About 25 minutes of measuring on 2 cores, after the
# release builds (about 15 minutes from cold).
#
#   sudo Scripts/bench.sh [--quick] [--only boards,sync,lab] [--hosts 2,4,8] [--out FILE] [--baseline BINDIR]
#
# With --baseline, the two-host move latency is also timed with an earlier
# release's daemons and CLI (its release bin directory) in the same lab,
# and ours is held to be no worse.
#
# Needs root (network namespaces) and what Scripts/install-deps.sh installs
# (sgt-puzzles, avahi-daemon, avahi-utils, dbus, iproute2, python3; pycrdt is
# installed with pip when missing). SCRATCH sets the build directory (default
# Benchmarks/.build). Every figure also goes to stdout as `result: KEY VALUE` lines in the
# sub-benchmarks; see Scripts/bench.py.
#
# The tools live in the Benchmarks package (Benchmarks/Package.swift), apart
# from the product; it builds `sweeper` and `sweeperd` too, so that one bin
# directory holds every program the benchmarks run.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
scratch=${SCRATCH:-Benchmarks/.build}

if [[ $(id -u) -ne 0 ]]; then echo "bench: needs root (network namespaces for the lab)" >&2; exit 2; fi
for tool in ip dbus-daemon avahi-daemon avahi-publish avahi-browse python3 bc /usr/games/sgt-mines; do
    command -v "$tool" >/dev/null || { echo "bench: needs $tool (run Scripts/install-deps.sh)" >&2; exit 2; }
done
if ! python3 -c 'import pycrdt' 2>/dev/null; then
    pip install --quiet --break-system-packages pycrdt >&2 || echo "bench: pycrdt could not be installed; the Yjs figures will be missing" >&2
fi

# The package depends on the product by path, and SwiftPM keeps its build
# plan across runs: a source file deleted in Sources/ since the last run
# stops the build ("missing inputs") until the plan is made again.
rm -f "$scratch/release.yaml" "$scratch/x86_64-unknown-linux-gnu/release/description.json"
for product in sweeper sweeperd sweeper-bench-game sweeper-bench-sync sweeper-bench-membership sweeper-bench-viewer sweeper-bench-latency; do
    swift build -c release --package-path Benchmarks --scratch-path "$scratch" --product "$product" >&2
done
bin=$(swift build -c release --package-path Benchmarks --scratch-path "$scratch" --show-bin-path)
# The Debian package as users get it (one static program; its own scratch path, .build-pkg).
deb=$(bash Packaging/build-deb.sh | tail -n 1)
exec python3 Scripts/bench.py --bindir "$bin" --scratch "$scratch" --package "$deb" "$@"
