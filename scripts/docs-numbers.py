#!/usr/bin/env python3
"""The numbers the book quotes, from the committed run of `make bench`
(docs/bench.csv) and `make bench-linux` (docs/bench-linux.csv), so that a
chapter's numbers and the chart (docs/bench.svg) are always the same run.

A doc asks for a table with a pair of markers:

    <!-- numbers: seed000 -->
    <!-- /numbers -->

    docs-numbers.py --update    fills every such block in README.md and docs/
    docs-numbers.py --check     exits 1 (naming the doc) where a block is
                                not what the CSVs give, or docs/bench.svg
                                is not what tools/benchplot draws from them
After a new `make bench` and `make bench-linux`: copy build/bench.csv and
build/bench-linux.csv into docs/, run --update, and redraw the chart
(scripts/docs-numbers.py --update does that too, with benchplot).
"""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchtable  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BLOCK = re.compile(r"(<!-- numbers: ([a-z0-9_]+) -->\n)(.*?)(<!-- /numbers -->)", re.S)


def read_csv(path):
    """The runs of a tidy results file (scripts/benchtable.py) as dicts:
    `bench`, then each setting and metric."""
    rows = []
    for bench, runs in benchtable.grouped(benchtable.read_csv(os.path.join(ROOT, path))):
        rows += [dict(bench=bench, **settings, **metrics) for settings, metrics in runs]
    return rows


class Results:
    def __init__(self):
        self.fl = read_csv("docs/bench.csv")
        self.lx = read_csv("docs/bench-linux.csv")

    @staticmethod
    def find(rows, bench, **want):
        for row in rows:
            if row["bench"] == bench and all(row.get(k) == str(v) for k, v in want.items()):
                return row
        return None

    def f(self, bench, column, **want):
        row = self.find(self.fl, bench, **want)
        return None if row is None else row.get(column)

    def l(self, bench, column, **want):
        row = self.find(self.lx, bench, **want)
        return None if row is None else row.get(column)


def n(value, scale=1, digits=0):
    """A number as the book prints it: thousands separated; '-' if missing."""
    if value is None:
        return "-"
    v = float(value) * scale
    return f"{v:,.{digits}f}"


def table(head, rows):
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def seed000(r):
    rows = []
    for bench, size, what in (("finish_fault", 65536, "finish_fault, 64K view"),
                              ("finish_fault", 32768, "finish_fault, 32K view"),
                              ("seed000", 65536, "seed000 (the seed's C program), 64K view")):
        off = dict(size=size, multi_page=0)
        on = dict(size=size, multi_page=1)
        rows.append([f"{what}: ns per iteration", n(r.f(bench, "ns_per_iter", **off)),
                     n(r.f(bench, "ns_per_iter", **on)), n(r.l(bench, "ns_per_iter", size=size))])
        rows.append([f"{what}: faults per iteration", n(r.f(bench, "faults_per_iter", **off)),
                     n(r.f(bench, "faults_per_iter", **on)),
                     n(r.l(bench, "faults_per_iter", size=size))])
        rows.append([f"{what}: PTEs per fault", n(r.f(bench, "ptes_per_fault", **off)),
                     n(r.f(bench, "ptes_per_fault", **on)), n(r.l(bench, "ptes_per_fault", size=size))])
    rows.append(["one fault, instructions (`fault_ns`, 64K)",
                 n(r.f("finish_fault", "fault_ns", size=65536, multi_page=0)),
                 n(r.f("finish_fault", "fault_ns", size=65536, multi_page=1)),
                 n(r.l("finish_fault", "fault_ns", size=65536))])
    rows.append(["a fault-around read fault, instructions (`lat_pagefault` 64K)", "",
                 n(r.f("lat_pagefault", "fault_ns", fault_around_bytes=65536)),
                 n(r.l("lat_pagefault", "fault_ns", fault_around_bytes=65536))])
    return table(["", "faultline, `multi_page` off", "faultline, on", "Linux 6.12"], rows)


