#!/usr/bin/env python3
"""Puts a fresh gdb session into docs/gdb.md: each fenced block of the
document that begins at a prompt, `(gdb) `, gets the same commands'
output from TRANSCRIPT (what `scripts/gdb-test.sh --transcript` prints),
so the prose between the blocks stays as written.

    fill-transcript.py DOC TRANSCRIPT
"""
import re
import sys


def main(doc_path, transcript_path):
    chunks = []  # one per command: its prompt line and its output
    for line in open(transcript_path).read().rstrip("\n").split("\n"):
        if line.startswith("(gdb) "):
            chunks.append([line])
        elif chunks:
            chunks[-1].append(line)
    doc = open(doc_path).read()
    used = 0

    def fill(match):
        nonlocal used
        commands = [line for line in match.group(1).splitlines() if line.startswith("(gdb) ")]
        lines = []
        for command in commands:
            if used >= len(chunks) or chunks[used][0] != command:
                sys.exit(f"fill-transcript.py: the transcript has no {command!r} here")
            lines += chunks[used]
            used += 1
        return "```\n" + "\n".join(lines) + "\n```"

    doc = re.sub(r"^```\n((?:\(gdb\) ).*?)^```", fill, doc, flags=re.S | re.M)
    if used != len(chunks):
        sys.exit("fill-transcript.py: the transcript has more commands than the document")
    open(doc_path, "w").write(doc)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(*sys.argv[1:])
