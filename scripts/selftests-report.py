#!/usr/bin/env python3
"""make selftests' report: Linux 6.12's results beside faultline's.

    selftests-report.py LIST LINUX.LOG FAULTLINE.LOG [REGEX]

Each log holds, per test, `selftest-start NAME`, the program's output and
`selftest NAME exit N` (user/selftests/run.sh). A program passes when it
exits 0 and skips when it exits 4 (KSFT_SKIP). Within a program, the KTAP
lines `ok N desc` and `not ok N desc` are its subtests: the report counts
those that pass (`# SKIP` ones apart) and names every subtest that passes
on Linux and not on faultline, so a program that fails on both still shows
what faultline lacks. Exit status 0.
"""

import re
import sys

KTAP = re.compile(r"^(not )?ok \d+ (.*?)\s*$")


def parse(path):
    """{name: (exit status or None, {subtest: 'pass'|'fail'|'skip'})}"""
    tests = {}
    name = None
    subs = {}
    try:
        lines = open(path, errors="replace").read().splitlines()
    except FileNotFoundError:
        return tests
    for line in lines:
        line = line.rstrip("\r")
        if line.startswith("selftest-start "):
            name, subs = line[len("selftest-start "):], {}
            tests[name] = (None, subs)
            continue
        m = re.match(r"^selftest (.*) exit (\d+)$", line)
        if m:
            tests[m.group(1)] = (int(m.group(2)), subs)
            name = None
            continue
        m = KTAP.match(line)
        if name and m:
            desc = m.group(2)
            if "# SKIP" in desc or "# skip" in desc:
                state = "skip"
            else:
                state = "fail" if m.group(1) else "pass"
            desc = re.sub(r"\s*#\s*(SKIP|skip).*$", "", desc)
            # Repeated descriptions stay apart by their order.
            key, n = desc, 2
            while key in subs:
                key, n = f"{desc} [{n}]", n + 1
            subs[key] = state
    return tests


def verdict(status):
    if status is None:
        return "none"
    return {0: "pass", 4: "skip"}.get(status, f"fail({status})")


def main():
    listfile, linux_log, faultline_log = sys.argv[1:4]
    only = re.compile(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[4] else None
    linux, faultline = parse(linux_log), parse(faultline_log)
    counts = {"both": 0, "linux": 0, "faultline": 0, "neither": 0}
    lost = []
    for line in open(listfile):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if only and not only.search(line.split()[0]):
            continue
        ls, lsub = linux.get(line, (None, {}))
        fs, fsub = faultline.get(line, (None, {}))
        lv, fv = verdict(ls), verdict(fs)

        def subcount(subs):
            run = [s for s in subs.values() if s != "skip"]
            return f"{sum(s == 'pass' for s in run)}/{len(run)}" if run else ""

        print(f"selftest {line:<50} linux={lv:<9}{subcount(lsub):>8}  "
              f"faultline={fv:<9}{subcount(fsub):>8}")
        if lv == "pass" and fv == "pass":
            counts["both"] += 1
        elif lv == "pass":
            counts["linux"] += 1
        elif fv == "pass":
            counts["faultline"] += 1
        else:
            counts["neither"] += 1
        for sub, state in lsub.items():
            if state == "pass" and fsub.get(sub) != "pass":
                lost.append(f"{line}: {sub} ({fsub.get(sub, 'not run')})")
        if lv == "pass" and fv != "pass":
            lost.append(f"{line}: the program ({fv})")
    print(f"selftests: {counts['both']} pass on both, {counts['linux']} on Linux 6.12 only, "
          f"{counts['faultline']} on faultline only, {counts['neither']} on neither")
    if lost:
        print(f"selftests: {len(lost)} pass on Linux 6.12 and not on faultline:")
        for x in lost:
            print(f"  {x}")


if __name__ == "__main__":
    main()
