#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A workflow with compressed datasets through the file transport (docs/runtime.md,
# "Compression"): run it (xfer-synth checks every element it reads), then the named datasets of
# the first step file must carry HDF5's shuffle and deflate filters.
#   file_zip_test.sh DIR DATASET[,DATASET...] COMMAND...   (DIR: the run's XFER_TRANSPORT_DIR)
set -euo pipefail
dir=$1
dsets=$2
shift 2
rm -rf "$dir"
"$@"
f=$(find "$dir" -name '*.000000.h5' | sort | head -n 1)
if [ -z "$f" ]; then
    echo "file_zip_test: no step file under $dir" >&2
    exit 1
fi
for d in ${dsets//,/ }; do
    out=$(h5dump -p -H -d "/$d" "$f")
    if ! grep -q "SHUFFLE" <<<"$out" || ! grep -q "DEFLATE" <<<"$out"; then
        echo "file_zip_test: $f: /$d is not shuffled and deflated:" >&2
        echo "$out" >&2
        exit 1
    fi
done
echo "file_zip_test: $f: $dsets shuffled and deflated"
