#!/usr/bin/env bash
# Move-to-event latency between real daemons in network namespaces, beside a
# bare TCP ping-pong between the same namespaces and one Ed25519 signature +
# verification, in one run: the latency part of Scripts/bench.sh alone.
#
#   sudo Scripts/bench-latency.sh [--hosts 2,4,8] [--quick] [--out FILE]
#
# Writes its report to FILE (default: a temporary file, printed); the full
# suite's report is BENCHMARKS.md (Scripts/bench.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp --suffix=.md)
trap 'rm -f "$out"' EXIT
bash Scripts/bench.sh --only latency --hosts 2 --out "$out" "$@"