def seed002(r):
    rows = []
    for tasks, threads, what in ((1, 1, "1 thread"), (2, 1, "2 threads"), (4, 1, "4 threads"),
                                 (1, 0, "1 process")):
        off = r.f("page_fault4", "ops_per_sec", tasks=tasks, threads=threads, vma_lock=0)
        on = r.find(r.fl, "page_fault4", tasks=tasks, threads=threads, vma_lock=1)
        lx = r.l("page_fault4", "ops_per_sec", tasks=tasks, threads=threads)
        took = "-" if on is None else f"{int(on['vma_lock_success']) * 100 // max(int(on['faults']), 1)}%"
        rows.append([f"page_fault4, {what}: pages/s", n(off), n(None if on is None else on["ops_per_sec"]),
                     took, n(lx)])
    for pmu in (0, 1):
        rows.append([f"MTTCG 2:1 ratio, page_fault4 (PMU {'on' if pmu else 'off'})", "",
                     n(r.f("mttcg_scaling", "ratio", pmu=pmu), 1, 2), "",
                     n(r.l("mttcg_scaling", "ratio", pmu=pmu), 1, 2)])
        rows.append([f"... the controls spin, getppid1 (PMU {'on' if pmu else 'off'})", "",
                     n(r.f("mttcg_scaling", "spin_ratio", pmu=pmu), 1, 2) + ", "
                     + n(r.f("mttcg_scaling", "getppid1_ratio", pmu=pmu), 1, 2), "",
                     n(r.l("mttcg_scaling", "spin_ratio", pmu=pmu), 1, 2) + ", "
                     + n(r.l("mttcg_scaling", "getppid1_ratio", pmu=pmu), 1, 2)])
    return table(["", "faultline, `vma_lock` off", "faultline, on", "faults without `mmap_lock`",
                  "Linux 6.12"], rows)


def seed003(r):
    rows = []
    for fa in (4096, 65536):
        label = "off (4K)" if fa == 4096 else "on (64K)"
        rows.append([f"fault-around {label}: ns per page", n(r.f("lat_pagefault", "ns_per_page", fault_around_bytes=fa)),
                     n(r.l("lat_pagefault", "ns_per_page", fault_around_bytes=fa))])
        rows.append([f"fault-around {label}: faults per page",
                     n(r.f("lat_pagefault", "faults_per_page", fault_around_bytes=fa), 1, 2),
                     n(r.l("lat_pagefault", "faults_per_page", fault_around_bytes=fa), 1, 2)])
        rows.append([f"fault-around {label}: one fault, instructions",
                     n(r.f("lat_pagefault", "fault_ns", fault_around_bytes=fa)),
                     n(r.l("lat_pagefault", "fault_ns", fault_around_bytes=fa))])
    ops = r.f("getppid1", "ops_per_sec", tasks=1, threads=1)
    lops = r.l("getppid1", "ops_per_sec", tasks=1, threads=1)
    rows.append(["a null system call (`getppid1`), instructions",
                 n(None if ops is None else 1e9 / float(ops)), n(None if lops is None else 1e9 / float(lops))])
    return table(["`lat_pagefault`, 512 pages", "faultline", "Linux 6.12"], rows)


def seed004(r):
    rows = []
    for w in ("python3", "bash_coreutils", "gcc"):
        base = r.find(r.fl, "seed004", workload=w, exec_enabled="0x0", mapping_align="0x0", fault_around=65536)
        seed = r.find(r.fl, "seed004", workload=w, exec_enabled="0x2", mapping_align="0x1", fault_around=65536)
        lx = r.find(r.lx, "seed004", workload=w, fault_around=65536)
        get = (lambda row, c: None if row is None else row.get(c))
        rows.append([w.replace("_", " + "),
                     f"{n(get(base, 'text_64k_aligned'))}% / {n(get(seed, 'text_64k_aligned'))}%",
                     f"{n(get(base, 'text_cont'))}% / {n(get(seed, 'text_cont'))}%",
                     f"{n(get(base, 'faults'))} / {n(get(seed, 'faults'))}", n(get(lx, "faults")),
                     f"{n(get(base, 'ns'), 1e-6, 1)} M / {n(get(seed, 'ns'), 1e-6, 1)} M",
                     f"{n(get(lx, 'ns'), 1e-6, 1)} M"])
    return table(["workload", "text in aligned 64K folios, off / on", "text mapped `cont`, off / on",
                  "faults, off / on", "faults, Linux 6.12", "virtual ns, off / on", "virtual ns, Linux 6.12"],
                 rows) + ("\n\"off\" is `thp_exec_enabled=0x0 thp_mapping_align=0x0`, \"on\" `0x2` and `0x1`; "
                          "Linux 6.12 has neither knob.\n")


