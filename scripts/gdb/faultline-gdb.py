"""What `make gdb` loads into gdb-multiarch: Rust's own pretty printers
(from the toolchain's lib/rustlib/etc/, which `rust-gdb` loads too),
faultline's helpers and printers (scripts/gdb/faultline/), and `skip`
rules so that `step` goes into faultline's functions and closures, not
into Rust's library or the crates (scripts/gdb/faultline/step.py).
"""
import os
import subprocess
import sys

import gdb

here = os.path.dirname(os.path.abspath(__file__))
sysroot = subprocess.run(["rustc", "--print", "sysroot"], capture_output=True, text=True,
                         cwd=here, check=True).stdout.strip()
for path in (os.path.join(sysroot, "lib", "rustlib", "etc"), here):
    if path not in sys.path:
        sys.path.insert(0, path)

import gdb_lookup  # noqa: E402 (Rust's printers, found through the path above)
import faultline  # noqa: E402,F401 (registers the fl-* commands)
from faultline import printers, step  # noqa: E402

gdb_lookup.register_printers(gdb.current_progspace())
printers.register(gdb.current_progspace())
step.add_skips()
gdb.execute("set language rust")
print("faultline: gdb helpers loaded (fl-ps, fl-vmas, fl-pt, fl-ptdump, fl-folio, fl-vmstat, "
      "fl-break-fault, fl-step); `help faultline` for more")
