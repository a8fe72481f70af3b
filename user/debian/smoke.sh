#!/bin/bash
# Debian's own programs doing ordinary work: bash with coreutils, python3
# with its standard library, gcc compiling and running C, and a new
# user's first commands (ls -l, df, top, whoami, dmesg, a FIFO). Each workload's
# output follows a `=== NAME` line; scripts/test-debian.sh runs this on
# faultline and on Linux 6.12 and wants the same output from both, so
# nothing here may print times, PIDs, inode numbers or addresses.
set -u
cd /tmp

echo "=== auxv_as_ld_so_sees_it"
# All but the addresses that differ (the vDSO, ld.so's base, the stack),
# AT_HWCAP (faultline enables FP and ASIMD only) and AT_RSEQ_* (glibc's
# AT_???: faultline has no rseq).
LD_SHOW_AUXV=1 /bin/true | grep -vE '^AT_(SYSINFO_EHDR|BASE|RANDOM|HWCAP|\?\?\?)[: ]'

echo "=== bash_coreutils_pipeline"
seq 1 5000 | sort -rn | head -4 | tr '\n' ' '; echo
seq 1 3000 | paste -sd+ | wc -c
printf '%s\n' pear apple fig apple pear apple | sort | uniq -c | sort -rn
yes faultline | head -c 100000 | sha256sum
seq -w 1 20 | xargs -n 5 echo | cut -d' ' -f2,4
date -u -d @1000000000 '+%Y-%m-%d %H:%M:%S'
printf 'a,b,c\n1,2,3\n' | cut -d, -f2 | tac | nl

echo "=== bash_language"
declare -A count=([one]=1 [two]=2)
arr=(x y z); echo "${#arr[@]} ${arr[*]} ${count[two]} $(( 6 * 7 ))"
f() { local n=$1; (( n <= 1 )) && echo 1 && return; echo $(( n * $(f $((n - 1))) )); }
echo "10! = $(f 10)"
while read -r a b; do echo "$b$a"; done <<< "1 2
3 4"
diff <(printf 'a\nb\n') <(printf 'a\nc\n'); echo "diff exit $?"
{ sleep 0.1; echo background; } & wait $!; echo "wait exit $?"
trap 'echo trapped USR1' USR1; kill -USR1 $$
( exit 7 ); echo "subshell exit $?"
mkdir -p d/e && touch d/e/f d/g && find d | sort && rm -r d

echo "=== python3_stdlib"
python3 - <<'PY'
import json, re, subprocess, hashlib, os, threading, collections, itertools
print(json.dumps({"numbers": re.findall(r"\d+", "a1b22c333"), "nested": {"k": [1, 2.5, None, True]}}, sort_keys=True))
out = subprocess.run(["sh", "-c", "echo from a child; exit 3"], capture_output=True, text=True)
print(repr(out.stdout), out.returncode)
print(hashlib.sha256(b"faultline" * 1000).hexdigest())
results = []
def work(i):
    results.append(sum(range(i * 100000)))
threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
[t.start() for t in threads]; [t.join() for t in threads]
print(sorted(results))
print(collections.Counter("mississippi").most_common(2), list(itertools.permutations("abc", 2))[:3])
with open("/tmp/py.txt", "w") as f:
    f.write("line\n" * 1000)
print(os.path.getsize("/tmp/py.txt"), sum(1 for _ in open("/tmp/py.txt")))
os.remove("/tmp/py.txt")
PY

echo "=== gcc_compile_and_run"
cat > sieve.c <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100000, count = 0;
	char *composite = calloc(n + 1, 1);
	for (int i = 2; i <= n; i++) {
		if (composite[i])
			continue;
		count++;
		for (long j = (long)i * i; j <= n; j += i)
			composite[j] = 1;
	}
	printf("%d primes up to %d\n", count, n);
	free(composite);
	return 0;
}
C
gcc -O2 -Wall -o sieve sieve.c && ./sieve 1000000; echo "exit $?"
printf 'int main(void) { return undeclared; }\n' > bad.c
gcc -fsyntax-only bad.c 2>&1 | grep -o "error: 'undeclared' undeclared"
gcc -c -O2 -o sieve.o sieve.c &&
	size -A sieve.o | awk '$1 ~ /^\.text/ { s += $2 } END { print (s > 0) ? "text present" : "no text" }'
rm -f sieve sieve.c sieve.o bad.c
echo "=== shell_session"
# What a new user types first, in the forms whose output cannot differ
# between kernels: errors (none), exit statuses, headers, shapes.
ls -l /tmp /proc/self/ 2>&1 >/dev/null | head -3; echo "ls -l exit ${PIPESTATUS[0]}"
df -h 2>&1 | head -1; df -h / /tmp >/dev/null; echo "df exit $?"
python3 -c 'import subprocess; print(subprocess.check_output("echo hi", shell=True))'
python3 -c 'import os; print(os.system("true"))'
top -b -n 1 | head -3 | cut -c1-5
whoami; id -un; id -gn
dmesg | head -3 | sed -E 's/^\[ *[0-9]+\.[0-9]{6}\] .+$/a timed line/'
mkfifo ff; (echo through fifo >ff &); cat ff; rm ff
stat -c %t:%T /dev/null /dev/zero /dev/tty
touch x; setfattr -n user.k -v v x 2>/dev/null || python3 -c 'import os; os.setxattr("x", "user.k", b"v")'
python3 -c 'import os; print(os.getxattr("x", "user.k"), os.listxattr("x"))'; rm x
readlink /bin /lib /sbin /etc/mtab; readlink -f /bin/sh
echo "=== end"
