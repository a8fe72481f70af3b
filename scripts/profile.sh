#!/usr/bin/env bash
# Instruction-level profile of faultline under QEMU: where do the guest
# instructions go between two occurrences of a syscall? Builds and runs
# the host tool tools/profile; `scripts/profile.sh --help` says what it
# measures and prints.
#
#   scripts/profile.sh [--iter-syscall NR] [--every K] [--span NR] [--user BIN] [--top N] [--out DIR]
#                      [qemu-run.sh options ...]
#
# e.g. scripts/profile.sh --smp 1 --mem 1G --icount \
#          --append "thp_shmem=2M:always -- run /bin/bench/finish_fault size=65536 iters=20 align=0x1"
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p profile
exec target/release/profile "$@"
