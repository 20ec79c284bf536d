#!/usr/bin/env bash
# Installs what Sweeper needs from Debian to build, test and run (as root).
# The Swift toolchain itself is expected at /opt/swift or on PATH.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends \
    pkg-config libsodium-dev libavahi-client-dev libsqlite3-dev \
    avahi-daemon avahi-utils dbus iproute2 \
    sgt-puzzles bc tmux mandoc procps \
    make dpkg-dev lintian systemd binutils python3
