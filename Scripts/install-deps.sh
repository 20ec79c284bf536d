#!/usr/bin/env bash
# Installs what Sweeper needs from Debian to build, test and run (as root):
# the packages listed in Scripts/debian-packages.txt. The Swift toolchain
# itself is expected at /opt/swift or on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive
apt-get update
grep -v '^#' Scripts/debian-packages.txt | xargs apt-get install -y --no-install-recommends
