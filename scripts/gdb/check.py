#!/usr/bin/env python3
"""Checks gdb's helpers against the kernel (make test's gdb stage): compares
what scripts/gdb/session.py printed from gdb with what user/c/gdb-target.c
printed from /proc at the same moments, and what gdb showed on the way
through the fault path. One `gdb: NAME ... ok|FAILED` line per check.

    check.py CONSOLE-LOG GDB-LOG
"""
import re
import sys

# Pages free memory may move by between the target's /proc read and gdb's
# stop (see `vmstat` in `main`).
FREE_SLACK = 16


def blocks(text):
    """{name: [lines]} of the `@@begin NAME` ... `@@end NAME` blocks."""
    found, name, lines = {}, None, []
    for line in text.replace("\r", "").splitlines():
        if line.startswith("@@begin "):
            name, lines = line[len("@@begin "):], []
        elif line.startswith("@@end ") and name is not None:
            found[name] = lines
            name = None
        elif name is not None:
            lines.append(line)
    return found


def marker(text, key):
    found = re.search(rf"^@@{key} (.*)$", text, re.M)
    return found.group(1).strip() if found else None


def maps_lines(lines):
    """The /proc/PID/maps lines of fl-vmas output (not its detail lines)."""
    return [line for line in lines if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line)]


