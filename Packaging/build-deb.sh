#!/usr/bin/env bash
# Builds the Debian package of Sweeper in one command:
#
#     bash Packaging/build-deb.sh            -> .build-pkg/deb/sweeper_VERSION-1_ARCH.deb
#
# The release program with the Swift runtime linked statically (scratch path
# .build-pkg), one binary installed as sweeper and, by a link, as sweeperd
# (`make install` into a package tree), with the
# Debian documentation files, Depends computed by dpkg-shlibdeps from the
# binaries, and `dpkg-deb --build --root-owner-group`. Prints the .deb's path
# on the last line of standard output.
#
# Environment: SWEEPER_DEB_SKIP_BUILD=1 packages what .build-pkg already holds;
# SWEEPER_DEB_OUT=DIR puts the .deb in DIR; DEBFULLNAME/DEBEMAIL the maintainer.
# Needs: swift, make, dpkg-dev (dpkg-shlibdeps), binutils (strip), gzip.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"

SCRATCH=.build-pkg
OUT=${SWEEPER_DEB_OUT:-$SCRATCH/deb}
MAINTAINER="${DEBFULLNAME:-Sweeper developers} <${DEBEMAIL:-sweeper@example.org}>"

if [[ "${SWEEPER_DEB_SKIP_BUILD:-0}" != 1 ]]; then
    make build SCRATCH="$SCRATCH" >&2
fi
BIN="$SCRATCH/release"
# --version says more after the release (protocols, commit): the package is the release.
VERSION=$("$BIN/sweeper" --version | cut -d" " -f1)
[[ "$VERSION" =~ ^[0-9][0-9A-Za-z.+~]*$ ]] || { echo "build-deb: odd version '$VERSION'" >&2; exit 1; }
DEBVERSION="$VERSION-1"
ARCH=$(dpkg --print-architecture)

WORK="$SCRATCH/deb-work"
ROOT="$WORK/debian/sweeper"   # where dpkg-shlibdeps expects a package tree
rm -rf "$WORK"
mkdir -p "$ROOT" "$OUT"

make install BUILT_BIN="$BIN" DESTDIR="$ROOT" PREFIX=/usr >&2
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$ROOT/usr/bin/sweeper"
[[ -L "$ROOT/usr/bin/sweeperd" ]] || { echo "build-deb: /usr/bin/sweeperd is not a link to sweeper" >&2; exit 1; }

DOC="$ROOT/usr/share/doc/sweeper"
install -d -m 0755 "$DOC"
install -m 0644 Packaging/debian/copyright "$DOC/copyright"
DATE=$(date -R -u -d "@${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}")
{
    echo "sweeper ($DEBVERSION) unstable; urgency=medium"
    echo
    echo "  * Package built from the Sweeper repository at $(git rev-parse --short HEAD 2>/dev/null || echo 'an unknown commit')."
    echo
    echo " -- $MAINTAINER  $DATE"
} | gzip -9n > "$DOC/changelog.Debian.gz"
chmod 0644 "$DOC/changelog.Debian.gz"

# Depends: the libraries the binaries really link, as dpkg-shlibdeps finds them.
install -d -m 0755 "$ROOT/DEBIAN"
printf 'Source: sweeper\nMaintainer: %s\n\nPackage: sweeper\nArchitecture: any\n' "$MAINTAINER" > "$WORK/debian/control"
DEPENDS=$(cd "$WORK" && dpkg-shlibdeps -O debian/sweeper/usr/bin/sweeper | sed -n 's/^shlibs:Depends=//p')
[[ -n "$DEPENDS" ]] || { echo "build-deb: dpkg-shlibdeps found no dependencies" >&2; exit 1; }
# Packed relative relocations (the Makefile links with -z pack-relative-relocs)
# need a loader that reads them, glibc 2.36, which dpkg-shlibdeps does not know.
if objdump -p "$ROOT/usr/bin/sweeper" | grep -q GLIBC_ABI_DT_RELR; then
    DEPENDS=$(echo "$DEPENDS" | sed -E 's/libc6 \(>= 2\.(3[0-5]|[12][0-9]|[0-9])(\.[0-9]+)?\)/libc6 (>= 2.36)/')
    [[ "$DEPENDS" == *"libc6 (>= 2.3"[6-9]* || "$DEPENDS" == *"libc6 (>= 2.[4-9]"* ]] \
        || { echo "build-deb: cannot require glibc 2.36 in '$DEPENDS'" >&2; exit 1; }
fi
INSTALLED_SIZE=$(du -sk --apparent-size "$ROOT/usr" | cut -f1)

install -d -m 0755 "$ROOT/DEBIAN"
cat > "$ROOT/DEBIAN/control" <<CONTROL
Package: sweeper
Version: $DEBVERSION
Architecture: $ARCH
Maintainer: $MAINTAINER
Installed-Size: $INSTALLED_SIZE
Depends: $DEPENDS
Recommends: avahi-daemon, openssl
Section: misc
Priority: optional
Description: co-operative Minesweeper for a family on one network
 Every player runs sweeperd, a small daemon that finds the other players'
 daemons with mDNS (Avahi), exchanges signed CRDT deltas of the board with
 them over encrypted links, and keeps every game on disk in SQLite. The
 sweeper command is the client: a command-line interface for scripts and a
 live text-mode board viewer for playing together. The daemon also serves
 the board to a browser, on this computer or (paired, over TLS) on phones
 on the home network, to play by touch. There is no server and no
 account; a family shares an invite code.
 .
 This package contains both programs (one binary under two names), their
 manual pages, a systemd user unit (systemctl --user enable --now
 sweeperd) and shell completions for bash, zsh and fish.
CONTROL
(cd "$ROOT" && find usr -type f -print0 | sort -z | xargs -0 md5sum) > "$ROOT/DEBIAN/md5sums"  # files only, as dh_md5sums
chmod 0644 "$ROOT/DEBIAN/control" "$ROOT/DEBIAN/md5sums"
find "$ROOT" -type d -exec chmod 0755 {} +

DEB="$OUT/sweeper_${DEBVERSION}_${ARCH}.deb"
dpkg-deb --build --root-owner-group -Zxz "$ROOT" "$DEB" >&2
echo "$DEB"
