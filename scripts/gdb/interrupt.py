#!/usr/bin/env python3
"""`make gdb` as a student drives it, at a terminal: `make gdb` in a
pseudo-terminal, with ^C typed as the terminal sends it (the byte 0x03,
which the terminal turns into SIGINT for its foreground process group).
Checks that ^C during `continue` stops the kernel and keeps the session
(QEMU lives, in a session of its own, and `make` lives, gdb being a job
of its own), that `continue` resumes it and
a second ^C stops it again, that the helpers then read the running
program, and that the session ends with status 0. Port 1234 is held by
another listener meanwhile: gdb.sh must take the next free port, and say
which.

    interrupt.py KERNEL
Prints one `gdb: <check> ... ok|FAILED` line per check; exits 1 on any
failure, with the session's transcript.
"""
import os
import pty
import re
import select
import socket
import sys
import time

PROMPT = b"(gdb) "


class Session:
    def __init__(self, argv, env):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.execvpe(argv[0], argv, env)
        self.out = b""

    def read_until(self, pattern, timeout):
        """Reads until `pattern` (bytes regex) matches after the last mark."""
        start, deadline = len(self.out), time.time() + timeout
        while time.time() < deadline:
            if re.search(pattern, self.out[start:]):
                return True
            ready, _, _ = select.select([self.fd], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(self.fd, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                self.out += chunk
        return re.search(pattern, self.out[start:]) is not None

    def send(self, text):
        self.mark = len(self.out)
        os.write(self.fd, text.encode())

    def since_mark(self):
        return self.out[self.mark:].decode(errors="replace")

    def wait(self, timeout):
        deadline = time.time() + timeout
        while time.time() < deadline:
            self.read_until(b"$^", 0.2)
            done, status = os.waitpid(self.pid, os.WNOHANG)
            if done:
                return os.waitstatus_to_exitcode(status)
        return None


def main(kernel):
    env = dict(os.environ, TERM="dumb")
    env.pop("FAULTLINE_GDB_PORT", None)
    squatter = socket.socket()
    squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        squatter.bind(("", 1234))
        squatter.listen()
    except OSError:
        pass  # already taken by someone else: the same test
    s = Session(["make", "-s", "gdb", f"GDB_KERNEL={kernel}",
                 "QEMU_ARGS=--timeout 300 --run /bin/bench/spin\\ ms=60000"], env)
    results = []

    def check(name, ok):
        results.append(ok)
        print(f"gdb: {name} ... {'ok' if ok else 'FAILED'}", flush=True)

    ok = s.read_until(rb"\(gdb\) $", 60)
    port = re.search(rb"gdb server on port (\d+)", s.out)
    check("a_taken_port_1234_is_passed_over_and_named", port is not None and port.group(1) != b"1234")
    s.send("set confirm off\n")
    ok = ok and s.read_until(rb"\(gdb\) $", 10)
    s.send("continue\n")
    check("make_gdb_stops_at_kernel_main", ok and s.read_until(rb"kernel_main.*\n(.*\n)*\(gdb\) $", 60))
    s.send("delete\n")
    s.read_until(rb"\(gdb\) $", 10)
    s.send("continue\n")
    s.read_until(rb"Continuing\.", 10)
    time.sleep(4)  # boot, and the spinning program started
    s.send("\x03")
    stopped = s.read_until(rb"received signal SIGINT(.*\n)*.*\(gdb\) $", 20)
    check("ctrl_c_stops_the_kernel", stopped and "terminating on signal" not in s.since_mark())
    s.send("fl-ps\n")
    ps = s.read_until(rb" spin +[0-9]+ .*\n(.*\n)*\(gdb\) $", 20)
    # Each CPU is the gdb thread one above its number, whichever CPU ^C
    # left selected (often one in user space, read through the other).
    cpus = re.findall(r"^CPU (\d+) \(gdb thread (\w+)\)", s.since_mark(), re.M)
    check("helpers_read_the_kernel_after_ctrl_c",
          ps and len(cpus) == 2 and all(t == str(int(c) + 1) for c, t in cpus))
    s.send("continue\n")
    resumed = s.read_until(rb"Continuing\.", 10)
    time.sleep(1)
    s.send("\x03")
    again = s.read_until(rb"received signal SIGINT(.*\n)*.*\(gdb\) $", 20)
    check("continue_resumes_and_ctrl_c_stops_again", resumed and again)
    s.send("quit\n")
    status = s.wait(30)
    check("qemu_survived_the_session", b"terminating on signal" not in s.out)
    check("make_gdb_ends_with_status_0", status == 0)
    if not all(results):
        print("--- session ---")
        print(s.out.decode(errors="replace")[-6000:])
        if status is None:
            os.kill(s.pid, 9)
        return 1
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
