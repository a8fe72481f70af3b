#!/usr/bin/env python3
"""Gives the kernel's functions their short names, for gdb.

gdb's Rust mode finds a function only by its whole path: `break
finish_fault` fails where `break faultline::mm::fault::finish_fault`
works. Linux's functions are global C names, so a kernel engineer types
the short one. This copies the kernel ELF (IN) to OUT with one more ELF
symbol per function whose last path component is unique among the
kernel's functions (and not a symbol already), at the function's address,
or at each of its addresses when it has several copies (a generic
function, one per type it is used with): gdb then resolves `break
finish_fault` through that symbol to the function and its source lines,
at every copy. Functions inlined everywhere have no address, and names
several functions share (`new`, `drop`, a system call and the helper of
the same name) stay ambiguous: for those, the whole path works, and it
also reaches every inlined copy.

    short-names.py IN OUT
"""
import re
import subprocess
import sys

CROSS = "aarch64-linux-gnu-"
# A plain function of the kernel crate: path segments only, no impl
# blocks (`<T as Trait>`), no closures, no generic arguments.
PLAIN = re.compile(r"^faultline(::[A-Za-z0-9_]+)+$")


def text_start(elf):
    """The address of .text, to which objcopy's symbol values are relative."""
    out = subprocess.run([CROSS + "readelf", "-SW", elf], check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        fields = line.replace("[ ", "[").split()
        if len(fields) > 3 and fields[1] == ".text":
            return int(fields[3], 16)
    sys.exit(f"short-names.py: {elf} has no .text")


def functions(elf):
    """(address, demangled name) of every function symbol, and every name."""
    out = subprocess.run([CROSS + "nm", "--defined-only", "-C", elf], check=True, capture_output=True, text=True).stdout
    funcs, names = [], set()
    for line in out.splitlines():
        addr, kind, name = line.split(" ", 2)
        names.add(name)
        if kind in "tT" and PLAIN.match(name):
            funcs.append((int(addr, 16), name))
    return funcs, names


def main(src, dst):
    funcs, names = functions(src)
    by_short = {}
    for addr, name in funcs:
        by_short.setdefault(name.rsplit("::", 1)[1], set()).add((name, addr))
    base = text_start(src)
    args, count = [], 0
    for short, copies in sorted(by_short.items()):
        if len({name for name, _ in copies}) == 1 and short not in names:
            count += 1
            for _, addr in sorted(copies):
                args += ["--add-symbol", f"{short}=.text:{addr - base:#x},function,global"]
    subprocess.run([CROSS + "objcopy", *args, src, dst], check=True)
    print(f"short-names.py: {count} short names added to {dst}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
