# SPDX-License-Identifier: BSD-3-Clause
# Run against an installed libxfer's Python package (tests/package/check_package.cmake).
import xfer

assert xfer.decompose("rows", (4, 2), 2, 1) == ((2, 0), (2, 2))
print(xfer.__file__)
