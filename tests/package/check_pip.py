# SPDX-License-Identifier: BSD-3-Clause
"""The Python package installed with pip against an installed libxfer, as docs/bindings.md says:

    check_pip.py --cmake CMAKE --build BUILD --package bindings/python --work DIR
                 --mpiexec MPIEXEC [--preflags "a b"]

libxfer is installed into DIR/prefix; a venv with --system-site-packages (numpy from the
system) gets `python -m pip install --no-index bindings/python` with
PKG_CONFIG_PATH=DIR/prefix/lib/pkgconfig (--no-index: nothing may be downloaded). Then
`python -m xfer info` must name the venv's xfer and the prefix's libxfer, and 2 ranks of
pyconsumer.py --mpi must exchange data. The package folder must stay clean (no build/, no
egg-info). Exit 77 (skipped) when pip, setuptools, wheel or venv is missing, naming the Debian
package.
"""
import argparse
import glob
import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys

SKIP = 77


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kw)
    if r.returncode != 0:
        sys.exit(f"check_pip: {' '.join(map(str, cmd))} failed ({r.returncode}):\n"
                 f"{r.stdout}\n{r.stderr}")
    return r.stdout


def main():
    ap = argparse.ArgumentParser()
    for a in ("--cmake", "--build", "--package", "--work", "--mpiexec"):
        ap.add_argument(a, required=True)
    ap.add_argument("--preflags", default="")
    a = ap.parse_args()

    for mod, deb in (("pip", "python3-pip"), ("setuptools", "python3-setuptools"),
                     ("wheel", "python3-wheel"), ("ensurepip", "python3-venv")):
        if importlib.util.find_spec(mod) is None:
            print(f"check_pip: skipped: {sys.executable} has no {mod} "
                  f"(Debian: apt-get install {deb})")
            return SKIP

    work = os.path.abspath(a.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    prefix = os.path.join(work, "prefix")
    run([a.cmake, "--install", a.build, "--prefix", prefix])
    lib = glob.glob(os.path.join(prefix, "lib*", "libxfer.so.*"))
    pcdir = glob.glob(os.path.join(prefix, "lib*", "pkgconfig"))
    if not lib or not pcdir:
        sys.exit(f"check_pip: no libxfer.so or pkgconfig folder under {prefix}")
    libdir = os.path.dirname(lib[0])

    venv = os.path.join(work, "venv")
    run([sys.executable, "-m", "venv", "--system-site-packages", venv])
    py = os.path.join(venv, "bin", "python")
    env = dict(os.environ, PKG_CONFIG_PATH=pcdir[0])
    env.pop("PYTHONPATH", None)  # the venv's xfer, not a build tree's
    run([py, "-m", "pip", "install", "--no-index", a.package], env=env, cwd=work)
    left = [p for p in os.listdir(a.package) if p == "build" or p.endswith(".egg-info")]
    if left:
        sys.exit(f"check_pip: pip left {', '.join(left)} in {a.package}")

    out = run([py, "-m", "xfer", "info"], env=env, cwd=work)
    print(out.split("\nalgorithms")[0])
    site = os.path.join(venv, "lib")
    want = [rf"^xfer \S+ from {re.escape(site)}/python3\.\d+/site-packages/xfer ",
            rf"^libxfer \S+ \(\w+\) loaded from {re.escape(libdir)}/libxfer\.so",
            r"^MPI library: \S"]
    for w in want:
        if not re.search(w, out, re.M):
            sys.exit(f"check_pip: python -m xfer info: expected /{w}/")

    cons = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pyconsumer.py")
    out = run([a.mpiexec, *shlex.split(a.preflags), "-n", "2", py, cons, "--mpi"], env=env,
              cwd=work)
    print(out.strip())
    if f"xfer from {site}/" not in out or "allgather_inter on 2 ranks: ok" not in out:
        sys.exit("check_pip: pyconsumer.py --mpi: the venv's xfer did not exchange the data")
    return 0


if __name__ == "__main__":
    sys.exit(main())
