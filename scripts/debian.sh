#!/usr/bin/env bash
# A Debian root file system: bookworm's arm64 packages PKG..., the part of
# Debian's `essential` set a shell session uses (BASE below: /etc's
# files, root in passwd and group, bash, dash as /bin/sh, coreutils and
# the other everyday tools, terminfo and tput), and all they
# depend on (no recommends), as `apt-get install` on an empty arm64 system
# would resolve them; downloaded once into build/debian/debs and unpacked
# together (dpkg-deb -x) into build/debian/root-HASH, HASH naming the
# sorted package list and this script. Of what the maintainer scripts
# and the installer do, only what programs rely on: the alternatives' links, /etc/passwd and
# /etc/group (base-passwd's), /etc/profile and root's dot files
# (base-files'), /bin/sh, /etc/mtab, and the merged /usr
# (/bin, /sbin and /lib links into /usr, as every Debian since 12).
# Prints that directory. qemu-run.sh --debian boots it as the initramfs,
# with faultline's /init.
#
#   scripts/debian.sh PKG...
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/linux-lib.sh

[ $# -gt 0 ] || { echo "usage: scripts/debian.sh PKG..." >&2; exit 2; }
BASE=(base-files base-passwd bash coreutils dash debianutils diffutils findutils grep gzip
    hostname libc-bin ncurses-base ncurses-bin sed tar util-linux)
set -- "${BASE[@]}" "$@"
dir=build/debian
mkdir -p "$dir/debs"
# The script itself counts too: a change to how the root is made makes a
# new one.
hash=$( (printf '%s\n' "$@" | sort -u; cat "$0") | sha1sum | cut -c1-12)
root=$dir/root-$hash
if [ -d "$root" ]; then
    echo "$root"
    exit 0
fi
arm64_apt
# Resolve against an empty dpkg status, so nothing the host has installed
# (amd64, but Multi-Arch: foreign) stands in for an arm64 package.
: >"$dir/empty-status"
apt_arm64=(apt-get -q -o Dir::State::status="$dir/empty-status"
    -o APT::Architecture=arm64 -o APT::Architectures::=arm64
    -o APT::Install-Recommends=false)
if ! uris=$("${apt_arm64[@]}" install --print-uris -qq "$@" 2>&1); then
    echo "debian: cannot resolve $*:" >&2
    echo "$uris" >&2
    exit 1
fi
# Each line: 'URI' NAME_VERSION_ARCH.deb SIZE HASH (the epoch's ':' as %3a).
debs=$(echo "$uris" | awk '{ print $2 }')
missing=()
for deb in $debs; do
    [ -f "$dir/debs/$deb" ] || missing+=("$(echo "$deb" |
        sed -E 's/^([^_]+)_([^_]+)_([^_]+)\.deb$/\1:\3=\2/; s/%3a/:/g')")
done
if [ ${#missing[@]} -gt 0 ]; then
    if ! out=$(cd "$dir/debs" && "${apt_arm64[@]}" download "${missing[@]}" 2>&1); then
        echo "debian: could not download ${missing[*]}:" >&2
        echo "$out" >&2
        exit 1
    fi
fi
tmp=$(mktemp -d "$dir/unpack.XXXXXX")
for deb in $debs; do
    dpkg-deb -x "$dir/debs/$deb" "$tmp"
    dpkg-deb --info "$dir/debs/$deb" postinst 2>/dev/null >>"$tmp.postinst" || true
done
# The one thing maintainer scripts do that programs rely on: the
# alternatives' links (awk -> mawk, cc -> gcc), highest priority first.
python3 - "$tmp" "$tmp.postinst" <<'PY'
import os, re, shlex, sys
root, scripts = sys.argv[1], open(sys.argv[2]).read().replace("\\\n", " ")
best = {}
for line in scripts.splitlines():
    words = shlex.split(line, comments=True) if "update-alternatives" in line else []
    if "--install" not in words:
        continue
    i = words.index("--install")
    link, name, path, prio = words[i + 1:i + 5]
    links = [(link, path)] + [(words[j + 1], words[j + 3]) for j, w in enumerate(words) if w == "--slave"]
    if int(prio) > best.get(name, (-1,))[0]:
        best[name] = (int(prio), links)
for _, links in best.values():
    for link, path in links:
        if os.path.lexists(root + path) and not os.path.lexists(root + link):
            os.makedirs(os.path.dirname(root + link), exist_ok=True)
            os.symlink(path, root + link)
PY
rm -f "$tmp.postinst"
# The merged /usr: what the packages put in /bin, /sbin and /lib moves
# under /usr, and each becomes a link there (Debian's usrmerge).
for d in bin sbin lib; do
    if [ -d "$tmp/$d" ] && [ ! -L "$tmp/$d" ]; then
        mkdir -p "$tmp/usr/$d"
        cp -a "$tmp/$d/." "$tmp/usr/$d/"
        rm -rf "${tmp:?}/$d"
    fi
    [ -e "$tmp/$d" ] || ln -s "usr/$d" "$tmp/$d"
done
# base-passwd's postinst: the system's users and groups, root first.
cp "$tmp/usr/share/base-passwd/passwd.master" "$tmp/etc/passwd"
cp "$tmp/usr/share/base-passwd/group.master" "$tmp/etc/group"
# base-files' postinst: the login shell's profile, root's dot files, motd.
cp "$tmp/usr/share/base-files/profile" "$tmp/etc/profile"
cp "$tmp/usr/share/base-files/dot.profile" "$tmp/root/.profile"
cp "$tmp/usr/share/base-files/dot.bashrc" "$tmp/root/.bashrc"
cp "$tmp/usr/share/base-files/motd" "$tmp/etc/motd"
[ -e "$tmp/usr/bin/sh" ] || ln -s dash "$tmp/usr/bin/sh"
ln -sfn ../proc/self/mounts "$tmp/etc/mtab"
mv "$tmp" "$root"
echo "$root"
