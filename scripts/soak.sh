#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The chaos soak (docs/testing.md): thousands of generated workflows, with and without faults,
# through one build tree's xfer-chaos; one line per seed, then a summary (workflows run, hangs,
# wrong data, lost steps, bad messages, errors, time) and the failing seeds per class.
#   scripts/soak.sh [--flavour mpich|openmpi] [--seeds N] [--first S] [xfer-chaos options...]
# Defaults: MPICH, 1000 seeds from 1. Failures go, one line each, to
# soak-<flavour>-<first>-<last>.tsv in the working directory (seed, flavour, class, known
# issue, workflow, detail); each failing seed's work directory is kept under $TMPDIR.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
flavour=mpich
seeds=1000
first=1
extra=()
while (($#)); do
    case "$1" in
    --flavour) flavour="$2"; shift ;;
    --seeds) seeds="$2"; shift ;;
    --first) first="$2"; shift ;;
    *) extra+=("$1") ;;
    esac
    shift
done
chaos="$root/build/$flavour/tools/xfer-chaos"
if [ ! -f "$chaos" ]; then
    echo "soak.sh: no $chaos (build it first: bash scripts/build.sh $flavour)" >&2
    exit 2
fi
py=/usr/bin/python3
[ -x "$py" ] || py=python3
out="soak-$flavour-$first-$((first + seeds - 1)).tsv"
echo "soak.sh: $seeds seeds from $first on $flavour; failures in $out"
exec "$py" "$chaos" --soak "$seeds" --first "$first" --quiet --failures "$out" "${extra[@]}"
