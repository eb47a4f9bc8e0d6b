#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The main job (for now): build libxfer and move a dataset from a producer group to a consumer
# group with every algorithm, half and full duplex, next to the MPI library's own
# intercommunicator MPI_Allgather; prints time, ratio and verification for each.
#   scripts/demo.sh                          MPICH, shapes p=2,q=2 and p=3,q=1, 1 MiB per rank
#   XFER_DEMO_FLAVOR=openmpi XFER_DEMO_SIZES=64K,1M,4M XFER_DEMO_SHAPES="2x2 3x1" \
#   XFER_DEMO_ALGOS=native,ring_half,ring XFER_DEMO_ITERS=20 scripts/demo.sh
set -euo pipefail
cd "$(dirname "$0")/.."

flavour="${XFER_DEMO_FLAVOR:-mpich}"
sizes="${XFER_DEMO_SIZES:-1M}"
shapes="${XFER_DEMO_SHAPES:-2x2 3x1}"
iters="${XFER_DEMO_ITERS:-10}"
algos=()
[[ -n "${XFER_DEMO_ALGOS:-}" ]] && algos=(--algos "$XFER_DEMO_ALGOS")

bash scripts/deps.sh
bash scripts/build.sh "$flavour" >/dev/null
bin="build/$flavour/tools/xfer-demo"
cores=$(nproc)

for shape in $shapes; do
    p="${shape%x*}"
    q="${shape#*x}"
    np=$((p + q))
    launch=()
    if [[ "$flavour" == openmpi ]]; then
        export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
        launch=(mpiexec.openmpi --oversubscribe -n "$np")
    else
        launch=(mpiexec.mpich -n "$np")
        if ((np > cores)); then
            # MPICH/UCX busy-polls without yielding; with more ranks than cores every call
            # would cost a scheduler time slice. The helper yields when idle (tools/ucx_yield.c).
            echo "note: $np ranks on $cores cores: MPICH runs with libxfer_ucx_yield.so preloaded"
            launch+=(-genv LD_PRELOAD "$PWD/build/$flavour/tools/libxfer_ucx_yield.so")
        fi
    fi
    "${launch[@]}" "$bin" --p "$p" --sizes "$sizes" --iters "$iters" "${algos[@]}"
    echo
done
