#!/usr/bin/env bash
# A LAN of test hosts on one machine: network namespaces on a bridge, each
# with its own D-Bus system bus and avahi-daemon (Docs/testing.md explains the recipe).
#
#   Scripts/netns-lab.sh up DIR N [B]  make hosts h1..hN (198.18.0.1..N/24); with B, hosts
#                                      hB..hN are a second house (198.18.1.B..N/24) behind
#                                      a router that mDNS does not cross
#   Scripts/netns-lab.sh down DIR      stop what `up` started (by pid) and remove it
#   Scripts/netns-lab.sh exec DIR I CMD…   run CMD in host I with its bus
#   Scripts/netns-lab.sh cut DIR I / heal DIR I   take host I off the bridge and back
#   Scripts/netns-lab.sh avahi-stop DIR I / avahi-start DIR I   stop and restart host I's avahi-daemon
#   Scripts/netns-lab.sh rx-bytes DIR I   print the bytes host I's interface has received
#   Scripts/netns-lab.sh block DIR I   (two houses) the router drops what it routes to host I, so no
#                                      connection between the houses reaches it
#
# `up` writes DIR/prefix (the namespace prefix), DIR/pids (every process it
# started) and DIR/hI/bus.sock. Needs root, iproute2, dbus and avahi-daemon.
# Traffic stays on 198.18.0.0/23 inside the lab's own namespaces.
set -euo pipefail

cmd=${1:?usage: netns-lab.sh up|down|exec|cut|heal DIR …}
dir=${2:?usage: netns-lab.sh $cmd DIR …}

prefix() { cat "$dir/prefix"; }

# Starts host I's avahi-daemon in a private /run/avahi-daemon; records its pid.
start_avahi() {
    local i=$1 h
    h="$(prefix)h$i"
    ip netns exec "$h" unshare -m sh -c \
        "mount -t tmpfs tmpfs /run/avahi-daemon && DBUS_SYSTEM_BUS_ADDRESS=unix:path=$dir/h$i/bus.sock exec avahi-daemon -f $dir/h$i/avahi.conf --no-drop-root --no-chroot --no-rlimits" \
        >>"$dir/h$i/avahi.log" 2>&1 &
    echo $! >"$dir/h$i/avahi.pid"
    echo $! >>"$dir/pids"
}

# Waits (bounded) until host I's avahi-daemon owns its bus name.
wait_avahi() {
    local i=$1
    for _ in $(seq 1 100); do
        if DBUS_SYSTEM_BUS_ADDRESS="unix:path=$dir/h$i/bus.sock" dbus-send --system --print-reply \
            --dest=org.freedesktop.DBus / org.freedesktop.DBus.NameHasOwner string:org.freedesktop.Avahi 2>/dev/null |
            grep -q 'boolean true'; then
            return 0
        fi
        sleep 0.1
    done
    echo "netns-lab: avahi-daemon in h$i did not come up; see $dir/h$i/avahi.log" >&2
    return 1
}

case $cmd in
up)
    n=${3:?usage: netns-lab.sh up DIR N [B]}
    b=${4:-0}
    mkdir -p "$dir" /run/avahi-daemon
    dir=$(cd "$dir" && pwd)
    # A short unique prefix keeps interface names under 15 characters.
    p="sw$(printf '%04x' $(( ($$ + RANDOM) % 65536 )))"
    echo "$p" >"$dir/prefix"
    echo "$b" >"$dir/second-house"
    : >"$dir/pids"
    : >"$dir/netns"
    ip netns add "${p}sw"
    echo "${p}sw" >>"$dir/netns"
    ip -n "${p}sw" link add br0 type bridge
    ip -n "${p}sw" link set br0 up
    if [[ $b -gt 0 ]]; then
        # Two houses: the switch's namespace routes between two bridges and
        # reflects no multicast, so mDNS stays in each house.
        ip -n "${p}sw" link add br1 type bridge
        ip -n "${p}sw" link set br1 up
        ip -n "${p}sw" addr add 198.18.0.254/24 dev br0
        ip -n "${p}sw" addr add 198.18.1.254/24 dev br1
        ip netns exec "${p}sw" sysctl -q -w net.ipv4.ip_forward=1
    fi
    for i in $(seq 1 "$n"); do
        h="${p}h$i"
        ip netns add "$h"
        echo "$h" >>"$dir/netns"
        ip link add "${p}e$i" type veth peer name "${p}p$i"
        ip link set "${p}e$i" netns "$h"
        ip link set "${p}p$i" netns "${p}sw"
        house=0
        [[ $b -gt 0 && $i -ge $b ]] && house=1
        ip -n "${p}sw" link set "${p}p$i" master "br$house"
        ip -n "${p}sw" link set "${p}p$i" up
        ip -n "$h" link set lo up
        ip -n "$h" addr add "198.18.$house.$i/24" dev "${p}e$i"
        ip -n "$h" link set "${p}e$i" up
        [[ $b -gt 0 ]] && ip -n "$h" route add default via "198.18.$house.254"
        mkdir -p "$dir/h$i"
        cat >"$dir/h$i/dbus.conf" <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=$dir/h$i/bus.sock</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
