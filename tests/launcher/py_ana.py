#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# xfer-run tests (py.yaml, py_shebang.yaml): a Python component that imports the package.
import xfer

print(f"ana imported xfer {xfer.__version__}")
