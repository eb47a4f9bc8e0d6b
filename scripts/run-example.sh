#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The main job: build libxfer and run the coupled example (docs/example.md) through xfer-run on
# the defaults of config/coupled.yaml: a Gray-Scott simulation (4 ranks) sends U and V every
# 200 of its 2000 steps to an analysis (2 ranks) that computes statistics, writes them with the
# fields to HDF5 and renders PNGs. xfer-run starts the control daemon and picks the launch
# (Debian's MPICH: one MPMD job). Outputs: ./coupled-output/.
#   scripts/run-example.sh                          MPICH, config/coupled.yaml
#   XFER_EXAMPLE_FLAVOR=openmpi scripts/run-example.sh [FILE.yaml]
#   XFER_EXAMPLE_BUILD=DIR: build in DIR instead of build/<flavour>
set -euo pipefail
config=config/coupled.yaml
[[ $# -gt 0 ]] && config="$(realpath "$1")" # before leaving the caller's directory
cd "$(dirname "$0")/.."

flavour="${XFER_EXAMPLE_FLAVOR:-mpich}"

bash scripts/deps.sh # MPI, parallel HDF5 and gnuplot among them
tree="${XFER_EXAMPLE_BUILD:-build/$flavour}"
echo "== building $tree"
bash scripts/build.sh "$flavour" --dir "$tree" >/dev/null
bin="$tree/tools" # xfer-run finds gray-scott-sim and gray-scott-analysis next to it

ranks=$(awk '/^ *nprocs:/ {n += $2} END {print n + 0}' "$config")
cores=$(nproc)
if ((ranks > cores)); then
    # Waiting ranks busy-poll; with more ranks than cores every wait would cost a scheduler
    # time slice. MPICH/UCX: xfer-run preloads a helper that yields when idle by itself
    # (tools/ucx_yield.c, docs/launcher.md). Open MPI yields only in a launch it sees
    # oversubscribed, which a separate launch of a small component is not: ask for it.
    if [[ "$flavour" == openmpi ]]; then
        echo "note: $ranks ranks on $cores cores: Open MPI runs with mpi_yield_when_idle=1"
        export OMPI_MCA_mpi_yield_when_idle=1
    else
        echo "note: $ranks ranks on $cores cores: xfer-run preloads libxfer_ucx_yield.so"
    fi
fi

echo "== $bin/xfer-run $config"
start=${EPOCHREALTIME/./}
"$bin/xfer-run" "$config"
ms=$(((${EPOCHREALTIME/./} - start) / 1000))
out=$(sed -n 's/.*--output, *\([^],]*\).*/\1/p' "$config" | head -n 1)
out="${out:-coupled-output}"
printf '== done in %d.%03d s; outputs in %s/:\n' $((ms / 1000)) $((ms % 1000)) "$out"
ls -l "$out"
# the simulation's reference statistics and the figures' gnuplot script, for the checks
[[ -d "$out/.check" ]] && echo "== for the checks, in $out/.check/: $(ls "$out/.check" | xargs)"
exit 0
