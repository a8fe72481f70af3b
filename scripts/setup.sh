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
