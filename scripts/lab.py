#!/usr/bin/env python3
"""faultline's labs (labs/NAME/): set one up, grade it, and check that
none has rotted.

    scripts/lab.py list                 the labs, in course order
    scripts/lab.py start NAME [DIR]     `make lab LAB=NAME`: a git worktree
                                        (default ../faultline-lab-NAME) on a
                                        new branch lab/NAME whose first
                                        commit is the lab's starting point
    scripts/lab.py grade [NAME]         `make grade`: run the lab's checks
                                        against this tree (NAME defaults to
                                        the lab this tree was started for)
    scripts/lab.py selfcheck [NAME...]  `make test`'s labs stage: on each
                                        lab's starting point its grader must
                                        fail, on this tree it must pass

A lab is a folder with three files:
  README.md   the handout; its first line is `# Lab NAME: what it builds`
  start.patch the starting point: `git diff` output that, applied to the
              tree, replaces the lab's mechanism with a stub (the naive
              version wherever the kernel must still run without it)
  checks      the grader: one check a line, `NAME | KIND | ARGS`, where
              KIND is one of
                host   a host unit test of kernel/pure, by its full path
                ktest  in-kernel tests whose names contain ARGS
                user   `BIN TEST`: /bin/tests/BIN --run TEST
                glibc  `PROG`: every test of the static glibc program
                       build/ctests/PROG, which make test-linux runs on
                       Linux 6.12 too
                bench  `CMDLINE => KEY=VALUE ...`: boots with CMDLINE
                       (under --icount) and checks the result line
The course order is labs/ORDER.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LABS = os.path.join(ROOT, "labs")
KERNEL = "target/aarch64-unknown-none-softfloat/release/faultline"
# A worktree made by `start` names its lab here.
MARKER = ".lab"


def labs():
    """The labs in course order (labs/ORDER), each a folder of labs/."""
    with open(os.path.join(LABS, "ORDER")) as f:
        names = [line.split("#")[0].strip() for line in f]
    return [n for n in names if n]


def title(name):
    with open(os.path.join(LABS, name, "README.md")) as f:
        first = f.readline().strip()
    return re.sub(r"^# Lab [^:]*: *", "", first)


def checks(name):
    """[(check name, kind, args)] from labs/NAME/checks."""
    out = []
    with open(os.path.join(LABS, name, "checks")) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = [p.strip() for p in line.split("|")]
            if len(parts) != 3 or parts[1] not in ("host", "ktest", "user", "glibc", "bench"):
                sys.exit(f"labs/{name}/checks: bad line: {line}")
            out.append(tuple(parts))
    return out


def die(msg):
    print(msg, file=sys.stderr)
    sys.exit(2)


def unknown(name):
    die(f"lab: no lab named {name!r}. The labs are:\n"
        + "\n".join(f"  {n:14} {title(n)}" for n in labs()))


def git(*args, cwd=ROOT, check=True):
    return subprocess.run(["git", *args], cwd=cwd, check=check,
                          capture_output=True, text=True)


def cmd_list():
    print("The labs, in course order (make lab LAB=NAME sets one up):")
    for n in labs():
        print(f"  {n:14} {title(n)}")


def cmd_start(name, where=None):
    if name not in labs():
        unknown(name)
    dirty = git("status", "--porcelain", "--untracked-files=no").stdout
    if dirty:
        die("lab: this tree has uncommitted changes; a lab starts from a "
            "commit. Commit or stash them first (git stash), then run "
            f"make lab LAB={name} again.")
    where = os.path.abspath(where or os.path.join(ROOT, "..", f"faultline-lab-{name}"))
    branch = f"lab/{name}"
    if os.path.exists(where):
        die(f"lab: {where} exists already: your work on this lab may be "
            f"there (cd {where}). To start over, remove it first:\n"
            f"  git worktree remove --force {where} && git branch -D {branch}")
    if git("rev-parse", "--verify", "--quiet", branch, check=False).returncode == 0:
        die(f"lab: branch {branch} exists already (an earlier start of this "
            f"lab). To start over: git branch -D {branch}")
    git("worktree", "add", "-q", "-b", branch, where, "HEAD")
    patch = os.path.join(LABS, name, "start.patch")
    applied = git("apply", "--index", patch, cwd=where, check=False)
    if applied.returncode != 0:
        git("worktree", "remove", "--force", where, check=False)
        git("branch", "-D", branch, check=False)
        die(f"lab: labs/{name}/start.patch no longer applies:\n{applied.stderr}")
    with open(os.path.join(where, MARKER), "w") as f:
        f.write(name + "\n")
    git("add", "-f", MARKER, cwd=where)
    git("-c", "user.name=faultline labs", "-c", "user.email=labs@faultline",
        "commit", "-q", "-m", f"lab {name}: the starting point", cwd=where)
    print(f"lab {name}: set up in {where}, on branch {branch}, its first commit\n"
          f"the starting point (git show there shows what it took out).\n"
          f"Next:\n  cd {where}\n  read labs/{name}/README.md\n"
          f"  make grade        (builds, then runs the lab's checks)")


def run(cmd, cwd, timeout):
    try:
        p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired as e:
        out = e.stdout or ""
        return 124, out.decode(errors="replace") if isinstance(out, bytes) else out


def qemu(kernel, extra, timeout=60):
    """Boots `kernel` with this tree's initrd; (exit status, console)."""
    return run(["./qemu-run.sh", "--kernel", kernel, "--smp", "2", "--mem", "512M",
                "--timeout", str(timeout), *extra], ROOT, timeout + 30)


