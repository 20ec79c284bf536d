#!/usr/bin/env bash
# Board generation, side by side with Tatham's Mines (Debian's sgt-puzzles).
#
#   Scripts/bench-boards.sh            # builds release binaries, prints figures
#   SKIP_BUILD=1 Scripts/bench-boards.sh
#   WITH_TATHAM_500=1 …                 # also times Tatham on the 500×500 board (~15 s)
#   SWEEPER=/path/to/sweeper …          # times that program (Scripts/bench.py passes
#                                       # the packaged one, as a player runs it)
#
# Besides the table it prints `result: KEY VALUE` lines for Scripts/bench.py.
#
# For each size it times `sweeper board generate --no-guess --count 100` and
# `sgt-mines --generate 100 WxHnM` (which makes no-guess boards by default),
# best of three runs each, and prints ours over theirs. Goal: at most 1.0,
# aiming for 0.5. Then one 500×500 board at 20% (goal: under 10 s), and the
# in-process figures of sweeper-bench-game.
set -euo pipefail
cd "$(dirname "$0")/.."

TATHAM=${TATHAM:-/usr/games/sgt-mines}
if [[ ! -x $TATHAM ]]; then
    echo "bench-boards: $TATHAM not found; install it with: apt-get install -y sgt-puzzles" >&2
    exit 2
fi
scratch=${SCRATCH:-Benchmarks/.build}
if [[ -z ${SKIP_BUILD:-} ]]; then
    swift build -c release --package-path Benchmarks --scratch-path "$scratch" --product sweeper >/dev/null
    swift build -c release --package-path Benchmarks --scratch-path "$scratch" --product sweeper-bench-game >/dev/null
fi
BIN=$(swift build -c release --package-path Benchmarks --scratch-path "$scratch" --show-bin-path)
SWEEPER=${SWEEPER:-$BIN/sweeper}
echo "program: $SWEEPER"

# Times are read from bash's own clock (${EPOCHREALTIME/[^0-9]/}: microseconds
# since the epoch), which starts no process: a `date` before and after each
# run, and `bc`, added some 1.2 ms to every time, a tenth of a beginner
# board's. Microseconds as seconds:
seconds_of() { printf '%d.%06d' $(($1 / 1000000)) $(($1 % 1000000)); }

# Best wall-clock time of three runs of a command, in seconds: its fork,
# exec, run and exit.
best_of_3() {
    local best="" t0 t
    for _ in 1 2 3; do
        t0=${EPOCHREALTIME/[^0-9]/}
        "$@" >/dev/null
        t=$((${EPOCHREALTIME/[^0-9]/} - t0))
        if [[ -z $best ]] || ((t < best)); then best=$t; fi
    done
    seconds_of "$best"
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
printf '%-14s %12s %12s %8s\n' "board" "sweeper (s)" "tatham (s)" "ratio"
for spec in "9 9 10" "16 16 40" "30 16 99" "100 100 2000"; do
    read -r w h m <<<"$spec"
    ours=$(best_of_3 "$SWEEPER" board generate --no-guess --width "$w" --height "$h" --mines "$m" --count 100 --seed 1)
    theirs=$(best_of_3 "$TATHAM" --generate 100 "${w}x${h}n${m}")
    printf '%-14s %12.3f %12.3f %8.2f\n' "${w}x${h}/${m}" "$ours" "$theirs" "$(echo "$ours / $theirs" | bc -l)"
    echo "result: boards.${w}x${h}n${m}.ours_s $ours"
    echo "result: boards.${w}x${h}n${m}.tatham_s $theirs"
done

# Every board we made above must be solvable by our own solver.
"$SWEEPER" board generate --no-guess --width 100 --height 100 --mines 2000 --count 20 --seed 1 \
    | "$SWEEPER" board solve | sort | uniq -c | sed 's/^/check: /'

big=$(best_of_3 "$SWEEPER" board generate --no-guess --width 500 --height 500 --mines 50000 --seed 1)
printf '500x500/50000 (20%%): sweeper %.2f s (goal under 10 s)' "$big"
if [[ -n ${WITH_TATHAM_500:-} ]]; then
    t0=${EPOCHREALTIME/[^0-9]/}
    "$TATHAM" --generate 1 500x500n50000 >/dev/null
    big_tatham=$(seconds_of $((${EPOCHREALTIME/[^0-9]/} - t0)))
    printf ', tatham %.2f s' "$big_tatham"
fi
echo
echo "result: boards.500x500n50000.ours_s $big"
[[ -n ${big_tatham:-} ]] && echo "result: boards.500x500n50000.tatham_s $big_tatham"
"$BIN/sweeper-bench-game"
