#!/usr/bin/env python3
"""Keeps the book true: every path, `file:line`, function, command and
/proc, /sys or /dev file that README.md and docs/ name must exist.

    check-docs.py                  the static checks, one line each
    check-docs.py --boot           also boots faultline and checks the
                                   /proc, /sys and /dev files the docs name
    check-docs.py --functions ELF  prints the kernel functions the docs name
                                   whose name is one function's in ELF
                                   (scripts/gdb-test.sh checks `break NAME`;
                                   a name several functions share needs
                                   its path in gdb, as docs/gdb.md says)
    check-docs.py --verify-linux DIR
                                   checks docs/linux-names.txt against a
                                   Linux source tree (Linux 6.12's)

What counts, in a doc's `code spans`, links and command lines:
- a link must reach a file, and a `#anchor` a heading in it;
- a repository path (with a `/` or a source file's extension) must be a
  file or folder of the repository, found as written, under kernel/src/,
  kernel/, user/, scripts/ or tools/, or as the tail of one path; with
  `:LINE`, the file must have that line;
- an identifier with `_` or `::` or `()` (a function, a knob, a constant)
  must be a word of faultline's sources, or one of Linux's names the
  docs borrow, listed in docs/linux-names.txt (kept true against a
  Linux tree by --verify-linux);
- `make TARGET` must be a Makefile target, `./qemu-run.sh --OPTION` one
  of its options, `scripts/X` a file;
- /proc, /sys and /dev files (with PID read as `self`) must exist on a
  booted faultline (--boot);
- a fenced block after `<!-- rerun -->` is a transcript: each `$ `
  line, a `./qemu-run.sh` command, is run again (--boot), and the lines
  under it must appear in its output, in order (`...` stands for any
  text).
Prints `docs: <check> ... ok|FAILED`, with each problem under a failure.
"""
import os
import re
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE_EXT = (".rs", ".S", ".c", ".h", ".py", ".sh", ".toml", ".ld", ".md", ".svg", ".csv", ".txt", ".json")
SEARCH = ("", "kernel/src/", "kernel/", "user/", "scripts/", "tools/", "docs/")
GENERATED = ("build/", "target/", "labs/")
CODE_EXT = (".rs", ".S", ".c", ".h", ".py", ".sh", ".toml", ".ld", ".txt", ".list", ".cfg")
IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)*(\(\))?$")
PATHLIKE = re.compile(r"^[A-Za-z0-9_.\-/]+(:\d+(-\d+)?)?$")
RUNTIME = re.compile(r"^/(proc|sys|dev)(/[A-Za-z0-9_.\-]+)*$")
# The tail of a /proc or /sys path, written short once the text has said
# where it is (`transparent_hugepage/enabled`, `fd/N`).
RUNTIME_RELATIVE = re.compile(r"^(transparent_hugepage|hugepages-[0-9]+kB|sys|fd|task|map_files|stats)/")


def git_files():
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [f for f in out.splitlines() if os.path.exists(os.path.join(ROOT, f))]


def docs():
    found = ["README.md", "user/README.md"] + sorted(f"docs/{f}" for f in os.listdir(os.path.join(ROOT, "docs"))
                                   if f.endswith((".md", ".svg")))
    labs = os.path.join(ROOT, "labs")
    if os.path.isdir(labs):
        found += sorted(f"labs/{d}/README.md" for d in os.listdir(labs)
                        if os.path.exists(os.path.join(labs, d, "README.md")))
    return found


def spans(text):
    """Code spans (a span may wrap a line) and indented or fenced code."""
    text_no_fences = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    inline = [re.sub(r"\s+", " ", s).strip() for s in re.findall(r"`([^`]+)`", text_no_fences)]
    blocks = re.findall(r"^```[^\n]*\n(.*?)^```", text, flags=re.S | re.M)
    indented = [line[4:] for line in text.splitlines() if line.startswith("    ") and line.strip()]
    lines = [line for block in blocks for line in block.splitlines()] + indented
    return inline, lines