def headline(r):
    ff = lambda c, **k: r.f("finish_fault", c, size=65536, **k)
    rows = [
        ["000", "a 64K view of a 2M folio: faults per iteration, 8 -> 1",
         f"{n(ff('faults_per_iter', multi_page=0))} -> {n(ff('faults_per_iter', multi_page=1))}",
         n(r.l("finish_fault", "faults_per_iter", size=65536))],
        ["000", "the same, ns per iteration",
         f"{n(ff('ns_per_iter', multi_page=0))} -> {n(ff('ns_per_iter', multi_page=1))}",
         n(r.l("finish_fault", "ns_per_iter", size=65536))],
    ]
    on = r.find(r.fl, "page_fault4", tasks=1, threads=1, vma_lock=1)
    rows.append(["002", "page_fault4 faults that take no `mmap_lock`",
                 "-" if on is None else f"{int(on['vma_lock_success']) * 100 // max(int(on['faults']), 1)}%",
                 "not counted"])
    rows.append(["003", "`lat_pagefault` with fault-around, ns per page",
                 n(r.f("lat_pagefault", "ns_per_page", fault_around_bytes=65536)),
                 n(r.l("lat_pagefault", "ns_per_page", fault_around_bytes=65536))])
    base = r.f("seed004", "text_64k_aligned", workload="python3", exec_enabled="0x0", mapping_align="0x0",
               fault_around=65536)
    seed = r.f("seed004", "text_64k_aligned", workload="python3", exec_enabled="0x2", mapping_align="0x1",
               fault_around=65536)
    rows.append(["004", "python3's text in aligned 64K folios", f"{n(base)}% -> {n(seed)}%", "not measured"])
    return table(["seed", "claim", "faultline (switch off -> on)", "Linux 6.12"], rows)


def results_table(r):
    """The tables `make bench` prints (scripts/benchtable.py), from the
    committed runs."""
    fl = benchtable.read_csv(os.path.join(ROOT, "docs/bench.csv"))
    lx = benchtable.read_csv(os.path.join(ROOT, "docs/bench-linux.csv"))
    return "```\n" + "\n".join(benchtable.tables(fl, lx)).rstrip() + "\n```\n"


def seed004_full(r):
    rows = []
    for fa in ("65536", "4096"):
        for w in ("python3", "bash_coreutils", "gcc"):
            for row in r.fl:
                if row["bench"] != "seed004" or row["workload"] != w or row["fault_around"] != fa:
                    continue
                pct = lambda c: f"{row.get(c, '-')}%"
                rows.append([w.replace("_", " + "),
                             f"{row['exec_enabled']}, {row['mapping_align']}, {'64K' if fa == '65536' else 'off'}",
                             n(row["faults"]), n(row["ns"], 1e-6, 1), pct("file_4k"), pct("file_64k_aligned"),
                             pct("file_64k_unaligned"), pct("file_partial"), pct("file_cont"),
                             pct("text_64k_aligned"), pct("text_cont")])
    return table(["workload", "exec, align, fault-around", "faults", "M instructions", "file 4K",
                  "file 64K aligned", "64K unaligned", "partial", "file cont", "text 64K aligned", "text cont"],
                 rows)


