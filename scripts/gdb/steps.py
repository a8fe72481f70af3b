"""make test's check of stepping (scripts/gdb-test.sh), run inside gdb
against `/bin/bench/seed000 --set-knobs iters=1`: from the stop of `fl-break-fault`
on the 64K view, repeats one command (`step`, or `fl-step` when the
variable STEP_COMMAND says so) until the CPU is in the contpte store
(`contpte::set_ptes`) and prints one `@@step N FUNCTION FILE` line per
stop, then `@@done N` (or `@@gave-up N`). scripts/gdb/check_steps.py
reads them.
"""
import gdb

command = globals().get("STEP_COMMAND", "step")
limit = 1000
gdb.execute("set pagination off")
# Step the fault's CPU alone: with the others running, a step that runs
# over a skipped helper may stop on another CPU in its timer interrupt and
# follow that instead.
gdb.execute("set scheduler-locking step")
gdb.execute("break kernel_main")
gdb.execute("continue")
gdb.execute("fl-break-fault 0xfffefffe0000")
gdb.execute("continue")
for n in range(1, limit + 1):
    gdb.execute(command, to_string=True)
    frame = gdb.selected_frame()
    sal = frame.find_sal()
    name = frame.name() or "?"
    print(f"@@step {n} {name.replace(' ', '')} {sal.symtab.filename if sal.symtab else '?'}")
    # A generic function's name carries its type arguments: set_ptes<...>.
    if name.split("<", 1)[0] == "faultline::arch::aarch64::contpte::set_ptes":
        print(f"@@done {n}")
        break
else:
    print(f"@@gave-up {limit}")
gdb.execute("kill")