def check_one(kind, args, kernel, src, target_dir):
    """Runs one check: (passed, a line of why when it did not)."""
    if kind == "host":
        env = dict(os.environ)
        if target_dir:
            env["CARGO_TARGET_DIR"] = target_dir
        p = subprocess.run(["cargo", "test", "-q", "-p", "faultline-pure", "--", "--exact", args],
                           cwd=src, capture_output=True, text=True, env=env)
        out = p.stdout + p.stderr
        ok = p.returncode == 0 and re.search(r"test result: ok\. 1 passed", out)
        why = next((l for l in out.splitlines() if "panicked" in l or "error" in l), "")
        return bool(ok), why.strip()[:160]
    if kind == "ktest":
        rc, out = qemu(kernel, ["--append", f"ktest={args}"])
        ok = rc == 0 and re.search(r"^[1-9][0-9]* passed, 0 failed", out, re.M)
        bad = [l for l in out.splitlines() if l.startswith("ktest ") and "FAILED" in l]
        return bool(ok), (bad[0] if bad else f"exit {rc}")[:160]
    if kind == "user":
        binary, test = args.split()
        rc, out = qemu(kernel, ["--run", f"/bin/tests/{binary} --run {test}"])
        ok = rc == 0 and f"::{test} ... ok" in out
        bad = [l for l in out.splitlines() if test in l and "FAILED" in l]
        return ok, (bad[0] if bad else f"exit {rc}")[:160]
    if kind == "glibc":
        rc, out = qemu(kernel, ["--add", f"build/ctests/{args}", "--run", f"/bin/{args}"])
        ok = rc == 0 and re.search(r"^[1-9][0-9]* passed, 0 failed", out, re.M)
        bad = [l for l in out.splitlines() if l.startswith("glibc ") and "FAILED" in l]
        return bool(ok), (bad[0] if bad else f"exit {rc}")[:160]
    cmdline, want = (s.strip() for s in args.split("=>"))
    rc, out = qemu(kernel, ["--icount", "--append", cmdline], timeout=300)
    results = [l for l in out.splitlines() if l.startswith("result ")]
    if rc != 0 or not results:
        return False, f"exit {rc}, no result line"
    got = dict(kv.split("=", 1) for kv in results[-1].split()[2:] if "=" in kv)
    wrong = [f"{k}={got.get(k, '?')} (want {v})"
             for k, v in (kv.split("=", 1) for kv in want.split()) if got.get(k) != v]
    return not wrong, ", ".join(wrong)


