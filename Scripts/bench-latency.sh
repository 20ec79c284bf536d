#!/usr/bin/env bash
# Move-to-event latency between two daemons on two lab hosts (network
# namespaces on a bridge, each with its own D-Bus and avahi-daemon; see
# Scripts/netns-lab.sh), beside a bare TCP ping-pong between the same two
# namespaces and one Ed25519 signature + verification, all in one run.
# A benchmark, not a test: it prints figures and the goal check
# (p50 ≤ 3 × bare RTT + sign + verify; p99 < 5 ms) and exits 0 either way.
#
#   Scripts/bench-latency.sh [MOVES]        default 1000
#
# Environment: SCRATCH (build directory, default .build), CONFIG (release or
# debug, default release), LINK (mdns, the default, or static: h2 dials h1 by
# address), TMPDIR (where the daemons keep their state; /dev/shm takes the
# disk's fsync out). Needs root, iproute2, dbus and avahi-daemon. Traffic stays
# on loopback and 198.18.0.1–2 inside the lab's own namespaces.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"

moves=${1:-1000}
scratch=${SCRATCH:-.build}
config=${CONFIG:-release}
link=${LINK:-mdns}
lab=Scripts/netns-lab.sh

if [[ $(id -u) -ne 0 ]]; then echo "bench-latency: needs root (network namespaces)" >&2; exit 2; fi
for tool in ip dbus-daemon avahi-daemon python3; do
    command -v "$tool" >/dev/null || { echo "bench-latency: needs $tool" >&2; exit 2; }
done

for product in sweeperd sweeper sweeper-bench-latency; do
    swift build --scratch-path "$scratch" -c "$config" --product "$product" >&2
done
bin=$(swift build --scratch-path "$scratch" -c "$config" --show-bin-path)

dir=$(mktemp -d "${TMPDIR:-/tmp}/sweeper-bench.XXXXXX")
pids=()
cleanup() {
    # Stop what we started, by pid, then the lab (which stops its own by pid).
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do
        for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    bash "$lab" down "$dir" || true
    rm -rf "$dir"
}
trap cleanup EXIT
bash "$lab" up "$dir" 2 >/dev/null

sock() { echo "$dir/d$1/control.sock"; }
cli() { local i=$1; shift; "$bin/sweeper" --socket "$(sock "$i")" "$@"; }

for i in 1 2; do
    mkdir -p "$dir/d$i"
    XDG_CONFIG_HOME="$dir/d$i/config" XDG_STATE_HOME="$dir/d$i/xdg-state" XDG_RUNTIME_DIR="$dir/d$i/xdg-run" \
        bash "$lab" exec "$dir" "$i" "$bin/sweeperd" --state-dir "$dir/d$i/state" --socket "$(sock "$i")" \
        --listen 0.0.0.0:7455 --name "h$i" --log-level warning >"$dir/d$i/log" 2>&1 &
    pids+=($!)
done
for i in 1 2; do
    for _ in $(seq 1 150); do cli "$i" status >/dev/null 2>&1 && break; sleep 0.2; done
    cli "$i" status >/dev/null || { echo "bench-latency: sweeperd in h$i did not start:" >&2; cat "$dir/d$i/log" >&2; exit 1; }
done

# One circle; linked by mDNS (or by address with LINK=static).
code=$(cli 1 invite)
cli 2 join "$code" >/dev/null
[[ $link == static ]] && cli 2 connect 198.18.0.1:7455 >/dev/null
id1=$(cli 1 --json status | python3 -c 'import json,sys; print(json.load(sys.stdin)["peerID"])')
connected() {
    cli 2 --json peers | python3 -c 'import json,sys
p=[p for p in json.load(sys.stdin)["peers"] if p["id"]==sys.argv[1]]
sys.exit(0 if p and p[0]["state"]=="connected" else 1)' "$id1"
}
for _ in $(seq 1 240); do connected && break; sleep 0.25; done
connected || { echo "bench-latency: h2 did not connect to h1 (LINK=$link)" >&2; cli 2 peers --all >&2; exit 1; }

# A big board, a fifth mines so the opening stays small: plenty of hidden cells to flag.
game=$(cli 1 new --width 200 --height 200 --mines 8000 --seed 1)
for _ in $(seq 1 240); do cli 2 show "$game" >/dev/null 2>&1 && break; sleep 0.25; done
cli 2 show "$game" >/dev/null || { echo "bench-latency: game $game did not reach h2" >&2; exit 1; }

# A bare TCP ping-pong between the same two namespaces.
bash "$lab" exec "$dir" 2 "$bin/sweeper-bench-latency" echo 7999 >"$dir/echo.log" 2>&1 &
pids+=($!)
rtt=$(bash "$lab" exec "$dir" 1 "$bin/sweeper-bench-latency" ping 198.18.0.2 7999 "$moves")
sv=$("$bin/sweeper-bench-latency" sign-verify "$moves")
mv=$("$bin/sweeper-bench-latency" moves "$(sock 1)" "$(sock 2)" "$game" "$moves")

echo "bench-latency: $moves moves, $config build, link by $link, $(nproc) cores"
printf '%s\n' "$mv" "$rtt" "$sv"
python3 - "$mv" "$rtt" "$sv" <<'EOF'
import sys
def fields(line):
    return {k: v for k, v in (f.split("=", 1) for f in line.split()[1:] if "=" in f)}
moves = fields(sys.argv[1].splitlines()[0])
rtt, sv = fields(sys.argv[2]), fields(sys.argv[3])
p50, p99 = float(moves["p50_ms"]), float(moves["p99_ms"])
budget = 3 * float(rtt["p50_ms"]) + float(sv["p50_ms"])
print(f"goal: p50 {p50:.3f} ms <= 3 x RTT {float(rtt['p50_ms']):.3f} + sign+verify {float(sv['p50_ms']):.3f} = {budget:.3f} ms: "
      + ("met" if p50 <= budget else "NOT met"))
print(f"goal: p99 {p99:.3f} ms < 5 ms: " + ("met" if p99 < 5 else "NOT met"))
EOF
