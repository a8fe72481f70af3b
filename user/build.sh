#!/usr/bin/env bash
# Builds the user programs (ulib, init, the tests) for aarch64-unknown-none
# and lays them out as the initrd will hold them:
#
#   build/rootfs-user/init              init (PID 1)
#   build/rootfs-user/bin/tests/<name>  one per user/tests/src/bin/<name>.rs
#   build/rootfs-user/bin/bench/<name>  one per user/bench/src/bin/<name>.rs
#
# The copies are stripped of debug info (the unstripped ones stay in
# target/aarch64-unknown-none/release/ for gdb and addr2line).
set -euo pipefail
cd "$(dirname "$0")/.."

target=aarch64-unknown-none
if ! rustup target list --installed | grep -qx "$target"; then
    rustup target add "$target"
fi
cargo build --release --target "$target" -p init -p faultline-user-tests -p faultline-user-bench

# rust-objcopy ships with rustc but finds its LLVM library only when told.
sysroot=$(rustc --print sysroot)
host=$(rustc -vV | sed -n 's/^host: //p')
strip_copy() {
    LD_LIBRARY_PATH="$sysroot/lib" "$sysroot/lib/rustlib/$host/bin/rust-objcopy" \
        --strip-debug "$1" "$2"
}

out=build/rootfs-user
bin=target/$target/release
rm -rf "$out"
mkdir -p "$out/bin/tests" "$out/bin/bench"
strip_copy "$bin/init" "$out/init"
for src in user/tests/src/bin/*.rs; do
    name=$(basename "$src" .rs)
    strip_copy "$bin/$name" "$out/bin/tests/$name"
done
for src in user/bench/src/bin/*.rs; do
    name=$(basename "$src" .rs)
    strip_copy "$bin/$name" "$out/bin/bench/$name"
done
echo "user: $(ls "$out/bin/tests" | wc -l) test programs, $(ls "$out/bin/bench" | wc -l) benchmarks and init in $out"