def slug(heading):
    s = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return s.replace(" ", "-")


class Checker:
    def __init__(self):
        self.files = git_files()
        self.fileset = set(self.files)
        self.dirs = {os.path.dirname(f) for f in self.files}
        for d in list(self.dirs):
            while d:
                d = os.path.dirname(d)
                self.dirs.add(d)
        self.words = set()
        self.kernel_fns = set()
        for f in self.files:
            if f.startswith("docs/") or f.endswith("README.md"):
                continue
            name = os.path.basename(f)
            if not (f.endswith(CODE_EXT) or name in ("Makefile", "qemu-run.sh", "run")):
                continue
            try:
                text = open(os.path.join(ROOT, f), errors="replace").read()
            except OSError:
                continue
            self.words.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))
            if f.startswith("kernel/src/") and f.endswith(".rs") and name != "tests.rs":
                # The kernel's own functions: not its host tests.
                kernel = text.split("#[cfg(test)]", 1)[0]
                self.kernel_fns.update(re.findall(r"\bfn ([a-z_][a-z0-9_]*)", kernel))
        linux = os.path.join(ROOT, "docs/linux-names.txt")
        self.linux = {line.split()[0] for line in open(linux) if line.strip() and not line.startswith("#")}
        makefile = open(os.path.join(ROOT, "Makefile")).read()
        self.targets = set(re.findall(r"^([a-z][a-z0-9-]*):", makefile, re.M))
        qemu_run = open(os.path.join(ROOT, "qemu-run.sh")).read()
        self.qemu_opts = set(re.findall(r"^\s+(--[a-z0-9-]+)(?:\|[^)]*)?\)", qemu_run, re.M)) | {"--help"}
        self.problems = {}
        self.named_functions = set()
        self.runtime = set()
        self.transcripts = []

    def problem(self, check, doc, what):
        self.problems.setdefault(check, []).append(f"{doc}: {what}")

    def resolve(self, path):
        path = path.rstrip("/")
        for prefix in SEARCH:
            p = prefix + path
            if p in self.fileset or p in self.dirs:
                return p
        tails = [f for f in self.files if f.endswith("/" + path)]
        return tails[0] if tails else None

    def path(self, doc, token):
        m = re.match(r"^(.*?)(?::(\d+)(?:-(\d+))?)?$", token)
        path, line = m.group(1), m.group(3) or m.group(2)
        path = path[2:] if path.startswith("./") else path
        if path.startswith(GENERATED) or path in self.linux or RUNTIME_RELATIVE.match(path):
            return
        found = self.resolve(path)
        if found is None:
            self.problem("paths_exist", doc, path)
        elif line and found in self.fileset:
            n = sum(1 for _ in open(os.path.join(ROOT, found), errors="replace"))
            if int(line) > n:
                self.problem("file_lines_exist", doc, f"{token} ({found} has {n} lines)")

    def ident(self, doc, token):
        name = token[:-2] if token.endswith("()") else token
        parts = name.split("::")
        last = parts[-1]
        if token in self.linux or name in self.linux:
            return
        if all(p in self.words for p in parts if p not in ("self", "crate")):
            if last in self.kernel_fns:
                self.named_functions.add(last)
            return
        self.problem("names_exist_in_the_sources_or_linux", doc, token)

    def command(self, doc, line):
        line = line.split("#", 1)[0].strip()
        line = re.sub(r"^\$ ", "", line)
        words = line.split()
        if not words:
            return
        if words[0] == "make" and len(words) > 1:
            for w in words[1:]:
                if "=" in w or w.startswith("-"):
                    continue
                if w not in self.targets:
                    self.problem("commands_exist", doc, f"make {w}")
                break
        elif words[0] == "./qemu-run.sh":
            # Quoted arguments (a kernel command line) are not options.
            try:
                words = shlex.split(line)
            except ValueError:
                pass
            for w in words[1:]:
                if w.startswith("--") and " " not in w and w not in self.qemu_opts:
                    self.problem("commands_exist", doc, f"./qemu-run.sh {w}")
        elif words[0].startswith("scripts/") and self.resolve(words[0]) is None:
            self.problem("commands_exist", doc, words[0])

    def doc(self, doc):
        text = open(os.path.join(ROOT, doc), errors="replace").read()
        base = os.path.dirname(doc)
        if doc.endswith(".svg"):
            for t in re.findall(r">([^<>]+)<", text):
                for token in re.findall(r"[A-Za-z0-9_./]+\.(?:rs|S)\b|[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*", t):
                    if token.endswith((".rs", ".S")):
                        self.path(doc, token)
                    elif "_" in token or "::" in token:
                        self.ident(doc, token)
            return
        for target, anchor in re.findall(r"\]\(([^)#\s]*)(#[^)\s]*)?\)", text):
            if target.startswith(("http://", "https://", "mailto:")):
                continue
            path = os.path.normpath(os.path.join(base, target)) if target else doc
            if not os.path.exists(os.path.join(ROOT, path)):
                self.problem("links_reach_files", doc, target)
                continue
            if anchor and path.endswith(".md"):
                heads = [slug(h) for h in re.findall(r"^#+ (.*)$", open(os.path.join(ROOT, path)).read(), re.M)]
                if anchor[1:] not in heads:
                    self.problem("links_reach_headings", doc, f"{target}{anchor}")
        for block in re.findall(r"^<!-- rerun -->\n```[^\n]*\n(.*?)^```", text, flags=re.S | re.M):
            self.transcripts.append((doc, block))
        inline, lines = spans(text)
        for line in lines:
            self.command(doc, line)
        for span in inline:
            token = span.strip().rstrip(".,;:")
            if " " in token:
                self.command(doc, token)
                continue
            if RUNTIME.match(token.replace("/PID/", "/self/").replace("PID", "self")):
                self.runtime.add(token.replace("/PID/", "/self/"))
            elif token.startswith("/"):
                continue
            elif PATHLIKE.match(token) and ("/" in token or token.split(":")[0].endswith(SOURCE_EXT)):
                self.path(doc, token)
            elif IDENT.match(token) and ("_" in token or "::" in token or token.endswith("()")):
                self.ident(doc, token)

    def run(self):
        for doc in docs():
            if doc != "docs/bench.svg":  # drawn by tools/benchplot from docs/bench.csv
                self.doc(doc)
        self.switches()

    def switches(self):
        """docs/seeds.md names each row of kernel/src/switches.rs as the
        table does: `NAME=OFF` and `/sys/kernel/mm/FILE`."""
        table = open(os.path.join(ROOT, "kernel/src/switches.rs")).read()
        rows = re.findall(r'cmdline: "([^"]+)",\s*off: "([^"]+)",\s*sysfs: "([^"]+)"', table)
        if len(rows) < 3:
            self.problem("switches_named_as_switches_rs_says", "kernel/src/switches.rs", f"only {len(rows)} rows read")
        seeds = open(os.path.join(ROOT, "docs/seeds.md")).read()
        for name, off, sysfs in rows:
            for want in (f"`{name}={off}`", f"`/sys/kernel/mm/{sysfs}`"):
                if want not in seeds:
                    self.problem("switches_named_as_switches_rs_says", "docs/seeds.md", f"no {want}")


