#!/usr/bin/env python3
"""The gdb port of `make gdb`: which one to use, and whether the QEMU
scripts/gdb.sh started is the one listening on it (a student must never
debug another machine that happened to hold the port).

    port.py free PORT         PORT if nothing listens there, else the next
                              free one from PORT + 1 (prints it)
    port.py wait PORT PGID    waits up to 20 s until a process of group
                              PGID listens on PORT; exits 1 if another
                              process does, or the group is gone
"""
import os
import socket
import sys
import time


def is_free(port):
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("", port))
        except OSError:
            return False
    return True


def listening_inodes(port):
    """Socket inodes listening on `port` (state 0A), from /proc/net/tcp*."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = open(table).read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "0A":
                inodes.add(fields[9])
    return inodes


def group_sockets(pgid):
    """Socket inodes open in processes of group `pgid`; None if it is empty."""
    found, alive = set(), False
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.getpgid(int(pid)) != pgid:
                continue
            alive = True
            for fd in os.listdir(f"/proc/{pid}/fd"):
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                if target.startswith("socket:["):
                    found.add(target[8:-1])
        except OSError:
            continue
    return found if alive else None


def wait(port, pgid):
    for _ in range(200):
        listeners = listening_inodes(port)
        ours = group_sockets(pgid)
        if ours is None:
            sys.exit(f"gdb.sh: QEMU exited before it listened on port {port}")
        if listeners & ours:
            return
        time.sleep(0.1)
    who = "another process listens there" if listening_inodes(port) else "nothing listens there"
    sys.exit(f"gdb.sh: QEMU has not taken port {port} in 20 s ({who})")


def main(argv):
    if len(argv) == 3 and argv[1] == "free":
        port = int(argv[2])
        while not is_free(port):
            port += 1
        print(port)
    elif len(argv) == 4 and argv[1] == "wait":
        wait(int(argv[2]), int(argv[3]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
