#!/usr/bin/env bash
# Installs what building, running and testing faultline needs, or says the
# exact command to run. Called by `make run` / `make test` (and `make setup`).
#   rustup targets/components from rust-toolchain.toml
#   qemu-system-aarch64 (Debian: qemu-system-arm), gdb-multiarch
set -euo pipefail
cd "$(dirname "$0")/.."

toolchain=$(sed -n 's/^channel *= *"\(.*\)"/\1/p' rust-toolchain.toml)
if ! command -v rustup >/dev/null; then
    echo "setup: rustup not found: install it from https://rustup.rs, then re-run" >&2
    exit 1
fi
if ! rustup run "$toolchain" rustc --version >/dev/null 2>&1; then
    echo "setup: installing Rust $toolchain"
    rustup toolchain install "$toolchain" --profile minimal
fi
installed=$(rustup +"$toolchain" target list --installed)
for target in aarch64-unknown-none-softfloat aarch64-unknown-none; do
    if ! grep -qx "$target" <<<"$installed"; then
        echo "setup: adding target $target"
        rustup +"$toolchain" target add "$target"
    fi
done
components=$(rustup +"$toolchain" component list --installed)
for c in clippy rustfmt; do
    grep -q "^$c" <<<"$components" || rustup +"$toolchain" component add "$c"
done

missing=()
command -v qemu-system-aarch64 >/dev/null || missing+=(qemu-system-arm)
command -v gdb-multiarch >/dev/null || missing+=(gdb-multiarch)
# A C cross compiler with glibc, and Linux user-mode emulation, to check that
# a real static glibc program behaves the same on faultline and on Linux.
command -v aarch64-linux-gnu-gcc >/dev/null || missing+=(gcc-aarch64-linux-gnu)
[ -f /usr/aarch64-linux-gnu/lib/libc.a ] || missing+=(libc6-dev-arm64-cross)
command -v qemu-aarch64 >/dev/null || missing+=(qemu-user)
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "setup: apt-get install ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        apt-get install -y -q "${missing[@]}" >/dev/null ||
            { apt-get update -q >/dev/null && apt-get install -y -q "${missing[@]}" >/dev/null; }
    else
        echo "setup: missing ${missing[*]}: run" >&2
        echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
        exit 1
    fi
fi

# QEMU=10 (make setup QEMU=10): QEMU 10 from bookworm-backports, unpacked
# into build/qemu-10 beside the system's QEMU, which stays as it is; then
# QEMU=10 makes ./qemu-run.sh (and so make test, make bench) run it.
# Its packages come through a private apt list, so the system's sources
# and installed packages do not change.
if [ "${QEMU:-}" = 10 ] && [ ! -x build/qemu-10/usr/bin/qemu-system-aarch64 ]; then
    dir=build/qemu-10
    mkdir -p "$dir/apt/lists/partial" "$dir/apt/cache" "$dir/debs"
    echo "deb http://deb.debian.org/debian bookworm-backports main" >"$dir/apt/sources.list"
    apt=(apt-get -q -o Dir::Etc::SourceList="$PWD/$dir/apt/sources.list"
        -o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists="$PWD/$dir/apt/lists"
        -o Dir::Cache="$PWD/$dir/apt/cache" -o APT::Sandbox::User=root)
    echo "setup: QEMU 10 from bookworm-backports into $dir"
    "${apt[@]}" update >/dev/null
    # The emulator, its data, and the modules it loads at start (it will
    # not load the system QEMU's).
    (cd "$dir/debs" && "${apt[@]}" download qemu-system-arm qemu-system-common \
        qemu-system-data qemu-system-gui qemu-system-modules-opengl \
        qemu-system-modules-spice qemu-block-extra >/dev/null)
    for deb in "$dir"/debs/*.deb; do
        dpkg-deb -x "$deb" "$dir"
    done
    "$dir/usr/bin/qemu-system-aarch64" --version | head -1
fi