def boot_check(checker):
    """The /proc, /sys and /dev files on a booted faultline (busybox sh)."""
    # A placeholder in capitals (`/dev/fd/N`, `/proc/PID/task/TID`) is not a file.
    paths = sorted(p for p in checker.runtime
                   if "<" not in p and not any(re.fullmatch(r"[A-Z][A-Z_-]*", seg) for seg in p.split("/")))
    script = os.path.join(ROOT, "build", "check-docs-files.sh")
    with open(script, "w") as f:
        f.write("for p in " + " ".join(paths) + "; do [ -e \"$p\" ] || echo \"missing: $p\"; done\n")
        f.write("echo check-docs: done\n")
    out = subprocess.run(["./qemu-run.sh", "--timeout", "120", "--add", "build/busybox", "--add", script,
                          "--run", "/bin/busybox sh /bin/check-docs-files.sh"],
                         cwd=ROOT, capture_output=True, text=True).stdout
    if "check-docs: done" not in out:
        checker.problem("proc_sys_dev_files_exist_on_faultline", "boot", "the boot did not finish: " + out[-500:])
    for line in out.splitlines():
        if line.startswith("missing: "):
            checker.problem("proc_sys_dev_files_exist_on_faultline", "docs", line[9:].strip())


def rerun(checker):
    """The marked transcripts, each command run again."""
    for doc, block in checker.transcripts:
        steps = []
        for line in block.splitlines():
            if line.startswith("$ "):
                steps.append((line[2:], []))
            elif steps and line.strip():
                steps[-1][1].append(line)
        for command, expected in steps:
            if not command.startswith("./qemu-run.sh "):
                checker.problem("marked_transcripts_rerun_the_same", doc, f"not a qemu-run.sh command: {command}")
                continue
            out = subprocess.run(["bash", "-c", command + " --timeout 120"], cwd=ROOT,
                                 capture_output=True, text=True).stdout.splitlines()
            at = 0
            for want in expected:
                # `...` stands for any text: a number that moves with every
                # change to the fast path, or the rest of the line.
                pattern = re.compile(".*?".join(re.escape(p) for p in want.rstrip().split("...")) + "$")
                while at < len(out) and not pattern.match(out[at].rstrip()):
                    at += 1
                if at == len(out):
                    checker.problem("marked_transcripts_rerun_the_same", doc, f"{command}: no line {want!r}")
                    break
                at += 1


