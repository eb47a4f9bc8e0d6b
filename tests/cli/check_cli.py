#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""check_cli.py NAME COMMAND...: the command-line contract of every libxfer program
(tools/common/cli.h, docs/tools.md), without an MPI launcher:

- `--help` exits 0 and prints a usage text to stdout;
- `--version` exits 0 and prints "NAME (libxfer X.Y.Z, MPI flavour F)" to stdout;
- an unknown option exits 2, saying "unknown option --no-such-option" on stderr (programs
  that take a command first are given one with --command);
- `--help` given a value ("--help=x") exits 2 too (a value where none goes).
"""
import re
import subprocess
import sys


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60, errors="replace")


def main():
    args = sys.argv[1:]
    first = []
    if args and args[0] == "--command":
        first = [args[1]]
        args = args[2:]
    name, cmd = args[0], args[1:]
    fails = []
    r = run(cmd + ["--help"])
    if r.returncode != 0 or "usage" not in r.stdout.lower():
        fails.append(f"--help: exit {r.returncode}, stdout {r.stdout[:200]!r}")
    r = run(cmd + ["--version"])
    if r.returncode != 0 or not re.fullmatch(re.escape(name) + r" \(libxfer \S+, MPI flavour \w+\)\n",
                                             r.stdout):
        fails.append(f"--version: exit {r.returncode}, stdout {r.stdout!r}")
    r = run(cmd + first + ["--no-such-option"])
    if r.returncode != 2 or "--no-such-option" not in r.stderr:
        fails.append(f"an unknown option: exit {r.returncode}, stderr {r.stderr[:300]!r}")
    r = run(cmd + ["--help=x"])
    if r.returncode != 2:
        fails.append(f"--help=x: exit {r.returncode}, stderr {r.stderr[:300]!r}")
    for f in fails:
        print(f"check_cli.py: {name}: FAILED: {f}")
    if not fails:
        print(f"check_cli.py: {name}: --help, --version, usage errors: ok")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