def linux(r):
    ff = lambda k, c, **w: (r.f if k == "f" else r.l)("finish_fault", c, size=65536, **w)
    fl_on, lx = dict(multi_page=1), {}
    pf = lambda k: (r.f("page_fault4", "ops_per_sec", tasks=1, threads=1, vma_lock=1) if k == "f"
                    else r.l("page_fault4", "ops_per_sec", tasks=1, threads=1))
    getppid = lambda k: (r.f if k == "f" else r.l)("getppid1", "ops_per_sec", tasks=1, threads=1)
    mt = lambda k, c, pmu: (r.f if k == "f" else r.l)("mttcg_scaling", c, pmu=pmu)
    ratios = lambda k, pmu: ", ".join(n(mt(k, c, pmu), 1, 2)
                                      for c in ("ratio", "spin_ratio", "getppid1_ratio"))
    rows = [
        ["finish_fault 64K: ns per iteration, faults per iteration",
         f"{n(ff('f', 'ns_per_iter', **fl_on))}, {n(ff('f', 'faults_per_iter', **fl_on))}",
         f"{n(ff('l', 'ns_per_iter', **lx))}, {n(ff('l', 'faults_per_iter', **lx))}"],
        ["seed000 (the seed's C program) 64K: ns, faults per iteration",
         f"{n(r.f('seed000', 'ns_per_iter', size=65536, multi_page=1))}, "
         f"{n(r.f('seed000', 'faults_per_iter', size=65536, multi_page=1))}",
         f"{n(r.l('seed000', 'ns_per_iter', size=65536))}, "
         f"{n(r.l('seed000', 'faults_per_iter', size=65536))}"],
        ["seed000: the 2M mapping's `ShmemPmdMapped` after the populating store",
         f"{n(r.f('seed000', 'shmem_pmd_kb', size=65536, multi_page=1))} kB",
         f"{n(r.l('seed000', 'shmem_pmd_kb', size=65536))} kB"],
        ["one fault, instructions (`fault_ns`)", n(ff("f", "fault_ns", **fl_on)), n(ff("l", "fault_ns", **lx))],
        ["a fault-around read fault, instructions", n(r.f("lat_pagefault", "fault_ns", fault_around_bytes=65536)),
         n(r.l("lat_pagefault", "fault_ns", fault_around_bytes=65536))],
        ["lat_pagefault with fault-around, ns per page",
         n(r.f("lat_pagefault", "ns_per_page", fault_around_bytes=65536)),
         n(r.l("lat_pagefault", "ns_per_page", fault_around_bytes=65536))],
        ["page_fault4, 1 thread under icount, pages/s", n(pf("f")), n(pf("l"))],
        ["a null system call (`getppid1`), instructions",
         n(None if getppid("f") is None else 1e9 / float(getppid("f"))),
         n(None if getppid("l") is None else 1e9 / float(getppid("l")))],
        ["MTTCG page_fault4 without the PMU, 1 and 2 threads, pages/s",
         f"{n(mt('f', 'threads1_ops', 0))} and {n(mt('f', 'threads2_ops', 0))}",
         f"{n(mt('l', 'threads1_ops', 0))} and {n(mt('l', 'threads2_ops', 0))}"],
        ["MTTCG 2:1 ratios without the PMU: page_fault4, spin, getppid1", ratios("f", 0), ratios("l", 0)],
        ["the same with the PMU", ratios("f", 1), ratios("l", 1)],
    ]
    return table(["", "faultline", "Linux 6.12"], rows)


def fault(r):
    getppid = lambda k: (r.f if k == "f" else r.l)("getppid1", "ops_per_sec", tasks=1, threads=1)
    rows = [["one fault mapping a 64K folio with 16 PTEs, instructions (`fault_ns`)",
             n(r.f("finish_fault", "fault_ns", size=65536, multi_page=1)),
             n(r.l("finish_fault", "fault_ns", size=65536))],
            ["one fault mapping one page, instructions (`lat_pagefault`, fault-around off)",
             n(r.f("lat_pagefault", "fault_ns", fault_around_bytes=4096)),
             n(r.l("lat_pagefault", "fault_ns", fault_around_bytes=4096))],
            ["a null system call (`getppid1`), instructions, for scale",
             n(None if getppid("f") is None else 1e9 / float(getppid("f"))),
             n(None if getppid("l") is None else 1e9 / float(getppid("l")))]]
    return table(["", "faultline", "Linux 6.12"], rows)


def boot(r):
    return table(["", "faultline"], [["virtual ns (instructions) from power-on to the first user instruction",
                                      n(r.f("boot", "first_user_ns"))]])


