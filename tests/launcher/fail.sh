#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Component "a" of fail.yaml: waits (bounded) until the sleeper of component b has recorded its
# pid, leaves a marker and fails with exit code 3.
i=0
while ! ls "$XFER_RUN_DIR"/b.*.pid >/dev/null 2>&1 && [ $i -lt 200 ]; do
    sleep 0.05
    i=$((i + 1))
done
echo "a: failing on purpose"
touch "$XFER_RUN_DIR/a.marker"
exit 3
