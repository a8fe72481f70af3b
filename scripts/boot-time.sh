#!/usr/bin/env bash
# Wall-clock time from starting QEMU to the kernel's banner and to power-off,
# for the default workload. A measurement, not a test: arguments go to
# qemu-run.sh (e.g. --smp 4 --mem 1G).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s%N)
banner=""
while IFS= read -r line; do
    now=$(date +%s%N)
    case "$line" in
        "faultline "*) banner=$(( (now - start) / 1000000 )) ;;
        *"powering off"*) echo "banner after ${banner:-?} ms, power-off after $(( (now - start) / 1000000 )) ms" ;;
    esac
done < <(./qemu-run.sh "$@")