def verify_linux(tree):
    """Every name in docs/linux-names.txt is a path or a word of Linux's tree."""
    names = [line.split()[0] for line in open(os.path.join(ROOT, "docs/linux-names.txt"))
             if line.strip() and not line.startswith("#")]
    words = set()
    for top, _, files in os.walk(tree):
        for f in files:
            if f.endswith((".c", ".h", ".S", ".rst", ".txt")) or f in ("Makefile", "Kconfig"):
                try:
                    words.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", open(os.path.join(top, f), errors="replace").read()))
                except OSError:
                    pass
    bad = [n for n in names if not (os.path.exists(os.path.join(tree, n.rstrip("()")))
                                     or all(p in words for p in n.rstrip("()").split("::")))]
    for n in bad:
        print(f"not in {tree}: {n}")
    return 1 if bad else 0


def main(argv):
    if len(argv) == 3 and argv[1] == "--verify-linux":
        return verify_linux(argv[2])
    checker = Checker()
    checker.run()
    if len(argv) == 3 and argv[1] == "--functions":
        nm = subprocess.run(["aarch64-linux-gnu-nm", "--defined-only", "-C", argv[2]],
                            capture_output=True, text=True, check=True).stdout
        paths = {}
        for line in nm.splitlines():
            name = line.split(" ", 2)[2]
            if re.match(r"^faultline(::[A-Za-z0-9_]+)+$", name):
                paths.setdefault(name.rsplit("::", 1)[1], set()).add(name)
        print("\n".join(sorted(f for f in checker.named_functions if len(paths.get(f, ())) == 1)))
        return 0
    checks = ["links_reach_files", "links_reach_headings", "paths_exist", "file_lines_exist",
              "names_exist_in_the_sources_or_linux", "commands_exist", "switches_named_as_switches_rs_says"]
    if "--boot" in argv:
        boot_check(checker)
        rerun(checker)
        checks += ["proc_sys_dev_files_exist_on_faultline", "marked_transcripts_rerun_the_same"]
    failed = 0
    for check in checks:
        problems = checker.problems.get(check, [])
        print(f"docs: {check} ... {'FAILED' if problems else 'ok'}")
        for p in sorted(set(problems)):
            print(f"    {p}")
        failed |= bool(problems)
    return failed


if __name__ == "__main__":
    sys.exit(main(sys.argv))
