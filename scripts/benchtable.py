#!/usr/bin/env python3
"""The results of `make bench` and `make bench-linux` as tables a reader
takes in at a glance, and as a tidy CSV any spreadsheet (and
tools/benchplot) reads as it is.

    scripts/benchtable.py LOG CSV KERNEL [LINUX_CSV]
    scripts/benchtable.py --tlb NAME CONSOLE [SETTING=VALUE...]

reads the `result NAME key=value ...` lines of LOG (a benchmark's console,
as /bin/bench/bench and user/c/seed004.c print them; the single MTTCG
runs, `result mttcg_run`, are summed up by their `mttcg_scaling` rows and
left out), writes CSV with one row per kernel, benchmark, setting and
metric:

    kernel,benchmark,setting,metric,value
    faultline,finish_fault,size=65536 multi_page=1 contpte=1 ...,ns_per_iter,961

and prints one aligned table per benchmark: its settings, then each metric
with its unit in the header, then the target where one is set (the seeds'
claims and issue 28's) and whether the row meets it. With LINUX_CSV (make bench-linux's), seed 004's workloads also get a
table beside Linux 6.12's: each kernel's time, their ratio, and where the
time went (user and system, from getrusage of the workload's processes).

With --tlb (scripts/bench-tlb.sh), it joins one boot's console under the
TLB model (./qemu-run.sh --tlb) instead: the Nth `result` line with the
model's report for window N (`tlb: mark=N ...`), printed as one `result
tlb_NAME` line with the run's settings, the SETTING=VALUEs given, the
model's counts and the benchmark's own time.

scripts/docs-numbers.py imports this file to print the same tables in the
book.
"""
import os
import sys

# Keys that say what was run (its parameters and faultline's switches);
# every other key of a result line is something measured.
SETTINGS = ["workload", "size", "pages", "mode", "tasks", "threads", "calls", "vdso", "pmu",
            "shmem_enabled", "shmem_2m", "shmem_64k",
            "multi_page", "contpte", "fault_around_bytes", "vma_lock", "hw_af", "hw_dirty",
            "tlbi_range",
            "exec_enabled", "mapping_align", "fault_around"]

# (benchmark, the settings a row must have, metric, "<=" or "==", bound,
# where the target comes from). seed004 rows are faultline's defaults.
TARGETS = [
    ("boot", {}, "first_user_ns", "<=", 10_000_000, "issue 28"),
    ("finish_fault", {"size": "65536", "multi_page": "1"}, "faults_per_iter", "==", 1, "seed 000"),
    ("finish_fault", {"size": "65536", "multi_page": "1"}, "ptes_per_fault", "==", 16, "seed 000"),
    ("finish_fault", {"size": "65536", "multi_page": "1"}, "fault_ns", "<=", 600, "issue 28"),
    ("seed000", {"size": "65536", "multi_page": "1"}, "faults_per_iter", "==", 1, "seed 000"),
    ("seed000", {"size": "65536", "multi_page": "1"}, "ptes_per_fault", "==", 16, "seed 000"),
    ("seed000", {"size": "65536", "multi_page": "1"}, "ns_per_iter", "<=", 700, "issue 28"),
    ("lat_pagefault", {"fault_around_bytes": "65536"}, "fault_ns", "<=", 1500, "issue 28"),
    ("lat_pagefault", {"fault_around_bytes": "65536"}, "ns_per_page", "<=", 110, "issue 28"),
    ("lat_pagefault", {"fault_around_bytes": "4096"}, "fault_ns", "<=", 550, "issue 28"),
    ("getppid1", {"tasks": "1"}, "ns_per_call", "<=", 200, "issue 28"),
    ("seed004", {"workload": "bash_coreutils", "exec_enabled": "0x0", "mapping_align": "0x0",
                 "fault_around": "65536"}, "ns", "<=", 140_000_000, "issue 28"),
]

# seed 004's workloads against Linux (issue 28): how many times faster
# than Linux 6.12 faultline must be on each, at its default settings.
WORKLOAD_SPEEDUP = {"python3": 1.05, "bash_coreutils": 1.30, "gcc": 1.05}
FAULTLINE_DEFAULTS = {"exec_enabled": "0x0", "mapping_align": "0x0", "fault_around": "65536"}


