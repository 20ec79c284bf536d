#!/usr/bin/env bash
# Benchmarks for SweeperSync (issue 3): apply rate, catch-up of a 10,000-op
# game, bytes of a recorded three-player expert game against Yjs (pycrdt),
# and the size of a flood over a nearly empty 500×500 board.
#
# Needs: libsodium-dev, and `pip install pycrdt` for the Yjs side (skipped
# with a note when pycrdt is missing). Builds sweeper-bench-sync in release
# under SCRATCH (default .build-sync).
set -euo pipefail
cd "$(dirname "$0")/.."
scratch="${SCRATCH:-.build-sync}"
swift build -c release --scratch-path "$scratch" --product sweeper-bench-sync >&2
bin="$scratch/release/sweeper-bench-sync"
trace="$(mktemp --suffix=.json)"
trap 'rm -f "$trace"' EXIT
# One core: the figures are per thread CPU time anyway; taskset keeps it honest.
if command -v taskset >/dev/null; then
    taskset -c 0 "$bin" --trace "$trace"
else
    "$bin" --trace "$trace"
fi

python3 - "$trace" <<'PY'
import json, sys
try:
    from pycrdt import Doc, Map
except ImportError:
    print("yjs: pycrdt is not installed (pip install pycrdt); comparison skipped")
    sys.exit(0)

with open(sys.argv[1]) as f:
    data = json.load(f)
ours = data["ours"]
actions = data["actions"]

# One Doc per player, one Map keyed by cell, one transaction per action with
# the cells that action changed; each update is applied to the other docs.
docs = [Doc(client_id=1000 + i) for i in range(3)]
maps = [d.get("board", type=Map) for d in docs]
total = 0
for a in actions:
    p = a["player"]
    before = docs[p].get_state()
    with docs[p].transaction():
        for cell, value in a["changes"]:
            maps[p][str(cell)] = value
    update = docs[p].get_update(before)
    total += len(update)
    for q in range(3):
        if q != p:
            docs[q].apply_update(update)
merged = len(docs[0].get_update())
print(f"yjs (pycrdt): {len(actions)} updates, {total} bytes in all "
      f"({total / max(1, len(actions)):.1f} per action); whole document as one update {merged} bytes")
for name, label in [("chain", "chain segments, one signature per author"),
                    ("chain_all_signed", "chain segments, every op signed"),
                    ("push", "one signed op per message"),
                    ("stored", "one signed op per stored record")]:
    print(f"ratio ours/yjs, {label}: {ours[name]} / {total} = {ours[name] / total:.2f}")
PY
