#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Simulator figures for the ring and fully connected algorithms: steps and predicted time
# against the lower bound, as a Markdown table.
#   scripts/sched-table.sh [ALPHA BETA]     defaults: this machine's shared memory (measured
#                                           with: mpiexec.mpich -n 2 xfer-sched measure)
set -euo pipefail
cd "$(dirname "$0")/.."
alpha="${1:-6e-7}"
beta="${2:-1.3e-10}"
xs=build/mpich/tools/xfer-sched
[[ -x "$xs" ]] || bash scripts/build.sh mpich >/dev/null
K=1048576
echo "alpha = $alpha s, beta = $beta s/B; blocks of 1 MiB (B's 64 KiB in the light-return case)"
echo
echo "| p x q | case | algorithm | steps | predicted ms | bound ms | predicted / bound |"
echo "|---|---|---|---:|---:|---:|---:|"
for pq in "8 8" "16 8" "8 16" "1024 512" "512 1024"; do
    set -- $pq
    row() { # case algo extra-args...
        local case="$1" algo="$2"
        shift 2
        "$xs" cost --algo "$algo" --p "$P" --q "$Q" --count $K --alpha "$alpha" --beta "$beta" "$@" |
            awk -v c="$case" -v p="$P" -v q="$Q" 'NR == 2 {
                printf "| %sx%s | %s | %s | %d | %.3f | %.3f | %.2f |\n", p, q, c, $1, $4, $10 * 1e3, $11 * 1e3, $12 }'
    }
    P=$1 Q=$2
    for a in ring_half ring fc_half fc_full; do row "half A->B" $a --duplex half; done
    for a in ring_full ring fc_full fc_full_v; do row "full, equal" $a --duplex full; done
    for a in ring_full ring fc_full; do row "full, B light" $a --duplex full --count-b 65536; done
done