def unit(metric):
    """The unit a metric is in, for its column's header ('' for a count)."""
    if metric == "ns" or metric.endswith("_ns") or "ns_per_" in metric:
        return "ns"
    if metric.endswith("_kb"):
        return "kB"
    if metric.endswith("_ops") or metric == "ops_per_sec":
        return "ops/s"
    if metric.startswith(("file_", "text_")):
        return "%"
    if "ratio" in metric:
        return "x"
    return ""


def records(log):
    """(benchmark, [(key, value)]) for each result line of LOG, in order."""
    out = []
    for line in open(log, errors="replace"):
        words = line.strip().split()
        if len(words) < 2 or words[0] != "result" or words[1] == "mttcg_run":
            continue
        pairs = [tuple(w.split("=", 1)) for w in words[2:] if "=" in w]
        out.append((words[1], pairs))
    return out


def tidy(recs, kernel):
    """Tidy rows (kernel, benchmark, setting, metric, value)."""
    rows = []
    for bench, pairs in recs:
        setting = " ".join(f"{k}={v}" for k, v in pairs if k in SETTINGS) or "-"
        metrics = [(k, v) for k, v in pairs if k not in SETTINGS]
        if bench == "getppid1":
            # Under -icount a null system call's rate is its cost.
            ops = dict(metrics).get("ops_per_sec", "0")
            if ops.isdigit() and int(ops) > 0:
                metrics.append(("ns_per_call", str(round(1e9 / int(ops)))))
        rows += [(kernel, bench, setting, m, v) for m, v in metrics]
    return rows


def write_csv(path, rows):
    with open(path, "w") as f:
        f.write("kernel,benchmark,setting,metric,value\n")
        for row in rows:
            f.write(",".join(row) + "\n")


def read_csv(path):
    """The tidy rows of a CSV this file wrote; [] if there is none."""
    if not os.path.exists(path):
        return []
    lines = open(path).read().splitlines()[1:]
    return [tuple(line.split(",", 4)) for line in lines if line.count(",") >= 4]


def grouped(rows):
    """[(benchmark, [(settings dict, {metric: value})])], in file order. A
    run's rows come together: the same benchmark and setting again, or a
    metric the run already has, is the next run (Linux repeats runs whose
    only difference is a switch it does not have)."""
    benches, last = {}, None
    for _, bench, setting, metric, value in rows:
        runs = benches.setdefault(bench, [])
        if last != (bench, setting) or metric in runs[-1][1]:
            runs.append((settings_of(setting), {}))
            last = (bench, setting)
        runs[-1][1][metric] = value
    return list(benches.items())


def settings_of(setting):
    return dict(w.split("=", 1) for w in setting.split() if "=" in w)


def number(value):
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def met(value, op, bound):
    v = number(value)
    return v is not None and (v <= bound if op == "<=" else v == bound)


def targets_for(bench, settings):
    return [t for t in TARGETS
            if t[0] == bench and all(settings.get(k) == v for k, v in t[1].items())]


def aligned(head, body):
    """Rows of cells as text columns, numbers right-aligned."""
    widths = [max(len(r[i]) for r in [head] + body) for i in range(len(head))]
    def line(cells):
        return "  ".join(c.rjust(w) if number(c) is not None else c.ljust(w)
                         for c, w in zip(cells, widths)).rstrip()
    return [line(head)] + [line(r) for r in body]


def bench_table(bench, runs, targets=True):
    """One benchmark's table: settings, metrics with units and, for
    faultline's (`targets`), the target and whether it is met."""
    keys = [k for k in SETTINGS if any(k in s for s, _ in runs)]
    metrics = []
    for _, m in runs:
        metrics += [k for k in m if k not in metrics]
    head = keys + [f"{m} ({unit(m)})" if unit(m) else m for m in metrics]
    has_targets = targets and any(targets_for(bench, s) for s, _ in runs)
    if has_targets:
        head += ["target", "met"]
    body = []
    for settings, values in runs:
        row = [settings.get(k, "-") for k in keys] + [values.get(m, "-") for m in metrics]
        if has_targets:
            ts = targets_for(bench, settings)
            row.append("; ".join(f"{t[2]} {t[3]} {t[4]:,} ({t[5]})" for t in ts) or "-")
            row.append("; ".join("yes" if met(values.get(t[2]), t[3], t[4]) else "NO"
                                 for t in ts) or "-")
        body.append(row)
    return [bench] + aligned(head, body)