def grade(name, kernel, src=ROOT, target_dir=None, show="all"):
    """Runs lab NAME's checks against `kernel` (host tests from `src`);
    prints each check (`show` "all"), only those that fail ("failures") or
    none ("none"), then the score; returns (passed, total)."""
    todo = checks(name)
    passed = 0
    for check, kind, args in todo:
        ok, why = check_one(kind, args, kernel, src, target_dir)
        passed += ok
        if show == "all" or show == "failures" and not ok:
            line = f"  {'ok    ' if ok else 'FAILED'}  {check}"
            print(line + (f": {why}" if why and not ok else ""), flush=True)
    if show != "none":
        print(f"lab {name}: {passed}/{len(todo)} checks passed", flush=True)
    return passed, len(todo)


def cmd_grade(name=None):
    if name is None:
        marker = os.path.join(ROOT, MARKER)
        if not os.path.exists(marker):
            die("grade: this tree was not set up by make lab; name the lab: "
                "make grade LAB=NAME (make lab lists them)")
        with open(marker) as f:
            name = f.read().strip()
    if name not in labs():
        unknown(name)
    print(f"lab {name}: {title(name)}")
    passed, total = grade(name, KERNEL)
    sys.exit(0 if passed == total else 1)


def cmd_selfcheck(names):
    """For each lab: its starting point builds and fails its grader; this
    tree passes it. Prints one `labs: ...` line per verdict."""
    failures = 0
    target_dir = os.path.join(ROOT, "target", "labs")
    for name in names or labs():
        if name not in labs():
            unknown(name)
        tmp = tempfile.mkdtemp(prefix=f"faultline-lab-{name}-")
        try:
            git("worktree", "add", "-q", "--detach", tmp, "HEAD")
            applied = git("apply", os.path.join(LABS, name, "start.patch"), cwd=tmp, check=False)
            # A stub may leave helpers unused: its warnings are the lab's
            # hints, not this check's news.
            build = subprocess.run(
                ["cargo", "build", "-q", "-p", "faultline-kernel",
                 "--target", "aarch64-unknown-none-softfloat", "--release"],
                cwd=tmp, env=dict(os.environ, CARGO_TARGET_DIR=target_dir),
                capture_output=True, text=True) if applied.returncode == 0 else None
            built = build is not None and build.returncode == 0
            if not built:
                why = "start.patch does not apply" if applied.returncode else "does not build"
                print((applied.stderr if build is None else build.stderr)[-2000:])
                print(f"labs: {name}: starting point builds ... FAILED: {why}")
                failures += 1
                continue
            print(f"labs: {name}: starting point builds ... ok")
            stub_kernel = os.path.join(target_dir, "aarch64-unknown-none-softfloat/release/faultline")
            # The starting point fails checks by design: only its score.
            passed, total = grade(name, stub_kernel, src=tmp, target_dir=target_dir, show="none")
            verdict = "ok" if passed < total else "FAILED: the grader passes the stub"
            print(f"labs: {name}: grader fails the starting point ({passed}/{total}) ... {verdict}")
            failures += passed == total
            passed, total = grade(name, KERNEL, show="failures")
            verdict = "ok" if passed == total else "FAILED"
            print(f"labs: {name}: grader passes the solution ({passed}/{total}) ... {verdict}")
            failures += passed != total
        finally:
            git("worktree", "remove", "--force", tmp, check=False)
            shutil.rmtree(tmp, ignore_errors=True)
    sys.exit(1 if failures else 0)


def main():
    args = sys.argv[1:]
    if not args or args[0] in ("-h", "--help"):
        print(__doc__)
        return
    cmd, rest = args[0], args[1:]
    if cmd == "list":
        cmd_list()
    elif cmd == "start" and len(rest) in (1, 2):
        cmd_start(*rest)
    elif cmd == "grade" and len(rest) <= 1:
        cmd_grade(*rest)
    elif cmd == "selfcheck":
        cmd_selfcheck(rest)
    else:
        die(__doc__)


if __name__ == "__main__":
    main()
