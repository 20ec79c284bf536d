#!/usr/bin/env bash
# Benchmarks for SweeperSync: sync against Yjs, and scale.
#
#   bash Scripts/bench-sync.sh        (SCRATCH=DIR to share a build directory)
#
# Builds sweeper-bench-sync (Benchmarks/) in release under SCRATCH (default
# Benchmarks/.build), runs it pinned to one core, then replays the same games
# as Yjs updates with pycrdt. Measures (CPU time of one thread unless said otherwise):
#
# - sync.apply_rate_ops_per_s: 10,000 ops, each decoded, signature-verified
#   and applied one by one (best of 3);
# - sync.catchup_10k_ms: a 10,000-op game (3 players, 100×100) in one message
#   of chain segments, decoded, checked and applied on a fresh replica
#   (median of 5; goal < 100 ms);
# - three recorded games, GAME = beginner2 (9×9, 2 players), expert3 (30×16,
#   3 players), huge4 (100×100 with 2,000 mines, 4 players), played to the
#   end with the real engine (reveals that flood, flags, chords), players
#   taking turns: sync.GAME.ops (the genesis included), sync.GAME.actions
#   (the moves), sync.GAME.ours_live_bytes (what each player's daemon sends
#   a linked peer: its moves as live pushes, its chain heads signed every
#   32 moves, at the game's end and after a pause of 10 s by the recorded
#   clock), sync.GAME.ours_live_heads (the head signatures among them),
#   sync.GAME.ours_live_apply_ms (those messages decoded, rebuilt, applied
#   and their heads verified on a fresh replica; best of 3),
#   sync.GAME.ours_push_bytes (every move pushed as a signed op in its own
#   sync message, as before live pushes), sync.GAME.ours_chain_bytes (the moves
#   as the creator's daemon catches up a device that holds the genesis on a
#   link of protocol 15: chain segments in the link's compact form, one
#   signature per author), sync.GAME.ours_segments_bytes (the same segments
#   in an ops message, as before version 15), sync.GAME.summary_bytes (the
#   two first summaries before that catch-up),
#   sync.GAME.ours_apply_ms (every push decoded, verified and applied on a
#   fresh replica that holds the genesis; best of 3); and the Yjs side, one
#   pycrdt Doc per player, one Map keyed by cell, one transaction per move
#   with the cells it changed, each update applied to the other players'
#   docs: sync.GAME.yjs_bytes (the sum of the updates; goal: ours at most
#   1.0×) and sync.GAME.yjs_apply_ms (every update applied in order to a
#   fresh Doc, Python's process_time, best of 3);
# - scale.WxH.OPS.catchup_ms and scale.WxH.OPS.memory_bytes: real games by 3
#   players on 16×16, 100×100 and 500×500 boards cut at 50, 1,000, 10,000
#   and 100,000 ops where a whole game there is that long, sent as one
#   catch-up message and applied on a fresh replica (median of 3), and the
#   heap bytes the replica holds as the daemon holds it, its ops written to
#   a SQLite store and the older ones let go of (glibc malloc_info: in use
#   with the replica minus after it is freed), and scale.WxH.OPS.all_held_bytes
#   with every op in memory (in use after minus before, the decoded message
#   freed);
# - the size of a flood over a nearly empty 500×500 board as cell runs
#   (people only), and sync.flood10.*: the largest flood of a 500×500 board
#   with 10% mines as a flood op (cells, op bytes, push bytes; goal: op
#   under 200 bytes) and as cell runs.
#
# Every figure is also printed as a line `result: KEY VALUE` (VALUE a plain
# number, the unit in the key's last part) for Scripts/bench.sh.
#
# Needs libsodium-dev, and pycrdt for the Yjs side: installed with pip when
# missing; if that fails, the Yjs figures are skipped with a note.
set -euo pipefail
cd "$(dirname "$0")/.."
scratch="${SCRATCH:-Benchmarks/.build}"
swift build -c release --package-path Benchmarks --scratch-path "$scratch" --product sweeper-bench-sync >&2
bin="$(swift build -c release --package-path Benchmarks --scratch-path "$scratch" --show-bin-path)/sweeper-bench-sync"
trace="$(mktemp --suffix=.json)"
trap 'rm -f "$trace"' EXIT
# One core: the figures are per thread CPU time anyway; taskset keeps it honest.
pin=()
if command -v taskset >/dev/null; then pin=(taskset -c 0); fi
"${pin[@]}" "$bin" --trace "$trace"

if ! python3 -c 'import pycrdt' 2>/dev/null; then
    echo "bench-sync: installing pycrdt for the Yjs side" >&2
    python3 -m pip install --quiet --break-system-packages pycrdt >&2 ||
        pip install --quiet --break-system-packages pycrdt >&2 || true
fi

"${pin[@]}" python3 - "$trace" <<'PY'
import json, sys, time
try:
    import pycrdt
    from pycrdt import Doc, Map
except ImportError:
    print("yjs: pycrdt cannot be imported, even after `pip install --break-system-packages pycrdt`; Yjs figures skipped")
    sys.exit(0)

with open(sys.argv[1]) as f:
    data = json.load(f)

version = getattr(pycrdt, "__version__", "?")
print(f"yjs (pycrdt {version}): one Doc per player, one Map keyed by cell, one transaction per move; "
      "apply = every update applied in order to a fresh Doc, process_time, best of 3")
for game in data["games"]:
    key, players, ours = game["key"], game["players"], game["ours"]
    actions = game["actions"]
    docs = [Doc(client_id=1000 + i) for i in range(players)]
    maps = [d.get("board", type=Map) for d in docs]
    updates = []
    for a in actions:
        p = a["player"]
        before = docs[p].get_state()
        with docs[p].transaction():
            for cell, value in a["changes"]:
                maps[p][str(cell)] = value
        update = docs[p].get_update(before)
        updates.append(update)
        for q in range(players):
            if q != p:
                docs[q].apply_update(update)
    total = sum(len(u) for u in updates)
    merged = len(docs[0].get_update())
    expected = maps[0].to_py()

    cpu, wall = [], []
    for _ in range(3):
        doc = Doc()
        board = doc.get("board", type=Map)
        c0, w0 = time.process_time(), time.perf_counter()
        for u in updates:
            doc.apply_update(u)
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
        if board.to_py() != expected:
            sys.exit(f"yjs: {key}: a fresh Doc given every update differs from the players' docs")
    apply_ms = min(cpu) * 1000

    print(f"{key}: yjs {len(updates)} updates, {total} bytes in all ({total / max(1, len(updates)):.1f} per move); "
          f"whole document as one update {merged} bytes; apply {apply_ms:.2f} ms CPU ({min(wall) * 1000:.2f} ms wall)")
    for name, label in [("live", "live pushes, heads signed now and then"),
                        ("push", "pushed, one signed op per message (before live pushes)"),
                        ("chain", "chain segments, one signature per author"),
                        ("chain_all_signed", "chain segments, every op signed"),
                        ("stored", "one signed op per stored record")]:
        print(f"  ratio ours/yjs, {label}: {ours[name]} / {total} = {ours[name] / total:.2f}")
    print(f"  ratio ours/yjs, apply time (pushes against updates): {ours['apply_ms']:.2f} / {apply_ms:.2f} ms = "
          f"{ours['apply_ms'] / apply_ms:.2f}")
    print(f"result: sync.{key}.yjs_bytes {total}")
    print(f"result: sync.{key}.yjs_apply_ms {apply_ms:.3f}")
PY
