#!/usr/bin/env python3
"""A scripted session at `make shell`'s prompt, as a user would type it.

Boots faultline into busybox sh (scripts/shell.sh), waits for each prompt
or output it expects before typing on, and prints one line per step
(`shell NAME ... ok` or `... FAILED: ...`), then `N passed, M failed`.
Keystrokes go through the console's line discipline and busybox's line
editor; ^C and ^Z are typed only once the job says it has started, so the
steps do not depend on timing.
"""
import os
import select
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROMPT = b"faultline:/# "
STEP_TIMEOUT = 30


class Session:
    def __init__(self):
        self.proc = subprocess.Popen(
            [os.path.join(ROOT, "scripts/shell.sh"), "--timeout", "240"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
        )
        self.buf = b""
        self.log = b""

    def expect(self, want, timeout=STEP_TIMEOUT):
        """Reads until WANT appears; returns what came before it."""
        deadline = time.monotonic() + timeout
        while want not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no {want!r} after {timeout} s; got {self.buf[-300:]!r}")
            ready, _, _ = select.select([self.proc.stdout], [], [], left)
            if not ready:
                continue
            chunk = os.read(self.proc.stdout.fileno(), 4096)
            if not chunk:
                raise EOFError(f"QEMU ended before {want!r}; got {self.buf[-300:]!r}")
            self.buf += chunk
            self.log += chunk
        before, _, self.buf = self.buf.partition(want)
        return before

    def type(self, keys):
        self.proc.stdin.write(keys)
        self.proc.stdin.flush()

    def run(self, line):
        """Types LINE and Enter at a prompt; returns its output."""
        self.type(line + b"\r")
        out = self.expect(PROMPT)
        # The shell's terminal query (ESC [6n) and the echoed line.
        out = out.replace(b"\x1b[6n", b"").replace(b"\r", b"")
        return out.split(b"\n", 1)[1] if b"\n" in out else b""


def main():
    s = Session()
    results = []

    def step(name, fn):
        try:
            fn()
            results.append(True)
            print(f"shell {name} ... ok", flush=True)
        except Exception as e:  # one failed step must not hide the rest
            results.append(False)
            print(f"shell {name} ... FAILED: {e}", flush=True)

    def check(out, want):
        if want not in out:
            raise AssertionError(f"{want!r} not in {out!r}")

    def boots_to_a_prompt():
        s.expect(PROMPT, timeout=120)

    def runs_a_command():
        check(s.run(b"echo hello $((6*7))"), b"hello 42\n")

    def line_editing_erases():
        # DEL rubs out the X before Enter: busybox's editor in raw mode.
        check(s.run(b"echo abX\x7fc"), b"abc\n")

    def reads_proc_self():
        check(s.run(b"grep ^Name /proc/self/status"), b"Name:\tgrep\n")
        check(s.run(b"grep -c Rss /proc/self/smaps | grep -v '^0$' && echo has-rss"), b"has-rss\n")

    def flips_a_sysfs_knob():
        knob = b"/sys/kernel/mm/transparent_hugepage/shmem_enabled"
        s.run(b"echo always > " + knob)
        check(s.run(b"cat " + knob), b"[always]")
        s.run(b"echo never > " + knob)
        check(s.run(b"cat " + knob), b"[never]")

    def control_c_interrupts_the_job():
        s.type(b"sh -c 'echo started; exec sleep 60'\r")
        s.expect(b"started\r\n")
        s.type(b"\x03")
        s.expect(PROMPT)
        check(s.run(b"echo status $?"), b"status 130\n")

    def control_z_stops_and_fg_bg_resume():
        s.type(b"sh -c 'echo started; exec sleep 60'\r")
        s.expect(b"started\r\n")
        s.type(b"\x1a")
        check(s.expect(PROMPT), b"Stopped")
        check(s.run(b"jobs"), b"Stopped")
        check(s.run(b"bg"), b"sleep 60")
        check(s.run(b"jobs"), b"Running")
        s.run(b"kill %1")
        check(s.run(b"wait; echo waited"), b"waited\n")

    def pipes_and_background_jobs():
        check(s.run(b"seq 1 100 | grep -c 7"), b"19\n")
        check(s.run(b"(sleep 0.2; echo late) & wait; echo now"), b"late\nnow\n")

    def exit_powers_off():
        s.type(b"exit\r")
        s.expect(b"init exited with status 0")

    step("boots_to_a_prompt", boots_to_a_prompt)
    if results[-1]:
        step("runs_a_command", runs_a_command)
        step("line_editing_erases", line_editing_erases)
        step("reads_proc_self", reads_proc_self)
        step("flips_a_sysfs_knob", flips_a_sysfs_knob)
        step("control_c_interrupts_the_job", control_c_interrupts_the_job)
        step("control_z_stops_and_fg_bg_resume", control_z_stops_and_fg_bg_resume)
        step("pipes_and_background_jobs", pipes_and_background_jobs)
        step("exit_powers_off", exit_powers_off)
    s.proc.kill()
    s.proc.wait()
    passed = sum(results)
    print(f"{passed} passed, {len(results) - passed} failed")
    if len(results) != passed:
        sys.stdout.buffer.write(b"--- console log tail ---\n" + s.log[-3000:].replace(b"\r", b"") + b"\n")
    return 0 if len(results) == passed else 1


if __name__ == "__main__":
    sys.exit(main())