EOF
        cat >"$dir/h$i/avahi.conf" <<EOF
[server]
host-name=$h
allow-interfaces=${p}e$i
use-ipv4=yes
use-ipv6=yes
enable-dbus=yes
ratelimit-interval-usec=0
[wide-area]
enable-wide-area=no
[publish]
publish-workstation=no
publish-hinfo=no
EOF
        ip netns exec "$h" dbus-daemon --config-file="$dir/h$i/dbus.conf" --fork --print-pid >"$dir/h$i/dbus.pid"
        cat "$dir/h$i/dbus.pid" >>"$dir/pids"
        start_avahi "$i"
    done
    for i in $(seq 1 "$n"); do wait_avahi "$i"; done
    echo "$dir"
    ;;
down)
    [[ -f $dir/pids ]] || exit 0
    # Stop by recorded pid: TERM, then KILL what is left.
    while read -r pid; do [[ -n $pid ]] && kill -TERM "$pid" 2>/dev/null || true; done <"$dir/pids"
    for _ in $(seq 1 20); do
        alive=0
        while read -r pid; do [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null && alive=1; done <"$dir/pids"
        [[ $alive -eq 0 ]] && break
        sleep 0.1
    done
    while read -r pid; do [[ -n $pid ]] && kill -KILL "$pid" 2>/dev/null || true; done <"$dir/pids"
    if [[ -f $dir/netns ]]; then
        while read -r ns; do [[ -n $ns ]] && ip netns del "$ns" 2>/dev/null || true; done <"$dir/netns"
    fi
    rm -f "$dir/pids" "$dir/netns"
    ;;
exec)
    i=${3:?usage: netns-lab.sh exec DIR I CMD…}
    shift 3
    exec ip netns exec "$(prefix)h$i" env DBUS_SYSTEM_BUS_ADDRESS="unix:path=$dir/h$i/bus.sock" "$@"
    ;;
avahi-stop)
    # TERM, then KILL if it is still there after 5 s; return only once it is gone.
    i=${3:?host}
    pid=$(cat "$dir/h$i/avahi.pid")
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    ;;
avahi-start)
    i=${3:?host}
    start_avahi "$i"
    wait_avahi "$i"
    ;;
rx-bytes)
    i=${3:?host}
    ip netns exec "$(prefix)h$i" cat "/sys/class/net/$(prefix)e$i/statistics/rx_bytes"
    ;;
block)
    i=${3:?host}
    b=$(cat "$dir/second-house")
    house=0
    [[ $b -gt 0 && $i -ge $b ]] && house=1
    ip -n "$(prefix)sw" route add blackhole "198.18.$house.$i/32"
    ;;
cut)
    ip -n "$(prefix)sw" link set "$(prefix)p${3:?host}" down
    ;;
heal)
    ip -n "$(prefix)sw" link set "$(prefix)p${3:?host}" up
    ;;
*)
    echo "netns-lab: unknown command $cmd" >&2
    exit 2
    ;;
esac
