#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Unit tests of the xfer package that need one process (run under `mpiexec -n 1`)."""
import ast
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

import xfer
from xfer import _core

GOOD = """workflow: local
components:
  - {name: a, nprocs: 1, cmd: [x]}
  - {name: b, nprocs: 2, cmd: [x]}
channels:
  - name: c
    from: a
    to: b
    selection: rows
    datasets: [{name: U, type: float32, dims: [4, 6]}]
"""


class Package(unittest.TestCase):
    def test_version_and_flavour(self):
        self.assertEqual(xfer.__version__, _core.LIBXFER_VERSION)
        self.assertIn(xfer.MPI_FLAVOR, ("mpich", "openmpi"))
        self.assertEqual(xfer.MPI_FLAVOR, _core.MPI_FLAVOR)

    def test_status_codes(self):
        self.assertEqual(xfer.STATUS["XFER_SUCCESS"], 0)
        self.assertEqual(xfer.STATUS["XFER_ERR_INVALID_ARG"], -1)
        self.assertEqual(_core.status_name(-8), ("XFER_ERR_TIMEOUT", "timed out waiting for a peer"))
        self.assertEqual(len(set(xfer.STATUS.values())), len(xfer.STATUS))

    def test_exception_classes(self):
        pairs = [(xfer.InvalidArgumentError, ValueError), (xfer.NotFoundError, LookupError),
                 (xfer.PeerTimeoutError, TimeoutError), (xfer.TooLargeError, OverflowError),
                 (xfer.NotReady, TimeoutError), (xfer.MismatchError, ValueError),
                 (xfer.FileSystemError, OSError)]
        for cls, builtin in pairs:
            self.assertTrue(issubclass(cls, xfer.XferError) and issubclass(cls, builtin), cls)
        self.assertEqual(xfer.PeerFailedError.status, xfer.STATUS["XFER_ERR_PEER_FAILED"])
        self.assertEqual(xfer.EndOfStream.name, "XFER_ERR_END_OF_STREAM")
        self.assertEqual(xfer.FileSystemError.status, xfer.STATUS["XFER_ERR_IO"])

    def test_stub_lists_the_module(self):
        """_core.pyi declares every public name of the extension, and nothing else."""
        stub = os.path.join(os.path.dirname(xfer.__file__), "_core.pyi")
        with open(stub) as f:
            tree = ast.parse(f.read())
        declared = set()
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                declared.add(node.name)
            elif isinstance(node, ast.AnnAssign):
                declared.add(node.target.id)
        public = {n for n in dir(_core) if not n.startswith("_")}
        self.assertEqual(public - declared, set(), "missing from _core.pyi")
        self.assertEqual(declared - public, set(), "in _core.pyi but not in the module")


