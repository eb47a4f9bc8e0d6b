#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""expect_fail.py --within SECONDS --contains TEXT -- COMMAND...

Run COMMAND; pass when it exits non-zero within SECONDS with TEXT in its output (stdout and
stderr together), fail otherwise (a hang is killed at SECONDS and fails)."""
import subprocess
import sys
import time


def main():
    args = sys.argv[1:]
    sep = args.index("--")
    opts, cmd = args[:sep], args[sep + 1:]
    within = float(opts[opts.index("--within") + 1])
    contains = opts[opts.index("--contains") + 1]
    t0 = time.monotonic()
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           errors="replace", timeout=within)
    except subprocess.TimeoutExpired as e:
        print(e.output or "")
        print(f"expect_fail.py: FAILED: still running after {within} s")
        return 1
    took = time.monotonic() - t0
    print(r.stdout)
    if r.returncode == 0:
        print("expect_fail.py: FAILED: the command succeeded")
        return 1
    if contains not in r.stdout:
        print(f"expect_fail.py: FAILED: {contains!r} not in the output")
        return 1
    print(f"expect_fail.py: ok: exit status {r.returncode} after {took:.1f} s, {contains!r} seen")
    return 0


if __name__ == "__main__":
    sys.exit(main())
