#!/usr/bin/env python3
"""Reads scripts/gdb/steps.py's lines (LOG) for COMMAND (`step` or
`fl-step`) and prints one `gdb: ... ok|FAILED` line per check:

- the stops reach do_page_fault, handle_mm_fault, finish_fault,
  set_pte_range and the contpte store, in that order, in fewer than 60
  commands for fl-step and 300 for step;
- they go into closures (`{closure#N}`) on the way;
- none is in Rust's library or a crate (a /rustc/ or .cargo/ source),
  but `FnOnce::call_once`, the library's one line that calls a closure.

    check_steps.py COMMAND LOG
"""
import re
import sys

PATH = ["faultline::arch::aarch64::fault::do_page_fault", "faultline::mm::fault::handle_mm_fault",
        "faultline::mm::fault::finish_fault", "faultline::mm::memory::set_pte_range",
        "faultline::arch::aarch64::contpte::set_ptes"]


def main(command, log):
    stops = [m.groups() for m in re.finditer(r"^@@step (\d+) (\S+) (\S+)$", open(log).read(), re.M)]
    names = [name for _, name, _ in stops]
    at, reached = 0, []
    for n, name in enumerate(names, 1):
        # A generic function's name carries its type arguments (set_ptes<...>).
        if at < len(PATH) and name.split("<", 1)[0] == PATH[at]:
            reached.append(f"{PATH[at].rsplit('::', 1)[1]} at {n}")
            at += 1
    order_ok = at == len(PATH)
    # fl-step's bound is the path's length in functions; step's, a guard
    # against helpers creeping back in (234 at the time of writing).
    limit = 60 if command == "fl-step" else 300
    command = command.replace("-", "_")
    checks = [
        (f"{command}_reaches_the_pte_store_through_the_fault_path", order_ok),
        (f"{command}_takes_fewer_than_{limit}_to_the_pte_store", order_ok and len(names) < limit),
        (f"{command}_goes_into_closures", any("{closure#" in n for n in names)),
        (f"{command}_never_stops_in_rust_library_or_crates",
         bool(stops) and not any((f.startswith("/rustc/") or "/.cargo/" in f)
                                 and not n.startswith("core::ops::function::") for _, n, f in stops)),
    ]
    for name, ok in checks:
        print(f"gdb: {name} ... {'ok' if ok else 'FAILED'}")
    print(f"    ({command}: {len(names)} to the PTE store; {', '.join(reached)})")
    if not all(ok for _, ok in checks):
        for n, name, f in stops[-40:]:
            print(f"    {n} {name} {f}")
        return 1
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
