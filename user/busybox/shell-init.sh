#!/bin/busybox sh
# make shell's first program (run by /init): installs busybox's applet
# links, then starts a login shell in a session of its own with the
# console as its controlling terminal, so job control (^C, ^Z, fg, bg)
# works. When the shell exits, init does, and the machine powers off.
/bin/busybox --install -s /bin
cat <<'EOF_MOTD'

faultline shell: Debian's busybox on faultline. Try
  cat /proc/self/smaps          (the shell's own memory, per VMA)
  cat /sys/kernel/mm/transparent_hugepage/shmem_enabled
  ls /bin/bench                 (the benchmarks; run one by hand)
Type exit (or ^D) to power off.

EOF_MOTD
export HOME=/ PS1='faultline:\w# '
exec setsid -c /bin/sh -l