class Config(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def write(self, text):
        path = os.path.join(self.dir.name, "wf.yaml")
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_load(self):
        cfg = xfer.load_config(self.write(GOOD))
        self.assertEqual(cfg["workflow"], "local")
        c = cfg["channels"][0]
        self.assertEqual((c["from"], c["to"], c["duplex"], c["selection"]), ("a", "b", "half", "rows"))
        self.assertEqual(c["datasets"][0]["dims"], (4, 6))
        self.assertEqual(c["datasets"][0]["type"], "float32")

    def test_joined_and_record(self):
        text = GOOD.replace("datasets: [{name: U, type: float32, dims: [4, 6]}]", """datasets:
      - {name: p, type: float64, dims: [joined, 3], max_rows: 100}
      - {name: r, type: {id: int64, pos: [float64, 3], q: float32, kind: int8}, dims: [5]}""")
        p, r = xfer.load_config(self.write(text))["channels"][0]["datasets"]
        self.assertEqual((p["dims"], p["joined"], p["max_rows"], p["record"]),
                         ((0, 3), True, 100, None))
        self.assertEqual((r["type"], r["joined"]), ("record", False))
        self.assertEqual((p["variable"], r["variable"]), ((False, False), (False,)))
        # the C struct's layout, which numpy's aligned dtype of the same fields has too
        self.assertEqual(r["record"], [("id", "int64", 1, 0), ("pos", "float64", 3, 8),
                                       ("q", "float32", 1, 32), ("kind", "int8", 1, 36)])
        aligned = np.dtype([("id", "<i8"), ("pos", "<f8", (3,)), ("q", "<f4"), ("kind", "i1")],
                           align=True)
        self.assertEqual([aligned.fields[n][1] for n, *_ in r["record"]], [0, 8, 32, 36])
        self.assertEqual(aligned.itemsize, 40)

    def test_variable(self):
        text = GOOD.replace("datasets: [{name: U, type: float32, dims: [4, 6]}]", """datasets:
      - {name: g, type: int32, dims: [variable, 4]}
      - {name: m, type: float32, dims: [3, variable, variable]}""")
        g, m = xfer.load_config(self.write(text))["channels"][0]["datasets"]
        self.assertEqual((g["dims"], g["variable"], g["joined"]), ((0, 4), (True, False), False))
        self.assertEqual((m["dims"], m["variable"]), ((3, 0, 0), (False, True, True)))

    def test_errors_name_the_line(self):
        path = self.write(GOOD.replace("type: float32", "type: float33"))
        with self.assertRaises(xfer.ConfigError) as cm:
            xfer.load_config(path)
        self.assertIn("wf.yaml:10:", str(cm.exception))
        self.assertIn("float33", str(cm.exception))
        self.assertEqual(cm.exception.status, xfer.STATUS["XFER_ERR_CONFIG"])

    def test_missing_file(self):
        with self.assertRaises(xfer.XferError):
            xfer.load_config(os.path.join(self.dir.name, "none.yaml"))

    def test_init_with_a_bad_file_raises(self):
        with self.assertRaises(xfer.ConfigError):
            xfer.init(self.write("workflow: [\n"), "a")


class Helpers(unittest.TestCase):
    def test_decompose(self):
        self.assertEqual(xfer.decompose("rows", (10, 4), 3, 0), ((0, 0), (4, 4)))
        self.assertEqual(xfer.decompose("rows", (10, 4), 3, 2), ((7, 0), (3, 4)))
        self.assertEqual(xfer.decompose("all", (10, 4), 3, 1), ((0, 0), (10, 4)))
        covered = np.zeros((6, 9), int)
        for r in range(6):
            (s0, s1), (c0, c1) = xfer.decompose("block", (6, 9), 6, r)
            covered[s0:s0 + c0, s1:s1 + c1] += 1
        self.assertTrue((covered == 1).all(), "block tiles the array once")
        with self.assertRaises(xfer.InvalidArgumentError):
            xfer.decompose("diagonal", (4,), 2, 0)

    def test_algorithms(self):
        names = [a["name"] for a in xfer.algorithms()]
        self.assertIn("native", names)
        self.assertIn("fc_half", names)
        fc_half = next(a for a in xfer.algorithms() if a["name"] == "fc_half")
        self.assertIn("half_only", fc_half["flags"])

    def test_comm_world(self):
        w = xfer.Comm.world()
        self.assertEqual((w.rank, w.size, w.is_inter), (0, 1, False))
        self.assertEqual(xfer.Comm(w.py2f()), w)
        d = w.dup()
        self.assertNotEqual(d, w)
        self.assertEqual(d.size, 1)
        d.free()
        with self.assertRaises(TypeError):
            xfer.Comm("world")

    def test_allreduce(self):
        w = xfer.Comm.world()
        a = np.arange(6, dtype=np.float32).reshape(2, 3)
        r = w.allreduce(a, "max")
        self.assertTrue(np.array_equal(r, a) and r is not a and r.dtype == np.float32)
        with self.assertRaises(xfer.InvalidArgumentError):
            w.allreduce(a, "prod")
        with self.assertRaises(xfer.InvalidArgumentError):
            w.allreduce(np.zeros(2, np.int8), "sum")

    def test_thread_level(self):
        self.assertTrue(xfer.mpi_initialized())
        with self.assertRaises(xfer.InvalidArgumentError):
            xfer.init(None, thread_level="many")


class Command(unittest.TestCase):
    def run_xfer(self, *args):
        return subprocess.run([sys.executable, "-m", "xfer", *args], capture_output=True,
                              text=True, timeout=60)

    def test_info(self):
        r = self.run_xfer("info")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("fc_half", r.stdout)
        self.assertIn(xfer.MPI_FLAVOR, r.stdout)

    def test_version_help_usage(self):
        self.assertEqual(self.run_xfer("--version").returncode, 0)
        self.assertEqual(self.run_xfer("--help").returncode, 0)
        self.assertEqual(self.run_xfer().returncode, 2)
        self.assertEqual(self.run_xfer("bogus").returncode, 2)

    def test_mpi4py_of_another_flavour_is_refused(self):
        try:
            import mpi4py  # noqa: F401
        except ImportError:
            self.skipTest("mpi4py is not installed")
        r = subprocess.run([sys.executable, "-c", "from mpi4py import MPI; import xfer; print('ok')"],
                           capture_output=True, text=True, timeout=60)
        lib = subprocess.run([sys.executable, "-c", "from mpi4py import MPI; "
                              "print(MPI.Get_library_version())"],
                             capture_output=True, text=True, timeout=60).stdout
        same = ("Open MPI" in lib) == (xfer.MPI_FLAVOR == "openmpi")
        if same:
            self.assertEqual(r.returncode, 0, r.stderr)
        else:
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("one process cannot hold both", r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