def workload_table(faultline, linux):
    """seed 004's workloads, faultline (default settings) beside Linux."""
    fl = {s.get("workload"): m for b, runs in grouped(faultline) if b == "seed004"
          for s, m in runs if all(s.get(k) == v for k, v in FAULTLINE_DEFAULTS.items())}
    lx = {s.get("workload"): m for b, runs in grouped(linux) if b == "seed004"
          for s, m in runs if s.get("fault_around") in (None, "65536")}
    head = ["workload", "Linux 6.12 (ns)", "faultline (ns)", "faster", "Linux user/sys (ns)",
            "faultline user/sys (ns)", "target", "met"]
    body = []
    for name, need in WORKLOAD_SPEEDUP.items():
        if name not in fl or name not in lx:
            continue
        f, l = number(fl[name].get("ns")), number(lx[name].get("ns"))
        if not f or not l:
            continue
        split = lambda m: f"{m.get('user_ns', '-')}/{m.get('sys_ns', '-')}"
        body.append([name, f"{l:,.0f}", f"{f:,.0f}", f"{l / f:.3f}x", split(lx[name]),
                     split(fl[name]), f">= {need:.2f}x", "yes" if l / f >= need else "NO"])
    if not body:
        return []
    return ["seed004 workloads, faultline (default settings) beside Linux 6.12"] + aligned(head, body)


def tables(faultline, linux=()):
    """Every table of one kernel's rows (`faultline`, or Linux's alone),
    as lines, each followed by an empty line."""
    out = []
    targets = any(row[0] == "faultline" for row in faultline)
    for bench, runs in grouped(faultline):
        out += bench_table(bench, runs, targets) + [""]
    extra = workload_table(faultline, linux)
    return out + (extra + [""] if extra else [])


# What a `result tlb_NAME` line keeps of the model's report, and of the
# benchmark's own metrics (its time: under TCG it does not depend on the
# TLB, which is why the model is there).
TLB_METRICS = ["itlb_access", "itlb_miss", "dtlb_access", "dtlb_miss", "l2_miss", "faulted"]
TLB_TIMES = ["ns_per_iter", "ns_per_page", "ns", "text_64k_aligned", "text_cont"]


def tlb_lines(name, console, extra):
    """`result tlb_NAME ...` lines: the Nth result line of CONSOLE joined
    with the TLB model's window N. Raises ValueError if they do not pair."""
    results = [pairs for _, pairs in records(console)]
    marks = {}
    for line in open(console, errors="replace"):
        words = line.split()
        if len(words) > 1 and words[0] == "tlb:" and words[1].startswith("mark="):
            marks[int(words[1][5:])] = dict(w.split("=", 1) for w in words[2:] if "=" in w)
    if len(results) != len(marks):
        raise ValueError(f"{console}: {len(results)} result lines, {len(marks)} TLB windows")
    out = []
    for n, pairs in enumerate(results, 1):
        got = dict(pairs)
        words = list(extra) + [f"{k}={v}" for k, v in pairs if k in SETTINGS]
        words += [f"{m}={marks[n][m]}" for m in TLB_METRICS]
        words += [f"{m}={got[m]}" for m in TLB_TIMES if m in got]
        out.append(f"result tlb_{name} " + " ".join(words))
    return out


def main(argv):
    if len(argv) >= 4 and argv[1] == "--tlb":
        try:
            print("\n".join(tlb_lines(argv[2], argv[3], argv[4:])))
        except (OSError, ValueError, KeyError) as e:
            print(f"benchtable: --tlb: {e}", file=sys.stderr)
            return 1
        return 0
    if len(argv) not in (4, 5):
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    log, csv, kernel = argv[1:4]
    rows = tidy(records(log), kernel)
    write_csv(csv, rows)
    linux = read_csv(argv[4]) if len(argv) == 5 and kernel == "faultline" else []
    print("\n".join([""] + tables(rows, linux)))
    print(f"bench: results in {csv} (console log in {log})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