def main(console_path, gdb_path):
    console_text = open(console_path, errors="replace").read()
    gdb_text = open(gdb_path, errors="replace").read()
    proc, seen = blocks(console_text), blocks(gdb_text)
    results = []

    def check(name, ok, detail=""):
        results.append(bool(ok))
        print(f"gdb: {name} ... {'ok' if ok else 'FAILED'}")
        if not ok and detail:
            print("    " + detail.replace("\n", "\n    "))

    def same(name, gdb_block, proc_block, pick=lambda lines: lines):
        got, want = pick(seen.get(gdb_block, [])), proc.get(proc_block, [])
        diff = [f"gdb:  {g!r}\nproc: {w!r}" for g, w in zip(got, want) if g != w][:3]
        check(name, got and got == want,
              f"{len(got)} lines from gdb, {len(want)} from /proc\n" + "\n".join(diff))

    def vmstat(name, gdb_block, proc_block):
        """Every counter the same, but free pages within FREE_SLACK: the
        target writes its report to the console between its /proc read
        and the store gdb stops at, and what the kernel allocates on the
        way (bounce buffers, slab pages) can leave free memory a few
        pages apart."""
        got, want = seen.get(gdb_block, []), proc.get(proc_block, [])

        def free(lines):
            return next((int(line.split()[1]) for line in lines if line.startswith("nr_free_pages ")), None)

        def rest(lines):
            return [line for line in lines if not line.startswith("nr_free_pages ")]

        near = free(got) is not None and free(want) is not None and abs(free(got) - free(want)) <= FREE_SLACK
        diff = [f"gdb:  {g!r}\nproc: {w!r}" for g, w in zip(got, want) if g != w][:3]
        check(name, got and rest(got) == rest(want) and near,
              f"{len(got)} lines from gdb, {len(want)} from /proc\n" + "\n".join(diff))

    pid = marker(console_text.replace("\r", ""), "pid")
    check("session_ran_to_the_end", "@@session done" in gdb_text,
          marker(gdb_text, "session error") or gdb_text[-1500:])
    check("help_faultline_lists_the_helpers",
          all(h in "\n".join(seen.get("help", [])) for h in
              ("fl-ps", "fl-vmas", "fl-pt ", "fl-ptdump", "fl-folio", "fl-vmstat", "fl-break-fault")))

    # fl-break-fault: stopped in the EL0 vector for this program's store.
    check("fl_break_fault_stops_at_the_address",
          marker(gdb_text, "far") == "0x7e0000000000"
          and (marker(gdb_text, "frame") or "").startswith("exception_vectors ")
          and re.search(rf"fl-break-fault: pid {pid} \(gdb-target\) on CPU \d+: 0x7e0000000000: "
                        r"DataAbortLowerEl, Translation\(0\), write", gdb_text), f"pid {pid}")
    busy = marker(console_text.replace("\r", ""), "busy")
    fl_ps = "\n".join(seen.get("fl-ps", []))
    check("fl_ps_shows_both_threads_running_and_init_blocked",
          re.search(rf"^ +{pid} +{pid} gdb-target +\d+ running\* +0x", fl_ps, re.M)
          and re.search(rf"^ +{pid} +{busy} gdb-target +\d+ running\* +0x", fl_ps, re.M)
          and re.search(r"^ +1 +1 init +\d+ blocked +0x", fl_ps, re.M), fl_ps)

    # Each helper against /proc at the same moment.
    same("fl_ptdump_matches_proc_self_ptdump", "fl-ptdump before", "ptdump before")
    same("fl_ptdump_from_the_other_cpu_by_pid", "fl-ptdump other-cpu", "ptdump before")
    same("fl_vmas_matches_proc_self_maps", "fl-vmas before", "maps before", maps_lines)
    same("fl_vmas_from_the_other_cpu_by_pid", "fl-vmas other-cpu", "maps before", maps_lines)
    same("fl_vmas_of_another_process_matches_its_maps", "fl-vmas-init before", "init-maps before", maps_lines)
    vmstat("fl_vmstat_matches_proc_vmstat", "fl-vmstat before", "vmstat before")
    vmas = "\n".join(seen.get("fl-vmas before", []))
    check("fl_vmas_shows_flags_and_the_vma_lock",
          re.search(r"^7e0000000000-7e0000080000 rw-s .*\n    rd wr sh mr mw me ms; pgoff 0x0; vma 0x[0-9a-f]+; "
                    r"(never write-locked|unlocked \(vm_lock_seq \d+, mm_lock_seq \d+\)), readers 0, published$",
                    vmas, re.M), vmas[-600:])
    none = "\n".join(seen.get("fl-pt-none before", []))
    check("fl_pt_shows_where_the_walk_stops", "L0 PGD [252]" in none and "not mapped" in none, none)

    # docs/fault.md's breakpoint: the trap, the VMA and the page table
    # (its steps 1 to 3), innermost first, for this program's store.
    brk = "\n".join(seen.get("break handle_mm_fault", []))
    frames = [re.sub(r"^#\d+ +(0x[0-9a-f]+ in )?(faultline::)?", "", line).split(" ")[0]
              for line in seen.get("bt handle_mm_fault", []) if line.startswith("#")]
    fault_path = ["mm::fault::handle_mm_fault", "arch::aarch64::fault::do_page_fault",
                  "arch::aarch64::fault::do_current_fault", "arch::aarch64::fault::do_user_fault",
                  "arch::aarch64::trap::handle_el0_sync"]
    path = [f for f in frames if f in fault_path]
    check("break_handle_mm_fault_shows_docs_fault_md_steps_1_to_3",
          re.search(r"Breakpoint \d+ at 0x[0-9a-f]+: file kernel/src/mm/fault.rs, line \d+", brk)
          and re.search(r"hit Breakpoint \d+, faultline::mm::fault::handle_mm_fault \([^)]*addr=0x7e0000000000",
                        gdb_text)
          and path == fault_path
          and frames[-1] == "exception_vectors",
          brk + "\n" + "\n".join(seen.get("bt handle_mm_fault", [])))

    # Into the fault path.
    brk = "\n".join(seen.get("break finish_fault", []))
    check("break_finish_fault_by_its_short_name",
          re.search(r"Breakpoint \d+ at 0x[0-9a-f]+: file kernel/src/mm/fault.rs, line \d+", brk)
          and re.search(r"hit Breakpoint \d+, faultline::mm::fault::finish_fault \(vmf=0x[0-9a-f]+,.*allowed=0x7e0000000000",
                        gdb_text), brk)
    args = "\n".join(seen.get("info args", []) + seen.get("p page_prot", []))
    check("printers_show_addresses_folio_and_prot",
          re.search(r"vmf = 0x[0-9a-f]+", args) and "allowed = 0x7e0000000000..0x7e0000080000" in args
          and re.search(r"folio = Folio\(pfn 0x[0-9a-f]+, order 4 \(64K\), refcount \d+, mapcount 0,", args)
          # The protection of the process's own copy is dirty: read-write,
          # DBM set (a clean one would be read-only).
          and re.search(r"= PgProt\(0x[0-9a-f]+: AttrIndx 1 Normal WB, AP 01 EL1 RW, EL0 RW,.* nG, DBM,.* dirty", args),
          args)
    pmd, table = "\n".join(seen.get("p pmd as Pte", [])), "\n".join(seen.get("p page table", []))
    check("pte_printer_decodes_a_table_descriptor_as_a_table",
          re.search(r"Pte\(0x[0-9a-f]+: table, next level at PA 0x[0-9a-f]+\)", pmd), pmd)
    check("a_page_table_prints_as_a_summary_and_an_atomic_as_its_value",
          re.search(r"page table at 0x[0-9a-f]+: \d+ valid entries", table)
          and re.search(r"^\$\d+ = (0x[0-9a-f]+|\d+)$", "\n".join(seen.get("p one entry", [])), re.M),
          table + "\n" + "\n".join(seen.get("p one entry", [])))
    check("helpers_after_the_kernel_is_gone_say_so_plainly",
          "@@after kill: fl-ps: no kernel to read" in gdb_text and "Python Exception" not in gdb_text,
          gdb_text[-500:])
    folio = "\n".join(seen.get("fl-folio folio", []))
    check("fl_folio_of_a_folio_value_before_it_is_mapped",
          "order 4 (64K, 16 pages)" in folio and "mapcount 0" in folio and "mapped by 0 entries" in folio
          and re.search(r"page cache: ino \d+ .*index 0x0-0xf", folio), folio)
    # gdb echoes each source line itself ("298\t..."); the session's own
    # lines are "FUNCTION LINE TEXT".
    steps = [line.split(" ", 2) for line in seen.get("next", []) if re.match(r"^\S+ \d+ ", line)]
    lines = [int(s[1]) for s in steps]
    first_seen = list(dict.fromkeys(lines))
    check("next_from_finish_fault_reaches_set_pte_range_in_source_order",
          steps and all(s[0] == "faultline::mm::fault::finish_fault" for s in steps)
          and "set_pte_range(" in steps[-1][2] and first_seen == sorted(first_seen)
          and marker(gdb_text, "step") == "faultline::mm::memory::set_pte_range",
          "\n".join(seen.get("next", [])) + f"\nstep: {marker(gdb_text, 'step')}")

    # After the fault: the 64K block, mapped with the contiguous bit.
    check("fl_break_fault_by_address_again", "@@far 0x7e0000100000" in gdb_text)
    same("fl_ptdump_after_the_fault", "fl-ptdump after", "ptdump after")
    check("proc_ptdump_shows_the_contiguous_block",
          any(line.startswith("7e0000000000-7e0000010000 PTE pa=") and " cont" in line
              for line in proc.get("ptdump after", [])))
    same("fl_vmas_after_the_fault", "fl-vmas after", "maps after", maps_lines)
    vmstat("fl_vmstat_after_the_fault", "fl-vmstat after", "vmstat after")
    pt = seen.get("fl-pt after", [])
    entries = [line for line in pt if re.match(r"^    \[ *\d+\] 0x[0-9a-f]+ page .* Contiguous=1 ", line)]
    check("fl_pt_shows_the_contiguous_bit_on_all_16_entries",
          len(entries) == 16 and any("contiguous-bit rules: ok" in line for line in pt), "\n".join(pt))
    for name in ("fl-folio after", "fl-folio pfn"):
        text = "\n".join(seen.get(name, []))
        check(f"{name.replace('-', '_').replace(' ', '_')}_shows_16_contiguous_ptes",
              "order 4 (64K, 16 pages)" in text and "mapcount 16" in text
              and re.search(r"flags uptodate dirty cached", text)
              and re.search(r"page cache: ino \d+ .*index 0x0-0xf", text)
              and re.search(rf"pid {pid} \(gdb-target\) 0x7e0000000000-0x7e0000010000: 16 PTEs, contiguous bit",
                            text), text)

    leaf1 = "\n".join(seen.get("fl-folio leaf1", []))
    check("fl_folio_finds_a_folio_in_the_page_cache_tree",
          "order 4 (64K, 16 pages)" in leaf1 and re.search(r"page cache: ino \d+ .*index 0x40-0x4f", leaf1),
          leaf1)

    print(f"{sum(results)} passed, {len(results) - sum(results)} failed")
    return 0 if all(results) else 1


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
