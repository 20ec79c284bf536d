#!/usr/bin/env bash
# Makes Packaging/hot-functions.txt: the functions the packaged program runs
# when the daemon starts, serves `status`, `games` and `peers` and idles,
# when a command asks it for its status, and when it makes boards offline
# (`board generate`), in that order. The Makefile links
# them together (lld's --symbol-ordering-file), so that an idle daemon maps
# a few megabytes of the program's code rather than most of it.
#
#     bash Packaging/order-functions.sh [PROGRAM]
#
# PROGRAM is a release build of sweeper (default: .build-pkg/release/sweeper,
# as `make build` leaves it). Run it again when the list has drifted far
# from the code: a function missing from the list only stays where it was.
# Needs valgrind (callgrind, callgrind_annotate) and binutils; no root, no
# network beyond loopback, about two minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
PROGRAM=${1:-.build-pkg/release/sweeper}
[[ -x "$PROGRAM" ]] || { echo "order-functions: no program at $PROGRAM (run make build)" >&2; exit 1; }
command -v valgrind >/dev/null || { echo "order-functions: needs valgrind" >&2; exit 1; }

WORK=$(mktemp -d /tmp/sweeper-order-XXXXXX)
DAEMON_PID=
cleanup() {
    if [[ -n "$DAEMON_PID" ]] && kill -0 "$DAEMON_PID" 2>/dev/null; then
        kill -TERM "$DAEMON_PID" 2>/dev/null || true
        wait "$DAEMON_PID" 2>/dev/null || true
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT

# Valgrind of Debian 12 cannot read the DWARF 5 that clang writes: symbols only.
strip --strip-debug -o "$WORK/sweeper" "$PROGRAM"
ln -s sweeper "$WORK/sweeperd"
mkdir -m 0700 "$WORK/run"
export XDG_CONFIG_HOME="$WORK/config" XDG_STATE_HOME="$WORK/state" XDG_RUNTIME_DIR="$WORK/run"
SOCKET="$WORK/run/sweeper/control.sock"

valgrind --tool=callgrind --demangle=no --callgrind-out-file="$WORK/daemon.out" \
    "$WORK/sweeperd" --no-mdns --listen 127.0.0.1:0 --name order >"$WORK/daemon.log" 2>&1 &
DAEMON_PID=$!
for _ in $(seq 1 120); do
    sleep 1
    "$WORK/sweeper" --socket "$SOCKET" status >/dev/null 2>&1 && break
done
"$WORK/sweeper" --socket "$SOCKET" status >/dev/null
"$WORK/sweeper" --socket "$SOCKET" games >/dev/null
"$WORK/sweeper" --socket "$SOCKET" peers >/dev/null
valgrind --tool=callgrind --demangle=no --callgrind-out-file="$WORK/client.out" \
    "$WORK/sweeper" --socket "$SOCKET" status >/dev/null 2>&1
valgrind --tool=callgrind --demangle=no --callgrind-out-file="$WORK/board.out" \
    "$WORK/sweeper" board generate --no-guess --preset expert --count 20 --seed 1 >/dev/null 2>&1
# Idle: keep-alives, anti-entropy and the play clock's ticks run.
sleep 25
kill -TERM "$DAEMON_PID"
wait "$DAEMON_PID" || true
DAEMON_PID=

functions() {
    callgrind_annotate --threshold=100 --inclusive=no "$1" \
        | sed -nE "s|^ *[0-9,]+ \([ 0-9.]+%\)  [^:]*:([^ ]+) \[$WORK/sweeper\]\$|\1|p"
}
{ functions "$WORK/daemon.out"; functions "$WORK/client.out"; functions "$WORK/board.out"; } | awk '!seen[$0]++' >"$WORK/hot.txt"
COUNT=$(wc -l <"$WORK/hot.txt")
(( COUNT > 1000 )) || { echo "order-functions: only $COUNT functions found" >&2; exit 1; }
mv "$WORK/hot.txt" Packaging/hot-functions.txt
echo "order-functions: $COUNT functions in Packaging/hot-functions.txt"
