#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The coupled example's analysis killed and restarted mid-run, with no step lost
# (docs/example.md, "The analysis killed and restarted"). config/coupled-restart.yaml: the
# simulation (4 ranks) sends 20 steps through step files under on_reader_loss: spill and
# start: oldest. This script
#   1. starts the workflow with xfer-run (its run directory kept in WORK/run),
#   2. kills every process of the analysis with SIGKILL once it wrote KILL_AFTER steps to its
#      stats.csv (the simulation goes on: it spills its steps to disk),
#   3. starts the analysis again into the running workflow: xfer-run --attach analysis,
#   4. checks that the two analyses' stats.csv together hold every step 0..19, in order, each
#      once, but for the one step the killed analysis may have written and not finished
#      (the library delivers it again: its earlier run never released it), and that the main
#      xfer-run exits 3 (a reader was lost, the rest completed).
#   scripts/restart-example.sh                    MPICH (Debian's: the file transport needs no ports)
#   XFER_EXAMPLE_FLAVOR=openmpi scripts/restart-example.sh
#   KILL_AFTER=N (default 5), XFER_EXAMPLE_BUILD=DIR (default build/<flavour>), WORK=DIR
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
flavour="${XFER_EXAMPLE_FLAVOR:-mpich}"
tree="${XFER_EXAMPLE_BUILD:-build/$flavour}"
kill_after="${KILL_AFTER:-5}"
steps=20
config="$src/config/coupled-restart.yaml"

die() {
    echo "restart-example: $*" >&2
    exit 1
}

if [[ -z "${XFER_EXAMPLE_NO_BUILD:-}" ]]; then
    bash scripts/deps.sh >/dev/null
    echo "== building $tree"
    bash scripts/build.sh "$flavour" --dir "$tree" >/dev/null
fi
[[ "$tree" == /* ]] || tree="$src/$tree"
bin="$tree/tools"
[[ -x "$bin/xfer-run" ]] || die "no $bin/xfer-run"
if [[ "$flavour" == openmpi ]]; then
    export OMPI_MCA_mpi_yield_when_idle=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

work="${WORK:-$(mktemp -d /tmp/xfer-restart.XXXXXX)}"
mkdir -p "$work"
cd "$work"
rm -rf run restart-output xfer-steps
echo "== in $work: $bin/xfer-run --run-dir run $config"
"$bin/xfer-run" --run-dir run "$config" >main.log 2>&1 &
main=$!
csv=restart-output/analysis/stats.csv
rows() { [[ -f "$1" ]] && echo $(($(wc -l <"$1") - 1)) || echo 0; }

# 2. wait (bounded) for the analysis to write KILL_AFTER steps, then kill all of it
deadline=$((SECONDS + 300))
while (($(rows "$csv") < kill_after)); do
    kill -0 "$main" 2>/dev/null || { cat main.log; die "the workflow ended before the kill"; }
    ((SECONDS < deadline)) || die "the analysis wrote no $kill_after steps in 300 s"
    sleep 0.1 # poll the file ten times a second
done
pids=""
for p in $(pgrep -f "gray-scott-analysis.*restart-output/analysis" || true); do
    # this run's only (its working directory), not another run's on the machine
    [[ "$(readlink "/proc/$p/cwd" 2>/dev/null)" == "$PWD" ]] && pids="$pids $p"
done
[[ -n "$pids" ]] || die "no analysis process to kill"
echo "== the analysis wrote $(rows "$csv") steps: kill -9 $(echo $pids)"
kill -KILL $pids
# xfer-run says it lost the analysis (its line names it); the simulation goes on
until grep -q "component analysis failed" main.log; do
    kill -0 "$main" 2>/dev/null || break
    ((SECONDS < deadline)) || die "xfer-run did not report the analysis's death"
    sleep 0.1
done
grep "component analysis failed\|on_reader_loss: spill" main.log | sed 's/^/   /'
mv restart-output/analysis restart-output/analysis.killed

# 3. the analysis again, into the running workflow (or after it, if the simulation ended)
echo "== $bin/xfer-run --attach analysis --run-dir run $config"
"$bin/xfer-run" --attach analysis --run-dir run "$config" >attach.log 2>&1 ||
    { cat attach.log; die "the restarted analysis failed"; }
grep "attached at step\|steps from" main.log attach.log | sed 's/^/   /' || true
set +e
wait "$main"
rc=$?
set -e
[[ $rc == 3 ]] || { cat main.log; die "xfer-run exited $rc, expected 3 (a reader lost, the rest completed)"; }

# 4. every step once across both runs, in order
first=$(tail -n +2 restart-output/analysis.killed/stats.csv | cut -d, -f1 | xargs)
second=$(tail -n +2 restart-output/analysis/stats.csv | cut -d, -f1 | xargs)
echo "== steps the killed analysis wrote:    $first"
echo "== steps the restarted analysis wrote: $second"
python3 - "$steps" "$first" "$second" <<'PY'
import sys
n, a, b = int(sys.argv[1]), [int(x) for x in sys.argv[2].split()], [int(x) for x in sys.argv[3].split()]
assert a == sorted(a) and b == sorted(b), "steps out of order"
assert a and b, "a run wrote no step"
# the killed run may have written its last step and died before it finished it
again = [s for s in b if s in a]
assert again in ([], [a[-1]]), f"steps written twice: {again}"
assert sorted(set(a) | set(b)) == list(range(n)), f"steps lost: {sorted(set(range(n)) - set(a) - set(b))}"
print(f"== no step lost: {len(set(a) | set(b))} of {n} steps"
      + (f" (step {again[0]} written by both: the killed run had not finished it)" if again else ", none twice"))
PY
echo "== outputs in $work/restart-output/"