def tlb(r):
    """The TLB model's misses (make bench TLB=1), each run's switch off ->
    on, and its time, which under TCG the TLB does not change."""
    def row(name, switch, bench, time, off, on):
        a, b = r.find(r.fl, bench, **off), r.find(r.fl, bench, **on)
        get = lambda x, c: None if x is None else x.get(c)
        pair = lambda c, scale=1, digits=0: f"{n(get(a, c), scale, digits)} -> {n(get(b, c), scale, digits)}"
        return [name, switch, pair("dtlb_miss"), pair("itlb_miss"), pair("l2_miss"),
                pair(time, *((1e-6, 1) if time == "ns" else ()))]
    rows = [row("seed000, 1000 iterations (64K view)", "contiguous bit", "tlb_seed000", "ns_per_iter",
                dict(contpte=0), dict(contpte=1)),
            row("lat_pagefault, 512 pages x 10", "64K shmem folios", "tlb_lat_pagefault", "ns_per_page",
                dict(shmem_64k="never"), dict(shmem_64k="always"))]
    for w in ("python3", "bash_coreutils", "gcc"):
        rows.append(row(w.replace("_", " + "), "exec folios 0x0 -> 0x2", "tlb_seed004", "ns",
                        dict(workload=w, exec_enabled="0x0", mapping_align="0x0"),
                        dict(workload=w, exec_enabled="0x2", mapping_align="0x0")))
        rows.append(row(w.replace("_", " + "), "0x0 -> 0x2, align 0x1", "tlb_seed004", "ns",
                        dict(workload=w, exec_enabled="0x0", mapping_align="0x1"),
                        dict(workload=w, exec_enabled="0x2", mapping_align="0x1")))
    return table(["run", "switch, off -> on", "dTLB misses", "iTLB misses", "walks (L2 misses)",
                  "virtual ns (per iteration, per page, M)"], rows) + (
        "\nFrom `make bench TLB=1`: QEMU 10 with the TLB model (tools/tlb), Neoverse-N1 sizes "
        "(48-entry L1 TLBs, a 1280-entry 5-way L2), counting the user accesses of each benchmark's "
        "measured part.\n")


def run(r):
    lines = []
    for bench, size in (("finish_fault", 65536), ("seed000", 65536)):
        row = r.find(r.fl, bench, size=size, multi_page=1)
        if row:
            keys = ["size"] + [k for k in row if k not in benchtable.SETTINGS and k != "bench"][:4]
            lines.append(f"result {bench} " + " ".join(f"{k}={row[k]}" for k in keys) + " ...")
    return "```\n$ make run\n...\n" + "\n".join(lines) + "\n...\n```\n"


GENERATORS = {"table": results_table, "seed004_full": seed004_full, "linux": linux, "fault": fault,
              "boot": boot, "run": run, "seed000": seed000, "seed002": seed002, "seed003": seed003, "seed004": seed004,
              "headline": headline, "tlb": tlb}


def docs():
    return ["README.md"] + sorted(f"docs/{f}" for f in os.listdir(os.path.join(ROOT, "docs")) if f.endswith(".md"))


def fill(text, results):
    def one(m):
        return m.group(1) + GENERATORS[m.group(2)](results) + m.group(4)
    return BLOCK.sub(one, text)


def draw(out):
    plot = os.path.join(ROOT, "target/release/benchplot")
    if not os.path.exists(plot):
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "benchplot"], cwd=ROOT, check=True)
    subprocess.run([plot, "--faultline", "docs/bench.csv", "--linux", "docs/bench-linux.csv", "--out", out],
                   cwd=ROOT, check=True, capture_output=True)


def main(argv):
    if len(argv) != 2 or argv[1] not in ("--update", "--check"):
        sys.exit(__doc__)
    results, failed = Results(), 0
    for doc in docs():
        path = os.path.join(ROOT, doc)
        text = open(path).read()
        new = fill(text, results)
        if new == text:
            continue
        if argv[1] == "--update":
            open(path, "w").write(new)
            print(f"docs-numbers: {doc} updated")
        else:
            print(f"docs-numbers: {doc}: its numbers are not docs/bench.csv's (scripts/docs-numbers.py --update)")
            failed = 1
    if argv[1] == "--update":
        draw("docs/bench.svg")
        print("docs-numbers: docs/bench.svg drawn")
    else:
        with tempfile.NamedTemporaryFile(suffix=".svg") as tmp:
            draw(tmp.name)
            if open(tmp.name).read() != open(os.path.join(ROOT, "docs/bench.svg")).read():
                print("docs-numbers: docs/bench.svg is not what benchplot draws from docs/bench*.csv")
                failed = 1
    return failed


if __name__ == "__main__":
    sys.exit(main(sys.argv))
