# SPDX-License-Identifier: BSD-3-Clause
"""python3 -m xfer info | --version | --help"""
import argparse
import sys

USAGE = "python3 -m xfer [--version] [--help] {info}"


def info() -> int:
    import os
    import xfer
    from xfer import _core
    lib = _core.library()
    print(f"xfer {xfer.__version__} from {os.path.dirname(xfer.__file__)} (built against "
          f"libxfer {_core.LIBXFER_VERSION}, {_core.MPI_FLAVOR})")
    print(f"libxfer {lib['version']} ({lib['mpi_flavor']}) loaded from "
          f"{os.path.normpath(lib['path']) if lib['path'] else 'an unknown file'}")
    mpi = _core.mpi_library_version().strip().splitlines()[0]
    print(f"MPI library: {' '.join(mpi.split())}")
    print(f"numpy {xfer.np.__version__}, Python {sys.version.split()[0]} ({sys.executable})")
    try:
        import mpi4py
        print(f"mpi4py {mpi4py.__version__}: communicators accepted"
              " (when built for the same MPI library)")
    except ImportError:
        print("mpi4py: not installed (xfer.Comm stands in for it)")
    print("\nalgorithms (algorithm= of the collectives, `algorithm:` of a channel):")
    print(f"  {'auto':<12} cheapest candidate under the cost model (default)")
    for a in xfer.algorithms():
        print(f"  {a['name']:<12} {a['summary']}")
        print(f"  {'':<12} restrictions: {a['restrictions']}")
        print(f"  {'':<12} flags: {' '.join(a['flags']) or '-'}")
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python3 -m xfer", usage=USAGE,
                                description="libxfer's Python package: information.")
    p.add_argument("--version", action="store_true", help="print the version and exit")
    p.add_argument("command", nargs="?", choices=["info"],
                   help="info: versions, the libxfer and MPI library loaded, the algorithm registry")
    a = p.parse_args(argv)
    if a.version:
        import xfer
        print(f"python3 -m xfer (libxfer {xfer.__version__}, MPI flavour {xfer.MPI_FLAVOR})")
        return 0
    if a.command == "info":
        return info()
    p.print_usage(sys.stderr)
    print("python3 -m xfer: error: a command is required (info)", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
