#!/usr/bin/env python3
"""Runs the CLI examples of a document as written, in a terminal, and compares what a person sees.

    tests/cli/run_examples.py WSFS_BINARY DOC.md

Every ```console block of DOC.md is a session: a line starting with "$ " is a command, the lines
after it (up to the next command or the block's end) are what the terminal shows, stdout and
stderr as they interleave. Each block runs in a fresh empty directory, its commands one after
another in one bash, on a pseudo-terminal (80 columns), with `wsfs` on PATH meaning
WSFS_BINARY. An expected line may hold "..." for any text (an absolute temporary path, a
version). A block whose output says the kernel refuses the overlay view is reported as
skipped, as the Go and Python suites do.

Exit status: 0 when every block shows what the document says, 1 otherwise.
"""

import os
import pty
import re
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import termios
import fcntl
import time

# A block is bounded by time, not by its speed: a command that hangs fails the block.
BLOCK_TIMEOUT_SECS = 120
MARKER = "__wsfs_example_done__"


def blocks(text):
    """The ```console blocks: [(line number, [(command, [expected lines])])]."""
    found, current, start, in_block = [], [], 0, False
    for n, line in enumerate(text.splitlines(), 1):
        if not in_block and line.strip() == "```console":
            in_block, current, start = True, [], n
        elif in_block and line.strip() == "```":
            found.append((start, current))
            in_block = False
        elif in_block and line.startswith("$ "):
            current.append((line[2:], []))
        elif in_block and current:
            current[-1][1].append(line)
    return found


def run_in_pty(script, cwd, env):
    """What a terminal shows while bash runs script (newlines as \\n)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    proc = subprocess.Popen(
        ["bash", "--noprofile", "--norc", "-c", script],
        stdin=slave, stdout=slave, stderr=slave, cwd=cwd, env=env, start_new_session=True,
    )
    os.close(slave)
    out, deadline = b"", time.monotonic() + BLOCK_TIMEOUT_SECS
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            proc.kill()
            out += b"\n[timed out]\n"
            break
        ready, _, _ = select.select([master], [], [], left)
        if not ready:
            continue
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: every writer of the terminal is gone
            break
        if not chunk:
            break
        out += chunk
    proc.wait()
    os.close(master)
    return out.decode("utf-8", "replace").replace("\r\n", "\n")


def plural(n, noun):
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def matches(expected, seen):
    pattern = ".*".join(re.escape(part) for part in expected.split("..."))
    return re.fullmatch(pattern, seen) is not None


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    binary, doc = os.path.abspath(sys.argv[1]), sys.argv[2]
    with open(doc, encoding="utf-8") as f:
        found = blocks(f.read())
    if not found:
        print(f"cli examples: no ```console blocks in {doc}", file=sys.stderr)
        return 1
    bindir = tempfile.mkdtemp(prefix="wsfs-cli-bin-")
    os.symlink(binary, os.path.join(bindir, "wsfs"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TOOL_", "WORKSPACE_FS_", "WSFS_"))}
    env.update(PATH=bindir + os.pathsep + env.get("PATH", ""), TERM="xterm", LC_ALL="C.UTF-8")
    failed = passed = skipped = 0
    try:
        for start, commands in found:
            scratch = tempfile.mkdtemp(prefix="wsfs-cli-")
            env["XDG_STATE_HOME"] = os.path.join(scratch, ".state")
            os.mkdir(os.path.join(scratch, "work"))
            # Each command is followed by a marker line, so the output splits per command; the
            # command's exit status is kept for the next ($? in `echo "exit $?"`).
            script = "".join(f"{cmd}\n__rc=$?; echo {MARKER}; (exit $__rc)\n" for cmd, _ in commands)
            shown = run_in_pty(script, os.path.join(scratch, "work"), env)
            shutil.rmtree(scratch, ignore_errors=True)
            if "overlay_unavailable" in shown:
                skipped += 1
                print(f"cli examples: SKIPPED {doc}:{start}: this kernel refuses the overlay view")
                continue
            parts = shown.split(MARKER + "\n")
            problems = []
            for i, (cmd, want) in enumerate(commands):
                seen = parts[i].rstrip("\n").split("\n") if i < len(parts) and parts[i].strip("\n") else []
                want = [w.rstrip() for w in want]
                while want and not want[-1]:
                    want.pop()
                seen = [s.rstrip() for s in seen]
                if len(seen) != len(want) or not all(matches(w, s) for w, s in zip(want, seen)):
                    problems.append(f"$ {cmd}\n  the document shows:\n" + "".join(f"    {w}\n" for w in want)
                                    + "  the terminal showed:\n" + "".join(f"    {s}\n" for s in seen))
            if problems:
                failed += 1
                print(f"cli examples: FAIL {doc}:{start}\n" + "".join(problems), file=sys.stderr)
            else:
                passed += 1
                print(f"cli examples: ok {doc}:{start} ({plural(len(commands), 'command')})")
    finally:
        shutil.rmtree(bindir, ignore_errors=True)
    print(f"cli examples: {plural(passed, 'block')} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
