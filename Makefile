# faultline's front door. `make run` and `make test` set up what is missing.
KERNEL := target/aarch64-unknown-none-softfloat/release/faultline
# The kernel `make gdb` steps: Cargo profile `gdb` (unoptimised, so `next`
# follows the source and locals stay visible; target/<triple>/gdb/, apart
# from the release build the benchmarks measure), or the release build
# with RELEASE=1; either copied with short function names for `break`.
GDB_PROFILE := $(if $(RELEASE),release,gdb)
GDB_KERNEL := target/aarch64-unknown-none-softfloat/$(GDB_PROFILE)/faultline-gdb
SYMBOLIZE := target/release/symbolize

.PHONY: all build run shell test bench bench-linux test-linux selftests gdb gdb-kernel gdb-test fuzz stress lint doc setup clean lab grade

all: build

setup:
	@scripts/setup.sh

build: setup
	cargo kbuild
	cargo build --release -q -p symbolize -p mkinitrd
	user/build.sh
	aarch64-linux-gnu-gcc -static -O2 -o build/memfd-demo user/c/memfd-demo.c
	aarch64-linux-gnu-gcc -static-pie -O2 -o build/memfd-demo-pie user/c/memfd-demo.c
	aarch64-linux-gnu-gcc -static -O2 -Wall -s -o build/rootfs-user/bin/bench/seed000 user/c/seed000.c
	aarch64-linux-gnu-gcc -static -O2 -Wall -s -o build/rootfs-user/bin/bench/clock_gettime user/c/clock_gettime.c
	aarch64-linux-gnu-gcc -static -O2 -Wall -s -o build/gdb-target user/c/gdb-target.c
	aarch64-linux-gnu-gcc -static -O2 -Wall -s -Iuser/c -o build/seed004 user/c/seed004.c
	aarch64-linux-gnu-gcc -static -O2 -Wall -s -Iuser/c -o build/tlb-layouts user/c/tlb-layouts.c
	$(MAKE) -s build/tlb.so
	scripts/fuzz-syscalls.py > build/fuzz-syscalls.h
	aarch64-linux-gnu-gcc -static -O2 -Wall -s -Ibuild -o build/fuzz user/c/fuzz.c
	aarch64-linux-gnu-gcc -static -O2 -Wall -s -Iuser/c -o build/stress user/c/stress.c
	mkdir -p build/ctests
	for t in user/c/tests/*.c; do \
		aarch64-linux-gnu-gcc -static -O2 -Wall -s -o build/ctests/$$(basename $$t .c) $$t || exit 1; \
	done
	target/release/mkinitrd -o build/initrd.cpio --dir rootfs --dir build/rootfs-user
	scripts/busybox.sh

# The TLB model, a QEMU 10 TCG plugin (tools/tlb; ./qemu-run.sh --tlb).
TLB_SRC := tools/tlb/plugin.c tools/tlb/tlb_model.c
build/tlb.so: $(TLB_SRC) tools/tlb/tlb_model.h tools/tlb/qemu-plugin-api.h
	gcc -shared -fPIC -O2 -Wall -Wextra -Werror -fvisibility=hidden -o $@ $(TLB_SRC) -lpthread

# Boot on QEMU and run the default workload: a short run of the fault-path
# benchmarks (virtual time, -icount), then their summary table. Pass
# QEMU_ARGS for more, e.g. make run QEMU_ARGS="--smp 2". The full run is
# `make bench`; the test programs, `./qemu-run.sh`.
run: build
	scripts/bench.sh quick --console $(QEMU_ARGS)

# Boot into Debian's busybox sh on the console, with job control: a prompt
# to read /proc, flip /sys knobs and run the benchmarks (/bin/bench) by
# hand. QEMU_ARGS as for run; Ctrl-A x quits QEMU.
shell: build
	DEBIAN="$(DEBIAN)" scripts/shell.sh $(QEMU_ARGS)

# Every test (scripts/test.sh), ending with `N passed, N failed`.
# STAGE=NAME[,NAME...] runs some of its stages: lint, host, ktest, user,
# robustness, boot, tlb, docs, labs, gdb.
test: build gdb-kernel
	STAGE="$(STAGE)" scripts/test.sh

# The labs (labs/, docs/labs.md): `make lab` lists them; `make lab
# LAB=NAME` sets one up in ../faultline-lab-NAME (a git worktree on branch
# lab/NAME, refusing a dirty tree); `make grade` there builds and runs the
# lab's checks (`make grade LAB=NAME` grades this tree).
lab:
	@scripts/lab.py $(if $(LAB),start $(LAB),list)

grade: build
	@scripts/lab.py grade $(LAB)

# The system-call fuzzer (user/c/fuzz.c), one boot per seed on 4 CPUs:
# SEED=N for one seed (default: seeds 1 to 10), COUNT=M calls each
# (default 100,000). make test runs a short fixed-seed version.
fuzz: build
	scripts/fuzz.sh --seeds "$(or $(SEED),$$(seq 1 10))" --count $(or $(COUNT),100000)

# Memory under load (scripts/stress.sh): the shadow-model stress under
# each fault-path switch setting, SECONDS each (default 600), memory run
# out at 128M, 1G and 4G, then Debian's stress-ng memory stressors,
# NG_SECONDS each (default 10). make test runs a short version.
stress: build
	scripts/stress.sh --seconds $(or $(SECONDS),600) --ng-seconds $(or $(NG_SECONDS),10)

# The fault-path benchmarks under -icount (deterministic): a table, and
# build/bench.csv. TLB=1 adds the TLB model's dTLB and iTLB misses
# (QEMU 10 with tools/tlb's plugin; scripts/bench-tlb.sh).
bench: build
	TLB="$(TLB)" scripts/bench.sh

# The same benchmarks on Debian's Linux 6.12 arm64 kernel, same QEMU flags:
# build/bench-linux.csv.
bench-linux: build
	scripts/bench-linux.sh

# The same user test binaries on Linux, under qemu-aarch64 (needs root for
# binfmt_misc, or qemu-user-binfmt installed); then the glibc tests
# (user/c/tests/) on Debian's Linux 6.12 booted in QEMU.
test-linux: build
	user/run-on-linux.sh
	scripts/test-linux-boot.sh

# Linux's own selftests (user/selftests/list) from the source tree
# LINUX_SRC, cross-built static and run on Linux 6.12, then on faultline:
# one line per test and a summary (scripts/selftests.sh; skipped, saying
# how to get the tree, without LINUX_SRC). ONLY=REGEX for some of them.
selftests: build
	scripts/selftests.sh $(if $(ONLY),--only "$(ONLY)")

# QEMU halted with a gdb server, and gdb-multiarch attached with symbols,
# faultline's helpers (fl-ps, fl-vmas, fl-pt, fl-ptdump, fl-folio,
# fl-vmstat, fl-break-fault, fl-step; scripts/gdb/) and a breakpoint at
# kernel_main. QEMU_ARGS as for run; RELEASE=1 debugs the release build;
# FAULTLINE_GDB_PORT=N asks for port N (default: 1234 or the next free
# one). ^C stops the kernel, continue resumes it. A session: docs/gdb.md.
gdb: build gdb-kernel
	scripts/gdb.sh $(GDB_KERNEL) $(QEMU_ARGS)

gdb-kernel: setup
	cargo build -p faultline-kernel --target aarch64-unknown-none-softfloat --profile $(GDB_PROFILE)
	scripts/gdb/short-names.py target/aarch64-unknown-none-softfloat/$(GDB_PROFILE)/faultline $(GDB_KERNEL)

# make test's gdb stage alone: breakpoints, backtraces, and every helper
# checked against what the kernel itself reports.
gdb-test: build gdb-kernel
	scripts/gdb-test.sh $(GDB_KERNEL)

lint: setup
	cargo fmt --all --check
	cargo clippy --all-targets -- -D warnings
	cargo kclippy -- -D warnings
	cargo uclippy -- -D warnings

doc: setup
	cargo doc -p faultline-kernel --target aarch64-unknown-none-softfloat --document-private-items --no-deps

clean:
	cargo clean
